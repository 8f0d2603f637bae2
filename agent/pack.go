package agent

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/coachd/coachd"
)

// Pack is a coach pack: the agents, skills and tools an app defines as
// files (agents/*.md, skills/*.md, tools/*.yaml, an optional schema.md
// describing the app's data and an optional notes.yaml with the note types
// and categories). It implements tools.Policy.
type Pack struct {
	Dir        string
	Agents     []*Agent // sorted by name
	Skills     []*Skill // sorted by name
	Tools      []coachd.Tool
	DataSchema string
	// Data is the pack's data sources (data/*.yaml); nil without any.
	Data Data
	// Notes is the pack's note vocabulary (coachd.DefaultNoteVocabulary
	// without a notes.yaml).
	Notes coachd.NoteVocabulary
	// MCP is the pack's MCP servers (mcp/*.yaml), sorted by name.
	MCP []MCPServer

	agents map[string]*Agent
	skills map[string]*Skill
	def    *Agent
}

// PackOptions tells LoadPack what it cannot know by itself.
type PackOptions struct {
	// Builtins are the tools every agent may list by name.
	Builtins []coachd.Tool
	// LoadTool builds a pack tool from tools/<name>.yaml; nil makes any
	// tool file a problem.
	LoadTool func(path string, data []byte) (coachd.Tool, error)
	// LoadData opens the data sources data/*.yaml declare (paths relative
	// to dir); nil makes any data file a problem.
	LoadData func(dir string, paths []string) (Data, error)
	// LoadMCP builds an MCP server from mcp/<name>.yaml (not started);
	// nil makes any MCP server file a problem.
	LoadMCP func(path string, data []byte) (MCPServer, error)
}

// Data is a pack's data sources, opened: an app's own database its
// coaches read through tools and write through declared actions.
type Data interface {
	Tools() []coachd.Tool
	Schema() coachd.DataSchema
	// Prompt is the data_schema context section, within budget bytes.
	Prompt(budget int) string
	Close() error
}

// Close releases what the pack holds open (its data sources, its MCP
// servers).
func (p *Pack) Close() error {
	if p == nil {
		return nil
	}
	var errs []error
	for _, s := range p.MCP {
		errs = append(errs, s.Close())
	}
	if p.Data != nil {
		errs = append(errs, p.Data.Close())
	}
	return errors.Join(errs...)
}

// loaderProblems adds the problems of a loader's error, one
// "file:line: message" per line (file defaults to the given one).
func loaderProblems(file string, err error, problem func(file string, line int, msg string)) {
	for _, line := range strings.Split(err.Error(), "\n") {
		f, msg := file, line
		if name, rest, ok := strings.Cut(line, ":"); ok && strings.ContainsAny(name, "/.") && !strings.Contains(name, " ") {
			f, msg = name, rest
		}
		n := 0
		if num, rest, ok := strings.Cut(msg, ": "); ok {
			if v, err := strconv.Atoi(num); err == nil {
				n, msg = v, rest
			}
		}
		problem(f, n, strings.TrimSpace(msg))
	}
}

