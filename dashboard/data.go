package dashboard

import (
	"cmp"
	"slices"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/budget"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
)

// Data is what the page draws, and the JSON of data.json.
type Data struct {
	Owner     string     `json:"owner"`
	Generated time.Time  `json:"generated"`
	Kept      Kept       `json:"kept"`
	ByTool    []ToolSum  `json:"by_tool"`
	Budgets   []Budget   `json:"budgets"`
	Biggest   []Diverted `json:"biggest"`
	Recent    []Call     `json:"recent"`
	Finished  Finished   `json:"finished"`
}

// Kept is the tokens kept out of the context over time: one cumulative
// series per server/tool (the largest [maxSeries]; the rest summed as
// "other").
type Kept struct {
	Total  int      `json:"total"`
	Series []Series `json:"series"`
	// ByReference are the tokens of stored outputs handed to tools by
	// reference: kept out of the context too, on the way out.
	ByReference int `json:"by_reference"`
}

// Series is one server/tool's cumulative diverted tokens.
type Series struct {
	Key    string     `json:"key"`
	Points [][2]int64 `json:"points"` // [unix ms, cumulative tokens]
}

// ToolSum is one server/tool's totals.
type ToolSum struct {
	Key      string `json:"key"`
	Diverted int    `json:"diverted"`
	Passed   int    `json:"passed"`
	// ByReference are the tokens its calls took by reference.
	ByReference int `json:"by_reference"`
	Calls       int `json:"calls"`
}

// Budget is one live agent's context budget.
type Budget struct {
	Agent   string    `json:"agent"`
	Run     string    `json:"run,omitempty"`
	Left    int       `json:"left"`
	Total   int       `json:"total"`
	Updated time.Time `json:"updated"`
}

// Diverted is one stored output.
type Diverted struct {
	Time   time.Time `json:"time"`
	Key    string    `json:"key"`
	File   string    `json:"file"`
	Tokens int       `json:"tokens"`
}

// Call is one recent call.
type Call struct {
	Time       time.Time `json:"time"`
	Agent      string    `json:"agent,omitempty"`
	Key        string    `json:"key"`
	Outcome    string    `json:"outcome"`
	DurationMS float64   `json:"duration_ms"`
	TokensIn   int       `json:"tokens_in"`
	TokensOut  int       `json:"tokens_out"`
	// ByReference are the tokens its arguments took by reference.
	ByReference int `json:"tokens_by_reference,omitempty"`
}

// Finished sums the usage records of finished agents (usage.jsonl).
type Finished struct {
	Agents      int `json:"agents"`
	Intercepted int `json:"intercepted"`
	Extracted   int `json:"extracted"`
	ByReference int `json:"by_reference"`
	Calls       int `json:"calls"`
}

// Bounds of what the page shows.
const (
	maxSeries  = 6
	maxTools   = 12
	maxBiggest = 10
	maxRecent  = 50
	maxBudgets = 24
	// maxPoints bounds one series' points: a long day of calls is
	// thinned to this many.
	maxPoints = 400
)

// LiveFor is how long after its last call an agent counts as live (its
// budget bar shown).
const LiveFor = 30 * time.Minute

