package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/stream"
)

// runChat is a terminal client: one turn when a message is given, a REPL
// otherwise. A stream cut by the network is picked up again where it
// stopped (Last-Event-ID); Ctrl-C stops the running turn (the server stores
// what was said so far) and exits.
func runChat(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("chat", "Usage: coachd chat [flags] [message]\n\n"+
		"Talks to a coach. With a message, runs one turn and exits; without, reads messages line by line.")
	base := fs.String("url", envOr(getenv, "COACHD_URL", "http://127.0.0.1:8080"), "server URL (env COACHD_URL)")
	key := new(string)
	secretVar(fs, key, "key", getenv("COACHD_KEY"), "your API `key`, ck_… (env COACHD_KEY)")
	sid := fs.String("session", "", "continue this session")
	agentName := fs.String("agent", "", "agent for a new session")
	reconnectFor := fs.Duration("reconnect-for", time.Minute, "give up reconnecting to a turn after this long without an event (and sending a one-shot message refused for now)")
	if done, err := parseFlagsArgs(fs, args, stdout, stderr); done || err != nil {
		return err
	}
	if *key == "" {
		fmt.Fprintln(stderr, "coachd chat: --key (or COACHD_KEY) is required")
		return errUsage
	}
	if *reconnectFor <= 0 {
		fmt.Fprintln(stderr, "coachd chat: --reconnect-for must be positive")
		return errUsage
	}
	c := &chatter{cl: client.New(*base, *key, nil), session: *sid, agent: *agentName, reconnectFor: *reconnectFor,
		in: bufio.NewReader(stdin), out: stdout, errOut: stderr}
	if msg := strings.Join(fs.Args(), " "); msg != "" {
		c.oneShot = true
		err := c.turn(ctx, client.ChatRequest{Message: msg})
		if c.session != "" && (err == nil || c.session != *sid) {
			// On stderr, so stdout stays the reply: continue with
			// --session. Not for a --session the turn failed on (not
			// found, say): that would read as one to go on with.
			fmt.Fprintf(stderr, "session: %s\n", c.session)
		}
		return err
	}
	for {
		fmt.Fprint(stdout, "\nyou> ")
		line, err := c.in.ReadString('\n')
		if line = strings.TrimSpace(line); line != "" {
			if err := c.turn(ctx, client.ChatRequest{Message: line}); refusedForNow(err) {
				// Refused for now (the database, the server, a limit,
				// the session's turn still running): the conversation
				// goes on at the next prompt.
				fmt.Fprintf(stderr, "coachd chat: %v\n", err)
			} else if err != nil {
				return err
			}
		}
		if err != nil || ctx.Err() != nil {
			fmt.Fprintln(stdout)
			return nil
		}
	}
}

type chatter struct {
	cl      *client.Client
	session string
	agent   string
	// reconnectFor bounds the reconnects to a turn: how long without an
	// event before chat gives up.
	reconnectFor time.Duration
	in           *bufio.Reader
	out          io.Writer
	errOut       io.Writer // notices: reconnecting

	// oneShot is a message given on the command line: one refused for
	// now is sent again (the prompt says why and prompts again).
	oneShot bool
}

// isNetErr reports a stream lost on the way (not an error the server
// sent).
func isNetErr(err error) bool {
	if err == nil {
		return false
	}
	var ce *coachd.Error
	return !errors.As(err, &ce)
}

