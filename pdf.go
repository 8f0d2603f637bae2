package coachd

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"errors"
	"io"
	"sort"
	"strconv"
)

// A PDF's page count is its page tree's: the trailer's (or cross-reference
// stream's) /Root names the catalog, whose /Pages is the tree's root,
// whose /Count is the number of pages. Since PDF 1.5 these objects are
// often kept in compressed object streams (/ObjStm), where no scan of the
// bytes sees them. pdfTreePages reads them; every read and inflate is
// bounded, by the file's size and by the caps below, and nothing recurses
// without a depth cap.
const (
	pdfChunk       = 64 << 10 // the most read of one object
	pdfScanChunk   = 16 << 10 // a scan's read
	pdfOverlap     = 256      // kept before each read: a token across two reads is whole in the second
	pdfMaxObjects  = 1 << 16  // object headers indexed; a file with more is counted by its page objects
	pdfMaxObjStms  = 1 << 10  // object streams indexed
	pdfMaxInflate  = 4 << 20  // bytes inflated from object streams in one count, all streams together
	pdfMaxInflates = 64       // object streams inflated in one count
	pdfMaxDepth    = 16       // nesting of a dictionary or an array
	pdfMaxResolve  = 4        // indirect references followed for one value
	pdfMaxPageTree = 1 << 20  // a /Count above is not believed
)

var errPDF = errors.New("coachd: PDF not readable for its page tree")

// pdfObj is where an indirect object is defined: its number and the
// offset just after its "obj" keyword.
type pdfObj struct {
	num int
	off int64
}

// pdfFile is a PDF's index: its object headers, object streams and
// latest trailer, from one scan.
type pdfFile struct {
	r        io.ReaderAt
	size     int64
	objs     []pdfObj // in file order
	objStms  []int64  // offsets (after "obj") of the object streams
	trailer  int64    // after the last "trailer" keyword, or -1
	xref     int64    // after "obj" of the last cross-reference stream, or -1
	inflate  int      // bytes inflated so far
	inflates int      // streams inflated so far
	streams  map[int64]pdfStream
	buf      []byte        // valueAt's read, reused
	zr       io.ReadCloser // inflateAt's, reused (zlib.Resetter)
}

// pdfStream is an object stream read (data nil: not readable).
type pdfStream struct {
	data  []byte
	first int
}

// pdfTreePages returns the /Count of the page tree of the PDF of size
// bytes that r reads, and whether its newest trailer names an /Encrypt
// dictionary (told even when the count cannot be read: an encrypted
// file's object streams are).
func pdfTreePages(r io.ReaderAt, size int64) (pages int, encrypted bool, err error) {
	f := &pdfFile{r: r, size: size, trailer: -1, xref: -1}
	if err := f.scan(); err != nil {
		return 0, false, err
	}
	// The newest trailer wins: an incremental update appends its own.
	var trailer pdfValue
	switch {
	case f.trailer > f.xref:
		trailer, err = f.valueAt(f.trailer)
	case f.xref >= 0:
		trailer, err = f.valueAt(f.xref)
	default:
		return 0, false, errPDF
	}
	if err != nil {
		return 0, false, err
	}
	encrypted = trailer.get("Encrypt").kind != pdfNone
	catalog, err := f.resolve(trailer.get("Root"))
	if err != nil {
		return 0, encrypted, err
	}
	tree, err := f.resolve(catalog.get("Pages"))
	if err != nil {
		return 0, encrypted, err
	}
	count, err := f.resolve(tree.get("Count"))
	if err != nil || count.kind != pdfInt || count.n < 1 || count.n > pdfMaxPageTree {
		return 0, encrypted, errPDF
	}
	return int(count.n), encrypted, nil
}

