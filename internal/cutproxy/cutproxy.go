// Package cutproxy is a TCP proxy for tests of clients that must live
// through a dropped connection: it forwards each connection to its target,
// as a load balancer in front of replicas does, until Cut closes them all
// (a network drop). A test may move the target between connections,
// learn when a target began to answer, and have one answer cut on its
// way (CutOnce).
package cutproxy

import (
	"bytes"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy forwards connections to its target.
type Proxy struct {
	ln     net.Listener
	target atomic.Value // string
	mu     sync.Mutex
	conns  []net.Conn
	// Answered receives the target of each connection whose answer began
	// with an HTTP 200 (up to 64 waiting; more are not kept).
	Answered chan string
	once     atomic.Pointer[[]byte] // CutOnce's marker
	cuts     atomic.Int32
}

// New starts a proxy to target (host:port) on a loopback port; it stops
// with the test.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, Answered: make(chan string, 64)}
	p.target.Store(target)
	t.Cleanup(func() { ln.Close(); p.Cut() })
	go p.serve()
	return p
}

// URL is the proxy's base URL.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// Retarget sends the connections opened from now on to target.
func (p *Proxy) Retarget(target string) { p.target.Store(target) }

// Cut closes every connection open through the proxy.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// CutOnce closes the first answer from now on that holds marker, once,
// after passing on the read that held it (a network drop mid-reply).
// With an empty marker it closes the first answer to begin, before any
// byte of it reaches the client: the server did the work, and its
// client never heard.
func (p *Proxy) CutOnce(marker string) {
	m := []byte(marker)
	p.once.Store(&m)
}

// Cuts is how many answers CutOnce closed.
func (p *Proxy) Cuts() int { return int(p.cuts.Load()) }

// cutHere reports whether CutOnce's marker, still unspent, is met by b
// (before is whether b is still to be passed on), and spends it.
func (p *Proxy) cutHere(b []byte, before bool) bool {
	m := p.once.Load()
	if m == nil || (len(*m) == 0) != before || !bytes.Contains(b, *m) || !p.once.CompareAndSwap(m, nil) {
		return false
	}
	p.cuts.Add(1)
	return true
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		to := p.target.Load().(string)
		s, err := net.Dial("tcp", to)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { io.Copy(s, c); s.Close() }()
		go p.answer(c, s, to)
	}
}

// answer copies s's answer to c, telling Answered when it begins with a
// 200.
func (p *Proxy) answer(c, s net.Conn, to string) {
	defer c.Close()
	buf := make([]byte, 32<<10)
	first := true
	for {
		n, err := s.Read(buf)
		if n > 0 {
			if p.cutHere(buf[:n], true) {
				s.Close()
				return
			}
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
			if p.cutHere(buf[:n], false) {
				s.Close()
				return
			}
			if first && bytes.HasPrefix(buf[:n], []byte("HTTP/1.1 200")) {
				select {
				case p.Answered <- to:
				default:
				}
			}
			first = false
		}
		if err != nil {
			return
		}
	}
}
