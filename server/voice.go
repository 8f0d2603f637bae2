package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/voice"
)

// Voice: realtime secrets minted for the browser (the long-lived provider
// key stays here), text to speech streamed through, and the transcripts a
// voice client posts back stored in the session.

// errNoVoice answers the voice routes of a server without a provider key.
func errNoVoice() error {
	return coachd.Errorf(coachd.EFORBIDDEN, "voice is not configured on this server: start coachd with COACHD_OPENAI_API_KEY (or OPENAI_API_KEY) set")
}

// voiceOn answers errNoVoice on a server without a voice provider, before
// any limit is counted.
func (s *Server) voiceOn(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.voice == nil {
			s.Error(w, r, errNoVoice())
			return
		}
		h.ServeHTTP(w, r)
	})
}

// voiceInfo is GET /v1/voice: whether the UI may offer voice, and with
// what.
type voiceInfo struct {
	Enabled            bool     `json:"enabled"`
	Model              string   `json:"model,omitempty"`
	Voice              string   `json:"voice,omitempty"`
	TranscriptionModel string   `json:"transcription_model,omitempty"`
	Voices             []string `json:"voices"`
	Formats            []string `json:"formats"`
	// ConnectURL is where a browser opens the realtime call (WebRTC SDP
	// offer) with the minted secret.
	ConnectURL string `json:"connect_url,omitempty"`
}

func (s *Server) handleVoiceInfo() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := voiceInfo{Voices: []string{}, Formats: []string{}}
		if s.voice != nil {
			info.Enabled = true
			info.Model, info.Voice, info.TranscriptionModel = s.voice.Defaults()
			info.Voices = coachd.Voices
			info.Formats = speechFormats
			info.ConnectURL = s.voice.BaseURL() + "/v1/realtime/calls"
		}
		s.encode(w, r, http.StatusOK, info)
	})
}

var speechFormats = []string{"mp3", "opus", "aac", "flac", "wav", "pcm"}

type realtimeRequest struct {
	SessionID string `json:"session_id"`
	Agent     string `json:"agent"`
	// Seed 001's client sends these; the coach knows its user already.
	SnapshotID json.RawMessage `json:"snapshotId"`
	UserID     json.RawMessage `json:"userId"`
	StrategyID json.RawMessage `json:"strategyId"`
}

func (req realtimeRequest) Valid(context.Context) []coachd.FieldError {
	var errs []coachd.FieldError
	if req.SessionID != "" && !coachd.ValidID(coachd.PrefixSession, req.SessionID) {
		errs = append(errs, coachd.FieldError{Field: "session_id", Message: "is not a session id", Code: "format"})
	}
	if req.Agent != "" && !agentNameRe.MatchString(req.Agent) {
		errs = append(errs, coachd.FieldError{Field: "agent", Message: "must be 1 to 64 lowercase letters, digits, '-' or '_'", Code: "format"})
	}
	return errs
}

// clientSecret is the provider's secret in its own shape.
type clientSecret struct {
	Value     string `json:"value"`
	ExpiresAt int64  `json:"expires_at"` // Unix seconds
}

type realtimeResponse struct {
	ID           string       `json:"id"`
	ClientSecret clientSecret `json:"client_secret"`
	// Token is the secret again, where seed 001's client reads it
	// (`?model=${model}&token=${token}`).
	Token              string    `json:"token"`
	ExpiresAt          time.Time `json:"expires_at"`
	Model              string    `json:"model"`
	Voice              string    `json:"voice"`
	TranscriptionModel string    `json:"transcription_model"`
	Agent              string    `json:"agent"`
	SessionID          string    `json:"session_id"`
	ConnectURL         string    `json:"connect_url"`
}

