package state

// Leases is one concern of a [Store]. (Skeleton: methods are added with
// their implementations for [Local] and [Redis].)
type Leases interface{}

type localLeases struct{}

func (l *Local) initLeases() {}

type redisLeases struct{}

func (r *Redis) initLeases() {}
