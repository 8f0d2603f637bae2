// Package voice is coachd's realtime voice provider: OpenAI's Realtime API
// for short-lived client secrets (the browser talks to the provider
// directly, the long-lived key never leaves the server) and its speech
// endpoint for text to speech. It speaks plain HTTP+JSON; no SDK is
// needed for two calls.
package voice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/coachd/coachd"
)

// Defaults of Config.
const (
	DefaultBaseURL            = "https://api.openai.com"
	DefaultModel              = "gpt-realtime"
	DefaultVoice              = "alloy"
	DefaultTranscriptionModel = "whisper-1"
	DefaultTTSModel           = "gpt-4o-mini-tts"
	DefaultSecretTTL          = 10 * time.Minute
	DefaultTimeout            = 30 * time.Second
)

// Limits of the requests coachd sends.
const (
	// MaxInstructions bounds the instructions sent with a session: the
	// provider refuses very long ones, and a coach's prompt fits.
	MaxInstructions = 64 << 10
	// MaxSpeechChars is the speech endpoint's input limit.
	MaxSpeechChars = 4096
	// maxSecretTTL is the longest a provider's secret lasts.
	maxSecretTTL = 2 * time.Hour
	// expirySkew is how far the provider's clock may be from ours.
	expirySkew = 5 * time.Minute
	// maxErrorBody bounds how much of a provider error is read (to log).
	maxErrorBody = 16 << 10
)

// Formats maps the speech formats to their Content-Type.
var Formats = map[string]string{
	"mp3":  "audio/mpeg",
	"opus": "audio/ogg",
	"aac":  "audio/aac",
	"flac": "audio/flac",
	"wav":  "audio/wav",
	"pcm":  "audio/L16;rate=24000;channels=1", // raw 16-bit little-endian samples at 24 kHz
}

// Config configures a Client. APIKey is required; zero fields take the
// defaults.
type Config struct {
	APIKey  string
	BaseURL string // scheme://host[:port], without /v1
	// Model, Voice and TranscriptionModel are the realtime session's
	// defaults; an agent's voice settings override them.
	Model              string
	Voice              string
	TranscriptionModel string
	TTSModel           string
	// SecretTTL is how long a minted secret can open a connection (the
	// provider allows 10 s to 2 h; the session may outlive it).
	SecretTTL time.Duration
	// HTTPClient sends the requests; nil uses one with Timeout.
	HTTPClient *http.Client
	// Timeout bounds a call until its answer starts, and a pause in
	// streamed speech.
	Timeout time.Duration
	Logger  *slog.Logger
}

// Client calls the voice provider.
type Client struct {
	cfg Config
	hc  *http.Client
}

