package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/examples"
	"github.com/coachd/coachd/review"
	"github.com/coachd/coachd/server"
)

// errNotApproved ends coachd review and coachd autobuild with exit code 1
// when the coach gave feedback (or no decision).
var errNotApproved = errors.New("not approved")

// localFlags are what review and autobuild share: a database, a pack, a
// model, the local user the reviews are stored and budgeted for.
type localFlags struct {
	db               *string
	pack, user       string
	model            modelConfig
	requirements, ws string
	taskID, agent    string
	getenv           func(string) string
	env              *envDefaults // the model flags' defaults, checked by open
}

func (l *localFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	l.getenv = getenv
	l.db = dbFlag(fs, getenv)
	fs.StringVar(&l.pack, "pack", getenv("COACHD_PACK"), "coach pack with the coach (and player) agents; empty uses the built-in examples/autobuild (env COACHD_PACK)")
	fs.StringVar(&l.user, "user", "cli", "the local user reviews are stored and budgeted for (created if missing)")
	fs.StringVar(&l.requirements, "requirements", "", "file with the requirements, one per line (- or 1. prefixes are dropped)")
	fs.StringVar(&l.ws, "workspace", "", "the directory to review")
	fs.StringVar(&l.taskID, "task-id", "", "task id (default: TASK- and the workspace's directory name)")
	fs.StringVar(&l.agent, "agent", "", "the coach agent (default: the pack's agent with record_decision)")
	l.env = &envDefaults{getenv: getenv}
	l.model.register(fs, l.env)
}

