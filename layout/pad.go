package layout

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
)

// Names inside a pad's folder ([Tree.Pad]): the pad package builds no
// name of its own, so retention, tools and tests that look into a pad
// agree with it.
const (
	PadMarkdownFile   = "pad.md"        // the document of a Markdown pad
	PadJSONFile       = "pad.json"      // the document of a structured pad
	PadLockFile       = ".pad.lock"     // the lock every update takes
	PadNoticeFile     = ".notice"       // a quarantine's notice
	PadHistoryDir     = ".history"      // earlier versions of the document
	PadSnapshotDir    = ".snapshots"    // named snapshots
	PadKeysFile       = "keys.json"     // the keyed values
	PadKeysHistoryExt = ".keys.json"    // the keys beside a history version or snapshot
	PadLedgerFile     = "entries.jsonl" // the findings ledger
	PadLedgerLockFile = ".entries.lock" // the lock of a ledger compaction
)

// Names of a pad's memory files (package memory's /memories, kept in the
// pad's folder so they share its lock, its owner and its life): the files
// themselves under [PadMemoriesDir], as the model names them; each file's
// versions under [PadMemoriesHistoryDir], in a folder named by
// [PadMemoryHistoryName] of the file's path.
const (
	PadMemoriesDir        = "memories"          // the memory files, in their folders
	PadMemoriesHistoryDir = ".history/memories" // one folder of versions per file
	PadMemoryPathFile     = ".path"             // in a file's version folder: the file's path, for a person
	PadMemoryDeletedFile  = ".deleted"          // in a file's version folder: the file was deleted (its mtime: when)
)

// PadMemoryHistoryName is the folder, in [PadMemoriesHistoryDir], of the
// versions of the memory file at path (slash-separated, relative to
// /memories): 32 hex digits of its SHA-256, so that a path of any length
// or character gives one short, flat name. A version in it is named
// [PadMemoryVersionName] of its revision.
func PadMemoryHistoryName(path string) string {
	sum := sha256.Sum256([]byte(path))
	return hex.EncodeToString(sum[:16])
}

// PadMemoryVersionName is the name of revision rev of a memory file in its
// version folder: 20 digits, so that names sort as revisions do.
func PadMemoryVersionName(rev int64) string { return fmt.Sprintf("%020d", rev) }

// ParsePadMemoryVersionName is rev of a [PadMemoryVersionName]; ok is
// false for any other name (the folder's .path, a temporary file).
func ParsePadMemoryVersionName(name string) (rev int64, ok bool) {
	if len(name) != 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(name, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}
