package retention

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// put writes a file under root with the given age.
func put(t testing.TB, root, rel string, size int, age time.Duration) string {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Repeat("x", size)), 0o600); err != nil {
		t.Fatal(err)
	}
	mt := now.Add(-age)
	if err := os.Chtimes(p, mt, mt); err != nil {
		t.Fatal(err)
	}
	return p
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

type guard struct {
	files map[string]bool
	runs  map[string]bool
}

func (g guard) Protected(p string) bool { return g.files[p] }
func (g guard) LiveRun(d string) bool   { return g.runs[d] }

func TestClassify(t *testing.T) {
	for rel, want := range map[string]layout.Class{
		"scratchpad/k8s-list-1234.json":         {Kind: layout.KindOutput},
		"scratchpad/.k8s-list-1234.json.tmp-99": {Kind: layout.KindTemp},
		"pad/pad.md":                            {Kind: layout.KindPad},
		"pad/.history/0001.md":                  {Kind: layout.KindPad},
		"pad/.tmp-pad.md-123":                   {Kind: layout.KindTemp},
		"usage.jsonl":                           {Kind: layout.KindUsage},
		"usage.jsonl.3":                         {Kind: layout.KindUsage},
		"r1/iteration-2/scratchpad/a.json":      {Kind: layout.KindOutput, Run: "/m/r1"},
		"r1/artifacts/plan.md":                  {Kind: layout.KindArtifact, Run: "/m/r1"},
		"r1/artifacts/.tmp-0011-plan.md":        {Kind: layout.KindTemp, Run: "/m/r1"},
		"r1/pad/pad.md":                         {Kind: layout.KindPad, Run: "/m/r1"},
		"r1/notes.txt":                          {Kind: layout.KindOther, Run: "/m/r1"},
		".trash-r1-abc/artifacts/plan.md":       {Kind: layout.KindTrash},
		".sweep.lock":                           {Kind: layout.KindOther},
		"agents/bob/pad/pad.md":                 {Kind: layout.KindPad},
		"agents/bob/notes.txt":                  {Kind: layout.KindOther},
		"stray.txt":                             {Kind: layout.KindOther},
	} {
		if got := layout.Classify("/m", rel); got != want {
			t.Errorf("layout.Classify(%q) = %+v, want %+v", rel, got, want)
		}
	}
}

func TestPlanAndSweep(t *testing.T) {
	m := t.TempDir()
	day := 24 * time.Hour
	oldOut := put(t, m, "scratchpad/old.json", 100, 8*day)
	pointed := put(t, m, "scratchpad/pointed.json", 100, 9*day)
	newOut := put(t, m, "scratchpad/new.json", 100, day)
	padFile := put(t, m, "pad/pad.md", 50, 30*day)
	tmpOld := put(t, m, "scratchpad/.x.json.tmp-1", 10, 2*time.Minute)
	tmpNew := put(t, m, "scratchpad/.y.json.tmp-2", 10, time.Second)
	// A finished run, a live one and a recent one.
	put(t, m, "done/iteration-0/scratchpad/a.json", 100, 40*day)
	put(t, m, "done/artifacts/report.md", 100, 40*day)
	put(t, m, "done/pad/pad.md", 100, 35*day)
	liveArt := put(t, m, "live/artifacts/report.md", 100, 40*day)
	liveOld := put(t, m, "live/iteration-1/scratchpad/b.json", 100, 40*day)
	recent := put(t, m, "recent/artifacts/report.md", 100, 40*day)
	put(t, m, "recent/pad/pad.md", 100, day)
	usage := put(t, m, "usage.jsonl", 300, 0)
	put(t, m, "usage.jsonl.1", 200, day)
	put(t, m, "usage.jsonl.2", 150, 2*day)
	put(t, m, "usage.jsonl.5", 50, 5*day)

	g := guard{files: map[string]bool{pointed: true, liveArt: true}, runs: map[string]bool{filepath.Join(m, "live"): true}}
	p := Policy{MaxAge: 7 * day, RunsMaxAge: 30 * day, UsageMaxBytes: 256, UsageKeep: 2}
	opts := Options{Policy: p, Guard: g, Now: func() time.Time { return now }, DryRun: true}
	rep, err := Sweep(context.Background(), m, opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range rep.Plan.Actions {
		rel, _ := filepath.Rel(m, a.Path)
		got = append(got, a.Reason+" "+filepath.ToSlash(rel))
	}
	want := []string{
		"runs_max_age done",
		"leftover scratchpad/.x.json.tmp-1",
		"max_age live/iteration-1/scratchpad/b.json", // a live run's old outputs go; its artifacts stay
		"max_age scratchpad/old.json",
		"rotate usage.jsonl",
		"usage_keep usage.jsonl.5",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("plan:\n got %q\nwant %q", got, want)
	}
	if !exists(oldOut) {
		t.Fatal("dry run removed a file")
	}

	opts.DryRun = false
	rep, err = Sweep(context.Background(), m, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) > 0 || rep.Stopped {
		t.Fatalf("errors %v stopped %v", rep.Errors, rep.Stopped)
	}
	for _, p := range []string{oldOut, tmpOld, liveOld, filepath.Join(m, "done"), filepath.Join(m, "usage.jsonl.5"), usage} {
		if exists(p) {
			t.Errorf("%s still there", p)
		}
	}
	for _, p := range []string{pointed, newOut, padFile, tmpNew, liveArt, recent, usage + ".1", usage + ".2"} {
		if !exists(p) {
			t.Errorf("%s removed", p)
		}
	}
	if b, _ := os.ReadFile(usage + ".1"); len(b) != 300 {
		t.Errorf("usage.jsonl.1 has %d bytes, want the rotated 300", len(b))
	}
	if b, _ := os.ReadFile(usage + ".2"); len(b) != 200 {
		t.Errorf("usage.jsonl.2 has %d bytes, want the former .1 (200)", len(b))
	}
	if exists(filepath.Join(m, layout.LockFile)) {
		t.Error("lock left behind")
	}
	// Nothing left in the trash.
	ents, _ := os.ReadDir(m)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), layout.TrashPrefix) {
			t.Errorf("trash left: %s", e.Name())
		}
	}
}

