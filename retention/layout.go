package retention

import (
	"os"
	"path/filepath"
	"strings"
)

// Kinds of stored files, as [Classify] names them.
const (
	KindOutput   = "outputs"   // diverted tool outputs (scratchpad/)
	KindArtifact = "artifacts" // run artifacts
	KindPad      = "pad"       // working memory (pad.md, entries.jsonl, .history/)
	KindUsage    = "usage"     // usage.jsonl and its rotations
	KindTemp     = "temp"      // leftovers of interrupted writes
	KindTrash    = "trash"     // runs a sweep was removing
	KindOther    = "other"     // anything else
)

// Kinds lists every kind in report order.
var Kinds = []string{KindOutput, KindArtifact, KindPad, KindUsage, KindTemp, KindTrash, KindOther}

// UsageFile is the usage log in memory_dir; rotations are UsageFile.1 (the
// newest) to UsageFile.N.
const UsageFile = "usage.jsonl"

// TrashPrefix starts the name of a run being removed.
const TrashPrefix = ".trash-"

// lockFile is the sweep's lock in memory_dir: one sweep at a time, even
// across processes sharing the directory.
const lockFile = ".sweep.lock"

// IsTemp reports whether a file name is a temporary file of an atomic
// write (divert: ".NAME.tmp-*", pad and artifacts: ".tmp-*").
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && (strings.HasPrefix(name, ".tmp-") || strings.Contains(name, ".tmp-"))
}

// Class is where a file sits in the layout.
type Class struct {
	Kind string
	// Run is the run directory (absolute) a file belongs to; "" outside
	// runs.
	Run string
}

// Classify names the kind of the file at rel (slash or OS separated,
// relative to scope, a memory_dir or one owner's directory in it):
//
//	scratchpad/…                          outputs
//	pad/…                                 pad
//	usage.jsonl, usage.jsonl.N            usage
//	{run}/iteration-N/scratchpad/…        outputs of run
//	{run}/artifacts/…                     artifacts of run
//	{run}/pad/…                           pad of run
//	.trash-…/…                            trash
//	any ".…tmp-…" file                    temp (of run, when in one)
func Classify(scope, rel string) Class {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	base := parts[len(parts)-1]
	var c Class
	switch {
	case strings.HasPrefix(parts[0], TrashPrefix):
		return Class{Kind: KindTrash}
	case len(parts) == 1:
		if base == UsageFile || strings.HasPrefix(base, UsageFile+".") && !IsTemp(base) {
			return Class{Kind: KindUsage}
		}
		c.Kind = KindOther
	case parts[0] == "scratchpad":
		c.Kind = KindOutput
	case parts[0] == "pad":
		c.Kind = KindPad
	case parts[0] == AgentsDir:
		// agents/{name}/pad/…: an agent's own pad (tenancy's layout).
		c.Kind = KindOther
		if len(parts) >= 4 && parts[2] == "pad" {
			c.Kind = KindPad
		}
	case strings.HasPrefix(parts[0], "."):
		c.Kind = KindOther // the sweep's lock, a tenancy index…
	default:
		c.Run = filepath.Join(scope, parts[0])
		switch {
		case len(parts) >= 4 && strings.HasPrefix(parts[1], "iteration-") && parts[2] == "scratchpad":
			c.Kind = KindOutput
		case len(parts) >= 3 && parts[1] == "artifacts":
			c.Kind = KindArtifact
		case len(parts) >= 3 && parts[1] == "pad":
			c.Kind = KindPad
		default:
			c.Kind = KindOther
		}
	}
	if IsTemp(base) {
		c.Kind = KindTemp
	}
	return c
}

// OwnersDir and AgentsDir are the folders of the layout that are neither
// runs nor stored outputs: owners/{owner}/ holds one owner's whole layout
// (bearer tokens), agents/{name}/pad/ an agent's own pad. Run ids cannot
// take these names (package agents refuses them).
const (
	OwnersDir = "owners"
	AgentsDir = "agents"
)

// scopes returns the directories that each hold one storage layout:
// memory_dir itself and, with bearer tokens, each owners/{owner}/ in it
// (walked as a scope of its own, never as a run of memory_dir).
func scopes(memoryDir string) []string {
	out := []string{memoryDir}
	entries, err := os.ReadDir(filepath.Join(memoryDir, OwnersDir))
	if err != nil {
		return out
	}
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, filepath.Join(memoryDir, OwnersDir, e.Name()))
		}
	}
	return out
}
