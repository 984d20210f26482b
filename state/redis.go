package state

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/redisurl"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// Redis is the [Store] replicas share ([cluster] redis_url).
type Redis struct {
	client *redis.Client
	url    string // redacted
	opts   RedisOptions

	redisBlobs
	redisLeases
	redisLocks
	redisSubs

	closeOnce sync.Once
	stop      chan struct{}
}

// RedisOptions configures [NewRedis]. Only URL is required.
type RedisOptions struct {
	// URL is [cluster] redis_url.
	URL string
	// Prefix starts every key ([cluster] prefix); "" means
	// [layout.DefaultClusterPrefix].
	Prefix string
	// MemoryDir is memory_dir: the local cache of stored outputs lives
	// there, at the paths the files would have had.
	MemoryDir string
	// CacheBytes bounds the local cache; 0 means 1 GiB.
	CacheBytes int64
	// Lease is how long a claim (live agent, run, session) lasts without
	// renewal; 0 means 30s.
	Lease time.Duration
	// Timeout bounds each Redis command; 0 means 5s.
	Timeout time.Duration
	// Replica names this process in leases; "" means host:pid.
	Replica string
}

// NewRedis checks o and returns a store on the server; it does no I/O
// (see [Redis.Ready]). A bad URL is an error that never shows the
// password.
func NewRedis(o RedisOptions) (*Redis, error) {
	redisurl.Quiet()
	redacted, err := redisurl.Check(o.URL)
	if err != nil {
		return nil, fmt.Errorf("state: [cluster] redis_url %s: %v", redacted, err)
	}
	ro, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("state: [cluster] redis_url %s: %v", redacted, err)
	}
	if o.Prefix == "" {
		o.Prefix = layout.DefaultClusterPrefix
	}
	if msg := layout.CheckRedisPrefix(o.Prefix); msg != "" {
		return nil, fmt.Errorf("state: [cluster] prefix %q: %s", o.Prefix, msg)
	}
	if o.CacheBytes <= 0 {
		o.CacheBytes = 1 << 30
	}
	if o.Lease <= 0 {
		o.Lease = 30 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Replica == "" {
		o.Replica = defaultReplica()
	}
	// No retries: a retried INCRBY or script whose reply was lost would
	// run twice (a charge counted twice). The error reaches the caller.
	ro.MaxRetries = -1
	ro.DisableIdentity = true
	ro.DialTimeout, ro.ReadTimeout, ro.WriteTimeout = o.Timeout, o.Timeout, o.Timeout
	ro.DialerRetries = 1
	r := &Redis{client: redis.NewClient(ro), url: redacted, opts: o, stop: make(chan struct{})}
	r.initBlobs()
	r.initCounters()
	r.initLeases()
	r.initSessions()
	r.initSubs()
	r.initLocks()
	return r, nil
}

// Replicated is true.
func (*Redis) Replicated() bool { return true }

// Ready pings the server.
func (r *Redis) Ready(ctx context.Context) error {
	return r.wrap("ping", r.client.Ping(ctx).Err())
}

// Persistence is what the server keeps over its restart
// ([redisurl.CheckPersistence]).
func (r *Redis) Persistence(ctx context.Context) (redisurl.Persistence, error) {
	p, err := redisurl.CheckPersistence(ctx, r.client)
	return p, r.wrap("config get", err)
}

// Close stops background work and closes the connections.
func (r *Redis) Close() error {
	var err error
	r.closeOnce.Do(func() {
		close(r.stop)
		r.subMu.Lock()
		if r.ps != nil {
			_ = r.ps.Close()
		}
		r.subMu.Unlock()
		err = r.client.Close()
	})
	return err
}

// String is the server's URL with the password redacted.
func (r *Redis) String() string { return r.url }

// key names a key under the prefix; see [layout.ClusterKey].
func (r *Redis) key(parts ...string) string { return layout.ClusterKey(r.opts.Prefix, parts...) }

// wrap turns a go-redis error into one that names the config key: a
// connection failure wraps [ErrUnavailable]; redis.Nil is returned as is.
func (r *Redis) wrap(op string, err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, redis.ErrClosed) || errors.Is(err, context.DeadlineExceeded) || isConnErr(err) {
		return fmt.Errorf("%w: [cluster] redis_url %s: %s: %v", ErrUnavailable, r.url, op, err)
	}
	return fmt.Errorf("state: [cluster] redis_url %s: %s: %w", r.url, op, err)
}
