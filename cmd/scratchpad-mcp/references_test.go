package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/budget"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// Outputs by reference through the binary, both eras (issue 56): a
// diverted listing is handed to a tool without entering the context
// (whole, or a path of it), the budget does not pay for the substituted
// bytes, a reference that cannot resolve is refused with the upstream
// untouched, and a call that asks for its result to be stored gets the
// pointer, which can be referred to in turn.
func TestReferencesThroughProxy(t *testing.T) {
	cfg, mem := writeConfig(t, "")
	counter := tokens.ForModel("openai", "gpt-4o") // the config's model
	fileRE := regexp.MustCompile(`(?m)^file: (\S+)$`)
	footer := regexp.MustCompile(`~([\d,]+) tokens, ~([\d,]+) left of`)
	num := func(s string) int { n, _ := strconv.Atoi(strings.ReplaceAll(s, ",", "")); return n }
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			var cs *mcp.ClientSession
			if era == "2025-11-25" {
				cs = stdioSession(t, os.Environ(), binary(t), "serve", "--config", cfg)
				t.Cleanup(func() { _ = cs.Close() }) // stdin closed: the agent ends, its usage is written
			} else {
				cs = modernClient(t, startHTTP(t, "http", cfg)+"/mcp", map[string]string{"X-Scratchpad-Agent": "refs-2026"})
			}
			waitForTool(t, cs, "echo_calls")
			call := func(name string, args map[string]any) (string, *mcp.CallToolResult) {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return text(res), res
			}
			echoes := func() int { s, _ := call("echo_calls", nil); return num(s) }
			ref := func(body map[string]any) map[string]any { return map[string]any{"$scratchpad": body} }

			pointer, _ := call("listing", map[string]any{"n": 300})
			m := fileRE.FindStringSubmatch(pointer)
			if m == nil {
				t.Fatalf("the listing was not diverted:\n%s", short(pointer))
			}
			file := m[1]
			if want := `{"$scratchpad":{"file":"` + file + `","path":"$.items"}}`; !strings.Contains(pointer, want) {
				t.Errorf("the pointer offers no reference %s:\n%s", want, pointer)
			}
			stored, err := os.ReadFile(findStored(t, mem, file))
			if err != nil {
				t.Fatal(err)
			}
			head := func() (n, left int) {
				out, _ := call("head", map[string]any{"file": file, "lines": 2})
				f := footer.FindStringSubmatch(out)
				if f == nil {
					t.Fatalf("no footer: %s", short(out))
				}
				return num(f[1]), num(f[2])
			}

			// The whole stored output into a string parameter: its
			// text, byte for byte; the budget pays for the answer only.
			n1, left1 := head()
			got, _ := call("fancy", map[string]any{"q": "x", "unicode": ref(map[string]any{"file": file})})
			n2, left2 := head()
			if got != "fancy ok" {
				t.Fatalf("fancy with the listing by reference: %s", short(got))
			}
			if want := left1 - counter.CountString(got) - n2; left2 != want || n1 != n2 {
				t.Errorf("left %d after the call, want %d - %d - %d = %d: the %d substituted tokens must not be charged",
					left2, left1, counter.CountString(got), n2, want, counter.Count(stored))
			}

			// A path's value, into echo's string: its text.
			before := echoes()
			if got, _ := call("echo", map[string]any{"text": ref(map[string]any{"file": file, "path": "$.items[3].metadata.name"})}); got != "web-3" {
				t.Errorf("echo of a path: %q, want web-3", got)
			}
			if echoes() != before+1 {
				t.Errorf("echo ran %d times, want 1", echoes()-before)
			}

			// Refusals: each an error the model can act on, and echo
			// never called.
			before = echoes()
			for _, tc := range []struct {
				name string
				arg  map[string]any
				code string
				says string
			}{
				{"missing file", map[string]any{"file": strings.Replace(file, "-", "_", 1)}, "file_not_found", file},
				{"outside the read root", map[string]any{"file": "../../../" + filepath.Base(mem) + "/x.json"}, "file_outside_root", "not one of your stored outputs"},
				{"nothing selected", map[string]any{"file": file, "path": "$.items[?@.status.phase == 'Lost']"}, "nothing_selected", "selects no value"},
				{"does not fit", map[string]any{"file": file, "path": "$.items[0]", "as": "json"}, "reference_does_not_fit", `add "as": "text"`},
				{"not a reference", map[string]any{"fil": file}, "invalid_reference", `not "fil"`},
			} {
				out, res := call("echo", map[string]any{"text": ref(tc.arg)})
				var e struct {
					Error, Message string
					Stored         []string `json:"stored_outputs"`
				}
				if err := json.Unmarshal([]byte(out), &e); err != nil || e.Error != tc.code || !res.IsError {
					t.Errorf("%s: isError %v, answer %s; want %s", tc.name, res.IsError, short(out), tc.code)
					continue
				}
				if !strings.Contains(e.Message, tc.says) && !strings.Contains(out, tc.says) {
					t.Errorf("%s: the answer does not say %q: %s", tc.name, tc.says, short(out))
				}
				if tc.code == "file_not_found" && (len(e.Stored) == 0 || e.Stored[0] != file) {
					t.Errorf("%s: stored outputs %v, want %s first", tc.name, e.Stored, file)
				}
			}
			if n := echoes() - before; n != 0 {
				t.Errorf("echo ran %d times for references that were refused", n)
			}

			// Stored as asked, whatever its size; then passed on (as
			// stored: a text gets a final newline).
			out, _ := call("echo", map[string]any{"text": "a small answer", "$scratchpad": map[string]any{"store": true}})
			m = fileRE.FindStringSubmatch(out)
			if m == nil || !strings.Contains(out, "was stored, as the call asked") {
				t.Fatalf("the answer asked to be stored is not a pointer:\n%s", short(out))
			}
			if got, _ := call("echo", map[string]any{"text": ref(map[string]any{"file": m[1]})}); got != "a small answer\n" {
				t.Errorf("the stored answer by reference: %q", got)
			}
			// A tool with no threshold lists its outputSchema; stored as
			// asked, its pointer keeps no structuredContent, so it is an
			// error result, as a client checking the schema wants.
			if out, res := call("structured", map[string]any{"n": 2, "$scratchpad": map[string]any{"store": true}}); !strings.Contains(out, "was stored, as the call asked") || !res.IsError {
				t.Errorf("structured, stored as asked: isError %v, want true (its schema is listed):\n%s", res.IsError, short(out))
			}
		})
	}
	// Both agents ended with their subtests: each usage record counts
	// the tokens handed over by reference.
	var recs []budget.Usage
	if !testwait.Until(testwait.Timeout, func() bool {
		recs, _ = budget.ReadUsage(filepath.Join(mem, "usage.jsonl"), "")
		n := 0
		for _, r := range recs {
			if r.TokensByReference > 0 {
				n++
			}
		}
		return n == 2
	}) {
		b, _ := json.Marshal(recs)
		t.Errorf("want two usage records counting tokens by reference: %s", b)
	}
}

