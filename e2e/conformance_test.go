package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// conformanceEntry is the CLI of @modelcontextprotocol/conformance, relative
// to e2e/; conformance.mjs runs it.
var conformanceEntry = filepath.Join("node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")

const (
	// conformanceIdle is how long a conformance run may print nothing
	// before the scenario it is in counts as hung and the run is killed
	// (the whole suite takes seconds; no scenario waits more than a few).
	conformanceIdle = 15 * time.Second
	// conformanceBudget bounds the whole test when go test has no deadline.
	conformanceBudget = 5 * time.Minute
)

// TestConformanceThroughProxy runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, every server scenario) against the
// go-sdk's conformance everything-server directly over streamable HTTP,
// then against scratchpad-mcp served over streamable HTTP with that server
// as its upstream over stdio and over streamable HTTP, and fails for every
// check that passes directly but not through the proxy.
//
// SCRATCHPAD_BIN, when set, is the scratchpad-mcp binary to test instead of
// one built from this checkout.
func TestConformanceThroughProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped under -short (runs node, npm packages and the go-sdk's conformance server)")
	}
	node, ctx, deadline := conformanceRun(t, conformanceBudget)

	bin := scratchpadBin(t)
	es := buildEverythingServer(ctx, t)
	c := &conformance{node: node}
	c.scenarios = c.list(ctx, t)

	direct := c.run(ctx, t, startEverythingHTTP(t, es, "-stateless=false"))
	if passed, _, _ := direct.score(direct); passed == 0 {
		t.Fatalf("no conformance check passed against the everything-server directly: the comparison proves nothing\n%s", direct.summary())
	}
	for _, r := range direct.sorted() {
		if gradedStatus(r.Status) && r.Status != "SUCCESS" {
			t.Logf("directly: %s %s (not counted against the proxy): %s", r.key(), r.Status, r.message())
		}
	}
	for s, why := range direct.broken {
		t.Logf("directly: scenario %s left no results (not counted against the proxy): %s", s, why)
	}

	totals := []string{"direct " + direct.total(direct)}
	mem := t.TempDir()
	upstreams := []struct{ name, section string }{
		// The direct run's server speaks 2025 only (stateful); the stdio
		// one would offer 2026-07-28 too, where its tools cannot ask the
		// client mid-call the 2025 way: it is pinned to what is measured.
		{"stdio upstream", fmt.Sprintf("transport = \"stdio\"\ncmd = [%q]\nprotocol = \"2025-11-25\"\n", es)},
		{"http upstream", fmt.Sprintf("transport = \"http_streamable\"\nurl = %q\n", startEverythingHTTP(t, es, "-stateless=false"))},
	}
	for i, up := range upstreams {
		t.Run(strings.ReplaceAll(up.name, " ", "_"), func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "scratchpad.toml")
			conf := fmt.Sprintf("memory_dir = %q\n\n[mcp.servers.everything]\n%s", filepath.Join(mem, fmt.Sprint(i)), up.section)
			if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
				t.Fatal(err)
			}
			// What is left of the time, shared by the runs still to come.
			ctx, cancel := context.WithTimeout(ctx, time.Until(deadline)/time.Duration(len(upstreams)-i))
			defer cancel()
			url := startHTTP(t, bin, cfg, "http") + "/mcp"
			waitForTool(t, url, "test_simple_text")
			via := c.run(ctx, t, url)
			totals = append(totals, "via "+up.name+" "+via.total(direct))
			if diff := compareConformance(direct, via, nil); diff != "" {
				t.Errorf("checks that do worse through scratchpad-mcp (%s) than against the everything-server directly:\n%s", up.name, diff)
			}
			// The rest of what differs, for the record.
			for _, r := range via.sorted() {
				d := direct.checks[r.key()]
				switch {
				case r.Status == "SUCCESS" && (d == nil || d.Status != "SUCCESS"):
					t.Logf("passes through the proxy only: %s (directly %s)", r.key(), statusOf(d))
				case gradedStatus(r.Status) && r.Status != statusOf(d) && !worse(d, r):
					t.Logf("through the proxy: %s %s (directly %s): %s", r.key(), r.Status, statusOf(d), r.message())
				}
			}
			for _, d := range direct.sorted() {
				if v := via.checks[d.key()]; gradedStatus(d.Status) && (v == nil || !gradedStatus(v.Status)) && !worse(d, v) {
					msg := "not reported"
					if v != nil {
						msg = v.Status + ": " + v.message()
					}
					t.Logf("graded directly only: %s %s, through the proxy %s", d.key(), d.Status, msg)
				}
			}
		})
	}
	t.Logf("conformance totals (checks passed / checks graded, not INFO, in the direct run or this one): %s", strings.Join(totals, ", "))
}

