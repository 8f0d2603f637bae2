package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// readCounter is the real store, counting the bytes of the messages a
// turn reads (ReadTurn).
type readCounter struct {
	coachd.Store
	mu    sync.Mutex
	bytes int
}

func (c *readCounter) History(ctx context.Context, userID, sessionID string) ([]*coachd.Message, error) {
	msgs, err := c.Store.History(ctx, userID, sessionID)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		c.bytes += m.Bytes()
	}
	return msgs, err
}

func (c *readCounter) ReadTurn(ctx context.Context, userID, sessionID string, after int64) (*coachd.Session, []*coachd.Message, error) {
	s, msgs, err := c.Store.ReadTurn(ctx, userID, sessionID, after)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		c.bytes += m.Bytes()
	}
	return s, msgs, err
}

// noisyPhoto is a w×w PNG that does not compress: about 3w² bytes.
func noisyPhoto(tb testing.TB, w int, seed uint64) []byte {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, w))
	r := rand.New(rand.NewPCG(seed, 7))
	for i := range img.Pix {
		img.Pix[i] = uint8(r.UintN(256))
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// TestTurnReadsOnlySentAttachments: a turn re-sends at most
// MaxHistoryAttachments of its session's attachments, the newest; the
// older ones go as a text note. A turn that reads its session from the
// store (the first after a restart, on another replica, or a session too
// big for the history cache) read every attachment's data anyway: a
// photo a day for two months is 60 photos read and decoded per turn to
// send 20.
func TestTurnReadsOnlySentAttachments(t *testing.T) {
	noCompaction := func(a *agent.Agent) {
		a.Compaction = &agent.Compaction{ShortenAfter: 10_000_000, SummarizeAfter: 10_000_000}
	}
	s := newSageSessionIn(t, coachd.UnitTokens, noCompaction)
	s.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		return anthropictest.Text("Noted: a steady day.", 10)
	})
	const days = 3 * agent.MaxHistoryAttachments
	photo := len(noisyPhoto(t, 60, 0)) * 4 / 3 // bytes of base64 a photo
	turn := func(r *agent.Runner, day int) {
		t.Helper()
		tr, err := r.Prepare(context.Background(), agent.TurnRequest{User: s.user, SessionID: s.id, Agent: "sage",
			Message:     fmt.Sprintf("Day %d: my dashboard.", day),
			Attachments: []coachd.Block{coachd.AttachmentBlock(coachd.MediaPNG, "", noisyPhoto(t, 60, uint64(day)))}})
		if err != nil {
			t.Fatalf("day %d: %v", day, err)
		}
		res := tr.Run(context.Background(), &sink{})
		if res.StopReason != coachd.TurnEndTurn {
			t.Fatalf("day %d: %s %v", day, res.StopReason, res.Err)
		}
		s.id = res.SessionID
		s.clock.Advance(24 * time.Hour)
	}
	for day := range days {
		turn(s.runner, day)
	}
	// A replica that has not seen the session (or this one, restarted).
	reads := &readCounter{Store: s.db}
	pack, err := agent.LoadPack(filepath.Join("..", "examples", "sage"), agent.PackOptions{Builtins: tools.Builtins()})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := pack.Agent("sage")
	noCompaction(a)
	fresh := agent.NewRunner(agent.Config{Store: reads, Tools: s.runner.Toolset(), Agents: pack.Agent, Clock: s.clock,
		Model: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: s.fake.URL(), MaxRetries: -1})})
	turn(fresh, days)
	// It sent what a turn that read every byte sends: the same images,
	// the same notes.
	stored, err := s.db.History(context.Background(), s.user.ID, s.id)
	if err != nil {
		t.Fatal(err)
	}
	count := func(msgs []coachd.ModelMessage) (images, notes int) {
		for _, m := range msgs {
			for _, b := range m.Blocks {
				if b.Type == coachd.BlockImage {
					images++
				}
				if strings.Contains(b.Text, "sent earlier in this conversation") {
					notes++
				}
			}
		}
		return images, notes
	}
	reqs := s.fake.Requests()
	gotImages, gotNotes := count(reqs[len(reqs)-1].Messages())
	wantImages, wantNotes := count(agent.History(stored[:len(stored)-1], nil))
	if gotImages != wantImages || gotNotes != wantNotes || gotImages < agent.MaxHistoryAttachments/2 {
		t.Fatalf("the turn sent %d images and %d notes, want %d and %d", gotImages, gotNotes, wantImages, wantNotes)
	}
	t.Logf("the turn read %d bytes of messages for %d days of photos of %d bytes (base64)", reads.bytes, days, photo)
	if want := (agent.MaxHistoryAttachments + 2) * photo; reads.bytes > want {
		t.Errorf("the turn read %d bytes of messages, %d photos' worth; it sends at most %d", reads.bytes, reads.bytes/photo, agent.MaxHistoryAttachments)
	}
}

// TestPreflightReadsOnlySentAttachments: an app that runs its own loop
// (the Rocket League coach) asks for the history with each preflight; it
// gets at most the newest MaxHistoryAttachments attachments, and the
// preflight read every attachment of the session to build it.
func TestPreflightReadsOnlySentAttachments(t *testing.T) {
	ctx := context.Background()
	s := newSageSessionIn(t, coachd.UnitTokens, func(a *agent.Agent) {
		a.Compaction = &agent.Compaction{ShortenAfter: 10_000_000, SummarizeAfter: 10_000_000}
	})
	sess := &coachd.Session{UserID: s.user.ID, Agent: "sage"}
	if err := s.db.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	const days = 3 * agent.MaxHistoryAttachments
	photo := len(noisyPhoto(t, 60, 0)) * 4 / 3
	for day := range days {
		if err := s.db.AppendMessages(ctx, s.user.ID, sess.ID, []*coachd.Message{
			{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.AttachmentBlock(coachd.MediaPNG, "", noisyPhoto(t, 60, uint64(day))),
				coachd.TextBlock(fmt.Sprintf("Day %d: my replay.", day))}},
			{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("Rotate back post earlier.")}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	pack, err := agent.LoadPack(filepath.Join("..", "examples", "sage"), agent.PackOptions{Builtins: tools.Builtins()})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := pack.Agent("sage")
	a.Compaction = &agent.Compaction{ShortenAfter: 10_000_000, SummarizeAfter: 10_000_000}
	reads := &readCounter{Store: s.db}
	r := agent.NewRunner(agent.Config{Store: reads, Tools: s.runner.Toolset(), Agents: pack.Agent, Clock: s.clock,
		Model: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: s.fake.URL(), MaxRetries: -1})})
	pf, err := r.Preflight(ctx, agent.PreflightRequest{User: s.user, SessionID: sess.ID, Message: "and today?"})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := s.db.History(ctx, s.user.ID, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	images := func(msgs []coachd.ModelMessage) (n int) {
		for _, m := range msgs {
			for _, b := range m.Blocks {
				if b.Type == coachd.BlockImage {
					n++
				}
			}
		}
		return n
	}
	got, want := images(pf.History), images(agent.History(stored, nil))
	if got != want || got < agent.MaxHistoryAttachments/2 {
		t.Fatalf("preflight history has %d images, want %d", got, want)
	}
	t.Logf("preflight read %d bytes of messages for %d photos of %d bytes (base64)", reads.bytes, days, photo)
	if max := (agent.MaxHistoryAttachments + 2) * photo; reads.bytes > max {
		t.Errorf("preflight read %d bytes of messages, %d photos' worth; it sends at most %d", reads.bytes, reads.bytes/photo, agent.MaxHistoryAttachments)
	}
}
