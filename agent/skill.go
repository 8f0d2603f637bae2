package agent

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/coachd/coachd"
	"gopkg.in/yaml.v3"
)

// SkillSections are the body sections every skill file must have.
var SkillSections = []string{"Goal", "When to Use", "Context Needed", "Tools to Use", "Constraints", "Guidance"}

// MaxSkillBytes bounds a skill's body: it is sent in the prompt of every
// turn its rule holds. Far above a real one (sage's are about 1 KB).
const MaxSkillBytes = 32 << 10

// MaxActiveSkillBytes bounds the skills a turn's rules add to its prompt,
// together: room for two of the largest. Past it, the skills that hold
// are named for load_skill instead (systemPrompt).
const MaxActiveSkillBytes = 64 << 10

// Skill is a goal-oriented piece of coaching guidance. Its one-line Summary
// is always in the prompt; its Body is added when one of its When rules
// matches the context, or when the model calls load_skill.
type Skill struct {
	Name    string
	Summary string
	When    []Rule
	Body    string
	Source  string
	// lines are the file lines of each rule's conditions, by key.
	lines []map[string]int
}

// Text is the skill as the model reads it.
func (s *Skill) Text() string {
	return "<skill name=\"" + s.Name + "\">\n" + strings.TrimSpace(s.Body) + "\n</skill>"
}

// Rule loads a skill when all of its conditions hold; a skill loads when
// any of its rules does. List conditions hold when any listed value does,
// except missing_file and has_file, which need every listed type.
type Rule struct {
	Mode        strList `yaml:"mode" json:"mode,omitempty"`                   // the session mode (entered arc) is one of these
	TimeOfDay   strList `yaml:"time_of_day" json:"time_of_day,omitempty"`     // morning, afternoon, evening, night in the user's zone
	MissingFile strList `yaml:"missing_file" json:"missing_file,omitempty"`   // the user has no file of these types
	HasFile     strList `yaml:"has_file" json:"has_file,omitempty"`           // the user has files of these types
	FileToday   strList `yaml:"file_today" json:"file_today,omitempty"`       // a file of one of these types was written today
	NoFileToday strList `yaml:"no_file_today" json:"no_file_today,omitempty"` // no file of these types was written today
	CheckinDue  *bool   `yaml:"checkin_due" json:"checkin_due,omitempty"`     // the pack's check-in is due (or not)
	FileStatus  strList `yaml:"file_status" json:"file_status,omitempty"`     // a file's status attribute is one of these
	StatusType  string  `yaml:"status_file_type" json:"status_file_type,omitempty"`
}

// TimeBrackets name the parts of the day rules and the header use.
var TimeBrackets = []string{"morning", "afternoon", "evening", "night"}

// Bracket is the part of the day of t: morning 5-12, afternoon 12-17,
// evening 17-22, night otherwise.
func Bracket(t time.Time) string {
	switch h := t.Hour(); {
	case h >= 5 && h < 12:
		return "morning"
	case h >= 12 && h < 17:
		return "afternoon"
	case h >= 17 && h < 22:
		return "evening"
	}
	return "night"
}