// scratchpadBin is $SCRATCHPAD_BIN or scratchpad-mcp built from this
// checkout.
func scratchpadBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("SCRATCHPAD_BIN")
	if bin == "" {
		return buildServer(t)
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() {
		t.Fatalf("SCRATCHPAD_BIN=%s is not a file: %v", bin, err)
	}
	t.Logf("testing SCRATCHPAD_BIN=%s", bin)
	return bin
}

// conformanceRun readies a conformance run: node and the npm packages
// there (or the test skips, or fails under CI=true), and a context ending
// at budget or 30 s before the test's own deadline, whichever is first.
func conformanceRun(t *testing.T, budget time.Duration) (node string, ctx context.Context, deadline time.Time) {
	t.Helper()
	node = requireNode(t)
	ensureNodeModules(t)
	deadline = time.Now().Add(budget)
	if d, ok := t.Deadline(); ok && d.Add(-30*time.Second).Before(deadline) {
		deadline = d.Add(-30 * time.Second)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	t.Cleanup(cancel)
	return node, ctx, deadline
}

// buildEverythingServer is the go-sdk's conformance everything-server
// (the go.mod tool, from the module cache), built once for every test
// that needs it ([testupstream.EverythingServer]).
func buildEverythingServer(_ context.Context, t *testing.T) string {
	t.Helper()
	es, err := testupstream.EverythingServer()
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// startEverythingHTTP runs the everything-server over streamable HTTP on a
// free loopback port, with args after -http ADDR ("-stateless=false" for
// the 2025 suite: its sampling and elicitation tools need a session; none
// for 2026-07-28, which is stateless), and returns its URL; it is killed at
// cleanup.
func startEverythingHTTP(t *testing.T, es string, args ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(es, append([]string{"-http", addr}, args...)...)
	var logs lockedBuffer
	cmd.Stdout, cmd.Stderr = bufferWriter{&logs}, bufferWriter{&logs}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("everything-server at %s:\n%s", addr, tail(logs.String()))
		}
	})
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("everything-server -http %s exited:\n%s", addr, logs.String())
		default:
		}
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			return "http://" + addr + "/mcp"
		}
		if time.Since(start) > 15*time.Second {
			t.Fatalf("everything-server did not listen on %s within 15s:\n%s", addr, logs.String())
		}
	}
}

// bufferWriter is an io.Writer onto a lockedBuffer.
type bufferWriter struct{ b *lockedBuffer }

func (w bufferWriter) Write(p []byte) (int, error) {
	w.b.WriteString(string(p))
	return len(p), nil
}

// conformance runs the conformance CLI through conformance.mjs.
type conformance struct {
	node      string
	entry     string   // CONFORMANCE_ENTRY for conformance.mjs; "" runs 0.1.16
	scenarios []string // every server scenario, in the suite's order
	// whole selects the whole suite (nil: --suite all); single one
	// scenario (nil: --scenario NAME), when a hung run is finished one by one.
	whole  []string
	single func(scenario string) []string
}

// checkResult is one entry of a scenario's checks.json.
type checkResult struct {
	Scenario     string          `json:"-"`
	N            int             `json:"-"` // 1 + earlier checks of the scenario with this id
	ID           string          `json:"id"`
	Status       string          `json:"status"` // SUCCESS, WARNING, FAILURE, INFO, ...
	ErrorMessage string          `json:"errorMessage"`
	Details      json.RawMessage `json:"details"`
}

func (r *checkResult) key() string {
	if r.N > 1 {
		return fmt.Sprintf("%s/%s#%d", r.Scenario, r.ID, r.N)
	}
	return r.Scenario + "/" + r.ID
}

func (r *checkResult) message() string {
	if r.ErrorMessage != "" {
		return r.ErrorMessage
	}
	var d struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(r.Details, &d) == nil && d.Message != "" {
		return d.Message
	}
	return ""
}

func statusOf(r *checkResult) string {
	if r == nil {
		return "-"
	}
	return r.Status
}

// graded says whether a status counts in the totals (INFO entries are the
// suite's log of requests and responses).
func gradedStatus(status string) bool { return status != "INFO" }

// conformanceResults is one target's run: every check of every scenario
// (INFO entries included, graded or not), the scenarios that left a
// checks.json, and why the others did not.
type conformanceResults struct {
	checks map[string]*checkResult
	ran    map[string]bool
	broken map[string]string // scenario -> why it left no checks.json
}