// scan reads the file once, pdfScanChunk at a time, for object headers
// ("12 0 obj"), "/ObjStm" and "/XRef" (each belonging to the object
// defined before it) and "trailer".
func (f *pdfFile) scan() error {
	buf := make([]byte, pdfOverlap+pdfScanChunk)
	kept := 0
	for base := int64(0); base < f.size; {
		n, err := f.r.ReadAt(buf[kept:min(int64(len(buf)), int64(kept)+f.size-base-int64(kept))], base+int64(kept))
		if n == 0 && err != nil {
			return errPDF
		}
		end := kept + n
		eof := base+int64(end) >= f.size
		chunk := buf[:end]
		// A token is decided by the byte after it: it is taken in the
		// read where that byte is new (or at the end of the file).
		fresh := func(i, length int) bool {
			after := i + length + 1
			return after > kept && (after <= end || eof)
		}
		for i, at := 0, 0; ; i += at + 3 {
			if at = bytes.Index(chunk[i:], []byte("obj")); at < 0 {
				break
			}
			if j := i + at; fresh(j, 3) && delimited(chunk, j+3) {
				if num, ok := objHeader(chunk[:j]); ok {
					if len(f.objs) == pdfMaxObjects {
						return errPDF
					}
					f.objs = append(f.objs, pdfObj{num, base + int64(j+3)})
				}
			}
		}
		for _, name := range []string{"/ObjStm", "/XRef"} {
			for i, at := 0, 0; ; i += at + len(name) {
				if at = bytes.Index(chunk[i:], []byte(name)); at < 0 {
					break
				}
				j := i + at
				if !fresh(j, len(name)) || !delimited(chunk, j+len(name)) {
					continue
				}
				obj := f.objectBefore(base + int64(j))
				switch {
				case obj < 0:
				case name == "/XRef":
					f.xref = obj
				case len(f.objStms) == 0 || f.objStms[len(f.objStms)-1] != obj:
					if len(f.objStms) < pdfMaxObjStms {
						f.objStms = append(f.objStms, obj)
					}
				}
			}
		}
		if i := bytes.LastIndex(chunk, []byte("trailer")); i >= 0 && fresh(i, len("trailer")) {
			f.trailer = base + int64(i+len("trailer"))
		}
		if eof {
			return nil
		}
		next := min(pdfOverlap, end)
		copy(buf, chunk[end-next:])
		base, kept = base+int64(end-next), next
	}
	return nil
}

// objectBefore is the offset of the object defined last before at, or -1.
func (f *pdfFile) objectBefore(at int64) int64 {
	i := sort.Search(len(f.objs), func(i int) bool { return f.objs[i].off > at })
	if i == 0 {
		return -1
	}
	return f.objs[i-1].off
}

// delimited reports whether a token ending at b[i] ends there: a
// white-space or delimiter character follows, or nothing.
func delimited(b []byte, i int) bool {
	return i >= len(b) || pdfSpace(b[i]) || bytes.IndexByte([]byte("()<>[]{}/%"), b[i]) >= 0
}

// objHeader reads "num gen " backwards from the end of b, which is
// followed by "obj".
func objHeader(b []byte) (num int, ok bool) {
	i := len(b)
	spaces := func() bool {
		j := i
		for i > 0 && pdfSpace(b[i-1]) {
			i--
		}
		return i < j
	}
	digits := func(most int) (int, bool) {
		j := i
		for i > 0 && j-i < most && b[i-1] >= '0' && b[i-1] <= '9' {
			i--
		}
		if i == j || (i > 0 && b[i-1] >= '0' && b[i-1] <= '9') {
			return 0, false
		}
		n, err := strconv.Atoi(string(b[i:j]))
		return n, err == nil
	}
	if !spaces() {
		return 0, false
	}
	if _, ok := digits(5); !ok || !spaces() {
		return 0, false
	}
	num, ok = digits(9)
	return num, ok && (i == 0 || delimited(b, i-1))
}

func pdfSpace(c byte) bool {
	switch c {
	case 0, '\t', '\n', '\f', '\r', ' ':
		return true
	}
	return false
}

// valueAt parses the value at off (after "obj" or "trailer").
func (f *pdfFile) valueAt(off int64) (pdfValue, error) {
	n := min(int64(pdfChunk), f.size-off)
	if n <= 0 {
		return pdfValue{}, errPDF
	}
	if f.buf == nil {
		f.buf = make([]byte, pdfChunk)
	}
	buf := f.buf[:n]
	if got, err := f.r.ReadAt(buf, off); int64(got) < n && err != nil {
		return pdfValue{}, errPDF
	}
	p := pdfParser{b: buf}
	return p.value(0, true)
}

// resolve follows v while it is a reference, to its object's value: the
// newest definition, direct or in an object stream.
func (f *pdfFile) resolve(v pdfValue) (pdfValue, error) {
	for range pdfMaxResolve {
		if v.kind != pdfRef {
			return v, nil
		}
		var err error
		if v, err = f.object(int(v.n)); err != nil {
			return v, err
		}
	}
	return pdfValue{}, errPDF
}

// object is the value of object num.
func (f *pdfFile) object(num int) (pdfValue, error) {
	direct := int64(-1)
	for i := len(f.objs) - 1; i >= 0; i-- {
		if f.objs[i].num == num {
			direct = f.objs[i].off
			break
		}
	}
	// An object stream written after the direct definition is newer.
	for i := len(f.objStms) - 1; i >= 0 && f.objStms[i] > direct; i-- {
		if v, ok := f.inStream(f.objStms[i], num); ok {
			return v, nil
		}
	}
	if direct < 0 {
		return pdfValue{}, errPDF
	}
	return f.valueAt(direct)
}

