package layout

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
