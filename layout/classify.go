package layout

import (
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
)

// Kinds of stored files, as [Classify] names them.
const (
	KindOutput   = "outputs"   // stored tool outputs (scratchpad/)
	KindArtifact = "artifacts" // run artifacts
	KindPad      = "pad"       // working memory (pad.md, entries.jsonl, .history/)
	KindUsage    = "usage"     // usage.jsonl and its rotations
	KindTemp     = "temp"      // leftovers of interrupted writes
	KindTrash    = "trash"     // runs a sweep was removing
	KindOther    = "other"     // anything else
)

// Kinds lists every kind in report order.
var Kinds = []string{KindOutput, KindArtifact, KindPad, KindUsage, KindTemp, KindTrash, KindOther}

// TrashPrefix starts the name of a run a sweep is removing: the run is
// renamed to [TrashName] in one rename, then emptied.
const TrashPrefix = ".trash-"

// TrashName is the name run's folder is renamed to while a sweep removes
// it: ".trash-{run}-{random}", hidden, in the same folder.
func TrashName(run, random string) string { return TrashPrefix + run + "-" + random }

// LockFile is a sweep's lock in memory_dir.
const LockFile = ".sweep.lock"

// Class is where a file sits in a tree.
type Class struct {
	Kind string
	// Run is the run's folder (as [Tree.Run] of the scope gives it) a file
	// belongs to; "" outside runs.
	Run string
}

// Classify names the kind of the file at rel (slash or OS separated,
// relative to scope, the base of a [Tree]):
//
//	scratchpad/…                          outputs
//	pad/…, agents/{agent}/pad/…           pad
//	usage.jsonl, usage.jsonl.N            usage
//	{run}/iteration-N/scratchpad/…        outputs of run
//	{run}/artifacts/…                     artifacts of run
//	{run}/pad/…                           pad of run
//	.trash-…/…                            trash
//	any temporary file ([IsTemp])         temp (of run, when in one)
func Classify(scope, rel string) Class {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	base := parts[len(parts)-1]
	var c Class
	switch {
	case strings.HasPrefix(parts[0], TrashPrefix):
		return Class{Kind: KindTrash}
	case len(parts) == 1:
		if base == UsageFile || IsUsageRotation(base) {
			return Class{Kind: KindUsage}
		}
		c.Kind = KindOther
	case parts[0] == ScratchpadDir:
		c.Kind = KindOutput
	case parts[0] == PadDir:
		c.Kind = KindPad
	case parts[0] == AgentsDir:
		c.Kind = KindOther
		if len(parts) >= 4 && parts[2] == PadDir {
			c.Kind = KindPad
		}
	case parts[0] == OwnersDir || strings.HasPrefix(parts[0], "."):
		c.Kind = KindOther // the owners' trees (scopes of their own), the sweep's lock…
	default:
		c.Run = Tree{Base: scope}.Run(parts[0])
		switch {
		case len(parts) >= 4 && strings.HasPrefix(parts[1], IterationPrefix) && parts[2] == ScratchpadDir:
			c.Kind = KindOutput
		case len(parts) >= 3 && parts[1] == ArtifactsDir:
			c.Kind = KindArtifact
		case len(parts) >= 3 && parts[1] == PadDir:
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

// UsageRotation returns N of a rotation's name, usage.jsonl.N (N ≥ 1).
func UsageRotation(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, UsageFile+".")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

// IsUsageRotation reports whether name is usage.jsonl.N.
func IsUsageRotation(name string) bool {
	_, ok := UsageRotation(name)
	return ok
}

// UsageRotationName is the name of rotation n of usage.jsonl.
func UsageRotationName(n int) string { return UsageFile + "." + strconv.Itoa(n) }

// Scopes returns the trees in a memory_dir, as names in fsys (an fs.FS of
// memory_dir, such as its [os.Root]'s): "." and, with bearer tokens, each
// owners/{owner} in it (slash-separated). A sweep walks each as a tree of
// its own, and the owners/ folder never as a run. A symbolic link in
// owners/ is not a tree.
func Scopes(fsys fs.FS) []string {
	out := []string{"."}
	entries, err := fs.ReadDir(fsys, OwnersDir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, OwnersDir+"/"+e.Name())
		}
	}
	return out
}
