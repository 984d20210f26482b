package testupstream

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchMode, as [EnvMode], makes [MaybeRun] serve [Bench] over stdio.
const BenchMode = "bench"

// Bench builds the benchmark upstream: one tool, "blob", that returns
// one text block of about mb megabytes on the wire (the tools/call result
// as JSON, escapes included) in format "json" (a pod listing), "ndjson"
// (log records) or "text" (words). Outputs are built once per size and
// format and kept, so that a call's time is the transport's.
func Bench() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "benchupstream", Version: "1.0.0"}, nil)
	s.AddTool(tool("blob", "returns about mb MB of format (json, ndjson, text)", arg{"mb", "number", true}, arg{"format", "string", false}),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a := argsOf(req)
			return text(Blob(a.str("format", "json"), a.int("mb", 1))), nil
		})
	return s
}

// BenchHandler serves [Bench] over streamable HTTP.
func BenchHandler() http.Handler {
	s := Bench()
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
}

func maybeRunBench() {
	if os.Getenv(EnvMode) != BenchMode {
		return
	}
	t := &mcp.IOTransport{Reader: &stdin{r: os.Stdin}, Writer: nopCloser{os.Stdout}}
	_ = Bench().Run(context.Background(), t)
	os.Exit(0)
}

var (
	blobMu sync.Mutex
	blobs  = map[string]string{}
)

// Blob is the output of the bench upstream's blob tool: format's text,
// sized so that its tools/call result is about mb × 10⁶ bytes as JSON.
func Blob(format string, mb int) string {
	key := fmt.Sprint(format, mb)
	blobMu.Lock()
	defer blobMu.Unlock()
	if s, ok := blobs[key]; ok {
		return s
	}
	gen := map[string]func(n int) string{
		"json":   func(n int) string { return string(Listing(n)) },
		"ndjson": NDJSON,
		"text":   func(n int) string { return Words(n) },
		// Arrays opened millions deep: what a recursive JSON validator
		// does not survive.
		"deep": func(n int) string { return strings.Repeat("[ ", n) },
	}[format]
	if gen == nil {
		gen = func(n int) string { return string(Listing(n)) }
	}
	// Size one unit from a sample, as it will be on the wire.
	const sample = 2000
	wire := func(s string) int { b, _ := json.Marshal(s); return len(b) }
	per := float64(wire(gen(sample))) / sample
	s := gen(int(float64(mb) * 1e6 / per))
	blobs[key] = s
	return s
}

// NDJSON is n log records, one JSON object a line.
func NDJSON(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"ts":"2026-11-30T10:%02d:%02dZ","level":"info","msg":"request %d served","status":200,"path":"/api/v1/items/%d"}`+"\n", i/60%60, i%60, i, i%977)
	}
	return b.String()
}
