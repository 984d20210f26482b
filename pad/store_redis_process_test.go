package pad

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// The tests below re-run this test binary as child processes sharing one
// redis-server, as the workers of a run on several hosts would: the child
// runs TestRedisHelperProcess, which acts on PAD_REDIS_HELPER and exits.
const redisHelperEnv = "PAD_REDIS_HELPER"

func redisHelper(t *testing.T, role, url, id, proc string, workers, each int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRedisHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), redisHelperEnv+"="+role, "PAD_REDIS_URL="+url, "PAD_REDIS_ID="+id,
		"PAD_PROC="+proc, "PAD_WORKERS="+strconv.Itoa(workers), "PAD_EACH="+strconv.Itoa(each))
	cmd.Stderr = os.Stderr
	return cmd
}

var logSection = Options{Sections: []Section{{Name: "Log", Cap: 0}}}

func TestRedisHelperProcess(t *testing.T) {
	role := os.Getenv(redisHelperEnv)
	if role == "" {
		t.Skip("helper process for the multi-process Redis tests")
	}
	r, err := NewRedis(RedisOptions{URL: os.Getenv("PAD_REDIS_URL")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	p, err := r.Open(os.Getenv("PAD_REDIS_ID"), logSection)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	workers, _ := strconv.Atoi(os.Getenv("PAD_WORKERS"))
	each, _ := strconv.Atoi(os.Getenv("PAD_EACH"))
	proc := os.Getenv("PAD_PROC")
	switch role {
	case "append":
		err = appendMany(p, proc, workers, each)
	case "update":
		err = updateMany(p, proc, workers, each)
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// updateMany runs read-modify-writes: each adds one unique line to Log.
func updateMany(p *Pad, proc string, workers, each int) error {
	return runWorkers(workers, each, func(w, i int) error {
		_, err := p.Update([]Patch{{Section: "Log", Op: OpAppend, Content: fmt.Sprintf("%s/%d/%d", proc, w, i)}})
		return err
	})
}

func runHelpers(t *testing.T, cmds []*exec.Cmd) {
	t.Helper()
	for _, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
}

// runRedisHelpers runs procs helper processes (named p0, p1, …) doing role
// on one pad, and waits for them.
func runRedisHelpers(t *testing.T, role, url, id string, procs, workers, each int) {
	t.Helper()
	var cmds []*exec.Cmd
	for i := 0; i < procs; i++ {
		cmds = append(cmds, redisHelper(t, role, url, id, "p"+strconv.Itoa(i), workers, each))
	}
	runHelpers(t, cmds)
}

// 2 processes × 8 goroutines append to one ledger: every entry lands
// whole, once.
func TestRedisConcurrentAppendsAcrossProcesses(t *testing.T) {
	const procs, workers = 2, 8
	each := 500
	if testing.Short() {
		each = 50
	}
	env := newRedisEnv(t)
	runRedisHelpers(t, "append", env.srv.URL(), "run:many", procs, workers, each)

	items := env.rdb.LRange(context.Background(), keyBase("run:many")+":ledger", 0, -1).Val()
	want := procs * workers * each
	if len(items) != want {
		t.Fatalf("ledger has %d items, want %d", len(items), want)
	}
	seen := map[string]bool{}
	for i, it := range items {
		var e Entry
		if err := json.Unmarshal([]byte(it), &e); err != nil || !strings.HasSuffix(e.Note, strings.Repeat("z", 300)) {
			t.Fatalf("item %d torn: %v: %.80q", i+1, err, it)
		}
		key := strings.Fields(e.Note)[0]
		if seen[key] {
			t.Fatalf("duplicate entry %s", key)
		}
		seen[key] = true
	}
	p := env.open(t, env.conn(t, RedisOptions{}), "run:many", logSection)
	v, err := p.View(nil)
	if err != nil || len(v.Entries) != want || len(v.Warnings) != 0 {
		t.Fatalf("view: %d entries, warnings %q, %v", len(v.Entries), v.Warnings, err)
	}
}

// 2 processes × 4 goroutines each run read-modify-write updates of one
// section: the lock makes them take turns, so no update is lost.
func TestRedisConcurrentUpdatesAcrossProcesses(t *testing.T) {
	const procs, workers = 2, 4
	each := 25
	if testing.Short() {
		each = 5
	}
	env := newRedisEnv(t)
	runRedisHelpers(t, "update", env.srv.URL(), "run:rmw", procs, workers, each)

	p := env.open(t, env.conn(t, RedisOptions{}), "run:rmw", logSection)
	doc := p.doc()
	for i := 0; i < procs; i++ {
		for w := 0; w < workers; w++ {
			for n := 0; n < each; n++ {
				if line := fmt.Sprintf("\n- p%d/%d/%d\n", i, w, n); !strings.Contains(doc, line) {
					t.Fatalf("update %q was lost:\n%s", line, doc)
				}
			}
		}
	}
	if got, want := strings.Count(doc, "\n- p"), procs*workers*each; got != want {
		t.Fatalf("%d lines, want %d", got, want)
	}
	// Every update was one version: the history is full and the newest
	// version is the document.
	vs, err := p.store.history(1)
	if err != nil || len(vs) != 1 {
		t.Fatalf("history: %v, %v", vs, err)
	}
	if data, _ := vs[0].read(); string(data) != doc {
		t.Fatal("the newest version is not the document")
	}
}