// inStream returns object num from the object stream at off, if it is
// there.
func (f *pdfFile) inStream(off int64, num int) (pdfValue, bool) {
	data, first, ok := f.stream(off)
	if !ok {
		return pdfValue{}, false
	}
	// The stream opens with pairs of numbers: an object's number and its
	// offset after first.
	p := pdfParser{b: data[:first]}
	for {
		n, err := p.value(0, false)
		if err != nil || n.kind != pdfInt {
			return pdfValue{}, false
		}
		at, err := p.value(0, false)
		if err != nil || at.kind != pdfInt || at.n < 0 || at.n >= int64(len(data)-first) {
			return pdfValue{}, false
		}
		if n.n == int64(num) {
			q := pdfParser{b: data[first+int(at.n):]}
			v, err := q.value(0, true)
			return v, err == nil
		}
	}
}

// stream is the inflated data of the object stream at off and the offset
// of its first object, read once.
func (f *pdfFile) stream(off int64) (data []byte, first int, ok bool) {
	if s, seen := f.streams[off]; seen {
		return s.data, s.first, s.data != nil
	}
	if f.streams == nil {
		f.streams = map[int64]pdfStream{}
	}
	var s pdfStream
	dict, err := f.valueAt(off)
	firstV, filter := dict.get("First"), dict.get("Filter")
	if err == nil && dict.kind == pdfDict && firstV.kind == pdfInt && filter.kind == pdfName && filter.name == "FlateDecode" &&
		dict.get("DecodeParms").kind == pdfNone {
		s.data = f.inflateAt(off + int64(dict.end))
		if firstV.n < 0 || firstV.n > int64(len(s.data)) {
			s.data = nil
		}
		s.first = int(firstV.n)
	}
	f.streams[off] = s
	return s.data, s.first, s.data != nil
}

// inflateAt inflates the stream whose dictionary ends at off, within
// what is left of pdfMaxInflate; nil when it cannot.
func (f *pdfFile) inflateAt(off int64) []byte {
	head := make([]byte, min(32, max(0, f.size-off)))
	n, _ := f.r.ReadAt(head, off)
	head = head[:n]
	i := 0
	for i < len(head) && pdfSpace(head[i]) {
		i++
	}
	rest, ok := bytes.CutPrefix(head[i:], []byte("stream"))
	if !ok {
		return nil
	}
	start := off + int64(len(head)-len(rest))
	if len(rest) > 0 && rest[0] == '\r' {
		start++
		rest = rest[1:]
	}
	if len(rest) > 0 && rest[0] == '\n' {
		start++
	}
	left := pdfMaxInflate - f.inflate
	if left <= 0 || start >= f.size || f.inflates == pdfMaxInflates {
		return nil
	}
	f.inflates++
	in := io.NewSectionReader(f.r, start, f.size-start)
	var err error
	if f.zr == nil {
		f.zr, err = zlib.NewReader(in)
	} else {
		err = f.zr.(zlib.Resetter).Reset(in, nil)
	}
	if err != nil {
		return nil
	}
	zr := f.zr
	// Grown by doubling up to left+1 bytes: never more than the cap.
	out := make([]byte, 0, min(left+1, 4<<10))
	for {
		if len(out) == cap(out) {
			if len(out) > left {
				f.inflate = pdfMaxInflate
				return nil
			}
			out = append(make([]byte, 0, min(2*cap(out), left+1)), out...)
		}
		n, err := zr.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if err == io.EOF {
			f.inflate += len(out)
			return out
		}
		if err != nil {
			return nil
		}
	}
}

// base64At reads the PDF that standard, padded base64 encodes, in place.
type base64At struct {
	enc  []byte
	size int64
	buf  []byte
}

// newBase64At returns a reader of what enc decodes to, and false when
// enc is not plain standard base64 (no line breaks, padding at its end).
func newBase64At(enc []byte) (*base64At, bool) {
	if len(enc)%4 != 0 {
		return nil, false
	}
	pad := len(enc) - len(bytes.TrimRight(enc, "="))
	if pad > 2 {
		return nil, false
	}
	for _, c := range enc[:len(enc)-pad] {
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/') {
			return nil, false
		}
	}
	return &base64At{enc: enc, size: int64(len(enc)/4*3 - pad)}, true
}

func (r *base64At) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= r.size {
		return 0, io.EOF
	}
	quad := off / 3
	end := min(int64(len(r.enc)), (off+int64(len(p))+2)/3*4)
	need := base64.StdEncoding.DecodedLen(int(end - quad*4))
	if cap(r.buf) < need {
		r.buf = make([]byte, need)
	}
	n, err := base64.StdEncoding.Decode(r.buf[:need], r.enc[quad*4:end])
	if err != nil {
		return 0, err
	}
	got := copy(p, r.buf[off-quad*3:n])
	if got < len(p) {
		return got, io.EOF
	}
	return got, nil
}
