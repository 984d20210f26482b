package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

func TestLineReaderSplitsLinesOfAnySize(t *testing.T) {
	big := strings.Repeat("x", 3*lineChunk+17)
	in := "a\n\n" + big + "\nb\n" + big + big + "\nlast"
	for name, r := range map[string]io.Reader{
		"whole":       strings.NewReader(in),
		"byte a read": iotest.OneByteReader(strings.NewReader(in)),
		"half":        iotest.HalfReader(strings.NewReader(in)),
	} {
		lr := newLineReader(r, 0)
		var got []string
		for {
			line, skipped, err := lr.next()
			if skipped != nil {
				t.Fatalf("%s: skipped with no limit", name)
			}
			if err != nil && err != io.EOF {
				t.Fatal(err)
			}
			if err == nil || len(line) > 0 {
				got = append(got, string(line))
			}
			if err == io.EOF {
				break // a last line without newline comes with it
			}
		}
		want := []string{"a", "", big, "b", big + big, "last"}
		if len(got) != len(want) {
			t.Fatalf("%s: %d lines, want %d", name, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: line %d is %d bytes, want %d", name, i, len(got[i]), len(want[i]))
			}
		}
	}
}

func TestLineReaderLinesAreTheCallersOwn(t *testing.T) {
	big := strings.Repeat("y", 2*lineChunk)
	lr := newLineReader(strings.NewReader(big+"\n"+"z\n"+big+"\n"), 0)
	a, _, _ := lr.next()
	b, _, _ := lr.next()
	c, _, _ := lr.next()
	if string(a) != big || string(b) != "z" || string(c) != big {
		t.Fatal("a later read changed an earlier line")
	}
}

func TestLineReaderSkipsLinesOverMax(t *testing.T) {
	head := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"`
	tail := `"}]}}`
	huge := head + strings.Repeat("w", 1<<20) + tail
	idLast := `{"result":{"text":"` + strings.Repeat("v", 1<<20) + `","id":99},"jsonrpc":"2.0","id":"abc"}`
	lr := newLineReader(iotest.HalfReader(strings.NewReader("small\n"+huge+"\n"+idLast+"\nafter\n")), 512<<10)
	line, _, _ := lr.next()
	if string(line) != "small" {
		t.Fatalf("first line %q", line)
	}
	_, sk, err := lr.next()
	if err != nil || sk == nil || sk.size != int64(len(huge)) {
		t.Fatalf("skipped %+v, err %v; want %d bytes", sk, err, len(huge))
	}
	if id := idOf(sk.head, sk.tail); string(id) != "7" {
		t.Fatalf("id %s, want 7", id)
	}
	_, sk, _ = lr.next()
	if sk == nil {
		t.Fatal("second long line not skipped")
	}
	if id := idOf(sk.head, sk.tail); string(id) != `"abc"` {
		t.Fatalf("id %s, want \"abc\"", id)
	}
	line, sk, _ = lr.next()
	if sk != nil || string(line) != "after" {
		t.Fatalf("line after the skipped ones: %q", line)
	}
}

