package telemetry

import "sync"

// OtherLabel is the value a label takes once its distinct values reach
// their cap: a metric's series stay bounded whatever the input.
const OtherLabel = "other"

// Label caps: distinct values kept per label before [OtherLabel].
const (
	maxServers = 64
	maxTools   = 256
	maxOwners  = 256
	maxAgents  = 128
	maxKinds   = 32
	maxLabel   = 128 // bytes of one value; longer is OtherLabel
)

// bounded hands out label values, at most max distinct ones; the rest
// become [OtherLabel]. Values seen once stay: a series never changes its
// label midway.
type bounded struct {
	mu   sync.Mutex
	max  int
	seen map[string]struct{}
}

func newBounded(max int) *bounded { return &bounded{max: max, seen: make(map[string]struct{})} }

func (b *bounded) value(v string) string {
	if len(v) > maxLabel {
		return OtherLabel
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen[v]; ok {
		return v
	}
	if len(b.seen) >= b.max {
		return OtherLabel
	}
	b.seen[v] = struct{}{}
	return v
}
