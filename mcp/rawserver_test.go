package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
)

// rawEnv picks a raw server's misbehaviour (fakeEnv "raw"): a hand-written
// stdio MCP server that answers initialize, tools/list and tools/call.
// Once it listed its tools, "pingdeaf" sends pings without end and reads
// nothing more (their answers included); "deaf" sends 1000 pings (their
// answers, 200-byte ids, are more than a pipe holds), says so on stderr,
// and reads nothing more; "giant" answers a call whose arguments name
// "giant" with a 20 MB line.
const rawEnv = "COACHD_MCP_RAW"

func rawServer() {
	var mu sync.Mutex
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	send := func(v any) {
		b, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	for in.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil || msg.Method == "" {
			continue
		}
		reply := func(result any) { send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result}) }
		switch msg.Method {
		case "initialize":
			reply(map[string]any{"protocolVersion": msg.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "raw", "version": "1"}})
		case "tools/list":
			reply(map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}})
			switch os.Getenv(rawEnv) {
			case "pingdeaf":
				go rawPings(-1, send)
				select {} // reads nothing more
			case "deaf":
				rawPings(1000, send)
				fmt.Fprintln(os.Stderr, "sent 1000 pings")
				select {}
			}
		case "tools/call":
			if os.Getenv(rawEnv) == "giant" && bytes.Contains(in.Bytes(), []byte(`"giant"`)) {
				reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.Repeat("x", 20<<20)}}})
				continue
			}
			reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}})
		case "ping":
			reply(map[string]any{})
		default:
			if len(msg.ID) > 0 {
				send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
			}
		}
	}
	os.Exit(0)
}

// rawPings sends n pings (n < 0: without end), with 200-byte ids.
func rawPings(n int, send func(any)) {
	for i := 0; n < 0 || i < n; i++ {
		send(map[string]any{"jsonrpc": "2.0", "id": fmt.Sprintf("%0200d", i), "method": "ping"})
	}
}
