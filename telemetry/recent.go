package telemetry

import "sync"

// recentCalls is how many finished calls the provider keeps for the
// dashboard.
const recentCalls = 2000

// recent is a ring of the last calls' records.
type recent struct {
	mu   sync.Mutex
	buf  []Record
	next int
	full bool
}

func newRecent(n int) *recent { return &recent{buf: make([]Record, n)} }

func (r *recent) add(rec Record) {
	r.mu.Lock()
	r.buf[r.next] = rec
	r.next++
	if r.next == len(r.buf) {
		r.next, r.full = 0, true
	}
	r.mu.Unlock()
}

// Calls returns the recent calls of owner, oldest first ("" is the owner
// of calls without bearer tokens): an owner sees only its own.
func (p *Provider) Calls(owner string) []Record {
	if p == nil {
		return nil
	}
	r := p.recent
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Record
	pick := func(recs []Record) {
		for _, x := range recs {
			if x.Owner == owner {
				out = append(out, x)
			}
		}
	}
	if r.full {
		pick(r.buf[r.next:])
	}
	pick(r.buf[:r.next])
	return out
}
