package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Values are small named records (an OAuth token record) that every
// process sharing the store reads and writes whole: a put replaces the
// value at once, a get sees one whole value, never a mix.
type Values interface {
	// PutValue keeps data under name, replacing what was there; ttl 0
	// keeps it until deleted, otherwise it expires ttl from now (under
	// 1ms is [ErrBadTTL]).
	PutValue(ctx context.Context, name string, data []byte, ttl time.Duration) error
	// GetValue returns name's value, or an error wrapping [ErrNoValue]
	// (never put, deleted, or expired).
	GetValue(ctx context.Context, name string) ([]byte, error)
	// DeleteValue forgets name (no error if there is none).
	DeleteValue(ctx context.Context, name string) error
	// CreateValue keeps data under name, without expiry, unless name
	// has a value already; it returns the value name has then (data, or
	// the one there before), so that every process asking at once gets
	// the same.
	CreateValue(ctx context.Context, name string, data []byte) ([]byte, error)
}

// ErrNoValue is wrapped by [Values.GetValue] for a name with no value. It
// matches [fs.ErrNotExist] too, so a caller that reads records from files
// or from a store tells "none" apart the same way.
var ErrNoValue = fmt.Errorf("state: no such value: %w", fs.ErrNotExist)

// checkValueTTL accepts 0 (no expiry) and what [checkTTL] accepts.
func checkValueTTL(ttl time.Duration) error {
	if ttl == 0 {
		return nil
	}
	return checkTTL(ttl)
}

// localValues holds [Local]'s values in memory: one process has nobody
// to share them with, and what must survive a restart is its caller's to
// write to files.
type localValues struct {
	vmu  sync.Mutex
	vals map[string]localRecord // expires zero: never
}

func (l *Local) initValues() { l.vals = map[string]localRecord{} }

// PutValue implements [Values.PutValue].
func (l *Local) PutValue(_ context.Context, name string, data []byte, ttl time.Duration) error {
	if err := checkValueTTL(ttl); err != nil {
		return err
	}
	r := localRecord{rec: append([]byte(nil), data...)}
	if ttl > 0 {
		r.expires = time.Now().Add(ttl)
	}
	l.vmu.Lock()
	defer l.vmu.Unlock()
	l.vals[name] = r
	return nil
}

// GetValue implements [Values.GetValue].
func (l *Local) GetValue(_ context.Context, name string) ([]byte, error) {
	l.vmu.Lock()
	defer l.vmu.Unlock()
	r, ok := l.vals[name]
	if ok && !r.expires.IsZero() && !time.Now().Before(r.expires) {
		delete(l.vals, name)
		ok = false
	}
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoValue, name)
	}
	return append([]byte(nil), r.rec...), nil
}

// DeleteValue implements [Values.DeleteValue].
func (l *Local) DeleteValue(_ context.Context, name string) error {
	l.vmu.Lock()
	defer l.vmu.Unlock()
	delete(l.vals, name)
	return nil
}

// CreateValue implements [Values.CreateValue].
func (l *Local) CreateValue(ctx context.Context, name string, data []byte) ([]byte, error) {
	l.vmu.Lock()
	defer l.vmu.Unlock()
	if r, ok := l.vals[name]; ok && (r.expires.IsZero() || time.Now().Before(r.expires)) {
		return append([]byte(nil), r.rec...), nil
	}
	l.vals[name] = localRecord{rec: append([]byte(nil), data...)}
	return append([]byte(nil), data...), nil
}

// A Redis store's values are strings ("{prefix}:value:{name}"); SET
// replaces one whole, so nothing needs a script.
func (r *Redis) valueKey(name string) string { return r.key("value", name) }

// PutValue implements [Values.PutValue].
func (r *Redis) PutValue(ctx context.Context, name string, data []byte, ttl time.Duration) error {
	if err := checkValueTTL(ttl); err != nil {
		return err
	}
	return r.wrap("put value "+name, r.client.Set(ctx, r.valueKey(name), data, ttl).Err())
}

// GetValue implements [Values.GetValue].
func (r *Redis) GetValue(ctx context.Context, name string) ([]byte, error) {
	b, err := r.client.Get(ctx, r.valueKey(name)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%w: %q", ErrNoValue, name)
	}
	if err != nil {
		return nil, r.wrap("get value "+name, err)
	}
	return b, nil
}

// DeleteValue implements [Values.DeleteValue].
func (r *Redis) DeleteValue(ctx context.Context, name string) error {
	return r.wrap("delete value "+name, r.client.Del(ctx, r.valueKey(name)).Err())
}

// CreateValue implements [Values.CreateValue]: SET NX, then GET what is
// there (this process's or another's).
func (r *Redis) CreateValue(ctx context.Context, name string, data []byte) ([]byte, error) {
	if err := r.client.SetNX(ctx, r.valueKey(name), data, 0).Err(); err != nil {
		return nil, r.wrap("create value "+name, err)
	}
	return r.GetValue(ctx, name)
}
