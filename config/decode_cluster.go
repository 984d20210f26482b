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
}

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
	d.checkKeys(p, m, "redis_url", "prefix", "cache_mb", "lease")
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
