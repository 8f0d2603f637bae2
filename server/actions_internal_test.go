package server

import (
	"encoding/json"
	"testing"
)

// TestWithDefaults: a validated payload gets the defaults its schema
// declares, in nested objects too, as Zod's parse does (seed 001 line
// 128, "importance: 1-100 (default 50)"); what was sent is kept.
func TestWithDefaults(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"title":{"type":"string"},
		"limit":{"type":"integer","default":20},
		"tags":{"type":"array","default":[]},
		"where":{"type":"object","properties":{"near":{"type":"string","default":"home <1km>"}}},
		"importance":{"type":"integer"}}}`)
	for _, tt := range []struct {
		name, tool, payload, want string
	}{
		{"Declared", "list", `{"title":"a","where":{}}`, `{"limit":20,"tags":[],"title":"a","where":{"near":"home <1km>"}}`},
		{"Given", "list", `{"title":"a","limit":5.0,"tags":["x"],"where":{"near":"x"}}`, `{"title":"a","limit":5.0,"tags":["x"],"where":{"near":"x"}}`},
		{"Implied", "save_note", `{"title":"a","limit":1,"tags":[],"where":{"near":""}}`, `{"importance":50,"limit":1,"tags":[],"title":"a","where":{"near":""}}`},
		{"NothingToAdd", "other", `{ "title" : "a", "limit":1, "tags":[], "importance":7, "where":{"near":""} }`, `{ "title" : "a", "limit":1, "tags":[], "importance":7, "where":{"near":""} }`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(withDefaults(tt.tool, schema, json.RawMessage(tt.payload))); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
