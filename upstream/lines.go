package upstream

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"runtime/debug"
	"sync/atomic"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// lineReader splits newline-delimited JSON-RPC into messages, with no
// line-length limit but max. A message is read into one buffer that grows
// by doubling and is handed to the caller as it is (bufio's ReadBytes
// collects a long line in pieces and then copies it whole: twice its size
// at the end, and every byte copied twice).
type lineReader struct {
	r          io.Reader
	buf        []byte
	start, end int // unread bytes are buf[start:end]
	scanned    int // buf[start:scanned] has no newline
	max        int // longest line kept; longer ones are skipped (0: no limit)
	// hint is the length of the last line longer than a chunk: an
	// upstream's big answers tend to come in similar sizes (the same tool
	// called again), so a line that reaches a quarter of it grows there
	// at once rather than doubling on (see grow).
	hint int
	// grown is the size of the buffer the current (or last) line last
	// grew into, and moved the bytes its growth copied (the tests look).
	grown, moved int

	// A line longer than a chunk is validated as it arrives (val, fed up
	// to buf[fed]), so that when its end is in only the last piece is
	// left to check; last is the verdict on the line next returned.
	val  *jsonscan.Stream
	fed  int
	last *scanned
}

// lastScan is the validation of the line next just returned, when it was
// validated as it arrived (a long line), or nil.
func (l *lineReader) lastScan() *scanned { return l.last }

// feed validates the current line's bytes up to buf[to].
func (l *lineReader) feed(to int) {
	if l.val == nil {
		l.val, l.fed = messageStream(), l.start
	}
	_, _ = l.val.Write(l.buf[l.fed:to])
	l.fed = to
}

// finish ends the validation of the current line, ending at buf[to].
func (l *lineReader) finish(to int) {
	if l.val == nil {
		return
	}
	l.feed(to)
	l.last, l.val = closeScan(l.val), nil
}

const lineChunk = 64 << 10

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: r, buf: make([]byte, lineChunk), max: max}
}

// tooLong describes a line longer than the reader's max, skipped: its
// length, and its first and last bytes, where its id is.
type tooLong struct {
	size       int64
	head, tail []byte
}

// next returns the next line without its newline, which the caller owns,
// or, for a line over max, what was seen of it. err is the reader's (io.EOF
// at the end); a last line without newline is returned with it.
func (l *lineReader) next() (line []byte, skipped *tooLong, err error) {
	l.last, l.grown, l.moved = nil, 0, 0
	for {
		if i := bytes.IndexByte(l.buf[l.scanned:l.end], '\n'); i >= 0 {
			nl := l.scanned + i
			l.finish(nl)
			line = l.buf[l.start:nl:nl]
			l.start, l.scanned = nl+1, nl+1
			if len(line) < lineChunk {
				// Small: a copy, and the buffer is kept for the next lines.
				return append([]byte(nil), line...), nil, nil
			}
			// Large: the line keeps the buffer; what follows it moves to a
			// fresh one.
			l.hint = len(line)
			rest := make([]byte, max(lineChunk, l.end-l.start))
			n := copy(rest, l.buf[l.start:l.end])
			l.buf, l.start, l.scanned, l.end = rest, 0, 0, n
			return line, nil, nil
		}
		l.scanned = l.end
		if l.max > 0 && l.end-l.start > l.max {
			l.val = nil
			return nil, l.skip(), nil
		}
		if l.end-l.start >= lineChunk {
			l.feed(l.end)
		}
		if l.end == len(l.buf) {
			l.grow()
		}
		n, rerr := l.r.Read(l.buf[l.end:])
		l.end += n
		if rerr != nil && n == 0 {
			if l.end > l.start {
				// A last line without its newline comes with the error:
				// the caller can tell it from a finished one (a process
				// killed mid-write leaves half a message).
				l.finish(l.end)
				line = append([]byte(nil), l.buf[l.start:l.end]...)
				l.start, l.scanned = l.end, l.end
				return line, nil, rerr
			}
			return nil, nil, rerr
		}
	}
}

