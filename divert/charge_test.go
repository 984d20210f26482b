package divert

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// A result with the same data as text and as structuredContent (what
// every tool with an outputSchema answers) costs its text once: at a
// threshold between one and two times that, it passes through, and above
// it the pointer's figure is the text's count.
func TestTextCountedOnce(t *testing.T) {
	c := tokens.ForModel("openai", "gpt-4o")
	data := testupstream.Listing(40)
	n := c.Count(data)
	res := textResult(t, string(data), data)
	a := &Agent{Enabled: true, Dir: t.TempDir(), Counter: c}
	opts := Options{Logger: slog.New(slog.DiscardHandler)}

	out, err := Decide(Call{Server: "fs", Tool: "read_text_file", Threshold: n + n/2, Result: append([]byte(nil), res...)}, a, opts)
	if err != nil || out.Diverted {
		t.Fatalf("a %d-token text at a threshold of %d: diverted %v, %v", n, n+n/2, out.Diverted, err)
	}
	out, err = Decide(Call{Server: "fs", Tool: "read_text_file", Threshold: n, Result: append([]byte(nil), res...)}, a, opts)
	if err != nil || !out.Diverted || out.Pointer.Tokens != n || out.Pointer.Estimated {
		t.Fatalf("at the threshold: diverted %v, pointer %d tokens (estimated %v), want %d; %v", out.Diverted, out.Pointer.Tokens, out.Pointer.Estimated, n, err)
	}
	// A client that shows the structured form: that is what counts.
	sc := c.Count(data) // the same bytes here: compact JSON either way
	a.Structured = true
	out, err = Decide(Call{Server: "fs", Tool: "read_text_file", Threshold: sc, Result: textResult(t, "short", data)}, a, opts)
	if err != nil || !out.Diverted || out.Pointer.Tokens != sc {
		t.Fatalf("structured view: diverted %v, pointer %d, want %d; %v", out.Diverted, out.Pointer.Tokens, sc, err)
	}
}

// Charge reports what the model receives of any result, exactly, once.
func TestCharge(t *testing.T) {
	c := tokens.ForModel("openai", "gpt-4o")
	data := testupstream.Listing(40)
	words := testupstream.Words(300)
	var got atomic.Int64
	a := &Agent{Counter: c, Account: funcs{charged: func(n int) { got.Add(int64(n)) }}}
	two, _ := json.Marshal(map[string]any{"content": []any{
		map[string]any{"type": "text", "text": words},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///x", "text": string(data)}},
	}})
	image, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}}})
	for _, tt := range []struct {
		name   string
		result []byte
		want   int
	}{
		{"text and structured", textResult(t, string(data), data), c.Count(data)},
		{"structured only", textResult(t, "", data), c.Count(data)},
		{"text and a resource", two, c.Count([]byte(words + "\n" + string(data)))},
		{"an error", errorResult("upstream \"fs\" did not answer"), c.Count([]byte("upstream \"fs\" did not answer"))},
		{"an image", image, 0},
		{"not a result", []byte(`[1,2]`), 0},
	} {
		got.Store(0)
		Charge(context.Background(), a, tt.result, true)
		if int(got.Load()) != tt.want {
			t.Errorf("%s: charged %d, want %d", tt.name, got.Load(), tt.want)
		}
	}

	// Over 1 MiB: counted in the background, tracked until reported.
	big := testupstream.Words(400000)
	var pending sync.WaitGroup
	a.Account = funcs{charged: func(n int) { got.Add(int64(n)) }, track: func() func() { pending.Add(1); return pending.Done }}
	got.Store(0)
	Charge(context.Background(), a, textResult(t, big, nil), true)
	pending.Wait()
	if want := c.Count([]byte(big)); int(got.Load()) != want {
		t.Fatalf("big result: charged %d, want %d", got.Load(), want)
	}
}

// A big result's count waits for the call to end (its answer written),
// so that it does not take the cores the answer's write needs, and for
// chargeWait at most. In a synctest bubble, synctest.Wait returns once
// the count's goroutine is blocked or gone: a count that did not wait
// would have been reported by then.
func TestChargeWaitsForTheCallsEnd(t *testing.T) {
	c := tokens.ForModel("openai", "gpt-4o")
	big := testupstream.Words(400000)
	want := c.Count([]byte(big))
	result := textResult(t, big, nil)
	// charge starts the charge of result with ctx; charged reports the
	// counts reported so far.
	charge := func(ctx context.Context) (charged func() []int) {
		var mu sync.Mutex
		var got []int
		Charge(ctx, &Agent{Counter: c, Account: funcs{charged: func(n int) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, n)
		}}}, result, true)
		return func() []int {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(got)
		}
	}
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		charged := charge(ctx)
		synctest.Wait()
		if got := charged(); len(got) != 0 {
			t.Fatalf("charged %v while the call was still on (its answer not written yet)", got)
		}
		cancel()
		synctest.Wait()
		if got := charged(); !slices.Equal(got, []int{want}) {
			t.Fatalf("after the call's end: charged %v, want [%d]", got, want)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// A context that never ends delays the count by chargeWait.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		charged := charge(ctx)
		time.Sleep(chargeWait - time.Millisecond)
		synctest.Wait()
		if got := charged(); len(got) != 0 {
			t.Fatalf("charged %v before chargeWait", got)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if got := charged(); !slices.Equal(got, []int{want}) {
			t.Fatalf("after chargeWait: charged %v, want [%d]", got, want)
		}
	})
}

// The text read a piece at a time is the text: escapes (surrogate pairs
// too) are never split, whatever the piece size.
func TestTextReader(t *testing.T) {
	c := tokens.ForModel("openai", "gpt-4o")
	texts := []string{
		testupstream.Blob("json", 2),
		testupstream.Blob("text", 1),
		strings.Repeat("é😀\t\"\\/ \u2028x", 30000),
		"",
	}
	var lits []string
	for _, s := range texts {
		b, _ := json.Marshal(s)
		lits = append(lits, string(b))
	}
	// Escapes of every kind, a surrogate pair among them.
	lits = append(lits, `"\ud83d\ude00\n\u00e9\\\"`+strings.Repeat(`\ud83d\ude00`, 20000)+`"`)
	v := modelView{texts: lits}
	want := v.text(-1, false)
	got, err := io.ReadAll(newTextReader(lits))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes (%v), want %d", len(got), err, len(want))
	}
	// Pieces of every size cut no escape: a piece ends where the
	// unescaper stopped, at an escape boundary.
	small := []string{`"ab\ud83d\ude00cd\nef\u00e9\ud83dx\\\"g"`}
	sv := modelView{texts: small}
	whole := sv.text(-1, false)
	for piece := 1; piece <= 14; piece++ {
		got, err := io.ReadAll(newTextReaderPiece(small, piece))
		if err != nil || !bytes.Equal(got, whole) {
			t.Fatalf("pieces of %d: read %q (%v), want %q", piece, got, err, whole)
		}
	}
	if n, _ := c.CountReader(newTextReader(lits)); n != c.Count(want) {
		t.Fatalf("streamed count %d, want %d", n, c.Count(want))
	}
}