// open checks the flags and builds the reviewer over a local database.
func (l *localFlags) open(ctx context.Context, name string, stderr io.Writer) (rv *review.Reviewer, u *coachd.User, reqs []string, closeDB func(), err error) {
	if err = l.env.check(); err == nil {
		err = l.model.check()
	}
	switch {
	case err != nil: // a model flag, or a variable it could not read
	case l.requirements == "":
		err = fmt.Errorf("--requirements is required")
	case l.ws == "":
		err = fmt.Errorf("--workspace is required")
	}
	if err != nil {
		fmt.Fprintf(stderr, "coachd %s: %v\n", name, err)
		return nil, nil, nil, nil, errUsage
	}
	if reqs, err = readRequirements(l.requirements); err != nil {
		return nil, nil, nil, nil, err
	}
	if l.taskID == "" {
		abs, _ := filepath.Abs(l.ws)
		l.taskID = "TASK-" + strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
				return r
			}
			return '-'
		}, filepath.Base(abs))
	}
	if !coachd.ValidTaskID(l.taskID) {
		return nil, nil, nil, nil, fmt.Errorf("--task-id %q: letters, digits, '.', '_' or '-', at most 100", l.taskID)
	}
	model, err := l.model.build(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if l.pack == "" {
		dir, err := examples.WriteAutobuild("")
		if err != nil {
			return nil, nil, nil, nil, err
		}
		defer os.RemoveAll(dir)
		l.pack = dir
		fmt.Fprintln(stderr, "coachd: using the built-in autobuild pack (examples/autobuild)")
	}
	pack, err := loadPack(l.pack, l.getenv, l.getenv("COACHD_WEBHOOK_ALLOW"), l.getenv("COACHD_WEBHOOK_SECRET"))
	if err != nil {
		return nil, nil, nil, nil, err
	}
	store, err := openCurrentDB(ctx, *l.db, true)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if l.model.Provider == "demo" && !coachHasProvider(pack, l.agent) {
		store.Close()
		fmt.Fprintf(stderr, "coachd %s: the offline demo model cannot review (it never calls validate_implementation or record_decision): "+
			"set ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL for another endpoint, such as coachd fake-anthropic), or --provider openai, bedrock or vertex\n", name)
		return nil, nil, nil, nil, errUsage
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	runner, err := newRunner(store, model, logger, pack, l.model, nil)
	if err != nil {
		store.Close()
		return nil, nil, nil, nil, err
	}
	if u, err = findUserByName(ctx, store, l.user); err == nil && u == nil {
		u = &coachd.User{Name: l.user, TokenBudget: defaultBudget}
		_, err = server.CreateUser(ctx, store, u)
	}
	if err != nil {
		store.Close()
		return nil, nil, nil, nil, fmt.Errorf("user %s: %w", l.user, err)
	}
	rv = &review.Reviewer{Runner: runner, Store: store, Agent: l.agent, Agents: pack.Agents, Logger: logger}
	return rv, u, reqs, func() { store.Close() }, nil
}

// coachHasProvider says whether the coach agent (the named one, else the
// pack's first with record_decision) names a provider of its own, and so
// does not run on the server's demo model.
func coachHasProvider(pack *agent.Pack, name string) bool {
	for _, a := range pack.Agents {
		if name == a.Name || name == "" && slices.Contains(a.Tools, review.DecisionTool) {
			return a.Provider != (agent.Provider{})
		}
	}
	return true // no such coach: the reviewer says so
}

// anyCoachHasProvider says whether some agent of the pack with
// record_decision, one a review may ask for, names a provider of its own.
func anyCoachHasProvider(pack *agent.Pack) bool {
	return slices.ContainsFunc(pack.Agents, func(a *agent.Agent) bool {
		return slices.Contains(a.Tools, review.DecisionTool) && a.Provider != (agent.Provider{})
	})
}

// runReview is "coachd review": one review of a directory, from the
// terminal. It prints the decision; exit code 0 is approve, 1 feedback.
func runReview(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("review", "Usage: coachd review --requirements FILE --workspace DIR [--player-report FILE] [--pack DIR] [flags]\n\n"+
		"Runs the validator coach over a directory: it reads the code, runs the allowed commands, and records a decision.\n"+
		"Prints the decision as JSON; exits 0 on approve, 1 on feedback.")
	var l localFlags
	l.register(fs, getenv)
	report := fs.String("player-report", "", "file with the player's report, a JSON object")
	if done, err := parseFlags(fs, args, stdout, stderr); done || err != nil {
		return err
	}
	var pr json.RawMessage
	if *report != "" {
		data, err := os.ReadFile(*report)
		if err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("--player-report %s: not a JSON object: %v", *report, err)
		}
		if errs := review.CheckPlayerReport(data); len(errs) > 0 {
			return fmt.Errorf("--player-report %s: %s", *report, errs[0])
		}
		pr = data
	}
	rv, u, reqs, closeDB, err := l.open(ctx, "review", stderr)
	if err != nil {
		return err
	}
	defer closeDB()
	dir, err := rv.Workspace("", l.ws)
	if err != nil {
		return fmt.Errorf("--workspace %s: %s", l.ws, coachd.ErrorMessage(err))
	}
	warnShared(stderr, "review", dir)
	run, err := rv.Prepare(ctx, review.Request{User: u, TaskID: l.taskID, Requirements: reqs, PlayerReport: pr, Dir: dir})
	if err != nil {
		return err
	}
	rev, res, err := run.Do(ctx, progress{stderr})
	if err != nil {
		return err
	}
	if res.Err != nil && rev.Decision == nil {
		return res.Err // the model failed: no review, not a "not approved"
	}
	return printDecision(stdout, rev, res.StopReason)
}

// printDecision prints the decision (or why there is none) and turns it
// into the exit status.
func printDecision(stdout io.Writer, rev *coachd.Review, stop string) error {
	if rev.Decision == nil {
		fmt.Fprintf(stdout, `{"decision":null,"task_id":%q,"stop_reason":%q}`+"\n", rev.TaskID, stop)
		return fmt.Errorf("%w: the coach recorded no decision (%s)", errNotApproved, stop)
	}
	var pretty map[string]any
	json.Unmarshal(rev.Decision, &pretty)
	b, _ := json.MarshalIndent(pretty, "", "  ")
	fmt.Fprintf(stdout, "%s\n", b)
	if !rev.Approved {
		return fmt.Errorf("%w: the coach gave feedback", errNotApproved)
	}
	return nil
}

// progress prints a review's tool calls to stderr as they happen.
type progress struct{ w io.Writer }

func (p progress) Send(ev coachd.Event) error {
	switch ev.Type {
	case coachd.EventToolCallReady:
		fmt.Fprintf(p.w, "→ %s %s\n", ev.ToolName, clip(strings.Join(strings.Fields(string(ev.Input)), " "), 120))
	case coachd.EventToolResult:
		mark := "✓"
		if ev.IsError {
			mark = "✗"
		}
		fmt.Fprintf(p.w, "  %s %s\n", mark, clip(strings.Join(strings.Fields(ev.Result), " "), 200))
	}
	return nil
}

