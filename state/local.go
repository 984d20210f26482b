package state

import (
	"context"
)

// Local is the [Store] of one process: memory, and files under
// memory_dir for what must survive a restart. The zero value is not
// usable; call [NewLocal].
type Local struct {
	opts LocalOptions

	// Each concern keeps its fields in its own file's struct, embedded
	// here (counters.go, leases.go, sessions.go, locks.go, values.go); blobs are
	// files and need none.
	localCounters
	localLeases
	localSizes
	localSessions
	localLocks
	localValues
}

// LocalOptions configures [NewLocal]. The zero value is usable.
type LocalOptions struct {
	// MemoryDir is memory_dir; "" keeps nothing on disk.
	MemoryDir string
}

// NewLocal returns a store of this process alone.
func NewLocal(opts LocalOptions) *Local {
	l := &Local{opts: opts}
	l.initBlobs()
	l.initCounters()
	l.initLeases()
	l.initSessions()
	l.initLocks()
	l.initValues()
	return l
}

// Replicated is false: nothing else shares a Local.
func (*Local) Replicated() bool { return false }

// Ready is always nil.
func (*Local) Ready(context.Context) error { return nil }

// Close is a no-op.
func (l *Local) Close() error { return nil }
