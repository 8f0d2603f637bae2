package datasource_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/datasource"
)

// TestLoadBigFile: a data file is a pack file, refused past 1 MiB
// (agent.MaxPackFile) without being read whole, as the agent, skill, tool
// and MCP files are: a mistaken path (a log, a dump renamed .yaml) was read
// into memory and parsed however large it was.
func TestLoadBigFile(t *testing.T) {
	dsn, _ := backends[0].open(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	body := "dsn: " + dsn + "\ntables:\n  venues: {shared: true, columns: [id, name]}\n" + strings.Repeat("# a comment line of the dump\n", 2<<20/29)
	os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte(body), 0o644)
	set, err := datasource.Load(context.Background(), dir, []string{"data/app.yaml"}, func(string) string { return "" }, nil)
	if err == nil {
		set.Close()
		t.Fatal("a 2 MiB data file loaded")
	}
	if !strings.Contains(err.Error(), "data/app.yaml:0: file is larger than 1024 KiB") {
		t.Fatalf("err %v", err)
	}
}
