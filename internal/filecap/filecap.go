// Package filecap reads files an operator names (pack and data files)
// within a size bound, refusing a larger one without reading it all.
package filecap

import (
	"fmt"
	"io"
	"os"
)

// ReadFile reads the file at path, or refuses it when it is larger than
// max bytes, having read at most max+1 of them.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("file is larger than %d KiB", max>>10)
	}
	return data, nil
}
