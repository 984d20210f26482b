package pad

import "time"

// store is where a pad lives: a directory ([fileStore]) or keys on a Redis
// server ([redisStore]). Pad holds the logic (parsing, patches, quarantine
// decisions, rendering) and asks its store only for the primitives below,
// so both backends give the same behaviour and guarantees.
//
// Methods that take a heldLock must be called with that lock held; a store
// that can lose its lock (Redis, on lease expiry) refuses to write then and
// returns an error wrapping [ErrLockLost].
type store interface {
	// location names where the pad lives: a directory, or a Redis URL
	// (password redacted) and key prefix. Pads with the same location are
	// the same pad.
	location() string
	// docPath names the pad document, for reports ([Report.File]).
	docPath() string
	// dir is the pad directory; "" when the pad is not a directory.
	dir() string

	// lock takes the pad's exclusive lock for one read-modify-write,
	// waiting a bounded time on backends that can (wrapping [ErrLocked]).
	lock() (heldLock, error)

	// readDoc returns the document as stored; ok is false when there is
	// none yet. Reads need no lock: writes replace the document whole.
	readDoc() (data []byte, ok bool, err error)
	// commit replaces the document with next, atomically. prev, when not
	// nil, is saved to history first (a hand edit found at save time);
	// pushNext saves next too. History is pruned to keep versions. On Redis
	// the whole commit is one fenced script.
	commit(lk heldLock, prev, next []byte, pushNext bool, keep int, now time.Time) error
	// quarantine moves the current document aside under a "broken" name
	// derived from now and returns that name and the bytes moved.
	quarantine(lk heldLock, now time.Time) (name string, raw []byte, err error)

	// history lists saved versions, newest first, at most limit of them
	// (0: all).
	history(limit int) ([]histItem, error)

	// addNotice queues a note for the next read. The caller holds the lock.
	addNotice(lk heldLock, note string) error
	// notices returns the queued notes; consume removes them atomically,
	// so each is shown once.
	notices(consume bool) ([]string, error)

	// appendEntry adds one entry to the ledger, atomically and whole, safe
	// from any number of goroutines, processes and hosts at once.
	appendEntry(e Entry) error
	// readLedger returns the entries in ledger order and the number of
	// stored items that did not decode.
	readLedger() ([]Entry, int, error)
	// compactLedger removes entries older than cutoff, and unreadable
	// ones, without losing an append made meanwhile; it returns how many
	// went.
	compactLedger(cutoff time.Time) (int, error)

	// stamp changes whenever the document or the ledger changes, from
	// any process or host; subscriptions poll it.
	stamp() (string, error)
	// cleanStale removes what a crashed writer may have left behind.
	cleanStale() error
}

// heldLock is a lock returned by [store.lock].
type heldLock interface{ unlock() }

// onceLock is a held lock of a store whose writes can have an unknown
// outcome (Redis): a write made under it with markOnce records its key
// with its commit, atomically, and a later appliedOnce says whether a
// write of that key landed. Files have no unknown outcome and do not
// implement it.
type onceLock interface {
	heldLock
	markOnce(key string)
	appliedOnce(key string) (bool, error)
}

// histItem is one saved version and how to read it.
type histItem struct {
	Version
	read func() ([]byte, error)
}

// versions strips the readers off history items.
func versions(items []histItem) []Version {
	out := make([]Version, len(items))
	for i, it := range items {
		out[i] = it.Version
	}
	return out
}