// findStored is the path of the stored output name under mem.
func findStored(t *testing.T, mem, name string) string {
	t.Helper()
	var found string
	_ = filepath.WalkDir(mem, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == name {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatalf("%s is not stored under %s", name, mem)
	}
	return found
}

// In search mode call_tool goes the same path: a reference in the
// arguments it passes on resolves, and one that does not is refused
// before the tool runs.
func TestReferencesThroughCallTool(t *testing.T) {
	cs := stdioSession(t, os.Environ(), binary(t), "serve", "--config", searchConfig(t))
	t.Cleanup(func() { _ = cs.Close() })
	waitForTool(t, cs, "call_tool")
	ptr := callTool(t, cs, "call_tool", map[string]any{"name": "k8s__listing", "arguments": map[string]any{"n": 300}})
	m := regexp.MustCompile(`(?m)^file: (\S+)$`).FindStringSubmatch(ptr)
	if m == nil {
		t.Fatalf("not diverted: %s", short(ptr))
	}
	ref := map[string]any{"$scratchpad": map[string]any{"file": m[1], "path": "$.items[299].status.phase"}}
	if got := callTool(t, cs, "call_tool", map[string]any{"name": "misc__echo", "arguments": map[string]any{"text": ref}}); got != "Failed" {
		t.Errorf("call_tool echo of a path: %q, want Failed", got)
	}
	bad := map[string]any{"$scratchpad": map[string]any{"file": "nope.json"}}
	if got := callTool(t, cs, "call_tool", map[string]any{"name": "misc__echo", "arguments": map[string]any{"text": bad}}); !strings.HasPrefix(got, `{"error":"file_not_found"`) || !strings.Contains(got, m[1]) {
		t.Errorf("call_tool with a missing file: %s", short(got))
	}
}

// A stored output that holds a credential (kept in it: the server's
// redaction is "flag") goes to a tool by reference masked, unless the
// operator allowed secrets for that server (secrets_by_reference).
func TestReferencesMaskSecrets(t *testing.T) {
	secret := "ghp_" + strings.Repeat("a1B2c3D4e5", 3) + "F6g7H8"
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprint("secrets_by_reference=", allow), func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "scratchpad.toml")
			body := fmt.Sprintf(`memory_dir = %q

[agent]
model = "gpt-4o"

[mcp.servers.k8s]
transport = "stdio"
cmd = [%q]
env = { SCRATCHPAD_TESTUPSTREAM = "stdio" }
redaction = "flag"
secrets_by_reference = %v
`, filepath.Join(dir, "mem"), upstreamCmd(), allow)
			if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			cs := stdioSession(t, os.Environ(), binary(t), "serve", "--config", cfg)
			t.Cleanup(func() { _ = cs.Close() })
			waitForTool(t, cs, "echo")
			ptr := callTool(t, cs, "echo", map[string]any{"text": "GITHUB_TOKEN=" + secret, "$scratchpad": map[string]any{"store": true}})
			m := regexp.MustCompile(`(?m)^file: (\S+)$`).FindStringSubmatch(ptr)
			if m == nil {
				t.Fatalf("not stored: %s", short(ptr))
			}
			got := callTool(t, cs, "echo", map[string]any{"text": map[string]any{"$scratchpad": map[string]any{"file": m[1]}}})
			switch {
			case allow && !strings.Contains(got, secret):
				t.Errorf("allowed, yet the credential did not go: %s", got)
			case !allow && (strings.Contains(got, secret) || !strings.Contains(got, "[REDACTED:github-pat:")):
				t.Errorf("not allowed, yet the credential went as it was: %s", got)
			}
		})
	}
}

