package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/coachd/coachd"
	"gopkg.in/yaml.v3"
)

// agentFile is an agent's front matter.
type agentFile struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Model       string `yaml:"model"`
	// FallbackModel serves a round the model refused as overloaded or
	// unavailable before anything reached the client.
	FallbackModel string              `yaml:"fallback_model"`
	MaxTokens     int64               `yaml:"max_tokens"`
	Thinking      int64               `yaml:"thinking"`
	Temperature   *float64            `yaml:"temperature"`
	Tools         []string            `yaml:"tools"`
	Skills        []string            `yaml:"skills"`
	Limits        limitsFile          `yaml:"limits"`
	Permissions   map[string][]string `yaml:"permissions"`
	Arcs          []string            `yaml:"arcs"`
	Context       *ContextSpec        `yaml:"context"`
	Compaction    *Compaction         `yaml:"compaction"`
	Contracts     contractsFile       `yaml:"contracts"`
	ActionTags    bool                `yaml:"action_tags"`
	Preview       int                 `yaml:"free_preview_turns"`
	Reserve       string              `yaml:"reserve"`
	Default       bool                `yaml:"default"`
	// SessionExpiry expires the agent's sessions idle that long (seed 002).
	SessionExpiry string `yaml:"session_expiry"`
	// OnDisconnect is what a client leaving does to its turn.
	OnDisconnect string `yaml:"on_disconnect"`
	// Commands are the command lines run_command may run for this agent,
	// exactly as written ("go test ./...").
	Commands []string `yaml:"commands"`
	// Voice configures realtime voice sessions with this agent.
	Voice *Voice `yaml:"voice"`
	// RequiresApproval lists the calls that wait for the user's approval
	// (approval.go).
	RequiresApproval yaml.Node `yaml:"requires_approval"`
	// MCP names the pack's MCP servers whose tools the agent may call.
	MCP *mcpFile `yaml:"mcp"`

	// Claude Code agent files carry these; coachd reads them too.
	Triggers         *[]string `yaml:"triggers"` // [] : no user key may start the agent
	Stack            string    `yaml:"stack"`
	CollaboratesWith []string  `yaml:"collaborates_with"`

	// Provider is the API serving Model: a name, or a mapping with the
	// name and its settings (Provider).
	Provider yaml.Node `yaml:"provider"`
}

// The keys each mapping may hold, from the yaml tags.
var (
	agentKeys     = yamlKeys(agentFile{})
	limitsKeys    = yamlKeys(limitsFile{})
	contractsKeys = yamlKeys(contractsFile{})
	checkinKeys   = yamlKeys(CheckinSpec{})
)

type limitsFile struct {
	MaxRounds    int    `yaml:"max_rounds"`
	MaxDuration  string `yaml:"max_duration"`
	ToolTimeout  string `yaml:"tool_timeout"`
	MaxToolCalls int    `yaml:"max_tool_calls"`
}

type contractsFile struct {
	MustCall    []string  `yaml:"must_call"`
	MustNotCall []string  `yaml:"must_not_call"`
	MustNot     []string  `yaml:"must_not"` // tool names, or rules in prose
	MustOutput  yaml.Node `yaml:"must_output"`
	MaxRepairs  *int      `yaml:"max_repairs"`
	Ordered     bool      `yaml:"ordered"` // must_call tools run in the listed order
}

