package anthropictest

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/json"
	"io"

	"github.com/coachd/coachd"
)

// How the API bills a PDF (docs.claude.com, "PDF support", "Estimate
// your costs"): each page is its extracted text plus the page as an
// image, priced as images are. A page rendered at the API's scale is a
// full-cap image: about 1,600 tokens.
const pdfPageImageTokens = maxImageTokenCap

// maxPDFText bounds the bytes a document's streams are inflated to, to
// find its text.
const maxPDFText = 8 << 20

// documentSize is the size a PDF document block weighs in the fake's
// tokenizer (four bytes a token): its JSON without its data, plus four
// bytes for each token the API bills its pages and their text. ok is
// false for any other block.
func documentSize(block []byte) (n int, ok bool) {
	if !bytes.Contains(block, []byte(`"document"`)) {
		return 0, false
	}
	var b struct {
		Type   string      `json:"type"`
		Source mediaSource `json:"source"`
	}
	if json.Unmarshal(block, &b) != nil || b.Type != coachd.BlockDocument || b.Source.Type != "base64" || b.Source.Data == nil {
		return 0, false
	}
	raw, err := base64.StdEncoding.DecodeString(*b.Source.Data)
	if err != nil {
		return 0, false
	}
	tokens := coachd.PDFPages(raw)*pdfPageImageTokens + (pdfText(raw)+3)/4
	return len(block) - len(*b.Source.Data) + 4*tokens, true
}

// pdfText is about the bytes of text a PDF shows: its strings between BT
// and ET in its streams, inflated when Flate-compressed. Images, fonts
// and the file's structure are no text.
func pdfText(raw []byte) int {
	n, budget := 0, maxPDFText
	for rest := raw; budget > 0; {
		i := bytes.Index(rest, []byte("stream"))
		if i < 0 {
			break
		}
		dict, body := rest[:i], rest[i+len("stream"):]
		if bytes.HasSuffix(dict, []byte("end")) { // endstream
			rest = body
			continue
		}
		end := bytes.Index(body, []byte("endstream"))
		if end < 0 {
			end = len(body)
		}
		data := bytes.TrimLeft(body[:end], "\r\n")
		if o := bytes.LastIndex(dict, []byte("obj")); o >= 0 {
			dict = dict[o:]
		}
		if bytes.Contains(dict, []byte("/FlateDecode")) {
			if z, err := zlib.NewReader(bytes.NewReader(data)); err == nil {
				data, _ = io.ReadAll(io.LimitReader(z, int64(budget)))
			}
		}
		budget -= len(data)
		n += shownText(data)
		rest = body[end:]
	}
	return n
}

// shownText counts the bytes of the strings a content stream shows
// between BT and ET: literal (…) strings unescaped, hex <…> strings
// decoded.
func shownText(c []byte) int {
	n, in := 0, false
	delim := func(i int) bool {
		return i < 0 || i >= len(c) || bytes.IndexByte([]byte(" \t\r\n\f\x00()<>[]{}/%"), c[i]) >= 0
	}
	for i := 0; i < len(c); i++ {
		switch {
		case c[i] == '(':
			depth, s := 1, 0
			for i++; i < len(c) && depth > 0; i++ {
				switch c[i] {
				case '\\':
					i++
				case '(':
					depth++
				case ')':
					depth--
				}
				if depth > 0 {
					s++
				}
			}
			i--
			if in {
				n += s
			}
		case c[i] == '<' && i+1 < len(c) && c[i+1] != '<':
			end := bytes.IndexByte(c[i:], '>')
			if end < 0 {
				return n
			}
			if in {
				n += (end - 1) / 2
			}
			i += end
		case i+1 < len(c) && c[i+1] == 'T' && (c[i] == 'B' || c[i] == 'E') && delim(i-1) && delim(i+2):
			in = c[i] == 'B'
			i++
		}
	}
	return n
}
