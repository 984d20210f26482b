package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// directRaw is package upstream's raw client on a fresh upstream process:
// the bytes the upstream itself sends.
func directRaw(t testing.TB) *upstream.Upstream {
	t.Helper()
	u := upstream.New(upstream.Options{Server: stdioUpstream("direct", nil), Logger: quietLogger()})
	u.Start(context.Background(), nil)
	t.Cleanup(u.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := u.Call(ctx, "ping", nil); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestPassThroughBelowThresholdIsIdentical(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", thresholds(t, "*", 100)))
	d := directRaw(t)
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			c := rawConnect(t, e, front, `{}`)
			for _, tc := range []struct {
				tool string
				args map[string]any
			}{
				{"words", map[string]any{"n": 99}},
				{"echo", map[string]any{"text": "héllo <b>&</b> \u2028"}},
				{"listing", map[string]any{"n": 2}},
				{"mixed", nil},
			} {
				params := map[string]any{"name": tc.tool, "arguments": tc.args}
				via := c.mustRequest("tools/call", params)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				want, err := d.Call(ctx, "tools/call", params)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(via, want) {
					t.Errorf("%s: proxy result differs from direct\nproxy:  %s\ndirect: %s", tc.tool, truncate(string(via), 400), truncate(string(want), 400))
				}
			}
		})
	}
	if entries, _ := os.ReadDir(e.dir); len(entries) != 0 {
		t.Errorf("nothing should be stored, found %d files", len(entries))
	}
}

func TestDivertAtExactlyThreshold(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", thresholds(t, "words", 100)))
	c := connect(t, e, "http", nil)
	if res := call(t, c, "words", map[string]any{"n": 99}); isPointer(res) || text(res) != testupstream.Words(99) {
		t.Fatalf("99 words (one below) must pass through, got %q", truncate(text(res), 200))
	}
	res := call(t, c, "words", map[string]any{"n": 100})
	if !isPointer(res) {
		t.Fatalf("100 words (at threshold) must be diverted, got %q", truncate(text(res), 200))
	}
	entries, err := os.ReadDir(e.dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("want one stored file, got %v %v", entries, err)
	}
	name := entries[0].Name()
	if !strings.HasPrefix(name, "up-words-") || !strings.HasSuffix(name, ".txt") {
		t.Errorf("stored name %q", name)
	}
	stored, _ := os.ReadFile(filepath.Join(e.dir, name))
	if string(stored) != testupstream.Words(100)+"\n" {
		t.Errorf("stored content differs")
	}
	if !strings.Contains(text(res), name) || !strings.Contains(text(res), "100 tokens") {
		t.Errorf("pointer lacks file name or count:\n%s", text(res))
	}
	if fi, _ := os.Stat(filepath.Join(e.dir, name)); fi.Mode().Perm() != 0o600 {
		t.Errorf("stored file mode %v, want 0600", fi.Mode().Perm())
	}
	if di, _ := os.Stat(e.dir); di.Mode().Perm() != 0o700 {
		t.Errorf("scratchpad dir mode %v, want 0700", di.Mode().Perm())
	}
	// The same output again is the same file.
	call(t, c, "words", map[string]any{"n": 100})
	if entries, _ := os.ReadDir(e.dir); len(entries) != 1 {
		t.Errorf("identical output stored twice: %d files", len(entries))
	}
	if got := e.intercepted(); len(got) != 2 || got[0] != 100 || got[1] != 100 {
		t.Errorf("intercepted %v, want [100 100]", got)
	}
}

