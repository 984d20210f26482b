package divert

import (
	"encoding/json"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// textResult is a tools/call result of one text block, plus structured
// content when structured is not empty.
func textResult(t testing.TB, text string, structured json.RawMessage) []byte {
	m := map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
	if len(structured) > 0 {
		m["structuredContent"] = structured
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestExactCountOfBigOutputs: past ExactCountLimit the pointer has an
// estimate and the account's Intercepted gets the exact count of what the model would
// have read, read back from the file for the layouts it can give back and
// counted at once (no estimate) for the others.
func TestExactCountOfBigOutputs(t *testing.T) {
	c := tokens.ForModel("openai", "gpt-4o")
	compact, indented, four := layouts(t, 3000)
	spaced := strings.NewReplacer(`":`, `": `, `,"`, `, "`, `,{`, `, {`, `,[`, `, [`).Replace(string(compact))
	for _, tt := range []struct {
		name       string
		text       string
		structured json.RawMessage
		estimated  bool
	}{
		{"compact", string(compact), nil, true},
		{"indented", string(indented), nil, true},
		{"spaced", spaced, nil, true},
		{"four spaces", string(four), nil, false},
		{"ndjson", testupstream.NDJSON(20000), nil, true},
		{"words", testupstream.Words(400000), nil, true},
		{"text and structured", string(compact), compact, true},
		{"structured only", "", compact, true},
		{"text and structured, structured view", testupstream.Words(400000), compact, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// What the model reads, counted once: the text, or the
			// structured content when there is no text (or the client
			// shows that).
			structuredView := strings.HasSuffix(tt.name, "structured view")
			want := 0
			if tt.text != "" && !structuredView {
				want = c.Count([]byte(tt.text))
			} else {
				want = c.Count(tt.structured)
			}
			got := make(chan int, 1)
			a := &Agent{Enabled: true, Dir: t.TempDir(), Counter: c, Account: funcs{intercepted: func(n int) { got <- n }}, Structured: structuredView}
			out, err := Decide(Call{Server: "s", Tool: "t", Threshold: 100, Result: textResult(t, tt.text, tt.structured), Owned: true, Valid: true},
				a, Options{ExactCountLimit: 64 << 10, Logger: slog.New(slog.DiscardHandler)})
			if err != nil || !out.Diverted {
				t.Fatalf("%v %.200s", err, out.Result)
			}
			if out.Pointer.Estimated != tt.estimated {
				t.Fatalf("estimated %v, want %v", out.Pointer.Estimated, tt.estimated)
			}
			if !tt.estimated && out.Pointer.Tokens != want {
				t.Fatalf("pointer says %d tokens, want %d", out.Pointer.Tokens, want)
			}
			select {
			case n := <-got:
				if n != want {
					t.Fatalf("exact count %d, want %d (pointer %d)", n, want, out.Pointer.Tokens)
				}
			case <-time.After(time.Minute):
				t.Fatal("no exact count")
			}
		})
	}
}

// heldCounter is a counter whose streamed counts wait for release.
type heldCounter struct {
	*tokens.Counter
	started, release chan struct{}
}

func (h heldCounter) CountReader(r io.Reader) (int, error) {
	close(h.started)
	<-h.release
	return h.Counter.CountReader(r)
}

// TestBackgroundCountLetsTheOutputGo: while the exact count of a big
// diverted output runs, the output is not held: its memory is free as soon
// as Decide returns.
func TestBackgroundCountLetsTheOutputGo(t *testing.T) {
	const size = 48 << 20
	h := heldCounter{tokens.ForModel("openai", "gpt-4o"), make(chan struct{}), make(chan struct{})}
	got := make(chan int, 1)
	a := &Agent{Enabled: true, Dir: t.TempDir(), Counter: h, Account: funcs{intercepted: func(n int) { got <- n }}}
	raw := textResult(t, testupstream.Words(size/7), nil)
	if len(raw) < size/2 {
		t.Fatalf("result of %d bytes", len(raw))
	}
	want := len(raw)
	// The vocabulary loaded, what is on the heap without the output.
	h.Count([]byte("x"))
	base := liveHeap() - uint64(len(raw))
	out, err := Decide(Call{Server: "s", Tool: "t", Threshold: 100, Result: raw, Owned: true, Valid: true}, a, Options{Logger: slog.New(slog.DiscardHandler)})
	raw = nil
	if err != nil || !out.Diverted || !out.Pointer.Estimated {
		t.Fatalf("%v %+v", err, out.Pointer)
	}
	<-h.started
	heap := liveHeap()
	close(h.release)
	if heap > base+uint64(want)/2 {
		t.Fatalf("%d MiB on the heap (%d before the output) while counting a %d MiB output: it is held", heap>>20, base>>20, want>>20)
	}
	select {
	case <-got:
	case <-time.After(time.Minute):
		t.Fatal("no exact count")
	}
}

// liveHeap is the heap in use after two collections (the second empties
// what sync.Pools kept through the first, such as encoding/json's buffers).
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestDeepTextIsStoredAsText: text that opens arrays twelve million deep is
// not JSON here (it is past jsonscan.MaxDepth), so it is stored as text; a
// recursive validator would end the process with a stack overflow.
func TestDeepTextIsStoredAsText(t *testing.T) {
	text := strings.Repeat("[ ", 12<<20)
	a := &Agent{Enabled: true, Dir: t.TempDir(), Counter: tokens.ForModel("openai", "gpt-4o")}
	out, err := Decide(Call{Server: "s", Tool: "t", Threshold: 100, Result: textResult(t, text, nil)}, a, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil || !out.Diverted || out.Pointer.Stored.Format != FormatText {
		t.Fatalf("%v, diverted %v, format %q", err, out.Diverted, out.Pointer.Stored.Format)
	}
	if DetectFormat([]byte(text+"\n"+text)) != FormatText {
		t.Fatal("two deep lines taken for NDJSON")
	}
}
