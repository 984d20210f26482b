// Package state keeps what outlives a request: stored outputs, budgets
// and usage, the registry of live agents and runs, quotas, 2025 sessions,
// OAuth tokens. Everything else asks a [Store] and keeps no map of its own
// for these, so that one process and many replicas behave the same.
//
// # Basics
//
// Two implementations of one interface:
//
//   - [Local] (the default, embedded): memory and the files under
//     memory_dir, for one process. What it does is what the server did
//     before replica mode existed.
//   - [Redis] ([cluster] redis_url): every replica behind a load balancer
//     shares one Redis, so any replica can answer any request. Stored
//     outputs are written to Redis in chunks and read through a bounded
//     local cache in memory_dir, so exploration reads local files after
//     the first touch.
//
// [Open] picks one from the config. Every key name comes from package
// layout ([layout.ClusterKey]).
//
// Leases ([Leases]) are how replicas share what is live: a lease a
// replica renews ([Leases.Lease], [Leases.LeaseAll]) and that expires
// when it dies; a bounded claim ([Leases.Claim]) for counts; a claim by
// size ([Leases.ClaimSize]) for bytes. Channels ([Sessions.Subscribe])
// carry messages between replicas; a [Redis] store serves all its
// subscriptions on one connection.
//
// # Caveats
//
// A call that needs Redis while it is unreachable fails with an error
// wrapping [ErrUnavailable] that names [cluster] redis_url; nothing is
// half-written (multi-key writes are scripts or MULTI), and the next call
// tries again.
package state