func TestPatternPrecedence(t *testing.T) {
	// words matches "*" (10), "w*" (1000) and "words" (50): the longest wins.
	// echo matches "*" (10) and "e?ho" / "ech?" (both 4 chars: smallest, 30, wins).
	e := startEnv(t, stdioUpstream("up", thresholds(t, "*", 10, "w*", 1000, "words", 50, "e?ho", 40, "ech?", 30)))
	c := connect(t, e, "http", nil)
	for _, tc := range []struct {
		tool    string
		args    map[string]any
		divert  bool
		comment string
	}{
		{"words", map[string]any{"n": 49}, false, "49 < 50"},
		{"words", map[string]any{"n": 50}, true, "50 ≥ 50"},
		{"echo", map[string]any{"text": testupstream.Words(29)}, false, "29 < 30"},
		{"echo", map[string]any{"text": testupstream.Words(30)}, true, "30 ≥ 30"},
		{"listing", map[string]any{"n": 3}, true, "* = 10"},
	} {
		if got := isPointer(call(t, c, tc.tool, tc.args)); got != tc.divert {
			t.Errorf("%s (%s): diverted=%v, want %v", tc.tool, tc.comment, got, tc.divert)
		}
	}
}

func TestUnmatchedToolsAreNeverIntercepted(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", thresholds(t, "listing", 10)))
	c := connect(t, e, "http", nil)
	if res := call(t, c, "words", map[string]any{"n": 5000}); isPointer(res) || text(res) != testupstream.Words(5000) {
		t.Fatal("a tool no pattern matches was intercepted or changed")
	}
}

func TestErrorsAndImagesAreNeverDiverted(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", thresholds(t, "*", 10)))
	c := connect(t, e, "http", nil)
	if res := call(t, c, "fail", nil); isPointer(res) || !res.IsError {
		t.Errorf("isError result diverted or flag lost")
	}
	res := call(t, c, "image", nil)
	if isPointer(res) {
		t.Errorf("image result diverted")
	}
	if len(res.Content) != 2 {
		t.Errorf("image result content: %d items", len(res.Content))
	}
	if entries, _ := os.ReadDir(e.dir); len(entries) != 0 {
		t.Errorf("%d files stored", len(entries))
	}
}

func TestJSONIsStoredPrettyWithSketch(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", thresholds(t, "listing", 50)))
	c := connect(t, e, "http", nil)
	out := text(call(t, c, "listing", map[string]any{"n": 200}))
	for _, want := range []string{"format: json", "items: array[200] of objects {metadata, spec, status}", `iterate_over {"file":"up-listing-`, `","path":"$.items","fields":"metadata.name,metadata.namespace,status.phase","limit":20}`} {
		if !strings.Contains(out, want) {
			t.Errorf("pointer lacks %q:\n%s", want, truncate(out, 2000))
		}
	}
	entries, _ := os.ReadDir(e.dir)
	if len(entries) != 1 {
		t.Fatalf("want 1 stored file, got %d", len(entries))
	}
	stored, _ := os.ReadFile(filepath.Join(e.dir, entries[0].Name()))
	if !strings.HasPrefix(string(stored), "{\n  \"apiVersion\": \"v1\",\n") {
		t.Errorf("JSON not stored pretty-printed: %q", stored[:40])
	}
	if !json.Valid(stored) {
		t.Errorf("stored JSON invalid")
	}
	if n := len(strings.Fields(out)); n > 300 {
		t.Errorf("pointer is %d words, want a short pointer", n)
	}
}

func TestStructuredToolLosesOutputSchemaAndDiverts(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", thresholds(t, "structured", 50)))
	raw := rawConnect(t, e, "http", `{}`)
	if bytes.Contains(toolRaw(t, raw.mustRequest("tools/list", map[string]any{}), "structured"), []byte("outputSchema")) {
		t.Errorf("divertable tool kept its outputSchema")
	}
	c := connect(t, e, "http", nil)
	res := call(t, c, "structured", map[string]any{"n": 100})
	if !isPointer(res) {
		t.Fatalf("structured output not diverted: %s", truncate(text(res), 300))
	}
	if !strings.Contains(text(res), "format: json") {
		t.Errorf("structured content not stored as JSON:\n%s", text(res))
	}
}