func TestDecodeMessageKeepsBytes(t *testing.T) {
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\"b\u00e9"}],"x":[1, 2 ,{}]}}`,
		`{"result" : null , "id":"s\"1","jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no","data":{"k":[1]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":4,"res\u0075lt":{"a":1},"error":null}`,
		`{"jsonrpc":"2.0","id":5,"method":"n\u0061me","params":{}}`,
	} {
		got, err := decodeMessage([]byte(msg))
		if err != nil {
			t.Fatalf("%s: %v", msg, err)
		}
		var want rpcMessage
		if err := json.Unmarshal([]byte(msg), &want); err != nil {
			t.Fatal(err)
		}
		if got.JSONRPC != want.JSONRPC || got.Method != want.Method || !bytes.Equal(got.ID, want.ID) ||
			!bytes.Equal(got.Params, want.Params) || !bytes.Equal(got.Result, want.Result) ||
			(got.Error == nil) != (want.Error == nil) || got.Error != nil && (got.Error.Code != want.Error.Code || got.Error.Message != want.Error.Message || !bytes.Equal(got.Error.Data, want.Error.Data)) {
			t.Fatalf("%s:\n got %+v\nwant %+v", msg, got, want)
		}
	}
	for _, bad := range []string{``, `[]`, `{"id":1,"result":{]}`, `{"id":1} x`, `"s"`, `{"method":3}`} {
		if _, err := decodeMessage([]byte(bad)); err == nil {
			t.Fatalf("%q decoded", bad)
		}
	}
	// Nested past the limit: refused, with the reason (a recursive
	// validator would die of a stack overflow on 20 MB of it).
	deep := []byte(`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 20<<20))
	if _, err := decodeMessage(deep); !errors.Is(err, jsonscan.ErrTooDeep) || !errors.Is(err, errInvalidJSON) {
		t.Fatalf("deep message: %v", err)
	}
}

func TestStdioResultOverMaxFailsItsCall(t *testing.T) {
	// Answers each request with a 2 MB result, id first.
	script := `while read line; do id=$(printf '%s' "$line" | sed 's/.*"id":\([0-9]*\).*/\1/'); printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"' "$id"; head -c 2000000 /dev/zero | tr '\0' a; printf '"}]}}\n'; done`
	c, err := startStdio("big", []string{"sh", "-c", script}, nil, "", handlers{maxMessage: 1 << 20}, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 2; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err = c.Call(ctx, "tools/call", map[string]any{"name": "x"})
		cancel()
		var tl *TooLargeError
		if !errors.As(err, &tl) || !errors.Is(err, ErrResultTooLarge) || tl.Size != int64(2000000+len(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":""}]}}`)) || tl.Max != 1<<20 {
			t.Fatalf("call %d: %v (%+v), want a TooLargeError with the size", i, err, tl)
		}
	}
}

// TestStdioBrokenAnswerFailsItsCall: an answer that goes wrong inside its
// result (here nested five million deep, which a recursive validator would
// not survive) fails its call at once with the reason, and the upstream
// serves the next call; one broken before its id cannot be matched and
// times out.
func TestStdioBrokenAnswerFailsItsCall(t *testing.T) {
	// (The parse errors the proxy sends back are not calls: skipped.)
	script := `n=0; while read line; do case "$line" in *'"method"'*) ;; *) continue;; esac; id=$(printf '%s' "$line" | sed 's/.*"id":\([0-9]*\).*/\1/'); n=$((n+1)); case $n in
	1) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":' "$id"; head -c 5000000 /dev/zero | tr '\0' '['; printf '\n';;
	2) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[1,]}}\n' "$id";;
	3) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}\n' "$id";;
	*) printf '{"jsonrpc":"2.0","i\n';;
	esac; done`
	c, err := startStdio("broken", []string{"sh", "-c", script}, nil, "", handlers{maxMessage: 64 << 20}, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	call := func(timeout time.Duration) (json.RawMessage, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return c.Call(ctx, "tools/call", map[string]any{"name": "x"})
	}
	if _, err := call(20 * time.Second); !errors.Is(err, ErrInvalidResponse) || !errors.Is(err, jsonscan.ErrTooDeep) {
		t.Fatalf("deep answer: %v", err)
	}
	if _, err := call(20 * time.Second); !errors.Is(err, ErrInvalidResponse) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("broken answer: %v", err)
	}
	if res, err := call(20 * time.Second); err != nil || string(res) != `{"content":[]}` {
		t.Fatalf("next call: %s, %v", res, err)
	}
	if _, err := call(500 * time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("answer broken before its id: %v", err)
	}
}

