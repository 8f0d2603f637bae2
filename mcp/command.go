package mcp

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// CheckCommand reports a stdio server's command that could not start:
// a name not on PATH, or a path (taken from the pack directory, Dir) that
// is not an executable file. It looks as the first start will, with
// coachd's own PATH, so a typo is a pack problem, not a warning on the
// first turn. An HTTP server has no command: nil.
func (c *Config) CheckCommand() error {
	if c.Command == "" {
		return nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s:%d: command %q %s", c.file, c.commandLine, c.Command, fmt.Sprintf(format, args...))
	}
	if !strings.Contains(c.Command, "/") {
		if _, err := exec.LookPath(c.Command); err != nil {
			if errors.Is(err, exec.ErrDot) {
				return bad("is only in the working directory, which PATH lookups skip (write ./%s)", c.Command)
			}
			return bad("is not on PATH")
		}
		return nil
	}
	p := c.Command
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.Dir, p)
	}
	st, err := os.Stat(p)
	switch {
	case err != nil || st.IsDir():
		if filepath.IsAbs(c.Command) {
			return bad("is not a file")
		}
		return bad("is not a file of the pack (a path is taken from the pack directory)")
	case st.Mode()&0o111 == 0:
		return bad("is not executable")
	}
	return nil
}
