package openai_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/modeltest"
)

// TestCallsReusingIndex: Ollama streams every call of a parallel batch at
// index 0 (ollama/ollama#15457), each beginning with its own id and
// continued by fragments with neither id nor a new index. A new id at an
// index in use is a new call; before, the second call's arguments were
// appended to the first's, and the round failed as a malformed stream.
func TestCallsReusingIndex(t *testing.T) {
	call := func(id, name, args string) string {
		idName := ""
		if id != "" {
			idName = `"id":"` + id + `","type":"function",`
		}
		return `data: {"id":"c6","model":"qwen2.5","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,` + idName +
			`"function":{"name":"` + name + `","arguments":` + args + `}}]},"finish_reason":null}]}` + "\n\n"
	}
	m := serveRaw(t, call("call_a", "file_write", `"{\"path\":"`)+call("", "", `"\"hello.py\"}"`)+
		call("call_b", "file_write", `"{\"path\":"`)+call("", "", `"\"world.py\"}"`)+
		`data: {"id":"c6","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n")
	_, resp, err := modeltest.Drain(m.Stream(context.Background(), modeltest.Hello("")))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Blocks) != 2 || resp.Blocks[0].ID != "call_a" || string(resp.Blocks[0].Input) != `{"path":"hello.py"}` ||
		resp.Blocks[1].ID != "call_b" || string(resp.Blocks[1].Input) != `{"path":"world.py"}` {
		t.Errorf("blocks %+v", resp.Blocks)
	}
}

// TestCallIDsTheAPITakes: a server's call id that the Messages API's
// pattern refuses (a dot, a colon, a space, over 200 characters) would be
// stored in a tool_use block the history check refuses, and an answer to
// a call waiting for approval could not name it. Such an id is replaced,
// the same way for each of its fragments; a good id is kept.
func TestCallIDsTheAPITakes(t *testing.T) {
	long := strings.Repeat("x", 240)
	for _, id := range []string{"functions.save_note:0", "call 1", long} {
		frag := func(withID bool, args string) string {
			idPart := ""
			if withID {
				idPart = `"id":"` + id + `","type":"function","function":{"name":"save_note","arguments":` + args + `}`
			} else {
				idPart = `"id":"` + id + `","function":{"arguments":` + args + `}`
			}
			return `data: {"id":"c7","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{` + idPart + `}]},"finish_reason":null}]}` + "\n\n"
		}
		m := serveRaw(t, frag(true, `"{\"title\":"`)+frag(false, `"\"a\"}"`)+
			`data: {"id":"c7","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n")
		_, resp, err := modeltest.Drain(m.Stream(context.Background(), modeltest.Hello("")))
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Blocks) != 1 || !coachd.ValidToolUseID(resp.Blocks[0].ID) || string(resp.Blocks[0].Input) != `{"title":"a"}` {
			t.Errorf("id %.20q: blocks %+v", id, resp.Blocks)
		}
		if errs := coachd.CheckBlocks(coachd.RoleAssistant, resp.Blocks); len(errs) > 0 {
			t.Errorf("id %.20q: the history check refuses the call: %v", id, errs)
		}
	}
}
