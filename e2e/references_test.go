package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// TestReferencesWithServerFilesystem hands stored outputs to the real
// server-filesystem by reference (issue 56), through scratchpad-mcp served
// over streamable HTTP with bearer tokens, to the 2025 client (SDK 1.32.2,
// 2025-11-25) and to the 2026 one (SDK v2 pinned to 2026-07-28), each as
// owner alice: a 2 MB log read through the proxy (diverted) is written
// back by reference byte for byte; the failing rows of a diverted listing
// are written as JSON selected with a JSONPath filter; edit_file takes two
// references in one call (in its edits array: a path's value and a line);
// a file that is not there and a file of owner bob are refused with the
// upstream untouched (nothing written); and the budget's "left" falls by
// the write's small answer only, not by the megabytes written.
func TestReferencesWithServerFilesystem(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped under -short (runs node and server-filesystem)")
	}
	node := requireNode(t)
	fsEntry := ensureNodeModules(t)
	bin := scratchpadBin(t)
	data := t.TempDir()
	logText := bigLog(2 << 20)
	pods, failed := podListing(1000)
	bobNotes := strings.Repeat("bob's private notes, line after line of them\n", 400)
	for name, body := range map[string][]byte{"big.log": []byte(logText), "pods.json": pods, "bob-notes.txt": []byte(bobNotes)} {
		if err := os.WriteFile(filepath.Join(data, name), body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mem := filepath.Join(t.TempDir(), "mem")
	cfg := filepath.Join(t.TempDir(), "scratchpad.toml")
	writeConfig(t, cfg, fmt.Sprintf(`memory_dir = %q

[[http.tokens]]
owner = "alice"
token = "alice-e2e-token-0123456789"

[[http.tokens]]
owner = "bob"
token = "bob-e2e-token-0123456789"

[mcp.servers.fs]
transport = "stdio"
cmd = [%q, %q, %q]

[mcp.servers.fs.scratchpad]
read_text_file = 1000
`, mem, node, fsEntry, data))
	url := startHTTP(t, bin, cfg, "http") + "/mcp"
	as := func(owner string) []string { return []string{"--url", url, "--token", owner + "-e2e-token-0123456789"} }
	counter := tokens.ForModel("", "") // the config's default model

	// Bob stores an output of his own: its name is what alice tries.
	bob := runModern(t, node, "legacy", "http", as("bob"), []map[string]any{
		{"op": "list", "until": "read_text_file", "ms": 30000},
		{"op": "call", "name": "read_text_file", "args": map[string]any{"path": filepath.Join(data, "bob-notes.txt")}},
	})
	if !bob.diverted(t, "bob", 1) {
		t.FailNow()
	}
	var bc modernCall
	_ = json.Unmarshal(bob.ops[1].Result, &bc)
	bobFile, _ := bc.Meta["scratchpad/diverted"].(map[string]any)["file"].(string)

	ref := func(body map[string]any) map[string]any { return map[string]any{"$scratchpad": body} }
	for _, era := range []struct{ name, flag, version string }{{"2025-11-25", "legacy", "2025-11-25"}, {"2026-07-28", "pin", "2026-07-28"}} {
		t.Run(era.name, func(t *testing.T) {
			out := filepath.Join(data, "out-"+era.flag)
			if err := os.MkdirAll(out, 0o700); err != nil {
				t.Fatal(err)
			}
			at := func(name string) string { return filepath.Join(out, name) }
			ops := []map[string]any{
				{"op": "list", "until": "write_file", "ms": 30000},
				{"op": "call", "name": "read_text_file", "args": map[string]any{"path": filepath.Join(data, "big.log")}},
				{"op": "call", "name": "read_text_file", "args": map[string]any{"path": filepath.Join(data, "pods.json")}},
				{"op": "call", "name": "head", "args": map[string]any{"file": "$diverted1", "lines": 2}},
				{"op": "call", "name": "write_file", "args": map[string]any{"path": at("big-copy.log"), "content": ref(map[string]any{"file": "$diverted0"})}},
				{"op": "call", "name": "head", "args": map[string]any{"file": "$diverted1", "lines": 2}},
				{"op": "call", "name": "write_file", "args": map[string]any{"path": at("failed.json"),
					"content": ref(map[string]any{"file": "$diverted1", "path": "$.items[?@.status == 'failed']"})}},
				{"op": "call", "name": "write_file", "args": map[string]any{"path": at("edit.txt"), "content": "first: PLACEHOLDER-1\nsecond: PLACEHOLDER-2\n"}},
				{"op": "call", "name": "edit_file", "args": map[string]any{"path": at("edit.txt"), "edits": []any{
					map[string]any{"oldText": "PLACEHOLDER-1", "newText": ref(map[string]any{"file": "$diverted1", "path": "$.items[7].name"})},
					map[string]any{"oldText": "PLACEHOLDER-2", "newText": ref(map[string]any{"file": "$diverted0", "lines": "2"})},
				}}},
				{"op": "call", "name": "write_file", "args": map[string]any{"path": at("missing.txt"), "content": ref(map[string]any{"file": "fs-read_text_file-00000000.txt"})}},
				{"op": "call", "name": "write_file", "args": map[string]any{"path": at("stolen.txt"), "content": ref(map[string]any{"file": "../../bob/scratchpad/" + bobFile})}},
				{"op": "call", "name": "write_file", "args": map[string]any{"path": at("stolen2.txt"), "content": ref(map[string]any{"file": bobFile})}},
			}
			r := runModern(t, node, era.flag, "http", as("alice"), ops)
			r.negotiated(t, era.version)
			r.diverted(t, "divert the log", 1)
			r.diverted(t, "divert the listing", 2)

			// A 2 MB output written by reference, byte for byte.
			r.called(t, "write by reference", 4, "Successfully wrote to")
			if got, err := os.ReadFile(at("big-copy.log")); err != nil || string(got) != logText {
				t.Errorf("write by reference: big-copy.log is %d bytes (%v), want the %d of big.log, byte for byte", len(got), err, len(logText))
			}
			// The budget pays for the write's answer, not for its content.
			n1, left1 := footerOf(t, r, 3)
			n2, left2 := footerOf(t, r, 5)
			var w modernCall
			_ = json.Unmarshal(r.ops[4].Result, &w)
			if want := left1 - counter.CountString(w.text()) - n2; left2 != want || n1 != n2 {
				t.Errorf("budget: left %d after the write, want %d - %d - %d = %d (the %d bytes written by reference must cost nothing)",
					left2, left1, counter.CountString(w.text()), n2, want, len(logText))
			}

			// A JSONPath selection written as JSON.
			r.called(t, "selection", 6, "Successfully wrote to")
			var rows []map[string]any
			if b, err := os.ReadFile(at("failed.json")); err != nil || json.Unmarshal(b, &rows) != nil || !reflect.DeepEqual(rows, failed) {
				t.Errorf("selection: failed.json holds %d rows (%v), want the %d failing ones", len(rows), err, len(failed))
			}

			// Two references in one call, inside edit_file's array.
			r.called(t, "two references", 8, "pod-7")
			line2 := strings.SplitAfter(logText, "\n")[1]
			if got, _ := os.ReadFile(at("edit.txt")); string(got) != "first: pod-7\nsecond: "+line2+"\n" {
				t.Errorf("two references: edit.txt is %q", got)
			}

			// Refused, with the upstream untouched: nothing written.
			for _, c := range []struct {
				i          int
				file, code string
			}{{9, "missing.txt", "file_not_found"}, {10, "stolen.txt", "file_outside_root"}, {11, "stolen2.txt", "file_not_found"}} {
				raw, ok := r.op(t, "refused", c.i)
				if !ok {
					continue
				}
				var res modernCall
				_ = json.Unmarshal(raw, &res)
				var e struct {
					Error  string   `json:"error"`
					Stored []string `json:"stored_outputs"`
				}
				if json.Unmarshal([]byte(res.text()), &e) != nil || e.Error != c.code || !res.IsError {
					t.Errorf("refused: %s: isError %v, %s; want %s", c.file, res.IsError, short(res.text()), c.code)
				}
				if len(e.Stored) == 0 || strings.Contains(res.text(), bobNotes[:30]) {
					t.Errorf("refused: %s: the answer should list alice's outputs, never bob's content: %s", c.file, short(res.text()))
				}
				if fileExists(at(c.file)) {
					t.Errorf("refused: %s was written: the upstream was called", c.file)
				}
			}
		})
	}
}

// footerOf is the tokens and budget left an exploration answer's footer
// (op i) states.
func footerOf(t *testing.T, r *modernRun, i int) (n, left int) {
	t.Helper()
	c, ok := r.call(t, "budget", i)
	if !ok {
		t.FailNow()
	}
	m := footerRE.FindStringSubmatch(c.text())
	if m == nil {
		t.Fatalf("budget: no footer in %s", short(c.text()))
	}
	return atoi(m[1]), atoi(m[2])
}

// bigLog is about n bytes of log lines with what text escapes in JSON
// (quotes, backslashes, tabs, non-ASCII), ending with a newline.
func bigLog(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "2026-12-07T10:%02d:%02d.%03dZ INFO req=%06d path=\"/api/v1/é/%d\" ua=\"curl\\\\8\"\tstatus=%d ✓\n", i/60%60, i%60, i%1000, i, i%97, 200+i%3*100)
	}
	return b.String()
}

