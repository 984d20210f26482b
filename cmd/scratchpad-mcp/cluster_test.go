package main

import (
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

func clusterConfig(url string) string {
	return "\n[cluster]\nredis_url = \"" + url + "\"\nprefix = \"e2e-cluster\"\n"
}

// A cluster Redis that cannot be reached stops the start, naming the key
// and the URL without its password.
func TestClusterRedisUnreachableAtStart(t *testing.T) {
	url, pw := closedRedisURL(t)
	cfg, _ := writeConfig(t, clusterConfig(url))
	out, err := exec.Command(binary(t), "serve", "--config", cfg).CombinedOutput()
	if err == nil {
		t.Fatal("serve started with the cluster's Redis unreachable")
	}
	if !strings.Contains(string(out), "[cluster] redis_url") || !strings.Contains(string(out), "xxxxx") || strings.Contains(string(out), pw) {
		t.Errorf("serve's error should name [cluster] redis_url and the redacted URL:\n%s", out)
	}
}

// /readyz says when the cluster's Redis goes away, and recovers with it.
func TestClusterReadyFollowsRedis(t *testing.T) {
	srv := testredis.Start(t)
	cfg, _ := writeConfig(t, clusterConfig(srv.URL()))
	base := startHTTP(t, "http", cfg)
	ready := func() (int, string) {
		t.Helper()
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 512)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp.StatusCode, b.String()
	}
	// Ready once the upstream has started.
	testwait.For(t, "/readyz to answer 200 with Redis up", func() bool { st, _ := ready(); return st == 200 })
	srv.Kill()
	if st, body := ready(); st != 503 || !strings.Contains(body, "[cluster] redis_url") {
		t.Errorf("/readyz with Redis down: %d %q", st, body)
	}
}

// roundRobin sends each HTTP request to the next replica, as a load
// balancer without stickiness does.
type roundRobin struct {
	targets []*url.URL
	n       atomic.Int64
	hits    []atomic.Int64
}

func (rr *roundRobin) RoundTrip(r *http.Request) (*http.Response, error) {
	i := int(rr.n.Add(1)-1) % len(rr.targets)
	rr.hits[i].Add(1)
	u := rr.targets[i]
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, u.Host
	return http.DefaultTransport.RoundTrip(r)
}

// Two processes with their own memory_dir (two hosts), one Redis, every
// request to the other one in turn: a 2025 session goes on whichever
// answers, a stored output written by one is explored through the other,
// and the budget footer never goes up.
func TestReplicasRoundRobin(t *testing.T) {
	srv := testredis.Start(t)
	rr := &roundRobin{hits: make([]atomic.Int64, 2)}
	var mems []string
	for range 2 {
		cfg, mem := writeConfig(t, clusterConfig(srv.URL()))
		mems = append(mems, mem)
		u, err := url.Parse(startHTTP(t, "http", cfg))
		if err != nil {
			t.Fatal(err)
		}
		rr.targets = append(rr.targets, u)
	}
	c := connect(t, &mcp.StreamableClientTransport{Endpoint: "http://balancer/mcp", HTTPClient: &http.Client{Transport: rr}, DisableStandaloneSSE: true})
	t.Cleanup(func() { c.Close() })
	waitForTool(t, c, "listing")
	pointer := callTool(t, c, "listing", map[string]any{"n": 300})
	file := storedName.FindStringSubmatch(pointer)
	if file == nil {
		t.Fatalf("not diverted: %s", short(pointer))
	}
	prev := -1
	for i := range 6 {
		out := callTool(t, c, "head", map[string]any{"file": file[1], "lines": 3})
		if !strings.Contains(out, `"apiVersion": "v1"`) {
			t.Fatalf("head %d through the balancer:\n%s", i, short(out))
		}
		_, left := footerFigures(t, out)
		if prev >= 0 && left >= prev {
			t.Errorf("head %d: budget left %d, was %d: it must fall on every replica", i, left, prev)
		}
		prev = left
	}
	if a, b := rr.hits[0].Load(), rr.hits[1].Load(); a == 0 || b == 0 {
		t.Fatalf("requests per replica %d, %d: both must have answered", a, b)
	}
	// The stored output is on both hosts now: written by one, fetched
	// into the other's local cache at the same path.
	for _, mem := range mems {
		n := 0
		_ = filepath.WalkDir(mem, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && filepath.Base(p) == filepath.Base(file[1]) {
				n++
			}
			return nil
		})
		if n != 1 {
			t.Errorf("%s holds %d copies of %s, want 1", mem, n, file[1])
		}
	}
}

