package server

import (
	"context"
	"net/http"
	"time"

	"github.com/coachd/coachd"
)

// uiBranch is the session a useChat request that rewrote its chat (an
// edited message, a Regenerate) goes on in, as /v1/chat/completions
// does: the model must see the chat as it shows. The chat holds users
// user messages before its last one; when its session has stored more,
// the chat goes on in a new session holding the stored messages before
// that last one (an edit), or up to it (a Regenerate of a reply the chat
// had, or of one a later turn followed). Otherwise it stays in id.
func (s *Server) uiBranch(ctx context.Context, userID, id string, users int, regenerate bool) (string, error) {
	hist, err := s.runner.History(ctx, userID, id)
	if err != nil {
		return "", err
	}
	var starts []int64 // the seqs of the user's own messages
	for _, m := range hist {
		if m.Role == coachd.RoleUser && startsTurn(m) {
			starts = append(starts, m.Seq)
		}
	}
	if len(starts) <= users {
		return id, nil // the chat's last message is new to the session
	}
	at := starts[users] - 1
	if regenerate {
		// A turn that failed before its reply, or whose reply broke off,
		// runs again where it is (a Retry).
		if last := hist[len(hist)-1]; len(starts) == users+1 && (last.Role == coachd.RoleUser || last.Partial) {
			return id, nil
		}
		at++
	}
	fork, err := s.store.ForkSession(ctx, userID, id, at)
	if err != nil {
		return "", err
	}
	return fork.ID, nil
}

// dropFork deletes the session a request forked for a turn that was then
// refused (a budget spent, a limit): each refused try would leave a copy
// of the conversation among the user's sessions.
func (s *Server) dropFork(r *http.Request, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	if err := s.store.DeleteSession(ctx, UserFrom(r.Context()).ID, id); err != nil {
		s.log(r).Warn("delete the fork of a refused turn", "session", id, "err", err)
	}
}