// A call's references reach the audit line (the files by name and their
// tokens, never their content) and the dashboard's data, in both eras.
func TestReferencesAudited(t *testing.T) {
	cfg, _ := writeConfig(t, "\n[telemetry]\naudit_log = \"audit.jsonl\"\n")
	base := startHTTP(t, "http", cfg)
	for _, c := range []struct {
		agent string
		cs    *mcp.ClientSession
	}{
		{"audit-2025", httpClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "audit-2025"})},
		{"audit-2026", modernClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "audit-2026"})},
	} {
		waitForTool(t, c.cs, "fancy")
		ptr := callTool(t, c.cs, "listing", map[string]any{"n": 200})
		m := regexp.MustCompile(`(?m)^file: (\S+)$`).FindStringSubmatch(ptr)
		if m == nil {
			t.Fatalf("not diverted: %s", short(ptr))
		}
		if got := callTool(t, c.cs, "fancy", map[string]any{"q": "x", "unicode": map[string]any{"$scratchpad": map[string]any{"file": m[1]}}}); got != "fancy ok" {
			t.Fatalf("fancy: %s", short(got))
		}
		path := filepath.Join(filepath.Dir(cfg), "audit.jsonl")
		var line string
		testwait.For(t, c.agent+"'s audit line of fancy", func() bool {
			b, _ := os.ReadFile(path)
			for _, l := range strings.Split(string(b), "\n") {
				if strings.Contains(l, `"agent":"`+c.agent+`"`) && strings.Contains(l, `"tool":"fancy"`) {
					line = l
					return true
				}
			}
			return false
		})
		var rec struct {
			ByReference int      `json:"tokens_by_reference"`
			Referenced  []string `json:"referenced_files"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.ByReference < 10000 || len(rec.Referenced) != 1 || rec.Referenced[0] != m[1] || strings.Contains(line, "web-1") {
			t.Errorf("%s: audit line %s: want the file by name and its tokens, never its content", c.agent, short(line))
		}
	}
	resp, err := http.Get(base + "/dashboard/data.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Kept struct {
			ByReference int `json:"by_reference"`
		} `json:"kept"`
	}
	err = json.NewDecoder(resp.Body).Decode(&d)
	resp.Body.Close()
	if err != nil || d.Kept.ByReference < 20000 {
		t.Errorf("dashboard: by_reference %d (%v), want both calls' tokens", d.Kept.ByReference, err)
	}
}
