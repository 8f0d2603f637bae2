package server

import (
	"net"
	"sync"
)

// LimitListener returns a listener that keeps at most n connections open:
// while n are open, Accept waits for one to close. n <= 0 returns l as is.
//
// It waits rather than accepting and closing the excess: a waiting
// connection stays in the kernel's accept queue and costs this process no
// file descriptor, goroutine or buffer, and it is served as soon as a slot
// frees (the kernel refuses new ones once that queue is full); closing
// would cost an accept, a descriptor and a close per attempt, the very
// churn a flood is after.
func LimitListener(l net.Listener, n int) net.Listener {
	if n <= 0 {
		return l
	}
	return &limitListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	slots     chan struct{} // one token per open connection
	closeOnce sync.Once
	done      chan struct{} // closed by Close: a waiting Accept returns
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, l: l}, nil
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// limitConn gives its slot back when closed, once however often it is
// closed.
type limitConn struct {
	net.Conn
	l       *limitListener
	release sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.release.Do(func() { <-c.l.slots })
	return err
}

// CloseWrite passes through, so that net/http can still close a connection
// gracefully after refusing an over-large body (a TCP half-close).
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
