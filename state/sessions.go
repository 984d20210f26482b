package state

// Sessions is one concern of a [Store]. (Skeleton: methods are added with
// their implementations for [Local] and [Redis].)
type Sessions interface{}

type localSessions struct{}

func (l *Local) initSessions() {}

type redisSessions struct{}

func (r *Redis) initSessions() {}
