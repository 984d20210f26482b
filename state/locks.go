package state

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Locks are named mutual-exclusion locks across every process sharing the
// store (one OAuth refresh at a time). A lock whose holder dies expires
// after its ttl, and another may take it.
type Locks interface {
	// Lock takes the named lock, waiting until ctx ends (then an error
	// wrapping ctx.Err()); the lock expires after ttl if never unlocked
	// (a dead holder). unlock releases it only if it is still ours, so a
	// holder that outlived its ttl never releases the next holder's lock;
	// calling it again does nothing.
	Lock(ctx context.Context, name string, ttl time.Duration) (unlock func(), err error)
}

// localLock is one held lock of [Local].
type localLock struct {
	gen     uint64    // the holder's; a stale unlock carries an older one
	expires time.Time // after it, another may take the lock
	freed   chan struct{}
}

// localLocks holds [Local]'s held locks by name; a free lock has no entry.
type localLocks struct {
	lockMu  sync.Mutex
	locks   map[string]*localLock
	lockGen uint64
}

func (l *Local) initLocks() { l.locks = map[string]*localLock{} }

// Lock implements [Locks.Lock].
func (l *Local) Lock(ctx context.Context, name string, ttl time.Duration) (func(), error) {
	if err := checkTTL(ttl); err != nil {
		return nil, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("state: lock %q: %w", name, err)
		}
		l.lockMu.Lock()
		now := time.Now()
		lk := l.locks[name]
		if lk == nil || !lk.expires.After(now) {
			// Free, or its holder outlived ttl: ours. Waiters on a taken-over
			// lock keep waiting on the same freed channel.
			if lk == nil {
				lk = &localLock{freed: make(chan struct{})}
				l.locks[name] = lk
			}
			l.lockGen++
			lk.gen, lk.expires = l.lockGen, now.Add(ttl)
			l.lockMu.Unlock()
			return l.unlocker(name, lk, lk.gen), nil
		}
		wait, freed := lk.expires.Sub(now), lk.freed
		l.lockMu.Unlock()
		timer := time.NewTimer(wait)
		select {
		case <-freed:
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
	}
}

func (l *Local) unlocker(name string, lk *localLock, gen uint64) func() {
	return func() {
		l.lockMu.Lock()
		defer l.lockMu.Unlock()
		if l.locks[name] == lk && lk.gen == gen {
			delete(l.locks, name)
			close(lk.freed)
		}
	}
}

// Backoff bounds of [Redis.Lock]'s wait: short first, since a refresh is
// quick, and capped so a waiter notices a freed lock soon.
const (
	lockWaitMin = 10 * time.Millisecond
	lockWaitMax = 200 * time.Millisecond
)

type redisLocks struct {
	lockRelease *redis.Script
}

func (r *Redis) initLocks() {
	// Compare-and-delete: only the token's owner releases.
	r.lockRelease = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)
}

// Lock implements [Locks.Lock]: SET NX PX with a random token, retried
// with a bounded backoff.
func (r *Redis) Lock(ctx context.Context, name string, ttl time.Duration) (func(), error) {
	if err := checkTTL(ttl); err != nil {
		return nil, err
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	token := hex.EncodeToString(b[:])
	key := r.key("lock", name)
	wait := lockWaitMin
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("state: lock %q: %w", name, err)
		}
		ok, err := r.client.SetNX(ctx, key, token, ttl).Result()
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				// ctx ended mid-command: the caller's deadline, not Redis down.
				return nil, fmt.Errorf("state: lock %q: %w", name, cerr)
			}
			return nil, r.wrap("lock "+name, err)
		}
		if ok {
			return r.unlocker(key, token), nil
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
		}
		wait = min(wait*2, lockWaitMax)
	}
}

// unlocker releases key if it still holds token. It uses its own
// context: the lock's may have ended, and the release must still be tried.
// An error is dropped: the lock then expires after its ttl.
func (r *Redis) unlocker(key, token string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), r.opts.Timeout)
			defer cancel()
			_ = r.lockRelease.Run(ctx, r.client, []string{key}, token).Err()
		})
	}
}