// New returns a Client.
func New(cfg Config) *Client {
	def := func(s *string, d string) {
		if *s == "" {
			*s = d
		}
	}
	def(&cfg.BaseURL, DefaultBaseURL)
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	def(&cfg.Model, DefaultModel)
	def(&cfg.Voice, DefaultVoice)
	def(&cfg.TranscriptionModel, DefaultTranscriptionModel)
	def(&cfg.TTSModel, DefaultTTSModel)
	if cfg.SecretTTL <= 0 {
		cfg.SecretTTL = DefaultSecretTTL
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	// No client-wide timeout by default: speech streams as long as it
	// needs; requests carry their own deadline until the answer starts.
	// No redirect is followed: it would take the request elsewhere.
	return &Client{cfg: cfg, hc: coachd.NoRedirects(cfg.HTTPClient)}
}

// Defaults returns the configured model, voice and transcription model.
func (c *Client) Defaults() (model, voice, transcription string) {
	return c.cfg.Model, c.cfg.Voice, c.cfg.TranscriptionModel
}

// BaseURL is the provider's origin (the browser connects there).
func (c *Client) BaseURL() string { return c.cfg.BaseURL }

// SessionRequest configures a realtime session; empty fields take the
// client's defaults.
type SessionRequest struct {
	Model              string
	Voice              string
	TranscriptionModel string
	Instructions       string
}

// Secret is a minted client secret.
type Secret struct {
	Value     string
	ExpiresAt time.Time
	Model     string
	Voice     string
}

// Mint creates a short-lived client secret for a realtime session with
// the given instructions, voice and transcription model
// (POST /v1/realtime/client_secrets).
func (c *Client) Mint(ctx context.Context, req SessionRequest) (*Secret, error) {
	if req.Model == "" {
		req.Model = c.cfg.Model
	}
	if req.Voice == "" {
		req.Voice = c.cfg.Voice
	}
	if req.TranscriptionModel == "" {
		req.TranscriptionModel = c.cfg.TranscriptionModel
	}
	if len(req.Instructions) > MaxInstructions {
		return nil, coachd.Errorf(coachd.EINVALID, "the coach's instructions are over %d bytes, too long for a voice session", MaxInstructions)
	}
	body := clientSecretRequest{ExpiresAfter: expiresAfter{Anchor: "created_at", Seconds: int64(c.cfg.SecretTTL / time.Second)}}
	body.Session.Type = "realtime"
	body.Session.Model = req.Model
	body.Session.Instructions = req.Instructions
	body.Session.Audio.Input.Transcription.Model = req.TranscriptionModel
	body.Session.Audio.Output.Voice = req.Voice
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	resp, err := c.post(ctx, "/v1/realtime/client_secrets", body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out clientSecretResponse
	err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// Headers came, the secret did not: slow, not garbled.
		return nil, &coachd.Error{Code: coachd.ETIMEOUT, Message: "the voice provider did not answer in time", Err: err}
	}
	if err != nil || out.Value == "" || out.ExpiresAt <= 0 {
		return nil, &coachd.Error{Code: coachd.EAPI, Message: "the voice provider sent an unreadable client secret", Err: err}
	}
	// An expiry past or beyond what any secret lasts (give or take clock
	// skew) is not a secret's: in milliseconds it is the year 50000. A
	// compatible provider may keep its own lifetime within that.
	exp, now := time.Unix(out.ExpiresAt, 0).UTC(), time.Now()
	if exp.Before(now.Add(-expirySkew)) || exp.After(now.Add(max(c.cfg.SecretTTL, maxSecretTTL)+expirySkew)) {
		return nil, coachd.Errorf(coachd.EAPI, "the voice provider sent a client secret with an unusable expiry")
	}
	s := &Secret{Value: out.Value, ExpiresAt: exp, Model: req.Model, Voice: req.Voice}
	// The provider's names are passed on and stored only when they are names.
	if m := out.Session.Model; coachd.ValidVoiceModel(m) {
		s.Model = m
	}
	if v := out.Session.Audio.Output.Voice; coachd.ValidVoice(v) {
		s.Voice = v
	}
	return s, nil
}

// SpeechRequest is text to turn into audio; empty Model and Voice take
// the client's defaults, an empty Format is mp3.
type SpeechRequest struct {
	Text   string
	Voice  string
	Format string
	Model  string
}

// Speech asks for the text spoken (POST /v1/audio/speech) and returns the
// audio as it arrives, with its Content-Type. The caller closes it.
func (c *Client) Speech(ctx context.Context, req SpeechRequest) (io.ReadCloser, string, error) {
	if req.Model == "" {
		req.Model = c.cfg.TTSModel
	}
	if req.Voice == "" {
		req.Voice = c.cfg.Voice
	}
	if req.Format == "" {
		req.Format = "mp3"
	}
	ct, ok := Formats[req.Format]
	if !ok {
		return nil, "", coachd.Errorf(coachd.EINVALID, "unknown audio format %q", req.Format)
	}
	// The deadline holds until the answer starts; the audio itself may
	// take as long as the caller's context allows.
	ctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(c.cfg.Timeout, cancel)
	resp, err := c.post(ctx, "/v1/audio/speech", speechRequest{Model: req.Model, Input: req.Text, Voice: req.Voice, ResponseFormat: req.Format})
	if !timer.Stop() && err != nil {
		err = &coachd.Error{Code: coachd.ETIMEOUT, Message: "the voice provider did not answer in time", Err: err}
	}
	if err != nil {
		cancel()
		return nil, "", err
	}
	// Audio that stops arriving for as long is cut: a stalled provider
	// would hold the request (and its connection) for as long as the
	// caller waits.
	idle := time.AfterFunc(c.cfg.Timeout, cancel)
	return &cancelBody{ReadCloser: resp.Body, cancel: cancel, idle: idle, timeout: c.cfg.Timeout}, ct, nil
}

type cancelBody struct {
	io.ReadCloser
	cancel  context.CancelFunc
	idle    *time.Timer
	timeout time.Duration
}

func (b *cancelBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.idle.Reset(b.timeout)
	}
	return n, err
}