// parseAgent reads agents/<name>.md. known are the tools agents may list,
// skills the pack's skills.
func parseAgent(fm *frontMatter, base string, known map[string]coachd.Tool, skills map[string]*Skill) (*Agent, bool) {
	var f agentFile
	if !fm.decode(&f, agentKeys) {
		return nil, false
	}
	a := &Agent{
		Name: f.Name, Description: strings.TrimSpace(f.Description), MaxTokens: f.MaxTokens,
		Thinking: f.Thinking, Temperature: f.Temperature, Tools: f.Tools, Permissions: f.Permissions,
		Arcs: f.Arcs, Context: f.Context, ActionTags: f.ActionTags, Reserve: f.Reserve,
		FreePreviewTurns: f.Preview, Prompt: strings.TrimSpace(fm.body), Source: fm.file,
		Stack: strings.TrimSpace(f.Stack), CollaboratesWith: f.CollaboratesWith, mcpSpec: f.MCP,
	}
	bad := fm.bad
	fm.checkName(f.Name, base)
	if f.Triggers != nil {
		a.Triggers = *f.Triggers
		a.Internal = len(a.Triggers) == 0
	}
	a.Provider = parseProvider(fm, f.Provider)
	if f.Model != "" {
		a.Model = resolveModel(fm, a.Provider, "model", f.Model)
	} else if a.Provider.Name != "" && a.Provider.Name != ProviderAnthropic {
		bad(fm.line("provider"), fmt.Sprintf("provider %s needs model: the provider's model id", a.Provider.Name))
	}
	if f.FallbackModel != "" {
		a.FallbackModel = resolveModel(fm, a.Provider, "fallback_model", f.FallbackModel)
	}
	for i, name := range f.CollaboratesWith {
		if !nameRe.MatchString(name) {
			bad(fm.itemLine(i, "collaborates_with"), fmt.Sprintf("collaborates_with %q is not an agent name", name))
		}
	}
	if a.Description == "" {
		bad(fm.line("description"), "description is required")
	}
	if a.Prompt == "" {
		bad(fm.bodyLine, "the system prompt (the body after the front matter) is empty")
	}
	if f.MaxTokens < 0 || f.MaxTokens > 128000 {
		bad(fm.line("max_tokens"), "max_tokens must be between 1 and 128000")
	}
	if f.Thinking != 0 {
		mt := f.MaxTokens
		if mt == 0 {
			mt = DefaultMaxTokens
		}
		if f.Thinking < 1024 || f.Thinking >= mt {
			bad(fm.line("thinking"), "thinking must be at least 1024 and less than max_tokens")
		}
	}
	if t := f.Temperature; t != nil && (*t < 0 || *t > 1) {
		bad(fm.line("temperature"), "temperature must be between 0 and 1")
	} else if t != nil && *t != 1 && f.Thinking != 0 && a.Provider.Name != ProviderOpenAI {
		// Claude refuses the request (400), on every turn.
		bad(fm.line("temperature"), "thinking needs temperature 1 or none: Claude refuses any other temperature with thinking")
	}
	for i, name := range f.Tools {
		switch {
		case known[name] == nil:
			bad(fm.itemLine(i, "tools"), fmt.Sprintf("unknown tool %q (not built in, no tools/%s.yaml)", name, name))
		case slices.Index(f.Tools, name) != i:
			bad(fm.itemLine(i, "tools"), fmt.Sprintf("tool %q listed twice", name))
		}
	}
	for i, name := range f.Skills {
		if s := skills[name]; s == nil {
			bad(fm.itemLine(i, "skills"), fmt.Sprintf("unknown skill %q (no skills/%s.md)", name, name))
		} else if slices.Index(f.Skills, name) != i {
			bad(fm.itemLine(i, "skills"), fmt.Sprintf("skill %q listed twice", name))
		} else if waitsForCheckin(s) && (f.Context == nil || f.Context.Checkin == nil) {
			bad(fm.itemLine(i, "skills"), fmt.Sprintf("skill %q has a checkin_due rule, which never holds without context.checkin", name))
		} else if mode := unknownMode(s, fileArcs(&f)); mode != "" {
			bad(fm.itemLine(i, "skills"), fmt.Sprintf("skill %q has a rule for mode %q, which is none of this agent's arcs", name, mode))
		} else {
			a.Skills = append(a.Skills, s)
		}
	}
	if len(f.Skills) > 0 && !slices.Contains(f.Tools, "load_skill") && known["load_skill"] != nil {
		a.Tools = append(a.Tools, "load_skill")
	}
	switch f.OnDisconnect {
	case "", OnDisconnectContinue, OnDisconnectCancel:
		a.OnDisconnect = f.OnDisconnect
	default:
		bad(fm.line("on_disconnect"), "on_disconnect must be continue or cancel")
	}
	if f.SessionExpiry != "" {
		d, err := time.ParseDuration(f.SessionExpiry)
		if err != nil || d < time.Minute || d > 90*24*time.Hour {
			bad(fm.line("session_expiry"), "session_expiry must be a duration like 12h, from 1m to 2160h")
		}
		a.SessionExpiry = d
	}
	a.Limits = parseLimits(fm, f.Limits)
	a.Voice = parseVoice(fm, f.Voice)
	a.Context.validate(fm)
	fm.checkKeys(fm.node("context", "checkin"), checkinKeys)
	if a.Context != nil {
		a.Context.fileTypes = contextFileTypes(a)
		for key, list := range map[string][]string{"standing": a.Context.Standing, "recent": a.Context.Recent} {
			for i, typ := range list {
				a.contextTypes = append(a.contextTypes, fileTypeRef{key, typ, fm.itemLine(i, "context", key)})
			}
		}
		if a.Context.Checkin != nil && a.Context.Checkin.FileType != "" {
			a.checkinLine = fm.line("context", "checkin", "file_type")
		}
	}
	a.Compaction = f.Compaction
	a.Compaction.validate(fm)
	a.Contracts = parseContracts(fm, f.Contracts, a, known)
	// After the contracts: a must_call tool is one of the agent's tools,
	// with the same needs as one listed.
	a.Commands = parseCommands(fm, f.Commands, a.Tools)
	parsePermissions(fm, a)
	a.Approvals = parseApprovals(fm, a, known)
	switch f.Reserve {
	case "", "estimate", "max":
	default:
		bad(fm.line("reserve"), "reserve must be estimate or max")
	}
	if f.Preview < 0 {
		bad(fm.line("free_preview_turns"), "free_preview_turns must not be negative")
	}
	return a, f.Default
}

