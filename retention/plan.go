package retention

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// Policy is what a sweep keeps. Zero fields disable their rule.
type Policy struct {
	MaxAge        time.Duration // stored outputs older than this go
	RunsMaxAge    time.Duration // runs with nothing newer than this go, whole
	MaxBytes      int64         // memory_dir above this: oldest stored outputs go
	UsageMaxBytes int64         // usage.jsonl above this is rotated
	UsageKeep     int           // rotations kept (usage.jsonl.1 … .N); 0 means 1
	TempGrace     time.Duration // temporary files older than this are leftovers; 0 means DefaultTempGrace
}

// DefaultTempGrace is how old a temporary file must be to count as the
// leftover of a crash rather than a write in flight.
const DefaultTempGrace = time.Minute

// Guard tells a sweep what must stay. Paths are absolute. It is asked
// while planning and again right before each removal, so it must be safe
// for concurrent use.
type Guard interface {
	// Protected reports whether the file at path must stay: in a live
	// agent's pad, a live run's artifacts, or pointed to in a live session.
	Protected(path string) bool
	// LiveRun reports whether the run directory dir has a live agent.
	LiveRun(dir string) bool
}

// NoGuard protects nothing (gc with no server running).
type NoGuard struct{}

func (NoGuard) Protected(string) bool { return false }
func (NoGuard) LiveRun(string) bool   { return false }

// Reasons of an [Action].
const (
	ReasonAge    = "max_age"      // a stored output older than max_age
	ReasonRun    = "runs_max_age" // a finished run, whole
	ReasonSize   = "max_bytes"    // an old stored output, to get under max_bytes
	ReasonTemp   = "leftover"     // the temporary file of an interrupted write
	ReasonTrash  = "trash"        // the rest of a run a sweep was removing
	ReasonRotate = "rotate"       // usage.jsonl rotated; Bytes is the oldest rotation dropped
	ReasonUsage  = "usage_keep"   // a rotation beyond usage_keep
)

// Action is one removal (or rotation) of a plan.
type Action struct {
	Path    string // a file, or a run or trash directory
	Kind    string // of the file; layout.KindTrash for a directory in the trash, "run" for a run
	Reason  string
	Files   int   // files removed (a run's or trash directory's count)
	Bytes   int64 // bytes freed
	ModTime time.Time
}

// Result is a plan: the actions in order, what they free, and what stays
// over max_bytes when nothing more may go.
type Result struct {
	Actions []Action
	Files   int
	Bytes   int64
	Over    int64 // bytes still above max_bytes after the plan (0 if none)
	Total   int64 // bytes in memory_dir before the plan
	// Gone is what the plan removes, by the kind of each file.
	Gone map[string]Tally
}

// Tally counts files and bytes.
type Tally struct {
	Files int
	Bytes int64
}

func (r *Result) add(a Action) {
	r.Actions = append(r.Actions, a)
	r.Files += a.Files
	r.Bytes += a.Bytes
}

