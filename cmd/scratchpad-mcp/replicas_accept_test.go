package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// The acceptance of issue 34: three replicas (three memory_dirs, as on
// three hosts), one redis-server for the cluster and the pad, a real
// haproxy round-robin with no stickiness, and one run's coordinator and
// worker per protocol era — the 2026-07-28 client (TS SDK v2 pinned) and
// the 2025 one (SDK v1) — driven by e2e/modern.mjs. Between the two
// halves of every agent's work one replica is SIGKILLed; afterwards
// nothing is lost: stored outputs (explored by other replicas than the
// one that stored them, also after their writer died), the budget (its
// "left" never goes up), the 40 pad appends of each run, the
// coordinator's artifact (read by the worker through another replica)
// and the usage records (one per agent, every call counted, those the
// dead replica answered too). haproxy names the replica that answered
// each request (X-Served-By), so the spread is asserted, not assumed.
func TestReplicasAcceptanceThroughHAProxy(t *testing.T) {
	node := replicaNode(t)
	srv := testredis.Start(t)
	var backends, mems []string
	var procs []*exec.Cmd
	for range 3 {
		cfg, mem := writeConfig(t, clusterConfig(srv.URL())+redisPadConfig(srv.URL()))
		base, cmd := startHTTPProcess(t, "http", cfg, nil)
		backends, mems, procs = append(backends, base), append(mems, mem), append(procs, cmd)
	}
	for _, b := range backends {
		testwait.For(t, b+" ready", func() bool {
			resp, err := http.Get(b + "/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == 200
		})
	}
	front := startHAProxy(t, backends)

	eras := []string{"pin", "legacy"}
	type agent struct {
		era, name, role, run string
		iteration            int
		script               []map[string]any
		d                    *replicaDriver
	}
	var agents []*agent
	for _, era := range eras {
		for _, a := range []struct {
			name, role string
			it         int
		}{{"coord", "coordinator", 0}, {"worker", "worker", 1}} {
			agents = append(agents, &agent{era: era, name: a.name, role: a.role, run: "run-" + era, iteration: a.it})
		}
	}
	coordOf := func(era string) *agent {
		for _, b := range agents {
			if b.era == era && b.role == "coordinator" {
				return b
			}
		}
		return nil
	}
	url := func(a *agent) string {
		return fmt.Sprintf("%s/mcp?X-Scratchpad-Agent=%s&X-Scratchpad-Role=%s&X-Scratchpad-Run=%s&X-Scratchpad-Iteration=%d",
			front, a.name, a.role, a.run, a.iteration)
	}
	call := func(name string, args map[string]any) map[string]any {
		return map[string]any{"op": "call", "name": name, "args": args}
	}
	// divert stores one output and explores it three times in a row: one
	// client alone, round-robin, so three replicas (two after the kill).
	divert := func(n int) []map[string]any {
		ops := []map[string]any{call("listing", map[string]any{"n": n})}
		for range 3 {
			ops = append(ops, call("head", map[string]any{"file": "$diverted", "lines": 2}))
		}
		return ops
	}
	appends := func(a *agent, from int) []map[string]any {
		var ops []map[string]any
		for i := from; i < from+10; i++ {
			ops = append(ops, call("append_scratchpad", map[string]any{"note": noteOf(a.era, a.name, i)}))
		}
		return ops
	}
	artifact := "the plan of " // + era: each run its own
	// The first halves, one agent at a time, each ending paused.
	for _, a := range agents {
		ops := []map[string]any{{"op": "list", "until": "listing"}}
		if a.role == "coordinator" {
			ops = append(ops, call("write_artifact", map[string]any{"filename": "plan.md", "content": artifact + a.era}))
			ops = append(ops, divert(200)...)
			ops = append(ops, divert(201)...)
		} else {
			ops = append(ops, divert(220)...)
			// The coordinator's outputs, explored in place from the
			// worker's folder (its read root is the run).
			for _, f := range coordOf(a.era).d.diverted() {
				for range 2 {
					ops = append(ops, call("head", map[string]any{"file": "../../iteration-0/scratchpad/" + f, "lines": 2}))
				}
			}
		}
		ops = append(ops, appends(a, 0)...)
		ops = append(ops, map[string]any{"op": "pause"})
		// The second half, after the kill.
		if a.role == "coordinator" {
			ops = append(ops, divert(210)...)
			for _, f := range []string{"$diverted0", "$diverted1"} {
				for range 2 {
					ops = append(ops, call("head", map[string]any{"file": f, "lines": 2}))
				}
			}
		} else {
			for range 3 {
				ops = append(ops, call("read_artifact", map[string]any{"filename": "plan.md"}))
			}
			ops = append(ops, divert(230)...)
			for range 2 {
				ops = append(ops, call("head", map[string]any{"file": "$diverted0", "lines": 2}))
			}
		}
		ops = append(ops, appends(a, 10)...)
		if a.role == "worker" {
			ops = append(ops, call("read_scratchpad", map[string]any{}))
		}
		a.script = ops
		a.d = startReplicaDriver(t, node, a.era, url(a), ops)
		a.d.waitPaused(t)
	}
	// A replica dies as a crash would, with every agent mid-run (each
	// agent's requests reached all three replicas by now): the one
	// that stored the first output, so that outputs it stored are
	// explored after it died.
	victim := ""
	for _, l := range coordOf("pin").d.ops() {
		if l.divertedFile() != "" {
			victim = l.ServedBy
			break
		}
	}
	n, err := strconv.Atoi(strings.TrimPrefix(victim, "r"))
	if err != nil || n < 0 || n >= len(procs) {
		t.Fatalf("the first output was stored by replica %q: haproxy did not name it", victim)
	}
	if err := procs[n].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	survivors := slices.Delete(slices.Clone(procs), n, n+1)
	killedAt := map[*agent]int{}
	for _, a := range agents {
		killedAt[a] = len(a.d.ops())
		a.d.resume(t)
		a.d.wait(t)
	}

	seen := map[string]int{}
	seenAfter := map[string]int{}
	// Every stored output, by its path in its run: which replica stored
	// it, which explored it, and which after the kill.
	storedBy := map[string]string{}
	exploredBy := map[string]map[string]bool{}
	exploredAfter := map[string]int{}
	for _, a := range agents {
		who := a.era + "/" + a.name
		lines := a.d.ops()
		if len(lines) != len(a.script) {
			t.Errorf("%s: %d lines for %d ops", who, len(lines), len(a.script))
			continue
		}
		prev, first := -1, -1
		before := map[string]bool{}
		var diverted []string
		// inRun is the run-relative path of a file argument of a.
		inRun := func(file string) string {
			switch {
			case file == "$diverted" && len(diverted) > 0:
				file = diverted[len(diverted)-1]
			case strings.HasPrefix(file, "$diverted"):
				if k, err := strconv.Atoi(strings.TrimPrefix(file, "$diverted")); err == nil && k < len(diverted) {
					file = diverted[k]
				}
			}
			return a.run + "/" + path.Join(filepath.ToSlash(layout.IterationScratchpad(a.iteration)), file)
		}
		for i, l := range lines {
			if l.ServedBy != "" {
				if i < killedAt[a] {
					before[l.ServedBy] = true
					seen[l.ServedBy]++
				} else {
					seenAfter[l.ServedBy]++
				}
			}
			if l.Error != nil {
				t.Errorf("%s: op %d (%s %s) failed through haproxy (replica %q): %s", who, i, l.Op, l.Name, l.ServedBy, l.Error.Message)
				continue
			}
			if l.Op != "call" {
				continue
			}
			out := l.text()
			if l.isError() {
				t.Errorf("%s: %s (op %d, replica %s) answered an error:\n%s", who, l.Name, i, l.ServedBy, short(out))
				continue
			}
			if m := footerLeft.FindStringSubmatch(out); m != nil {
				left, _ := strconv.Atoi(strings.ReplaceAll(m[2], ",", ""))
				if prev >= 0 && left > prev {
					t.Errorf("%s: %s (op %d, replica %s): budget left %d, was %d", who, l.Name, i, l.ServedBy, left, prev)
				}
				if first < 0 {
					first = left
				}
				prev = left
			}
			switch l.Name {
			case "listing":
				if l.divertedFile() == "" {
					t.Errorf("%s: listing (op %d) not diverted: %s", who, i, short(out))
				}
				diverted = append(diverted, l.divertedFile())
				storedBy[inRun("$diverted")] = l.ServedBy
			case "head":
				if !strings.Contains(out, "--- head: ") {
					t.Errorf("%s: head (op %d, replica %s) does not explore:\n%s", who, i, l.ServedBy, short(out))
					continue
				}
				f := inRun(a.script[i]["args"].(map[string]any)["file"].(string))
				if exploredBy[f] == nil {
					exploredBy[f] = map[string]bool{}
				}
				exploredBy[f][l.ServedBy] = true
				if i >= killedAt[a] {
					exploredAfter[f]++
				}
			case "read_artifact":
				if !strings.Contains(out, artifact+a.era) {
					t.Errorf("%s: read_artifact (op %d, replica %s) after the kill:\n%s", who, i, l.ServedBy, short(out))
				}
			case "read_scratchpad":
				for _, b := range agents {
					if b.era != a.era {
						continue
					}
					for n := range 20 {
						if !strings.Contains(out, noteOf(b.era, b.name, n)) {
							t.Errorf("%s: the pad lacks %q:\n%s", who, noteOf(b.era, b.name, n), short(out))
						}
					}
				}
			}
		}
		if len(before) != 3 {
			t.Errorf("%s: before the kill its requests reached %v, want all three replicas", who, before)
		}
		if first < 0 || prev >= first {
			t.Errorf("%s: budget left went from %d to %d over the run: it must fall", who, first, prev)
		}
		// The artifact went through another replica than the one that
		// wrote it.
		if a.role == "worker" {
			var wrote string
			for _, l := range coordOf(a.era).d.ops() {
				if l.Name == "write_artifact" {
					wrote = l.ServedBy
				}
			}
			other := false
			for _, l := range lines {
				if l.Name == "read_artifact" && l.ServedBy != wrote && l.ServedBy != "" {
					other = true
				}
			}
			if !other {
				t.Errorf("%s: every read_artifact was answered by %s, the replica that wrote it", who, wrote)
			}
		}
	}
	if len(seen) != 3 {
		t.Errorf("before the kill, requests answered per replica: %v; want all three", seen)
	}
	if len(seenAfter) != 2 || seenAfter[victim] != 0 {
		t.Errorf("after %s was killed, requests answered per replica: %v; want the two others", victim, seenAfter)
	}
	t.Logf("requests answered per replica: before %s was killed %v, after %v", victim, seen, seenAfter)
	victims := 0
	for f, by := range storedBy {
		others := 0
		for r := range exploredBy[f] {
			if r != by {
				others++
			}
		}
		if others == 0 {
			t.Errorf("%s (stored by %s) was explored only by %v", f, by, exploredBy[f])
		}
		if by == victim && exploredAfter[f] > 0 {
			victims++
		}
	}
	if victims == 0 {
		t.Errorf("no output stored by %s was explored after it died: %v", victim, storedBy)
	}

	// Usage: the survivors end their agents at shutdown; one record per
	// agent, written by whichever ends first, counts every call.
	for _, p := range survivors {
		_ = p.Process.Signal(os.Interrupt)
	}
	for _, p := range survivors {
		_ = p.Wait()
	}
	records := map[string][]usageLine{}
	for _, mem := range mems {
		_ = filepath.WalkDir(mem, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.Name() != "usage.jsonl" {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Error(err)
				return nil
			}
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var u usageLine
				if err := json.Unmarshal([]byte(line), &u); err != nil {
					t.Errorf("%s: %v: %s", p, err, line)
					continue
				}
				records[u.RunID+"/"+u.AgentName] = append(records[u.RunID+"/"+u.AgentName], u)
			}
			return nil
		})
	}
	for _, a := range agents {
		calls := 0
		for _, l := range a.d.ops() {
			if l.Op == "call" && l.Error == nil {
				calls++
			}
		}
		got := records[a.run+"/"+a.name]
		if len(got) != 1 {
			t.Errorf("%s/%s: %d usage records, want 1: %+v", a.era, a.name, len(got), got)
			continue
		}
		if u := got[0]; u.Calls != calls || u.TokensIntercepted == 0 || u.TokensExtracted == 0 || u.Role != a.role {
			t.Errorf("%s/%s: usage record %+v, want %d calls, tokens intercepted and extracted, role %s", a.era, a.name, u, calls, a.role)
		}
	}
}

