package pad

import (
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata/pad")

// keyedPad fills a pad with sections, keys (two namespaces deep, tags, a
// fixed and a sliding TTL) and ledger entries, on a test clock.
func keyedPad(t *testing.T, open func(Options) *testPad, opts Options) (*testPad, *testClock) {
	t.Helper()
	clock := newTestClock()
	opts.Now = clock.Now
	p := open(opts)
	mustUpdate(t, p.Pad, Patch{Section: "Task", Op: OpReplace, Content: "Find why checkout pods restart"},
		Patch{Section: "Plan", Op: OpAppend, Content: "list pods\nread logs"})
	for i, op := range []KeyOp{
		{Op: OpSet, Key: "current_pod", Value: json.RawMessage(`"checkout-7f9"`), Tags: []string{"k8s"}},
		{Op: OpSet, Key: "candidate_causes", Value: json.RawMessage(`["oom", "probe <timeout> & \"retry\""]`), Tags: []string{"triage", "k8s"}},
		{Op: OpSet, Key: "task1:probe:last_cursor", Value: json.RawMessage(`"abc"`), TTL: ttl(600)},
		{Op: OpSet, Key: "task1:probe:seen", Value: json.RawMessage(`{"n": 3, "ok": true}`), TTL: ttl(300), Sliding: true, Tags: []string{"triage"}},
		{Op: OpSet, Key: "task2:owner", Value: json.RawMessage(`null`)},
	} {
		clock.Add(time.Second)
		if _, err := p.UpdateKeys(fmt.Sprintf("w%d", i%2+1), []KeyOp{op}); err != nil {
			t.Fatal(err)
		}
	}
	for _, note := range []string{"pods restart every 10 min (kubectl)", "OOMKilled in events"} {
		clock.Add(time.Second)
		if _, err := p.AppendBy("w1", note, []string{"k8s"}); err != nil {
			t.Fatal(err)
		}
	}
	return p, clock
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("..", "testdata", "pad", name)
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestBackendRenderKeysGoldens(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p, _ := keyedPad(t, open, Options{Header: "Incident 4711: checkout restarts"})
		for _, mode := range RenderModes {
			out, err := p.ReadWith(ReadOptions{Format: mode})
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "keys."+mode, out)
			parses(t, mode, out)
			// A read of one namespace, filtered by tag.
			out, err = p.ReadWith(ReadOptions{Format: mode, Keys: []string{"task1:"}, Tags: []string{"triage"}})
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "keys-filtered."+mode, out)
			parses(t, mode, out)
		}
	})
}

// parses checks that xml and json renderings are well-formed.
func parses(t *testing.T, mode, out string) {
	t.Helper()
	switch mode {
	case RenderXML:
		dec := xml.NewDecoder(strings.NewReader(out))
		for {
			if _, err := dec.Token(); err != nil {
				if err.Error() != "EOF" {
					t.Fatalf("invalid XML: %v\n%s", err, out)
				}
				return
			}
		}
	case RenderJSON:
		if !json.Valid([]byte(out)) {
			t.Fatalf("invalid JSON:\n%s", out)
		}
	}
}

// max_tokens: ledger entries fold first, then keys are left out whole
// (least recently set first), and the rendering says what was left out.
func TestBackendRenderKeysMaxTokens(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p, _ := keyedPad(t, open, Options{})
		count := p.opts.Count
		for _, mode := range RenderModes {
			all, _ := p.ReadWith(ReadOptions{Format: mode})
			n := count(all)
			prev := n + 1
			for max := n; max > n/3; max -= 7 {
				out, err := p.ReadWith(ReadOptions{Format: mode, MaxTokens: max})
				if err != nil {
					t.Fatal(err)
				}
				c := count(out)
				if c > max && !strings.Contains(out, "over max_tokens") {
					t.Fatalf("%s max %d: %d tokens without a warning:\n%s", mode, max, c, out)
				}
				if c > prev && !strings.Contains(out, "over max_tokens") {
					t.Fatalf("%s max %d: grew from %d to %d", mode, max, prev, c)
				}
				prev = c
				wholeItems(t, mode, all, out)
				if c < n && !strings.Contains(strings.ToLower(out), "left") && !strings.Contains(out, "omitted") {
					t.Fatalf("%s max %d: shorter but does not say what was left out:\n%s", mode, max, out)
				}
			}
		}
		// Markdown, a bound that folds the ledger and leaves out the two
		// least recently set keys.
		full, _ := p.ReadWith(ReadOptions{})
		var hit string
		for max := count(full); max > 0 && hit == ""; max-- {
			if out, _ := p.ReadWith(ReadOptions{MaxTokens: max}); strings.Contains(out, "keys left out") {
				hit = out
			}
		}
		if !strings.Contains(hit, "2 keys left out (least recently set): current_pod, candidate_causes") || !strings.Contains(hit, "2 oldest ledger entries") ||
			strings.Contains(hit, "checkout-7f9") || !strings.Contains(hit, `task2:owner = null`) {
			t.Fatalf("markdown with keys left out:\n%s", hit)
		}
	})
}