// podListing is a pretty-printed listing of n pods, three in ten failed,
// and the failed ones as JSON decodes them.
func podListing(n int) ([]byte, []map[string]any) {
	items := make([]map[string]any, n)
	var failed []map[string]any
	for i := range items {
		status := "running"
		if i%10 < 3 {
			status = "failed"
		}
		items[i] = map[string]any{"id": float64(i), "name": fmt.Sprintf("pod-%d", i), "status": status, "node": fmt.Sprintf("node-%d", i%7)}
		if status == "failed" {
			failed = append(failed, items[i])
		}
	}
	b, _ := json.MarshalIndent(map[string]any{"kind": "PodList", "items": items}, "", "  ")
	return append(b, '\n'), failed
}

// TestReferencesBeforeAfter measures one task both ways with the real
// server-filesystem (2025 client): write the 300 failing rows of a
// diverted 1,000-pod listing to a file. Without a reference the model
// reads them into its context (get_in windows over the filter, each
// charged as its footer says) and types them out as write_file's content;
// with one it writes a 40-token argument. The figures are logged (README
// and docs/references.md quote them); the test holds the reference's
// cost under 2% of the other's.
func TestReferencesBeforeAfter(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped under -short (runs node and server-filesystem)")
	}
	node := requireNode(t)
	fsEntry := ensureNodeModules(t)
	bin := scratchpadBin(t)
	data := t.TempDir()
	pods, failed := podListing(1000)
	logText := bigLog(2 << 20)
	for name, body := range map[string][]byte{"pods.json": pods, "big.log": []byte(logText)} {
		if err := os.WriteFile(filepath.Join(data, name), body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(t.TempDir(), "scratchpad.toml")
	writeConfig(t, cfg, fmt.Sprintf(`memory_dir = %q

[mcp.servers.fs]
transport = "stdio"
cmd = [%q, %q, %q]

[mcp.servers.fs.scratchpad]
read_text_file = 1000
`, filepath.Join(t.TempDir(), "mem"), node, fsEntry, data))
	counter := tokens.ForModel("", "")
	filter := "$.items[?@.status == 'failed']"
	const window = 50
	ops := []map[string]any{
		{"op": "list", "until": "write_file", "ms": 30000},
		{"op": "call", "name": "read_text_file", "args": map[string]any{"path": filepath.Join(data, "pods.json")}},
	}
	for off := 0; off < len(failed); off += window {
		ops = append(ops, map[string]any{"op": "call", "name": "get_in", "args": map[string]any{"file": "$diverted0", "path": filter, "offset": off, "limit": window}})
	}
	rowsJSON, _ := json.MarshalIndent(failed, "", "  ")
	byValue := map[string]any{"path": filepath.Join(data, "by-value.json"), "content": string(rowsJSON)}
	byRef := map[string]any{"path": filepath.Join(data, "by-reference.json"), "content": map[string]any{"$scratchpad": map[string]any{"file": "$diverted0", "path": filter}}}
	ops = append(ops,
		map[string]any{"op": "call", "name": "write_file", "args": byValue},
		map[string]any{"op": "call", "name": "write_file", "args": byRef})
	r := runModern(t, node, "legacy", "stdio", []string{"--", bin, "serve", "--config", cfg, "--log-level", "warn"}, ops)
	var pointer modernCall
	_ = json.Unmarshal(r.ops[1].Result, &pointer)
	file, _ := pointer.Meta["scratchpad/diverted"].(map[string]any)["file"].(string)
	read := 0
	for i := 2; i < len(ops)-2; i++ {
		n, _ := footerOf(t, r, i)
		read += n
	}
	cost := func(i int, args map[string]any) (argTokens, resultTokens int) {
		c, ok := r.call(t, "write", i)
		if !ok {
			t.FailNow()
		}
		b, _ := json.Marshal(resolveDiverted(args, file))
		return counter.Count(b), counter.CountString(c.text())
	}
	va, vr := cost(len(ops)-2, byValue)
	ra, rr := cost(len(ops)-1, byRef)
	var a, b []map[string]any
	ab, _ := os.ReadFile(filepath.Join(data, "by-value.json"))
	bb, _ := os.ReadFile(filepath.Join(data, "by-reference.json"))
	if json.Unmarshal(ab, &a) != nil || json.Unmarshal(bb, &b) != nil || !reflect.DeepEqual(a, b) || len(b) != len(failed) {
		t.Fatalf("the two writes differ: %d and %d rows", len(a), len(b))
	}
	without, with := read+va+vr, ra+rr
	t.Logf("300 failing rows of a 1,000-pod listing to a file: without a reference %d tokens (read %d in %d get_in windows, typed %d, answer %d); with one %d (typed %d, answer %d): %.1f%%",
		without, read, len(ops)-4, va, vr, with, ra, rr, 100*float64(with)/float64(without))
	t.Logf("the 2 MB log (%d bytes) is %d tokens: by value it does not fit a 200,000-token window; by reference the call is the same ~%d tokens", len(logText), counter.CountString(logText), ra)
	if with*50 > without {
		t.Errorf("with a reference %d tokens, without %d: want under 2%%", with, without)
	}
}

// resolveDiverted is args with "$diverted0" as the file it names, as
// modern.mjs sends them.
func resolveDiverted(v any, file string) any {
	switch x := v.(type) {
	case string:
		if x == "$diverted0" {
			return file
		}
	case map[string]any:
		out := map[string]any{}
		for k, c := range x {
			out[k] = resolveDiverted(c, file)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = resolveDiverted(c, file)
		}
		return out
	}
	return v
}
