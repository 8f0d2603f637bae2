package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

// Context sections, in prompt order.
const (
	SectionHeader     = "header"
	SectionStanding   = "standing_files"
	SectionRecent     = "recent_files"
	SectionNotes      = "notes"
	SectionDataSchema = "data_schema"
)

// ContextSections lists every section name.
var ContextSections = []string{SectionHeader, SectionStanding, SectionRecent, SectionNotes, SectionDataSchema}

// DefaultBudgets are the section size limits in characters.
var DefaultBudgets = map[string]int{
	SectionHeader: 1000, SectionStanding: 12000, SectionRecent: 8000, SectionNotes: 4000, SectionDataSchema: 4000,
}

// ContextSpec is an agent's context: front matter `context:`.
type ContextSpec struct {
	Sections   []string       `yaml:"sections"`    // nil: all
	Standing   []string       `yaml:"standing"`    // file types always injected
	Recent     []string       `yaml:"recent"`      // file types injected when recent; nil: every other type
	RecentDays int            `yaml:"recent_days"` // default 7
	Budgets    map[string]int `yaml:"budgets"`     // characters per section
	Timezone   string         `yaml:"timezone"`    // default UTC; a file attribute timezone overrides
	Checkin    *CheckinSpec   `yaml:"checkin"`     // the pack's check-in cadence, if any
	DataSchema string         `yaml:"-"`           // the pack's schema.md
}

// CheckinSpec says a check-in is due when no file of FileType was written
// in the last EveryDays days.
type CheckinSpec struct {
	FileType  string `yaml:"file_type"`
	EveryDays int    `yaml:"every_days"`
}

var contextKeys = yamlKeys(ContextSpec{})

func (c *ContextSpec) validate(fm *frontMatter) {
	if c == nil {
		return
	}
	fm.checkKeys(fm.node("context"), contextKeys)
	for i, s := range c.Sections {
		if !slices.Contains(ContextSections, s) {
			fm.bad(fm.itemLine(i, "context", "sections"), fmt.Sprintf("unknown context section %q (known: %s)", s, strings.Join(ContextSections, ", ")))
		}
	}
	for s, n := range c.Budgets {
		if !slices.Contains(ContextSections, s) || n < 100 || n > 200000 {
			fm.bad(fm.line("context", "budgets"), fmt.Sprintf("budgets.%s must name a section and be 100 to 200000 characters", s))
		}
	}
	if c.Timezone != "" {
		if _, err := time.LoadLocation(c.Timezone); err != nil {
			fm.bad(fm.line("context", "timezone"), fmt.Sprintf("unknown time zone %q", c.Timezone))
		}
	}
	if c.RecentDays < 0 || c.RecentDays > 365 {
		fm.bad(fm.line("context", "recent_days"), "recent_days must be between 1 and 365")
	}
	if ck := c.Checkin; ck != nil && (ck.FileType == "" || ck.EveryDays < 1) {
		fm.bad(fm.line("context", "checkin"), "checkin needs file_type and every_days of at least 1")
	}
}

func (c *ContextSpec) has(section string) bool {
	return c.Sections == nil || slices.Contains(c.Sections, section)
}

func (c *ContextSpec) budget(section string) int {
	if n, ok := c.Budgets[section]; ok {
		return n
	}
	return DefaultBudgets[section]
}

// contextData is one turn's snapshot of what the context is built from.
type contextData struct {
	user  *coachd.User
	sess  *coachd.Session
	last  *coachd.Session // the user's previous session, if any
	files []*coachd.File
	notes []*coachd.Note
	now   time.Time // in the user's zone
}

