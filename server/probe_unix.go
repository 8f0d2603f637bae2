//go:build unix

package server

import (
	"errors"
	"net"
	"syscall"
)

// connGone reports, without blocking, whether the client closed its side
// of c (or the connection failed). Whatever the client sent is read and
// dropped: a stream's client has nothing more to say after its request.
func connGone(c net.Conn) bool {
	if lc, ok := c.(*limitConn); ok {
		c = lc.Conn
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false // the next failed write tells
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	gone := false
	err = rc.Read(func(fd uintptr) bool {
		var buf [128]byte
		for range 16 { // the socket is non-blocking: EAGAIN when empty
			n, err := syscall.Read(int(fd), buf[:])
			switch {
			case n > 0 || errors.Is(err, syscall.EINTR):
				continue
			case err == nil: // n == 0: end of file
				gone = true
			case !errors.Is(err, syscall.EAGAIN):
				gone = true
			}
			break
		}
		return true // done: never wait for the socket to be readable
	})
	return gone || err != nil
}
