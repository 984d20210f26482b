package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTake(t *testing.T) {
	env := fixtureEnv(t)
	env.Cache = NewCache(64 << 20) // the cached bytes must never be handed out
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(fixtures, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	compacted := func(b []byte) []byte {
		var out bytes.Buffer
		if err := json.Compact(&out, b); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	log := read("app.log")
	logLines := strings.SplitAfter(string(log), "\n")
	cases := []struct {
		name  string
		file  string
		sel   Selector
		want  []byte // nil: only the other fields are checked
		json  bool
		nodes int
		canon string
	}{
		{"whole text as stored", "app.log", Selector{}, log, false, 0, ""},
		{"whole JSON as stored", "nested.json", Selector{}, read("nested.json"), false, 0, ""},
		{"whole JSON as a value", "nested.json", Selector{JSON: true}, compacted(read("nested.json")), true, 0, ""},
		{"NDJSON records as an array", "events.ndjson", Selector{JSON: true}, nil, true, 0, ""},
		{"CSV rows as an array", "table.csv", Selector{JSON: true}, nil, true, 0, ""},
		{"a singular path", "nested.json", Selector{Path: "$.results[0].metadata"}, []byte(`{"name":"item-1","author":{"login":"user0","site_admin":true}}`), true, 0, "$.results[0].metadata"},
		{"a string value", "nested.json", Selector{Path: "query"}, []byte(`"error handling"`), true, 0, "$.query"},
		{"a node list", "nested.json", Selector{Path: "$.results[0:3].id"}, []byte(`[1,2,3]`), true, 3, ""},
		{"a filter", "nested.json", Selector{Path: "$.results[?@.id <= 2].title"}, []byte(`["Result number 1","Result number 2"]`), true, 2, ""},
		{"NDJSON by path", "events.ndjson", Selector{Path: "$[1].level"}, []byte(`"warn"`), true, 0, "$[1].level"},
		{"lines", "app.log", Selector{First: 2, Last: 3}, []byte(logLines[1] + logLines[2]), false, 0, ""},
		{"lines to the end", "app.log", Selector{First: 39}, []byte(logLines[38] + logLines[39]), false, 0, ""},
		{"lines clamped", "app.log", Selector{First: 40, Last: 500}, []byte(logLines[39]), false, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Take(context.Background(), env, c.file, c.sel)
			if err != nil {
				t.Fatal(err)
			}
			if c.want != nil && !bytes.Equal(got.Data, c.want) {
				t.Errorf("data %.200q, want %.200q", got.Data, c.want)
			}
			if got.JSON != c.json || got.Nodes != c.nodes || got.Canon != c.canon {
				t.Errorf("json %v nodes %d canon %q, want %v %d %q", got.JSON, got.Nodes, got.Canon, c.json, c.nodes, c.canon)
			}
			if got.JSON && !json.Valid(got.Data) {
				t.Errorf("not JSON: %.200s", got.Data)
			}
		})
	}
	// The data is the caller's: changing it changes nothing cached.
	a, _ := Take(context.Background(), env, "app.log", Selector{})
	a.Data[0] = '#'
	if b, _ := Take(context.Background(), env, "app.log", Selector{}); b.Data[0] == '#' {
		t.Error("Take handed out the cache's bytes")
	}
}

func TestTakeRefused(t *testing.T) {
	env := fixtureEnv(t)
	cases := []struct {
		name     string
		file     string
		sel      Selector
		code     string
		sentinel error
		says     string // in the answer
	}{
		{"missing file", "nope.json", Selector{}, "file_not_found", ErrNotFound, `"file":"nope.json"`},
		{"outside the root", "../../go.mod", Selector{}, "file_outside_root", ErrOutsideRoot, "outside the read root"},
		{"absolute", "/etc/passwd", Selector{}, "file_outside_root", ErrOutsideRoot, ""},
		{"a key that is not there", "nested.json", Selector{Path: "$.results[0].metdata"}, "key_path_not_found", nil, `"path":"$.results[0].metadata"`},
		{"an index past the end", "nested.json", Selector{Path: "$.results[99]"}, "key_path_not_found", nil, "out of range"},
		{"a path that selects nothing", "nested.json", Selector{Path: "$.results[?@.id > 1000]"}, "nothing_selected", ErrNothingSelected, "selects no value"},
		{"a path that does not parse", "nested.json", Selector{Path: "$.results[?"}, "invalid_path", ErrBadPath, "column"},
		{"a path into text", "app.log", Selector{Path: "$.a"}, "not_json", nil, "not JSON"},
		{"text as JSON", "app.log", Selector{JSON: true}, "not_json", nil, ""},
		{"broken JSON as JSON", "broken.json", Selector{JSON: true}, "invalid_json", nil, ""},
		{"lines past the end", "app.log", Selector{First: 41}, "invalid_range", nil, "40 lines"},
		{"lines backwards", "app.log", Selector{First: 5, Last: 4}, "invalid_range", nil, ""},
		{"path and lines", "app.log", Selector{Path: "$", First: 1}, "invalid_arguments", nil, ""},
		{"a file over the bound, unread", "app.log", Selector{Max: 100}, "too_large", ErrTooLarge, `"max_bytes":100`},
		{"a selection over the bound", "nested.json", Selector{Path: "$.results", Max: 100}, "too_large", ErrTooLarge, ""},
		{"lines over the bound", "app.log", Selector{First: 1, Last: 20, Max: 100}, "too_large", ErrTooLarge, ""},
		{"JSON over the bound", "nested.json", Selector{JSON: true, Max: 100}, "too_large", ErrTooLarge, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Take(context.Background(), env, c.file, c.sel)
			var r *Refusal
			if !errors.As(err, &r) {
				t.Fatalf("err %v, want a refusal", err)
			}
			if r.Code != c.code {
				t.Errorf("code %q, want %q: %s", r.Code, c.code, r.Answer)
			}
			if c.sentinel != nil && !errors.Is(err, c.sentinel) {
				t.Errorf("%v is not %v", err, c.sentinel)
			}
			if !json.Valid(r.Answer) || !strings.Contains(string(r.Answer), c.says) {
				t.Errorf("answer %s, want it to say %q", r.Answer, c.says)
			}
		})
	}
	// A missing key's answer suggests the closest one, ready to run.
	_, err := Take(context.Background(), env, "nested.json", Selector{Path: "$.results[0].metdata"})
	if r := (*Refusal)(nil); !errors.As(err, &r) || !strings.Contains(string(r.Answer), `"suggestions"`) {
		t.Errorf("no suggestions: %v", err)
	}
}

func TestStored(t *testing.T) {
	env := fixtureEnv(t)
	names, total := Stored(env, "nested.jsn", 3)
	if total < 10 || len(names) != 3 || names[0] != "nested.json" {
		t.Errorf("Stored = %v of %d, want nested.json first of 3", names, total)
	}
	if names, total := Stored(&Env{}, "x", 3); names != nil || total != 0 {
		t.Errorf("no root: %v %d", names, total)
	}
}
