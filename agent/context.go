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

	// fileTypes are the types read on their own when a user has more
	// files than one listing holds: the standing ones, the check-in's and
	// those the agent's skill rules test (parseAgent sets them).
	fileTypes []string
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
	if len(d.files) >= coachd.MaxPageLimit && spec != nil {
		// The listing holds only the newest files: an overview saved
		// months ago is not in it, yet it still exists.
		if err := d.olderFiles(ctx, st, u.ID, spec.fileTypes); err != nil {
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

// olderFiles adds the user's files of types that the newest-files listing
// may have cut, keeping d.files newest first.
func (d *contextData) olderFiles(ctx context.Context, st coachd.Store, userID string, types []string) error {
	seen := make(map[string]bool, len(d.files))
	for _, f := range d.files {
		seen[f.ID] = true
	}
	added := false
	for _, typ := range types {
		list, err := st.ListFiles(ctx, userID, coachd.FileFilter{Type: typ, Limit: coachd.MaxPageLimit})
		if err != nil {
			return err
		}
		for _, f := range list {
			if !seen[f.ID] {
				seen[f.ID], added = true, true
				d.files = append(d.files, f)
			}
		}
	}
	if added {
		slices.SortStableFunc(d.files, func(a, b *coachd.File) int {
			if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
				return c
			}
			return strings.Compare(b.ID, a.ID)
		})
	}
	return nil
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
			days := dayNumber(d.now) - dayNumber(f.UpdatedAt.In(d.now.Location()))
			if days >= ck.EveryDays {
				return true, fmt.Sprintf("due (last %s %d days ago)", ck.FileType, days)
			}
			return false, fmt.Sprintf("not due (last %s %d days ago, every %d days)", ck.FileType, days, ck.EveryDays)
		}
	}
	return true, "due (no " + ck.FileType + " yet)"
}

// systemPrompt assembles the turn's prompt, from the most to the least
// stable part, so that the prompt cache holds (coachd.CacheMarks marks
// the boundaries):
//
//   - system[0]: the agent's prompt and skill summaries — the same for
//     every turn of every session of the agent;
//   - system[1]: the session's context — matching skills, the user and
//     their last session, standing files, notes, the data schema and the
//     session mode — which changes only when those do;
//   - tail: the turn's context — the time as a bracket and the date (not
//     the minute), a due check-in and recent files — sent as the last
//     blocks of the newest user message, after the cached history, so a
//     new minute or a file saved this turn never invalidates the history.
func systemPrompt(a *Agent, d *contextData) (system, tail []coachd.Block) {
	var static strings.Builder
	static.WriteString(a.Prompt)
	if len(a.Skills) > 0 {
		static.WriteString("\n\n<skills>\nSkills you can draw on (call load_skill with a name for its full guidance):\n")
		for _, s := range a.Skills {
			fmt.Fprintf(&static, "- %s: %s\n", s.Name, Sanitize(s.Summary))
		}
		static.WriteString("</skills>")
	}
	system = []coachd.Block{coachd.TextBlock(static.String())}
	if d == nil {
		return system, nil
	}
	var parts, turn []string
	spec := a.Context
	active := activeSkills(a.Skills, d.facts(spec))
	if len(active) > 0 {
		parts = append(parts, "<active_skills>\n"+strings.Join(active, "\n")+"\n</active_skills>")
	}
	if spec != nil {
		session, now := contextSections(spec, d)
		parts, turn = append(parts, session...), now
	}
	if len(parts) > 0 {
		system = append(system, coachd.TextBlock(strings.Join(parts, "\n\n")))
	}
	if len(turn) > 0 {
		tail = []coachd.Block{coachd.TextBlock(strings.Join(turn, "\n\n"))}
	}
	return system, tail
}

// MaxContextReadBytes bounds the stored text one turn's context reads and
// sanitises, all sections together (issue 20 finding 2). Each text is cut
// to its room before it is sanitised; each section reads at most twice
// its budget, and the sections share this total in proportion to their
// budgets (a small section keeps its budget's worth, up to 4 KiB). What
// lies beyond is not read at all, however many files and notes the user
// has.
const MaxContextReadBytes = 256 << 10

// reader sanitises stored text for one section within its share of
// MaxContextReadBytes.
type reader struct{ left int }

// newReader returns the reader of a section of budget bytes among
// sections of total bytes in all.
func newReader(budget, total int) *reader {
	share := max(MaxContextReadBytes*budget/max(total, 1), min(budget, 4<<10))
	return &reader{left: min(2*budget, share)}
}

// text returns s sanitised and cut to at most n bytes. At most n and a
// half bytes of s are read (Sanitize may remove some of them), and none
// once the section's share is spent.
func (r *reader) text(s string, n int) string {
	if n <= 0 || r.left <= 0 {
		return ""
	}
	read := runeCut(s, min(n+n/2, r.left))
	r.left -= len(read)
	return clip(Sanitize(read), n, len(s)-len(read))
}

// spent reports whether the section's share is used up.
func (r *reader) spent() bool { return r.left <= 0 }

