package server

import (
	"encoding/json"
	"fmt"
	"testing"
)

// fingerprintBody is a conversation of every content shape a client
// sends or gets wrong: a string, text and image parts, null, a system and
// a tool message (left out), parts of another type, a number and no
// content at all (no text).
const fingerprintBody = `{"model":"default","messages":[
	{"role":"system","content":"You are a coach."},
	{"role":"user","content":"How do I start?"},
	{"role":"assistant","content":"Slowly."},
	{"role":"user","content":[{"type":"text","text":"And this? "},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},{"type":"text","text":"Look."}]},
	{"role":"assistant","content":null},
	{"role":"tool","content":"42"},
	{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AAAA"}}]},
	{"role":"assistant","content":42},
	{"role":"user"},
	{"role":"user","content":[{"type":"file","file":{"file_data":"data:application/pdf;base64,JVBERi0=","filename":"a.pdf"}},{"type":"text","text":"ünïcode \u2028 \"quoted\""}]}
]}`

// TestFingerprintPinned: a conversation's fingerprint is what coachd has
// always computed for it: the fingerprints stored by an older server must
// still find their sessions.
func TestFingerprintPinned(t *testing.T) {
	var req oaiRequest
	if err := json.Unmarshal([]byte(fingerprintBody), &req); err != nil {
		t.Fatal(err)
	}
	reply := "Keep going."
	n := len(req.Messages)
	for _, tc := range []struct {
		name  string
		msgs  []oaiMessage
		reply *string
		want  string
	}{
		{"All", req.Messages, nil, "70b7704dafd873932a8e5400d421a46bdc23e456b369270fe4f139d2b52fd40e"},
		{"Reply", req.Messages, &reply, "17de10cbe03f4472a1c17fcc6cde9fb55173e863a73fd2e719e9298b45898aa2"},
		{"Previous", req.Messages[:n-1], nil, "8ac1f308525e4c4b3231f7526e7ed55d87db637977133a2adcf1e9f0c6fe5a78"},
		{"BeforeReply", req.Messages[:n-2], nil, "1f382f38124a00276dc3e48e201763fadc01da5b7740f8b7f7f8bd99dfc66d1a"},
		{"Empty", nil, nil, "37a8eec1ce19687d132fe29051dca629d164e2c4958ba141d5f4133a33f0688f"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fingerprint(req.Model, tc.msgs, tc.reply); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestOAIContentShapes: each content shape reads as the same text and
// parts as it always has (the last message's are its turn).
func TestOAIContentShapes(t *testing.T) {
	var req oaiRequest
	if err := json.Unmarshal([]byte(fingerprintBody), &req); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`"You are a coach." true [text] true`,
		`"How do I start?" true [text] true`,
		`"Slowly." true [text] true`,
		`"And this? Look." true [text image_url text] true`,
		`"" true [text] true`,
		`"42" true [text] true`,
		`"" false [input_audio] true`,
		`"" false [] false`,
		`"" false [] false`,
		`"ünïcode \u2028 \"quoted\"" true [file text] true`,
	}
	for i, m := range req.Messages {
		text, textOK := m.text()
		parts, partsOK := m.parts()
		var types []string
		for _, p := range parts {
			types = append(types, p.Type)
		}
		if got := fmt.Sprintf("%q %t %v %t", text, textOK, types, partsOK); got != want[i] {
			t.Errorf("messages[%d]: got %s, want %s", i, got, want[i])
		}
	}
	if p, _ := req.Messages[3].parts(); p[1].ImageURL == nil || p[1].ImageURL.URL != "data:image/png;base64,iVBORw0KGgo=" {
		t.Errorf("the image part: %+v", p[1])
	}
	if p, _ := req.Messages[9].parts(); p[0].File == nil || p[0].File.Filename != "a.pdf" || p[0].File.FileData != "data:application/pdf;base64,JVBERi0=" {
		t.Errorf("the file part: %+v", p[0])
	}
}