// handleRealtimeSession mints a short-lived client secret for a realtime
// voice session with the coach's instructions, voice and transcription
// model. Mints count at the caller's rate in a bucket of their own (a
// mint sends the coach no message: it is no turn, nor one of the month's
// messages) and their budget must not be exhausted; the minted session is
// recorded. Without a session_id a session is created, so that
// transcripts have somewhere to go.
func (s *Server) handleRealtimeSession() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plainTextAsJSON(r)
		req, err := decodeOptional[realtimeRequest](r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		u, ctx := UserFrom(r.Context()), r.Context()
		if err := s.checkBudget(ctx, u, "a voice session"); err != nil {
			s.Error(w, r, err)
			return
		}
		ag, sess, err := s.voiceSession(ctx, u, req)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		instr, err := s.voiceInstructions(ctx, u, ag, sess.ID)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		// Counted last before the provider is asked, as a transcript is
		// once the session takes it: a mint refused above (budget,
		// session) is retried, and its retries use up nothing. The count
		// is one conditional upsert, so concurrent mints cannot both pass;
		// a mint the provider then fails is given back.
		giveBack, err := s.takeRate(r, "voice_rate", s.userRate(u), "Voice session rate limit (%d requests per %s) reached; retry later.")
		if err != nil {
			s.Error(w, r, err)
			return
		}
		sr := voice.SessionRequest{Instructions: instr}
		if v := ag.Voice; v != nil {
			sr.Model, sr.Voice, sr.TranscriptionModel = v.Model, v.Voice, v.TranscriptionModel
		}
		_, _, defTr := s.voice.Defaults()
		if sr.TranscriptionModel == "" {
			sr.TranscriptionModel = defTr
		}
		secret, err := s.voice.Mint(ctx, sr)
		if err != nil {
			providerFailed(r, giveBack)
			s.Error(w, r, err)
			return
		}
		if sess.ID == "" {
			// Made only once the secret is: a mint the provider refuses
			// leaves no empty session behind.
			if err := s.store.CreateSession(ctx, sess); err != nil {
				s.Error(w, r, err)
				return
			}
		}
		rec := &coachd.VoiceSession{UserID: u.ID, SessionID: sess.ID, Agent: ag.Name, Model: secret.Model, Voice: secret.Voice, ExpiresAt: secret.ExpiresAt}
		if err := s.store.CreateVoiceSession(ctx, rec); err != nil {
			// The secret is not handed out; it expires by itself.
			s.Error(w, r, err)
			return
		}
		s.encode(w, r, http.StatusOK, realtimeResponse{
			ID: rec.ID, ClientSecret: clientSecret{Value: secret.Value, ExpiresAt: secret.ExpiresAt.Unix()}, Token: secret.Value, ExpiresAt: secret.ExpiresAt,
			Model: secret.Model, Voice: secret.Voice, TranscriptionModel: sr.TranscriptionModel,
			Agent: ag.Name, SessionID: sess.ID, ConnectURL: s.voice.BaseURL() + "/v1/realtime/calls",
		})
	})
}

// voiceInstructions is what the realtime coach is told: the agent's voice
// instructions, that it has no tools in the call (agent.VoiceNoTools),
// then what the text coach would know (the user's notes,
// the session's conversation so far: agent.Runner.VoiceContext), when it
// fits in what the provider takes.
func (s *Server) voiceInstructions(ctx context.Context, u *coachd.User, ag *agent.Agent, sessionID string) (string, error) {
	instr := ag.VoiceInstructions()
	if note := ag.VoiceNoTools(); len(instr)+2+len(note) <= voice.MaxInstructions {
		instr += "\n\n" + note
	}
	if s.runner == nil {
		return instr, nil
	}
	more, err := s.runner.VoiceContext(ctx, u, sessionID)
	if err != nil || more == "" || len(instr)+2+len(more) > voice.MaxInstructions {
		return instr, err
	}
	return instr + "\n\n" + more, nil
}

// providerFailed gives back the rate slot of a request the voice provider
// failed (down, 5xx, busy, too slow): the user was served nothing through
// no fault of theirs, and one provider blip must not lock them out of
// voice for the rest of the window. A client that went away is counted.
func providerFailed(r *http.Request, giveBack func()) {
	if r.Context().Err() == nil {
		giveBack()
	}
}

// plainTextAsJSON lets seed 001's client mint a secret: its fetch sends
// the JSON body without a Content-Type, which browsers label text/plain.
func plainTextAsJSON(r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && mt == "text/plain" {
		r.Header.Set("Content-Type", "application/json")
	}
}

// checkBudget refuses a user whose token budget is used up, as a turn
// would be refused; what names what was asked for ("a voice session").
func (s *Server) checkBudget(ctx context.Context, u *coachd.User, what string) error {
	st, err := s.store.BudgetStatus(ctx, u.ID)
	if err != nil {
		return err
	}
	if st.Remaining > 0 {
		return nil
	}
	e := coachd.Errorf(coachd.EBUDGET, "Token budget exhausted: no tokens remain for %s.", what)
	if st.Unit == coachd.UnitMicroUSD {
		e = coachd.Errorf(coachd.EBUDGET, "Budget exhausted: nothing remains of it for %s.", what)
	}
	if st.TokenBudget == 0 {
		e = coachd.Errorf(coachd.EBUDGET, "This account has no token budget.")
	}
	e.Extra = map[string]any{"remaining": st.Remaining}
	s.observer.Rejected(coachd.EBUDGET)
	return e
}

