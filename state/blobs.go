package state

// Blobs is one concern of a [Store]. (Skeleton: methods are added with
// their implementations for [Local] and [Redis].)
type Blobs interface{}

type localBlobs struct{}

func (l *Local) initBlobs() {}

type redisBlobs struct{}

func (r *Redis) initBlobs() {}
