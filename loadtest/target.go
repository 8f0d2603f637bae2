package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/coachd/coachd/tools"
)

// Direct is the floor: the bare SDK calling the fake, nothing stored. A
// tool turn makes the same two calls a coachd turn makes (the call, then
// the text once the result is sent back), with a canned result.
type Direct struct {
	kind   Kind
	model  string
	client sdk.Client
	tool   sdk.ToolUnionParam

	// like, when set (Like), is the request a coach sends, Messages aside.
	like         *sdk.MessageNewParams
	sessionTurns int
	mu           sync.Mutex
	convs        map[int]*conversation
}

// conversation is one client's history on the floor that keeps one.
type conversation struct {
	msgs  []sdk.MessageParam
	turns int
}

// Like makes the floor send what a coach sends, so that what is left
// between it and coachd is what coachd does: raw is a request coachd made
// (as the fake recorded it), whose system prompt, cache markers, tools and
// settings every call reuses; and each client keeps its conversation for
// sessionTurns turns, as Coachd keeps a session, so the history sent grows
// as coachd's does. Only storing, budgets and streaming to a client are
// left out.
func (d *Direct) Like(raw []byte, sessionTurns int) error {
	var p sdk.MessageNewParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("loadtest: a coach's request: %w", err)
	}
	p.Messages = nil
	d.like, d.sessionTurns, d.convs = &p, max(sessionTurns, 1), map[int]*conversation{}
	return nil
}

// history returns the messages a client's turn starts from: its
// conversation so far (on a floor that keeps one) and the new message.
func (d *Direct) history(client int, text string) []sdk.MessageParam {
	msg := sdk.NewUserMessage(sdk.NewTextBlock(text))
	if d.like == nil {
		return []sdk.MessageParam{msg}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.convs[client]
	if c == nil || c.turns >= d.sessionTurns {
		c = &conversation{}
		d.convs[client] = c
	}
	return append(c.msgs[:len(c.msgs):len(c.msgs)], msg)
}

// keep stores a client's finished turn as its conversation.
func (d *Direct) keep(client int, msgs []sdk.MessageParam) {
	if d.like == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if c := d.convs[client]; c != nil {
		c.msgs, c.turns = msgs, c.turns+1
	}
}

// NewDirect returns the floor for kind against the fake at baseURL.
func NewDirect(baseURL, model string, kind Kind, clients int) *Direct {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients + 1}}
	def := tools.SaveNote{}.Definition()
	var schema sdk.ToolInputSchemaParam
	if err := json.Unmarshal(def.InputSchema, &schema); err != nil {
		panic(err) // a built-in schema
	}
	return &Direct{
		kind: kind, model: model,
		client: sdk.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey("loadtest"),
			option.WithHTTPClient(hc), option.WithMaxRetries(0)),
		tool: sdk.ToolUnionParam{OfTool: &sdk.ToolParam{Name: def.Name, Description: sdk.String(def.Description), InputSchema: schema}},
	}
}

// Turn plays one turn.
func (d *Direct) Turn(ctx context.Context, client, turn int) (Sample, error) {
	start := time.Now()
	var s Sample
	msgs := d.history(client, Message(d.kind, client, turn))
	for range 2 {
		p := sdk.MessageNewParams{Model: sdk.Model(d.model), MaxTokens: 4096, Messages: msgs}
		if d.like != nil {
			p = *d.like
			p.Messages = msgs
		} else if d.kind == Tool {
			p.Tools = []sdk.ToolUnionParam{d.tool}
		}
		stream := d.client.Messages.NewStreaming(ctx, p)
		var msg sdk.Message
		for stream.Next() {
			ev := stream.Current()
			if err := msg.Accumulate(ev); err != nil {
				stream.Close()
				return s, err
			}
			if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" {
				if s.Events == 0 {
					s.TTFT = time.Since(start)
				}
				s.Events++
			}
		}
		err := stream.Err()
		stream.Close()
		if err != nil {
			return s, err
		}
		if msg.StopReason != sdk.StopReasonToolUse {
			d.keep(client, append(msgs, msg.ToParam()))
			break
		}
		var results []sdk.ContentBlockParamUnion
		for _, b := range msg.Content {
			if b.Type == "tool_use" {
				results = append(results, sdk.NewToolResultBlock(b.ID, `{"saved":true}`, false))
			}
		}
		msgs = append(msgs, msg.ToParam(), sdk.NewUserMessage(results...))
	}
	s.Total = time.Since(start)
	if s.Events == 0 {
		return s, fmt.Errorf("no text streamed")
	}
	return s, nil
}

// Coachd plays turns through a coachd server's /v1/chat/stream (the
// coachd dialect). Each client has its own key (one user each) and keeps
// a session for SessionTurns turns before starting a new one.
type Coachd struct {
	URL          string
	Keys         []string // one per client; a single key is shared
	Agent        string
	Kind         Kind
	SessionTurns int // default 10

	hc       *http.Client
	mu       sync.Mutex
	sessions map[int]string
	counts   map[int]int
}

// NewCoachd returns a target for the server at url.
func NewCoachd(url string, keys []string, kind Kind, clients int) *Coachd {
	return &Coachd{
		URL: strings.TrimRight(url, "/"), Keys: keys, Kind: kind,
		hc:       &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients + 1}},
		sessions: map[int]string{}, counts: map[int]int{},
	}
}

// Turn plays one turn.
func (c *Coachd) Turn(ctx context.Context, client, turn int) (Sample, error) {
	n := c.SessionTurns
	if n <= 0 {
		n = 10
	}
	c.mu.Lock()
	session := c.sessions[client]
	if c.counts[client] >= n {
		session, c.counts[client] = "", 0
	}
	c.counts[client]++
	c.mu.Unlock()
	body, _ := json.Marshal(map[string]string{"message": Message(c.Kind, client, turn), "session_id": session, "agent": c.Agent})
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+"/v1/chat/stream", bytes.NewReader(body))
	if err != nil {
		return Sample{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.Keys[client%len(c.Keys)])
	resp, err := c.hc.Do(req)
	if err != nil {
		return Sample{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error, Message string }
		json.NewDecoder(resp.Body).Decode(&e)
		return Sample{}, fmt.Errorf("status %d: %s %s", resp.StatusCode, e.Error, e.Message)
	}
	var s Sample
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	event, ended := "", false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = line[len("event: "):]
			if event == "content_delta" {
				if s.Events == 0 {
					s.TTFT = time.Since(start)
				}
				s.Events++
			}
		case strings.HasPrefix(line, "data: ") && event == "message_start" && session == "":
			var m struct {
				SessionID string `json:"session_id"`
			}
			if json.Unmarshal([]byte(line[len("data: "):]), &m) == nil {
				c.mu.Lock()
				c.sessions[client] = m.SessionID
				c.mu.Unlock()
			}
		case strings.HasPrefix(line, "data: ") && event == "error":
			return s, fmt.Errorf("error event: %s", line[len("data: "):])
		case strings.HasPrefix(line, "data: ") && event == "message_end":
			ended = true
		}
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	s.Total = time.Since(start)
	if !ended || s.Events == 0 {
		return s, fmt.Errorf("stream ended without message_end or text (%d deltas)", s.Events)
	}
	return s, nil
}
