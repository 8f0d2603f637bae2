package agent

import "github.com/coachd/coachd"

// roundRoom is the room in the session a round may call tools with: its
// tool round (the reply and its results) and the reply after it. With
// less, the round is the turn's last: it is offered no tools, so the
// model answers in one message the session can store.
const roundRoom = 3

// room is how many more messages the session takes
// (coachd.MaxMessagesPerSession), as the turn knows it: the messages it
// held when the turn was admitted and those the turn has stored since.
// The store still refuses an append past the cap; this lets the turn stop
// before a model call whose reply it could not store, instead of after.
func (t *Turn) room() int64 {
	return coachd.MaxMessagesPerSession - t.unread - int64(len(t.history))
}

// sessionFull is the turn's error when the session has no room left for
// a reply: the store's own words.
func sessionFull() error {
	return coachd.Errorf(coachd.ECONFLICT, "the session is full (%d messages): start a new session", coachd.MaxMessagesPerSession)
}
