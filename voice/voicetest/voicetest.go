// Package voicetest is a fake of the voice provider's HTTP API (OpenAI
// Realtime client secrets and audio speech) on loopback, for tests: it
// checks the key and the request shapes like the real API, answers in its
// shapes, records what it was sent, and fails on demand.
package voicetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Audio is what the fake speaks: every speech answer is these bytes,
// sent in Chunks pieces.
var Audio = []byte("ID3\x04\x00\x00\x00\x00\x00\x00fake-mp3-frames-0123456789abcdef")

// Chunks is how many writes a speech answer is split into.
const Chunks = 4

// Request is one request the fake received.
type Request struct {
	Path          string
	Authorization string
	Body          map[string]any
}

// Server is the fake provider.
type Server struct {
	*httptest.Server
	Key string

	mu       sync.Mutex
	requests []Request
	fail     []failure
	gate     chan struct{}
	secrets  int
}

type failure struct {
	status int
	body   string
}

// New starts a fake that accepts key, closed when the test ends.
func New(tb testing.TB, key string) *Server {
	s := &Server{Key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/realtime/client_secrets", s.clientSecret)
	mux.HandleFunc("POST /v1/audio/speech", s.speech)
	s.Server = httptest.NewServer(mux)
	tb.Cleanup(s.Close)
	return s
}

// Fail makes the next request answer status with an OpenAI error body.
func (s *Server) Fail(status int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": "server_error", "code": nil}})
	s.fail = append(s.fail, failure{status, string(body)})
}

// Gate makes speech answers stop after their first chunk until the
// returned function is called: a test can see the first bytes arrive
// before the rest exist.
func (s *Server) Gate() (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	s.gate = ch
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Secrets counts the client secrets minted.
func (s *Server) Secrets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.secrets
}

// begin records r and answers the checks every endpoint shares; it
// returns the body, or nil when it answered.
func (s *Server) begin(w http.ResponseWriter, r *http.Request) map[string]any {
	var body map[string]any
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	err := dec.Decode(&body)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Authorization: r.Header.Get("Authorization"), Body: body})
	var f *failure
	if len(s.fail) > 0 {
		f = &s.fail[0]
		s.fail = s.fail[1:]
	}
	s.mu.Unlock()
	switch {
	case f != nil:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		fmt.Fprint(w, f.body)
		return nil
	case r.Header.Get("Authorization") != "Bearer "+s.Key:
		// Like the real API, the answer quotes part of the key it got.
		got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if len(got) > 8 {
			got = got[:4] + "*****" + got[len(got)-4:]
		}
		apiError(w, http.StatusUnauthorized, "invalid_request_error", "Incorrect API key provided: "+got+".")
		return nil
	case !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json"):
		apiError(w, http.StatusBadRequest, "invalid_request_error", "Content-Type must be application/json")
		return nil
	case err != nil:
		apiError(w, http.StatusBadRequest, "invalid_request_error", "We could not parse the JSON body of your request.")
		return nil
	}
	return body
}

func (s *Server) clientSecret(w http.ResponseWriter, r *http.Request) {
	body := s.begin(w, r)
	if body == nil {
		return
	}
	sess, _ := body["session"].(map[string]any)
	model, _ := sess["model"].(string)
	instr, _ := sess["instructions"].(string)
	audio, _ := sess["audio"].(map[string]any)
	out, _ := audio["output"].(map[string]any)
	voice, _ := out["voice"].(string)
	in, _ := audio["input"].(map[string]any)
	tr, _ := in["transcription"].(map[string]any)
	trModel, _ := tr["model"].(string)
	exp, _ := body["expires_after"].(map[string]any)
	secs, _ := exp["seconds"].(float64)
	switch {
	case sess["type"] != "realtime":
		apiError(w, 400, "invalid_request_error", "session.type must be realtime")
	case model == "":
		apiError(w, 400, "invalid_request_error", "Missing required parameter: 'session.model'.")
	case !slices.Contains(voices, voice):
		apiError(w, 400, "invalid_request_error", "Invalid value for 'session.audio.output.voice'.")
	case trModel == "":
		apiError(w, 400, "invalid_request_error", "Missing 'session.audio.input.transcription.model'.")
	case secs < 10 || secs > 7200:
		apiError(w, 400, "invalid_request_error", "expires_after.seconds must be between 10 and 7200.")
	default:
		s.mu.Lock()
		s.secrets++
		n := s.secrets
		s.mu.Unlock()
		now := time.Now()
		writeJSON(w, map[string]any{
			"value":      fmt.Sprintf("ek_fake%020d", n),
			"expires_at": now.Add(time.Duration(secs) * time.Second).Unix(),
			"session": map[string]any{
				"type": "realtime", "object": "realtime.session", "id": fmt.Sprintf("sess_fake%d", n),
				"model": model, "instructions": instr, "output_modalities": []string{"audio"},
				"audio": map[string]any{
					"input":  map[string]any{"format": map[string]any{"type": "audio/pcm", "rate": 24000}, "transcription": map[string]any{"model": trModel}},
					"output": map[string]any{"format": map[string]any{"type": "audio/pcm", "rate": 24000}, "voice": voice, "speed": 1},
				},
			},
		})
	}
}

func (s *Server) speech(w http.ResponseWriter, r *http.Request) {
	body := s.begin(w, r)
	if body == nil {
		return
	}
	input, _ := body["input"].(string)
	voice, _ := body["voice"].(string)
	format, _ := body["response_format"].(string)
	switch {
	case body["model"] == nil || body["model"] == "":
		apiError(w, 400, "invalid_request_error", "Missing required parameter: 'model'.")
	case input == "" || len([]rune(input)) > 4096:
		apiError(w, 400, "invalid_request_error", "'input' must be 1 to 4096 characters.")
	case !slices.Contains(voices, voice):
		apiError(w, 400, "invalid_request_error", "Invalid value for 'voice'.")
	case !slices.Contains([]string{"mp3", "opus", "aac", "flac", "wav", "pcm"}, format):
		apiError(w, 400, "invalid_request_error", "Invalid value for 'response_format'.")
	default:
		s.mu.Lock()
		gate := s.gate
		s.mu.Unlock()
		w.Header().Set("Content-Type", "audio/mpeg")
		w.Header().Set("Transfer-Encoding", "chunked")
		w.WriteHeader(http.StatusOK)
		step := (len(Audio) + Chunks - 1) / Chunks
		for i := 0; i < len(Audio); i += step {
			w.Write(Audio[i:min(i+step, len(Audio))])
			w.(http.Flusher).Flush()
			if i == 0 && gate != nil {
				select {
				case <-gate:
				case <-r.Context().Done():
					return
				}
			}
		}
	}
}

var voices = []string{"alloy", "ash", "ballad", "cedar", "coral", "echo", "fable", "marin", "nova", "onyx", "sage", "shimmer", "verse"}

func apiError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
