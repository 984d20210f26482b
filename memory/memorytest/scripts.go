// Package memorytest holds what tests of package memory and of its
// stores share: [Map], a store in memory, the reference; [RunScripts],
// the memory tool's answers as golden scripts, run against any store; and
// [TestStore], what every [memory.Store] must do.
package memorytest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/memory"
)

// Epoch is where a script's clock starts; every call moves it a second.
var Epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// section is one "-- name --" part of a script (the txtar format of
// golang.org/x/tools/txtar, small enough to read here).
type section struct {
	name string
	data []byte
}

func parse(b []byte) (comment []byte, secs []section) {
	cur := -1
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		t := bytes.TrimRight(l, "\n")
		if bytes.HasPrefix(t, []byte("-- ")) && bytes.HasSuffix(t, []byte(" --")) && len(t) > 6 {
			secs = append(secs, section{name: string(t[3 : len(t)-3])})
			cur = len(secs) - 1
			continue
		}
		if cur < 0 {
			comment = append(comment, l...)
		} else {
			secs[cur].data = append(secs[cur].data, l...)
		}
	}
	return comment, secs
}

func format(comment []byte, secs []section) []byte {
	var b bytes.Buffer
	b.Write(comment)
	for _, s := range secs {
		b.WriteString("-- " + s.name + " --\n")
		b.Write(s.data)
	}
	return b.Bytes()
}

// scriptOptions are a script's "-- options --", in the config's words.
type scriptOptions struct {
	MaxFileBytes  int64    `json:"max_file_bytes"`
	MaxScopeBytes int64    `json:"max_scope_bytes"`
	MaxFiles      int      `json:"max_files"`
	TTL           string   `json:"ttl"`
	ReadOnly      bool     `json:"read_only"`
	ReadOnlyPaths []string `json:"read_only_paths"`
}

// RunScripts runs every script in dir (*.txtar) against a fresh store
// from newStore, through the memory tool as a model calls it ([memory.Tools]).
// A script is a comment, then sections:
//
//	-- options --      JSON: max_file_bytes, max_scope_bytes, max_files, ttl ("25h"), read_only, read_only_paths
//	-- call --         the tool's arguments, JSON
//	-- want --         its answer, exactly (a final line feed of the section is not the answer's)
//	-- want error --   its answer, a refusal (isError)
//	-- advance --      a duration the clock moves ("2h")
//	-- seed --         JSON {"path": "notes/a.md", "text": "…"}: a file put in the store as the operator would, not through the tool
//
// With update, the want sections are rewritten with the answers given
// (review the diff).
func RunScripts(t *testing.T, dir string, newStore func(t *testing.T) memory.Store, update bool) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scripts in %s: %v", dir, err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			comment, secs := parse(b)
			if runScript(t, secs, newStore(t)) && update {
				if err := os.WriteFile(path, format(comment, secs), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// runScript runs one script's sections, and reports whether an answer
// differed (secs then holds the answers given).
func runScript(t *testing.T, secs []section, st memory.Store) (changed bool) {
	now := Epoch
	o := memory.Options{Now: func() time.Time { return now }}
	var handler func(args string) (string, bool)
	build := func() {
		defs, err := memory.Tools(func(context.Context) (memory.Store, error) { return st, nil }, o)
		if err != nil {
			t.Fatal(err)
		}
		handler = func(args string) (string, bool) {
			res := defs[0].Handler(context.Background(), json.RawMessage(args))
			return res.Text, res.IsError
		}
	}
	build()
	var last string
	for i := range secs {
		s := &secs[i]
		body := strings.TrimSuffix(string(s.data), "\n")
		switch s.name {
		case "options":
			var so scriptOptions
			if err := json.Unmarshal(s.data, &so); err != nil {
				t.Fatalf("options: %v", err)
			}
			o.MaxFileBytes, o.MaxScopeBytes, o.MaxFiles = so.MaxFileBytes, so.MaxScopeBytes, so.MaxFiles
			o.ReadOnly, o.ReadOnlyPaths, o.TTL = so.ReadOnly, so.ReadOnlyPaths, 0
			if so.TTL != "" {
				d, err := time.ParseDuration(so.TTL)
				if err != nil {
					t.Fatalf("options: ttl: %v", err)
				}
				o.TTL = d
			}
			build()
		case "advance":
			d, err := time.ParseDuration(body)
			if err != nil {
				t.Fatalf("advance: %v", err)
			}
			now = now.Add(d)
		case "seed":
			var f struct{ Path, Text string }
			if err := json.Unmarshal(s.data, &f); err != nil {
				t.Fatalf("seed: %v", err)
			}
			tx, err := st.Lock()
			if err != nil {
				t.Fatal(err)
			}
			_, err = tx.Write(f.Path, []byte(f.Text), now)
			tx.Unlock()
			if err != nil {
				t.Fatalf("seed: %v", err)
			}
		case "call":
			now = now.Add(time.Second)
			last = body
		case "want", "want error":
			got, isErr := handler(last)
			wantErr := s.name == "want error"
			if got != body || isErr != wantErr {
				changed = true
				name := "want"
				if isErr {
					name = "want error"
				}
				t.Errorf("call %s\ngot (%s):\n%s\nwant (%s):\n%s", last, name, got, s.name, body)
				s.name, s.data = name, []byte(got+"\n")
			}
		default:
			t.Fatalf("unknown section %q", s.name)
		}
	}
	return changed
}
