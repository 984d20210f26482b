package dashboard

import (
	"fmt"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/budget"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
)

var t0 = time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)

// sample is a morning of calls: github's search diverts big listings,
// get_issue passes through, grep explores; two agents with budgets.
func sample() []telemetry.Record {
	var out []telemetry.Record
	for i := range 20 {
		at := t0.Add(time.Duration(i) * time.Minute)
		out = append(out,
			telemetry.Record{Time: at, Agent: "w1", Run: "r1", Server: "github", Tool: "search", Outcome: "ok", TokensIn: 30000 + i*1000, TokensOut: 150,
				Diverted: 30000 + i*1000, File: fmt.Sprintf("scratchpad/search-%d.json", i), DurationMS: 400 + float64(i*10), BudgetLeft: 180000 - i*2000, BudgetSize: 200000},
			telemetry.Record{Time: at.Add(10 * time.Second), Agent: "w2", Run: "r1", Server: "github", Tool: "get_issue", Outcome: "ok", TokensIn: 900, TokensOut: 900,
				DurationMS: 120, BudgetLeft: 30000 - i*1000, BudgetSize: 200000},
			telemetry.Record{Time: at.Add(20 * time.Second), Agent: "w1", Run: "r1", Server: "k8s", Tool: "logs", Outcome: "ok", TokensIn: 12000, TokensOut: 100,
				Diverted: 12000, File: fmt.Sprintf("scratchpad/logs-%d.txt", i), DurationMS: 2500},
			telemetry.Record{Time: at.Add(30 * time.Second), Agent: "w1", Run: "r1", Tool: "grep", Outcome: "tool_error", TokensIn: 300, TokensOut: 300, DurationMS: 3},
		)
		if i%5 == 0 { // four writes of a stored listing by reference
			out = append(out, telemetry.Record{Time: at.Add(40 * time.Second), Agent: "w1", Run: "r1", Server: "fs", Tool: "write_file", Outcome: "ok", TokensIn: 12, TokensOut: 12,
				ByReference: 25000, Referenced: []string{fmt.Sprintf("search-%d.json", i)}, DurationMS: 30})
		}
	}
	return out
}

func TestBuild(t *testing.T) {
	now := t0.Add(25 * time.Minute)
	d := Build("team-a", sample(), []budget.Usage{{TokensIntercepted: 5000, TokensExtracted: 300, Calls: 9}, {TokensIntercepted: 1000, TokensByReference: 70, Calls: 1}}, now)
	wantKept := 0
	for i := range 20 {
		wantKept += 30000 + i*1000 + 12000
	}
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"owner", d.Owner, "team-a"},
		{"kept total", d.Kept.Total, wantKept},
		{"series", len(d.Kept.Series), 2},
		{"first series", d.Kept.Series[0].Key, "github/search"},
		{"series end", d.Kept.Series[0].Points[19][1], int64(20*30000 + 190*1000)},
		{"tools", len(d.ByTool), 5},
		{"by reference", d.Kept.ByReference, 100000},
		{"by reference of a tool", d.ByTool[2].Key + fmt.Sprint(d.ByTool[2].ByReference), "fs/write_file100000"},
		{"tool order", d.ByTool[0].Key + " " + d.ByTool[1].Key, "github/search k8s/logs"},
		{"passed", d.ByTool[3].Key + fmt.Sprint(d.ByTool[3].Passed), "github/get_issue18000"},
		{"biggest", len(d.Biggest), maxBiggest},
		{"biggest first", d.Biggest[0].File, "scratchpad/search-19.json"},
		{"budgets", len(d.Budgets), 2},
		{"budget w1", fmt.Sprintf("%s %d %d", d.Budgets[0].Agent, d.Budgets[0].Left, d.Budgets[0].Total), "w1 142000 200000"},
		{"recent", len(d.Recent), maxRecent},
		{"recent newest first", d.Recent[0].Key + " " + d.Recent[0].Outcome, "grep tool_error"},
		{"recent by reference", d.Recent[16].Key + fmt.Sprint(d.Recent[16].ByReference), "fs/write_file25000"},
		{"finished", d.Finished, Finished{Agents: 2, Intercepted: 6000, Extracted: 300, ByReference: 70, Calls: 10}},
	} {
		if fmt.Sprint(tc.got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	// An hour later nobody is live.
	if d := Build("", sample(), nil, now.Add(time.Hour)); len(d.Budgets) != 0 {
		t.Errorf("stale agents shown: %+v", d.Budgets)
	}
}

// TestBuildFoldsSeries: past maxSeries diverting tools, the smallest
// share one "other" series; points are thinned to maxPoints.
func TestBuildFoldsSeries(t *testing.T) {
	var recs []telemetry.Record
	for i := range 10 {
		for j := range 100 {
			recs = append(recs, telemetry.Record{Time: t0.Add(time.Duration(i*100+j) * time.Second), Server: "s", Tool: fmt.Sprintf("t%d", i), Diverted: (i + 1) * 100})
		}
	}
	d := Build("", recs, nil, t0)
	if len(d.Kept.Series) != maxSeries || d.Kept.Series[maxSeries-1].Key != telemetry.OtherLabel || d.Kept.Series[0].Key != "s/t9" {
		t.Fatalf("series %v", keys(d.Kept.Series))
	}
	other := d.Kept.Series[maxSeries-1].Points
	if len(other) != maxPoints || other[len(other)-1][1] != (1+2+3+4+5)*100*100 {
		t.Errorf("other: %d points, last %v", len(other), other[len(other)-1])
	}
}

func keys(s []Series) []string {
	var out []string
	for _, x := range s {
		out = append(out, x.Key)
	}
	return out
}