// Requirements bounds, validate_implementation's.
const (
	maxRequirements   = 100
	maxRequirementLen = 2000
)

// readRequirements reads one requirement per non-empty line, dropping list
// markers ("- ", "* ", "1. ") and Markdown headings.
func readRequirements(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var reqs []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(strings.TrimPrefix(line, "- "), "* ")
		if i := strings.Index(line, ". "); i > 0 && strings.Trim(line[:i], "0123456789") == "" {
			line = line[i+2:]
		}
		if line = strings.TrimSpace(line); line != "" {
			reqs = append(reqs, line)
		}
	}
	if len(reqs) == 0 {
		return nil, fmt.Errorf("%s: no requirements", path)
	}
	// validate_implementation's bounds (and POST /v1/reviews's): past
	// them the coach could never start its validation.
	if len(reqs) > maxRequirements {
		return nil, fmt.Errorf("%s: %d requirements; at most %d", path, len(reqs), maxRequirements)
	}
	for i, r := range reqs {
		if n := utf8.RuneCountInString(r); n > maxRequirementLen {
			return nil, fmt.Errorf("%s: requirement %d is %d characters; at most %d", path, i+1, n, maxRequirementLen)
		}
	}
	return reqs, nil
}

// runAutobuild is "coachd autobuild": the player/coach loop over a scratch
// copy of a workspace.
func runAutobuild(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("autobuild", "Usage: coachd autobuild --requirements FILE --workspace DIR [--max-turns N] [--pack DIR] [flags]\n\n"+
		"A player agent implements the requirements in a scratch copy of the workspace; the coach reviews each attempt\n"+
		"and its feedback goes back to the player, until approve or N turns. Prints the diff and the decisions;\n"+
		"exits 0 when approved, 1 otherwise. The workspace itself is never changed.")
	var l localFlags
	l.register(fs, getenv)
	maxTurns := fs.Int("max-turns", 5, "player/coach rounds before giving up")
	player := fs.String("player", "", "the player agent (default: the pack's agent with write_file)")
	scratch := fs.String("scratch", getenv("COACHD_SCRATCH"), "directory for the scratch copies, writable by no other user, nor any directory above it (default: the user's cache directory's coachd/autobuild; env COACHD_SCRATCH)")
	if done, err := parseFlags(fs, args, stdout, stderr); done || err != nil {
		return err
	}
	if *maxTurns < 1 || *maxTurns > 50 {
		fmt.Fprintln(stderr, "coachd autobuild: --max-turns must be between 1 and 50")
		return errUsage
	}
	rv, u, reqs, closeDB, err := l.open(ctx, "autobuild", stderr)
	if err != nil {
		return err
	}
	defer closeDB()
	src, err := rv.Workspace("", l.ws)
	if err != nil {
		return fmt.Errorf("--workspace %s: %s", l.ws, coachd.ErrorMessage(err))
	}
	warnShared(stderr, "autobuild", src)
	b := &review.Build{Reviewer: rv, Player: *player, MaxTurns: *maxTurns, Log: stderr}
	res, err := b.Run(ctx, u, l.taskID, reqs, src, *scratch) // the scratch copy is left for the user to inspect
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "# workspace: %s (%d turn(s))\n%s", res.Dir, res.Turns, res.Diff)
	for i, rev := range res.Reviews {
		fmt.Fprintf(stdout, "# decision %d:\n%s\n", i+1, string(rev.Decision))
	}
	if !res.Approved {
		return fmt.Errorf("%w after %d turn(s)", errNotApproved, res.Turns)
	}
	fmt.Fprintln(stdout, "# approved")
	return nil
}

// warnShared warns when the workspace dir, where the tests run, or a
// directory above it may be written by another user (review.SharedAbove).
func warnShared(stderr io.Writer, cmd, dir string) {
	if err := review.SharedAbove(dir); err != nil {
		fmt.Fprintf(stderr, "coachd %s: warning: %s\n", cmd, coachd.ErrorMessage(err))
	}
}
