package explore

import (
	"context"
	"sync"
	"sync/atomic"
)

// Numbers that arrive as text: node-postgres sends bigint, numeric and
// count(*) as JSON strings ("installed_size_kb": "993"), and RFC 9535
// compares a string with a number as neither equal nor ordered, so a
// filter @.installed_size_kb > 100000 would match nothing and a sort
// would put "993" before "99". Where every non-null value of a field is
// a decimal number written as a string, the field is read as those
// numbers: in a filter's comparisons with a number, in sort_by, and in
// count_by's statistics; the footer says so. A field where such strings
// stand next to other values (numbers, other text) is compared as the RFC
// says, and the footer says that too. item_schema reports such strings as
// "string (numeric)".

// textNumber is the number a string holds when it is a decimal number:
// -?digits[.digits][(e|E)[+-]digits], nothing around it.
func textNumber(s []byte) (float64, bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	d := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == d {
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		f := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == f {
			return 0, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		x := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == x {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	return parseNum(s), true
}

// rawTextNumber is textNumber of a raw JSON string value (quotes
// included); a string with escapes is not a number written as text.
func rawTextNumber(raw []byte) (float64, bool) {
	if len(raw) < 3 || raw[0] != '"' {
		return 0, false
	}
	in := raw[1 : len(raw)-1]
	if c := in[0]; c != '-' && !isDigit(c) {
		return 0, false
	}
	return textNumber(in)
}

// numState is what the values of a field are, as far as numbers as text
// go.
type numState uint8

const (
	numNone  numState = iota // no decimal number written as a string: nothing to say
	numText                  // every non-null value is one: read as the number
	numMixed                 // some are, next to other values: as RFC 9535 says
)

// numTally counts the values of a field.
type numTally struct {
	text  int // decimal numbers written as strings
	other int // any other value but null
}

// add counts one raw JSON value.
func (t *numTally) add(raw []byte) {
	switch {
	case len(raw) == 0 || raw[0] == 'n':
	case raw[0] == '"':
		if _, ok := rawTextNumber(raw); ok {
			t.text++
		} else {
			t.other++
		}
	default:
		t.other++
	}
}

func (t numTally) state() numState {
	switch {
	case t.text == 0:
		return numNone
	case t.other == 0:
		return numText
	}
	return numMixed
}

// numNote is what a footer says about a field whose numbers arrived as
// text; how says what was done with a mixed one.
type numNote struct {
	field string
	state numState
	how   string
}

func (n numNote) String() string {
	if n.state == numText {
		return n.field + ": numbers as text, compared as numbers"
	}
	return n.field + ": numbers as text mixed with other values, " + n.how
}

// numNotesText renders notes for a footer: "; a: …; b: …".
func numNotesText(notes []numNote) string {
	s := ""
	for _, n := range notes {
		s += "; " + n.String()
	}
	return s
}

// mixedCompared is how a filter treats a mixed field.
const mixedCompared = "compared as RFC 9535 says (text is not a number)"

// numOperands lists the operands of n that are singular relative queries
// compared with a number (a number literal, length() or count(), or an in
// list holding one), outside nested filters: the fields a filter compares
// with numbers.
func numOperands(n *fnode, out []*operand) []*operand {
	switch n.op {
	case opOr, opAnd, opNot:
		for _, k := range n.kids {
			out = numOperands(k, out)
		}
		return out
	case opTest:
		return out
	}
	field := func(o *operand) bool { return o != nil && o.kind == oQuery && o.q.singular && !o.q.abs }
	number := func(o *operand) bool {
		return o != nil && (o.kind == oLit && o.lit.k == vNum || o.kind == oFunc && (o.fn == "length" || o.fn == "count"))
	}
	switch n.cmp {
	case "=~":
	case "in":
		for _, v := range n.set {
			if v.k == vNum && field(n.l) {
				return append(out, n.l)
			}
		}
	default:
		if field(n.l) && number(n.r) {
			out = append(out, n.l)
		}
		if field(n.r) && number(n.l) {
			out = append(out, n.r)
		}
	}
	return out
}

// numWatch follows a field a filter compares with numbers: what the scan
// before the filter saw of it, and the decimal numbers written as strings
// the filter then met in comparisons (a field read as the RFC says, whose
// scan stopped at its first value that is no such string).
type numWatch struct {
	name string
	scan numTally
	seen atomic.Int64
}

// numScan is markNumText's result: the fields it follows.
type numScan struct{ watches []*numWatch }

// notes is what the footer says about the fields, once the filter ran.
func (s *numScan) notes() []numNote {
	if s == nil {
		return nil
	}
	var out []numNote
	for _, w := range s.watches {
		t := w.scan
		t.text += int(w.seen.Load())
		if st := t.state(); st != numNone {
			out = append(out, numNote{field: w.name, state: st, how: mixedCompared})
		}
	}
	return out
}

// markNumText looks at the values, in the items, of the fields f compares
// with numbers, and marks those whose every non-null value is a decimal
// number written as a string to be read as the number (operand.numText).
// The scan of a field stops at its first value that is no such string (a
// JSON number: the usual case, decided by the first item); the filter
// then counts the numbers as text it compares (operand.watch), so that the
// footer can say the field is mixed (numScan.notes, after the filter ran).
func markNumText(ctx context.Context, it items, f *filter) (*numScan, error) {
	ops := numOperands(f.root, nil)
	if len(ops) == 0 {
		return nil, nil
	}
	scan := &numScan{}
	var queries []*fquery
	slot := make([]int, len(ops))
	for i, o := range ops {
		o.numText, o.watch = false, nil
		name := fieldName(o.q)
		j := 0
		for j < len(scan.watches) && scan.watches[j].name != name {
			j++
		}
		if j == len(scan.watches) {
			scan.watches = append(scan.watches, &numWatch{name: name})
			queries = append(queries, o.q)
		}
		slot[i] = j
	}
	n := len(queries)
	var (
		mu      sync.Mutex
		decided atomic.Bool // every field has a value that is no number as text
	)
	err := it.d.forChunks(ctx, it.len(), func(e *evaluator, _, lo, hi int) {
		local := make([]numTally, n)
		others := 0 // fields with such a value, in this chunk
		for i := lo; i < hi && others < n && !decided.Load(); i++ {
			s, ok := it.at(i)
			if !ok {
				continue
			}
			for j, q := range queries {
				if v, ok := e.single(q, s); ok {
					before := local[j].other
					local[j].add(e.data[v.start:v.end])
					if before == 0 && local[j].other > 0 {
						others++
					}
				}
			}
		}
		mu.Lock()
		defer mu.Unlock()
		all := true
		for j, w := range scan.watches {
			w.scan.text += local[j].text
			w.scan.other += local[j].other
			all = all && w.scan.other > 0
		}
		if all {
			decided.Store(true)
		}
	})
	if err != nil {
		return nil, err
	}
	for i, o := range ops {
		w := scan.watches[slot[i]]
		if w.scan.state() == numText {
			o.numText = true
		} else {
			o.watch = w
		}
	}
	return scan, nil
}
