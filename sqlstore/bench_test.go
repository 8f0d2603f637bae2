package sqlstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

// round returns the two messages one agent round stores: the assistant's
// text and tool_use, then the user message carrying the tool_result.
func round(i int) []*coachd.Message {
	id := fmt.Sprintf("toolu_%06d", i)
	return []*coachd.Message{
		{Role: coachd.RoleAssistant, Blocks: []coachd.Block{
			coachd.TextBlock("Let me look at your recent notes before I answer that."),
			{Type: coachd.BlockToolUse, ID: id, Name: "search_notes", Input: json.RawMessage(`{"query":"airport timing","limit":5}`)},
		}, Metadata: json.RawMessage(`{"stop_reason":"tool_use","tool_calls":[{"name":"search_notes"}]}`),
			Usage: &coachd.Usage{InputTokens: 1200, OutputTokens: 80}},
		{Role: coachd.RoleUser, Blocks: []coachd.Block{
			coachd.ToolResultBlock(id, strings.Repeat("Airport queues are shortest before 6am. ", 8), false),
		}},
	}
}

func benchDB(b *testing.B, bk backend) (*sqlstore.DB, string, string) {
	db := MustOpen(b, bk.newDSN(b), coachd.SystemClock{})
	u := MustCreateUser(b, db, "bench")
	s := MustCreateSession(b, db, u.ID)
	return db, u.ID, s.ID
}

func BenchmarkAppendRound(b *testing.B) {
	ctx := context.Background()
	for _, bk := range backends {
		b.Run(bk.name, func(b *testing.B) {
			db, userID, sessionID := benchDB(b, bk)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if 2*(i+1) > coachd.MaxMessagesPerSession {
					// A full session takes no more: a new one (one in
					// 2,500 rounds).
					sessionID = MustCreateSession(b, db, userID).ID
					i = 0
				}
				if err := db.AppendMessages(ctx, userID, sessionID, round(i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

func BenchmarkLoadHistory(b *testing.B) {
	ctx := context.Background()
	for _, bk := range backends {
		for _, n := range []int{10, 1000} {
			db, userID, sessionID := benchDB(b, bk)
			for i := 0; i < n; i += 2 {
				if err := db.AppendMessages(ctx, userID, sessionID, round(i)); err != nil {
					b.Fatal(err)
				}
			}
			b.Run(fmt.Sprintf("%s/History/%d", bk.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					msgs, err := db.History(ctx, userID, sessionID)
					if err != nil || len(msgs) != n {
						b.Fatalf("History = %d, %v", len(msgs), err)
					}
				}
			})
			b.Run(fmt.Sprintf("%s/ListMessages/%d", bk.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					got, cursor := 0, ""
					for {
						msgs, next, err := db.ListMessages(ctx, userID, sessionID, coachd.Page{Cursor: cursor, Limit: coachd.MaxPageLimit})
						if err != nil {
							b.Fatal(err)
						}
						got += len(msgs)
						if next == "" {
							break
						}
						cursor = next
					}
					if got != n {
						b.Fatalf("listed %d, want %d", got, n)
					}
				}
			})
		}
	}
}

// BenchmarkCreateNote creates notes for a user who holds 900 to 999 live
// notes and 1,000 deleted ones (the caps: noteRoom counts the live ones on
// every create); every 99 creates, untimed, 99 of them are deleted again.
//
//	go test ./sqlstore -run '^$' -bench CreateNote -count 6
func BenchmarkCreateNote(b *testing.B) {
	ctx := context.Background()
	for _, bk := range backends {
		b.Run(bk.name, func(b *testing.B) {
			db, userID, _ := benchDB(b, bk)
			note := func(i int) *coachd.Note {
				return &coachd.Note{UserID: userID, Type: "preference", Title: fmt.Sprint("note ", i), Content: "Drives early on weekdays."}
			}
			for i := range coachd.MaxDeletedNotesPerUser + 900 {
				n := note(i)
				if err := db.CreateNote(ctx, n); err != nil {
					b.Fatal(err)
				}
				if i < coachd.MaxDeletedNotesPerUser {
					if err := db.DeleteNote(ctx, userID, n.ID); err != nil {
						b.Fatal(err)
					}
				}
			}
			var made []string
			b.ReportAllocs()
			for b.Loop() {
				if len(made) == 99 {
					b.StopTimer()
					for _, id := range made {
						if err := db.DeleteNote(ctx, userID, id); err != nil {
							b.Fatal(err)
						}
					}
					made = made[:0]
					b.StartTimer()
				}
				n := note(len(made))
				if err := db.CreateNote(ctx, n); err != nil {
					b.Fatal(err)
				}
				made = append(made, n.ID)
			}
		})
	}
}

// BenchmarkAppendEvents logs batches of 8 text deltas (a flush of the
// event log during a streamed reply) into one turn's log, reporting the
// WAL pages each batch writes on SQLite.
//
//	go test ./sqlstore -run '^$' -bench AppendEvents -count 6
func BenchmarkAppendEvents(b *testing.B) {
	ctx := context.Background()
	for _, bk := range backends {
		b.Run(bk.name, func(b *testing.B) {
			db, userID, sessionID := benchDB(b, bk)
			turn, err := db.BeginTurn(ctx, userID, sessionID, "proc", 20)
			if err != nil {
				b.Fatal(err)
			}
			evs := make([]coachd.Event, 8)
			seq := int64(0)
			b.ReportAllocs()
			before := db.WriteStats()
			for b.Loop() {
				for i := range evs {
					seq++
					evs[i] = coachd.Event{Type: coachd.EventTextDelta, Turn: turn, Seq: seq, Text: "a few words of the reply "}
				}
				if _, err := db.AppendEvents(ctx, userID, sessionID, turn, evs, false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(db.WriteStats().WALPages-before.WALPages)/float64(b.N), "walpages/op")
		})
	}
}
