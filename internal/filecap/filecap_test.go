package filecap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte(strings.Repeat("a", 2048)), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(path, 2048); err != nil || len(data) != 2048 {
		t.Errorf("at the bound: %d bytes, %v", len(data), err)
	}
	if _, err := ReadFile(path, 2047); err == nil || !strings.Contains(err.Error(), "larger than 1 KiB") {
		t.Errorf("past the bound: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 10); !os.IsNotExist(err) {
		t.Errorf("missing: %v", err)
	}
}
