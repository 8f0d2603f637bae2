package server

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

// uiFiles reads the file parts of useChat's new message as attachments:
// data URLs in base64 (what useChat makes of a FileList) of types coachd
// takes. A remote URL is not fetched. probs holds what is wrong with them.
func uiFiles(parts []uiPart) (files []attachmentRequest, probs *fileProblems) {
	probs = &fileProblems{parts: parts}
	for i, p := range parts {
		if p.Type != "file" {
			continue
		}
		mediaType, data, msg := dataURL(p.URL)
		if msg != "" {
			probs.add(i, "url", msg, "format")
			continue
		}
		if untyped(mediaType) {
			mediaType = p.MediaType
		}
		if untyped(mediaType) {
			// A browser gives many files no type: what the bytes are.
			var fe *coachd.FieldError
			if mediaType, fe = sniffUntyped(data); fe != nil {
				probs.add(i, "url", fe.Message, fe.Code)
				continue
			}
		}
		kind := "image"
		if !strings.HasPrefix(mediaType, "image/") {
			kind = "document"
		}
		files = append(files, attachmentRequest{Type: kind, MediaType: mediaType, Data: data, Name: p.Filename})
		probs.at = append(probs.at, i)
	}
	for _, fe := range validAttachments(files) {
		probs.addAttachment(fe)
	}
	return files, probs
}

// untyped reports whether mediaType says nothing of a file: a browser's
// File.type is "" for many files, and FileReader makes that
// application/octet-stream in the data: URL.
func untyped(mediaType string) bool {
	return mediaType == "" || strings.EqualFold(mediaType, "application/octet-stream")
}

// sniffUntyped is the media type of a file in base64 whose part gave
// none (untyped), from its first bytes (sniffHead); the problem, its
// field left to the caller, when they are not base64 or not a kind
// coachd takes.
func sniffUntyped(b64 string) (string, *coachd.FieldError) {
	mediaType, ok := sniffHead(b64)
	switch {
	case !ok:
		return "", &coachd.FieldError{Message: "must be standard base64 (RFC 4648, padded)", Code: "format"}
	case mediaType == "":
		return "", &coachd.FieldError{Message: "is not a supported file: images png, jpeg, gif, webp; documents pdf, plain UTF-8 text", Code: "media_type"}
	}
	return mediaType, nil
}

// sniffHead is coachd.SniffMediaType of the first bytes of a file in
// base64 (what its magic number, or its start as text, says), and ok
// false when they are not base64. attachmentBlocks checks the whole file
// against that type.
func sniffHead(b64 string) (mediaType string, ok bool) {
	const headLen = 4 << 10 // base64 of 3 KiB: any magic number, the sniffer's 512 bytes
	cut := len(b64) > headLen
	if cut {
		b64 = b64[:headLen]
	}
	head, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", false
	}
	if cut { // a character the cut broke is not a reason to say "not text"
		for j := len(head) - 1; j >= max(0, len(head)-utf8.UTFMax); j-- {
			if utf8.RuneStart(head[j]) {
				if !utf8.FullRune(head[j:]) {
					head = head[:j]
				}
				break
			}
		}
	}
	return coachd.SniffMediaType(head), true
}

// fileProblems are the problems of a message's file parts. useChat shows
// a refusal's message alone, so each names its part and the file's name
// (bounded), in the order the user attached the files.
type fileProblems struct {
	parts []uiPart
	at    []int // the part of each attachment
	errs  []partError
}

// partError is a problem of the message's part i.
type partError struct {
	i int
	coachd.FieldError
}

func (fp *fileProblems) add(i int, field, msg, code string) {
	name := "the file"
	if n := fp.parts[i].Filename; n != "" {
		if short := truncate(n[:min(len(n), 256)], 64); short != n {
			n = short + "…"
		}
		name = strconv.Quote(n)
	}
	fp.errs = append(fp.errs, partError{i, coachd.FieldError{Field: "messages.parts[" + strconv.Itoa(i) + "]." + field, Message: name + ": " + msg, Code: code}})
}

// addAttachment adds a problem found in the attachments: of one,
// attachments[k].field, or of them all, attachments.
func (fp *fileProblems) addAttachment(fe coachd.FieldError) {
	k, field, ok := strings.Cut(strings.TrimPrefix(fe.Field, "attachments["), "].")
	n, err := strconv.Atoi(k)
	if !ok || err != nil || n < 0 || n >= len(fp.at) {
		fp.errs = append(fp.errs, partError{len(fp.parts), coachd.FieldError{Field: "messages.parts", Message: "the files " + fe.Message, Code: fe.Code}})
		return
	}
	if field == "media_type" {
		field = "mediaType"
	} else {
		field = "url" // data: the URL's bytes
	}
	fp.add(fp.at[n], field, fe.Message, fe.Code)
}

// err is the problems as one EINVALID error, nil when there are none.
func (fp *fileProblems) err() error {
	if len(fp.errs) == 0 {
		return nil
	}
	slices.SortStableFunc(fp.errs, func(a, b partError) int { return a.i - b.i })
	list := make([]coachd.FieldError, len(fp.errs))
	for j, e := range fp.errs {
		list[j] = e.FieldError
	}
	return coachd.Invalid(list...)
}

// of is err, the attachments' own fields named as the parts', when it
// lists their problems (what attachmentBlocks finds in the bytes).
func (fp *fileProblems) of(err error) error {
	e := coachd.AsError(err)
	if e.Code != coachd.EINVALID || len(e.Details) == 0 {
		return err
	}
	for _, fe := range e.Details {
		fp.addAttachment(fe)
	}
	return fp.err()
}
