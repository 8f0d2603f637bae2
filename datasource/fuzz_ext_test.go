package datasource_test

import (
	"strings"
	"testing"
)

// FuzzQueryData: whatever input the model sends, query_data answers with
// a result (never a Go error), reads only the user's rows and declared
// columns, and changes nothing.
func FuzzQueryData(f *testing.F) {
	for _, in := range injection {
		f.Add(in)
	}
	f.Add(`{"table":"events","columns":["id","title"],"where":{"rank":{"in":[1,2]},"city":{"like":"dal"}},"order_by":["-rank"],"limit":2}`)
	e := openEnv(f, backends[0])
	f.Fuzz(func(t *testing.T, in string) {
		res := e.call(t, alice, "query_data", in)
		for _, leak := range []string{"BOBSECRET", "alice-secret", "Bob Private"} {
			if strings.Contains(res.Content, leak) {
				t.Fatalf("%s read %q: %s", in, leak, res.Content)
			}
		}
		if e.dump(t) != e.before {
			t.Fatalf("%s changed the database", in)
		}
	})
}