// voiceSession resolves the agent and the session a voice conversation
// belongs to: the named session (its agent), which must be active and
// wait for no answer, or a new one, not yet stored (no ID).
func (s *Server) voiceSession(ctx context.Context, u *coachd.User, req realtimeRequest) (*agent.Agent, *coachd.Session, error) {
	var sess *coachd.Session
	name := req.Agent
	if req.SessionID != "" {
		found, err := s.store.FindSession(ctx, u.ID, req.SessionID)
		if err != nil {
			return nil, nil, orNotFound(err, "session")
		}
		// Refused before a secret is minted (the operator pays for it), as
		// a turn or a transcript on this session would be.
		if found.Status != coachd.SessionActive {
			return nil, nil, coachd.Errorf(coachd.ECONFLICT, "session is %s; start a new session", found.Status)
		}
		if found.Pending != nil {
			return nil, nil, coachd.Errorf(coachd.ECONFLICT, "the session waits for an answer to %s; answer it or send a message first", found.Pending.Name)
		}
		sess, name = found, found.Agent
	}
	ag := agent.DefaultAgent()
	if s.runner != nil {
		var err error
		if ag, err = s.runner.AgentFor(name, false); err != nil {
			return nil, nil, err
		}
	} else if name != "" && name != ag.Name {
		return nil, nil, coachd.Invalid(coachd.FieldError{Field: "agent", Message: "no such agent", Code: "not_found"})
	}
	if sess == nil {
		sess = &coachd.Session{UserID: u.ID, Agent: ag.Name, Title: "Voice conversation", Status: coachd.SessionActive}
	}
	return ag, sess, nil
}

type ttsRequest struct {
	Text   string `json:"text"`
	Voice  string `json:"voice"`
	Format string `json:"format"`
	// Agent or SessionID (its agent) names the coach whose voice speaks
	// when Voice is empty; neither is the provider's default voice.
	Agent     string `json:"agent"`
	SessionID string `json:"session_id"`
}

func (req ttsRequest) Valid(context.Context) []coachd.FieldError {
	var errs []coachd.FieldError
	if n := utf8.RuneCountInString(req.Text); coachd.Blank(req.Text) || n > voice.MaxSpeechChars {
		errs = append(errs, coachd.FieldError{Field: "text", Message: "must be 1 to 4096 characters, not only spaces or invisible characters", Code: "length"})
	}
	if req.Voice != "" && !coachd.ValidVoice(req.Voice) {
		errs = append(errs, coachd.FieldError{Field: "voice", Message: "must be one of " + strings.Join(coachd.Voices, ", "), Code: "enum"})
	}
	if len(req.Agent) > 100 {
		errs = append(errs, coachd.FieldError{Field: "agent", Message: "must be at most 100 characters", Code: "length"})
	}
	if req.SessionID != "" && !coachd.ValidID(coachd.PrefixSession, req.SessionID) {
		errs = append(errs, coachd.FieldError{Field: "session_id", Message: "is not a session id", Code: "format"})
	}
	if _, ok := voice.Formats[req.Format]; req.Format != "" && !ok {
		errs = append(errs, coachd.FieldError{Field: "format", Message: "must be one of " + strings.Join(speechFormats, ", "), Code: "enum"})
	}
	return errs
}

// handleTTS speaks text through the provider and streams the audio to the
// client as it arrives; as for a realtime secret, the caller's budget must
// not be used up.
func (s *Server) handleTTS() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := decode[ttsRequest](r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		// The operator pays for speech as for a realtime secret: none for
		// a user whose budget is used up.
		if err := s.checkBudget(r.Context(), UserFrom(r.Context()), "speech"); err != nil {
			s.Error(w, r, err)
			return
		}
		v, err := s.ttsVoice(r.Context(), UserFrom(r.Context()), req)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		// Counted once nothing above refused it, and given back when the
		// provider fails it, as a mint is.
		giveBack, err := s.takeRate(r, "tts_rate", s.userRate(UserFrom(r.Context())), "Speech rate limit (%d requests per %s) reached; retry later.")
		if err != nil {
			s.Error(w, r, err)
			return
		}
		audio, ct, err := s.voice.Speech(r.Context(), voice.SpeechRequest{Text: req.Text, Voice: v, Format: req.Format})
		if err != nil {
			providerFailed(r, giveBack)
			s.Error(w, r, err)
			return
		}
		defer audio.Close()
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		s.copyFlushing(w, r, audio)
	})
}

