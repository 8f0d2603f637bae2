package agent

import (
	"container/list"
	"context"
	"slices"
	"sync"

	"github.com/coachd/coachd"
)

// maxCachedMessages bounds the history cache: about 200 MB at the
// ~2 KiB a stored message takes in memory, far less for typical chat.
// maxCachedBytes bounds it too: a user message holds its attachments (up
// to 10 MiB of them, as base64), so a count alone bounds nothing.
const (
	maxCachedMessages = 100_000
	maxCachedBytes    = 256 << 20
)

// historyCache keeps sessions' stored messages between turns, so a turn
// reads only the messages stored since the last one it saw (its own last
// turn's, or another replica's) instead of the whole session: a long
// session's turn no longer costs a read of every message. Messages are
// append-only (a session is deleted whole), so a cached prefix stays
// true; a session gone from the store fails the read as before.
type historyCache struct {
	mu    sync.Mutex
	lru   *list.List // of *historyEntry, most recent first
	byID  map[string]*list.Element
	count int // messages cached
	bytes int // their size (messagesSize)
}

type historyEntry struct {
	session, user string
	msgs          []*coachd.Message
	bytes         int // messagesSize(msgs)
	// sess, when not nil, is the session as its last turn here left it
	// (Store.EndTurn) and msgs its every message: the next turn starts
	// from both without a read, once (its admission checks that the
	// stored session has not moved since, TurnAdmission.Seen).
	sess *coachd.Session
}

func newHistoryCache() *historyCache {
	return &historyCache{lru: list.New(), byID: map[string]*list.Element{}}
}

// loadTurn returns the session and its whole history: as the session's
// last turn here left them (ended), without a read, when it left them;
// else the cached prefix plus what the store holds after it, read with
// the session in one read (Store.ReadTurn).
func (c *historyCache) loadTurn(ctx context.Context, st coachd.Store, userID, sessionID string) (*coachd.Session, []*coachd.Message, error) {
	cached, sess := c.get(userID, sessionID)
	if sess != nil {
		return sess, cached, nil
	}
	var after int64
	if len(cached) > 0 {
		after = cached[len(cached)-1].Seq
	}
	sess, msgs, err := st.ReadTurn(ctx, userID, sessionID, after)
	if err != nil {
		return nil, nil, err
	}
	learnAttachments(msgs)
	msgs = append(cached, msgs...)
	c.put(userID, sessionID, msgs, nil)
	return sess, slices.Clip(msgs), nil
}

// history returns the session's whole history as loadTurn reads it, for
// a look before a turn: what a turn that ended here left for the next
// one stays for it.
func (c *historyCache) history(ctx context.Context, st coachd.Store, userID, sessionID string) ([]*coachd.Message, error) {
	cached := c.peek(userID, sessionID)
	var after int64
	if len(cached) > 0 {
		after = cached[len(cached)-1].Seq
	}
	_, msgs, err := st.ReadTurn(ctx, userID, sessionID, after)
	if err != nil {
		return nil, err
	}
	learnAttachments(msgs)
	if len(cached) == 0 {
		c.put(userID, sessionID, msgs, nil) // the turn then reads only what follows
	}
	return append(cached, msgs...), nil
}

// ended keeps what a turn that ended here leaves its session's next
// turn: sess as the turn's EndTurn returned it (nil: nothing to keep) and
// history, when history is the session's every message. It is when each
// was stored (a seq, rising) and they are as many as sess counts: the
// session's messages are append-only, so that many of its own are all
// of them.
func (c *historyCache) ended(userID string, sess *coachd.Session, history []*coachd.Message) {
	if sess == nil || int64(len(history)) != sess.MessageCount {
		return
	}
	var seq int64
	for _, m := range history {
		if m.Seq <= seq || m.SessionID != sess.ID {
			return
		}
		seq = m.Seq
	}
	c.put(userID, sess.ID, slices.Clip(history), sess)
}

