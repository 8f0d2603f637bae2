package anthropictest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"regexp"
	"strings"
)

// Claude on Amazon Bedrock and Google Vertex AI: the same Messages API
// behind another URL, body and (for Bedrock) framing. These handlers
// check what the platform checks, turn the request back into a Messages
// request for the fake, and serve its reply in the platform's wire format.

// Platform versions the SDK sends in the body instead of a header.
const (
	BedrockVersion = "bedrock-2023-05-31"
	VertexVersion  = "vertex-2023-10-16"
)

var (
	bedrockPath = regexp.MustCompile(`^/model/([^/]+)/invoke-with-response-stream$`)
	vertexPath  = regexp.MustCompile(`^/v1/projects/([^/]+)/locations/([^/]+)/publishers/anthropic/models/([^/:]+):streamRawPredict$`)
)

// VertexHandler serves POST .../publishers/anthropic/models/{model}:
// streamRawPredict for project and region, with a bearer token: the body
// carries anthropic_version and no model; the reply is the Messages SSE.
func (s *Server) VertexHandler(project, region, token string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := vertexPath.FindStringSubmatch(r.URL.Path)
		switch {
		case r.Method != http.MethodPost || m == nil:
			platformError(w, http.StatusNotFound, "", "unknown Vertex path "+r.URL.Path)
			return
		case m[1] != project || m[2] != region:
			platformError(w, http.StatusForbidden, "", "wrong project or region: "+m[1]+"/"+m[2])
			return
		case r.Header.Get("Authorization") != "Bearer "+token:
			platformError(w, http.StatusUnauthorized, "", "missing or wrong OAuth token")
			return
		}
		s.platformRequest(w, r, m[3], VertexVersion, false, w)
	})
}

// BedrockHandler serves POST /model/{model}/invoke-with-response-stream
// signed with SigV4 by accessKeyID for region: the body carries
// anthropic_version and neither model nor stream; the reply is an
// application/vnd.amazon.eventstream of chunk events, each a base64
// Messages event, and errors mid-stream are eventstream exceptions.
func (s *Server) BedrockHandler(accessKeyID, region string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := bedrockPath.FindStringSubmatch(r.URL.Path)
		scope := "Credential=" + accessKeyID + "/"
		auth := r.Header.Get("Authorization")
		switch {
		case r.Method != http.MethodPost || m == nil:
			platformError(w, http.StatusNotFound, "UnknownOperationException", "unknown Bedrock path "+r.URL.Path)
			return
		case !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") || !strings.Contains(auth, scope) ||
			!strings.Contains(auth, "/"+region+"/bedrock/aws4_request") || r.Header.Get("X-Amz-Date") == "":
			platformError(w, http.StatusForbidden, "UnrecognizedClientException", "the request is not signed for bedrock in "+region)
			return
		}
		ew := &eventstreamWriter{w: w}
		s.platformRequest(ew, r, m[1], BedrockVersion, true, w)
		ew.flush()
	})
}

// platformRequest checks the platform body, rebuilds the Messages request
// and serves it through the fake's own handler.
func (s *Server) platformRequest(w http.ResponseWriter, r *http.Request, model, version string, stream bool, raw http.ResponseWriter) {
	if r.Header.Get("x-api-key") != "" {
		platformError(raw, http.StatusBadRequest, "ValidationException", "an Anthropic API key was sent to the platform")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequest+1))
	if err != nil {
		platformError(raw, http.StatusBadRequest, "ValidationException", "unreadable body")
		return
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		platformError(raw, http.StatusBadRequest, "ValidationException", "body is not JSON")
		return
	}
	var v string
	_ = json.Unmarshal(fields["anthropic_version"], &v)
	if v != version {
		platformError(raw, http.StatusBadRequest, "ValidationException", fmt.Sprintf("anthropic_version %q, want %q", v, version))
		return
	}
	if _, ok := fields["model"]; ok {
		platformError(raw, http.StatusBadRequest, "ValidationException", "model belongs in the URL, not the body")
		return
	}
	if _, ok := fields["metadata"]; ok && stream {
		platformError(raw, http.StatusBadRequest, "ValidationException", "extraneous key [metadata] is not permitted")
		return
	}
	delete(fields, "anthropic_version")
	fields["model"], _ = json.Marshal(model)
	if stream {
		if _, ok := fields["stream"]; ok {
			platformError(raw, http.StatusBadRequest, "ValidationException", "stream is not a Bedrock body field")
			return
		}
		fields["stream"] = json.RawMessage("true")
	}
	rebuilt, _ := json.Marshal(fields)
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = "/v1/messages", ""
	r2.Body, r2.ContentLength = io.NopCloser(bytes.NewReader(rebuilt)), int64(len(rebuilt))
	r2.Header.Set("x-api-key", "platform")
	r2.Header.Set("anthropic-version", "2023-06-01")
	r2.Header.Del("Accept-Encoding")
	s.Handler().ServeHTTP(w, r2)
}