func (b *cancelBody) Close() error {
	b.idle.Stop()
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// post sends body as JSON with the key and returns a 2xx response; any
// other answer is a coded error whose message holds nothing the provider
// said (its text may quote part of the key), which is logged instead.
func (c *Client) post(ctx context.Context, path string, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.BaseURL+path, bytes.NewReader(b))
	if err != nil {
		return nil, coachd.Errorf(coachd.EINTERNAL, "voice provider request: %v", err)
	}
	r.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	r.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(r)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, &coachd.Error{Code: coachd.ETIMEOUT, Message: "the voice provider did not answer in time", Err: c.redact(err)}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ce *coachd.Error
		if errors.As(err, &ce) {
			return nil, ce // a refused redirect
		}
		return nil, &coachd.Error{Code: coachd.EAPI, Message: "the voice provider could not be reached", Err: c.redact(err)}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	c.cfg.Logger.Warn("voice provider error", "path", path, "status", resp.StatusCode, "body", coachd.UpstreamText(c.redactString(string(text)), coachd.MaxUpstreamText))
	return nil, statusError(resp)
}

// statusError maps a provider status to a coded error: 429 is upstream
// busy (retry shortly), a refused key is upstream auth, anything else an
// upstream failure.
func statusError(resp *http.Response) error {
	st := resp.StatusCode
	switch {
	case st == http.StatusTooManyRequests:
		e := coachd.Errorf(coachd.EUPSTREAMBUSY, "the voice provider is busy; retry in a few seconds")
		if secs, err := time.ParseDuration(resp.Header.Get("Retry-After") + "s"); err == nil && secs > 0 && secs <= time.Minute {
			e.RetryAfter = secs
		}
		return e
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		return coachd.Errorf(coachd.EUPSTREAMAUTH, "the voice provider refused this server's credentials (status %d)", st)
	case st >= 500:
		return coachd.Errorf(coachd.EAPI, "the voice provider failed (status %d)", st)
	}
	return coachd.Errorf(coachd.EAPI, "the voice provider refused the request (status %d)", st)
}

// redact removes the key from an error's text (a transport error may
// quote the request).
func (c *Client) redact(err error) error {
	return errors.New(c.redactString(err.Error()))
}

func (c *Client) redactString(s string) string { return coachd.Redacted(s, c.cfg.APIKey) }

// The provider's wire shapes (Realtime GA client secrets, audio speech).

type expiresAfter struct {
	Anchor  string `json:"anchor"`
	Seconds int64  `json:"seconds"`
}

type clientSecretRequest struct {
	ExpiresAfter expiresAfter `json:"expires_after"`
	Session      struct {
		Type         string `json:"type"`
		Model        string `json:"model"`
		Instructions string `json:"instructions,omitempty"`
		Audio        struct {
			Input struct {
				Transcription struct {
					Model string `json:"model"`
				} `json:"transcription"`
			} `json:"input"`
			Output struct {
				Voice string `json:"voice"`
			} `json:"output"`
		} `json:"audio"`
	} `json:"session"`
}

type clientSecretResponse struct {
	Value     string `json:"value"`
	ExpiresAt int64  `json:"expires_at"`
	Session   struct {
		Model string `json:"model"`
		Audio struct {
			Output struct {
				Voice string `json:"voice"`
			} `json:"output"`
		} `json:"audio"`
	} `json:"session"`
}

type speechRequest struct {
	Model          string `json:"model"`
	Input          string `json:"input"`
	Voice          string `json:"voice"`
	ResponseFormat string `json:"response_format"`
}

// String keeps the key out of any %v of a Config.
func (c Config) String() string {
	key := "(unset)"
	if c.APIKey != "" {
		key = "(set)"
	}
	return fmt.Sprintf("voice{base_url=%s model=%s voice=%s api_key=%s}", c.BaseURL, c.Model, c.Voice, key)
}