// gather reads everything the context needs in one parallel batch.
func gather(ctx context.Context, st coachd.Store, u *coachd.User, sess *coachd.Session, now time.Time, spec *ContextSpec) (*contextData, error) {
	d := &contextData{user: u, sess: sess}
	var wg sync.WaitGroup
	var errs [3]error
	wg.Go(func() {
		var list []*coachd.Session
		list, _, errs[0] = st.ListSessions(ctx, u.ID, coachd.Page{Limit: 5})
		for _, s := range list {
			if s.ID != sess.ID {
				d.last = s
				break
			}
		}
	})
	wg.Go(func() { d.files, errs[1] = st.ListFiles(ctx, u.ID, coachd.FileFilter{Limit: coachd.MaxPageLimit}) })
	wg.Go(func() {
		var notes []*coachd.Note
		notes, _, errs[2] = st.ListNotes(ctx, u.ID, coachd.NoteFilter{}, coachd.Page{Limit: 50})
		for _, n := range notes {
			if n.Pinned || n.Importance >= 70 {
				d.notes = append(d.notes, n)
			}
		}
	})
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	loc := time.UTC
	if spec != nil && spec.Timezone != "" {
		if l, err := time.LoadLocation(spec.Timezone); err == nil {
			loc = l
		}
	}
	for _, f := range d.files { // newest first: the latest zone wins
		if f.Attributes.Timezone != "" {
			if l, err := time.LoadLocation(f.Attributes.Timezone); err == nil {
				loc = l
				break
			}
		}
	}
	d.now = now.In(loc)
	return d, nil
}

// facts are the rule inputs of the snapshot.
func (d *contextData) facts(spec *ContextSpec) *Facts {
	f := &Facts{Mode: d.sess.Mode, Now: d.now, Files: d.files}
	f.CheckinDue, _ = d.checkin(spec)
	return f
}

// checkin says whether the pack's check-in is due and describes it.
func (d *contextData) checkin(spec *ContextSpec) (bool, string) {
	if spec == nil || spec.Checkin == nil {
		return false, ""
	}
	ck := spec.Checkin
	for _, f := range d.files {
		if f.Type == ck.FileType {
			days := int(d.now.Sub(f.UpdatedAt) / (24 * time.Hour))
			if days >= ck.EveryDays {
				return true, fmt.Sprintf("due (last %s %d days ago)", ck.FileType, days)
			}
			return false, fmt.Sprintf("not due (last %s %d days ago, every %d days)", ck.FileType, days, ck.EveryDays)
		}
	}
	return true, "due (no " + ck.FileType + " yet)"
}

// systemPrompt assembles the system blocks: the agent's prompt and skill
// summaries first (stable across turns, so the prompt cache holds), then
// the skills whose rules match and the context sections.
func systemPrompt(a *Agent, d *contextData) []coachd.Block {
	var static strings.Builder
	static.WriteString(a.Prompt)
	if len(a.Skills) > 0 {
		static.WriteString("\n\n<skills>\nSkills you can draw on (call load_skill with a name for its full guidance):\n")
		for _, s := range a.Skills {
			fmt.Fprintf(&static, "- %s: %s\n", s.Name, Sanitize(s.Summary))
		}
		static.WriteString("</skills>")
	}
	blocks := []coachd.Block{coachd.TextBlock(static.String())}
	if d == nil {
		return blocks
	}
	var parts []string
	spec := a.Context
	var active []string
	facts := d.facts(spec)
	for _, s := range a.Skills {
		if s.Matches(facts) {
			active = append(active, s.Text())
		}
	}
	if len(active) > 0 {
		parts = append(parts, "<active_skills>\n"+strings.Join(active, "\n")+"\n</active_skills>")
	}
	if spec != nil {
		parts = append(parts, contextSections(spec, d)...)
	}
	if len(parts) > 0 {
		blocks = append(blocks, coachd.TextBlock(strings.Join(parts, "\n\n")))
	}
	return blocks
}

