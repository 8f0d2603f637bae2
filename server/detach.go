package server

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sse"
	"github.com/coachd/coachd/stream"
)

// An idle session stream (issue 18: 10,000 on one process) is parked off
// its request: once its session has no turn running, the handler hijacks
// the HTTP/1.1 connection and returns, so net/http's goroutines, buffers
// and request go; the stream keeps its sse.Writer (dialect state, event
// ids, heartbeats from the shared heart) over the bare connection, writing
// the chunked framing itself, and waits in the hub (stream.Hub.Park)
// holding no goroutine. A turn wakes it onto a goroutine of its own until
// the session is idle again. A client that leaves is found by a failed
// write (an event or a heartbeat) or by the prober, which looks at every
// parked connection once a probeEvery without blocking. A request that
// cannot be hijacked (HTTP/2, a HEAD, a recorder) streams on its handler
// as before.

// probeEvery is how often the prober looks for parked streams whose
// client has gone.
const probeEvery = time.Second

// detachedStreams are the streams parked off their request.
type detachedStreams struct {
	mu      sync.Mutex
	set     map[*detached]struct{}
	probing bool
	none    chan struct{} // closed when set empties; nil while nobody waits
}

// detached is one session stream running off its request.
type detached struct {
	s             *Server
	conn          net.Conn
	sw            *sse.Writer
	send          func(coachd.Event) error // sw.Queue, while the stream's credentials work
	ctx           context.Context
	cancel        context.CancelFunc
	user, session string
	closed        func() // counts the stream closed, gives back its slot
}

// detachable reports whether a session stream's request can be parked:
// an HTTP/1.1 GET, whose response net/http frames as chunks.
func detachable(r *http.Request) bool {
	return r.ProtoMajor == 1 && r.ProtoMinor >= 1 && r.Method == http.MethodGet
}

// detach parks an idle session stream off its request; false if the
// connection cannot be hijacked (the stream is unchanged then). The
// handler must return at once after true; closed is called when the
// parked stream ends.
func (s *Server) detach(w http.ResponseWriter, sw *sse.Writer, send func(coachd.Event) error, userID, sessionID string, at stream.Idle, closed func()) bool {
	d := &detached{s: s, sw: sw, send: send, user: userID, session: sessionID, closed: closed}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	err := sw.Detach(d.ctx, func() (http.ResponseWriter, error) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return nil, err
		}
		// The reader net/http hands over holds nothing a stream needs
		// (a client sends nothing after its GET): it is dropped, and the
		// prober reads and drops whatever comes.
		d.conn = conn
		return &chunkConn{conn: conn, cancel: d.cancel}, nil
	})
	if err != nil {
		d.cancel()
		return false
	}
	s.detached.add(d)
	s.hub.Park(d.ctx, userID, sessionID, at, func() { d.run(at.After) })
	return true
}

// run follows the session from after until it is idle again (parking the
// stream once more) or the stream ends.
func (d *detached) run(after coachd.EventID) {
	at, err := d.s.hub.FollowUntilIdle(d.ctx, d.user, d.session, after, d.send, d.sw.Flush)
	if err == nil {
		d.s.hub.Park(d.ctx, d.user, d.session, at, func() { d.run(at.After) })
		return
	}
	d.close()
}

// close ends the response (closing bytes and the last chunk, if the
// client is still there) and the connection.
func (d *detached) close() {
	if d.sw.Close() == nil {
		_ = d.conn.SetWriteDeadline(time.Now().Add(d.s.writeTime))
		_, _ = d.conn.Write([]byte("0\r\n\r\n"))
	}
	d.cancel()
	d.conn.Close()
	d.s.detached.remove(d)
	d.closed()
}

func (ds *detachedStreams) add(d *detached) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if ds.set == nil {
		ds.set = map[*detached]struct{}{}
	}
	ds.set[d] = struct{}{}
	if !ds.probing {
		ds.probing = true
		go ds.probe()
	}
}

func (ds *detachedStreams) remove(d *detached) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	delete(ds.set, d)
	if len(ds.set) == 0 && ds.none != nil {
		close(ds.none)
		ds.none = nil
	}
}

// len returns how many streams are parked off their request or running
// on their own goroutine.
func (ds *detachedStreams) len() int {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return len(ds.set)
}

// wait waits until every detached stream has ended, or ctx is done.
// A stream parked meanwhile (a handler that found its session idle just
// before Drain) is waited for too.
func (ds *detachedStreams) wait(ctx context.Context) error {
	for {
		ds.mu.Lock()
		if len(ds.set) == 0 {
			ds.mu.Unlock()
			return nil
		}
		if ds.none == nil {
			ds.none = make(chan struct{})
		}
		none := ds.none
		ds.mu.Unlock()
		select {
		case <-none:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// probe cancels the streams whose client has closed its connection; it
// returns once there are none.
func (ds *detachedStreams) probe() {
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	var all []*detached
	for range t.C {
		all = all[:0]
		ds.mu.Lock()
		if len(ds.set) == 0 {
			ds.probing = false
			ds.mu.Unlock()
			return
		}
		for d := range ds.set {
			all = append(all, d)
		}
		ds.mu.Unlock()
		for _, d := range all {
			if d.ctx.Err() == nil && connGone(d.conn) {
				d.cancel() // the parked stream wakes and ends
			}
		}
		clear(all)
	}
}

// chunkConn is the ResponseWriter of a hijacked HTTP/1.1 response whose
// headers (Transfer-Encoding: chunked) went out already: each Write is
// one chunk. A failed write cancels the stream.
type chunkConn struct {
	conn   net.Conn
	cancel context.CancelFunc
}

func (c *chunkConn) Header() http.Header { return http.Header{} } // sent already
func (c *chunkConn) WriteHeader(int)     {}

func (c *chunkConn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	b := make([]byte, 0, len(p)+20)
	b = strconv.AppendInt(b, int64(len(p)), 16)
	b = append(b, "\r\n"...)
	b = append(b, p...)
	b = append(b, "\r\n"...)
	if _, err := c.conn.Write(b); err != nil {
		c.cancel()
		return 0, err
	}
	return len(p), nil
}

// SetWriteDeadline lets the sse.Writer bound a write to a client that
// does not read.
func (c *chunkConn) SetWriteDeadline(t time.Time) error { return c.conn.SetWriteDeadline(t) }

// DetachedStreams returns how many session streams run off their request
// (parked, or woken by a turn).
func (s *Server) DetachedStreams() int { return s.detached.len() }