// contextFileTypes are the file types a's context and skill rules look
// at: those read on their own for a user with many files.
func contextFileTypes(a *Agent) []string {
	var types []string
	add := func(list ...string) {
		for _, t := range list {
			if t != "" && !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
	}
	if c := a.Context; c != nil {
		add(c.Standing...)
		if c.Checkin != nil {
			add(c.Checkin.FileType)
		}
	}
	for _, s := range a.Skills {
		for _, r := range s.When {
			add(r.MissingFile...)
			add(r.HasFile...)
			add(r.FileToday...)
			add(r.NoFileToday...)
			add(r.StatusType)
			if len(r.FileStatus) > 0 && r.StatusType == "" {
				// A status on any file: every type the agent writes.
				for _, list := range a.Permissions {
					add(list...)
				}
			}
		}
	}
	slices.Sort(types)
	return types
}

// waitsForCheckin reports whether one of s's rules needs a check-in due.
func waitsForCheckin(s *Skill) bool {
	return slices.ContainsFunc(s.When, func(r Rule) bool { return r.CheckinDue != nil && *r.CheckinDue })
}

// fileArcs are the arcs an agent file allows (Pack.Arcs): its arcs, else
// its permission modes; none means any arc may be entered.
func fileArcs(f *agentFile) []string {
	if f.Arcs != nil {
		return f.Arcs
	}
	var arcs []string
	for mode := range f.Permissions {
		if mode != "default" {
			arcs = append(arcs, mode)
		}
	}
	return arcs
}

// unknownMode returns a mode one of s's rules names that is neither no
// mode nor one of arcs (so the rule never holds), or "".
func unknownMode(s *Skill, arcs []string) string {
	if len(arcs) == 0 {
		return ""
	}
	for _, r := range s.When {
		for _, m := range r.Mode {
			if m != "" && !slices.Contains(arcs, m) {
				return m
			}
		}
	}
	return ""
}

// parseCommands checks run_command's allow-list: one command line per
// item, printable, no shell needed (it is split on spaces and run as is).
func parseCommands(fm *frontMatter, cmds []string, tools []string) []string {
	has := slices.Contains(tools, RunCommandTool)
	switch {
	case has && len(cmds) == 0:
		fm.bad(fm.line("tools"), "run_command needs commands: the command lines it may run, like \"go test ./...\"")
	case !has && len(cmds) > 0:
		fm.bad(fm.line("commands"), "commands is run_command's allow-list: add run_command to tools")
	}
	out := make([]string, 0, len(cmds))
	for i, raw := range cmds {
		c := strings.Join(strings.Fields(raw), " ")
		switch {
		case c == "" || len(c) > 200:
			fm.bad(fm.itemLine(i, "commands"), "a command must be 1 to 200 characters")
		case strings.ContainsFunc(raw, func(r rune) bool { return r < ' ' || r == 0x7f }):
			fm.bad(fm.itemLine(i, "commands"), fmt.Sprintf("command %q has a control character", raw))
		case slices.Contains(tools, DecisionTool) && reviewGoTestProblem(strings.Fields(c)) != "":
			fm.bad(fm.itemLine(i, "commands"), fmt.Sprintf("command %q %s", c, reviewGoTestProblem(strings.Fields(c))))
		default:
			out = append(out, c)
		}
	}
	return out
}

// RunCommandTool is the built-in tool whose allow-list is an agent's
// commands.
const RunCommandTool = "run_command"

func parseLimits(fm *frontMatter, l limitsFile) Limits {
	fm.checkKeys(fm.node("limits"), limitsKeys)
	out := Limits{MaxRounds: l.MaxRounds, MaxToolCalls: l.MaxToolCalls}
	if l.MaxRounds < 0 || l.MaxRounds > 50 {
		fm.bad(fm.line("limits", "max_rounds"), "max_rounds must be between 1 and 50")
	}
	if l.MaxToolCalls < 0 || l.MaxToolCalls > 100 {
		fm.bad(fm.line("limits", "max_tool_calls"), "max_tool_calls must be between 1 and 100")
	}
	dur := func(key, v string) time.Duration {
		if v == "" {
			return 0
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > 30*time.Minute {
			fm.bad(fm.line("limits", key), key+" must be a duration like 30s, at most 30m")
		}
		return d
	}
	out.MaxDuration = dur("max_duration", l.MaxDuration)
	out.ToolTimeout = dur("tool_timeout", l.ToolTimeout)
	return out
}

func parsePermissions(fm *frontMatter, a *Agent) {
	for mode, types := range a.Permissions {
		if !nameRe.MatchString(mode) {
			fm.bad(fm.line("permissions"), fmt.Sprintf("permissions: mode %q must be a lowercase name", mode))
		}
		for _, t := range types {
			if !coachd.ValidFileType(t) {
				fm.bad(fm.line("permissions", mode), fmt.Sprintf("permissions.%s: %q is not a file type name", mode, t))
			}
		}
	}
	if slices.Contains(a.Tools, "save_file") && a.Permissions["default"] == nil {
		fm.bad(fm.line("permissions"), "save_file needs permissions with at least a default list (it may be empty: [])")
	}
	for i, arc := range a.Arcs {
		if !nameRe.MatchString(arc) {
			fm.bad(fm.itemLine(i, "arcs"), fmt.Sprintf("arc %q must be a lowercase name", arc))
		}
	}
}

func parseContracts(fm *frontMatter, c contractsFile, a *Agent, known map[string]coachd.Tool) Contracts {
	fm.checkKeys(fm.node("contracts"), contractsKeys)
	out := Contracts{MaxRepairs: DefaultMaxRepairs, Ordered: c.Ordered}
	// A tool that must be called is one of the agent's tools even when the
	// file does not list it (Claude Code agent files name their required
	// calls only in the contract).
	for i, raw := range c.MustCall {
		name := toolName(raw)
		switch {
		case known[name] == nil:
			fm.bad(fm.itemLine(i, "contracts", "must_call"), fmt.Sprintf("must_call %q is not a known tool", raw))
		case slices.Contains(out.MustCall, name):
			fm.bad(fm.itemLine(i, "contracts", "must_call"), fmt.Sprintf("must_call %q is listed twice", raw))
		default:
			out.MustCall = append(out.MustCall, name)
			if !slices.Contains(a.Tools, name) {
				a.Tools = append(a.Tools, name)
			}
		}
	}
	forbid := func(i int, key, raw string) {
		name := toolName(raw)
		if slices.Contains(out.MustCall, name) {
			fm.bad(fm.itemLine(i, "contracts", key), fmt.Sprintf("%q is both must_call and %s", raw, key))
		}
		if !slices.Contains(out.MustNotCall, name) {
			out.MustNotCall = append(out.MustNotCall, name)
		}
	}
	for i, raw := range c.MustNotCall {
		if known[toolName(raw)] == nil {
			fm.bad(fm.itemLine(i, "contracts", "must_not_call"), fmt.Sprintf("must_not_call %q is not a known tool", raw))
			continue
		}
		forbid(i, "must_not_call", raw)
	}
	// must_not holds tool names (refused like must_not_call) and rules in
	// prose, which the model is given as part of its prompt.
	var rules []string
	for i, item := range c.MustNot {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
			fm.bad(fm.itemLine(i, "contracts", "must_not"), "must_not items must not be empty")
		case known[toolName(item)] != nil:
			forbid(i, "must_not", item)
		default:
			rules = append(rules, "You must not "+item+".")
		}
	}
	if c.MaxRepairs != nil {
		if *c.MaxRepairs < 0 || *c.MaxRepairs > 5 {
			fm.bad(fm.line("contracts", "max_repairs"), "max_repairs must be between 0 and 5")
		}
		out.MaxRepairs = *c.MaxRepairs
	}
	switch {
	case c.MustOutput.Kind == yaml.SequenceNode:
		var items []string
		if err := c.MustOutput.Decode(&items); err != nil {
			fm.bad(fm.line("contracts", "must_output"), "must_output is a JSON Schema or a list of sentences")
			break
		}
		for _, it := range items {
			rules = append(rules, "Your final output must be: "+strings.TrimSpace(it)+".")
		}
		// A decision tool's input schema is the decision the turn must end
		// with, so the prose list gets a checkable schema.
		if t := known[DecisionTool]; t != nil && slices.Contains(a.Tools, DecisionTool) {
			if err := out.SetMustOutput(t.Definition().InputSchema); err != nil {
				fm.bad(fm.line("contracts", "must_output"), "the "+DecisionTool+" schema does not compile: "+err.Error())
			}
		}
	case c.MustOutput.Kind != 0:
		var v any
		if err := c.MustOutput.Decode(&v); err != nil {
			fm.bad(fm.line("contracts", "must_output"), "must_output: "+err.Error())
			return out
		}
		raw, err := json.Marshal(v)
		if err == nil {
			err = out.SetMustOutput(raw)
		}
		if err != nil {
			lines := strings.Split(err.Error(), "\n")
			fm.bad(fm.line("contracts", "must_output"), "must_output is not a valid JSON Schema: "+strings.TrimSpace(lines[len(lines)-1]))
		}
	}
	if c.Ordered && len(out.MustCall) < 2 {
		fm.bad(fm.line("contracts", "ordered"), "ordered needs at least two must_call tools")
	}
	if len(rules) > 0 {
		a.Prompt += "\n\n## Contract\n\n- " + strings.Join(rules, "\n- ")
	}
	return out
}

// toolName reads a contract's tool reference: a plain name, or a dotted
// path whose last part is the tool (guardkit.agents.coach.record_decision,
// as Python-hosted agent files write them).
func toolName(ref string) string {
	ref = strings.TrimSpace(ref)
	if i := strings.LastIndexByte(ref, '.'); i >= 0 && !strings.ContainsAny(ref, " \t") {
		return ref[i+1:]
	}
	return ref
}
