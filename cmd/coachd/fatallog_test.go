package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
)

// TestServeFatalErrorIsLogged: with --log-format json, why serve exited
// (here its address taken) was only main's plain "coachd: …" line on
// stderr, which a JSON log pipeline cannot parse and which has no level:
// the log stream ended at "database ready" with no reason. serve now
// writes the error as an ERROR record in the log's own format.
func TestServeFatalErrorIsLogged(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	db := t.TempDir() + "/coachd.db"
	out, errb := &syncBuffer{}, &syncBuffer{}
	err = run(context.Background(), []string{"coachd", "serve", "--db", db, "--addr", ln.Addr().String(), "--log-format", "json"},
		getenvFrom(nil), out, errb)
	if err == nil {
		t.Fatal("serve on a taken address returned no error")
	}
	found := false
	sc := bufio.NewScanner(strings.NewReader(errb.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			t.Errorf("a stderr line is not JSON: %s", sc.Text())
			continue
		}
		if rec["level"] == "ERROR" && strings.Contains(sc.Text(), "address already in use") {
			found = true
		}
	}
	if !found {
		t.Errorf("no ERROR record saying why serve exited (%v) in the JSON log:\n%s", err, errb)
	}
}