func TestSchemaPassesThroughByteIdentical(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	d := directRaw(t)
	var want json.RawMessage
	for _, tl := range d.Tools() {
		if tl.Name == "fancy" {
			var v struct {
				InputSchema json.RawMessage `json:"inputSchema"`
			}
			_ = json.Unmarshal(tl.Raw, &v)
			want = v.InputSchema
		}
	}
	if len(want) == 0 {
		t.Fatal("the upstream lists no fancy tool")
	}
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			c := rawConnect(t, e, front, `{}`)
			list := c.mustRequest("tools/list", map[string]any{})
			var via struct {
				InputSchema json.RawMessage `json:"inputSchema"`
			}
			_ = json.Unmarshal(toolRaw(t, list, "fancy"), &via)
			if !bytes.Equal(via.InputSchema, want) {
				t.Fatalf("schema changed in transit\nproxy:  %s\ndirect: %s", via.InputSchema, want)
			}
			for _, kw := range []string{"anyOf", "oneOf", "top-level description kept", "additionalProperties"} {
				if !bytes.Contains(via.InputSchema, []byte(kw)) {
					t.Errorf("schema lost %q", kw)
				}
			}
		})
	}
}

func TestUpstreamCrashAndRestart(t *testing.T) {
	e := startEnv(t, stdioUpstream("flaky", nil))
	c := connect(t, e, "http", nil)
	pid1 := text(call(t, c, "pid", nil))
	res := call(t, c, "crash", nil)
	if !res.IsError || !strings.Contains(text(res), `"flaky"`) || !strings.Contains(text(res), "exit") {
		t.Fatalf("in-flight call on a crashing upstream: want a tool error naming the server, got %q", text(res))
	}
	// A call made while it restarts waits for it.
	res = call(t, c, "pid", nil)
	if res.IsError {
		t.Fatalf("call after restart failed: %s", text(res))
	}
	if pid2 := text(res); pid2 == pid1 {
		t.Fatalf("same pid %s after crash: not restarted", pid2)
	}
}

func TestListChangedPropagates(t *testing.T) {
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			e := startEnv(t, stdioUpstream("up", nil))
			r := &recorder{}
			c := connect(t, e, front, r)
			waitTool(t, c, "add_tool")
			call(t, c, "add_tool", map[string]any{"name": "late_tool"})
			r.waitNotes(t, "notifications/tools/list_changed", 1)
			waitTool(t, c, "late_tool")
			if got := text(call(t, c, "late_tool", nil)); got != "hello from late_tool" {
				t.Fatalf("late_tool answered %q", got)
			}
		})
	}
}

func TestPromptListChangedPropagates(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	r := &recorder{}
	c := connect(t, e, "http", r)
	call(t, c, "add_prompt", map[string]any{"name": "late_prompt"})
	r.waitNotes(t, "notifications/prompts/list_changed", 1)
	testwait.For(t, "late_prompt listed", func() bool { _, ok := listedPrompts(t, c)["late_prompt"]; return ok })
	res, err := c.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "late_prompt"})
	if err != nil || !strings.Contains(mustJSON(t, res), "hello from late_prompt") {
		t.Errorf("late prompt: %v %v", res, err)
	}
}

