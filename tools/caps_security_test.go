package tools_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/tools"
)

// TestSecuritySaveNoteCap: issue 20 finding 8 (caps). At the user's note
// cap save_note answers an is_error result the model can act on, not an
// internal failure.
func TestSecuritySaveNoteCap(t *testing.T) {
	env := storeEnv(t)
	for i := range coachd.MaxNotesPerUser {
		if err := env.Store.CreateNote(context.Background(), &coachd.Note{UserID: env.User.ID, Type: "tip", Title: fmt.Sprint(i), Content: "c"}); err != nil {
			t.Fatal(err)
		}
	}
	r := exec(t, tools.SaveNote{}, env, `{"note_type":"tip","title":"one more","content":"c"}`)
	if !r.IsError || !strings.Contains(r.Content, "note limit reached (1000 notes): delete some first") {
		t.Fatalf("save_note at the cap = %+v, want an is_error result naming the limit", r)
	}
}

// TestSecuritySaveFileCap: issue 20 finding 8 (caps), for save_file.
func TestSecuritySaveFileCap(t *testing.T) {
	env := storeEnv(t)
	for i := range coachd.MaxFilesPerUser {
		if err := env.Store.SaveFile(context.Background(), &coachd.File{UserID: env.User.ID, Type: "capture", Name: fmt.Sprint(i), Content: "c"}); err != nil {
			t.Fatal(err)
		}
	}
	r := exec(t, tools.SaveFile{}, env, `{"file_type":"capture","file_name":"one-more","content":"c"}`)
	if !r.IsError || !strings.Contains(r.Content, "file limit reached (500 files)") {
		t.Fatalf("save_file at the cap = %+v, want an is_error result naming the limit", r)
	}
	if r := exec(t, tools.SaveFile{}, env, `{"file_type":"capture","file_name":"7","content":"replaced"}`); r.IsError {
		t.Fatalf("replacing a file at the cap = %+v", r)
	}
}

// TestSecuritySaveFileNameFormatChars: issue 20 finding 13, through the
// tools: a name with a bidi override and a zero-width space is refused.
func TestSecuritySaveFileNameFormatChars(t *testing.T) {
	env := storeEnv(t)
	for _, name := range []string{`a\u202egnp.exe\u200b`, `a\u2066b`, `\ufeffab`, `a\u200db`} {
		r := exec(t, tools.SaveFile{}, env, `{"file_type":"capture","file_name":"`+name+`","content":"x"}`)
		if !r.IsError || !strings.Contains(r.Content, "file_name") {
			t.Errorf("save_file %s = %+v, want is_error on file_name", name, r)
		}
		if r := exec(t, tools.ReadFile{}, env, `{"file_type":"capture","file_name":"`+name+`"}`); !r.IsError || !strings.Contains(r.Content, "invalid") {
			t.Errorf("read_file %s = %+v, want refused", name, r)
		}
	}
	if files, _ := env.Store.ListFiles(context.Background(), env.User.ID, coachd.FileFilter{}); len(files) != 0 {
		t.Fatalf("stored %d files", len(files))
	}
}
