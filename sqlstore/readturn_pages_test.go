package sqlstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

// TestReadTurnSkipsOldPhotoPages: on SQLite a row's columns lie one
// after another, and a column past a large one is read by walking that
// one's overflow pages. content_lite, metadata, usage_json, partial and
// created_at came after content_json: a turn's read of a session of 200
// photos, 180 of them older than any turn sends, still read every page of
// every photo to reach their content_lite. The columns a turn reads now
// come before content_json, so the old photos' pages are not read. The
// measure is the bytes the process reads from the database files
// (/proc/self/io rchar) during ReadTurn, on a freshly opened database.
func TestReadTurnSkipsOldPhotoPages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/io")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "coachd.db")
	db, err := sqlstore.Open(ctx, path, newClock())
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	u := MustCreateUser(t, db, "driver")
	s := MustCreateSession(t, db, u.ID)
	const days, size = 200, 100 << 10
	for i := range days {
		data := bytes.Repeat([]byte{byte(i)}, size)
		copy(data, "\x89PNG\r\n\x1a\n")
		if err := db.AppendMessages(ctx, u.ID, s.ID, []*coachd.Message{
			{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.AttachmentBlock(coachd.MediaPNG, "", data), coachd.TextBlock(fmt.Sprintf("day %d", i))}},
			{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("noted")}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = MustOpen(t, path, newClock())
	before := mustReadBytes(t)
	_, msgs, err := db.ReadTurn(ctx, u.ID, s.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	read := mustReadBytes(t) - before
	got := 0
	for _, m := range msgs {
		got += m.Bytes()
	}
	t.Logf("ReadTurn of %d days of photos: %d messages, %.1f MB of them; %.1f MB read from the database", days, len(msgs), float64(got)/1e6, float64(read)/1e6)
	if read > int64(got)+2<<20 {
		t.Fatalf("ReadTurn read %d bytes from the database for %d bytes of messages: the old photos' pages too", read, got)
	}
}

// mustReadBytes is how many bytes the process has read (rchar).
func mustReadBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no rchar in /proc/self/io")
	return 0
}

// A database at version 18 keeps its messages through
// 0019_messages_blocks_last (content_json moved last): the same rows read
// back whole, an old attachment read without its data, and new messages
// go on after them.
func TestMigrateMessagesBlocksLast(t *testing.T) {
	ctx := context.Background()
	path, raw, exec := sqliteBefore(t, "0019_")
	uid, sid := coachd.NewID(coachd.PrefixUser, time.Now()), coachd.NewID(coachd.PrefixSession, time.Now())
	exec(`INSERT INTO users (id, api_key_hash, created_at, updated_at) VALUES (?, 'h', 0, 0)`, uid)
	exec(`INSERT INTO sessions (id, user_id, message_count, next_seq, created_at, updated_at) VALUES (?, ?, 2, 3, 0, 0)`, sid, uid)
	photo := coachd.AttachmentBlock(coachd.MediaPNG, "", append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 5000)...))
	blocks, _ := json.Marshal([]coachd.Block{photo, coachd.TextBlock("day 1")})
	omitted, _ := coachd.OmitAttachmentData([]coachd.Block{photo, coachd.TextBlock("day 1")})
	lite, _ := json.Marshal(omitted)
	exec(`INSERT INTO messages (id, session_id, seq, role, content, content_json, metadata, usage_json, partial, created_at, content_lite)
		VALUES ('msg_1', ?, 1, 'user', 'day 1', ?, '{"k":1}', NULL, 0, 5, ?)`, sid, string(blocks), string(lite))
	exec(`INSERT INTO messages (id, session_id, seq, role, content, content_json, metadata, usage_json, partial, created_at, content_lite)
		VALUES ('msg_2', ?, 2, 'assistant', 'noted', '[{"type":"text","text":"noted"}]', NULL, '{"input_tokens":3}', 1, 6, NULL)`, sid)
	raw.Close()

	db := MustOpen(t, path, newClock())
	var schema string
	if err := db.SQL().QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE name = 'messages'`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if i := strings.Index(schema, "content_json"); i < 0 || strings.Contains(schema[i:], "content_lite") {
		t.Fatalf("schema after 0019:\n%s", schema)
	}
	msgs, err := db.History(ctx, uid, sid)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("History: %d messages, %v", len(msgs), err)
	}
	if m := msgs[0]; m.ID != "msg_1" || m.Content != "day 1" || !bytes.Equal(m.Blocks[0].Source, photo.Source) || string(m.Metadata) != `{"k":1}` {
		t.Fatalf("message 1 after 0019: %+v", m)
	}
	if m := msgs[1]; m.ID != "msg_2" || !m.Partial || m.Usage == nil || m.Usage.InputTokens != 3 || m.CreatedAt.UnixMicro() != 6 {
		t.Fatalf("message 2 after 0019: %+v", m)
	}
	for i := range coachd.MaxHistoryAttachments {
		if err := db.AppendMessages(ctx, uid, sid, []*coachd.Message{{Role: coachd.RoleUser, Blocks: []coachd.Block{photo, coachd.TextBlock(strconv.Itoa(i))}}}); err != nil {
			t.Fatal(err)
		}
	}
	_, turn, err := db.ReadTurn(ctx, uid, sid, 0)
	if err != nil || len(turn) != 2+coachd.MaxHistoryAttachments || turn[2].Seq != 3 {
		t.Fatalf("ReadTurn: %d messages, %v", len(turn), err)
	}
	if !coachd.AttachmentOmitted(turn[0].Blocks[0]) || coachd.AttachmentOmitted(turn[2].Blocks[0]) {
		t.Fatal("ReadTurn after 0019: the oldest photo should come without its data, the newer ones with it")
	}
}