// score counts the checks graded (not INFO) in res or in base, and how
// many of them pass or warn in res: the same denominator for the direct run
// and the runs through the proxy.
func (res *conformanceResults) score(base *conformanceResults) (passed, graded, warned int) {
	for k, r := range res.checks {
		if b := base.checks[k]; !gradedStatus(r.Status) && (b == nil || !gradedStatus(b.Status)) {
			continue
		}
		graded++
		switch r.Status {
		case "SUCCESS":
			passed++
		case "WARNING":
			warned++
		}
	}
	for k, b := range base.checks {
		if _, ok := res.checks[k]; !ok && gradedStatus(b.Status) {
			graded++
		}
	}
	return passed, graded, warned
}

// total is score as "passed/graded (n warnings)".
func (res *conformanceResults) total(base *conformanceResults) string {
	passed, graded, warned := res.score(base)
	s := fmt.Sprintf("%d/%d", passed, graded)
	if warned > 0 {
		s += fmt.Sprintf(" (%d warnings)", warned)
	}
	return s
}

func (res *conformanceResults) sorted() []*checkResult {
	out := make([]*checkResult, 0, len(res.checks))
	for _, r := range res.checks {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

func (res *conformanceResults) summary() string {
	var b strings.Builder
	for _, r := range res.sorted() {
		fmt.Fprintf(&b, "%s %s %s\n", r.key(), r.Status, r.message())
	}
	for s, why := range res.broken {
		fmt.Fprintf(&b, "%s: %s\n", s, why)
	}
	return b.String()
}

// worse says whether a check did worse through the proxy (via, nil when
// not reported) than directly (d): it passed directly and not through the
// proxy, or it warned directly and failed through the proxy.
func worse(d, via *checkResult) bool {
	if d == nil {
		return false
	}
	switch d.Status {
	case "SUCCESS":
		return via == nil || via.Status != "SUCCESS"
	case "WARNING":
		return via != nil && gradedStatus(via.Status) && via.Status != "SUCCESS" && via.Status != "WARNING"
	}
	return false
}

// compareConformance returns a table of the checks that pass directly but
// not through the proxy (and of those that only warn directly but fail
// through it), leaving out those whose key allowed reports (nil: none), or ""
// when there are none.
func compareConformance(direct, via *conformanceResults, allowed func(key string) bool) string {
	var rows [][4]string
	for _, d := range direct.sorted() {
		v := via.checks[d.key()]
		if !worse(d, v) || allowed != nil && allowed(d.key()) {
			continue
		}
		msg, status := "check not reported", "missing"
		if v != nil {
			msg, status = v.message(), v.Status
		} else if why, ok := via.broken[d.Scenario]; ok {
			msg = why
		}
		rows = append(rows, [4]string{d.key(), d.Status, status, msg})
	}
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "scenario/check\tdirect\tproxy\tmessage")
	for _, r := range rows {
		msg := strings.Join(strings.Fields(r[3]), " ")
		if len(msg) > 240 {
			msg = msg[:240] + "…"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r[0], r[1], r[2], msg)
	}
	w.Flush()
	return b.String()
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// list returns the suite's server scenarios (conformance list --server).
func (c *conformance) list(ctx context.Context, t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, c.node, "conformance.mjs", "list", "--server").CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list --server: %v\n%s", err, out)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^\s+- (\S+)`).FindAllStringSubmatch(ansiRE.ReplaceAllString(string(out), ""), -1) {
		names = append(names, m[1])
	}
	if len(names) < 10 {
		t.Fatalf("conformance list --server names %d scenarios:\n%s", len(names), out)
	}
	return names
}

// run runs every server scenario against url: the whole suite in one
// process; if a scenario hangs, the run is killed and the scenarios not
// run yet are run one by one.
func (c *conformance) run(ctx context.Context, t *testing.T, url string) *conformanceResults {
	t.Helper()
	dir := t.TempDir()
	res := &conformanceResults{checks: map[string]*checkResult{}, ran: map[string]bool{}, broken: map[string]string{}}
	out := filepath.Join(dir, "results")
	whole := c.whole
	if whole == nil {
		whole = []string{"--suite", "all"}
	}
	log, hung, err := c.exec(ctx, t, dir, append(append([]string{"server", "--url", url}, whole...), "-o", out)...)
	if err != nil && hung == "" {
		t.Fatalf("conformance server --url %s %s: %v\n%s", url, strings.Join(whole, " "), err, tail(log))
	}
	c.collect(t, out, log, res)
	if hung != "" {
		if hung != beforeAnyScenario {
			res.broken[hung] = err.Error()
		}
		t.Logf("conformance against %s: %s: %v; running the remaining scenarios one by one", url, hung, err)
		for _, s := range c.scenarios {
			if _, done := res.broken[s]; done || res.ran[s] {
				continue
			}
			out := filepath.Join(dir, "results-"+s)
			single := []string{"--scenario", s}
			if c.single != nil {
				single = c.single(s)
			}
			log, hung, err := c.exec(ctx, t, dir, append(append([]string{"server", "--url", url}, single...), "-o", out)...)
			if hung != "" {
				res.broken[s] = err.Error()
				continue
			}
			c.collect(t, out, log, res)
		}
	}
	for _, s := range c.scenarios {
		if _, ok := res.broken[s]; !ok && !res.ran[s] {
			res.broken[s] = "no checks.json"
		}
	}
	return res
}