// LoadPack reads and validates the pack in dir. Every problem found is
// reported, as a *PackError, with file:line.
func LoadPack(dir string, opts PackOptions) (*Pack, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, &PackError{[]Problem{{File: dir, Message: "not a directory"}}}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, &PackError{[]Problem{{File: dir, Message: unwrapPathErr(err).Error()}}}
	}
	defer root.Close()
	pr := packRoot{root, dir}
	p := &Pack{Dir: dir, agents: map[string]*Agent{}, skills: map[string]*Skill{}}
	var probs []Problem
	rel := func(path string) string {
		if r, err := filepath.Rel(dir, path); err == nil {
			return filepath.ToSlash(r)
		}
		return path
	}
	problem := func(file string, line int, msg string) {
		probs = append(probs, Problem{File: file, Line: line, Message: msg})
	}
	// read returns a pack file's name relative to dir and its contents; a
	// file that cannot be read is a problem.
	read := func(path string) (string, []byte, bool) {
		file := rel(path)
		data, err := pr.readFile(path)
		if err != nil {
			problem(file, 0, err.Error())
			return file, nil, false
		}
		if line, bad := badText(data); bad != "" {
			problem(file, line, bad)
			return file, nil, false
		}
		return file, data, true
	}
	// readIfThere reads an optional file: absent is no problem.
	readIfThere := func(path string) (string, []byte, bool) {
		if !pr.exists(path) {
			return "", nil, false
		}
		return read(path)
	}
	// markdown reads agents/<name>.md or skills/<name>.md: its front
	// matter (nil after a problem) and <name>.
	markdown := func(path string) (*frontMatter, string) {
		file, data, ok := read(path)
		if !ok {
			return nil, ""
		}
		return splitFrontMatter(file, string(data), &probs), strings.TrimSuffix(filepath.Base(path), ".md")
	}
	// Tools first: agents name them.
	known := map[string]coachd.Tool{}
	for _, t := range opts.Builtins {
		known[t.Definition().Name] = t
	}
	check, _ := NewToolset()
	for _, path := range pr.glob("tools", problem, "*.yaml", "*.yml") {
		file, data, ok := read(path)
		base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".yaml"), ".yml")
		if !ok {
			markUnloaded(known, base, file)
			continue
		}
		if opts.LoadTool == nil {
			problem(file, 0, "pack tools are not supported here")
			continue
		}
		t, err := opts.LoadTool(file, data)
		if err != nil {
			loaderProblems(file, err, problem)
			markUnloaded(known, base, file)
			continue
		}
		name := t.Definition().Name
		switch {
		case name != base:
			problem(file, yamlLine(data, "name"), fmt.Sprintf("tool name %q must match the file name %q", name, base))
		case known[name] != nil:
			problem(file, yamlLine(data, "name"), fmt.Sprintf("tool %q is already defined (built-in or another file)", name))
		default:
			if err := check.Add(t); err != nil {
				msg, loc := schemaProblem(err)
				problem(file, yamlLine(data, append([]string{"input_schema"}, loc...)...), msg)
				markUnloaded(known, name, file)
				continue
			}
			known[name] = t
			p.Tools = append(p.Tools, t)
		}
	}
	if files := pr.glob("data", problem, "*.yaml", "*.yml"); len(files) > 0 {
		var paths []string
		for _, f := range files {
			paths = append(paths, rel(f))
		}
		d, err := loadData(dir, paths, opts.LoadData)
		if err != nil {
			loaderProblems(paths[0], err, problem)
			markUnloadedData(known, files, rel, pr.readFile)
		} else {
			p.Data = d
			for _, t := range d.Tools() {
				name := t.Definition().Name
				file, line := paths[0], 0
				if o, ok := t.(interface{ Origin() (string, int) }); ok {
					file, line = o.Origin() // a named query's or action's
				}
				if known[name] != nil {
					problem(file, line, fmt.Sprintf("data tool %q is already defined (built-in or tools/%s.yaml)", name, name))
					continue
				}
				if err := check.Add(t); err != nil {
					problem(file, line, err.Error())
					continue
				}
				known[name] = t
				p.Tools = append(p.Tools, t)
			}
		}
	}
	servers := loadMCP(pr.glob("mcp", problem, "*.yaml", "*.yml"), opts.LoadMCP, read, problem)
	for _, s := range servers {
		if _, failed := s.(unloadedMCP); !failed {
			p.MCP = append(p.MCP, s)
		}
	}
	sort.Slice(p.MCP, func(i, j int) bool { return p.MCP[i].Name() < p.MCP[j].Name() })
	// A file that did not parse is its one problem: nothing naming it is
	// told it is unknown, nor a file type judged without its permissions.
	broken := map[string]bool{}
	skillRefs := map[string]*Skill{}
	for _, path := range pr.glob("skills", problem, "*.md") {
		fm, base := markdown(path)
		var s *Skill
		if fm != nil {
			s = parseSkill(fm, base)
		}
		if s == nil {
			skillRefs[base] = &Skill{Name: base}
			continue
		}
		if p.skills[s.Name] == nil {
			p.skills[s.Name] = s
			p.Skills = append(p.Skills, s)
		}
	}
	maps.Copy(skillRefs, p.skills)
	agentFiles := pr.glob("agents", problem, "*.md")
	if len(agentFiles) == 0 {
		problem("agents", 0, "a pack needs at least one agents/<name>.md")
	}
	var defaults []*Agent
	fms := map[*Agent]*frontMatter{} // for the lines of the problems below
	for _, path := range agentFiles {
		fm, base := markdown(path)
		var a *Agent
		var isDefault bool
		if fm != nil {
			a, isDefault = parseAgent(fm, base, known, skillRefs)
		}
		if a == nil {
			broken[base] = true
			continue
		}
		if p.agents[a.Name] != nil {
			continue
		}
		bindMCP(fm, a, a.mcpSpec, servers)
		fms[a] = fm
		p.agents[a.Name] = a
		p.Agents = append(p.Agents, a)
		if isDefault {
			defaults = append(defaults, a)
		}
	}
	if len(defaults) > 1 {
		problem(defaults[1].Source, fms[defaults[1]].line("default"), fmt.Sprintf("only one agent may be the default (also %s)", defaults[0].Source))
	}
	if len(defaults) == 1 && defaults[0].Internal {
		problem(defaults[0].Source, fms[defaults[0]].line("default"), "an agent with triggers: [] cannot be the default: user keys may not start it")
	}
	if len(broken) == 0 {
		checkRuleFileTypes(p, problem)
	}
	for _, a := range p.Agents {
		for i, other := range a.CollaboratesWith {
			if p.agents[other] == nil && !broken[other] {
				problem(a.Source, fms[a].itemLine(i, "collaborates_with"), fmt.Sprintf("collaborates_with %q: the pack has no agents/%s.md", other, other))
			}
		}
	}
	if _, b, ok := readIfThere(filepath.Join(dir, "schema.md")); ok {
		if p.Data != nil {
			problem("schema.md", 0, "the data files describe the data (the schema is generated from them): remove schema.md")
		}
		p.DataSchema = string(b)
	}
	if p.Data != nil {
		p.DataSchema = p.Data.Prompt(DefaultBudgets[SectionDataSchema])
	}
	p.Notes = coachd.DefaultNoteVocabulary
	if _, b, ok := readIfThere(filepath.Join(dir, "notes.yaml")); ok {
		p.Notes = parseNoteVocabulary(b, problem)
	}
	if len(probs) > 0 {
		sort.SliceStable(probs, func(i, j int) bool {
			if probs[i].File != probs[j].File {
				return probs[i].File < probs[j].File
			}
			return probs[i].Line < probs[j].Line
		})
		p.Close()
		return nil, &PackError{probs}
	}
	sort.Slice(p.Agents, func(i, j int) bool { return p.Agents[i].Name < p.Agents[j].Name })
	sort.Slice(p.Skills, func(i, j int) bool { return p.Skills[i].Name < p.Skills[j].Name })
	switch {
	case len(defaults) == 1:
		p.def = defaults[0]
	case p.agents["default"] != nil && !p.agents["default"].Internal:
		p.def = p.agents["default"]
	default:
		// The first agent a user key may start; internal ones only when
		// the pack has nothing else.
		p.def = p.Agents[0]
		for _, a := range p.Agents {
			if !a.Internal {
				p.def = a
				break
			}
		}
	}
	for _, a := range p.Agents {
		switch {
		case a.Context == nil:
		case p.Data != nil:
			// Written for the agent's own budget: whole tables, as many
			// as its data_schema section holds.
			a.Context.DataSchema = p.Data.Prompt(a.Context.budget(SectionDataSchema))
		default:
			a.Context.DataSchema = p.DataSchema
		}
	}
	return p, nil
}

