package server_test

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// writeLog is a listener whose connections keep a copy of each Write.
type writeLog struct {
	net.Listener
	mu     sync.Mutex
	writes [][]byte
}

func (l *writeLog) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &loggedConn{Conn: c, log: l}, nil
}

type loggedConn struct {
	net.Conn
	log *writeLog
}

func (c *loggedConn) Write(p []byte) (int, error) {
	c.log.mu.Lock()
	c.log.writes = append(c.log.writes, bytes.Clone(p))
	c.log.mu.Unlock()
	return c.Conn.Write(p)
}

// A chat stream's last events go out in the same write as the response's
// last chunk: the client learns the turn ended and the body ended at once,
// and the server makes one system call for both.
func TestChatStreamEndsInOneWrite(t *testing.T) {
	log := &writeLog{}
	e := mustEdgeEnvOn(t, nil, func(l net.Listener) net.Listener { log.Listener = l; return log })
	e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply {
		return anthropictest.Text("Take the airport run at six.", 4)
	})
	for turn := range 3 {
		log.mu.Lock()
		log.writes = nil
		log.mu.Unlock()
		s := e.chat(context.Background(), e.alice.key, "", `{"message":"when should I drive?"}`)
		if s.status != 200 || len(s.events) == 0 || s.events[len(s.events)-1].Name != "message_end" {
			t.Fatalf("turn %d: status %d, events %v", turn, s.status, s.events)
		}
		log.mu.Lock()
		writes := log.writes
		log.mu.Unlock()
		var last []byte
		for _, w := range writes {
			if bytes.Contains(w, []byte("event: message_end")) {
				last = w
			}
			if string(w) == "0\r\n\r\n" {
				t.Errorf("turn %d: the response's last chunk went out in a write of its own", turn)
			}
		}
		if !endsResponse(last) {
			t.Errorf("turn %d: the write with message_end is %q, want it to end the response (0\\r\\n\\r\\n)", turn, last)
		}
	}
}

// endsResponse reports whether w, a write holding a turn's last events,
// also ends the response: the chunked body's last chunk, or, when the
// turn ended before anything was flushed (a loaded machine's scheduling),
// the whole response at once, its headers' Content-Length covering it.
func endsResponse(w []byte) bool {
	if bytes.HasSuffix(w, []byte("0\r\n\r\n")) {
		return true
	}
	head, body, ok := bytes.Cut(w, []byte("\r\n\r\n"))
	if !ok || !bytes.HasPrefix(head, []byte("HTTP/1.1 200")) {
		return false
	}
	for _, line := range bytes.Split(head, []byte("\r\n")) {
		if n, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
			return string(n) == strconv.Itoa(len(body))
		}
	}
	return false
}
