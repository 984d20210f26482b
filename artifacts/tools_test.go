package artifacts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/budget"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

var _ Budget = (*budget.Agent)(nil)

// session is what a server registers for one session: the artifact
// tools that [Visible] lets it see, resolving env.
type session struct {
	env  *Env
	defs map[string]tool.Def
}

func newSession(t *testing.T, env *Env) *session {
	t.Helper()
	s := &session{env: env, defs: map[string]tool.Def{}}
	for _, d := range Tools(func(context.Context) (*Env, error) { return env, nil }) {
		if Visible(env, d.Name) {
			s.defs[d.Name] = d
		}
	}
	return s
}

// call runs a tool with args sent as JSON, and returns its text, failing
// on unlisted tools and IsError results.
func call(t *testing.T, s *session, name string, args map[string]any) string {
	t.Helper()
	d, ok := s.defs[name]
	if !ok {
		t.Fatalf("%s: not listed", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res := d.Handler(context.Background(), raw)
	if res.IsError {
		t.Fatalf("%s: error result %s", name, res.Text)
	}
	return res.Text
}

func decode(t *testing.T, text string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, text)
	}
	return m
}

func toolNames(s *session) []string {
	var names []string
	for name := range s.defs {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func runStore(t *testing.T) (*Store, string) {
	t.Helper()
	mem := t.TempDir()
	s, err := openRun(mem, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	return s, mem
}

func TestToolListingByRole(t *testing.T) {
	s, _ := runStore(t)
	coord := newSession(t, &Env{Store: s, Role: RoleCoordinator})
	if got := toolNames(coord); !slices.Equal(got, []string{ToolList, ToolRead, ToolWrite}) {
		t.Fatalf("coordinator tools %v", got)
	}
	for _, d := range coord.defs {
		ro := d.Annotations.ReadOnly != nil && *d.Annotations.ReadOnly
		if ro != (d.Name != ToolWrite) {
			t.Errorf("%s: readOnlyHint %v", d.Name, ro)
		}
	}
	worker := newSession(t, &Env{Store: s, Role: "worker"})
	if got := toolNames(worker); !slices.Equal(got, []string{ToolList, ToolRead}) {
		t.Fatalf("worker tools %v", got)
	}
	if Visible(nil, ToolWrite) || !Visible(nil, ToolRead) || !Visible(nil, "head") {
		t.Error("a session without an Env sees what a worker sees")
	}
}

func TestToolSchemas(t *testing.T) {
	want := map[string]string{
		ToolWrite: `{"properties":{"content":{"type":"string"},"filename":{"description":"e.g. findings.md","maxLength":4096,"type":"string"}},"required":["filename","content"],"type":"object"}`,
		ToolRead:  `{"properties":{"filename":{"description":"As written or listed by list_artifacts.","maxLength":4096,"type":"string"},"run_id":{"description":"Another run's id; omit for this run.","maxLength":64,"type":"string"}},"required":["filename"],"type":"object"}`,
		ToolList:  `{"properties":{},"type":"object"}`, // no "required": [] since tool.Args (issue 35)
	}
	for _, d := range Tools(nil) {
		if got := string(d.InputSchema); got != want[d.Name] {
			t.Errorf("%s schema:\n got %s\nwant %s", d.Name, got, want[d.Name])
		}
	}
}

func TestWriteTool(t *testing.T) {
	s, mem := runStore(t)
	c := newSession(t, &Env{Store: s, Role: RoleCoordinator})
	tests := []struct {
		filename, content string
		want              string
	}{
		{"../../x.md", "# plan", `{"written":true,"filename":"coordinator-x.md","replaced":false,"chars":6}`},
		{"x.md", "# plan v2", `{"written":true,"filename":"coordinator-x.md","replaced":true,"chars":9}`},
		{"data", "ünï", `{"written":true,"filename":"coordinator-data.txt","replaced":false,"chars":3}`},
		{"???", "x", `{"written":false,"filename":"","replaced":false,"chars":0,"error":"artifacts: \"???\": not a usable artifact file name"}`},
	}
	for _, tt := range tests {
		if got := call(t, c, ToolWrite, map[string]any{"filename": tt.filename, "content": tt.content}); got != tt.want {
			t.Errorf("write %q:\n got %s\nwant %s", tt.filename, got, tt.want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(mem, "run-1", layout.ArtifactsDir, "coordinator-x.md")); err != nil || string(b) != "# plan v2" {
		t.Fatalf("stored %q, %v", b, err)
	}
}

func TestToolsWithoutRun(t *testing.T) {
	c := newSession(t, &Env{Role: RoleCoordinator})
	w := decode(t, call(t, c, ToolWrite, map[string]any{"filename": "x.md", "content": "x"}))
	if w["written"] != false || w["filename"] != "" || !strings.Contains(w["error"].(string), "embed the content in the task") {
		t.Fatalf("write without run: %v", w)
	}
	if r := decode(t, call(t, c, ToolRead, map[string]any{"filename": "x.md"})); r["error"] != "no_run" {
		t.Fatalf("read without run: %v", r)
	}
	if l := decode(t, call(t, c, ToolList, nil)); l["count"] != 0.0 || len(l["artifacts"].([]any)) != 0 {
		t.Fatalf("list without run: %v", l)
	}
}

func TestWorkerWithoutVisibleIsRefused(t *testing.T) {
	s, _ := runStore(t)
	env := &Env{Store: s, Role: "worker"}
	h := handlers{envFor: func(context.Context) (*Env, error) { return env, nil }}
	res := h.write(context.Background(), writeArgs{Filename: "x.md", Content: "x"}, nil)
	m := decode(t, res.Text)
	if m["written"] != false || !strings.Contains(m["error"].(string), "coordinators") {
		t.Fatalf("worker write: %v", m)
	}
}

// Arguments the schema refuses are answered before anything runs, each
// problem named.
func TestArgumentsCheckedBySchema(t *testing.T) {
	defs := Tools(func(context.Context) (*Env, error) { return nil, errors.New("not reached") })
	for _, tc := range []struct{ tool, args, want string }{
		{ToolWrite, `{}`, "content is required; filename is required."},
		{ToolWrite, `{"filename":3,"content":"x"}`, "filename must be a string, not an integer."},
		{ToolRead, `[1]`, "the arguments must be one JSON object."},
		{ToolRead, `{"filename":"a.md","run_id":true}`, "run_id must be a string, not a boolean."},
		// Bounds, and arguments no schema declares (they used to pass).
		{ToolWrite, `{"filename":"` + strings.Repeat("é", 4097) + `","content":"x"}`, "filename must be at most 4096 characters, not 4097."},
		{ToolRead, `{"filename":"a.md","run_id":"` + strings.Repeat("r", 65) + `"}`, "run_id must be at most 64 characters, not 65."},
		{ToolRead, `{"filename":"a.md","FileName":"b.md"}`, `"FileName" is not an argument (names are case-sensitive): did you mean filename?.`},
		{ToolList, `{"run_id":"r1"}`, `unknown argument(s) "run_id" (this tool takes: no arguments).`},
		{ToolWrite, `{"filename":"a.md","content":"x","overwrite":false}`, `unknown argument(s) "overwrite" (this tool takes: content, filename).`},
	} {
		for _, d := range defs {
			if d.Name != tc.tool {
				continue
			}
			m := decode(t, d.Handler(context.Background(), json.RawMessage(tc.args)).Text)
			if m["error"] != "invalid_arguments" || m["message"] != tc.want {
				t.Errorf("%s %s: %v, want %q", tc.tool, tc.args, m, tc.want)
			}
		}
	}
}

func TestEnvErrorIsAnErrorResult(t *testing.T) {
	args := map[string]string{ToolWrite: `{"filename":"x.md","content":"x"}`, ToolRead: `{"filename":"x.md"}`, ToolList: `{}`}
	for _, d := range Tools(func(context.Context) (*Env, error) { return nil, errors.New("no session") }) {
		if res := d.Handler(context.Background(), json.RawMessage(args[d.Name])); !res.IsError || !strings.Contains(res.Text, "no session") {
			t.Errorf("%s: %+v", d.Name, res)
		}
	}
}

// words counts whitespace-separated words: a deterministic stand-in for
// the tokens package.
func words(s string) int { return len(strings.Fields(s)) }

func TestReadToolInlineAndCharged(t *testing.T) {
	s, _ := runStore(t)
	if _, err := s.Write("notes.md", "alpha beta gamma delta"); err != nil {
		t.Fatal(err)
	}
	agent := budget.NewAgent(budget.Identity{}, 1000, 100)
	c := newSession(t, &Env{Store: s, RunID: "run-1", Role: "worker", Budget: agent, Count: words, MaxExtractionTokens: 500})
	got := call(t, c, ToolRead, map[string]any{"filename": "notes.md"})
	if !strings.HasPrefix(got, "alpha beta gamma delta\n--- read_artifact: coordinator-notes.md (22 bytes) | ~4 tokens, ~896 left of 1000 ---") {
		t.Fatalf("inline read:\n%s", got)
	}
	charged := words(got)
	if agent.Remaining() != 900-charged || agent.Usage().TokensExtracted != charged {
		t.Fatalf("remaining %d extracted %d; want %d %d", agent.Remaining(), agent.Usage().TokensExtracted, 900-charged, charged)
	}
	// Same run named explicitly changes nothing.
	if got := call(t, c, ToolRead, map[string]any{"filename": "coordinator-notes.md", "run_id": "run-1"}); !strings.HasPrefix(got, "alpha") {
		t.Fatalf("run_id of own run: %s", got)
	}
}

func TestReadToolTooLarge(t *testing.T) {
	s, _ := runStore(t)
	content := strings.Repeat("word ", 300) // 300 words
	if _, err := s.Write("big.md", content); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		usable    int
		perCall   int
		wantField string
		wantLimit float64
	}{
		{"per-call cap", 10_000, 100, "per_call_limit", 100},
		{"remaining budget", 150, 10_000, "remaining_budget_tokens", 150},
		// 1 token left: the file is not even read (1 × 32 bytes < 1500).
		{"nearly exhausted", 1, 10_000, "remaining_budget_tokens", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			agent := budget.NewAgent(budget.Identity{}, tt.usable, 0)
			c := newSession(t, &Env{Store: s, RunID: "run-1", Role: "worker", Budget: agent, Count: words, MaxExtractionTokens: tt.perCall})
			m := decode(t, call(t, c, ToolRead, map[string]any{"filename": "big.md"}))
			if m["error"] != "read_artifact_too_large" || m["found"] != true || m["filename"] != "coordinator-big.md" ||
				m["path"] != "../../artifacts/coordinator-big.md" || m[tt.wantField] != tt.wantLimit || m["size_bytes"] != 1500.0 {
				t.Fatalf("pointer: %v", m)
			}
			sugg := m["suggestions"].([]any)
			first := sugg[0].(map[string]any)
			if first["tool"] != "schema" || first["arguments"].(map[string]any)["file"] != "../../artifacts/coordinator-big.md" {
				t.Fatalf("suggestions: %v", sugg)
			}
			if agent.Usage().TokensExtracted != 0 {
				t.Fatal("a pointer was charged")
			}
		})
	}
}

func TestReadToolCoordinatorWithoutBudget(t *testing.T) {
	s, _ := runStore(t)
	content := strings.Repeat("word ", 30_000) // far above the default cap
	if _, err := s.Write("big.md", content); err != nil {
		t.Fatal(err)
	}
	c := newSession(t, &Env{Store: s, Role: RoleCoordinator, Count: words})
	got := call(t, c, ToolRead, map[string]any{"filename": "big.md"})
	if !strings.HasPrefix(got, content) || !strings.HasSuffix(got, "--- read_artifact: coordinator-big.md (150000 bytes) ---") {
		t.Fatalf("coordinator read: %d bytes, tail %q", len(got), got[max(0, len(got)-80):])
	}
	// A worker without a budget is still held to the per-call cap.
	w := newSession(t, &Env{Store: s, Role: "worker", Count: words})
	if m := decode(t, call(t, w, ToolRead, map[string]any{"filename": "big.md"})); m["per_call_limit"] != float64(DefaultMaxExtractionTokens) {
		t.Fatalf("worker read: %v", m)
	}
}

func TestReadToolNotFoundAndRefusals(t *testing.T) {
	s, mem := runStore(t)
	for i := range 45 {
		if _, err := s.Write(fmt.Sprintf("f%02d.md", i), "x"); err != nil {
			t.Fatal(err)
		}
	}
	other, _ := openRun(mem, "run-0")
	if _, err := other.Write("old.md", "from before"); err != nil {
		t.Fatal(err)
	}
	c := newSession(t, &Env{Store: s, RunID: "run-1", Role: "worker", Count: words, OpenRun: runOpener(mem)})

	m := decode(t, call(t, c, ToolRead, map[string]any{"filename": "nope.md"}))
	avail := m["available"].([]any)
	if m["found"] != false || len(avail) != 40 || m["available_omitted"] != 5.0 || avail[0] != "coordinator-f00.md" {
		t.Fatalf("not found: %v", m)
	}
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"filename": "../../etc/passwd"}, "outside_artifacts"},
		{map[string]any{"filename": "/etc/passwd"}, "outside_artifacts"},
		{map[string]any{"filename": ""}, "invalid_artifact_name"},
		{map[string]any{"filename": "x.md", "run_id": "../.."}, "invalid_run_id"},
		{map[string]any{"filename": "x.md", "run_id": "a/b"}, "invalid_run_id"},
	}
	for _, tt := range tests {
		if m := decode(t, call(t, c, ToolRead, tt.args)); m["error"] != tt.want || strings.Contains(fmt.Sprint(m), mem) {
			t.Errorf("read %v: %v, want error %s", tt.args, m, tt.want)
		}
	}
	if got := call(t, c, ToolRead, map[string]any{"filename": "old.md", "run_id": "run-0"}); !strings.HasPrefix(got, "from before") {
		t.Fatalf("other run: %s", got)
	}
	noMem := newSession(t, &Env{Store: s, RunID: "run-1", Role: "worker"})
	if m := decode(t, call(t, noMem, ToolRead, map[string]any{"filename": "old.md", "run_id": "run-0"})); m["error"] != "run_not_available" {
		t.Fatalf("other run without MemoryDir: %v", m)
	}
}

func TestListTool(t *testing.T) {
	s, _ := runStore(t)
	c := newSession(t, &Env{Store: s, Role: RoleCoordinator, Count: words})
	call(t, c, ToolWrite, map[string]any{"filename": "b.csv", "content": "a,b\n1,2\n"})
	call(t, c, ToolWrite, map[string]any{"filename": "a.md", "content": "one two three"})
	got := call(t, c, ToolList, nil)
	want := `{"artifacts":[{"name":"coordinator-a.md","size_bytes":13,"tokens":3},{"name":"coordinator-b.csv","size_bytes":8,"tokens":2}],"count":2}`
	if got != want {
		t.Fatalf("list:\n got %s\nwant %s", got, want)
	}
}
