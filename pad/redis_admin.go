package pad

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// Client is the connection pool, for other data of the same server that
// shares it (a run's artifacts).
func (r *Redis) Client() *redis.Client { return r.client }

// Prefix starts every key of this server's pads.
func (r *Redis) Prefix() string { return r.prefix }

// scanCount is the COUNT hint of the SCANs below.
const scanCount = 500

// globEscape escapes what a SCAN MATCH pattern treats as special.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Keys lists every key of pad id on the server, sorted as SCAN returns
// them. It uses SCAN, so it never blocks the server; a key written while
// it runs may be missed.
func (r *Redis) Keys(ctx context.Context, id string) ([]string, error) {
	if msg := checkPadID(id); msg != "" {
		return nil, fmt.Errorf("%w: pad id %q: %s", ErrOptions, id, msg)
	}
	return r.scan(ctx, globEscape(layout.RedisKeyPrefix(layout.RedisBase(r.prefix, id)))+"*")
}

func (r *Redis) scan(ctx context.Context, match string) ([]string, error) {
	var out []string
	var cursor uint64
	for {
		keys, next, err := r.client.Scan(ctx, cursor, match, scanCount).Result()
		if err != nil {
			return out, fmt.Errorf("pad %s: scan %s: %w", r.url, match, err)
		}
		out = append(out, keys...)
		if cursor = next; cursor == 0 {
			return out, nil
		}
	}
}

// Delete removes every key of pad id (document, history, ledger, notes,
// lock, quarantined documents) and returns the keys it removed. A pad
// still in use by a server is recreated by its next write.
func (r *Redis) Delete(ctx context.Context, id string) ([]string, error) {
	keys, err := r.Keys(ctx, id)
	if err != nil || len(keys) == 0 {
		return nil, err
	}
	// UNLINK one key at a time: the keys share a hash tag, but a cluster
	// proxy may still refuse multi-key commands.
	var gone []string
	for _, k := range keys {
		if err := r.client.Unlink(ctx, k).Err(); err != nil {
			return gone, fmt.Errorf("pad %s: unlink %s: %w", r.url, k, err)
		}
		gone = append(gone, k)
	}
	return gone, nil
}
