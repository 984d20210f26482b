package pad

import (
	"fmt"
	"strings"
)

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 3

// maxDiffCells bounds the LCS table; past it the diff degrades to one
// hunk replacing everything, which is still correct, just not minimal.
const maxDiffCells = 4 << 20

// unifiedDiff returns a unified diff from a to b, or "" when they are equal.
// Pads are small, so a quadratic LCS is simpler than Myers and fast enough.
func unifiedDiff(fromName, toName string, a, b []byte) string {
	if string(a) == string(b) {
		return ""
	}
	x, y := diffLines(string(a)), diffLines(string(b))
	ops := lcsOps(x, y)

	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", fromName, toName)
	// Group ops into hunks separated by more than 2*context equal lines.
	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i >= len(ops) {
			break
		}
		start := i - diffContext
		if start < 0 {
			start = 0
		}
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end += min(diffContext, run-end)
				break
			}
			end = run
		}
		writeHunk(&out, ops[start:end])
		i = end
	}
	return out.String()
}

type diffOp struct {
	kind         byte // ' ', '-', '+'
	text         string
	aLine, bLine int // 1-based positions before this op
}

func diffLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

func lcsOps(x, y []string) []diffOp {
	// Strip the common prefix and suffix first: a turn usually touches a
	// few lines of a pad, so the table stays tiny.
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	mx, my := x[pre:len(x)-suf], y[pre:len(y)-suf]
	var ops []diffOp
	ai, bi := 1, 1
	emit := func(kind byte, text string) {
		ops = append(ops, diffOp{kind: kind, text: text, aLine: ai, bLine: bi})
		switch kind {
		case ' ':
			ai++
			bi++
		case '-':
			ai++
		case '+':
			bi++
		}
	}
	for _, l := range x[:pre] {
		emit(' ', l)
	}
	n, m := len(mx), len(my)
	if n*m > maxDiffCells {
		for _, l := range mx {
			emit('-', l)
		}
		for _, l := range my {
			emit('+', l)
		}
	} else {
		// t[i][j] = LCS length of mx[i:], my[j:].
		t := make([][]int32, n+1)
		for i := range t {
			t[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if mx[i] == my[j] {
					t[i][j] = t[i+1][j+1] + 1
				} else {
					t[i][j] = max(t[i+1][j], t[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && mx[i] == my[j]:
				emit(' ', mx[i])
				i++
				j++
			case i < n && (j == m || t[i+1][j] >= t[i][j+1]):
				// Deletions first, as diff(1) shows them.
				emit('-', mx[i])
				i++
			default:
				emit('+', my[j])
				j++
			}
		}
	}
	for _, l := range x[len(x)-suf:] {
		emit(' ', l)
	}
	return ops
}

func writeHunk(out *strings.Builder, ops []diffOp) {
	if len(ops) == 0 {
		return
	}
	var aCount, bCount int
	for _, op := range ops {
		if op.kind != '+' {
			aCount++
		}
		if op.kind != '-' {
			bCount++
		}
	}
	aStart, bStart := ops[0].aLine, ops[0].bLine
	if aCount == 0 {
		aStart--
	}
	if bCount == 0 {
		bStart--
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aStart, aCount), hunkRange(bStart, bCount))
	for _, op := range ops {
		out.WriteByte(op.kind)
		out.WriteString(op.text)
		out.WriteByte('\n')
	}
}

func hunkRange(start, count int) string {
	if count == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}
