package anthropic

import (
	"bytes"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// TestAppendBlockLearnedSource: a request re-sending a photo checked its
// 4 MiB source again (ValidJSON, CleanJSON), though whether it is sent as
// it is was found when it was accepted (coachd.LearnAttachment). Sources
// are never changed in place; one that is shows whether the check ran
// again: its bytes go out as they are, not escaped.
func TestAppendBlockLearnedSource(t *testing.T) {
	b, fe := coachd.AcceptAttachment(coachd.MediaPNG, "", append(pngHeader(t), strings.Repeat("a", 1<<20)...))
	if fe != nil {
		t.Fatal(fe)
	}
	i := bytes.LastIndexByte(b.Source, 'a')
	b.Source[i] = '<' // json.Marshal would write \u003c: no longer as it is
	got, err := appendBlock(nil, &b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got, b.Source) {
		t.Fatal("a learned source was checked again and rewritten")
	}

	t.Run("NewSource", func(t *testing.T) {
		c := b
		c.Source = bytes.Clone(b.Source) // not learned: checked
		got, err := appendBlock(nil, &c)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(got, []byte("<")) || !bytes.Contains(got, []byte(`\u003c`)) {
			t.Fatal("a copy with a new source was sent unchecked")
		}
	})
}

// pngHeader is a 1×1 PNG.
func pngHeader(tb testing.TB) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 1, 1))); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}