func platformError(w http.ResponseWriter, status int, typ, msg string) {
	if typ != "" {
		w.Header().Set("X-Amzn-ErrorType", typ)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"message": msg})
	w.Write(b)
}

// eventstreamWriter re-frames the fake's SSE reply as AWS eventstream
// messages as it is written; an error reply (status >= 400) passes
// through as Bedrock's JSON error.
type eventstreamWriter struct {
	w      http.ResponseWriter
	status int
	buf    bytes.Buffer
}

func (e *eventstreamWriter) Header() http.Header { return e.w.Header() }

func (e *eventstreamWriter) WriteHeader(status int) {
	e.status = status
	if status >= 400 {
		e.w.Header().Set("X-Amzn-ErrorType", bedrockException(status))
		e.w.WriteHeader(status)
		return
	}
	e.w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	e.w.Header().Del("Content-Length")
	e.w.WriteHeader(status)
}

func (e *eventstreamWriter) Write(p []byte) (int, error) {
	if e.status == 0 {
		e.WriteHeader(http.StatusOK)
	}
	if e.status >= 400 {
		return e.w.Write(p) // Bedrock's error bodies are JSON too
	}
	e.buf.Write(p)
	for {
		i := bytes.Index(e.buf.Bytes(), []byte("\n\n"))
		if i < 0 {
			return len(p), nil
		}
		ev := e.buf.Next(i + 2)
		if err := e.frame(ev); err != nil {
			return 0, err
		}
	}
}

func (e *eventstreamWriter) Flush() { e.flush() }

func (e *eventstreamWriter) flush() {
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// frame writes one SSE event as an eventstream message: a chunk event
// with the event's JSON base64 in {"bytes": ...}, or, for an error event,
// an exception named as Bedrock names it.
func (e *eventstreamWriter) frame(sse []byte) error {
	var name, data string
	sc := bufio.NewScanner(bytes.NewReader(sse))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event:"):
			name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		}
	}
	switch {
	case data == "" || name == "ping":
		return nil // Bedrock sends no pings
	case name == "error":
		var ev struct {
			Error struct{ Type, Message string } `json:"error"`
		}
		_ = json.Unmarshal([]byte(data), &ev)
		exc := "internalServerException"
		switch ev.Error.Type {
		case "overloaded_error":
			exc = "serviceUnavailableException"
		case "rate_limit_error":
			exc = "throttlingException"
		}
		payload, _ := json.Marshal(map[string]string{"message": ev.Error.Message})
		_, err := e.w.Write(EventstreamMessage(map[string]string{
			":message-type": "exception", ":exception-type": exc, ":content-type": "application/json"}, payload))
		return err
	}
	payload, _ := json.Marshal(map[string]string{"bytes": base64.StdEncoding.EncodeToString([]byte(data))})
	_, err := e.w.Write(EventstreamMessage(map[string]string{
		":message-type": "event", ":event-type": "chunk", ":content-type": "application/json"}, payload))
	return err
}

func bedrockException(status int) string {
	switch status {
	case http.StatusTooManyRequests:
		return "ThrottlingException"
	case http.StatusServiceUnavailable, 529:
		return "ServiceUnavailableException"
	case http.StatusBadRequest:
		return "ValidationException"
	case http.StatusUnauthorized, http.StatusForbidden:
		return "AccessDeniedException"
	case http.StatusNotFound:
		return "ResourceNotFoundException"
	}
	return "InternalServerException"
}

// EventstreamMessage encodes one AWS eventstream message: total and
// headers length, the prelude's CRC32, string headers, the payload and
// the message's CRC32, all big-endian.
func EventstreamMessage(headers map[string]string, payload []byte) []byte {
	var hb bytes.Buffer
	for _, k := range []string{":message-type", ":event-type", ":exception-type", ":content-type"} {
		v, ok := headers[k]
		if !ok {
			continue
		}
		hb.WriteByte(byte(len(k)))
		hb.WriteString(k)
		hb.WriteByte(7) // string
		binary.Write(&hb, binary.BigEndian, uint16(len(v)))
		hb.WriteString(v)
	}
	total := 12 + hb.Len() + len(payload) + 4
	msg := make([]byte, 0, total)
	msg = binary.BigEndian.AppendUint32(msg, uint32(total))
	msg = binary.BigEndian.AppendUint32(msg, uint32(hb.Len()))
	msg = binary.BigEndian.AppendUint32(msg, crc32.ChecksumIEEE(msg[:8]))
	msg = append(msg, hb.Bytes()...)
	msg = append(msg, payload...)
	return binary.BigEndian.AppendUint32(msg, crc32.ChecksumIEEE(msg))
}
