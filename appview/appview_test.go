package appview

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/explore"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// TestPageSelfContained: the page is under 100 KB and loads nothing:
// no script, style, font, image or frame from anywhere, so it works
// offline and under a host's CSP with no domains declared.
func TestPageSelfContained(t *testing.T) {
	if n := len(Page()); n >= 100*1024 {
		t.Errorf("the page is %d bytes; the bound is 100 KB", n)
	}
	for _, tc := range []struct{ what, re string }{
		{"a script from a file", `<script[^>]*\bsrc\s*=`},
		{"a linked stylesheet or icon", `<link\b`},
		{"a CSS import or url()", `@import|url\(`},
		{"an address", `(?i)\b(https?|wss?|ftp):`},
		{"a protocol-relative address", `["'(]//[a-z0-9]`},
		{"an image, frame or object", `(?i)<(img|iframe|object|embed|video|audio)\b`},
		{"a fetch of its own", `\bfetch\(|XMLHttpRequest|new WebSocket|importScripts|import\(`},
	} {
		if m := regexp.MustCompile(tc.re).FindString(Page()); m != "" {
			t.Errorf("the page has %s: %q", tc.what, m)
		}
	}
	r := Resource()
	if r.URI != URI || r.MIMEType != "text/html;profile=mcp-app" || !strings.HasPrefix(r.URI, "ui://") {
		t.Errorf("resource %s %s", r.URI, r.MIMEType)
	}
}

// env is an exploration environment over a folder with rows.json (an
// object holding 30 rows) and app.log, and a file outside it.
func env(t *testing.T) EnvFor {
	t.Helper()
	top := t.TempDir()
	dir := filepath.Join(top, "root")
	var rows []string
	for i := range 30 {
		st := "ok"
		if i%3 == 0 {
			st = "failed"
		}
		rows = append(rows, `{"id":10,"n":`+strconv.Itoa(i)+`,"status":"`+st+`"}`)
	}
	for name, body := range map[string]string{
		filepath.Join(dir, "rows.json"):  `{"rows":[` + strings.Join(rows, ",") + `]}`,
		filepath.Join(dir, "app.log"):    "start\nERROR one\nok\nerror two\n",
		filepath.Join(top, "other.json"): `{"secret":1}`,
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	e := &explore.Env{Root: root, Count: func(s string) int { return len(s) / 4 }, Slots: make(chan struct{}, 1)}
	return func(context.Context) (*explore.Env, error) { return e, nil }
}

func call(t *testing.T, defs []tool.Def, name string, args string) tool.Result {
	t.Helper()
	for _, d := range defs {
		if d.Name == name {
			return d.Handler(context.Background(), json.RawMessage(args))
		}
	}
	t.Fatalf("no tool %s", name)
	return tool.Result{}
}

func TestTools(t *testing.T) {
	defs := Tools(env(t))
	for _, d := range defs {
		ui, _ := d.Meta["ui"].(map[string]any)
		if d.Extension != Extension || ui == nil {
			t.Errorf("%s: extension %q, _meta %v", d.Name, d.Extension, d.Meta)
		}
	}
	cases := []struct {
		name, tool, args string
		want             []string // in the answer
		code             string   // the error object's, "" for none
	}{
		{"the model's line", ToolView, `{"file":"rows.json"}`, []string{"can now see rows.json (JSON; $.rows: 30 items)", "none of it was added to your context"}, ""},
		{"the model's line for text", ToolView, `{"file":"app.log"}`, []string{"text, 4 lines"}, ""},
		{"a missing file", ToolView, `{"file":"nope.json"}`, []string{"nope.json"}, "file_not_found"},
		{"outside the read root", ToolView, `{"file":"../other.json"}`, nil, "file_outside_root"},
		{"a table page, filtered and sorted", ToolPage, `{"file":"rows.json","mode":"items","path":"$.rows","filter":"@.status == 'failed'","sort_by":"n","order":"desc","limit":2}`,
			[]string{`"items":[{"id":10,"n":27,"status":"failed"},{"id":10,"n":24,"status":"failed"}]`, `"index":[27,24]`, `"matched":10`, `"total":30`}, ""},
		{"a tree node", ToolPage, `{"file":"rows.json","mode":"node","path":"$.rows[1]"}`, []string{`"path":"$.rows[1].status"`, `"value":"ok"`}, ""},
		{"lines searched", ToolPage, `{"file":"app.log","mode":"lines","search":"error"}`, []string{`{"n":2,"text":"ERROR one"}`, `{"n":4,"text":"error two"}`, `"matched":2`}, ""},
		{"a page outside the read root", ToolPage, `{"file":"../other.json","mode":"node"}`, nil, "file_outside_root"},
		{"a bad filter", ToolPage, `{"file":"rows.json","mode":"items","path":"$.rows","filter":"@.n >"}`, nil, "bad_filter"},
		{"a window past the bound", ToolPage, `{"file":"rows.json","mode":"items","limit":5000}`, []string{"limit"}, "invalid_arguments"},
		{"identity is no argument", ToolPage, `{"file":"rows.json","mode":"items","owner":"alice"}`, []string{"owner"}, "invalid_arguments"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, defs, tc.tool, tc.args)
			if res.IsError {
				t.Fatalf("IsError: %s", res.Text)
			}
			var o struct {
				Error string `json:"error"`
			}
			_ = json.Unmarshal([]byte(res.Text), &o)
			if o.Error != tc.code {
				t.Fatalf("error %q, want %q: %s", o.Error, tc.code, res.Text)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("answer lacks %s: %s", w, res.Text)
				}
			}
			if strings.Contains(res.Text, "secret") {
				t.Errorf("answer shows what is outside the read root: %s", res.Text)
			}
		})
	}
}

// TestPageBusy: the page's calls take the agent's exploration slots, so
// a page cannot occupy more cores than the model's calls may.
func TestPageBusy(t *testing.T) {
	envFor := env(t)
	e, _ := envFor(context.Background())
	release, err := e.Slot()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	res := call(t, Tools(envFor), ToolPage, `{"file":"rows.json","mode":"items"}`)
	if !strings.Contains(res.Text, `"error":"busy"`) {
		t.Fatalf("with every slot taken: %s", res.Text)
	}
	if _, err := e.Slot(); !errors.Is(err, explore.ErrBusy) {
		t.Fatalf("Slot when full: %v", err)
	}
}
