package pad

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/memory"
)

// `pad show|history|diff|restore --memory PATH` on both backends: a
// file's versions listed (a deleted file's too), the change that made
// one, and a restore that brings a deleted file back as a new revision.
func TestMemoryCommand(t *testing.T) {
	memoryBackends(t, func(t *testing.T, open func(*testing.T, MemoryOptions) (*Pad, memory.Store)) {
		p, st := open(t, MemoryOptions{})
		run := func(sub, path string, n int) (string, string, int) {
			var out, errOut bytes.Buffer
			code := MemoryCommand(p, MemoryOptions{}, sub, path, n, &out, &errOut)
			return out.String(), errOut.String(), code
		}
		memCall(t, st, false, `{"command":"create","path":"/memories/notes/a.md","file_text":"one\n"}`)
		memCall(t, st, false, `{"command":"str_replace","path":"/memories/notes/a.md","old_str":"one","new_str":"two"}`)
		memCall(t, st, false, `{"command":"insert","path":"/memories/notes/a.md","insert_line":1,"insert_text":"three"}`)

		if out, _, code := run("show", "/memories/notes/a.md", 1); code != 0 || out != "two\nthree\n" {
			t.Errorf("show file: %d %q", code, out)
		}
		if out, _, code := run("show", "/memories", 1); code != 0 || !strings.Contains(out, "/memories/notes/a.md") {
			t.Errorf("show folder: %d %q", code, out)
		}
		out, _, code := run("history", "/memories/notes/a.md", 1)
		rows := regexp.MustCompile(`(?m)^ +(\d) +(\d) .*$`).FindAllStringSubmatch(out, -1)
		if code != 0 || len(rows) != 3 || rows[0][2] != "3" || rows[2][2] != "1" || !strings.Contains(rows[0][0], "(current)") {
			t.Errorf("history: %d\n%s", code, out)
		}
		if out, _, code := run("diff", "/memories/notes/a.md", 2); code != 0 || !strings.Contains(out, "-one\n+two\n") || !strings.Contains(out, "a/memories/notes/a.md@1") {
			t.Errorf("diff 2: %d\n%s", code, out)
		}
		if out, _, code := run("diff", "/memories/notes/a.md", 3); code != 0 || !strings.Contains(out, "--- /dev/null") {
			t.Errorf("diff 3: %d\n%s", code, out)
		}

		memCall(t, st, false, `{"command":"delete","path":"/memories/notes"}`)
		if out, _, code := run("history", "/memories/notes/a.md", 1); code != 0 || !strings.Contains(out, "(deleted)") || strings.Contains(out, "(current)") {
			t.Errorf("history of a deleted file: %d\n%s", code, out)
		}
		if out, _, code := run("restore", "/memories/notes/a.md", 2); code != 0 || !strings.Contains(out, "as revision 4") {
			t.Errorf("restore: %d %s", code, out)
		}
		if got := memCall(t, st, false, `{"command":"view","path":"/memories/notes/a.md"}`); !strings.HasSuffix(got, "(revision 4)") {
			t.Errorf("after restore: %s", got)
		}
		if out, _, code := run("show", "/memories/notes/a.md", 1); code != 0 || out != "two\n" {
			t.Errorf("restored content %q, want version 2's %q", out, "two\n")
		}

		for _, tc := range []struct {
			sub, path string
			n, code   int
			stderr    string
		}{
			{"restore", "/memories/notes/a.md", 9, 1, "no such history version: 9 (/memories/notes/a.md has 4)"},
			{"history", "/memories/../x", 1, 1, "contains .."},
			{"show", "/memories/none.md", 1, 1, "does not exist"},
			{"edit", "/memories/notes/a.md", 1, 2, "--memory goes with show, history, diff or restore"},
		} {
			if _, errOut, code := run(tc.sub, tc.path, tc.n); code != tc.code || !strings.Contains(errOut, tc.stderr) {
				t.Errorf("%s %s %d: %d %q; want %d %q", tc.sub, tc.path, tc.n, code, errOut, tc.code, tc.stderr)
			}
		}
		if out, _, _ := run("history", "/memories/never.md", 1); !strings.Contains(out, "no versions of /memories/never.md") {
			t.Errorf("history of nothing: %s", out)
		}
	})
}