// turn streams one turn, then answers any interaction it ends on.
func (c *chatter) turn(ctx context.Context, req client.ChatRequest) error {
	for {
		req.SessionID, req.Agent = c.session, c.agent
		var pending *interaction
		lastID, ended := "", false
		var notice error // the server's notice to resume, ending the stream
		news := time.Now()
		show := func(ev client.Event) error {
			if id, e := resumeNotice(ev); e != nil {
				// The server is going down (the turn's end is in its log
				// for the next one to give), or its database is, for now
				// (the turn goes on): resume after id.
				lastID, notice = id, e
				return nil
			}
			news = time.Now()
			lastID, ended = ev.ID, ev.Name == "message_end" || ev.Name == "error"
			p, err := c.show(ev)
			if p != nil {
				pending = p
			}
			return err
		}
		// One key per message, kept across its retries: a message sent
		// again after its answer was lost gets that answer, not a second
		// turn.
		opt := client.StreamOptions{IdempotencyKey: "chat_" + rand.Text()}
		sid, err := c.cl.ChatStream(ctx, req, opt, show)
		// The request lost before any event: sent again, the same.
		for try := 0; try < 5 && ctx.Err() == nil && lastID == "" && isNetErr(err); try++ {
			fmt.Fprintln(c.errOut, "\n(reconnecting…)")
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(250<<try) * time.Millisecond):
			}
			if ctx.Err() == nil {
				sid, err = c.cl.ChatStream(ctx, req, opt, show)
			}
		}
		// A message given on the command line, refused for now (the
		// database or the server going down) or still unreachable: no
		// one is at a prompt to send it again, so chat does, with its
		// key, as it reconnects to a turn: for up to reconnectFor.
		for try, since := 0, time.Now(); c.oneShot && ctx.Err() == nil && lastID == "" && (isNetErr(err) || retryLater(err) >= 0); try++ {
			wait := max(min(time.Duration(250<<min(try, 5))*time.Millisecond, 5*time.Second), retryLater(err))
			if time.Since(since)+wait > c.reconnectFor {
				err = fmt.Errorf("chat: gave up sending the message after %s: %w", c.reconnectFor, err)
				break
			}
			fmt.Fprintln(c.errOut, "\n(retrying…)")
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
			if ctx.Err() == nil {
				sid, err = c.cl.ChatStream(ctx, req, opt, show)
			}
		}
		if sid != "" {
			c.session = sid
		}
		// A stream cut before the turn's end, ended by the server's
		// notice to come back, or a reconnect answered "not now": the
		// turn goes on (or its end is logged); pick it up after the last
		// event shown. A restart or a failover may take a while: the
		// waits grow to 5 s (at least the server's Retry-After), and chat
		// gives up after reconnectFor without an event since the stream
		// was lost.
		news = time.Now()
		for try := 0; ctx.Err() == nil && !ended && lastID != "" && c.session != "" && (isNetErr(err) || notice != nil || retryLater(err) >= 0); try++ {
			if notice != nil {
				err, notice = notice, nil
			}
			wait := max(min(time.Duration(250<<min(try, 5))*time.Millisecond, 5*time.Second), retryLater(err))
			if time.Since(news)+wait > c.reconnectFor {
				err = fmt.Errorf("chat: gave up reconnecting after %s without news of the turn: %w", c.reconnectFor, err)
				break
			}
			fmt.Fprintln(c.errOut, "\n(reconnecting…)")
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
			err = c.cl.Resume(ctx, c.session, lastID, client.StreamOptions{}, show)
		}
		if ctx.Err() != nil {
			// Ctrl-C: the turn would go on without us; stop it.
			if c.session != "" && !ended {
				sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				c.cl.Stop(sctx, c.session)
				cancel()
			}
			fmt.Fprintln(c.out, "\n(stopped)")
			return nil
		}
		if err == nil && !ended && lastID != "" {
			err = errors.New("chat: the stream ended before the turn did")
		}
		if err != nil {
			return err
		}
		if pending == nil {
			return nil
		}
		answer, ok := c.ask(pending)
		if !ok {
			return nil
		}
		req = client.ChatRequest{ToolResult: &client.ToolResult{ToolUseID: pending.ToolUseID, Content: answer}}
	}
}

// retryLater reports how long the server said to wait (Retry-After, 0 if
// it named no time) when it answered a request (a reconnect, a turn) with
// a retryable refusal: its database unavailable for now, or the server
// going down. It is -1 for anything else.
func retryLater(err error) time.Duration {
	var ce *coachd.Error
	if errors.As(err, &ce) && (ce.Code == coachd.EUNAVAILABLE || ce.Code == stream.CodeShutdown) {
		return ce.RetryAfter
	}
	return -1
}

// refusedForNow reports an error that may clear by the next prompt:
// retryLater's, a limit, the model busy, or a turn still running on the
// session (another client's, or one chat gave up following).
func refusedForNow(err error) bool {
	switch coachd.ErrorCode(err) {
	case coachd.ERATELIMITED, coachd.EUPSTREAMBUSY, coachd.ETURNINPROGRESS:
		return true
	}
	return retryLater(err) >= 0
}