// contextSections renders the agent's context sections: those of the
// session (system[1]) and those of the turn (the tail).
func contextSections(spec *ContextSpec, d *contextData) (out, turn []string) {
	total := 0
	for _, name := range ContextSections {
		if spec.has(name) {
			total += spec.budget(name)
		}
	}
	rd := func(name string) *reader { return newReader(spec.budget(name), total) }
	render := func(tag, name, body string) string {
		if body = strings.TrimSpace(body); body != "" {
			return "<" + tag + ">\n" + clip(body, spec.budget(name), 0) + "\n</" + tag + ">"
		}
		return ""
	}
	add := func(name, body string) {
		if s := render(tagOf(name), name, body); s != "" {
			out = append(out, s)
		}
	}
	var now string
	if spec.has(SectionHeader) {
		h := rd(SectionHeader)
		add(SectionHeader, header(spec, d, h))
		now = render("turn_context", SectionHeader, turnHeader(spec, d))
	}
	if now != "" {
		turn = append(turn, now)
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
		add(SectionStanding, fileList(standing, spec.budget(SectionStanding), d.now.Location(), rd(SectionStanding)))
	}
	if spec.has(SectionRecent) {
		if s := render(SectionRecent, SectionRecent, fileList(recent, spec.budget(SectionRecent), d.now.Location(), rd(SectionRecent))); s != "" {
			turn = append(turn, s)
		}
	}
	if spec.has(SectionNotes) {
		add(SectionNotes, noteList(d.notes, spec.budget(SectionNotes), rd(SectionNotes)))
	}
	if spec.has(SectionDataSchema) {
		add(SectionDataSchema, rd(SectionDataSchema).text(spec.DataSchema, spec.budget(SectionDataSchema)))
	}
	return out, turn
}

// noteList renders notes until the section's budget is full.
func noteList(notes []*coachd.Note, budget int, rd *reader) string {
	var sb strings.Builder
	for _, n := range notes {
		room := budget - sb.Len()
		if room <= 0 || rd.spent() {
			break
		}
		pin := ""
		if n.Pinned {
			pin = ` pinned="true"`
		}
		fmt.Fprintf(&sb, "<note type=%q importance=\"%d\"%s>%s: %s</note>\n", n.Type, n.Importance, pin,
			rd.text(n.Title, room), rd.text(n.Content, room))
	}
	return sb.String()
}

// tagOf is a section's XML tag: the header is <session_context>.
func tagOf(section string) string {
	if section == SectionHeader {
		return "session_context"
	}
	return section
}

func header(spec *ContextSpec, d *contextData, rd *reader) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "User: %s\n", oneLine(rd.text(d.user.Name, attrMax)))
	if l := d.last; l != nil {
		kind := "conversation"
		if l.Mode != "" {
			kind = l.Mode
		}
		fmt.Fprintf(&sb, "Last session: %s, %s (%s, %q)\n", kind, ago(d.now.Sub(l.UpdatedAt)), l.Status, oneLine(rd.text(l.Title, attrMax)))
	} else {
		sb.WriteString("Last session: none (first session)\n")
	}
	if d.sess.Mode != "" {
		fmt.Fprintf(&sb, "Session mode: %s\n", d.sess.Mode)
	}
	return sb.String()
}

// turnHeader is the part of the header that changes from turn to turn:
// the time, to the bracket of the day (morning, afternoon…) and the date
// so that it changes a few times a day, and the check-in's state.
func turnHeader(spec *ContextSpec, d *contextData) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Time: %s %s, %s (%s)\n", d.now.Weekday(), Bracket(d.now), d.now.Format("2006-01-02"), d.now.Location())
	if _, desc := d.checkin(spec); desc != "" {
		fmt.Fprintf(&sb, "Check-in: %s\n", desc)
	}
	return sb.String()
}

// attrMax bounds a name, title or preview line in the context, in bytes:
// a preview line is the longest.
const attrMax = 4 * coachd.FilePreviewMax

// fileList renders files within budget; files that do not fit are named
// so the model can read_file them.
func fileList(files []*coachd.File, budget int, loc *time.Location, rd *reader) string {
	var sb strings.Builder
	for i, f := range files {
		attrs := fmt.Sprintf("path=%q updated=%q", oneLine(rd.text(f.Path(), attrMax)), f.UpdatedAt.In(loc).Format("2006-01-02 15:04"))
		if f.Attributes.Status != "" {
			attrs += fmt.Sprintf(" status=%q", f.Attributes.Status)
		}
		if p := f.Attributes.PreviewLine; p != "" {
			attrs += fmt.Sprintf(" preview=%q", oneLine(rd.text(p, attrMax)))
		}
		room := budget - sb.Len() - len(attrs) - 20
		if room < 200 || rd.spent() {
			moreFiles(&sb, files[i:], budget-sb.Len(), rd)
			break
		}
		body := rd.text(strings.TrimSpace(f.Content), room)
		fmt.Fprintf(&sb, "<file %s>\n%s\n</file>\n", attrs, body)
	}
	return sb.String()
}

// moreFiles names the files that did not fit, as many as room allows
// (at least a few: the section is clipped as a whole anyway).
func moreFiles(sb *strings.Builder, rest []*coachd.File, room int, rd *reader) {
	room = max(room, 2*attrMax)
	names := make([]string, 0, len(rest))
	for _, r := range rest {
		p := oneLine(rd.text(r.Path(), attrMax))
		if room -= len(p) + 2; room < 100 || p == "" {
			names = append(names, "…")
			break
		}
		names = append(names, p)
	}
	fmt.Fprintf(sb, "[%d more not shown; read_file them: %s]\n", len(rest), strings.Join(names, ", "))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// runeCut returns the longest prefix of s of at most n bytes that does not
// split a rune.
func runeCut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:max(n, 0)]
}

// clip cuts s to n bytes at a rune boundary, saying so; more counts the
// bytes cut before s was made.
func clip(s string, n, more int) string {
	if len(s) <= n && more == 0 {
		return s
	}
	kept := runeCut(s, n-40)
	return kept + fmt.Sprintf("\n[…truncated %d characters]", len(s)-len(kept)+more)
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