func TestMaxBytesOldestFirst(t *testing.T) {
	m := t.TempDir()
	a := put(t, m, "scratchpad/a.json", 400, 5*time.Hour)
	b := put(t, m, "scratchpad/b.json", 400, 4*time.Hour)
	c := put(t, m, "r/iteration-0/scratchpad/c.json", 400, 3*time.Hour)
	d := put(t, m, "scratchpad/d.json", 400, 2*time.Hour)
	put(t, m, "pad/pad.md", 300, 10*time.Hour)
	g := guard{files: map[string]bool{a: true}}
	inv, err := Scan(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	plan := Plan(inv, Policy{MaxBytes: 1200}, g, now)
	var got []string
	for _, x := range plan.Actions {
		got = append(got, x.Path)
	}
	// 1900 bytes: a is protected, so b then c go (1100 left).
	if !slices.Equal(got, []string{b, c}) || plan.Over != 0 {
		t.Fatalf("got %v over %d", got, plan.Over)
	}
	plan = Plan(inv, Policy{MaxBytes: 100}, g, now)
	if len(plan.Actions) != 3 || plan.Over != 1900-1200-100 {
		t.Fatalf("got %d actions, over %d", len(plan.Actions), plan.Over)
	}
	_ = d
}

func TestExecuteRechecks(t *testing.T) {
	m := t.TempDir()
	old := put(t, m, "scratchpad/old.json", 10, 30*24*time.Hour)
	touched := put(t, m, "scratchpad/touched.json", 10, 30*24*time.Hour)
	inv, _ := Scan(context.Background(), m)
	p := Policy{MaxAge: time.Hour}
	plan := Plan(inv, p, nil, now)
	if len(plan.Actions) != 2 {
		t.Fatalf("%d actions", len(plan.Actions))
	}
	// Pointed to again after the scan (divert touches a reused file), and
	// one newly protected.
	if err := os.Chtimes(touched, now, now); err != nil {
		t.Fatal(err)
	}
	rep := Execute(context.Background(), m, plan, p, guard{files: map[string]bool{old: true}})
	if rep.Skipped != 2 || !exists(old) || !exists(touched) {
		t.Fatalf("skipped %d, old %v touched %v", rep.Skipped, exists(old), exists(touched))
	}
}

func TestBusy(t *testing.T) {
	m := t.TempDir()
	unlock, err := lock(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Sweep(context.Background(), m, Options{}); err != ErrBusy {
		t.Fatalf("second sweep: %v, want ErrBusy", err)
	}
	unlock()
	if _, err := Sweep(context.Background(), m, Options{}); err != nil {
		t.Fatal(err)
	}
}

func TestBudgetStops(t *testing.T) {
	m := t.TempDir()
	for i := range 3000 {
		put(t, m, "scratchpad/f"+strconv.Itoa(i)+".json", 1, 48*time.Hour)
	}
	rep, err := Sweep(context.Background(), m, Options{Policy: Policy{MaxAge: time.Hour}, Budget: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Stopped {
		t.Fatal("a sweep past its budget did not stop")
	}
}

// TestOwnersLayout: with bearer tokens every owner's layout sits under
// owners/{owner}/ and is swept as a layout of its own; "owners" and an
// agent's own pad folder are never taken for a run.
func TestOwnersLayout(t *testing.T) {
	m := t.TempDir()
	day := 24 * time.Hour
	aliceOld := put(t, m, "owners/alice/scratchpad/old.json", 100, 8*day)
	aliceNew := put(t, m, "owners/alice/scratchpad/new.json", 100, day)
	bobRun := put(t, m, "owners/bob/done/artifacts/r.md", 100, 40*day)
	bobPad := put(t, m, "owners/bob/agents/b1/pad/pad.md", 100, 40*day)
	ownPad := put(t, m, "agents/w1/pad/pad.md", 100, 40*day)
	opts := Options{Policy: Policy{MaxAge: 7 * day, RunsMaxAge: 30 * day}, Guard: guard{}, Now: func() time.Time { return now }}
	rep, err := Sweep(context.Background(), m, opts)
	if err != nil || len(rep.Errors) > 0 {
		t.Fatalf("sweep: %v %v", err, rep.Errors)
	}
	for _, p := range []string{aliceOld, bobRun} {
		if exists(p) {
			t.Errorf("%s still there", p)
		}
	}
	for _, p := range []string{aliceNew, bobPad, ownPad} {
		if !exists(p) {
			t.Errorf("%s removed", p)
		}
	}
}