func noteOf(era, agent string, i int) string { return fmt.Sprintf("%s-%s-note-%02d", era, agent, i) }

// usageLine is the part of a scratchpad_usage record the test checks.
type usageLine struct {
	AgentName         string `json:"agent_name"`
	Role              string `json:"role"`
	RunID             string `json:"run_id"`
	Calls             int    `json:"calls"`
	TokensIntercepted int    `json:"tokens_intercepted"`
	TokensExtracted   int    `json:"tokens_extracted"`
}

// replicaNode is node, with e2e's npm packages installed (scripts/deps.sh).
func replicaNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found: run scripts/deps.sh")
	}
	if _, err := os.Stat(filepath.Join("..", "..", "e2e", "node_modules", "@modelcontextprotocol", "client")); err != nil {
		t.Fatalf("e2e's npm packages are not installed (run scripts/deps.sh): %v", err)
	}
	return node
}

// driverLine is one line e2e/modern.mjs prints.
type driverLine struct {
	Op              string          `json:"op"`
	Name            string          `json:"name"`
	ProtocolVersion string          `json:"protocolVersion"`
	Result          json.RawMessage `json:"result"`
	Error           *struct {
		Message string `json:"message"`
	} `json:"error"`
	ServedBy string `json:"servedBy"`
}

type driverResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
	Meta    struct {
		Diverted struct {
			File string `json:"file"`
		} `json:"scratchpad/diverted"`
	} `json:"_meta"`
}

func (l driverLine) result() driverResult {
	var r driverResult
	_ = json.Unmarshal(l.Result, &r)
	return r
}

func (l driverLine) text() string {
	var b strings.Builder
	for _, c := range l.result().Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func (l driverLine) isError() bool        { return l.result().IsError }
func (l driverLine) divertedFile() string { return l.result().Meta.Diverted.File }

// replicaDriver is one run of e2e/modern.mjs whose script may pause.
type replicaDriver struct {
	era    string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan driverLine
	done   chan struct{}
	stderr *lockedLines
	mu     sync.Mutex
	got    []driverLine
}

type lockedLines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startReplicaDriver(t *testing.T, node, era, url string, ops []map[string]any) *replicaDriver {
	t.Helper()
	script, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	d := &replicaDriver{era: era, lines: make(chan driverLine, len(ops)+4), done: make(chan struct{}), stderr: &lockedLines{}}
	d.cmd = exec.Command(node, "modern.mjs", "--era", era, "--transport", "http", "--url", url, "--served-by", "X-Served-By", "--ops", string(script))
	d.cmd.Dir = filepath.Join("..", "..", "e2e")
	d.cmd.Stderr = d.stderr
	if d.stdin, err = d.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := d.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.cmd.Process.Kill(); <-d.done })
	go func() {
		defer close(d.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var l driverLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				l = driverLine{Op: "unparsed", Error: &struct {
					Message string `json:"message"`
				}{err.Error() + ": " + short(sc.Text())}}
			}
			d.lines <- l
		}
		_ = d.cmd.Wait()
		close(d.lines)
	}()
	return d
}

