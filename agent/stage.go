package agent

import (
	"context"
	"sync"

	"github.com/coachd/coachd"
)

// A round's notes join the write that stores the round (issue 13): a
// note save_note makes is taken in (ToolEnv.StageNote) instead of written
// in a transaction of its own before the tool answers, and created in
// roundBehind's EndTurn with the round's messages and charge. The tool
// answers at once and the next model call starts while the write runs;
// no text of it reaches the client before the write is stored (the
// writes behind), so a crash never shows text after a note that is lost.
// The cap is checked first against the user's live notes as the request
// read them plus the turn's staged ones; the write checks it again, and a
// note that no longer fits (another turn of the user's filled the cap
// meanwhile) fails the round's write and so the turn, storing nothing of
// the round.

// roundNotes holds what a round's tools staged until saveRound takes it.
type roundNotes struct {
	mu     sync.Mutex
	notes  []*coachd.Note
	closed bool // taken: a tool its timeout left behind stages nothing
}

// take closes r and returns its notes; nil r has none.
func (r *roundNotes) take() []*coachd.Note {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return r.notes
}

// stageNote takes n into round r: a call's ToolEnv.StageNote
// (toolCall.stageNote).
func (t *Turn) stageNote(r *roundNotes, n *coachd.Note) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return coachd.Errorf(coachd.ECONFLICT, "the round is over")
	}
	if t.req.User.LiveNotes+t.notesStaged >= coachd.MaxNotesPerUser {
		return coachd.ErrNoteLimit()
	}
	n.ID = coachd.NewID(coachd.PrefixNote, t.r.cfg.Clock.Now())
	r.notes = append(r.notes, n)
	t.notesStaged++
	return nil
}

// storeNotes creates the notes of a round that pauses for the user, in a
// write of their own before the round's (as save_note wrote before).
func (t *Turn) storeNotes(ctx context.Context, notes []*coachd.Note) error {
	if len(notes) == 0 {
		return nil
	}
	wctx, done := persistCtx(ctx)
	defer done()
	_, _, err := t.r.cfg.Store.EndTurn(wctx, t.req.User.ID, coachd.TurnEnd{SessionID: t.sess.ID, Notes: notes})
	return err
}
