package budget

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// EventName is the event field of every [Usage] record and the SSE event
// name on GET /events.
const EventName = "scratchpad_usage"

// Usage is the scratchpad_usage record emitted once per finished agent.
type Usage struct {
	Event             string `json:"event"`
	AgentID           string `json:"agent_id"`
	AgentName         string `json:"agent_name"`
	Role              string `json:"role"`
	RunID             string `json:"run_id"`
	SessionID         string `json:"session_id"`
	Iteration         int    `json:"iteration,omitempty"`
	Owner             string `json:"owner,omitempty"`
	TokensIntercepted int    `json:"tokens_intercepted"`
	TokensExtracted   int    `json:"tokens_extracted"`
	// TokensByReference are the tokens of stored outputs the agent
	// handed to other tools by reference ({"$scratchpad": {"file": …}}):
	// what typing them out would have cost, never in its context.
	TokensByReference int `json:"tokens_by_reference"`
	Calls             int `json:"calls"`
	// SecretsMasked counts by kind the credentials masked in what the
	// agent was given or wrote ([redaction]); absent when none.
	SecretsMasked map[string]int `json:"secrets_masked,omitempty"`
	Time          time.Time      `json:"time"`
}

// maxUsageLine bounds one line of usage.jsonl; real records are ~300 bytes.
const maxUsageLine = 1 << 20

// ReadUsage reads the scratchpad_usage records of a usage.jsonl file, in
// file order, keeping only those of runID unless runID is empty. Lines that
// are not a scratchpad_usage record (a line torn by a crash, another
// event) are skipped, so one bad line never hides the rest. A missing file
// is an error that matches [fs.ErrNotExist].
func ReadUsage(path string, runID string) ([]Usage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("budget: read usage: %w", err)
	}
	defer f.Close()
	return readUsage(f, runID)
}

func readUsage(r io.Reader, runID string) ([]Usage, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxUsageLine)
	var out []Usage
	for sc.Scan() {
		var u Usage
		if json.Unmarshal(sc.Bytes(), &u) != nil || u.Event != EventName {
			continue
		}
		if runID != "" && u.RunID != runID {
			continue
		}
		out = append(out, u)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("budget: read usage: %w", err)
	}
	return out, nil
}

// FormatTable writes records as an aligned table, one row per finished
// agent in the given order, followed by a total row when there is more
// than one record. Text columns are left-aligned, counts right-aligned.
func FormatTable(w io.Writer, records []Usage) error {
	header := []string{"RUN", "AGENT", "ROLE", "ITER", "SESSION", "INTERCEPTED", "EXTRACTED", "BY REFERENCE", "CALLS", "FINISHED (UTC)"}
	numeric := []bool{false, false, false, true, false, true, true, true, true, false}
	rows := [][]string{header}
	var ti, te, tr, tc int
	for _, u := range records {
		iter, finished := "-", "-"
		if u.Iteration != 0 {
			iter = strconv.Itoa(u.Iteration)
		}
		if !u.Time.IsZero() {
			finished = u.Time.UTC().Format(time.DateTime)
		}
		rows = append(rows, []string{dash(u.RunID), dash(u.AgentName), dash(u.Role), iter, dash(u.SessionID),
			group(u.TokensIntercepted), group(u.TokensExtracted), group(u.TokensByReference), group(u.Calls), finished})
		ti += u.TokensIntercepted
		te += u.TokensExtracted
		tr += u.TokensByReference
		tc += u.Calls
	}
	if len(records) > 1 {
		rows = append(rows, []string{"TOTAL", fmt.Sprintf("%d agents", len(records)), "", "", "",
			group(ti), group(te), group(tr), group(tc), ""})
	}
	width := make([]int, len(header))
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		line := make([]string, len(r))
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if numeric[i] {
				line[i] = pad + c
			} else {
				line[i] = c + pad
			}
		}
		b.WriteString(strings.TrimRight(strings.Join(line, "  "), " "))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// group formats n with thousands separators: token counts run to millions.
func group(n int) string {
	s := strconv.Itoa(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}
