package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// groupTransport starts a stdio server in its own process group. cut,
// when set, is called with the reason when the server is stopped for
// not reading (groupConn), before the connection is closed.
type groupTransport struct {
	*sdk.CommandTransport
	cut func(error)
	// answerWait bounds the write of an answer to the server's request.
	answerWait time.Duration
}

func newGroupTransport(cmd *exec.Cmd, terminate time.Duration) groupTransport {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
	cmd.WaitDelay = childWait
	return groupTransport{CommandTransport: &sdk.CommandTransport{Command: cmd, TerminateDuration: terminate}}
}

func (t groupTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.CommandTransport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &groupConn{Connection: c, pgid: t.Command.Process.Pid, cut: t.cut, answerWait: t.answerWait}, nil
}

// groupConn kills the server's process group after its close.
type groupConn struct {
	sdk.Connection
	pgid int
	cut  func(error)
	once sync.Once
	err  error
	// answerWait bounds an answer's write (zero: unbounded).
	answerWait time.Duration
	// answering counts the server's requests read and not yet answered.
	answering atomic.Int64
}

// maxAnswering bounds the server's requests (ping, roots/list…) coachd
// has read and not yet answered. The SDK answers each in a goroutine of
// its own whose write to the server's stdin waits, when the server does
// not read it, until answerWait: a server that sends requests without
// end and reads no answers grew coachd by thousands of goroutines and
// tens of MB a second until then (30 s by default). Past the bound it
// is stopped.
const maxAnswering = 1000

// errNotAnswered is why a session whose server sent more than
// maxAnswering requests it did not read the answers to ended.
var errNotAnswered = fmt.Errorf("the server sent more than %d requests without reading their answers; it was stopped", maxAnswering)

// Read reads the server's next message, and stops a server that sends
// more requests than coachd can answer it (maxAnswering).
func (c *groupConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && c.answering.Add(1) > maxAnswering {
		c.stop(errNotAnswered)
		return nil, errNotAnswered
	}
	return msg, err
}

// stop kills the server and closes the connection, why first told to cut.
func (c *groupConn) stop(why error) {
	if c.cut != nil {
		c.cut(why)
	}
	syscall.Kill(-c.pgid, syscall.SIGKILL)
	c.Close()
}

// Write writes msg, and closes the connection when ctx ends first: the
// SDK's write to the server's stdin does not heed ctx, so a request
// larger than the pipe's buffer, to a server that stopped reading (busy
// on one thing, or hung), blocked the call past its timeout, and every
// later call behind the write's lock, for good. The server, which does
// not read, is killed and the connection closed: the write fails, and
// the next call starts the server again (cut forgets the session first).
//
// An answer to the server's own request (ping, roots/list…) is written
// with a context that never ends: to a server that reads nothing, it
// waited for good, and so did Close (the SDK closes the connection once
// the requests it is answering are done), a pack's reload or coachd's
// shutdown with it. Its write is bounded by answerWait.
func (c *groupConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	why := errWriteCut
	if _, ok := msg.(*jsonrpc.Response); ok {
		defer c.answering.Add(-1)
		if c.answerWait > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.answerWait)
			defer cancel()
			why = errAnswerCut
		}
	}
	var mu sync.Mutex
	written := false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		cut := !written
		mu.Unlock()
		if cut {
			c.stop(why)
		}
	})
	defer stop()
	err := c.Connection.Write(ctx, msg)
	mu.Lock()
	written = true
	mu.Unlock()
	return err
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

// errWriteCut is why a session whose write was cut (groupConn.Write)
// ended.
var errWriteCut = errors.New("the server stopped reading its requests; it was stopped")

// errAnswerCut is why a session whose answer's write was cut ended.
var errAnswerCut = errors.New("the server stopped reading the answers to its requests; it was stopped")
