package review

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
)

// pycache is a review's Python bytecode directory (PYTHONPYCACHEPREFIX).
// Its runs share it, so a review's second pytest run does not compile
// the standard library and pytest again (half a second or more a run);
// no other review, nor any run of the worker's, has it: it is made at
// the review's first run, after the worker's last, and removed when the
// review ends and its last run with it (one the turn left at its
// timeout is still being stopped). A workspace with no trace
// (autobuild's player) keeps a prefix of each run's own (scrubbedEnv's).
type pycache struct {
	mu      sync.Mutex
	dir     string
	running int // runs using dir
	closed  bool
}

// pycachePrefix is the PYTHONPYCACHEPREFIX of a run of w whose own
// directory is home, and what to call when the run ended.
func (w *Workspace) pycachePrefix(home string) (string, func()) {
	own := filepath.Join(home, "pycache")
	if w.opts.Trace == nil {
		return own, func() {}
	}
	c := &w.pyc
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dir == "" && !c.closed {
		if d, err := os.MkdirTemp("", "coachd-pycache-"); err == nil {
			c.dir = d
		}
	}
	if c.dir == "" {
		return own, func() {}
	}
	c.running++
	return c.dir, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.running--; c.running == 0 && c.closed {
			c.remove()
		}
	}
}

// Close ends the workspace's use: its directory is closed, and the
// review's bytecode is removed, once its last run ended. Runs after it
// have their own again.
func (w *Workspace) Close() error {
	err := w.root.Close()
	w.pyc.mu.Lock()
	defer w.pyc.mu.Unlock()
	w.pyc.closed = true
	if w.pyc.running == 0 {
		return errors.Join(err, w.pyc.remove())
	}
	return err
}

func (c *pycache) remove() error {
	d := c.dir
	c.dir = ""
	if d == "" {
		return nil
	}
	return os.RemoveAll(d)
}
