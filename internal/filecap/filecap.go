// Package filecap reads files an operator names (pack and data files)
// within a size bound, refusing a larger one without reading it all.
package filecap

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrLeadsOut is the reason a name inside a root is refused when its
// path, through its links, leaves the root (or passes an absolute link).
var ErrLeadsOut = errors.New("leads out of the pack directory (a link in a pack must be relative and stay inside it)")

// ReadFile reads the file at path, or refuses it when it is larger than
// max bytes, having read at most max+1 of them.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, openFlags, 0)
	if err != nil {
		return nil, err
	}
	return readCapped(f, max)
}

// ReadIn reads name inside root as ReadFile does: links are followed
// only while they stay in root; one leading out is ErrLeadsOut.
func ReadIn(root *os.Root, name string, max int64) ([]byte, error) {
	f, err := root.OpenFile(name, openFlags, 0)
	if err != nil {
		return nil, InRoot(err)
	}
	return readCapped(f, max)
}

// OpenIn opens name inside root as ReadIn does, without waiting: a
// folder to list, which a named pipe in its place would not let go of.
func OpenIn(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(name, openFlags, 0)
	if err != nil {
		return nil, InRoot(err)
	}
	return f, nil
}

// openFlags open without waiting: a named pipe opened for reading waits
// for a writer (a pack holding one hung its load, past SIGTERM), and
// readCapped refuses anything but a regular file once it is open.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK

// InRoot is err, an os.Root method's, with a path that left the root
// told as ErrLeadsOut.
func InRoot(err error) error {
	var pe *fs.PathError
	// os.Root's error for it is not exported; its text is stable.
	if errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == "path escapes from parent" {
		return ErrLeadsOut
	}
	return err
}

func readCapped(f *os.File, max int64) ([]byte, error) {
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, errors.New("is not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("file is larger than %d KiB", max>>10)
	}
	return data, nil
}