// beforeAnyScenario is what exec says hung when the CLI was killed before
// it began a scenario.
const beforeAnyScenario = "(before any scenario)"

var resultDirRE = regexp.MustCompile(`^server-(.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$`)

// collect reads the checks.json of every scenario under out. A scenario
// that threw leaves a directory without checks.json; its error is in the
// log.
func (c *conformance) collect(t *testing.T, out, log string, res *conformanceResults) {
	t.Helper()
	entries, err := os.ReadDir(out)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for _, e := range entries {
		m := resultDirRE.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		scenario := m[1]
		b, err := os.ReadFile(filepath.Join(out, e.Name(), "checks.json"))
		if errors.Is(err, os.ErrNotExist) {
			why := "no checks.json"
			if m := regexp.MustCompile(`(?m)^Failed to run scenario ` + regexp.QuoteMeta(scenario) + `:\s*(.*)$`).FindStringSubmatch(log); m != nil {
				why = "failed to run: " + m[1]
			}
			res.broken[scenario] = why
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		var list []*checkResult
		if err := json.Unmarshal(b, &list); err != nil {
			t.Fatalf("%s: %v", filepath.Join(out, e.Name(), "checks.json"), err)
		}
		seen := map[string]int{}
		res.ran[scenario] = true
		for _, r := range list {
			seen[r.ID]++
			r.Scenario, r.N = scenario, seen[r.ID]
			res.checks[r.key()] = r
		}
	}
}

// exec runs the conformance CLI in dir and returns its output. When it
// prints nothing for conformanceIdle, or the test's deadline comes, it is
// killed and hung names the scenario it was in.
func (c *conformance) exec(ctx context.Context, t *testing.T, dir string, args ...string) (log, hung string, err error) {
	t.Helper()
	script, err := filepath.Abs("conformance.mjs")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(c.node, append([]string{script}, args...)...)
	cmd.Dir = dir
	if c.entry != "" {
		entry, err := filepath.Abs(c.entry)
		if err != nil {
			t.Fatal(err)
		}
		cmd.Env = append(os.Environ(), "CONFORMANCE_ENTRY="+entry)
	}
	ownGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { err := cmd.Wait(); pw.Close(); exited <- err }()
	var out lockedBuffer
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			lines <- ansiRE.ReplaceAllString(sc.Text(), "")
		}
		_, _ = io.Copy(io.Discard, pr)
		close(lines)
	}()
	current := ""
	for i, a := range args {
		if a == "--scenario" && i+1 < len(args) {
			current = args[i+1]
		}
	}
	runningRE := regexp.MustCompile(`^=== Running scenario: (\S+) ===$`)
	idle := time.NewTimer(conformanceIdle)
	defer idle.Stop()
	kill := func(why error) (string, string, error) {
		_ = killGroup(cmd)
		for range lines {
		}
		<-exited
		if current == "" {
			current = beforeAnyScenario
		}
		return out.String(), current, why
	}
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				lines = nil // output closed: the process has exited
				continue
			}
			if m := runningRE.FindStringSubmatch(l); m != nil {
				current = m[1]
			}
			idle.Reset(conformanceIdle)
		case err := <-exited:
			if lines != nil {
				for l := range lines {
					_ = l
				}
			}
			var exit *exec.ExitError
			if errors.As(err, &exit) && exit.ExitCode() == 1 {
				err = nil // some check failed: the checks say which
			}
			return out.String(), "", err
		case <-idle.C:
			return kill(fmt.Errorf("hung: no output for %v, killed", conformanceIdle))
		case <-ctx.Done():
			return kill(fmt.Errorf("killed: out of time (%w)", ctx.Err()))
		}
	}
}

// waitForTool waits until the streamable HTTP server at url lists tool:
// scratchpad-mcp answers before its upstreams are ready and adds their
// tools as they come, and a suite that began earlier would grade a proxy
// that is still starting.
func waitForTool(t *testing.T, url, tool string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-wait", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	defer cs.Close()
	testwait.For(t, tool+" to be listed at "+url, func() bool {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			return false
		}
		for _, tl := range res.Tools {
			if tl.Name == tool {
				return true
			}
		}
		time.Sleep(50 * time.Millisecond) // beside testwait's 10 ms: each poll is a round trip
		return false
	})
}
