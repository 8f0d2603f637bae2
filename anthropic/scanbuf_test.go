package anthropic_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestScanBufferReuse: a closed stream gives its line buffer back for the
// next stream, and nothing it returned points into that buffer. Streams
// of different texts and tool inputs, some with lines past the buffer's
// 4 KiB, run one after another, each read whole and closed; what each
// returned is compared, after all of them ran, with a deep copy taken when
// it ended. A stream read after its Close returns no event.
func TestScanBufferReuse(t *testing.T) {
	srv := MustServer(t)
	m := anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: srv.URL(), MaxRetries: -1})
	type result struct {
		evs  []coachd.ModelEvent
		resp *coachd.ModelResponse
	}
	var got, kept []result
	for i := range 12 {
		text := strings.Repeat(fmt.Sprintf("word%d ", i), 1+i*90) // up to 7 KB in one delta at i = 11
		srv.Enqueue(anthropictest.Blocks(anthropictest.TextBlock(text, 1+i%3),
			anthropictest.ToolUse(fmt.Sprintf("toolu_%d", i), "save_note", fmt.Sprintf(`{"text":%q}`, text), 2)))
		s := m.Stream(context.Background(), hello())
		evs, resp, err := drain(s)
		if err != nil || len(resp.Blocks) != 2 || resp.Blocks[0].Text != text {
			t.Fatalf("stream %d: %v, %+v", i, err, resp)
		}
		if s.Next() {
			t.Fatalf("stream %d: an event after Close", i)
		}
		got = append(got, result{evs, resp})
		kept = append(kept, result{deepCopy(t, evs), deepCopy(t, resp)})
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], kept[i]) {
			t.Errorf("stream %d: what it returned changed after later streams ran", i)
		}
	}
}

// deepCopy copies v through reflection, strings and byte slices too.
func deepCopy[T any](t *testing.T, v T) T {
	t.Helper()
	return copyValue(reflect.ValueOf(v)).Interface().(T)
}

func copyValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(copyValue(v.Elem()))
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(copyValue(v.Index(i)))
		}
		return c
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		for i := range v.NumField() {
			if c.Field(i).CanSet() {
				c.Field(i).Set(copyValue(v.Field(i)))
			}
		}
		return c
	case reflect.String:
		return reflect.ValueOf(strings.Clone(v.String())).Convert(v.Type())
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			c.SetMapIndex(it.Key(), copyValue(it.Value()))
		}
		return c
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type()).Elem()
		c.Set(copyValue(v.Elem()))
		return c
	}
	return v
}
