package state

// Locks is one concern of a [Store]. (Skeleton: methods are added with
// their implementations for [Local] and [Redis].)
type Locks interface{}

type localLocks struct{}

func (l *Local) initLocks() {}

type redisLocks struct{}

func (r *Redis) initLocks() {}