// next is the driver's next line; ok false when it exited.
func (d *replicaDriver) next(t *testing.T) (driverLine, bool) {
	t.Helper()
	select {
	case l, ok := <-d.lines:
		if ok && l.Op != "paused" {
			d.mu.Lock()
			d.got = append(d.got, l)
			d.mu.Unlock()
		}
		return l, ok
	case <-time.After(90 * time.Second):
		t.Fatalf("modern.mjs --era %s: no line in 90s\nstderr:\n%s", d.era, d.stderr.String())
	}
	return driverLine{}, false
}

func (d *replicaDriver) waitPaused(t *testing.T) {
	t.Helper()
	for {
		l, ok := d.next(t)
		if !ok {
			t.Fatalf("modern.mjs --era %s exited before its pause: %+v\nstderr:\n%s", d.era, d.ops(), d.stderr.String())
		}
		if l.Op == "connect" && l.Error != nil {
			t.Fatalf("modern.mjs --era %s did not connect through haproxy: %s", d.era, l.Error.Message)
		}
		if l.Op == "paused" {
			return
		}
	}
}

func (d *replicaDriver) resume(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(d.stdin, "\n"); err != nil {
		t.Fatal(err)
	}
}

func (d *replicaDriver) wait(t *testing.T) {
	t.Helper()
	for {
		if _, ok := d.next(t); !ok {
			return
		}
	}
}

// ops is what the driver printed so far, the connect line and pauses
// left out.
func (d *replicaDriver) ops() []driverLine {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []driverLine
	for _, l := range d.got {
		if l.Op != "connect" {
			out = append(out, l)
		}
	}
	return out
}

// diverted is the files of the results diverted so far.
func (d *replicaDriver) diverted() []string {
	var out []string
	for _, l := range d.ops() {
		if f := l.divertedFile(); f != "" {
			out = append(out, f)
		}
	}
	return out
}
