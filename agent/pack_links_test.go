package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/tools"
)

// writePackFiles writes name → text under dir.
func writePackFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// loadPackFiles loads, with the builtin tools, a pack of name → text
// written to a directory of its own.
func loadPackFiles(t *testing.T, files map[string]string) (*agent.Pack, error) {
	t.Helper()
	dir := t.TempDir()
	writePackFiles(t, dir, files)
	return agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

const (
	linkAgent = "---\nname: a\ndescription: d\nskills: [s]\ncontext:\n  sections: [data_schema]\n---\nhi\n"
	linkSkill = "---\nname: s\nsummary: one line\n---\n## Goal\nsecret skill text\n## When to Use\nx\n## Context Needed\nx\n" +
		"## Tools to Use\nx\n## Constraints\nx\n## Guidance\nx\n"
)

// A pack's files are read inside its directory: a link leading out of it
// (or an absolute one) is a problem naming the file, never read, however
// the link is placed (a file, a directory, schema.md). Links inside the
// pack are followed: a Kubernetes ConfigMap mount is a tree of relative
// links through ..data into a timestamped directory.
func TestSecurityPackLinks(t *testing.T) {
	t.Run("OK/ConfigMapLayout", func(t *testing.T) {
		dir := t.TempDir()
		writePackFiles(t, dir, map[string]string{
			"..2026_11_29_12_00_00.123/agents/a.md": linkAgent,
			"..2026_11_29_12_00_00.123/skills/s.md": linkSkill,
			"..2026_11_29_12_00_00.123/schema.md":   "the app's tables\n",
			"..2026_11_29_12_00_00.123/notes.yaml":  "types: [goal]\n",
		})
		mustSymlink(t, "..2026_11_29_12_00_00.123", filepath.Join(dir, "..data"))
		for _, name := range []string{"agents", "skills", "schema.md", "notes.yaml"} {
			mustSymlink(t, filepath.Join("..data", name), filepath.Join(dir, name))
		}
		p, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
		if err != nil {
			t.Fatal(err)
		}
		a, ok := p.Agent("a")
		if !ok || len(a.Skills) != 1 || !strings.Contains(a.Skills[0].Text(), "secret skill text") {
			t.Fatalf("agent a: %v %+v", ok, a)
		}
		if got, want := p.DataSchema, "the app's tables\n"; got != want {
			t.Errorf("schema %q, want %q", got, want)
		}
		if got, want := p.Notes.Types, []string{"goal"}; len(got) != 1 || got[0] != want[0] {
			t.Errorf("note types %v, want %v", got, want)
		}
	})
	t.Run("OK/RelativeLinkInside", func(t *testing.T) {
		dir := t.TempDir()
		writePackFiles(t, dir, map[string]string{"agents/a.md": linkAgent, "common/s.md": linkSkill})
		os.MkdirAll(filepath.Join(dir, "skills"), 0o755)
		mustSymlink(t, "../common/s.md", filepath.Join(dir, "skills", "s.md"))
		if _, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()}); err != nil {
			t.Fatal(err)
		}
	})

	outside := t.TempDir()
	writePackFiles(t, outside, map[string]string{
		"s.md": linkSkill, "agents/a.md": linkAgent, "schema.md": "OUTSIDE SECRET\n",
		"notes.yaml": "types: [goal]\n", "hook.yaml": "name: hook\n",
	})
	for _, tc := range []struct {
		name   string
		files  map[string]string
		link   string // in the pack
		target func(dir string) string
	}{
		{"ErrSkillLinkOut", map[string]string{"agents/a.md": linkAgent, "skills/.keep": ""}, "skills/s.md",
			func(string) string { return filepath.Join(outside, "s.md") }},
		{"ErrSkillRelativeLinkOut", map[string]string{"agents/a.md": linkAgent, "skills/.keep": ""}, "skills/s.md",
			func(dir string) string {
				r, _ := filepath.Rel(filepath.Join(dir, "skills"), filepath.Join(outside, "s.md"))
				return r
			}},
		{"ErrAgentsDirLinkOut", map[string]string{"skills/s.md": linkSkill}, "agents",
			func(string) string { return filepath.Join(outside, "agents") }},
		{"ErrSchemaLinkOut", map[string]string{"agents/a.md": linkAgent, "skills/s.md": linkSkill}, "schema.md",
			func(string) string { return filepath.Join(outside, "schema.md") }},
		{"ErrNotesLinkOut", map[string]string{"agents/a.md": linkAgent, "skills/s.md": linkSkill}, "notes.yaml",
			func(string) string { return filepath.Join(outside, "notes.yaml") }},
		{"ErrToolLinkOut", map[string]string{"agents/a.md": linkAgent, "skills/s.md": linkSkill, "tools/.keep": ""}, "tools/hook.yaml",
			func(string) string { return filepath.Join(outside, "hook.yaml") }},
		{"ErrAbsoluteLinkInside", map[string]string{"agents/a.md": linkAgent, "common/s.md": linkSkill, "skills/.keep": ""}, "skills/s.md",
			func(dir string) string { return filepath.Join(dir, "common", "s.md") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writePackFiles(t, dir, tc.files)
			mustSymlink(t, tc.target(dir), filepath.Join(dir, tc.link))
			var loaded []string
			p, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins(),
				LoadTool: func(path string, data []byte) (coachd.Tool, error) {
					loaded = append(loaded, path)
					return nil, errors.New("read")
				}})
			var pe *agent.PackError
			if !errors.As(err, &pe) {
				t.Fatalf("loaded (%v): %+v", err, p)
			}
			if len(loaded) > 0 {
				t.Errorf("the tool loader was given %v", loaded)
			}
			found := false
			for _, pr := range pe.Problems {
				if pr.File == tc.link && strings.Contains(pr.Message, "leads out of the pack") {
					found = true
				}
			}
			if !found {
				t.Errorf("no problem naming %s as leading out of the pack: %v", tc.link, err)
			}
			if strings.Contains(err.Error(), "OUTSIDE") {
				t.Errorf("the outside file's text is in the error: %v", err)
			}
		})
	}
}
