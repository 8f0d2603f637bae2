package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingDirectoryNotCreatedLater: doctor and users list with --db
// naming a file in a directory that does not exist said the database
// "does not exist (coachd serve or coachd migrate creates it)", but
// neither makes a directory: the operator who ran them got an error
// there next. They say the directory does not exist.
func TestMissingDirectoryNotCreatedLater(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	for _, cmd := range [][]string{{"doctor"}, {"users", "list"}} {
		var out syncBuffer
		err := run(context.Background(), append(append([]string{"coachd"}, cmd...), "--db", filepath.Join(dir, "coachd.db")), getenvFrom(nil), &out, &out)
		if err == nil || strings.Contains(err.Error(), "creates it") || !strings.Contains(err.Error(), "directory "+dir+" does not exist") {
			t.Errorf("%v in a missing directory: %v; want it to say the directory %s does not exist", cmd, err, dir)
		}
	}
}
