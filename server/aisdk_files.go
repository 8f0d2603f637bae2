package server

import (
	"slices"
	"strconv"
	"strings"

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
		if mediaType == "" {
			mediaType = p.MediaType
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
