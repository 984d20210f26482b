package state

// Counters is one concern of a [Store]. (Skeleton: methods are added with
// their implementations for [Local] and [Redis].)
type Counters interface{}

type localCounters struct{}

func (l *Local) initCounters() {}

type redisCounters struct{}

func (r *Redis) initCounters() {}
