// Package tools holds coachd's built-in tools, one file each. Every tool
// reads and writes only what belongs to the calling user.
package tools

import (
	"encoding/json"
	"time"

	"github.com/coachd/coachd"
)

// Policy is what a coach pack decides for the built-in tools, asked on
// every call with the session's agent and mode (read fresh from the store).
// agent.Pack implements it.
type Policy interface {
	// WritableTypes lists the file types save_file may write for agent in
	// mode ("" when no structured arc is entered).
	WritableTypes(agent, mode string) []string
	// Arcs lists the structured arcs agent may enter; empty allows any.
	Arcs(agent string) []string
	// SkillText returns the full text of a skill agent may use, or an
	// error naming the skills it has.
	SkillText(agent, name string) (string, error)
	// NoteVocabulary is the note types and categories of the pack.
	NoteVocabulary() coachd.NoteVocabulary
	// Checkin is agent's check-in cadence: a check-in is due every
	// everyDays days after the last file of fileType; everyDays 0 is none.
	Checkin(agent string) (fileType string, everyDays int)
}

// Builtins returns every built-in tool, unconfigured: save_file accepts
// DefaultFileTypes in every mode, enter_structured_arc any arc, and
// load_skill knows no skills.
func Builtins() []coachd.Tool {
	return ForPack(nil, nil)
}

// ForPack returns every built-in tool configured by a coach pack's policy;
// fileTypes are the types save_file accepts (nil: DefaultFileTypes).
func ForPack(p Policy, fileTypes []string) []coachd.Tool {
	v := &coachd.DefaultNoteVocabulary
	if p != nil {
		pv := p.NoteVocabulary()
		v = &pv
	}
	return []coachd.Tool{
		SaveNote{v}, ListNotes{v}, UpdateNote{v}, PinNote{},
		SaveFile{Types: fileTypes, Policy: p}, ReadFile{}, ListFiles{},
		CompleteSession{Policy: p}, EnterArc{Policy: p},
		ShowOptions{}, ShowPulseCheck{}, LoadSkill{Policy: p},
	}
}

// Schema enums built from the domain's own lists, so a value added there
// is accepted by the tools too.
var (
	fileStatusEnum = enumJSON(coachd.FileStatuses)
)

// vocab is v, or the default vocabulary.
func vocab(v *coachd.NoteVocabulary) *coachd.NoteVocabulary {
	if v == nil {
		return &coachd.DefaultNoteVocabulary
	}
	return v
}

// enumJSON is values as a JSON array, for a schema's "enum".
func enumJSON(values []string) string {
	b, _ := json.Marshal(values)
	return string(b)
}

// jsonResult renders v as a tool result.
func jsonResult(v any) (coachd.ToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return coachd.ToolResult{}, err
	}
	return coachd.ToolResult{Content: string(b)}, nil
}

// refuse is a result that tells the model why nothing was done.
func refuse(msg string) (coachd.ToolResult, error) {
	return coachd.ToolResult{Content: msg, IsError: true}, nil
}

// now is the time in the user's zone from the turn's clock (ToolEnv.Now),
// or the system's in UTC outside a turn.
func now(env coachd.ToolEnv) time.Time {
	if env.Now != nil {
		return env.Now()
	}
	return time.Now().UTC()
}
