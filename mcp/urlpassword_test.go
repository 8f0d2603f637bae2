package mcp

import (
	"os"
	"strings"
	"testing"
)

// TestSecurityURLPasswordNotShown: a stdio server is often given its
// database as a URL (the Postgres MCP server takes it as an argument;
// others read DATABASE_URL), its password in it. Neither name says
// "credential", so a server that prints its settings on stderr put the
// password in coachd's log. A URL's password in an env value or an
// argument is hidden, however the variable or flag is named; the rest
// of the URL still shows.
func TestSecurityURLPasswordNotShown(t *testing.T) {
	const envPW, argPW, flagPW = "crm_env_pw_9f8e7d6c", "crm_arg_pw_5a4b3c2d", "crm_flag_pw_1e2f3a4b"
	dir := t.TempDir()
	vars := map[string]string{
		"CRM_DATABASE_URL": "postgres://crm:" + envPW + "@db.example:5432/crm",
		"CRM_DB":           "postgresql://crm:" + argPW + "@db.example/crm?sslmode=require",
	}
	src := "name: fake\ncommand: " + os.Args[0] + "\n" +
		"args: [\"${CRM_DB}\", \"--replica=postgres://ro:" + flagPW + "@replica.example/crm\"]\n" +
		"env:\n  COACHD_MCP_FAKE: stdio\n  COACHD_MCP_FAKE_CHATTY: \"1\"\n  MCP_FAKE_DIR: ${CRM_DATABASE_URL}\n"
	s, logs := chattyServer(t, src, vars, dir)
	mustTool(t, s, "fake__echo")
	if err := s.Close(); err != nil { // its stderr is all logged once it has exited
		t.Fatal(err)
	}
	got := logs.String()
	if !strings.Contains(got, "@db.example:5432/crm") || !strings.Contains(got, "@replica.example/crm") {
		t.Fatalf("the server's stderr was not logged, or lost its hosts:\n%s", got)
	}
	for _, pw := range []string{envPW, argPW, flagPW} {
		if strings.Contains(got, pw) {
			t.Errorf("the log shows the password %s:\n%s", pw, got)
		}
	}
}