// dayNumber numbers t's calendar day in its own zone (days since
// 1970-01-01). A check-in's age is counted in such days, as
// complete_session dates the next one: a Sunday evening's check-in is 7
// days old next Sunday morning.
func dayNumber(t time.Time) int {
	y, m, d := t.Date()
	return int(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// Facts are what rules are evaluated against: one snapshot per turn, taken
// by the context pipeline.
type Facts struct {
	Mode       string
	Now        time.Time // in the user's zone
	Files      []*coachd.File
	CheckinDue bool
}

// Match reports whether every condition of r holds.
func (r Rule) Match(f *Facts) bool {
	has := func(typ string, today bool) bool {
		for _, file := range f.Files {
			// A capture folded into a daily log is no longer one waiting.
			if file.Type == typ && !file.Attributes.Folded && (!today || sameDay(file.UpdatedAt.In(f.Now.Location()), f.Now)) {
				return true
			}
		}
		return false
	}
	anyOf := func(list strList, today bool) bool {
		return slices.ContainsFunc(list, func(t string) bool { return has(t, today) })
	}
	switch {
	case len(r.Mode) > 0 && !slices.Contains(r.Mode, f.Mode),
		len(r.TimeOfDay) > 0 && !slices.Contains(r.TimeOfDay, Bracket(f.Now)),
		anyOf(r.MissingFile, false),
		slices.ContainsFunc(r.HasFile, func(t string) bool { return !has(t, false) }),
		len(r.FileToday) > 0 && !anyOf(r.FileToday, true),
		anyOf(r.NoFileToday, true),
		r.CheckinDue != nil && *r.CheckinDue != f.CheckinDue:
		return false
	}
	if len(r.FileStatus) > 0 {
		return slices.ContainsFunc(f.Files, func(file *coachd.File) bool {
			return !file.Attributes.Folded && (r.StatusType == "" || file.Type == r.StatusType) && slices.Contains(r.FileStatus, file.Attributes.Status)
		})
	}
	return true
}

func sameDay(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd
}

// Matches reports whether any of the skill's rules holds.
func (s *Skill) Matches(f *Facts) bool {
	return slices.ContainsFunc(s.When, func(r Rule) bool { return r.Match(f) })
}

// activeSkills are the texts of the skills whose rules hold, in the order
// the agent lists them, within MaxActiveSkillBytes together; the skills
// past it are named for the model to load_skill.
func activeSkills(skills []*Skill, f *Facts) []string {
	var active, left []string
	used := 0
	for _, s := range skills {
		if !s.Matches(f) {
			continue
		}
		if text := s.Text(); used+len(text) <= MaxActiveSkillBytes {
			active, used = append(active, text), used+len(text)
		} else {
			left = append(left, s.Name)
		}
	}
	if len(left) > 0 {
		active = append(active, "These skills also apply now but did not fit here: call load_skill for each you need: "+strings.Join(left, ", "))
	}
	return active
}

// strList is a YAML scalar or sequence of strings.
type strList []string

func (l *strList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*l = strList{n.Value}
		return nil
	}
	var s []string
	if err := n.Decode(&s); err != nil {
		return err
	}
	*l = s
	return nil
}

// skillFile is a skill's front matter.
type skillFile struct {
	Name    string `yaml:"name"`
	Summary string `yaml:"summary"`
	When    []Rule `yaml:"when"`
}

var (
	skillKeys = yamlKeys(skillFile{})
	ruleKeys  = yamlKeys(Rule{})
)

// parseSkill reads skills/<name>.md, adding problems to fm.
func parseSkill(fm *frontMatter, base string) *Skill {
	var f skillFile
	if !fm.decode(&f, skillKeys) {
		return nil
	}
	s := &Skill{Name: f.Name, Summary: strings.TrimSpace(f.Summary), When: f.When, Body: fm.body, Source: fm.file}
	fm.checkName(f.Name, base)
	switch {
	case s.Summary == "":
		fm.bad(fm.line("summary"), "summary is required: one line, always shown in the prompt")
	case strings.Contains(s.Summary, "\n") || len(s.Summary) > 200:
		fm.bad(fm.line("summary"), "summary must be one line of at most 200 characters")
	}
	if w := fm.node("when"); w != nil {
		for i, rn := range w.Content {
			lines := map[string]int{}
			for j := 0; j+1 < len(rn.Content); j += 2 {
				lines[rn.Content[j].Value] = rn.Content[j].Line + fm.off
			}
			s.lines = append(s.lines, lines)
			if rn.Kind != yaml.MappingNode || i >= len(f.When) {
				fm.bad(rn.Line+fm.off, "a when rule must be a mapping of conditions, like {mode: morning_checkin}")
				continue
			}
			fm.checkKeys(rn, ruleKeys)
			r := f.When[i]
			for _, v := range r.TimeOfDay {
				if !slices.Contains(TimeBrackets, v) {
					fm.bad(rn.Line+fm.off, fmt.Sprintf("time_of_day %q must be morning, afternoon, evening or night", v))
				}
			}
			for _, v := range r.FileStatus {
				if !slices.Contains(coachd.FileStatuses, v) {
					fm.bad(rn.Line+fm.off, fmt.Sprintf("file_status %q must be one of %s", v, strings.Join(coachd.FileStatuses, ", ")))
				}
			}
			if len(rn.Content) == 0 {
				fm.bad(rn.Line+fm.off, "a when rule needs at least one condition")
			}
			// A condition without a value would be no condition: the rule
			// would hold always and load the skill into every turn.
			for j := 0; j+1 < len(rn.Content); j += 2 {
				if v := rn.Content[j+1]; v.ShortTag() == "!!null" || v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
					fm.bad(v.Line+fm.off, fmt.Sprintf("%s needs a value", rn.Content[j].Value))
				}
			}
			if r.StatusType != "" && len(r.FileStatus) == 0 {
				fm.bad(rn.Line+fm.off, "status_file_type narrows file_status: add file_status")
			}
		}
	}
	if len(fm.body) > MaxSkillBytes {
		fm.bad(fm.bodyLine, fmt.Sprintf("the skill is %d KiB, more than %d KiB: it is sent in the prompt of every turn it applies to", len(fm.body)>>10, MaxSkillBytes>>10))
	}
	for _, sec := range SkillSections {
		if !hasSection(fm.body, sec) {
			fm.bad(fm.bodyLine, fmt.Sprintf("missing section \"## %s\"", sec))
		}
	}
	return s
}