// get returns the cached messages of the user's session, nil when none,
// and takes the session its last turn here left (nil when none: read it).
func (c *historyCache) get(userID, sessionID string) ([]*coachd.Message, *coachd.Session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byID[sessionID]
	if !ok {
		return nil, nil
	}
	e := el.Value.(*historyEntry)
	if e.user != userID || len(e.msgs) == 0 {
		return nil, nil
	}
	c.lru.MoveToFront(el)
	sess := e.sess
	e.sess = nil
	return slices.Clip(e.msgs), sess // appends by the caller copy
}

// peek is get's cached messages, leaving the entry's session for the
// next turn.
func (c *historyCache) peek(userID, sessionID string) []*coachd.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byID[sessionID]
	if !ok {
		return nil
	}
	e := el.Value.(*historyEntry)
	if e.user != userID {
		return nil
	}
	return slices.Clip(e.msgs)
}

func (c *historyCache) put(userID, sessionID string, msgs []*coachd.Message, sess *coachd.Session) {
	if len(msgs) == 0 || len(msgs) > maxCachedMessages/4 {
		return
	}
	msgs = omitOldAttachments(msgs)
	size := messagesSize(msgs)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[sessionID]; ok {
		c.drop(el)
	}
	if size > maxCachedBytes/4 {
		return // too big to keep (and its older prefix with it)
	}
	c.byID[sessionID] = c.lru.PushFront(&historyEntry{session: sessionID, user: userID, msgs: msgs, sess: sess, bytes: size})
	c.count += len(msgs)
	c.bytes += size
	for c.count > maxCachedMessages || c.bytes > maxCachedBytes {
		c.drop(c.lru.Back())
	}
}

func (c *historyCache) drop(el *list.Element) {
	e := c.lru.Remove(el).(*historyEntry)
	delete(c.byID, e.session)
	c.count -= len(e.msgs)
	c.bytes -= e.bytes
}

// messagesSize is about the memory msgs hold: their contents
// (Message.Bytes) and a fixed cost a message.
func messagesSize(msgs []*coachd.Message) int {
	n := 0
	for _, m := range msgs {
		n += 512 + m.Bytes()
	}
	return n
}

// omitOldAttachments returns msgs with the data of attachments no turn
// sends left out (coachd.OmitAttachmentData), as Store.ReadTurn reads
// them: a session's every photo (or a tool's every screenshot) is what
// made it too big to cache. A message keeps its attachments while the
// newer messages hold fewer than MaxHistoryAttachments attachments and
// MaxHistoryAttachmentBytes of them, those in tool results counted too
// (coachd.CountAttachments), the window's bounds (limitAttachments), so
// every attachment a history sends is kept. msgs and its messages are
// not changed: changed ones are copies, in a copy of the slice.
func omitOldAttachments(msgs []*coachd.Message) []*coachd.Message {
	out, count, size := msgs, 0, 0 // of the newer messages' attachments
	for i := len(msgs) - 1; i >= 0; i-- {
		n, sent := coachd.CountAttachments(msgs[i].Blocks)
		if n == 0 {
			continue
		}
		keep := coachd.AttachmentsMaySend(count, size)
		count, size = count+n, size+sent
		if keep {
			continue
		}
		blocks, ok := coachd.OmitAttachmentData(msgs[i].Blocks)
		if !ok {
			continue // read so from the store
		}
		if &out[0] == &msgs[0] {
			out = slices.Clone(msgs)
		}
		m := *msgs[i]
		m.Blocks = blocks
		out[i] = &m
	}
	return out
}

// learnAttachments reads each attachment of msgs, read from the store,
// once (coachd.LearnAttachment: its media type, sizes, whether it is
// as-is, a PDF's page count), as it is cached, not on every turn's
// history. msgs are the caller's own.
func learnAttachments(msgs []*coachd.Message) {
	for _, m := range msgs {
		for j := range m.Blocks {
			coachd.LearnAttachment(&m.Blocks[j])
		}
	}
}

func isAttachment(b coachd.Block) bool {
	return b.Type == coachd.BlockImage || b.Type == coachd.BlockDocument
}