// grow makes room for more of the current line: unread bytes move to the
// front, or to a buffer twice as big, or, once the line is a quarter of
// the last big one's length, to one a little longer than that: a 24 MB
// line after another then moves 16 MiB in all instead of 32 (the doubling
// from 64 KiB up to 8 MiB, then once) and ends in a 25.6 MiB buffer
// instead of a 32 MiB one. A line shorter than the last by more than that
// quarter is no worse off than the last's size, which was held already.
func (l *lineReader) grow() {
	unread := l.end - l.start
	if l.start > 0 && unread <= len(l.buf)/2 {
		copy(l.buf, l.buf[l.start:l.end])
	} else {
		n := 2 * len(l.buf)
		if l.hint > 0 && unread >= l.hint/4 {
			n = max(n, l.hint+l.hint/16+lineChunk)
		}
		if l.max > 0 && n >= l.max {
			n = l.max + lineChunk // enough to know a line is over max, without one more copy
		}
		nb := make([]byte, n)
		l.moved += copy(nb, l.buf[l.start:l.end])
		l.grown = n
		l.buf = nb
		releaseGarbage(n) // the old buffer among it
	}
	l.scanned -= l.start
	if l.val != nil {
		l.fed -= l.start
	}
	l.start, l.end = 0, unread
}

// skip reads past the rest of a line longer than max, keeping its first
// and last 4 KiB, and shrinks the buffer back.
func (l *lineReader) skip() *tooLong {
	keep := min(4<<10, l.end-l.start)
	t := &tooLong{head: append([]byte(nil), l.buf[l.start:l.start+keep]...)}
	t.size = int64(l.end - l.start)
	window := append([]byte(nil), l.buf[l.end-keep:l.end]...)
	l.buf = make([]byte, lineChunk)
	l.start, l.end, l.scanned = 0, 0, 0
	for {
		n, err := l.r.Read(l.buf)
		chunk := l.buf[:n]
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			t.size += int64(i)
			window = append(window, chunk[:i]...)
			copy(l.buf, chunk[i+1:])
			l.end = n - i - 1
			break
		}
		t.size += int64(n)
		window = append(window, chunk...)
		if len(window) > 2*keep+lineChunk {
			window = append(window[:0], window[len(window)-keep:]...)
		}
		if err != nil {
			break
		}
	}
	if len(window) > keep {
		window = window[len(window)-keep:]
	}
	t.tail = window
	return t
}

// Sizes of a growing message buffer from which releaseGarbage acts.
const (
	// bigGrowth: the buffer just outgrown is worth returning at once.
	bigGrowth = 16 << 20
	// afterBigGrowth: the first message after a big one returns what is
	// left of it.
	afterBigGrowth = 4 << 20
)

// bigRead is set once a message has grown to bigGrowth, and taken by the
// next message that grows to afterBigGrowth.
var bigRead atomic.Bool

// releaseGarbage, once a message being read has moved into a new buffer
// of n bytes, collects garbage and returns it to the system
// ([debug.FreeOSMemory]) when n is big (the buffer just outgrown, half
// the new one's size, is among it), and once from 4 MiB in the first
// message after a big one: what is left of that one, which the collector
// would keep (its goal is twice the live heap) while this one grows on
// top of it. Otherwise the process would hold three or four times a big
// message while it is diverted or sent; with it, at most the message and
// the buffer it outgrew, while copying. A collection of this heap (big
// byte buffers, few pointers) costs little next to reading tens of
// megabytes, but returning memory makes the next allocations fault their
// pages in again, which for a message of a few megabytes costs more than
// reading it (6 MiB: 13 ms against 3.6 ms, BenchmarkLineReader): hence
// no release below bigGrowth otherwise.
func releaseGarbage(n int) {
	switch {
	case n >= bigGrowth:
		debug.FreeOSMemory()
		bigRead.Store(true)
	case n >= afterBigGrowth && bigRead.Swap(false):
		debug.FreeOSMemory()
	}
}

var (
	idAtStart = regexp.MustCompile(`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9]+)`)
	idAtEnd   = regexp.MustCompile(`[,{]\s*"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9]+)\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$`)
)

// idOf finds the id of a message too large to read from its first and
// last bytes: JSON-RPC implementations put it first (with jsonrpc) or last.
// nil when it is in neither place.
func idOf(head, tail []byte) json.RawMessage {
	if m := idAtStart.FindSubmatch(head); m != nil {
		return json.RawMessage(m[1])
	}
	if m := idAtEnd.FindSubmatch(tail); m != nil {
		return json.RawMessage(m[1])
	}
	return nil
}
