package budget

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

func busyAgent(name string) *Agent {
	a := NewAgent(Identity{AgentID: name + "-id", AgentName: name, Role: "worker", RunID: "run-1", SessionID: "sess-" + name}, 1000, 0)
	a.AddIntercepted(12_000)
	a.TryCharge(300)
	a.CountCall()
	return a
}

func TestFinishWritesOnceAndSkipsIdle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mem") // created by the first record
	e := NewEvents(dir)

	idle := NewAgent(Identity{AgentName: "idle"}, 1000, 500)
	idle.CountCall() // calls alone do not make an agent worth reporting
	if err := e.Finish(idle); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(layout.For(dir, "").Usage()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("idle agent created usage.jsonl (stat err %v)", err)
	}

	a := busyAgent("w1")
	var wg sync.WaitGroup
	for range 16 { // session delete racing server shutdown
		wg.Go(func() {
			if err := e.Finish(a); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// Idle then busy: the first Finish decided.
	idle.TryCharge(10)
	if err := e.Finish(idle); err != nil {
		t.Fatal(err)
	}
	if err := e.Finish(nil); err != nil {
		t.Fatal(err)
	}

	recs, err := ReadUsage(layout.For(dir, "").Usage(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("got %d records, want 1: %+v", len(recs), recs)
	}
	r := recs[0]
	if r.AgentName != "w1" || r.TokensIntercepted != 12_000 || r.TokensExtracted != 300 || r.Calls != 1 || r.Event != EventName {
		t.Fatalf("record %+v", r)
	}
	st, err := os.Stat(layout.For(dir, "").Usage())
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("usage.jsonl mode %v, want 0600", st.Mode().Perm())
	}
}

func TestUsageJSONFieldNames(t *testing.T) {
	b, err := json.Marshal(busyAgent("w").Usage())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"event", "agent_id", "agent_name", "role", "run_id", "session_id",
		"tokens_intercepted", "tokens_extracted", "calls", "time"} {
		if _, ok := m[k]; !ok {
			t.Errorf("record lacks %q: %s", k, b)
		}
	}
	if m["event"] != "scratchpad_usage" {
		t.Errorf("event = %v", m["event"])
	}
}

// TestFinishAcrossProcesses has several processes append to one
// usage.jsonl at once; every line must stay a whole record.
func TestFinishAcrossProcesses(t *testing.T) {
	if dir := os.Getenv("BUDGET_TEST_APPEND_DIR"); dir != "" {
		e := NewEvents(dir)
		for i := range 200 {
			if err := e.Finish(busyAgent(fmt.Sprintf("p%s-%d", os.Getenv("BUDGET_TEST_PROC"), i))); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	const procs = 4
	var wg sync.WaitGroup
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFinishAcrossProcesses$")
		cmd.Env = append(os.Environ(), "BUDGET_TEST_APPEND_DIR="+dir, "BUDGET_TEST_PROC="+strconv.Itoa(p))
		wg.Go(func() {
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("child %d: %v\n%s", p, err, out)
			}
		})
	}
	wg.Wait()
	data, err := os.ReadFile(layout.For(dir, "").Usage())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != procs*200 {
		t.Fatalf("%d lines, want %d", len(lines), procs*200)
	}
	seen := map[string]bool{}
	for i, l := range lines {
		var u Usage
		if err := json.Unmarshal([]byte(l), &u); err != nil {
			t.Fatalf("line %d torn: %v: %q", i, err, l)
		}
		seen[u.AgentName] = true
	}
	if len(seen) != procs*200 {
		t.Fatalf("%d distinct agents, want %d", len(seen), procs*200)
	}
}

func TestFinishWithoutMemoryDirOnlyPublishes(t *testing.T) {
	e := NewEvents("")
	ch, cancel := e.Subscribe()
	defer cancel()
	if err := e.Finish(busyAgent("w")); err != nil {
		t.Fatal(err)
	}
	if u := <-ch; u.AgentName != "w" {
		t.Fatalf("got %+v", u)
	}
	if e.Persisted() {
		t.Fatal("Persisted() without a path")
	}
}

func TestSubscribeCancelAndClose(t *testing.T) {
	e := NewEvents("")
	ch1, cancel1 := e.Subscribe()
	ch2, cancel2 := e.Subscribe()
	defer cancel2()
	cancel1()
	cancel1() // idempotent
	if _, ok := <-ch1; ok {
		t.Fatal("cancelled channel still open")
	}
	e.Close()
	if _, ok := <-ch2; ok {
		t.Fatal("Close left a subscriber open")
	}
	ch3, cancel3 := e.Subscribe()
	defer cancel3()
	if _, ok := <-ch3; ok {
		t.Fatal("Subscribe after Close returned an open channel")
	}
	if err := e.Finish(busyAgent("late")); !errors.Is(err, ErrEventsClosed) {
		t.Fatalf("Finish after Close = %v, want ErrEventsClosed", err)
	}
}

func TestSlowSubscriberDoesNotBlockFinish(t *testing.T) {
	e := NewEvents("")
	_, cancel := e.Subscribe() // never read
	defer cancel()
	for i := range subscriberBuffer * 3 {
		if err := e.Finish(busyAgent(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
}

// TestServeSSE runs the handler behind a real HTTP server and reads the
// stream with net/http's client, the way an orchestrator would.
func TestServeSSE(t *testing.T) {
	e := NewEvents(t.TempDir())
	srv := httptest.NewServer(http.HandlerFunc(e.ServeSSE))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(resp.Body)
	// The subscription comment arrives before any event, so Finish below
	// cannot race the subscription.
	if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, ":") {
		t.Fatalf("first line %q, %v", line, err)
	}

	for _, name := range []string{"w1", "w2"} {
		if err := e.Finish(busyAgent(name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"w1", "w2"} {
		ev, data := readEvent(t, br)
		if ev != EventName {
			t.Fatalf("event %q, want %q", ev, EventName)
		}
		var u Usage
		if err := json.Unmarshal([]byte(data), &u); err != nil {
			t.Fatalf("data %q: %v", data, err)
		}
		if u.AgentName != want || u.TokensIntercepted != 12_000 || u.RunID != "run-1" {
			t.Fatalf("got %+v, want agent %s", u, want)
		}
	}

	// Close ends the stream, as server shutdown needs.
	// Without it ReadAll would wait for the 30s deadline and fail.
	e.Close()
	if _, err := io.ReadAll(br); err != nil {
		t.Fatalf("stream did not end cleanly after Close: %v", err)
	}
}

// readEvent reads one SSE event, skipping comments.
func readEvent(t *testing.T, br *bufio.Reader) (event, data string) {
	t.Helper()
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading stream: %v", err)
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if event != "" || data != "" {
				return event, data
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data += strings.TrimPrefix(line, "data: ")
		}
	}
}

func TestServeSSERejectsPost(t *testing.T) {
	e := NewEvents("")
	rec := httptest.NewRecorder()
	e.ServeSSE(rec, httptest.NewRequest(http.MethodPost, "/events", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST /events = %d", rec.Code)
	}
}

func ownedAgent(name, owner string) *Agent {
	a := NewAgent(Identity{AgentID: name + "-id", AgentName: name, Role: "worker", RunID: "run-1", Owner: owner}, 1000, 0)
	a.AddIntercepted(100)
	return a
}

// An owner's records go to its own usage.jsonl and only to its own
// /events streams.
func TestEventsPerOwner(t *testing.T) {
	mem := t.TempDir()
	e := NewEvents(mem)
	srv := httptest.NewServer(e.Handler(func(r *http.Request) string { return r.URL.Query().Get("owner") }))
	defer srv.Close()
	open := func(owner string) (*bufio.Reader, func()) {
		resp, err := srv.Client().Get(srv.URL + "/events?owner=" + owner)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(resp.Body)
		if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, ":") {
			t.Fatalf("first line %q, %v", line, err)
		}
		return br, func() { resp.Body.Close() }
	}
	streams := map[string]*bufio.Reader{}
	for _, o := range []string{"", "alice", "bob"} {
		br, closeFn := open(o)
		defer closeFn()
		streams[o] = br
	}
	for _, a := range []*Agent{ownedAgent("a1", "alice"), ownedAgent("b1", "bob"), ownedAgent("n1", ""), ownedAgent("a2", "alice")} {
		if err := e.Finish(a); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]string{"": {"n1"}, "alice": {"a1", "a2"}, "bob": {"b1"}}
	for o, names := range want {
		for _, n := range names {
			_, data := readEvent(t, streams[o])
			var u Usage
			_ = json.Unmarshal([]byte(data), &u)
			if u.AgentName != n || u.Owner != o {
				t.Errorf("owner %q's stream: got %s of %q, want %s", o, u.AgentName, u.Owner, n)
			}
		}
		path := layout.For(mem, "").Usage()
		if o != "" {
			path = layout.For(mem, o).Usage()
		}
		recs, err := ReadUsage(path, "")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, r.AgentName)
		}
		if strings.Join(got, ",") != strings.Join(names, ",") {
			t.Errorf("%s: %v, want %v", path, got, names)
		}
	}
	e.Close()
	// Nothing else arrived on any stream before the end.
	for o, br := range streams {
		rest, _ := io.ReadAll(br)
		if strings.Contains(string(rest), "data:") {
			t.Errorf("owner %q's stream carried more: %s", o, rest)
		}
	}
}
