package telemetry

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// TestTallyMerges: what the layers under the server note on its span adds
// up, from several goroutines, and reads back whole.
func TestTallyMerges(t *testing.T) {
	p := openTest(t, config.Telemetry{AuditLog: t.TempDir() + "/a.jsonl"}, nil)
	ctx, sp := p.StartServer(context.Background(), Op{Method: "tools/call", Target: "write_file"})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ServerSpan(ctx).Note(Tally{Charged: 10, Out: 10, ByReference: 1000, Referenced: []string{"f" + string(rune('0'+i))}})
		}()
	}
	wg.Wait()
	ServerSpan(ctx).Note(Tally{Agent: "w1", File: "x.json", Diverted: 5})
	got := sp.Tally()
	slices.Sort(got.Referenced)
	if got.Agent != "w1" || got.File != "x.json" || got.Charged != 40 || got.Out != 40 || got.Diverted != 5 || got.ByReference != 4000 ||
		!slices.Equal(got.Referenced, []string{"f0", "f1", "f2", "f3"}) {
		t.Errorf("tally %+v", got)
	}
	sp.End(Outcome{})
	if (*Span)(nil).Tally().ByReference != 0 {
		t.Error("a nil span has a tally")
	}
}
