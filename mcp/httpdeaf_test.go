package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestHTTPServerHungOnAnswerCloses: an HTTP server that sent a request
// (a ping on its event stream) and then hangs, never answering the POST
// that carries coachd's answer, does not hold up Close (a pack's reload,
// coachd's shutdown). The SDK posts the answer with a context that never
// ends and closes only once it is done: Close never returned.
func TestHTTPServerHungOnAnswerCloses(t *testing.T) {
	answered := make(chan struct{}, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Mcp-Session-Id", "s1")
		switch r.Method {
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"method\":\"ping\"}\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		case http.MethodDelete:
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &msg)
		reply := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
		}
		switch {
		case msg.Method == "initialize":
			reply(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"hung","version":"1"}}`)
		case msg.Method == "tools/list":
			reply(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`)
		case msg.Method == "":
			// coachd's answer to the ping: the server hangs on it.
			select {
			case answered <- struct{}{}:
			default:
			}
			<-r.Context().Done()
		case len(msg.ID) > 0:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, msg.ID)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(ts.CloseClientConnections) // first: a hung POST holds ts.Close
	// Not mustServer: its cleanup would wait on the Close under test.
	s := NewServer(&Config{Name: "hung", Prefix: "hung", URL: ts.URL, Timeout: 2 * time.Second, MaxOutput: 4096},
		Options{StartWait: 20 * time.Second})
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-answered:
	case <-time.After(60 * time.Second):
		t.Fatal("coachd did not answer the server's ping")
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
	case <-time.After(60 * time.Second):
		t.Fatal("Close did not return: it waits on an answer the server never takes")
	}
}