// Build computes the page's data from calls (oldest first, all of one
// owner) and usage (that owner's finished agents) as of now.
func Build(owner string, calls []telemetry.Record, usage []budget.Usage, now time.Time) Data {
	d := Data{Owner: owner, Generated: now.UTC(), Kept: Kept{Series: []Series{}}, ByTool: []ToolSum{}, Budgets: []Budget{},
		Biggest: []Diverted{}, Recent: []Call{}}
	calls = slices.Clone(calls)
	slices.SortStableFunc(calls, func(a, b telemetry.Record) int { return a.Time.Compare(b.Time) })
	sums := map[string]*ToolSum{}
	budgets := map[string]*Budget{}
	for _, c := range calls {
		k := key(c)
		s := sums[k]
		if s == nil {
			s = &ToolSum{Key: k}
			sums[k] = s
		}
		s.Calls++
		s.Diverted += c.Diverted
		if c.Diverted == 0 {
			s.Passed += c.TokensOut
		}
		d.Kept.Total += c.Diverted
		s.ByReference += c.ByReference
		d.Kept.ByReference += c.ByReference
		if c.Diverted > 0 {
			d.Biggest = append(d.Biggest, Diverted{Time: c.Time, Key: k, File: c.File, Tokens: c.Diverted})
		}
		if c.Agent != "" && c.BudgetSize > 0 {
			bk := c.Run + "\x00" + c.Agent
			budgets[bk] = &Budget{Agent: c.Agent, Run: c.Run, Left: c.BudgetLeft, Total: c.BudgetSize, Updated: c.Time}
		}
	}
	// Series: the largest keys by diverted; the others folded into one.
	top := make([]*ToolSum, 0, len(sums))
	for _, s := range sums {
		top = append(top, s)
	}
	slices.SortFunc(top, func(a, b *ToolSum) int { return cmp.Or(cmp.Compare(b.Diverted, a.Diverted), cmp.Compare(a.Key, b.Key)) })
	for i, s := range top {
		if i == maxTools {
			break
		}
		d.ByTool = append(d.ByTool, *s)
	}
	diverting := 0
	for _, s := range top {
		if s.Diverted > 0 {
			diverting++
		}
	}
	own := diverting // keys with their own series
	if diverting > maxSeries {
		own = maxSeries - 1
	}
	seriesOf := map[string]int{}
	for _, s := range top[:own] {
		seriesOf[s.Key] = len(d.Kept.Series)
		d.Kept.Series = append(d.Kept.Series, Series{Key: s.Key})
	}
	other := -1
	cum := make([]int64, len(d.Kept.Series)+1)
	for _, c := range calls {
		if c.Diverted == 0 {
			continue
		}
		i, ok := seriesOf[key(c)]
		if !ok {
			if other < 0 {
				other = len(d.Kept.Series)
				d.Kept.Series = append(d.Kept.Series, Series{Key: telemetry.OtherLabel})
			}
			i = other
		}
		cum[i] += int64(c.Diverted)
		d.Kept.Series[i].Points = append(d.Kept.Series[i].Points, [2]int64{c.Time.UnixMilli(), cum[i]})
	}
	for i := range d.Kept.Series {
		d.Kept.Series[i].Points = thin(d.Kept.Series[i].Points, maxPoints)
	}
	slices.SortFunc(d.Biggest, func(a, b Diverted) int { return cmp.Or(cmp.Compare(b.Tokens, a.Tokens), b.Time.Compare(a.Time)) })
	d.Biggest = d.Biggest[:min(len(d.Biggest), maxBiggest)]
	for _, b := range budgets {
		if now.Sub(b.Updated) <= LiveFor {
			d.Budgets = append(d.Budgets, *b)
		}
	}
	slices.SortFunc(d.Budgets, func(a, b Budget) int { return cmp.Or(cmp.Compare(a.Run, b.Run), cmp.Compare(a.Agent, b.Agent)) })
	d.Budgets = d.Budgets[:min(len(d.Budgets), maxBudgets)]
	for i := len(calls) - 1; i >= 0 && len(d.Recent) < maxRecent; i-- {
		c := calls[i]
		d.Recent = append(d.Recent, Call{Time: c.Time, Agent: c.Agent, Key: key(c), Outcome: c.Outcome, DurationMS: c.DurationMS, TokensIn: c.TokensIn, TokensOut: c.TokensOut, ByReference: c.ByReference})
	}
	for _, u := range usage {
		d.Finished.Agents++
		d.Finished.Intercepted += u.TokensIntercepted
		d.Finished.Extracted += u.TokensExtracted
		d.Finished.ByReference += u.TokensByReference
		d.Finished.Calls += u.Calls
	}
	return d
}

// key names a call's server and tool as the page shows them.
func key(c telemetry.Record) string {
	if c.Server == "" {
		return c.Tool
	}
	return c.Server + "/" + c.Tool
}

// thin keeps at most n points of a cumulative series, the last always.
func thin(p [][2]int64, n int) [][2]int64 {
	if len(p) <= n {
		return p
	}
	out := make([][2]int64, 0, n)
	step := float64(len(p)-1) / float64(n-1)
	for i := range n {
		out = append(out, p[int(float64(i)*step+0.5)])
	}
	out[n-1] = p[len(p)-1]
	return out
}
