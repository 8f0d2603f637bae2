package sqlstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

func testMessages(t *testing.T, newDSN func(tb testing.TB) string) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		clock := newClock()
		db := MustOpen(t, newDSN(t), clock)
		u := MustCreateUser(t, db, "a")
		s := MustCreateSession(t, db, u.ID)
		clock.Add(time.Minute)
		msgs := []*coachd.Message{
			{Role: coachd.RoleUser, Content: "hello"},
			{Role: coachd.RoleAssistant, Blocks: []coachd.Block{
				{Type: coachd.BlockThinking, Thinking: "hmm", Signature: "sig"},
				coachd.TextBlock("Hi "), coachd.TextBlock("there"),
			}, Metadata: json.RawMessage(`{"stop_reason":"end_turn"}`),
				Usage: &coachd.Usage{InputTokens: 10, OutputTokens: 5, CacheReadInputTokens: 3}, Partial: true},
		}
		if err := db.AppendMessages(ctx, u.ID, s.ID, msgs); err != nil {
			t.Fatal(err)
		}
		now := clock.Now().UTC().Truncate(time.Microsecond)
		for i, m := range msgs {
			if !coachd.ValidID(coachd.PrefixMessage, m.ID) || m.SessionID != s.ID || m.Seq != int64(i+1) || !m.CreatedAt.Equal(now) {
				t.Fatalf("msgs[%d] = %+v", i, m)
			}
		}
		if msgs[1].Content != "Hi there" {
			t.Fatalf("derived content = %q, want %q", msgs[1].Content, "Hi there")
		}
		got, next, err := db.ListMessages(ctx, u.ID, s.ID, coachd.Page{})
		if err != nil || next != "" || len(got) != 2 {
			t.Fatalf("ListMessages = %d, %q, %v", len(got), next, err)
		}
		// A row stored without blocks reads back as one text block.
		wantFirst := *msgs[0]
		wantFirst.Blocks = []coachd.Block{coachd.TextBlock("hello")}
		if !sameJSON(t, got[0], &wantFirst) || got[0].Metadata != nil || got[0].Usage != nil || got[0].Partial {
			t.Fatalf("got[0] = %+v, want %+v", got[0], wantFirst)
		}
		if !sameJSON(t, got[1], msgs[1]) || !got[1].Partial || *got[1].Usage != *msgs[1].Usage {
			t.Fatalf("got[1] = %+v, want %+v", got[1], msgs[1])
		}
		sess, _ := db.FindSession(ctx, u.ID, s.ID)
		if sess.MessageCount != 2 || !sess.UpdatedAt.Equal(now) {
			t.Fatalf("session after append = %+v", sess)
		}
		if err := db.AppendMessages(ctx, u.ID, s.ID, nil); err != nil {
			t.Fatalf("empty append: %v", err)
		}
	})
	t.Run("CallerChosenID", func(t *testing.T) {
		clock := newClock()
		db := MustOpen(t, newDSN(t), clock)
		u := MustCreateUser(t, db, "a")
		s := MustCreateSession(t, db, u.ID)
		id := coachd.NewID(coachd.PrefixMessage, clock.Now())
		m := &coachd.Message{ID: id, Role: coachd.RoleAssistant, Content: "x"}
		if err := db.AppendMessages(ctx, u.ID, s.ID, []*coachd.Message{m, {Role: coachd.RoleUser, Content: "y"}}); err != nil {
			t.Fatal(err)
		}
		hist, _ := db.History(ctx, u.ID, s.ID)
		if m.ID != id || len(hist) != 2 || hist[0].ID != id || hist[1].ID == "" || hist[1].ID == id {
			t.Fatalf("IDs = %q; stored %+v", m.ID, hist)
		}
		err := db.AppendMessages(ctx, u.ID, s.ID, []*coachd.Message{{ID: id, Role: coachd.RoleUser, Content: "dup"}})
		wantCode(t, err, coachd.ECONFLICT)
		err = db.AppendMessages(ctx, u.ID, s.ID, []*coachd.Message{{ID: "msg_nope", Role: coachd.RoleUser, Content: "bad"}})
		wantCode(t, err, coachd.EINVALID)
		if hist, _ := db.History(ctx, u.ID, s.ID); len(hist) != 2 {
			t.Fatalf("%d messages after rejected appends, want 2", len(hist))
		}
	})
	t.Run("Pagination", func(t *testing.T) {
		db := MustOpen(t, newDSN(t), newClock())
		u := MustCreateUser(t, db, "a")
		s := MustCreateSession(t, db, u.ID)
		for i := range 7 {
			if err := db.AppendMessages(ctx, u.ID, s.ID, []*coachd.Message{{Role: coachd.RoleUser, Content: fmt.Sprint(i)}}); err != nil {
				t.Fatal(err)
			}
		}
		var seqs []int64
		cursor, pages := "", 0
		for {
			page, next, err := db.ListMessages(ctx, u.ID, s.ID, coachd.Page{Cursor: cursor, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, m := range page {
				seqs = append(seqs, m.Seq)
			}
			if next == "" {
				break
			}
			cursor = next
		}
		if pages != 3 || fmt.Sprint(seqs) != "[1 2 3 4 5 6 7]" {
			t.Fatalf("pages = %d, seqs = %v", pages, seqs)
		}
		hist, err := db.History(ctx, u.ID, s.ID)
		if err != nil || len(hist) != 7 || hist[6].Content != "6" {
			t.Fatalf("History = %d messages, %v", len(hist), err)
		}
		for _, c := range []string{"abc", "0", "-1", "01", "1.5", " 1", "99999999999999999999"} {
			_, _, err := db.ListMessages(ctx, u.ID, s.ID, coachd.Page{Cursor: c})
			wantCode(t, err, coachd.EINVALID)
		}
	})
	// Before pages read back from the end: the last page first (Before
	// "end"), each with the cursor of the page before it, oldest first
	// within a page.
	t.Run("PagesBefore", func(t *testing.T) {
		db := MustOpen(t, newDSN(t), newClock())
		u := MustCreateUser(t, db, "a")
		other := MustCreateUser(t, db, "b")
		s := MustCreateSession(t, db, u.ID)
		for i := range 7 {
			if err := db.AppendMessages(ctx, u.ID, s.ID, []*coachd.Message{{Role: coachd.RoleUser, Content: fmt.Sprint(i)}}); err != nil {
				t.Fatal(err)
			}
		}
		var pages []string
		before := coachd.BeforeEnd
		for before != "" {
			page, prev, err := db.ListMessages(ctx, u.ID, s.ID, coachd.Page{Before: before, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			var seqs []int64
			for _, m := range page {
				seqs = append(seqs, m.Seq)
			}
			pages = append(pages, fmt.Sprintf("%v:%s", seqs, prev))
			before = prev
		}
		if got := fmt.Sprint(pages); got != "[[5 6 7]:5 [2 3 4]:2 [1]:]" {
			t.Fatalf("pages %s, want [[5 6 7]:5 [2 3 4]:2 [1]:]", got)
		}
		if page, prev, err := db.ListMessages(ctx, u.ID, s.ID, coachd.Page{Before: "1"}); err != nil || len(page) != 0 || prev != "" {
			t.Fatalf("before the first: %d messages, %q, %v", len(page), prev, err)
		}
		for _, c := range []string{"abc", "0", "-1", "01", " 1", "99999999999999999999"} {
			_, _, err := db.ListMessages(ctx, u.ID, s.ID, coachd.Page{Before: c})
			wantCode(t, err, coachd.EINVALID)
		}
		_, _, err := db.ListMessages(ctx, other.ID, s.ID, coachd.Page{Before: coachd.BeforeEnd})
		wantCode(t, err, coachd.ENOTFOUND)
		empty := MustCreateSession(t, db, u.ID)
		if page, prev, err := db.ListMessages(ctx, u.ID, empty.ID, coachd.Page{Before: coachd.BeforeEnd}); err != nil || len(page) != 0 || prev != "" {
			t.Fatalf("empty session: %d messages, %q, %v", len(page), prev, err)
		}
	})
	// A page of messages is bounded by bytes as well as by count: a user
	// message holds its attachments (up to 10 MiB, as base64), so a page
	// of 200 could be gigabytes read, held and encoded by one request.
	t.Run("PageBytes", func(t *testing.T) {
		db := MustOpen(t, newDSN(t), newClock())
		u := MustCreateUser(t, db, "a")
		s := MustCreateSession(t, db, u.ID)
		doc := coachd.AttachmentBlock(coachd.MediaText, "log.txt", bytes.Repeat([]byte("a"), coachd.MaxAttachmentBytes))
		const n = 24 // 72 MiB of attachments
		for range n {
			if err := db.AppendMessages(ctx, u.ID, s.ID, []*coachd.Message{{Role: coachd.RoleUser, Blocks: []coachd.Block{doc, coachd.TextBlock("today")}}}); err != nil {
				t.Fatal(err)
			}
		}
		var seqs []int64
		cursor, pages := "", 0
		for {
			page, next, err := db.ListMessages(ctx, u.ID, s.ID, coachd.Page{Cursor: cursor, Limit: coachd.MaxPageLimit})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if size := len(page) * coachd.MaxAttachmentBytes; size > 40<<20 {
				t.Fatalf("page %d holds %d messages, %d MiB of attachments", pages, len(page), size>>20)
			}
			for _, m := range page {
				seqs = append(seqs, m.Seq)
			}
			if next == "" {
				break
			}
			cursor = next
		}
		if len(seqs) != n || seqs[0] != 1 || seqs[n-1] != n || pages < 2 {
			t.Fatalf("%d pages, seqs %v: want all %d messages once, in order", pages, seqs, n)
		}
		// Read back from the end, the pages are bounded the same way.
		seqs, pages = nil, 0
		for before := coachd.BeforeEnd; before != ""; {
			page, prev, err := db.ListMessages(ctx, u.ID, s.ID, coachd.Page{Before: before, Limit: coachd.MaxPageLimit})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if size := len(page) * coachd.MaxAttachmentBytes; size > 40<<20 {
				t.Fatalf("page %d before the end holds %d messages, %d MiB of attachments", pages, len(page), size>>20)
			}
			for i := range page {
				seqs = append(seqs, page[len(page)-1-i].Seq)
			}
			before = prev
		}
		if len(seqs) != n || seqs[0] != n || seqs[n-1] != 1 || pages < 2 {
			t.Fatalf("%d pages before the end, seqs %v: want all %d messages once, newest first", pages, seqs, n)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		db := MustOpen(t, newDSN(t), newClock())
		u := MustCreateUser(t, db, "a")
		s := MustCreateSession(t, db, u.ID)
		const writers, appends = 32, 10
		var wg sync.WaitGroup
		var mu sync.Mutex
		var errs []error
		total := 0
		for w := range writers {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			batches := make([]int, appends)
			for i := range batches {
				batches[i] = 1 + r.IntN(3)
				total += batches[i]
			}
			wg.Go(func() {
				for _, n := range batches {
					msgs := make([]*coachd.Message, n)
					for i := range msgs {
						msgs[i] = &coachd.Message{Role: coachd.RoleUser, Content: fmt.Sprintf("w%d", w)}
					}
					if err := db.AppendMessages(ctx, u.ID, s.ID, msgs); err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
						return
					}
					// A batch gets contiguous seqs.
					for i := 1; i < n; i++ {
						if msgs[i].Seq != msgs[i-1].Seq+1 {
							mu.Lock()
							errs = append(errs, fmt.Errorf("batch seqs %d, %d", msgs[i-1].Seq, msgs[i].Seq))
							mu.Unlock()
						}
					}
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			t.Error(err)
		}
		if len(errs) > 0 {
			t.FailNow()
		}
		hist, err := db.History(ctx, u.ID, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(hist) != total {
			t.Fatalf("%d messages stored, want %d", len(hist), total)
		}
		for i, m := range hist {
			if m.Seq != int64(i+1) {
				t.Fatalf("hist[%d].Seq = %d: seqs not contiguous from 1", i, m.Seq)
			}
		}
		sess, _ := db.FindSession(ctx, u.ID, s.ID)
		if sess.MessageCount != int64(total) {
			t.Fatalf("message_count = %d, want %d", sess.MessageCount, total)
		}
	})
	t.Run("ConcurrentHandles", func(t *testing.T) {
		// Three handles on one database stand for three processes: on
		// SQLite they do not share the in-process writer, so this checks
		// BEGIN IMMEDIATE and the busy timeout. CreateNote reads (the user,
		// the session) before it writes: the pattern that fails with
		// SQLITE_BUSY when a deferred transaction has to upgrade its lock.
		dsn := newDSN(t)
		db := MustOpen(t, dsn, newClock())
		u := MustCreateUser(t, db, "a")
		s := MustCreateSession(t, db, u.ID)
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for range 3 {
			h := MustOpen(t, dsn, newClock())
			for range 6 {
				wg.Go(func() {
					for range 8 {
						if err := h.AppendMessages(ctx, u.ID, s.ID, []*coachd.Message{{Role: coachd.RoleUser, Content: "x"}, {Role: coachd.RoleAssistant, Content: "y"}}); err != nil {
							errs <- err
							return
						}
						if err := h.CreateNote(ctx, &coachd.Note{UserID: u.ID, SessionID: s.ID, Type: "tip", Title: "t", Content: "c"}); err != nil {
							errs <- err
							return
						}
					}
				})
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		hist, err := db.History(ctx, u.ID, s.ID)
		if err != nil || len(hist) != 3*6*8*2 {
			t.Fatalf("History = %d messages, %v; want %d", len(hist), err, 3*6*8*2)
		}
		for i, m := range hist {
			if m.Seq != int64(i+1) {
				t.Fatalf("hist[%d].Seq = %d", i, m.Seq)
			}
		}
		if st, _ := db.NoteStats(ctx, u.ID); st.Total != 3*6*8 {
			t.Fatalf("notes = %d, want %d", st.Total, 3*6*8)
		}
	})
	t.Run("BlocksRoundTrip", func(t *testing.T) {
		db := MustOpen(t, newDSN(t), newClock())
		u := MustCreateUser(t, db, "a")
		s := MustCreateSession(t, db, u.ID)
		raw := `[
			{"type":"text","text":"See [1].","citations":[{"type":"web_search_result_location","url":"https://x.test","title":"X","cited_text":"x","encrypted_index":"abc"}],"cache_control":{"type":"ephemeral"}},
			{"type":"thinking","thinking":"let me think","signature":"EqQBCkYIARgCIkB"},
			{"type":"redacted_thinking","data":"EmwKAhgBEgy3va"},
			{"type":"tool_use","id":"toolu_01","name":"search_notes","input":{"query":"tips","limit":3}},
			{"type":"server_tool_use","id":"x","name":"web_search","input":{"q":"a"},"future":{"a":1}},
			{"type":"web_search_tool_result","tool_use_id":"x","content":[{"type":"web_search_result","url":"https://x.test","page_age":null}]},
			{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
			{"type":"document","source":{"type":"url","url":"https://x.test/a.pdf"},"title":"A","context":"c","citations":{"enabled":true}}
		]`
		resultRaw := `[
			{"type":"tool_result","tool_use_id":"toolu_01","content":[{"type":"text","text":"found 2"},{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/"}}],"is_error":true},
			{"type":"tool_result","tool_use_id":"toolu_02","content":"plain string"},
			{"type":"brand_new_block","anything":{"nested":[1,2,{"deep":true}]},"n":1.5e3}
		]`
		var assistantBlocks, userBlocks []coachd.Block
		if err := json.Unmarshal([]byte(raw), &assistantBlocks); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(resultRaw), &userBlocks); err != nil {
			t.Fatal(err)
		}
		err := db.AppendMessages(ctx, u.ID, s.ID, []*coachd.Message{
			{Role: coachd.RoleAssistant, Blocks: assistantBlocks},
			{Role: coachd.RoleUser, Blocks: userBlocks},
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.History(ctx, u.ID, s.ID)
		if err != nil || len(got) != 2 {
			t.Fatalf("History = %d, %v", len(got), err)
		}
		for i, want := range []string{raw, resultRaw} {
			if g, w := jsonValue(t, got[i].Blocks), jsonValue(t, json.RawMessage(want)); g != w {
				t.Errorf("message %d blocks:\n got %s\nwant %s", i, g, w)
			}
		}
		if got[0].Content != "See [1]." || got[1].Content != "" {
			t.Errorf("contents = %q, %q", got[0].Content, got[1].Content)
		}
		if !got[1].Blocks[0].IsError || got[1].Blocks[0].ResultText() != "found 2" {
			t.Errorf("tool_result = %+v", got[1].Blocks[0])
		}
	})
	t.Run("NullContentJSON", func(t *testing.T) {
		clock := newClock()
		db := MustOpen(t, newDSN(t), clock)
		u := MustCreateUser(t, db, "a")
		s := MustCreateSession(t, db, u.ID)
		err := rawExec(t, db, `INSERT INTO messages (id, session_id, seq, role, content, content_json, metadata, usage_json, partial, created_at)
			VALUES (?, ?, 1, 'assistant', 'legacy text', NULL, NULL, NULL, ?, ?)`,
			coachd.NewID(coachd.PrefixMessage, clock.Now()), s.ID, false, rawTime(db, clock.Now()))
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := db.ListMessages(ctx, u.ID, s.ID, coachd.Page{})
		if err != nil || len(got) != 1 {
			t.Fatalf("ListMessages = %d, %v", len(got), err)
		}
		want := `[{"type":"text","text":"legacy text"}]`
		if g := jsonValue(t, got[0].Blocks); g != jsonValue(t, json.RawMessage(want)) {
			t.Fatalf("blocks = %s, want %s", g, want)
		}
		if got[0].Metadata != nil || got[0].Usage != nil {
			t.Fatalf("metadata, usage = %s, %v; want nil", got[0].Metadata, got[0].Usage)
		}
	})
	t.Run("AtomicBatch", func(t *testing.T) {
		db := MustOpen(t, newDSN(t), newClock())
		u := MustCreateUser(t, db, "a")
		s := MustCreateSession(t, db, u.ID)
		count := func() int64 { return rawCount(t, db, `SELECT COUNT(*) FROM messages WHERE session_id = ?`, s.ID) }

		// Rejected before the database: an invalid role in the middle.
		err := db.AppendMessages(ctx, u.ID, s.ID, []*coachd.Message{
			{Role: coachd.RoleUser, Content: "a"}, {Role: "system", Content: "b"}, {Role: coachd.RoleUser, Content: "c"},
		})
		wantCode(t, err, coachd.EINVALID)
		if n := count(); n != 0 {
			t.Fatalf("%d messages written by a rejected batch", n)
		}
		// Failing in the database: seq 2 is already taken by a stray row,
		// so the batch's second insert fails after its first succeeded.
		if err := rawExec(t, db, `INSERT INTO messages (id, session_id, seq, role, content, partial, created_at) VALUES (?, ?, 2, 'user', 'stray', ?, ?)`,
			coachd.NewID(coachd.PrefixMessage, time.Now()), s.ID, false, rawTime(db, time.Now())); err != nil {
			t.Fatal(err)
		}
		msgs := []*coachd.Message{{Role: coachd.RoleUser, Content: "a"}, {Role: coachd.RoleAssistant, Content: "b"}}
		err = db.AppendMessages(ctx, u.ID, s.ID, msgs)
		wantCode(t, err, coachd.ECONFLICT)
		if n := count(); n != 1 {
			t.Fatalf("%d messages after a failed batch, want only the stray one", n)
		}
		if msgs[0].ID != "" || msgs[0].Seq != 0 {
			t.Fatalf("failed batch assigned %+v", msgs[0])
		}
		sess, _ := db.FindSession(ctx, u.ID, s.ID)
		if sess.MessageCount != 0 {
			t.Fatalf("message_count = %d after failed batches, want 0", sess.MessageCount)
		}
		// Invalid metadata is rejected too.
		err = db.AppendMessages(ctx, u.ID, s.ID, []*coachd.Message{{Role: coachd.RoleUser, Metadata: json.RawMessage(`{`)}})
		wantCode(t, err, coachd.EINVALID)

		// A caller-chosen ID already taken: a conflict that says it was
		// the append (the messages, not the session, on Postgres where
		// they are in the session's statement), and nothing written.
		if err := rawExec(t, db, `DELETE FROM messages WHERE session_id = ?`, s.ID); err != nil {
			t.Fatal(err)
		}
		first := &coachd.Message{Role: coachd.RoleUser, Content: "a"}
		if err := db.AppendMessages(ctx, u.ID, s.ID, []*coachd.Message{first}); err != nil {
			t.Fatal(err)
		}
		err = db.AppendMessages(ctx, u.ID, s.ID, []*coachd.Message{{Role: coachd.RoleUser, Content: "b"}, {ID: first.ID, Role: coachd.RoleUser, Content: "c"}})
		wantCode(t, err, coachd.ECONFLICT)
		if !strings.Contains(err.Error(), "append") || !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("a taken ID: %v", err)
		}
		if n := count(); n != 1 {
			t.Fatalf("%d messages after a taken ID, want 1", n)
		}
	})
}
