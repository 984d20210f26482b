// Package pad is the agent's working memory: a scratchpad it reads every
// turn and patches, that a person can open and fix by hand, and that
// survives compaction, context resets and crashes.
//
// # Basics
//
// A pad is a directory, {memory_dir}/pad for one agent or
// {memory_dir}/{run_id}/pad when a run's agents share it, or a set of keys
// on a Redis server when the agents run on several hosts (see Backends).
// [Open] returns a [*Pad] for a directory, [OpenIn] for a folder of
// memory_dir's tree (package memdir); nothing is created until the first
// write. Every file of a pad (the document, the ledger, the locks, the
// notice, .history, .snapshots, keys.json, quarantined copies) is reached
// through an os.Root, so a symbolic link planted on the way or at a
// file's name that leads out of memory_dir (or out of the pad's folder)
// fails the call with an error wrapping [memdir.ErrOutside]
// ("outside_memory_dir" for the model) and nothing is written there.
// Folders are created 0700 and files 0600; a pad an older version made
// 0755, with 0644 locks and ledger, is tightened by its next write.
//
//	p, err := pad.Open(dir, pad.Options{}) // six default sections
//	res, err := p.Update([]pad.Patch{
//		{Section: "Plan", Op: pad.OpAppend, Content: "Reproduce the bug"},
//		{Section: "Plan", Op: pad.OpCheck, Content: "1"},
//	})
//	fmt.Print(res.Diff, res.Warnings)
//	_, err = p.Append("the API pages at 100 items (docs/api.md)", []string{"api"})
//	text, err := p.Read(nil) // what read_scratchpad returns
//
// The pad file, pad.md, is plain Markdown: one "## Name" heading per
// declared [Section], in order, empty sections included so its shape and
// diffs stay stable. Each section has a cap in characters and a purpose;
// [Pad.Read] shows both to the model as a contract. [Pad.Update] applies
// [Patch] operations (append, replace, check, remove, clear) all or
// nothing: an unknown section or op, or a check without a number, is a
// [*PatchError] and nothing changes. An empty patch list writes nothing.
// Going over a cap is never truncated: the text is kept and a warning
// tells the model to condense.
//
// Findings go to the ledger, entries.jsonl, through [Pad.Append]: one JSON
// line per entry, written with a single O_APPEND write under an flock on
// a sidecar file, so any number of goroutines and processes can append at
// once and every entry lands whole. [Options.EntryTTL] hides old entries;
// the file keeps them until a lazy compaction ([Pad.Compact]).
//
// [Pad.Clear] (update_scratchpad {"clear": true}) empties the pad and
// keeps it: the empty document is saved as a version, and a clear marker
// appended to the ledger hides every entry before it without deleting
// any. [Pad.Restore] of a version saved before a clear appends an
// "unclear" marker, so the hidden entries come back with the document.
// Markers are ledger items with "mark" set and no note; a reader older
// than them counts them as unreadable lines.
//
// With [Options.Format] "json" the pad is structured: pad.json holds one
// object, [Pad.Merge] deep-merges updates into it (objects merge, arrays
// and scalars replace, null deletes; __proto__, constructor and prototype
// are stripped at every depth; depth is capped) and the result must pass
// [Options.Schema], or nothing changes.
//
// Beside the sections (or the state) a pad holds keyed values: any JSON
// under a name, namespaced with colons ("task1:probe:cursor"), with tags
// and an optional fixed or sliding TTL judged by [Options.Now]. [Pad.Apply]
// applies section [Patch]es and [KeyOp]s (set, delete) together, all or
// nothing; [Pad.Keys] reads them by name, namespace and tag, never
// returning an expired key; every write sweeps expired keys.
// [Pad.Snapshot] saves the whole pad under a name and
// [Pad.RestoreSnapshot] brings it back, recording the restore in history
// and the ledger. [Pad.ReadWith] renders sections, keys and ledger as
// markdown, xml, json or kv within a token bound.
//
// [Pad.Memory] is the pad's memory files: package memory's /memories (the
// memory tool models are trained on) stored beside the pad, under its
// lock, with a version history per file that [MemoryCommand] lists,
// diffs and restores (`scratchpad-mcp pad history --memory PATH`).
//
// [Tools] offers a pad to models as read_scratchpad, update_scratchpad and
// append_scratchpad (no identity arguments: the server picks the pad from
// the session through a [PadFunc]), [Resource] as the resource
// scratchpad://pad and [Prompt] as the prompt "scratchpad" — neutral
// [tool] definitions that the server registers on its MCP library. A
// [Watcher] tracks the resource's subscribers and tells them when their
// pad changes. [Command] backs `scratchpad-mcp pad`.
//
// # Backends
//
// Both backends give the same behaviour: every method, tool and CLI
// command works the same, and the tests run the core behaviours against
// both. What differs is where the pieces live and what coordinates
// writers.
//
//	piece        directory (Open)              Redis (Redis.Open), under <prefix>:{<id>}:
//	document     pad.md / pad.json             doc         string
//	history      .history/<unix ns>.md         history     list, newest first, "<20-digit unix ns>\n" + document
//	ledger       entries.jsonl                 ledger      list, one JSON entry per item
//	notices      .notice                       notice      list
//	lock         flock(2) on .pad.lock         lock        SET NX PX <lease> with a random token
//	quarantine   pad.md.broken-<unix>          broken:<unix>  (RENAMEd)
//	change stamp mtime and size of the files   version     counter, plus the document's hash
//	             and keys.json's rev
//	keys         keys.json                     keys        string, one JSON object
//	keys history .history/<unix ns>.keys.json  keys:history  list, like history
//	snapshots    .snapshots/<name>.json        snapshots   hash, name → JSON snapshot
//	memory files memories/<path>               memory      hash, path → content
//	  accessed   their mtime                   memory:atime  hash, path → Unix ms
//	  versions   .history/memories/<sha>/<rev> memory:history:<path>  list, newest first
//	  deleted    .history/memories/<sha>/.deleted  memory:deleted  sorted set, path by Unix ms
//
// [NewRedis] makes one client for a server ([RedisOptions]: URL, key
// prefix, lock lease and wait, per-call timeout); [Redis.Open] opens pad id
// on it. The server uses the ids "run:<run id>" (scope "run") and
// "agent:<name>". Every key of a pad carries {<id>} as its hash tag, so a
// Redis Cluster keeps them on one slot and one script can touch them all.
//
//	r, err := pad.NewRedis(pad.RedisOptions{URL: "redis://:secret@cache:6379/0"})
//	p, err := r.Open("run:r1", pad.Options{})
//
// On Redis a read-modify-write takes the lock with SET NX PX (retrying
// with backoff up to [RedisOptions.LockWait], then [ErrLocked]), reads,
// and writes the document, its history versions (LPUSH and LTRIM) and the
// version counter in one Lua script that first checks the lock still
// holds its token: a writer whose lease ran out writes nothing and gets
// [ErrLockLost] (fencing). The lock is released by a compare-and-delete
// script. Appends are one script (RPUSH plus the version bump) without a
// lock, so any number of hosts append at once and each entry lands whole.
// Compaction is a script that drops the expired head of the ledger only
// if it is still what the compactor read, so an append made meanwhile (at
// the tail) is never lost. A document that does not parse (set by hand
// with redis-cli) is RENAMEd to broken:<unix> and handled as a broken file
// is, with the same note.
//
// # Durability
//
// On a directory, every save holds the pad lock (.pad.lock) across read-modify-write,
// writes a temp file in the same directory, fsyncs it, renames it over the
// pad file and fsyncs the directory (memdir's atomic write, the one every
// writer under memory_dir uses). Each saved version, and a hand edit
// found at save time, goes to .history/ ([Options.History] versions, 20 by
// default); [Pad.Diff] and [Pad.Restore] work on it. Nothing is cached
// between calls, so a hand edit is seen on the next one.
//
// A pad file that no longer parses (unknown or duplicate heading, text
// before the first heading, invalid UTF-8, broken JSON) is moved to
// pad.md.broken-<unix time>, the newest version in history that parses is
// restored, and the next read starts with a note saying so. The pad is
// never reset to empty: with no good version, the text under known
// headings is kept and the rest stays in the broken file.
//
// On Redis each write is a single script, so a crash leaves either the
// old state or the new one; how long a write survives a Redis restart is
// the server's persistence setting (RDB, AOF), not this package's.
//
// # Caveats
//
//   - Redis lock lease: [RedisOptions.LockLease], 15s by default, far
//     longer than a normal read-modify-write (a few round trips). A writer
//     stalled past it (a GC pause, a stopped VM) is refused by the fenced
//     commit and gets [ErrLockLost] ("pad_busy" for the model): nothing is
//     written, and retrying is safe. A writer that died holds the lock
//     until the lease ends, so others wait up to that long
//     ([RedisOptions.LockWait], 30s by default, bounds the wait).
//   - Redis down: every call fails with an error naming the pad and the
//     operation (pad redis://host:6379/0 run "r1": lock: dial tcp …:
//     connection refused), never a panic, and nothing is half-written:
//     each write is one script. Calls are not retried, because a retried
//     append whose reply was lost would land twice; an error therefore
//     does not always mean the append did not land. The next call dials
//     again, so the pad works as soon as Redis is back. Reads do not fall
//     back to a stale copy.
//   - Redis URLs may carry a password; [Redis.String], [Pad.Location],
//     [Pad.Path] and every error show it as xxxxx.
//   - Redis compaction removes the expired head of the ledger. An entry
//     stamped earlier than one before it (a host whose clock is behind)
//     stays until the entries ahead of it expire; reads hide it
//     meanwhile. Quarantined documents and keyed values (broken:<unix>,
//     keys:broken:<unix>) are kept, like broken files, until someone
//     deletes them or, with a TTL, until the pad expires.
//   - File locks are flock(2): cross-process safety needs a local file system
//     on a unix host. On other systems they exclude goroutines only, and
//     NFS may not honour them.
//   - Only a level-2 heading ("## ") opens a section, even inside a code
//     fence; replace refuses content with such a line.
//   - check ticks the item by the number written in the file, so a hand
//     renumbering is respected.
//   - Subscribers hear of changes made through this server's tools at
//     once, and of changes made elsewhere (hand edits, the CLI, other
//     server processes or hosts sharing a run's pad) within a poll
//     interval (2s), detected by file mtime and size, or on Redis by the
//     version counter (bumped by every write and append) and the
//     document's hash and ledger length (which catch redis-cli edits).
//   - Only subscriptions the server passes to [Watcher.Subscribe] are
//     tracked; with the mcp-go server, sessions that opt in through the
//     2026-07-28 subscriptions/listen stream are not.
//   - [Open] removes temp files left by a crash, under the lock, so even
//     `pad show` on an existing directory may tidy it. [Redis.Open] does
//     no I/O: a Redis pad has no leftovers to tidy.
package pad