// Plan decides what a sweep at now removes from inv under p, keeping what
// g protects. It does no I/O beyond asking g.
func Plan(inv *Inventory, p Policy, g Guard, now time.Time) *Result {
	if g == nil {
		g = NoGuard{}
	}
	grace := p.TempGrace
	if grace == 0 {
		grace = DefaultTempGrace
	}
	res := &Result{}
	gone := make([]bool, len(inv.Files))

	// Runs: group, find the newest file of each.
	type run struct {
		newest time.Time
		files  []int
		bytes  int64
	}
	runs := map[string]*run{}
	var trash = map[string]*run{}
	for i, f := range inv.Files {
		res.Total += f.Size
		switch {
		case f.Kind == layout.KindTrash:
			dir := trashDir(f.Path)
			t := trash[dir]
			if t == nil {
				t = &run{}
				trash[dir] = t
			}
			t.files = append(t.files, i)
			t.bytes += f.Size
		case f.Run != "":
			r := runs[f.Run]
			if r == nil {
				r = &run{}
				runs[f.Run] = r
			}
			r.files = append(r.files, i)
			r.bytes += f.Size
			if f.ModTime.After(r.newest) {
				r.newest = f.ModTime
			}
		}
	}
	for _, dir := range sortedKeys(trash) {
		t := trash[dir]
		for _, i := range t.files {
			gone[i] = true
		}
		res.add(Action{Path: dir, Kind: layout.KindTrash, Reason: ReasonTrash, Files: len(t.files), Bytes: t.bytes})
	}
	if p.RunsMaxAge > 0 {
		for _, dir := range sortedKeys(runs) {
			r := runs[dir]
			if now.Sub(r.newest) <= p.RunsMaxAge || g.LiveRun(dir) {
				continue
			}
			for _, i := range r.files {
				gone[i] = true
			}
			res.add(Action{Path: dir, Kind: "run", Reason: ReasonRun, Files: len(r.files), Bytes: r.bytes, ModTime: r.newest})
		}
	}

	// Single files: leftovers, old outputs, usage rotations.
	var usage *File
	var rotations []int
	for i, f := range inv.Files {
		if gone[i] {
			continue
		}
		age := now.Sub(f.ModTime)
		switch f.Kind {
		case layout.KindTemp:
			if age > grace {
				gone[i] = true
				res.add(Action{Path: f.Path, Kind: f.Kind, Reason: ReasonTemp, Files: 1, Bytes: f.Size, ModTime: f.ModTime})
			}
		case layout.KindOutput:
			if p.MaxAge > 0 && age > p.MaxAge && !g.Protected(f.Path) {
				gone[i] = true
				res.add(Action{Path: f.Path, Kind: f.Kind, Reason: ReasonAge, Files: 1, Bytes: f.Size, ModTime: f.ModTime})
			}
		case layout.KindUsage:
			if filepath.Base(f.Path) == layout.UsageFile {
				usage = &inv.Files[i]
			} else if _, ok := rotation(f.Path); ok {
				rotations = append(rotations, i)
			}
		}
	}
	if p.UsageMaxBytes > 0 {
		keep := max(p.UsageKeep, 1)
		if usage != nil && usage.Size > p.UsageMaxBytes {
			// The oldest kept rotation is overwritten by the one before it.
			var dropped int64
			for _, i := range rotations {
				if n, _ := rotation(inv.Files[i].Path); n == keep {
					dropped = inv.Files[i].Size
					gone[i] = true
				}
			}
			res.add(Action{Path: usage.Path, Kind: layout.KindUsage, Reason: ReasonRotate, Files: 0, Bytes: dropped, ModTime: usage.ModTime})
		}
		for _, i := range rotations {
			f := inv.Files[i]
			if n, _ := rotation(f.Path); n > keep {
				gone[i] = true
				res.add(Action{Path: f.Path, Kind: layout.KindUsage, Reason: ReasonUsage, Files: 1, Bytes: f.Size, ModTime: f.ModTime})
			}
		}
	}

	// max_bytes: the oldest stored outputs go first.
	if p.MaxBytes > 0 {
		left := res.Total - res.Bytes
		if left > p.MaxBytes && inv.Complete {
			var cand []int
			for i, f := range inv.Files {
				if !gone[i] && f.Kind == layout.KindOutput {
					cand = append(cand, i)
				}
			}
			slices.SortFunc(cand, func(a, b int) int { return inv.Files[a].ModTime.Compare(inv.Files[b].ModTime) })
			for _, i := range cand {
				if left <= p.MaxBytes {
					break
				}
				f := inv.Files[i]
				if g.Protected(f.Path) {
					continue
				}
				gone[i] = true
				left -= f.Size
				res.add(Action{Path: f.Path, Kind: f.Kind, Reason: ReasonSize, Files: 1, Bytes: f.Size, ModTime: f.ModTime})
			}
		}
		if left > p.MaxBytes {
			res.Over = left - p.MaxBytes
		}
	}
	res.Gone = map[string]Tally{}
	for i, f := range inv.Files {
		if gone[i] {
			t := res.Gone[f.Kind]
			t.Files++
			t.Bytes += f.Size
			res.Gone[f.Kind] = t
		}
	}
	return res
}

// trashDir is the trash directory (a run being removed) that holds path.
func trashDir(path string) string {
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		if strings.HasPrefix(filepath.Base(d), layout.TrashPrefix) {
			return d
		}
		if parent := filepath.Dir(d); parent == d {
			return filepath.Dir(path)
		}
	}
}

// rotation returns N of usage.jsonl.N.
func rotation(path string) (int, bool) { return layout.UsageRotation(filepath.Base(path)) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
