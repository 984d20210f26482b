package tokens

import "io"

// readChunk is how much [Counter.CountReader] reads at a time: small next
// to the outputs it is for. (A variable for tests.)
var readChunk = 4 << 20

// CountReader returns the exact token count of everything r yields (what
// [Counter.Count] would say of it all), holding a few MiB of it at a time:
// each chunk read is counted up to its last place where the text may be cut
// without changing the count (boundary.go, gemma_boundary.go) and the rest
// is carried into the next. Only text with no such place for megabytes (one
// word of letters, no space, digit or newline) is held whole. A read error
// other than io.EOF is returned with the count so far.
//
// It counts on one core, where [Counter.Count] takes them all: it is what
// counts a big output in the background, once the answer is out (the
// exact figures of a diverted or passed output), and a count nobody waits
// for must leave the other cores to the work somebody does (the next
// call, another owner's).
func (c *Counter) CountReader(r io.Reader) (int, error) {
	e, err := c.load()
	if err != nil {
		// As Count: the byte length errs toward more tokens.
		n, rerr := io.Copy(io.Discard, r)
		return c.scale(int(n)), rerr
	}
	buf := make([]byte, 0, readChunk)
	total := 0
	for {
		n, rerr := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			total += e.count(buf, 0, 1)
			return c.scale(total), nil
		}
		if rerr != nil {
			return c.scale(total), rerr
		}
		p := lastCut(e, buf)
		if p == 0 {
			// No cut at all: read more before counting any of it.
			buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
			continue
		}
		total += e.count(buf[:p], 0, 1)
		buf = buf[:copy(buf, buf[p:])]
	}
}

// lastCut is the last place b may be cut before, or 0 if none: looked
// for from the end, where it usually is a few bytes back.
func lastCut(e counter, b []byte) int {
	for p := len(b) - 1; p > 0; p-- {
		if e.safe(b, p) {
			return p
		}
	}
	return 0
}