// resumeNotice reports a retryable error that ends a stream with the
// event id to resume after: server_shutdown (the server going down) or
// unavailable (its database, for now), as an error, and that id.
func resumeNotice(ev client.Event) (string, error) {
	if ev.Name != "error" {
		return "", nil
	}
	var e struct {
		Type        string `json:"type"`
		Message     string `json:"message"`
		Retryable   bool   `json:"retryable"`
		RetryAfter  int64  `json:"retry_after"`
		LastEventID string `json:"last_event_id"`
	}
	if json.Unmarshal(ev.Data, &e) != nil || e.Type != stream.CodeShutdown && e.Type != coachd.EUNAVAILABLE || !e.Retryable || e.LastEventID == "" {
		return "", nil
	}
	return e.LastEventID, &coachd.Error{Code: e.Type, Message: e.Message, Retryable: true, RetryAfter: time.Duration(e.RetryAfter) * time.Second}
}

type interaction struct {
	ToolUseID string `json:"tool_use_id"`
	Name      string `json:"name"`
	Input     struct {
		Prompt  string   `json:"prompt"`
		Options []string `json:"options"`
		Context string   `json:"context"`
	} `json:"input"`
}

// show prints one event of the coachd dialect.
func (c *chatter) show(ev client.Event) (*interaction, error) {
	var d struct {
		Text       string `json:"text"`
		Name       string `json:"name"`
		Result     string `json:"result"`
		IsError    bool   `json:"is_error"`
		Type       string `json:"type"`
		Message    string `json:"message"`
		StopReason string `json:"stop_reason"`
	}
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		return nil, fmt.Errorf("chat: bad %s event: %w", ev.Name, err)
	}
	switch ev.Name {
	case "content_delta":
		fmt.Fprint(c.out, d.Text)
	case "function_call":
		fmt.Fprintf(c.out, "\n  → %s\n", d.Name)
	case "function_result":
		mark := "←"
		if d.IsError {
			mark = "✗"
		}
		fmt.Fprintf(c.out, "  %s %s: %s\n", mark, d.Name, clip(d.Result, 160))
	case "round_boundary":
		fmt.Fprintln(c.out)
	case "interaction":
		var in interaction
		if err := json.Unmarshal(ev.Data, &in); err != nil {
			return nil, fmt.Errorf("chat: bad interaction: %w", err)
		}
		return &in, nil
	case "approval_required":
		// Shown as two options; the pick ("Approve" / "Deny") is the answer.
		var a struct {
			ToolUseID string          `json:"tool_use_id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			Reason    string          `json:"reason"`
		}
		if err := json.Unmarshal(ev.Data, &a); err != nil {
			return nil, fmt.Errorf("chat: bad approval_required: %w", err)
		}
		in := &interaction{ToolUseID: a.ToolUseID, Name: a.Name}
		in.Input.Prompt = a.Reason + ": " + a.Name + " " + clip(string(a.Input), 300)
		in.Input.Options = []string{"Approve", "Deny"}
		return in, nil
	case "error":
		fmt.Fprintf(c.out, "\n[error %s] %s\n", d.Type, d.Message)
	case "message_end":
		if d.StopReason != "end_turn" && d.StopReason != "awaiting_input" {
			fmt.Fprintf(c.out, "\n(turn ended: %s)", d.StopReason)
		}
		fmt.Fprintln(c.out)
	}
	return nil, nil
}

// ask prompts for the answer to an interaction; false means the user gave
// none (end of input).
func (c *chatter) ask(p *interaction) (json.RawMessage, bool) {
	if p.Input.Prompt != "" {
		fmt.Fprintln(c.out, p.Input.Prompt)
	}
	if p.Input.Context != "" {
		fmt.Fprintln(c.out, p.Input.Context)
	}
	for i, o := range p.Input.Options {
		fmt.Fprintf(c.out, "  %d) %s\n", i+1, o)
	}
	for {
		if len(p.Input.Options) > 0 {
			fmt.Fprintf(c.out, "choose 1-%d> ", len(p.Input.Options))
		} else {
			fmt.Fprint(c.out, "answer> ")
		}
		line, err := c.in.ReadString('\n')
		line = strings.TrimSpace(line)
		if n, convErr := strconv.Atoi(line); convErr == nil && n >= 1 && n <= len(p.Input.Options) {
			line = p.Input.Options[n-1]
		} else if len(p.Input.Options) > 0 && line != "" && err == nil {
			continue
		}
		if line == "" {
			if err != nil {
				return nil, false
			}
			continue
		}
		b, _ := json.Marshal(line)
		return b, true
	}
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