func TestConcurrentClients(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", thresholds(t, "words", 500)))
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for ci := 0; ci < 4; ci++ {
		c := connect(t, e, []string{"http", "sse"}[ci%2], nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				want := fmt.Sprintf("client %d call %d", ci, i)
				res, err := callErr(c, "echo", map[string]any{"text": want})
				if err != nil {
					errs <- err.Error()
					continue
				}
				if got := text(res); got != want {
					errs <- fmt.Sprintf("got %q want %q", got, want)
				}
				if i%5 == 0 {
					if res, err := callErr(c, "words", map[string]any{"n": 600}); err != nil || !isPointer(res) {
						errs <- fmt.Sprintf("divert under concurrency: %v", err)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestProgressIsForwardedWithCallersToken(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			r := &recorder{}
			c := connect(t, e, front, r)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			p := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": 3, "ms": 5}}
			p.SetProgressToken("caller-token-7")
			if _, err := c.CallTool(ctx, p); err != nil {
				t.Fatal(err)
			}
			got := r.waitNotes(t, "notifications/progress", 3)
			if len(got) != 3 {
				t.Fatalf("got %d progress notifications, want 3", len(got))
			}
			for i, n := range got {
				if n.field("progressToken") != "caller-token-7" || n.field("progress") != float64(i+1) {
					t.Errorf("progress %s, want the caller's token and progress %d", n.params, i+1)
				}
			}
		})
	}
}

// TestProgressArrivesBeforeTheResult: an upstream that sends progress
// and at once its result is seen in that order on the wire, over every
// serving transport (clients drop progress for a request they have the
// answer to).
func TestProgressArrivesBeforeTheResult(t *testing.T) {
	e := startEnv(t, rawUpstream("raw"))
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			c := rawConnect(t, e, front, `{}`)
			for i := range 20 {
				// String and number tokens come back as sent.
				var tok any = fmt.Sprintf("%s-%d", front, i)
				if i%2 == 1 {
					tok = 1000 + i
				}
				want, _ := json.Marshal(tok)
				resp, before, err := c.request("tools/call", map[string]any{"name": "progress", "arguments": map[string]any{}, "_meta": map[string]any{"progressToken": tok}})
				if err != nil || resp.Error != nil {
					t.Fatalf("call %d: %v %s", i, err, resp.Error)
				}
				n := 0
				for _, m := range before {
					var p struct {
						ProgressToken json.RawMessage `json:"progressToken"`
					}
					_ = json.Unmarshal(m.Params, &p)
					if m.Method == "notifications/progress" && string(p.ProgressToken) == string(want) {
						n++
					}
				}
				if n != 3 {
					t.Fatalf("call %d: %d progress notifications before the result, want 3 (before: %v)", i, n, before)
				}
			}
		})
	}
}

