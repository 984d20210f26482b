package state

import "github.com/scratchpad-mcp/scratchpad-mcp/config"

// Open returns the store the config asks for: a [Redis] store with
// [cluster] redis_url, a [Local] one otherwise. It does no I/O: call
// [Store.Ready] to check that Redis answers.
func Open(c config.Cluster, memoryDir string) (Store, error) {
	if !c.Enabled() {
		return NewLocal(LocalOptions{MemoryDir: memoryDir}), nil
	}
	return NewRedis(RedisOptions{URL: c.RedisURL, Prefix: c.Prefix, MemoryDir: memoryDir,
		CacheBytes: int64(c.CacheMB) << 20, Lease: c.Lease})
}
