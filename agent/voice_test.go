package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
)

// voice: is read, and checked with file:line problems.
func TestAgentFileVoice(t *testing.T) {
	write := func(front string) (*agent.Pack, error) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\n"+front+"---\nYou coach drivers.\n"), 0o644)
		return agent.LoadPack(dir, agent.PackOptions{Builtins: seedBuiltins()})
	}
	t.Run("OK", func(t *testing.T) {
		p, err := write("voice:\n  voice: verse\n  model: gpt-realtime\n  transcription_model: whisper-1\n  instructions: Keep it short.\n")
		if err != nil {
			t.Fatal(err)
		}
		a := p.Agents[0]
		if a.Voice == nil || a.Voice.Voice != "verse" || a.Voice.Model != "gpt-realtime" || a.Voice.TranscriptionModel != "whisper-1" {
			t.Fatalf("voice %+v", a.Voice)
		}
		if got := a.VoiceInstructions(); got != "You coach drivers.\n\nKeep it short." {
			t.Fatalf("instructions %q", got)
		}
	})
	t.Run("None", func(t *testing.T) {
		p, err := write("")
		if err != nil {
			t.Fatal(err)
		}
		if a := p.Agents[0]; a.Voice != nil || a.VoiceInstructions() != "You coach drivers." {
			t.Fatalf("voice %+v %q", a.Voice, a.VoiceInstructions())
		}
	})
	for front, want := range map[string]string{
		"voice:\n  voice: robot\n":               "agents/a.md:5: voice.voice \"robot\" is not a known voice",
		"voice:\n  model: GPT Realtime\n":        "agents/a.md:5: voice.model",
		"voice:\n  transcription_model: 'a;b'\n": "agents/a.md:5: voice.transcription_model",
		"voice:\n  voice: alloy\n  speed: 2\n":   "agents/a.md:6: unknown key \"speed\"",
		"voice: alloy\n":                         "agents/a.md:4:",
		"voice:\n  instructions: " + strings.Repeat("x", agent.MaxVoiceInstructions+1) + "\n": "voice.instructions must be at most",
	} {
		if _, err := write(front); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.60q: %v, want %q", front, err, want)
		}
	}
}