func TestDivertReportsProgress(t *testing.T) {
	e := startEnvWith(t, envOptions{progressDelay: -1}, stdioUpstream("up", thresholds(t, "words", 10)))
	c := rawConnect(t, e, "http", `{}`)
	resp, before, err := c.request("tools/call", map[string]any{"name": "words", "arguments": map[string]any{"n": 50}, "_meta": map[string]any{"progressToken": "tok-9"}})
	if err != nil || !strings.Contains(string(resp.Result), "was diverted to the scratchpad") {
		t.Fatalf("not diverted: %v %s", err, resp.Result)
	}
	var stages []string
	for _, m := range before {
		var p struct {
			ProgressToken string `json:"progressToken"`
			Message       string `json:"message"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if m.Method != "notifications/progress" || p.ProgressToken != "tok-9" || !strings.HasPrefix(p.Message, "scratchpad-mcp: ") {
			t.Errorf("before the result: %s %s", m.Method, m.Params)
		}
		stages = append(stages, p.Message)
	}
	if len(stages) == 0 {
		t.Error("no progress while diverting")
	}
}

func TestBrokenUpstreamDoesNotBlockOthers(t *testing.T) {
	bad := config.Server{Name: "missing", Transport: config.TransportStdio, Cmd: []string{"/nonexistent/mcp-server"},
		Timeout: 2 * time.Second, RestartMaxAttempts: 1, RestartBackoffMax: 100 * time.Millisecond}
	garbage := config.Server{Name: "garbage", Transport: config.TransportStdio, Cmd: []string{"sh", "-c", "echo 'this is not json-rpc'; exec cat >/dev/null"},
		Timeout: time.Second, RestartMaxAttempts: 1, RestartBackoffMax: 100 * time.Millisecond}
	e := startEnv(t, bad, garbage, stdioUpstream("good", nil))
	c := connect(t, e, "http", nil)
	waitTool(t, c, "echo")
	if got := text(call(t, c, "echo", map[string]any{"text": "ok"})); got != "ok" {
		t.Fatalf("good upstream answered %q", got)
	}
	for _, u := range e.px.Upstreams()[:2] {
		testwait.For(t, u.Name()+" failed", func() bool { st, _ := u.State(); return st == upstream.StateFailed })
		if _, err := u.State(); err == nil {
			t.Errorf("%s failed without an error", u.Name())
		}
	}
	if _, err := e.px.Upstreams()[0].State(); !strings.Contains(err.Error(), "/nonexistent/mcp-server") {
		t.Errorf("error does not name the command: %v", err)
	}
}

func TestWriteFailureLeavesNothingBehind(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", thresholds(t, "words", 10)))
	// A file where the scratchpad dir should be: every write fails.
	if err := os.MkdirAll(filepath.Dir(e.dir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.dir, []byte("in the way"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := connect(t, e, "http", nil)
	res := call(t, c, "words", map[string]any{"n": 50})
	if !res.IsError || !strings.Contains(text(res), "could not be saved") {
		t.Fatalf("want a clear save error, got %q", text(res))
	}
	if b, _ := os.ReadFile(e.dir); string(b) != "in the way" {
		t.Errorf("existing file was touched")
	}
}

// TestDiskFullLeavesNothingBehind diverts into a real full filesystem: a
// 64 KiB tmpfs (mounting needs root; elsewhere the test skips).
func TestDiskFullLeavesNothingBehind(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", thresholds(t, "words", 10)))
	if err := os.MkdirAll(e.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", e.dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v: %s)", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() { _ = exec.Command("umount", e.dir).Run() })
	// Something already stored must survive the failed write untouched.
	kept := filepath.Join(e.dir, "up-words-00000000.txt")
	if err := os.WriteFile(kept, []byte("earlier output\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := connect(t, e, "http", nil)
	res := call(t, c, "words", map[string]any{"n": 40000}) // ~250 KB
	if !res.IsError || !strings.Contains(text(res), "could not be saved") || !strings.Contains(text(res), "no space left") {
		t.Fatalf("want a clear disk-full error, got %q", truncate(text(res), 300))
	}
	entries, _ := os.ReadDir(e.dir)
	if len(entries) != 1 || entries[0].Name() != filepath.Base(kept) {
		var names []string
		for _, en := range entries {
			names = append(names, en.Name())
		}
		t.Fatalf("after a failed write the dir holds %v, want only the earlier file", names)
	}
	if b, _ := os.ReadFile(kept); string(b) != "earlier output\n" {
		t.Errorf("earlier output changed: %q", b)
	}
	// Space freed: the same call now succeeds.
	_ = os.Remove(kept)
	if res := call(t, c, "words", map[string]any{"n": 2000}); !isPointer(res) {
		t.Errorf("after freeing space the divert still fails: %q", truncate(text(res), 300))
	}
}

// TestUpstreamDyingAtStartSaysWhy: a server that exits before answering
// initialize is reported with its exit status and last stderr lines, not
// as a broken pipe; a client calling it is told the same.
func TestUpstreamDyingAtStartSaysWhy(t *testing.T) {
	dying := config.Server{Name: "dying", Transport: config.TransportStdio,
		Cmd:     []string{"sh", "-c", "echo 'Error: Cannot find module @acme/mcp' >&2; exit 3"},
		Timeout: 5 * time.Second, RestartMaxAttempts: config.NeverRestart}
	e := startEnv(t, dying)
	u := e.px.Upstreams()[0]
	testwait.For(t, "dying failed", func() bool { st, _ := u.State(); return st == upstream.StateFailed })
	if _, err := u.State(); err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "Cannot find module @acme/mcp") {
		t.Fatalf("want exit status and stderr in the error, got %v", err)
	}
}
