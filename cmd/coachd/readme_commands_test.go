package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeCommands holds the README's command synopsis (the first block
// of "## Running") to the binary: every command coachd's usage lists has a
// line there, and every --flag a line writes is one its command takes
// (as "coachd CMD -h" prints them).
func TestReadmeCommands(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "\n## Running\n")
	_, block, ok2 := strings.Cut(rest, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README has no command synopsis under ## Running")
	}
	lines := map[string][]string{} // command (users create: "users create") → its synopsis lines
	for _, line := range strings.Split(block, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "coachd" {
			continue
		}
		lines[f[1]] = append(lines[f[1]], line)
	}
	_, cmds, _ := strings.Cut(usage, "Commands:\n")
	cmds, _, _ = strings.Cut(cmds, "\n\n")
	flagRe, helpFlagRe := regexp.MustCompile(`--([a-z][a-z-]*)`), regexp.MustCompile(`(?m)^\s+-([a-z][a-z-]*)`)
	for _, c := range strings.Split(cmds, "\n") {
		name := strings.Fields(c)[0]
		if len(lines[name]) == 0 {
			t.Errorf("coachd %s is not in the README's synopsis", name)
		}
		for _, line := range lines[name] {
			args := []string{"coachd", name}
			if name == "users" || name == "pack" {
				args = append(args, strings.Fields(line)[2])
			}
			out, errOut := &syncBuffer{}, &syncBuffer{}
			run(context.Background(), append(args, "-h"), getenvFrom(nil), out, errOut)
			help := out.String() + errOut.String()
			known := map[string]bool{}
			for _, m := range helpFlagRe.FindAllStringSubmatch(help, -1) {
				known[m[1]] = true
			}
			synopsis, _, _ := strings.Cut(line, "#") // the comment may name another command's flag
			for _, m := range flagRe.FindAllStringSubmatch(synopsis, -1) {
				if !known[m[1]] {
					t.Errorf("README: %q: %s takes no --%s", strings.TrimSpace(line), strings.Join(args[1:], " "), m[1])
				}
			}
		}
	}
}

// TestReadmeServeEnv: the README says every flag of serve has an
// environment fallback named after it (COACHD_ADDR for --addr); a flag
// whose variable is named otherwise (-h says which) is named in the
// README, or a user setting COACHD_<FLAG> gets a warning, not the setting.
func TestReadmeServeEnv(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	out, errOut := &syncBuffer{}, &syncBuffer{}
	run(context.Background(), []string{"coachd", "serve", "-h"}, getenvFrom(nil), out, errOut)
	re := regexp.MustCompile(`(?m)^\s+-([a-z][a-z-]*)\b[^\n]*\n[^\n]*\(env ([A-Z_]+)`)
	n := 0
	for _, m := range re.FindAllStringSubmatch(out.String(), -1) {
		n++
		flag, env := m[1], m[2]
		if env != "COACHD_"+strings.ToUpper(strings.ReplaceAll(flag, "-", "_")) && !strings.Contains(string(readme), env) {
			t.Errorf("--%s reads %s, which the README does not name", flag, env)
		}
	}
	if n < 30 {
		t.Fatalf("found %d flags with a variable in serve -h:\n%s", n, out)
	}
}