func contextSections(spec *ContextSpec, d *contextData) []string {
	var out []string
	add := func(name, body string) {
		if body = strings.TrimSpace(body); body != "" {
			out = append(out, "<"+tagOf(name)+">\n"+clip(body, spec.budget(name))+"\n</"+tagOf(name)+">")
		}
	}
	if spec.has(SectionHeader) {
		add(SectionHeader, header(spec, d))
	}
	var standing, recent []*coachd.File
	days := spec.RecentDays
	if days == 0 {
		days = 7
	}
	since := d.now.Add(-time.Duration(days) * 24 * time.Hour)
	for _, f := range d.files {
		switch {
		case slices.Contains(spec.Standing, f.Type):
			standing = append(standing, f)
		case (spec.Recent == nil || slices.Contains(spec.Recent, f.Type)) && !f.UpdatedAt.Before(since) && !f.Attributes.Folded:
			recent = append(recent, f)
		}
	}
	if spec.has(SectionStanding) {
		add(SectionStanding, fileList(standing, spec.budget(SectionStanding), d.now.Location()))
	}
	if spec.has(SectionRecent) {
		add(SectionRecent, fileList(recent, spec.budget(SectionRecent), d.now.Location()))
	}
	if spec.has(SectionNotes) {
		var sb strings.Builder
		for _, n := range d.notes {
			pin := ""
			if n.Pinned {
				pin = ` pinned="true"`
			}
			fmt.Fprintf(&sb, "<note type=%q importance=\"%d\"%s>%s: %s</note>\n", n.Type, n.Importance, pin, Sanitize(n.Title), Sanitize(n.Content))
		}
		add(SectionNotes, sb.String())
	}
	if spec.has(SectionDataSchema) {
		add(SectionDataSchema, Sanitize(spec.DataSchema))
	}
	return out
}

// tagOf is a section's XML tag: the header is <session_context>.
func tagOf(section string) string {
	if section == SectionHeader {
		return "session_context"
	}
	return section
}

func header(spec *ContextSpec, d *contextData) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "User: %s\n", oneLine(Sanitize(d.user.Name)))
	if l := d.last; l != nil {
		kind := "conversation"
		if l.Mode != "" {
			kind = l.Mode
		}
		fmt.Fprintf(&sb, "Last session: %s, %s (%s, %q)\n", kind, ago(d.now.Sub(l.UpdatedAt)), l.Status, oneLine(Sanitize(l.Title)))
	} else {
		sb.WriteString("Last session: none (first session)\n")
	}
	fmt.Fprintf(&sb, "Time: %s %s (%s, %s)\n", d.now.Weekday(), Bracket(d.now), d.now.Format("2006-01-02 15:04"), d.now.Location())
	if _, desc := d.checkin(spec); desc != "" {
		fmt.Fprintf(&sb, "Check-in: %s\n", desc)
	}
	if d.sess.Mode != "" {
		fmt.Fprintf(&sb, "Session mode: %s\n", d.sess.Mode)
	}
	return sb.String()
}

// fileList renders files within budget; files that do not fit are named
// so the model can read_file them.
func fileList(files []*coachd.File, budget int, loc *time.Location) string {
	var sb strings.Builder
	for i, f := range files {
		attrs := fmt.Sprintf("path=%q updated=%q", attrText(f.Path()), f.UpdatedAt.In(loc).Format("2006-01-02 15:04"))
		if f.Attributes.Status != "" {
			attrs += fmt.Sprintf(" status=%q", f.Attributes.Status)
		}
		if p := f.Attributes.PreviewLine; p != "" {
			attrs += fmt.Sprintf(" preview=%q", attrText(p))
		}
		body := Sanitize(strings.TrimSpace(f.Content))
		room := budget - sb.Len() - len(attrs) - 20
		if room < 200 {
			rest := make([]string, 0, len(files)-i)
			for _, r := range files[i:] {
				rest = append(rest, r.Path())
			}
			fmt.Fprintf(&sb, "[%d more not shown; read_file them: %s]\n", len(rest), strings.Join(rest, ", "))
			break
		}
		fmt.Fprintf(&sb, "<file %s>\n%s\n</file>\n", attrs, clip(body, room))
	}
	return sb.String()
}

func attrText(s string) string { return oneLine(Sanitize(s)) }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to n bytes at a rune boundary, saying so.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 40
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:max(cut, 0)] + fmt.Sprintf("\n[…truncated %d characters]", len(s)-max(cut, 0))
}

func ago(d time.Duration) string {
	switch {
	case d < time.Hour:
		return "less than an hour ago"
	case d < 24*time.Hour:
		return fmt.Sprintf("%d hours ago", int(d.Hours()))
	case d < 48*time.Hour:
		return "1 day ago"
	}
	return fmt.Sprintf("%d days ago", int(d.Hours()/24))
}