func loadData(dir string, paths []string, load func(string, []string) (Data, error)) (Data, error) {
	if load == nil {
		return nil, fmt.Errorf("%s: data sources are not supported here", paths[0])
	}
	return load(dir, paths)
}

// Agent resolves an agent by name; "" is the pack's default agent (the one
// marked default: true, else the one named default, else the first by
// name). It fits agent.Config.Agents.
func (p *Pack) Agent(name string) (*Agent, bool) {
	if name == "" {
		return p.def, true
	}
	a, ok := p.agents[name]
	return a, ok
}

// Default returns the default agent.
func (p *Pack) Default() *Agent { return p.def }

// Skill returns a skill by name.
func (p *Pack) Skill(name string) (*Skill, bool) {
	s, ok := p.skills[name]
	return s, ok
}

// WritableTypes lists the file types save_file may write for agent in
// mode: the mode's own list when the agent has one, else its default list.
func (p *Pack) WritableTypes(agent, mode string) []string {
	a, ok := p.Agent(agent)
	if !ok {
		return nil
	}
	return a.WritableTypes(mode)
}

// WritableTypes lists the file types save_file may write in mode.
func (a *Agent) WritableTypes(mode string) []string {
	if types, ok := a.Permissions[mode]; ok && mode != "" {
		return types
	}
	return a.Permissions["default"]
}

// Arcs lists the structured arcs agent may enter.
func (p *Pack) Arcs(agent string) []string {
	a, ok := p.Agent(agent)
	if !ok {
		return nil
	}
	if a.Arcs != nil {
		return a.Arcs
	}
	var arcs []string
	for mode := range a.Permissions {
		if mode != "default" {
			arcs = append(arcs, mode)
		}
	}
	sort.Strings(arcs)
	return arcs
}

// SkillText returns the full text of one of agent's skills.
func (p *Pack) SkillText(agent, name string) (string, error) {
	a, ok := p.Agent(agent)
	if !ok {
		return "", fmt.Errorf("no skills: unknown agent %q", agent)
	}
	names := make([]string, len(a.Skills))
	for i, s := range a.Skills {
		if s.Name == name {
			return s.Text(), nil
		}
		names[i] = s.Name
	}
	return "", fmt.Errorf("unknown skill %q; available: [%s]", name, strings.Join(names, ", "))
}

// Checkin returns agent's check-in cadence (everyDays 0: none).
func (p *Pack) Checkin(agent string) (fileType string, everyDays int) {
	a, ok := p.Agent(agent)
	if !ok || a.Context == nil || a.Context.Checkin == nil {
		return "", 0
	}
	return a.Context.Checkin.FileType, a.Context.Checkin.EveryDays
}

// NoteVocabulary is the pack's note types and categories.
func (p *Pack) NoteVocabulary() coachd.NoteVocabulary { return p.Notes }

// FileTypes is every file type some agent of the pack may write.
func (p *Pack) FileTypes() []string {
	var types []string
	for _, a := range p.Agents {
		for _, list := range a.Permissions {
			for _, t := range list {
				if !slices.Contains(types, t) {
					types = append(types, t)
				}
			}
		}
	}
	sort.Strings(types)
	return types
}
