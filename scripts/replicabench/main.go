// Command replicabench drives scripts/bench-replicas.sh: it is the stdio
// test upstream the replicas proxy (SCRATCHPAD_TESTUPSTREAM=stdio), the
// load (run) and the per-session memory measurement (mem).
//
//	replicabench run -url URL -clients 8 -duration 10s -proto 2025-11-25
//	replicabench mem -url URL -pid PID -n 200
//
// run starts clients go-sdk clients, each its own agent (identity
// headers), each repeating a call mix until the duration is up: a small
// pass-through call (echo), a divert (listing of about 300 pods), and two
// exploration calls on that output (head, grep); it prints one line,
//
//	calls=N errors=E calls/s=X p50_ms=Y p99_ms=Z
//
// mem opens n idle 2025 sessions (initialize, initialized) and n
// 2026-07-28 callers (one tools/list each, each its own agent) on a server
// started with --debug-stats, and prints the live heap and the process's
// RSS before and after, per session, and for 2025 sessions the heap
// 2 s after they were closed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

func main() {
	testupstream.MaybeRun()
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: replicabench run|mem [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = run(os.Args[2:])
	case "mem":
		err = mem(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "replicabench:", err)
		os.Exit(1)
	}
}

// headers adds identity headers to every request.
type headers struct {
	h    map[string]string
	base http.RoundTripper
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// client is one agent's session (2025) or caller (2026-07-28).
func client(ctx context.Context, url, proto, agent string) (*mcp.ClientSession, error) {
	hc := &http.Client{Transport: headers{map[string]string{"X-Scratchpad-Agent": agent}, &http.Transport{MaxIdleConnsPerHost: 4}}}
	c := mcp.NewClient(&mcp.Implementation{Name: "replicabench", Version: "1"}, nil)
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: proto})
}

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	url := fs.String("url", "", "the /mcp endpoint")
	clients := fs.Int("clients", 8, "concurrent clients")
	duration := fs.Duration("duration", 10*time.Second, "how long to drive them")
	proto := fs.String("proto", "2025-11-25", "protocol version the clients ask for")
	_ = fs.Parse(args)
	ctx := context.Background()
	var sessions []*mcp.ClientSession
	for i := range *clients {
		cs, err := client(ctx, *url, *proto, fmt.Sprintf("bench-%d-%d", os.Getpid(), i))
		if err != nil {
			return err
		}
		defer cs.Close()
		sessions = append(sessions, cs)
	}
	// The upstream is started by the first session on each replica;
	// wait until every client is listed the tool.
	for _, cs := range sessions {
		deadline := time.Now().Add(30 * time.Second)
		for !listed(ctx, cs, "listing") {
			if time.Now().After(deadline) {
				return errors.New("the upstream's tools were never listed")
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	var mu sync.Mutex
	var lat []time.Duration
	var errs int
	call := func(cs *mcp.ClientSession, name string, a map[string]any) *mcp.CallToolResult {
		start := time.Now()
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: a})
		d := time.Since(start)
		mu.Lock()
		defer mu.Unlock()
		if err != nil || res.IsError {
			errs++
			return nil
		}
		lat = append(lat, d)
		return res
	}
	end := time.Now().Add(*duration)
	start := time.Now()
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Go(func() {
			for n := 0; time.Now().Before(end); n++ {
				call(cs, "echo", map[string]any{"text": "ping " + strconv.Itoa(n)})
				res := call(cs, "listing", map[string]any{"n": 300 + (i+n)%7})
				file := divertedFile(res)
				if file == "" {
					continue
				}
				call(cs, "head", map[string]any{"file": file, "lines": 5})
				call(cs, "grep", map[string]any{"file": file, "pattern": "Running", "max_matches": 3})
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	fmt.Printf("calls=%d errors=%d calls/s=%.1f p50_ms=%.2f p99_ms=%.2f\n", len(lat), errs, float64(len(lat))/elapsed.Seconds(), pct(0.50), pct(0.99))
	if errs > 0 {
		return fmt.Errorf("%d calls failed", errs)
	}
	return nil
}

func listed(ctx context.Context, cs *mcp.ClientSession, name string) bool {
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return false
	}
	for _, t := range res.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// divertedFile is the stored file a diverted result names, "" when it
// was not diverted.
func divertedFile(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	d, _ := res.Meta["scratchpad/diverted"].(map[string]any)
	f, _ := d["file"].(string)
	return f
}

func mem(args []string) error {
	fs := flag.NewFlagSet("mem", flag.ExitOnError)
	url := fs.String("url", "", "the /mcp endpoint (the server has --debug-stats)")
	pid := fs.Int("pid", 0, "the server's process id (for its RSS)")
	n := fs.Int("n", 200, "sessions (and as many 2026-07-28 callers)")
	_ = fs.Parse(args)
	base := strings.TrimSuffix(*url, "/mcp")
	ctx := context.Background()
	// One session first, so the upstream and the caches are up before the
	// baseline.
	warm, err := client(ctx, *url, "2025-11-25", "warm")
	if err != nil {
		return err
	}
	defer warm.Close()
	for !listed(ctx, warm, "listing") {
		time.Sleep(100 * time.Millisecond)
	}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		h0, err := heap(base)
		if err != nil {
			return err
		}
		r0 := rss(*pid)
		var open []*mcp.ClientSession
		for i := range *n {
			cs, err := client(ctx, *url, era, fmt.Sprintf("idle-%s-%d", era[:4], i))
			if err != nil {
				return err
			}
			if era != "2025-11-25" {
				// A 2026-07-28 caller's agent is made by its first request.
				if _, err := cs.ListTools(ctx, nil); err != nil {
					return err
				}
			}
			open = append(open, cs)
		}
		h1, err := heap(base)
		if err != nil {
			return err
		}
		r1 := rss(*pid)
		what := "idle 2025 sessions"
		if era != "2025-11-25" {
			what = "idle 2026-07-28 callers"
		}
		fmt.Printf("%d %s: heap %d -> %d KiB (%.1f KiB each), RSS %d -> %d KiB (%.1f KiB each)\n",
			*n, what, h0>>10, h1>>10, float64(h1-h0)/1024/float64(*n), r0, r1, float64(r1-r0)/float64(*n))
		for _, cs := range open {
			_ = cs.Close()
		}
		if era == "2025-11-25" {
			// Closing sends DELETE: what the server still holds a moment
			// later is what ended sessions leave behind.
			time.Sleep(2 * time.Second)
			h2, err := heap(base)
			if err != nil {
				return err
			}
			fmt.Printf("  %d closed (DELETE) 2 s ago: heap %d KiB (%.1f KiB each above the start)\n", *n, h2>>10, float64(int64(h2)-int64(h0))/1024/float64(*n))
		}
	}
	return nil
}

// heap is the server's live heap after a GC (--debug-stats).
func heap(base string) (uint64, error) {
	resp, err := http.Get(base + "/debug/stats?gc=1")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return 0, fmt.Errorf("/debug/stats: %s: %s", resp.Status, b)
	}
	var s struct {
		HeapAlloc uint64 `json:"heap_alloc"`
	}
	return s.HeapAlloc, json.NewDecoder(resp.Body).Decode(&s)
}

// rss is the process's resident set in KiB (Linux), 0 when unknown.
func rss(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}