// A read by the model renews only the sliding keys it shows.
func TestBackendReadRenewsSlidingKeysShown(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p, clock := keyedPad(t, open, Options{})
		clock.Add(200 * time.Second)
		if _, err := p.Read(nil); err != nil { // renews task1:probe:seen (300s, sliding)
			t.Fatal(err)
		}
		clock.Add(200 * time.Second) // 400s after it was set, 200s after the read
		out, err := p.ReadWith(ReadOptions{Keys: []string{"task1:"}})
		if err != nil {
			t.Fatal(err)
		}
		// Without the renewal it would have expired at 304s.
		if !strings.Contains(out, "task1:probe:seen") || !strings.Contains(out, "expires 2026-03-01 12:08:27Z") {
			t.Fatalf("after renewal:\n%s", out)
		}
		// That read (no Renew) did not renew it: 301s later it is gone.
		clock.Add(101 * time.Second)
		if out, _ := p.ReadWith(ReadOptions{Keys: []string{"task1:"}}); strings.Contains(out, "task1:probe:seen") {
			t.Fatalf("renewed by a read without Renew:\n%s", out)
		}
	})
}

// wholeItems checks that every key and ledger entry in a bounded
// rendering is exactly as the unbounded one renders it: left out whole or
// shown whole, never cut.
func wholeItems(t *testing.T, mode, full, out string) {
	t.Helper()
	if mode == RenderJSON {
		type doc struct {
			Keys   []json.RawMessage `json:"keys"`
			Ledger []json.RawMessage `json:"ledger"`
		}
		var f, o doc
		if err := json.Unmarshal([]byte(full), &f); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(out), &o); err != nil {
			t.Fatalf("bounded JSON does not parse: %v\n%s", err, out)
		}
		have := map[string]bool{}
		for _, x := range append(f.Keys, f.Ledger...) {
			have[compactJSON(t, x)] = true
		}
		for _, x := range append(o.Keys, o.Ledger...) {
			if !have[compactJSON(t, x)] {
				t.Fatalf("json: item %s is not as the full rendering has it", x)
			}
		}
		return
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(full, "\n") {
		lines[l] = true
	}
	for _, l := range strings.Split(out, "\n") {
		item := false
		for _, prefix := range []string{"- 2026", "- task", "- current", "- candidate", "<key ", "<entry ", "key.", "ledger.1", "ledger.2"} {
			item = item || strings.HasPrefix(l, prefix)
		}
		if item && !lines[l] {
			t.Fatalf("%s: line %q is not in the full rendering: an item was cut\n%s", mode, l, out)
		}
	}
}

func compactJSON(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(v)
	return string(data)
}

// A read whose renewal cannot take the lock still answers, and says so.
func TestReadRenewFailureWarns(t *testing.T) {
	env := newRedisEnv(t)
	r := env.conn(t, RedisOptions{LockWait: 50 * time.Millisecond})
	clock := newTestClock()
	p, err := r.Open("run:renew", Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, KeyOp{Op: OpSet, Key: "s", Value: json.RawMessage(`1`), TTL: ttl(60), Sliding: true})
	if err := env.rdb.Set(t.Context(), keyBase("run:renew")+":lock", "someone-else", 0).Err(); err != nil {
		t.Fatal(err)
	}
	out, err := p.Read(nil)
	if err != nil || !strings.Contains(out, "- s = 1") || !strings.Contains(out, "the sliding keys shown were not renewed") {
		t.Fatalf("read with the lock held elsewhere: %v\n%s", err, out)
	}
}
