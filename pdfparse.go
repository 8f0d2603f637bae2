package coachd

import (
	"bytes"
	"strconv"
)

// pdfValue kinds: the few a page count reads, and pdfOther for the rest
// (strings, reals, booleans, null, arrays of more than one element).
const (
	pdfNone = iota
	pdfInt
	pdfRef
	pdfName
	pdfDict
	pdfOther
)

// pdfValue is a PDF object as pdfTreePages reads it: an integer or
// reference (n), a name (name, without its "/"), or a dictionary (its
// entries that a page count reads; end, just after its ">>").
type pdfValue struct {
	kind    int
	n       int64
	name    string
	entries []pdfEntry
	end     int
}

type pdfEntry struct {
	key string
	v   pdfValue
}

// pdfKeys are the dictionary keys a page count reads; others are parsed
// and dropped.
var pdfKeys = map[string]bool{"Encrypt": true, "Root": true, "Pages": true, "Count": true, "First": true, "Filter": true, "DecodeParms": true}

func (v pdfValue) get(key string) pdfValue {
	for _, e := range v.entries {
		if e.key == key {
			return e.v
		}
	}
	return pdfValue{}
}

// pdfParser reads PDF values from b, which may end anywhere: a value cut
// off is an error.
type pdfParser struct {
	b []byte
	i int
}

func (p *pdfParser) skip() {
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case pdfSpace(c):
			p.i++
		case c == '%':
			for p.i < len(p.b) && p.b[p.i] != '\n' && p.b[p.i] != '\r' {
				p.i++
			}
		default:
			return
		}
	}
}

// value parses one value; keep keeps a dictionary's pdfKeys entries.
// A value nested deeper than pdfMaxDepth is an error.
func (p *pdfParser) value(depth int, keep bool) (pdfValue, error) {
	if depth > pdfMaxDepth {
		return pdfValue{}, errPDF
	}
	p.skip()
	if p.i >= len(p.b) {
		return pdfValue{}, errPDF
	}
	rest := p.b[p.i:]
	switch c := rest[0]; {
	case bytes.HasPrefix(rest, []byte("<<")):
		p.i += 2
		return p.dict(depth, keep)
	case c == '<':
		end := bytes.IndexByte(rest, '>')
		if end < 0 {
			return pdfValue{}, errPDF
		}
		p.i += end + 1
		return pdfValue{kind: pdfOther}, nil
	case c == '[':
		p.i++
		return p.array(depth)
	case c == '(':
		return pdfValue{kind: pdfOther}, p.literal()
	case c == '/':
		p.i++
		return pdfValue{kind: pdfName, name: string(p.token())}, nil
	case c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9'):
		return p.number(), nil
	case delimited(rest, 0):
		return pdfValue{}, errPDF // a stray ")", ">", "]", "{" or "}"
	}
	p.token() // true, false, null, or another keyword
	return pdfValue{kind: pdfOther}, nil
}

// token reads regular characters up to a delimiter or white space.
func (p *pdfParser) token() []byte {
	start := p.i
	for p.i < len(p.b) && !delimited(p.b, p.i) {
		p.i++
	}
	return p.b[start:p.i]
}

// number reads a number, or a reference "num gen R".
func (p *pdfParser) number() pdfValue {
	n, err := strconv.ParseInt(string(p.token()), 10, 64)
	if err != nil {
		return pdfValue{kind: pdfOther}
	}
	at := p.i
	p.skip()
	if gen := p.token(); len(gen) > 0 && gen[0] >= '0' && gen[0] <= '9' {
		if _, err := strconv.Atoi(string(gen)); err == nil {
			p.skip()
			if string(p.token()) == "R" {
				return pdfValue{kind: pdfRef, n: n}
			}
		}
	}
	p.i = at
	return pdfValue{kind: pdfInt, n: n}
}

// literal skips a literal string: balanced parentheses, backslash escapes.
func (p *pdfParser) literal() error {
	open := 0
	for ; p.i < len(p.b); p.i++ {
		switch p.b[p.i] {
		case '\\':
			p.i++
		case '(':
			open++
		case ')':
			if open--; open == 0 {
				p.i++
				return nil
			}
		}
	}
	return errPDF
}

func (p *pdfParser) dict(depth int, keep bool) (pdfValue, error) {
	d := pdfValue{kind: pdfDict}
	for {
		p.skip()
		if bytes.HasPrefix(p.b[p.i:], []byte(">>")) {
			p.i += 2
			d.end = p.i
			return d, nil
		}
		if p.i >= len(p.b) || p.b[p.i] != '/' {
			return pdfValue{}, errPDF
		}
		p.i++
		key := p.token()
		v, err := p.value(depth+1, false)
		if err != nil {
			return pdfValue{}, err
		}
		if keep && pdfKeys[string(key)] {
			d.entries = append(d.entries, pdfEntry{string(key), v})
		}
	}
}

// array reads an array; one of a single name is that name (a /Filter of
// one filter).
func (p *pdfParser) array(depth int) (pdfValue, error) {
	var first pdfValue
	n := 0
	for {
		p.skip()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			if n == 1 && first.kind == pdfName {
				return first, nil
			}
			return pdfValue{kind: pdfOther}, nil
		}
		v, err := p.value(depth+1, false)
		if err != nil {
			return pdfValue{}, err
		}
		if n++; n == 1 {
			first = v
		}
	}
}
