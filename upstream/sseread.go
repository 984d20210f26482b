package upstream

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// sseEvent is one dispatched Server-Sent Event.
type sseEvent struct {
	name string // "message" when the event had no event field
	data []byte // the data fields' values joined with "\n"
	// skipped, when set, is an event whose data was over the reader's
	// max: data is empty and this says what was seen of it.
	skipped *tooLong
	// scan, when set, is the validation of data made as it arrived (one
	// data line longer than a chunk).
	scan *scanned
}

// sseReader parses an event stream as the HTML standard defines it
// (§9.2.6 "Interpreting an event stream"): lines end with CRLF, LF or CR;
// a line starting with ':' is a comment; an empty line dispatches the
// event. Lines have no length limit: a 50 MB message is one event.
//
// It keeps what a client needs to resume the stream: the last event id
// (which, as the standard says, carries over events without an id, and is
// updated by an event with an id but no data, as MCP servers send to
// prime a resumable stream) and the reconnection time a retry field set.
type sseReader struct {
	r       *bufio.Reader
	afterCR bool // the last line ended with CR: a LF right after it is part of that ending
	started bool // past the first line, where a byte order mark may be

	lastID string        // the last event id buffer, as of the last dispatched event
	retry  time.Duration // from the last valid retry field; 0 when none came

	max int      // longest line kept (max_result_bytes); 0: no limit
	cut *tooLong // set by line when it skipped the rest of a line over max

	// A data line longer than a chunk is validated as it arrives (val,
	// fed up to line[valFed]); lineVal is that of the line line just
	// returned, complete.
	val     *jsonscan.Stream
	valFed  int
	lineVal *jsonscan.Stream

	// hint is the length of the last line longer than a chunk, shared by
	// the readers of one connection (a streamable HTTP upstream's every
	// answer is a stream of its own): a line reaching a quarter of it
	// grows there at once, as lineReader's does. grown is the size the
	// last line's buffer last grew to (the tests look).
	hint  *atomic.Int64
	grown int
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10), hint: new(atomic.Int64)}
}

// next returns the next event. An event the stream ends in the middle of
// is not dispatched (the standard says so).
func (s *sseReader) next() (sseEvent, error) {
	s.grown = 0
	var name string
	var data []byte
	var skipped *tooLong
	hasData := false
	id, hasID := s.lastID, false
	var scan *jsonscan.Stream // of the event's one data line, when streamed
	for {
		line, err := s.line()
		if err != nil {
			return sseEvent{}, err
		}
		lineVal := s.lineVal
		if len(line) == 0 {
			if hasID {
				s.lastID = id
			}
			if !hasData {
				name, hasID = "", false
				continue
			}
			if name == "" {
				name = "message"
			}
			ev := sseEvent{name: name, data: data, skipped: skipped}
			if skipped != nil {
				ev.data = nil
			} else if scan != nil {
				ev.scan = closeScan(scan)
			}
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		if s.cut != nil {
			if string(field) == "data" {
				skipped, s.cut = s.cut, nil
				skipped.head = value
				hasData = true
				continue
			}
			s.cut = nil
		}
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			if !hasData {
				data, hasData = value, true // each line is a fresh slice: no copy
				scan = lineVal
			} else {
				data = append(append(data, '\n'), value...)
				scan = nil // validated whole, when dispatched
			}
		case "id":
			// An id with a NUL is ignored, as the standard says.
			if bytes.IndexByte(value, 0) < 0 {
				id, hasID = string(value), true
			}
		case "retry":
			if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil && isDigits(value) {
				s.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// resume is a reader of body, the continuation of this reader's stream:
// it keeps the last event id and the retry time.
func (s *sseReader) resume(body io.Reader) *sseReader {
	r := newSSEReader(body)
	r.lastID, r.retry, r.max, r.hint = s.lastID, s.retry, s.max, s.hint
	return r
}

// retryOr is the reconnection time the stream set, or def.
func (s *sseReader) retryOr(def time.Duration) time.Duration {
	if s.retry > 0 {
		return s.retry
	}
	return def
}

// skipLine reads past the rest of a line that grew over max, keeping its
// first and last 4 KiB (where a message's id is), and returns its head;
// s.cut says what was skipped.
func (s *sseReader) skipLine(line []byte) ([]byte, error) {
	const keep = 4 << 10
	head := append([]byte(nil), line[:min(keep, len(line))]...)
	tail := append([]byte(nil), line[max(0, len(line)-keep):]...)
	size := int64(len(line))
	for {
		if _, err := s.r.Peek(1); err != nil {
			return nil, err
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		end := bytes.IndexAny(buf, "\r\n")
		if end >= 0 {
			s.afterCR = buf[end] == '\r'
			buf = buf[:end]
		}
		size += int64(len(buf))
		tail = append(tail, buf...)
		if len(tail) > keep {
			tail = append(tail[:0], tail[len(tail)-keep:]...)
		}
		if end >= 0 {
			_, _ = s.r.Discard(end + 1)
			break
		}
		_, _ = s.r.Discard(len(buf))
	}
	s.cut = &tooLong{size: size, tail: tail}
	return head, nil
}

// feed validates what has arrived of a data line once it is longer than
// a chunk: its value, after "data:" and one space.
func (s *sseReader) feed(line []byte) {
	if s.val == nil {
		if !s.started || len(line) < lineChunk || !bytes.HasPrefix(line, []byte("data:")) {
			return
		}
		from := len("data:")
		if line[from] == ' ' {
			from++
		}
		s.val, s.valFed = messageStream(), from
	}
	_, _ = s.val.Write(line[s.valFed:])
	s.valFed = len(line)
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// line returns the next line without its ending.
func (s *sseReader) line() ([]byte, error) {
	var line []byte
	s.val, s.lineVal = nil, nil
	for {
		if _, err := s.r.Peek(1); err != nil {
			return nil, err
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		if s.afterCR {
			s.afterCR = false
			if buf[0] == '\n' {
				_, _ = s.r.Discard(1)
				continue
			}
		}
		// Look for LF first and for CR only before it: searching the
		// whole buffer for a CR that most streams never send would cost
		// a buffer's length per line.
		end := bytes.IndexByte(buf, '\n')
		before := buf
		if end >= 0 {
			before = buf[:end]
		}
		if cr := bytes.IndexByte(before, '\r'); cr >= 0 {
			end = cr
			s.afterCR = true
		}
		if end < 0 {
			if len(line)+len(buf) > cap(line) {
				// Doubling (append grows big slices by 1.25: more copies),
				// the old buffer released when big.
				n := max(2*cap(line), len(line)+len(buf))
				if h := int(s.hint.Load()); h > 0 && len(line)+len(buf) >= h/4 {
					n = max(n, h+h/16+lineChunk)
				}
				line = append(make([]byte, 0, n), line...)
				s.grown = n
				releaseGarbage(n)
			}
			line = append(line, buf...)
			_, _ = s.r.Discard(len(buf))
			if s.max > 0 && len(line) > s.max {
				s.val = nil
				return s.skipLine(line)
			}
			s.feed(line)
			continue
		}
		line = append(line, buf[:end]...)
		_, _ = s.r.Discard(end + 1)
		if len(line) >= lineChunk {
			s.hint.Store(int64(len(line)))
		}
		if s.val != nil {
			_, _ = s.val.Write(line[s.valFed:])
			s.lineVal, s.val = s.val, nil
		}
		if !s.started {
			s.started = true
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		return line, nil
	}
}
