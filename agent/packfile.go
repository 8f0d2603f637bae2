package agent

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"unicode/utf8"
)

// MaxPackFile bounds a pack file (agents, skills, tools): far above any
// real one, and what a mistaken path (a log, a binary) is refused at.
const MaxPackFile = 1 << 20

// readPackFile reads a pack file, refusing one over MaxPackFile without
// reading it all.
func readPackFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxPackFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxPackFile {
		return nil, fmt.Errorf("file is larger than %d KiB", MaxPackFile>>10)
	}
	return data, nil
}

// badText names what makes data unfit for a text file (a prompt the model
// reads, YAML an operator wrote), with its line: invalid UTF-8 or a NUL
// byte. "" when it is fine.
func badText(data []byte) (int, string) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return 1 + bytes.Count(data[:i], []byte("\n")), "contains a NUL byte"
	}
	if !utf8.Valid(data) {
		for i := 0; i < len(data); {
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n == 1 {
				return 1 + bytes.Count(data[:i], []byte("\n")), "is not valid UTF-8"
			}
			i += n
		}
	}
	return 0, ""
}
