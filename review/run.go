package review

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// Reviewer runs the validator coach over workspaces and stores what it
// decided.
type Reviewer struct {
	Runner *agent.Runner
	Store  coachd.ReviewService
	// Root confines the workspaces a request may name (POST /v1/reviews):
	// each user's are the subdirectories of Root/<user id>, so no user
	// reviews, and reads through the coach's tools, another's. "" lets
	// Workspace accept any directory (the CLI, run by its owner).
	Root string
	// Agent is the coach used when a request names none; "" picks the
	// first agent that has record_decision.
	Agent  string
	Agents []*agent.Agent
	Logger *slog.Logger
}

// Request is one review.
type Request struct {
	User         *coachd.User
	TaskID       string
	Requirements []string
	PlayerReport json.RawMessage // the player's report, a JSON object (may be empty)
	Dir          string          // the workspace, from Workspace
	Agent        string
	// Base is the commit git_diff compares with ("" is the workspace's
	// HEAD): in autobuild, the scratch copy's HEAD before the player ran.
	Base string
	// Changed are, in autobuild, the paths the player's turns changed,
	// added or removed, found by comparing the scratch copy with itself
	// as the build began (treeManifest): part of the change under review
	// whatever the player's report or git says. Unknown says why they
	// could not be read ("" when they were): no approval is taken then.
	Changed []string
	Unknown string
}

