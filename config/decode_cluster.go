package config

import "time"

// Cluster is [cluster]: replica mode. With RedisURL set, everything that
// outlives a request (stored outputs, budgets, usage, the registry of live
// agents and runs, quotas, 2025 sessions, OAuth tokens) is kept on that
// Redis (package state), so any replica behind a load balancer can answer
// any request. Without it nothing changes: files, one process.
type Cluster struct {
	// RedisURL is redis_url (redis:// or rediss://); "" means replica mode
	// is off.
	RedisURL string
	// Prefix starts every key this section writes ("prefix"; default
	// [layout.DefaultClusterPrefix]).
	Prefix string
	// CacheMB bounds the local cache of stored outputs read from Redis,
	// in memory_dir ("cache_mb"; default 1024).
	CacheMB int
	// Lease is how long a replica's claim on a live agent, run or
	// session lasts without renewal ("lease"; default 30s): a replica that
	// dies loses its claims this long after.
	Lease time.Duration
	// StateKey seals the requestState handed to 2026-07-28 clients
	// ("state_key", at least 32 bytes; {{ env.NAME }} is the way to give
	// it): the same on every replica, so that a retry any replica gets
	// opens. "" means a key the first replica makes and keeps on the
	// cluster's Redis.
	StateKey string
	// PreviousStateKeys still open states ("previous_state_keys"): a key
	// being rotated out, so that calls in flight do not break.
	PreviousStateKeys []string
}

// MinStateKey is the shortest [Cluster].StateKey accepted, in bytes.
const MinStateKey = 32

// Enabled reports whether replica mode is on.
func (c Cluster) Enabled() bool { return c.RedisURL != "" }

// Cluster defaults.
const (
	DefaultClusterCacheMB = 1024
	DefaultClusterLease   = 30 * time.Second
)

func (d *decoder) cluster(p keyPath, v any, c *Cluster) {
	m, ok := d.table(p, v)
	if !ok {
		return
	}
	d.checkKeys(p, m, "redis_url", "prefix", "cache_mb", "lease", "state_key", "previous_state_keys")
	if v, ok := m["redis_url"]; ok {
		c.RedisURL, _ = d.redisURL(p.key("redis_url"), v)
	} else {
		d.fail(p, "redis_url is required in [cluster]")
	}
	if v, ok := m["prefix"]; ok {
		if s, ok := d.redisPrefix(p.key("prefix"), v); ok {
			c.Prefix = s
		}
	}
	if v, ok := m["cache_mb"]; ok {
		if n, ok := d.integer(p.key("cache_mb"), v, 16, 1<<20); ok {
			c.CacheMB = n
		}
	}
	if v, ok := m["state_key"]; ok {
		if s, ok := d.str(p.key("state_key"), v); ok {
			if len(s) < MinStateKey {
				d.fail(p.key("state_key"), "at least %d bytes (e.g. the output of: openssl rand -base64 33)", MinStateKey)
			} else {
				c.StateKey = s
			}
		}
	}
	if v, ok := m["previous_state_keys"]; ok {
		if keys, ok := d.strings(p.key("previous_state_keys"), v); ok {
			for i, k := range keys {
				if len(k) < MinStateKey {
					d.fail(p.key("previous_state_keys").index(i), "at least %d bytes", MinStateKey)
					return
				}
			}
			if _, set := m["state_key"]; !set && len(keys) > 0 {
				d.fail(p.key("previous_state_keys"), "needs state_key: the previous keys only open states, the current one seals them")
				return
			}
			c.PreviousStateKeys = keys
		}
	}
	if v, ok := m["lease"]; ok {
		if l, ok := d.durationUpTo(p.key("lease"), v, false, 10*time.Minute); ok {
			if l < 2*time.Second {
				d.fail(p.key("lease"), "at least 2s")
			} else {
				c.Lease = l
			}
		}
	}
}