// Redis going away mid-run (issue 34): a replica's calls that need it
// fail with a tool error naming [cluster] redis_url, nothing of them is
// left half-written (no stored file without a pointer), and they work
// again once Redis is back, in the same session; a call that needs no
// Redis (a small pass-through) works throughout. Both eras: a 2025
// session and 2026-07-28 requests.
func TestClusterRedisAwayMidRun(t *testing.T) {
	for _, version := range []string{protocolVersion, "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			srv := testredis.Start(t)
			cfg, mem := writeConfig(t, clusterConfig(srv.URL()))
			base := startHTTP(t, "http", cfg)
			c := connectWith(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", DisableStandaloneSSE: true}, nil, version)
			defer c.Close()
			waitForTool(t, c, "listing")
			stored := func() []string {
				var out []string
				_ = filepath.WalkDir(mem, func(p string, d os.DirEntry, err error) error {
					if err == nil && !d.IsDir() && strings.Contains(d.Name(), "listing") {
						out = append(out, p)
					}
					return nil
				})
				return out
			}
			if out := callTool(t, c, "listing", map[string]any{"n": 50}); !storedName.MatchString(out) {
				t.Fatalf("before: not stored: %.300s", out)
			}
			before := stored()

			srv.Kill()
			t0 := time.Now()
			res, err := c.CallTool(t.Context(), &mcp.CallToolParams{Name: "listing", Arguments: map[string]any{"n": 60}})
			if err == nil && (!res.IsError || !strings.Contains(text(res), "[cluster] redis_url")) {
				t.Errorf("a divert with Redis away: %v %.400s", res.IsError, text(res))
			} else if err != nil && !strings.Contains(err.Error(), "[cluster] redis_url") {
				t.Errorf("a divert with Redis away failed without naming the key: %v", err)
			}
			if after := stored(); len(after) != len(before) {
				t.Errorf("stored files with Redis away: %v, before %v (half-written)", after, before)
			}

			t.Logf("the call with Redis away answered in %v: %v %.200s", time.Since(t0), err, text(res))
			srv.Restart()
			t0 = time.Now()
			testwait.For(t, "calls to work again once Redis is back", func() bool {
				res, err := c.CallTool(t.Context(), &mcp.CallToolParams{Name: "listing", Arguments: map[string]any{"n": 70}})
				return err == nil && !res.IsError && storedName.MatchString(text(res))
			})
			t.Logf("working again %v after the restart", time.Since(t0))
			out := callTool(t, c, "echo", map[string]any{"text": "still"})
			if out != "still" {
				t.Errorf("echo after Redis came back: %q", out)
			}
		})
	}
}

// A search over every stored output (grep without a file) finds what
// another replica stored and this one never opened (issue 34): the output
// diverted through replica A is listed by grep on replica B, which
// fetches it first; its file is then in B's cache.
func TestReplicasGrepAcrossStoredOutputs(t *testing.T) {
	srv := testredis.Start(t)
	var bases, mems []string
	for range 2 {
		cfg, mem := writeConfig(t, clusterConfig(srv.URL()))
		bases, mems = append(bases, startHTTP(t, "http", cfg)), append(mems, mem)
	}
	client := func(base string) *mcp.ClientSession {
		c := connectWith(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", DisableStandaloneSSE: true}, nil, "2026-07-28")
		t.Cleanup(func() { c.Close() })
		waitForTool(t, c, "listing")
		return c
	}
	a, b := client(bases[0]), client(bases[1])
	file := storedName.FindStringSubmatch(callTool(t, a, "listing", map[string]any{"n": 300}))
	if file == nil {
		t.Fatal("not diverted on A")
	}
	out := callTool(t, b, "grep", map[string]any{"pattern": `"apiVersion"`})
	if !strings.Contains(out, file[1]) {
		t.Fatalf("grep on B does not list %s, stored by A:\n%s", file[1], short(out))
	}
	var cached bool
	_ = filepath.WalkDir(mems[1], func(p string, d os.DirEntry, err error) error {
		cached = cached || err == nil && d.Name() == filepath.Base(file[1])
		return nil
	})
	if !cached {
		t.Errorf("%s is not in B's memory_dir after the search", file[1])
	}
}
