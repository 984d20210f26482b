// Command sessmem measures what idle sessions hold: it opens 1,000
// streamable HTTP sessions (initialize, initialized) on a server started
// with --debug-stats and prints the goroutines and live heap before and
// after.
//
//	go run ./scripts/sessmem http://127.0.0.1:8931
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

func stats(base string) (g int, heap uint64) {
	resp, err := http.Get(base + "/debug/stats?gc=1")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var s struct {
		Goroutines int    `json:"goroutines"`
		HeapAlloc  uint64 `json:"heap_alloc"`
	}
	json.NewDecoder(resp.Body).Decode(&s)
	return s.Goroutines, s.HeapAlloc
}

func main() {
	base := os.Args[1]
	g0, h0 := stats(base)
	const n = 1000
	for i := 0; i < n; i++ {
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"m","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		sid := resp.Header.Get("Mcp-Session-Id")
		req, _ = http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err = http.DefaultClient.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	g1, h1 := stats(base)
	fmt.Printf("%d idle sessions: goroutines %d -> %d (%.1f each), heap %d -> %d KiB (%.1f KiB each)\n", n, g0, g1, float64(g1-g0)/n, h0>>10, h1>>10, float64(h1-h0)/1024/n)
}