func TestSSEReaderSkipsEventsOverMax(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"` + strings.Repeat("q", 300<<10) + `"}]}}`
	in := "id: 1\ndata: " + big + "\n\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}\n\n"
	r := newSSEReader(iotest.HalfReader(strings.NewReader(in)))
	r.max = 100 << 10
	ev, err := r.next()
	if err != nil || ev.skipped == nil || len(ev.data) != 0 || ev.skipped.size != int64(len("data: ")+len(big)) {
		t.Fatalf("first event: %+v, %v", ev.skipped, err)
	}
	if id := idOf(ev.skipped.head, ev.skipped.tail); string(id) != "3" || r.lastID != "1" {
		t.Fatalf("id %s, last event id %q", id, r.lastID)
	}
	ev, err = r.next()
	if err != nil || ev.skipped != nil || string(ev.data) != `{"jsonrpc":"2.0","id":4,"result":{}}` || r.lastID != "2" {
		t.Fatalf("second event: %q, %v", ev.data, err)
	}
}

// TestLineReaderValidatesLongLinesAsTheyArrive: a line longer than a chunk
// is validated while it is read, with the verdict and members Members
// gives for the whole line; short lines are left to the caller.
func TestLineReaderValidatesLongLinesAsTheyArrive(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + strings.Repeat(`a\"b\\c `, 3*lineChunk/7) + `"}]}}`
	bad := `{"jsonrpc":"2.0","id":8,"result":{"content":[` + strings.Repeat(`1,`, lineChunk) + `]}}`
	in := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + long + "\n" + bad + "\n" + "{}\n" + long
	for name, r := range map[string]io.Reader{
		"whole": strings.NewReader(in), "byte a read": iotest.OneByteReader(strings.NewReader(in)), "half": iotest.HalfReader(strings.NewReader(in)),
	} {
		lr := newLineReader(r, 0)
		for i, want := range []struct {
			line    string
			scanned bool
		}{{`{"jsonrpc":"2.0","id":1,"result":{}}`, false}, {long, true}, {bad, true}, {"{}", false}, {long, true}} {
			line, _, err := lr.next()
			last := i == 4 // no newline: it comes with the end of input
			if (err != nil) != last || last && err != io.EOF || string(line) != want.line {
				t.Fatalf("%s: line %d: %.60q, %v", name, i, line, err)
			}
			sc := lr.lastScan()
			if (sc != nil) != want.scanned {
				t.Fatalf("%s: line %d: scanned %v", name, i, sc != nil)
			}
			if sc == nil {
				continue
			}
			members, err := jsonscan.Members(line)
			if (sc.err == nil) != (err == nil) || len(sc.members) != len(members) {
				t.Fatalf("%s: line %d: %v %v, whole: %v %v", name, i, sc.members, sc.err, members, err)
			}
			for k := range members {
				if sc.members[k] != members[k] {
					t.Fatalf("%s: line %d: member %d %+v, whole %+v", name, i, k, sc.members[k], members[k])
				}
			}
		}
	}
}

// TestSSEReaderValidatesLongDataAsItArrives: an event whose one data line
// is longer than a chunk comes validated, with the verdict and members
// Members gives for its data; several data lines, or short ones, are left
// to the caller.
func TestSSEReaderValidatesLongDataAsItArrives(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + strings.Repeat(`a\"b\\c `, 3*lineChunk/7) + `"}]}}`
	bad := `{"jsonrpc":"2.0","id":8,"result":[` + strings.Repeat(`1,`, lineChunk) + `]}`
	in := ": hi\r\nevent: message\r\nid: 1\r\ndata: " + long + "\r\n\r\n" +
		"data:" + bad + "\n\n" +
		"data: {\"a\":1}\n\n" +
		"data: " + long + "\ndata: 2\n\n" +
		"data: " + long + "\r\r"
	for name, r := range map[string]io.Reader{
		"whole": strings.NewReader(in), "byte a read": iotest.OneByteReader(strings.NewReader(in)), "half": iotest.HalfReader(strings.NewReader(in)),
	} {
		sr := newSSEReader(r)
		for i, want := range []struct {
			data    string
			scanned bool
		}{{long, true}, {bad, true}, {`{"a":1}`, false}, {long + "\n2", false}, {long, true}} {
			ev, err := sr.next()
			if err != nil || string(ev.data) != want.data {
				t.Fatalf("%s: event %d: %.60q, %v", name, i, ev.data, err)
			}
			if (ev.scan != nil) != want.scanned {
				t.Fatalf("%s: event %d: scanned %v", name, i, ev.scan != nil)
			}
			if ev.scan == nil {
				continue
			}
			members, err := jsonscan.Members(ev.data)
			if (ev.scan.err == nil) != (err == nil) || len(ev.scan.members) != len(members) {
				t.Fatalf("%s: event %d: %v %v, whole: %v %v", name, i, ev.scan.members, ev.scan.err, members, err)
			}
			for k := range members {
				if ev.scan.members[k] != members[k] {
					t.Fatalf("%s: event %d: member %d %+v, whole %+v", name, i, k, ev.scan.members[k], members[k])
				}
			}
		}
	}
}
