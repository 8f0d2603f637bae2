package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeAPI runs the README's API examples — health, users, the
// caller, sessions, notes — as written, with bash and curl, against the
// real binary started as the README says; $USER_ID, $SESSION_ID and
// $NOTE_ID come from the outputs of the commands that create them.
func TestReadmeAPI(t *testing.T) {
	bash, err1 := exec.LookPath("bash")
	_, err2 := exec.LookPath("curl")
	if err1 != nil || err2 != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bash and curl are required on CI")
		}
		t.Skip("needs bash and curl")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(t, string(readme))
	if len(cmds) < 20 {
		t.Fatalf("found %d README commands", len(cmds))
	}
	t.Logf("%d README commands", len(cmds))
	p := MustStart(t, nil, "--db", filepath.Join(t.TempDir(), "c.db"), "--demo", "--admin-key", "my-admin-key")
	vars := map[string]string{"URL": p.url, "KEY": p.key, "ADMIN": "my-admin-key"}
	idOf := map[string]*regexp.Regexp{
		"USER_ID":    regexp.MustCompile(`-X POST \$URL/v1/users `),
		"SESSION_ID": regexp.MustCompile(`-X POST \$URL/v1/sessions `),
		"NOTE_ID":    regexp.MustCompile(`-X POST \$URL/v1/notes `),
	}
	for _, c := range cmds {
		env := os.Environ()
		for k, v := range vars {
			env = append(env, k+"="+v)
		}
		// The command as written, told to print its status after the body.
		script := strings.Replace(c, "curl ", "curl -sS -w '\\n%{http_code}' ", 1)
		cmd := exec.Command(bash, "-c", script)
		cmd.Env = env
		out, err := cmd.Output()
		body, status, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		if i := strings.LastIndex(string(out), "\n"); i >= 0 {
			body, status = string(out[:i]), strings.TrimSpace(string(out[i+1:]))
		}
		if err != nil || !strings.HasPrefix(status, "2") {
			t.Errorf("%s\n→ %v, HTTP %s: %.300s", c, err, status, body)
			continue
		}
		for name, re := range idOf {
			if re.MatchString(c) {
				var v struct{ ID string }
				if json.Unmarshal([]byte(body), &v) != nil || v.ID == "" {
					t.Fatalf("%s: no id in %s", c, body)
				}
				vars[name] = v.ID
			}
		}
	}
	for name := range idOf {
		if vars[name] == "" {
			t.Errorf("no README command created %s", name)
		}
	}
}

// readmeCommands returns the curl commands of the README's API section up
// to Chat, continuation lines joined, trailing comments dropped.
func readmeCommands(t *testing.T, readme string) []string {
	start, end := strings.Index(readme, "\n## API"), strings.Index(readme, "\n### Chat")
	if start < 0 || end < start {
		t.Fatal("README has no API section")
	}
	var cmds []string
	inBlock := false
	var cur strings.Builder
	for _, line := range strings.Split(readme[start:end], "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			inBlock = !inBlock
			continue
		case !inBlock:
			continue
		}
		line = dropComment(line)
		if cur.Len() == 0 && !strings.HasPrefix(line, "curl ") {
			continue
		}
		if cont, ok := strings.CutSuffix(strings.TrimRight(line, " "), "\\"); ok {
			cur.WriteString(cont + " ")
			continue
		}
		cur.WriteString(line)
		cmds = append(cmds, strings.TrimSpace(cur.String()))
		cur.Reset()
	}
	return cmds
}

// dropComment cuts a trailing "# …" that is outside quotes.
func dropComment(line string) string {
	var quote rune
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && i > 0 && line[i-1] == ' ':
			return strings.TrimRight(line[:i], " ")
		}
	}
	return line
}
