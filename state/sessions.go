package state

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sessions keeps what a 2025 session is (its record: protocol version,
// client capabilities, log level, subscriptions, owner — opaque bytes
// here, encoded by package server) so that any replica can take up a
// session another one created, and carries messages between replicas (a
// notification for a GET stream that another replica holds).
type Sessions interface {
	// PutSession keeps rec under id until ttl from now (renewing it).
	PutSession(ctx context.Context, id string, rec []byte, ttl time.Duration) error
	// RenewSession pushes id's expiry to ttl from now; it never creates
	// a record (no error when there is none).
	RenewSession(ctx context.Context, id string, ttl time.Duration) error
	// GetSession returns id's record, or an error wrapping
	// [ErrNoSession].
	GetSession(ctx context.Context, id string) ([]byte, error)
	// DeleteSession forgets id (no error if it is not known).
	DeleteSession(ctx context.Context, id string) error
	// Publish sends msg to every current subscriber of channel, on any
	// replica; it returns how many received it.
	Publish(ctx context.Context, channel string, msg []byte) (int, error)
	// Subscribe delivers channel's messages to the returned [Subscription]
	// until it is closed or ctx ends. Its queue holds
	// [SubscriptionQueue] messages: a subscriber that does not keep up
	// loses the newest ones (counted), never delays a publisher.
	Subscribe(ctx context.Context, channel string) (*Subscription, error)
}

// ErrNoSession is wrapped by [Sessions.GetSession] for an id no replica
// knows (never created, deleted, or expired).
var ErrNoSession = errors.New("state: no such session")

// SubscriptionQueue bounds a [Subscription]'s queue.
const SubscriptionQueue = 256

// Subscription is one subscriber of a channel.
type Subscription struct {
	c       chan []byte
	dropped atomic.Int64
	once    sync.Once
	stop    func()
}

// C delivers the messages, in the order they were published; it is
// closed when the subscription ends.
func (s *Subscription) C() <-chan []byte { return s.c }

// Dropped is how many messages were lost because the queue was full.
func (s *Subscription) Dropped() int64 { return s.dropped.Load() }

// Close ends the subscription; C is closed after.
func (s *Subscription) Close() { s.once.Do(s.stop) }

func (s *Subscription) offer(msg []byte) {
	select {
	case s.c <- msg:
	default:
		s.dropped.Add(1)
	}
}

// localSessions: records in a map, channels fanned out in process.
type localSessions struct {
	smu  sync.Mutex
	recs map[string]localRecord
	subs map[string]map[*Subscription]struct{}
}

type localRecord struct {
	rec     []byte
	expires time.Time
}

func (l *Local) initSessions() {
	l.recs = map[string]localRecord{}
	l.subs = map[string]map[*Subscription]struct{}{}
}

func (l *Local) PutSession(_ context.Context, id string, rec []byte, ttl time.Duration) error {
	l.smu.Lock()
	defer l.smu.Unlock()
	l.recs[id] = localRecord{rec: append([]byte(nil), rec...), expires: time.Now().Add(ttl)}
	return nil
}

func (l *Local) RenewSession(_ context.Context, id string, ttl time.Duration) error {
	l.smu.Lock()
	defer l.smu.Unlock()
	if r, ok := l.recs[id]; ok {
		r.expires = time.Now().Add(ttl)
		l.recs[id] = r
	}
	return nil
}

func (l *Local) GetSession(_ context.Context, id string) ([]byte, error) {
	l.smu.Lock()
	defer l.smu.Unlock()
	r, ok := l.recs[id]
	if !ok || time.Now().After(r.expires) {
		delete(l.recs, id)
		return nil, fmt.Errorf("%w: %q", ErrNoSession, id)
	}
	return append([]byte(nil), r.rec...), nil
}

func (l *Local) DeleteSession(_ context.Context, id string) error {
	l.smu.Lock()
	defer l.smu.Unlock()
	delete(l.recs, id)
	return nil
}

func (l *Local) Publish(_ context.Context, channel string, msg []byte) (int, error) {
	l.smu.Lock()
	defer l.smu.Unlock()
	for s := range l.subs[channel] {
		s.offer(append([]byte(nil), msg...))
	}
	return len(l.subs[channel]), nil
}

func (l *Local) Subscribe(ctx context.Context, channel string) (*Subscription, error) {
	s := &Subscription{c: make(chan []byte, SubscriptionQueue)}
	ctx, cancel := context.WithCancel(ctx)
	s.stop = cancel
	l.smu.Lock()
	if l.subs[channel] == nil {
		l.subs[channel] = map[*Subscription]struct{}{}
	}
	l.subs[channel][s] = struct{}{}
	l.smu.Unlock()
	go func() {
		<-ctx.Done()
		l.smu.Lock()
		delete(l.subs[channel], s)
		if len(l.subs[channel]) == 0 {
			delete(l.subs, channel)
		}
		close(s.c) // under smu: no Publish offers to it after
		l.smu.Unlock()
	}()
	return s, nil
}

// A Redis store's session records are strings with a TTL, its channels
// Redis pub/sub channels (at most once, like a GET stream: a replica that
// is not listening has no stream to deliver to). Nothing to set up.
func (r *Redis) initSessions() {}

func (r *Redis) sessionKey(id string) string { return r.key("session", id) }
func (r *Redis) channelKey(ch string) string { return r.key("channel", ch) }

func (r *Redis) PutSession(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	return r.wrap("keep session", r.client.Set(ctx, r.sessionKey(id), rec, max(ttl, time.Millisecond)).Err())
}

func (r *Redis) RenewSession(ctx context.Context, id string, ttl time.Duration) error {
	return r.wrap("renew session", r.client.PExpire(ctx, r.sessionKey(id), max(ttl, time.Millisecond)).Err())
}

func (r *Redis) GetSession(ctx context.Context, id string) ([]byte, error) {
	b, err := r.client.Get(ctx, r.sessionKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%w: %q", ErrNoSession, id)
	}
	if err != nil {
		return nil, r.wrap("read session", err)
	}
	return b, nil
}

func (r *Redis) DeleteSession(ctx context.Context, id string) error {
	return r.wrap("delete session", r.client.Del(ctx, r.sessionKey(id)).Err())
}

func (r *Redis) Publish(ctx context.Context, channel string, msg []byte) (int, error) {
	n, err := r.client.Publish(ctx, r.channelKey(channel), msg).Result()
	return int(n), r.wrap("publish", err)
}

// Subscribe implements [Sessions.Subscribe]. Every subscription of the
// store shares one Redis connection (SUBSCRIBE and UNSUBSCRIBE on it as
// channels gain their first subscriber and lose their last): a replica
// holding a thousand GET streams holds one connection for them, not a
// thousand. It returns once Redis confirmed the channel.
func (r *Redis) Subscribe(ctx context.Context, channel string) (*Subscription, error) {
	key := r.channelKey(channel)
	s := &Subscription{c: make(chan []byte, SubscriptionQueue)}
	r.subMu.Lock()
	if r.ps == nil {
		r.ps = r.client.Subscribe(context.WithoutCancel(ctx))
		go r.dispatch(r.ps.ChannelWithSubscriptions(redis.WithChannelSize(SubscriptionQueue)))
	}
	conf := r.confirmed[key]
	if conf == nil {
		conf = &confirmation{c: make(chan struct{})}
		r.confirmed[key] = conf
		r.subs[key] = map[*Subscription]struct{}{}
		// Under subMu: a SUBSCRIBE and an UNSUBSCRIBE of one channel go
		// out in the order the subscribers came and went.
		if err := r.ps.Subscribe(ctx, key); err != nil {
			delete(r.confirmed, key)
			delete(r.subs, key)
			r.subMu.Unlock()
			return nil, r.wrap("subscribe", err)
		}
	}
	r.subs[key][s] = struct{}{}
	r.subMu.Unlock()
	wait := time.NewTimer(r.opts.Timeout)
	defer wait.Stop()
	select {
	case <-conf.c:
	case <-ctx.Done():
		r.unsubscribe(key, s)
		return nil, r.wrap("subscribe", ctx.Err())
	case <-wait.C:
		r.unsubscribe(key, s)
		return nil, r.wrap("subscribe", context.DeadlineExceeded)
	}
	ctx, cancel := context.WithCancel(ctx)
	s.stop = cancel
	go func() {
		select {
		case <-ctx.Done():
		case <-r.stop:
		}
		r.unsubscribe(key, s)
	}()
	return s, nil
}

// confirmation is closed once Redis confirmed a channel's SUBSCRIBE.
type confirmation struct {
	c    chan struct{}
	done bool
}

// redisSubs is the one subscriber connection of a [Redis] store and the
// subscriptions it serves, by channel key.
type redisSubs struct {
	subMu     sync.Mutex
	ps        *redis.PubSub // nil until the first Subscribe
	subs      map[string]map[*Subscription]struct{}
	confirmed map[string]*confirmation
}

func (r *Redis) initSubs() {
	r.subs = map[string]map[*Subscription]struct{}{}
	r.confirmed = map[string]*confirmation{}
}

// unsubscribe ends s, once: its queue is closed, and the channel is
// given up when s was its last subscriber here.
func (r *Redis) unsubscribe(key string, s *Subscription) {
	r.subMu.Lock()
	defer r.subMu.Unlock()
	set := r.subs[key]
	if _, ok := set[s]; !ok {
		return
	}
	delete(set, s)
	close(s.c) // under subMu: dispatch offers to it under subMu too
	if len(set) > 0 {
		return
	}
	delete(r.subs, key)
	delete(r.confirmed, key)
	ctx, cancel := context.WithTimeout(context.Background(), r.opts.Timeout)
	defer cancel()
	// A failure leaves the channel subscribed: its messages find no
	// subscriber here and are dropped, and go-redis resubscribes no
	// channel it was told to leave.
	_ = r.ps.Unsubscribe(ctx, key)
}

// dispatch hands each message to the subscribers of its channel, and
// each confirmation to the Subscribe waiting for it, until the store
// closes.
func (r *Redis) dispatch(in <-chan any) {
	for {
		var m any
		var ok bool
		select {
		case <-r.stop:
			return
		case m, ok = <-in:
			if !ok {
				return
			}
		}
		r.subMu.Lock()
		switch m := m.(type) {
		case *redis.Subscription:
			if c := r.confirmed[m.Channel]; c != nil && m.Kind == "subscribe" && !c.done {
				c.done = true
				close(c.c)
			}
		case *redis.Message:
			for s := range r.subs[m.Channel] {
				s.offer([]byte(m.Payload))
			}
		}
		r.subMu.Unlock()
	}
}
