package mcp

import (
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/coachd/coachd/internal/syncbuf"
)

// TestSecurityEnvSecretNotShown: a stdio server's credential comes from
// its file's env (`CRM_TOKEN: ${CRM_TOKEN}`). A server that prints it
// (a debug line on stderr, which coachd logs; a result quoting it) put it
// in coachd's log and in what the model and the user read. A value whose
// variable is named like a credential (key, token, secret, password) is
// hidden; others, such as a directory, still show.
func TestSecurityEnvSecretNotShown(t *testing.T) {
	const token = "crm_env_tok_4b3c2d1e"
	dir := t.TempDir()
	vars := map[string]string{"CRM_TOKEN": token, "CRM_DIR": dir}
	src := "name: fake\ncommand: " + os.Args[0] + "\nenv:\n  COACHD_MCP_FAKE: stdio\n  COACHD_MCP_FAKE_CHATTY: \"1\"\n" +
		"  MCP_FAKE_TOKEN: ${CRM_TOKEN}\n  MCP_FAKE_DIR: ${CRM_DIR}\n"
	s, logs := chattyServer(t, src, vars, dir)
	res := call(t, mustTool(t, s, "fake__env"), `{}`)
	if err := s.Close(); err != nil { // its stderr is all logged once it has exited
		t.Fatal(err)
	}
	if strings.Contains(res.Content, token) || !strings.Contains(res.Content, "token=[redacted]") {
		t.Errorf("the result shows the token, or not the rest: %q", res.Content)
	}
	if !strings.Contains(logs.String(), "in "+dir+", args") {
		t.Fatalf("the server's stderr was not logged:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), token) {
		t.Errorf("the log shows the token:\n%s", logs.String())
	}
}

// TestSecurityArgSecretNotShown: a stdio server often takes its key as an
// argument (`args: [--api-key, "${CRM_API_KEY}"]`); one that prints its
// command line on stderr put the key in coachd's log. A ${NAME} named like
// a credential is hidden there too; other arguments still show.
func TestSecurityArgSecretNotShown(t *testing.T) {
	const key = "crm_arg_key_7d6e5f4a"
	dir := t.TempDir()
	vars := map[string]string{"CRM_API_KEY": key, "CRM_DIR": dir}
	src := "name: fake\ncommand: " + os.Args[0] + "\nargs: [--api-key, \"${CRM_API_KEY}\", --root, \"${CRM_DIR}\"]\n" +
		"env:\n  COACHD_MCP_FAKE: stdio\n  COACHD_MCP_FAKE_CHATTY: \"1\"\n"
	s, logs := chattyServer(t, src, vars, dir)
	mustTool(t, s, "fake__echo")
	if err := s.Close(); err != nil { // its stderr is all logged once it has exited
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "--root "+dir+", log level debug") {
		t.Fatalf("the server's stderr was not logged:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), key) {
		t.Errorf("the log shows the key:\n%s", logs.String())
	}
}

// chattyServer is the stdio server of the pack file src, its ${NAME}s
// from vars, run in dir, and the log its stderr goes to.
func chattyServer(t *testing.T, src string, vars map[string]string, dir string) (*Server, *syncbuf.Buffer) {
	t.Helper()
	cfg, err := ParseConfig("mcp/fake.yaml", []byte(src), func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dir = dir
	logs := &syncbuf.Buffer{}
	return NewServer(cfg, Options{Logger: slog.New(slog.NewTextHandler(logs, nil)), StartWait: 20 * 1e9}), logs
}
