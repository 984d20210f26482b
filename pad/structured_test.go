package pad

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

func structuredPad(t *testing.T) *Pad {
	t.Helper()
	return newPad(t, Options{Format: FormatJSON, Schema: fixture(t, "schema.json"), MaxDepth: 4})
}

func stateOf(t *testing.T, p *Pad) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(readFile(t, p.Path())), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestStructuredMerge(t *testing.T) {
	tests := []struct {
		name    string
		updates []string
		want    string // JSON of the final state
		warn    string
	}{
		{"objects merge recursively", []string{`{"env":{"a":1,"b":{"c":2}}}`, `{"env":{"b":{"d":3}}}`}, `{"env":{"a":1,"b":{"c":2,"d":3}}}`, ""},
		{"arrays replace", []string{`{"facts":["a","b"]}`, `{"facts":["c"]}`}, `{"facts":["c"]}`, ""},
		{"scalars replace", []string{`{"task":"x","step":1}`, `{"step":2}`}, `{"step":2,"task":"x"}`, ""},
		{"null removes", []string{`{"task":"x","step":1}`, `{"task":null}`}, `{"step":1}`, ""},
		{"forbidden keys stripped at every depth", []string{`{"__proto__":{"admin":true},"env":{"constructor":{"x":1},"ok":{"prototype":1,"y":2}}}`}, `{"env":{"ok":{"y":2}}}`, "dropped forbidden keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := structuredPad(t)
			var res *Result
			for _, u := range tt.updates {
				var err error
				if res, err = p.Merge([]byte(u)); err != nil {
					t.Fatalf("Merge(%s): %v", u, err)
				}
			}
			got, _ := json.Marshal(stateOf(t, p))
			if string(got) != tt.want {
				t.Errorf("state = %s, want %s", got, tt.want)
			}
			if tt.warn != "" && (len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0], tt.warn)) {
				t.Errorf("warnings = %q, want %q", res.Warnings, tt.warn)
			}
		})
	}
}

func TestStructuredRejectsAndKeepsState(t *testing.T) {
	tests := []struct {
		name     string
		update   string
		sentinel error
	}{
		{"schema violation", `{"step":-1}`, ErrSchema},
		{"wrong type", `{"task":42}`, ErrSchema},
		{"not an object", `[1,2]`, ErrBadState},
		{"too deep", `{"env":{"a":{"b":{"c":{"d":1}}}}}`, ErrBadState},
		{"broken json", `{"task":`, ErrBadState},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := structuredPad(t)
			if _, err := p.Merge([]byte(`{"task":"keep","step":1}`)); err != nil {
				t.Fatal(err)
			}
			before := readFile(t, p.Path())
			_, err := p.Merge([]byte(tt.update))
			if !errors.Is(err, tt.sentinel) {
				t.Fatalf("err = %v, want %v", err, tt.sentinel)
			}
			if readFile(t, p.Path()) != before {
				t.Fatal("state changed")
			}
		})
	}
}

func TestStructuredBrokenFileQuarantined(t *testing.T) {
	p := structuredPad(t)
	if _, err := p.Merge([]byte(`{"task":"good"}`)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p.Path(), []byte(`{"task": "half`), 0o644)
	out, err := p.Read(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "pad.json did not parse") || !strings.Contains(out, `"task": "good"`) {
		t.Fatalf("read:\n%s", out)
	}
}

func TestWrongFormat(t *testing.T) {
	if _, err := structuredPad(t).Update([]Patch{{Section: "Task", Op: OpClear}}); !errors.Is(err, ErrWrongFormat) {
		t.Fatalf("Update on structured pad: %v", err)
	}
	if _, err := newPad(t, Options{}).Merge([]byte(`{}`)); !errors.Is(err, ErrWrongFormat) {
		t.Fatalf("Merge on markdown pad: %v", err)
	}
}

func TestBadSchemaRejectedAtOpen(t *testing.T) {
	_, err := Open(t.TempDir(), Options{Format: FormatJSON, Schema: []byte(`{"type": 12}`)})
	if !errors.Is(err, ErrOptions) {
		t.Fatalf("err = %v", err)
	}
}

func TestStructuredHandEditedForbiddenKeyStripped(t *testing.T) {
	p := structuredPad(t)
	if _, err := p.Merge([]byte(`{"task":"t"}`)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p.Path(), []byte(`{"task":"t","env":{"__proto__":{"x":1}}}`), 0o644)
	res, err := p.Merge([]byte(`{"step":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p.Path()); strings.Contains(got, "__proto__") {
		t.Fatalf("forbidden key survived:\n%s", got)
	}
	if len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0], "/env/__proto__") {
		t.Fatalf("warnings = %q", res.Warnings)
	}
}