// Workspace resolves a workspace name from userID's request to a
// directory under Root/<userID>: relative, no "..", no symlink out of
// it, an existing directory. Without Root, name is any directory and
// userID is not used.
func (rv *Reviewer) Workspace(userID, name string) (string, error) {
	bad := func(msg string) error {
		return coachd.Invalid(coachd.FieldError{Field: "workspace", Message: msg, Code: "format"})
	}
	if rv.Root == "" {
		abs, err := filepath.Abs(name)
		if err != nil {
			return "", bad(err.Error())
		}
		return existingDir(abs, bad)
	}
	if name == "" || filepath.IsAbs(name) || strings.ContainsRune(name, 0) || !filepath.IsLocal(name) {
		return "", bad("must be a directory name under the workspaces root, without .. or a leading /")
	}
	if !filepath.IsLocal(userID) || strings.ContainsAny(userID, `/\`) {
		return "", coachd.Errorf(coachd.EINTERNAL, "workspaces: user id %q is not a directory name", userID)
	}
	root, err := filepath.EvalSymlinks(rv.Root)
	if err != nil {
		return "", coachd.Errorf(coachd.EINTERNAL, "workspaces root: %v", err)
	}
	if root, err = filepath.EvalSymlinks(filepath.Join(root, userID)); err != nil {
		return "", coachd.Errorf(coachd.ENOTFOUND, "workspace %q not found: this user has no workspaces", name)
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(root, name))
	if err != nil {
		return "", coachd.Errorf(coachd.ENOTFOUND, "workspace %q not found", name)
	}
	if rel, err := filepath.Rel(root, dir); err != nil || !filepath.IsLocal(rel) {
		return "", bad("leads outside the workspaces root")
	}
	return existingDir(dir, bad)
}

func existingDir(dir string, bad func(string) error) (string, error) {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return "", bad("is not a directory")
	}
	return dir, nil
}

// coach returns the agent a request asks for, or the default coach.
func (rv *Reviewer) coach(name string) (*agent.Agent, error) {
	if name == "" {
		name = rv.Agent
	}
	if name != "" {
		a, ok := rv.Runner.Agent(name)
		if !ok {
			return nil, coachd.Errorf(coachd.ENOTFOUND, "agent %q not found", name)
		}
		if !slices.Contains(a.Tools, DecisionTool) {
			return nil, coachd.Invalid(coachd.FieldError{Field: "agent", Message: "is not a reviewer: it has no record_decision tool", Code: "format"})
		}
		return a, nil
	}
	for _, a := range rv.Agents {
		if slices.Contains(a.Tools, DecisionTool) {
			return a, nil
		}
	}
	return nil, coachd.Errorf(coachd.ENOTFOUND, "the pack has no reviewer agent (one with record_decision)")
}

// Run is a prepared review holding its session's turn slot: Do it.
type Run struct {
	rv    *Reviewer
	req   Request
	agent *agent.Agent
	turn  *agent.Turn
	trace *Trace
	ws    *Workspace
}

// Prepare checks a review and prepares the coach's turn, its tools bound
// to the workspace and a new trace. Errors happen before anything runs.
func (rv *Reviewer) Prepare(ctx context.Context, req Request) (*Run, error) {
	ag, err := rv.coach(req.Agent)
	if err != nil {
		return nil, err
	}
	tr := NewTrace(req.TaskID, req.Requirements...)
	tr.reportFiles = reportedFiles(req.PlayerReport)
	tr.buildFiles, tr.buildUnknown = req.Changed, req.Unknown
	ws, err := NewWorkspace(req.Dir, Options{Commands: ag.Commands, Trace: tr, Base: req.Base})
	if err != nil {
		return nil, err
	}
	turn, err := rv.Runner.Prepare(ctx, agent.TurnRequest{
		User: req.User, Agent: ag.Name, Message: Brief(req), Trusted: true,
		Bound: append(ws.Tools(), DecisionTools(tr)...),
	})
	if err != nil {
		ws.Close()
		return nil, err
	}
	return &Run{rv: rv, req: req, agent: ag, turn: turn, trace: tr, ws: ws}, nil
}

// reportedFiles are the files_modified of a player's report (none when
// it names none, or not as a list of strings).
func reportedFiles(report json.RawMessage) []string {
	var r struct {
		Files []string `json:"files_modified"`
	}
	if json.Unmarshal(report, &r) != nil {
		return nil
	}
	return r.Files
}

// SessionID is the coach's session.
func (r *Run) SessionID() string { return r.turn.SessionID() }

// Do runs the coach's turn and stores the review: the decision recorded
// (nil if none) and the trace. The turn's result says why it ended.
func (r *Run) Do(ctx context.Context, sink coachd.EventSink) (*coachd.Review, *agent.Result, error) {
	res := r.turn.Run(ctx, sink)
	// Read first: a call the turn left behind decides nothing after this,
	// and none checks an approval against a closed workspace.
	decision, approved := r.trace.Decision()
	r.ws.Close() // the review's runs are over
	trace := storedTrace(r.trace)
	rev := &coachd.Review{
		UserID: r.req.User.ID, TaskID: r.req.TaskID, SessionID: res.SessionID, Agent: r.agent.Name,
		Approved: approved, Decision: decision, Trace: trace,
	}
	// Stored even when the client left: the work was done and paid for.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := r.rv.Store.CreateReview(sctx, rev); err != nil {
		return nil, res, err
	}
	if r.rv.Logger != nil {
		r.rv.Logger.Info("review recorded", "task", rev.TaskID, "user", rev.UserID, "approved", approved,
			"decided", decision != nil, "stop", res.StopReason)
	}
	return rev, res, nil
}

// storedTrace is the trace as a review keeps it: whole when it fits, else
// without its commands' outputs (what ran, how long, its exit code and
// test counts stay: they are the proof of an independent verification),
// else only its size.
func storedTrace(tr *Trace) json.RawMessage {
	trace, err := json.Marshal(tr)
	if err == nil && len(trace) > coachd.ReviewTraceMax {
		var short []byte
		if short, err = tr.marshal(false); err == nil && len(short) <= coachd.ReviewTraceMax {
			return short
		}
	}
	if err != nil || len(trace) > coachd.ReviewTraceMax {
		return []byte(fmt.Sprintf(`{"truncated":true,"bytes":%d}`, len(trace)))
	}
	return trace
}

// Brief is the coach's first message, in the seed orchestrator's format:
// the task, the original requirements, the player's report.
func Brief(req Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Task: %s\nValidate the Player's implementation in the workspace.\n\n## Original Requirements\n", req.TaskID)
	for i, r := range req.Requirements {
		fmt.Fprintf(&b, "%d. %s\n", i+1, strings.TrimSpace(r))
	}
	report := "{}"
	if len(req.PlayerReport) > 0 {
		report = string(req.PlayerReport)
	}
	fmt.Fprintf(&b, "\n## Player Report\n%s\n", report)
	return b.String()
}