// checkRuleFileTypes reports the skill rules that name a file type no
// agent of the pack may write (nor a tool writes): no such file can
// exist, so missing_file and no_file_today would hold on every turn and
// load the skill into each, and the other conditions never. A check-in
// of such a type would be due on every turn.
func checkRuleFileTypes(p *Pack, problem func(file string, line int, msg string)) {
	known := append(p.FileTypes(), coachd.PulseBaselineType)
	for _, a := range p.Agents {
		if a.checkinLine > 0 && !slices.Contains(known, a.Context.Checkin.FileType) {
			problem(a.Source, a.checkinLine, fmt.Sprintf("checkin file_type %q: no agent of the pack may write that file type (permissions: %s)",
				a.Context.Checkin.FileType, strings.Join(known, ", ")))
		}
		for _, r := range a.contextTypes {
			if !slices.Contains(known, r.typ) {
				problem(a.Source, r.line, fmt.Sprintf("%s %q: no agent of the pack may write that file type (permissions: %s)",
					r.key, r.typ, strings.Join(known, ", ")))
			}
		}
	}
	for _, s := range p.Skills {
		for i, r := range s.When {
			if i >= len(s.lines) {
				break
			}
			for _, c := range []struct {
				key  string
				list []string
			}{{"missing_file", r.MissingFile}, {"has_file", r.HasFile}, {"file_today", r.FileToday},
				{"no_file_today", r.NoFileToday}, {"status_file_type", []string{r.StatusType}}} {
				key := c.key
				for _, t := range c.list {
					if t != "" && !slices.Contains(known, t) {
						problem(s.Source, s.lines[i][key], fmt.Sprintf("%s %q: no agent of the pack may write that file type (permissions: %s)",
							key, t, strings.Join(known, ", ")))
					}
				}
			}
		}
	}
}

func hasSection(body, title string) bool {
	for _, line := range strings.Split(body, "\n") {
		if heading, ok := strings.CutPrefix(strings.TrimSpace(line), "## "); ok && strings.EqualFold(strings.TrimSpace(heading), title) {
			return true
		}
	}
	return false
}