// ttsVoice is the voice a speech request asks for: its own, else that of
// the coach it names (by agent, or by a session of the caller's), else
// "" (the provider's default).
func (s *Server) ttsVoice(ctx context.Context, u *coachd.User, req ttsRequest) (string, error) {
	if req.Voice != "" || (req.Agent == "" && req.SessionID == "") || s.runner == nil {
		return req.Voice, nil
	}
	name := req.Agent
	if req.SessionID != "" {
		sess, err := s.store.FindSession(ctx, u.ID, req.SessionID)
		if err != nil {
			return "", orNotFound(err, "session")
		}
		name = sess.Agent
	}
	ag, err := s.runner.AgentFor(name, req.SessionID != "")
	if err != nil && req.SessionID != "" {
		return "", nil // the session's coach is gone: the default voice
	}
	if err != nil {
		return "", err
	}
	if ag.Voice == nil {
		return "", nil
	}
	return ag.Voice.Voice, nil
}

// copyFlushing writes src to the client as it arrives, each write bounded
// by the write timeout.
func (s *Server) copyFlushing(w http.ResponseWriter, r *http.Request, src io.Reader) {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if s.writeTime > 0 {
				_ = rc.SetWriteDeadline(time.Now().Add(s.writeTime))
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			_ = rc.Flush()
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && r.Context().Err() == nil {
				// Headers are gone: the client sees a cut stream.
				s.log(r).Warn("speech stream cut", "err", err)
			}
			return
		}
	}
}

// userRate is the user's own rate limit, or the server's.
func (s *Server) userRate(u *coachd.User) coachd.RateLimit {
	if u.RateLimit != "" {
		if own, err := coachd.ParseRateLimit(u.RateLimit); err == nil {
			return own
		}
	}
	return s.limits.Rate
}

type transcriptRequest struct {
	Role    coachd.Role `json:"role"`
	Content string      `json:"content"`
	Source  string      `json:"source"`
}

func (req transcriptRequest) Valid(context.Context) []coachd.FieldError {
	var errs []coachd.FieldError
	if req.Role != coachd.RoleUser && req.Role != coachd.RoleAssistant {
		errs = append(errs, coachd.FieldError{Field: "role", Message: "must be user or assistant", Code: "enum"})
	}
	if coachd.Blank(req.Content) || utf8.RuneCountInString(req.Content) > agent.MaxTranscriptChars {
		errs = append(errs, coachd.FieldError{Field: "content", Message: "must be 1 to 32000 characters, not only spaces or invisible characters", Code: "length"})
	}
	if req.Source != "voice" {
		errs = append(errs, coachd.FieldError{Field: "source", Message: "must be voice (transcripts of a voice conversation)", Code: "enum"})
	}
	return errs
}

// transcriptRate is the limit of transcripts for a user whose turn rate
// is rate: twice it (a driver's line and the coach's per spoken
// exchange), in a bucket of its own, so that a voice conversation does
// not use up the turns, nor append without bound (storage, and the next
// turn's history).
func transcriptRate(rate coachd.RateLimit) coachd.RateLimit {
	if rate.Off() {
		return rate
	}
	return coachd.RateLimit{N: 2 * rate.N, Per: rate.Per}
}

// handleTranscript stores a voice transcript in the caller's session so
// that the text coach sees it on the next turn; a running turn on the
// session is a 409, over transcriptRate a 429.
func (s *Server) handleTranscript() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.runner == nil {
			s.Error(w, r, coachd.Errorf(coachd.EAPI, "this server has no runner configured"))
			return
		}
		id, err := pathID(r, coachd.PrefixSession, "session")
		if err != nil {
			s.Error(w, r, err)
			return
		}
		req, err := decode[transcriptRequest](r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		// A voice client's retry after a network blip, with the same key,
		// is answered as the first was and stored once.
		key, err := idempotencyKey(r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		once := coachd.Once{Key: key, Hash: requestHash(r.URL.Path, req)}
		// Counted once the session takes it: a transcript refused while a
		// turn runs (409) is retried, and its retries use up nothing.
		count := func(context.Context) error {
			return s.hitRate(r, "transcript_rate", transcriptRate(s.userRate(UserFrom(r.Context()))), "Transcript rate limit (%d messages per %s) reached; retry later.")
		}
		m, err := s.runner.AppendTranscript(r.Context(), UserFrom(r.Context()), id, req.Role, req.Content, once, count)
		if err != nil {
			s.Error(w, r, orNotFound(err, "session"))
			return
		}
		s.encode(w, r, http.StatusCreated, m)
	})
}
