package state

import (
	"context"
	"errors"
)

// Store is what outlives a request. Each concern is an interface of its
// own, in a file of its own, implemented by both [Local] and [Redis].
type Store interface {
	Blobs
	Counters
	Leases
	Sessions
	Locks
	Values

	// Replicated reports whether other processes share this store
	// (true for [Redis]).
	Replicated() bool
	// Ready returns nil when the store can serve requests: always for
	// [Local]; Redis answering a PING for [Redis].
	Ready(ctx context.Context) error
	// Close releases connections and background work.
	Close() error
}

// ErrUnavailable is wrapped by every error of a [Redis] store that could
// not reach its server; the message names [cluster] redis_url.
var ErrUnavailable = errors.New("state: the shared store is unavailable")

// ErrBadTTL is returned for a ttl under one millisecond
// ([Leases.Lease], [Leases.Claim], [Locks.Lock], [Counters.Touch],
// [Counters.Once]; [Values.PutValue] but for 0, no expiry): Redis would
// drop the key at once, which is never what a caller means.
var ErrBadTTL = errors.New("state: ttl must be at least 1ms")

var (
	_ Store = (*Local)(nil)
	_ Store = (*Redis)(nil)
)
