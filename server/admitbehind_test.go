package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/tools"
)

// failedCommitStore is the real store whose admissions fail: at once
// when now is set, else, for those left behind the first model request,
// in their commit (a disk that failed under the COMMIT; what the store
// then holds is sqlstore's TestAdmitTurnBehindFails).
type failedCommitStore struct {
	*sqlstore.DB
	mu     sync.Mutex
	now    bool
	behind int
}

var errDisk = coachd.Errorf(coachd.EINTERNAL, "commit: disk I/O error")

func (s *failedCommitStore) AdmitTurn(ctx context.Context, a coachd.TurnAdmission) (*coachd.Admission, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.now {
		return nil, errDisk
	}
	adm, err := s.DB.AdmitTurn(ctx, a)
	if err != nil || adm.Commit == nil {
		return adm, err
	}
	s.behind++
	commit := adm.Commit
	adm.Commit = func() error {
		_ = commit()
		return errDisk
	}
	return adm, nil
}

// A chat stream's admission commits behind its model request; when that
// commit fails, the client gets exactly what it gets when the admission
// fails before the request (the same status, headers and body, but for
// the request id), in every dialect: nothing of the turn.
func TestChatStreamAdmissionBehindFails(t *testing.T) {
	db := mustDB(t, filepath.Join(t.TempDir(), "coachd.db"), nil)
	fake := anthropictest.NewServer()
	t.Cleanup(fake.Close)
	fake.SetScript(func(*anthropictest.Request) anthropictest.Reply {
		return anthropictest.Text("should never be shown", 4)
	})
	ts, err := agent.NewToolset(tools.Builtins()...)
	if err != nil {
		t.Fatal(err)
	}
	store := &failedCommitStore{DB: db}
	runner := agent.NewRunner(agent.Config{
		Store: store, Tools: ts,
		Model: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: fake.URL(), MaxRetries: -1, Untraced: true}),
	})
	api := server.New(server.Deps{Store: store, Logger: slog.New(slog.DiscardHandler), AdminKey: adminKey, Runner: runner})
	srv := httptest.NewServer(api)
	t.Cleanup(func() { closeServer(api, srv) })
	budget := int64(1) << 30
	_, key, err := client.New(srv.URL, adminKey, nil).CreateUser(context.Background(), "alice", &budget)
	if err != nil {
		t.Fatal(err)
	}
	reqID := regexp.MustCompile(`req_[0-9a-f]+`)
	send := func(protocol string, now bool) string {
		store.mu.Lock()
		store.now = now
		store.mu.Unlock()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/stream?protocol="+protocol, strings.NewReader(`{"message":"hi"}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return fmt.Sprintf("%d %s %s", res.StatusCode, res.Header.Get("Content-Type"), reqID.ReplaceAll(body, []byte("req_")))
	}
	for _, protocol := range []string{"coachd", "asp", "sage"} {
		before, behind := send(protocol, true), send(protocol, false)
		if behind != before {
			t.Fatalf("%s: a commit failed behind the request answers\n%s\nwhere one failed before it answers\n%s", protocol, behind, before)
		}
		if !strings.HasPrefix(behind, "500 ") {
			t.Fatalf("%s: %s, want a 500", protocol, behind)
		}
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if store.behind != 3 {
		t.Fatalf("%d admissions left behind their request, want 3", store.behind)
	}
}
