package mcp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/coachd/coachd"
)

// Tools lists the server's tools as coachd tools named <prefix>__<tool>,
// filtered by the file's allow and deny lists, starting the server if
// needed. A tool whose name the Messages API would refuse is skipped and
// logged. The start and the listing run in the background: Tools waits
// for them at most the start wait (not at all after a listing outlasted
// it, until one succeeds), so a server that hangs never holds up turns.
func (s *Server) Tools(ctx context.Context) ([]coachd.Tool, error) {
	s.mu.Lock()
	if s.tools != nil && time.Since(s.listedAt) < toolsTTL {
		defer s.mu.Unlock()
		return s.tools, nil
	}
	done := s.listing
	if done == nil {
		retry := time.Until(s.retryAt)
		switch {
		case s.closed:
			s.mu.Unlock()
			return nil, fmt.Errorf("mcp %s: the MCP server is shut down", s.cfg.Name)
		case retry > 0 && (s.slow || retry >= s.wait || !lasts(ctx, retry)):
			// A short backoff is waited out (in the background).
			s.mu.Unlock()
			return nil, fmt.Errorf("mcp %s: the MCP server is restarting (next attempt in %s)", s.cfg.Name, retry.Round(time.Millisecond))
		}
		done = make(chan struct{})
		s.listing, s.since = done, time.Now()
		go s.list(done)
	}
	wait := s.wait - time.Since(s.since)
	if s.slow {
		wait = 0
	}
	s.mu.Unlock()
	timer := time.NewTimer(max(wait, 0))
	defer timer.Stop()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("mcp %s: %w", s.cfg.Name, ctx.Err())
	case <-timer.C:
		s.mu.Lock()
		defer s.mu.Unlock()
		s.slow = s.slow || s.listing == done
		if s.tools != nil { // listed before, due to be listed again
			return s.tools, nil
		}
		return nil, fmt.Errorf("mcp %s: the MCP server has not answered within %s; its tools are left out until it does", s.cfg.Name, s.wait)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.tools != nil:
		return s.tools, nil
	case s.listErr != nil:
		return nil, s.listErr
	}
	return nil, fmt.Errorf("mcp %s: the MCP server stopped while listing its tools", s.cfg.Name)
}

// list starts the server if needed and lists its tools, in the
// background; a failure counts towards the backoff.
func (s *Server) list(done chan struct{}) {
	defer close(done)
	_, err := s.listTools(s.bg)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listing, s.listErr = nil, err
	if err == nil {
		s.slow = false
		return
	}
	if time.Now().After(s.retryAt) {
		s.fail() // a listing that failed on a running server
	}
	s.log.Warn("mcp server tools not listed", "err", err)
}

// maxListed bounds the tools read of a listing, kept or not, and
// maxRefusedLogged the skipped ones logged each with its reason.
const (
	maxListed        = 1000
	maxRefusedLogged = 10
)

func (s *Server) listTools(ctx context.Context) ([]coachd.Tool, error) {
	sess, err := s.session(ctx)
	if err != nil {
		return nil, fmt.Errorf("mcp %s: %w", s.cfg.Name, err)
	}
	s.mu.Lock()
	gen := s.changes
	s.listGen = gen
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	out, size, skipped, refused, read := []coachd.Tool{}, 0, 0, 0, 0
	listed, whole := map[string]bool{}, true
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			s.broken(sess, err)
			return nil, fmt.Errorf("mcp %s: list tools: %w", s.cfg.Name, s.redact(err))
		}
		if read++; len(out) >= 200 || read > maxListed {
			// Tools it skips count too: a server listing page after
			// page of them would otherwise be read until the timeout.
			s.log.Warn("mcp server lists too many tools; the rest are skipped", "kept", len(out), "read", read-1)
			whole = false
			break
		}
		listed[t.Name] = true
		if !Allowed(t.Name, s.cfg.Allow, s.cfg.Deny) {
			continue
		}
		tool, err := newTool(s, t)
		if err != nil {
			if refused++; refused <= maxRefusedLogged {
				s.log.Warn("mcp tool skipped", "tool", truncate(t.Name, 100), "reason", truncate(err.Error(), 300))
			}
			continue
		}
		n := len(tool.def.InputSchema) + len(tool.def.Description)
		if size+n > maxListBytes {
			skipped++
			continue
		}
		size += n
		out = append(out, tool)
	}
	if refused > maxRefusedLogged {
		s.log.Warn("mcp tools skipped, not each logged", "skipped", refused-maxRefusedLogged)
	}
	if skipped > 0 {
		s.log.Warn("mcp server's tools are over the size bound; the rest are skipped", "kept", len(out), "skipped", skipped, "bound_bytes", maxListBytes)
	}
	s.mu.Lock()
	warn := whole && s.sess == sess && s.checkedStart != s.starts
	if s.sess == sess {
		s.tools, s.listedAt, s.checkedStart = out, time.Now(), s.starts
		if s.changes != gen { // a change was announced meanwhile: list again on next use
			s.listedAt = time.Time{}
		}
	}
	s.mu.Unlock()
	if warn {
		s.warnUnlisted(listed)
	}
	return out, nil
}

// warnUnlisted logs each literal name of the file's allow and deny that
// the server did not list: it matches nothing (a typo, a tool renamed).
// Once per start: listings repeat every toolsTTL.
func (s *Server) warnUnlisted(listed map[string]bool) {
	for key, list := range map[string][]string{"allow": s.cfg.Allow, "deny": s.cfg.Deny} {
		for _, name := range list {
			if !strings.ContainsAny(name, "*?[\\") && !listed[name] {
				s.log.Warn("mcp server file's "+key+": the server lists no such tool; the name matches nothing", "tool", name)
			}
		}
	}
}

// lasts reports whether ctx lasts at least d.
func lasts(ctx context.Context, d time.Duration) bool {
	dl, ok := ctx.Deadline()
	return !ok || time.Until(dl) >= d
}
