package mcp

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A stdio server is often a launcher and its child (npx and node, a
// shell script, uv): the child shares the server's pipes and may outlive
// the launcher's end. The server runs in a process group of its own, and
// closing its connection kills what is left of the group once the
// launcher has exited (or was killed).

// childWait bounds the wait, once the server exited, for a child that
// holds its stderr: it must be shorter than the transport's terminate
// duration, or Close would signal a process already gone.
const childWait = time.Second

// groupTransport starts a stdio server in its own process group.
type groupTransport struct{ *sdk.CommandTransport }

func newGroupTransport(cmd *exec.Cmd, terminate time.Duration) groupTransport {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = childWait
	return groupTransport{&sdk.CommandTransport{Command: cmd, TerminateDuration: terminate}}
}

func (t groupTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.CommandTransport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &groupConn{Connection: c, pgid: t.Command.Process.Pid}, nil
}

// groupConn kills the server's process group after its close.
type groupConn struct {
	sdk.Connection
	pgid int
	once sync.Once
	err  error
}

func (c *groupConn) Close() error {
	c.once.Do(func() {
		c.err = c.Connection.Close()
		syscall.Kill(-c.pgid, syscall.SIGKILL) // none left: ESRCH
		if errors.Is(c.err, exec.ErrWaitDelay) || errors.Is(c.err, os.ErrProcessDone) {
			// The server exited; a child held its stderr (the transport
			// signals the server when its wait outlasts the grace period).
			// The child is killed now, and its pipe with it.
			c.err = nil
		}
	})
	return c.err
}
