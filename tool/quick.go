package tool

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// A quick is a proof of validity for the usual call: the keywords [Args]
// generates (type, properties, required, items, enum of strings,
// minimum/maximum of integers, maxLength, maxItems), checked without the
// validator's exact arithmetic — santhosh-tekuri/jsonschema turns every
// number into a big.Rat through fmt.Sprint, which made it most of a warm
// exploration call's cost (BenchmarkDecode).
//
// It only ever answers "valid, certainly" or "ask the validator": any
// keyword it does not know, a number it cannot compare exactly (1.0 for an
// integer, a bound that is not an integer, a bounded "number"), a value it
// would refuse — each sends the call to the validator, which stays the
// judge and says every problem. FuzzQuickImpliesValidator holds it to the
// validator: what it accepts, the validator accepts.
type quick struct {
	kind       string // "" any value, else the JSON type
	enum       map[string]bool
	min, max   *int64 // integers only
	maxLength  int    // -1 none
	maxItems   int    // -1 none
	items      *quick
	properties map[string]*quick
	required   []string
	open       bool // additionalProperties: true, or absent
	// unsure is a part quick does not check: a value there goes to the
	// validator (the rest of the schema is still checked quickly).
	unsure bool
}

var unsure = &quick{unsure: true}

// newQuick compiles schema (as [Args] lists it); the parts beyond what
// quick checks are unsure, nil when the schema does not read.
func newQuick(schema []byte) *quick {
	d := json.NewDecoder(bytes.NewReader(schema))
	d.UseNumber()
	var m map[string]any
	if d.Decode(&m) != nil {
		return nil
	}
	return quickOf(m)
}

func quickOf(m map[string]any) *quick {
	q := &quick{maxLength: -1, maxItems: -1, open: true}
	for k, v := range m {
		switch k {
		case "description", "title", "default":
			// Annotations: no part of validity.
		case "type":
			s, ok := v.(string)
			if !ok {
				return unsure // a list of types
			}
			q.kind = s
		case "enum":
			vals, _ := v.([]any)
			q.enum = map[string]bool{}
			for _, x := range vals {
				s, ok := x.(string)
				if !ok {
					return unsure
				}
				q.enum[s] = true
			}
		case "minimum", "maximum":
			n, err := strconv.ParseInt(string(asNumber(v)), 10, 64)
			if err != nil {
				return unsure // not an integer bound: compared exactly by the validator only
			}
			if k == "minimum" {
				q.min = &n
			} else {
				q.max = &n
			}
		case "maxLength", "maxItems":
			n, err := strconv.Atoi(string(asNumber(v)))
			if err != nil || n < 0 {
				return unsure
			}
			if k == "maxLength" {
				q.maxLength = n
			} else {
				q.maxItems = n
			}
		case "items":
			im, ok := v.(map[string]any)
			if !ok {
				return unsure
			}
			q.items = quickOf(im)
		case "properties":
			pm, ok := v.(map[string]any)
			if !ok {
				return unsure
			}
			q.properties = map[string]*quick{}
			for name, p := range pm {
				sub, ok := p.(map[string]any)
				if !ok {
					return unsure
				}
				q.properties[name] = quickOf(sub)
			}
		case "required":
			names, _ := v.([]any)
			for _, x := range names {
				s, ok := x.(string)
				if !ok {
					return unsure
				}
				q.required = append(q.required, s)
			}
		case "additionalProperties":
			b, ok := v.(bool)
			if !ok {
				return unsure
			}
			q.open = b
		default:
			return unsure
		}
	}
	if (q.min != nil || q.max != nil) && q.kind != "integer" {
		return unsure // a bounded "number": exact rational comparison is the validator's
	}
	return q
}

func asNumber(v any) json.Number {
	n, _ := v.(json.Number)
	return n
}

// valid reports whether x is certainly valid; false means "ask the
// validator", not "invalid".
func (q *quick) valid(x any) bool {
	if q.unsure {
		return false
	}
	if q.kind == "" && q.enum == nil && q.properties == nil && q.required == nil && q.items == nil {
		return q.maxLength < 0 && q.maxItems < 0 // the empty schema: any value
	}
	switch q.kind {
	case "string":
		s, ok := x.(string)
		if !ok || q.enum != nil && !q.enum[s] {
			return false
		}
		// Characters, as the validator counts them; a string of at most
		// maxLength bytes needs no count.
		return q.maxLength < 0 || len(s) <= q.maxLength || utf8.RuneCountInString(s) <= q.maxLength
	case "integer":
		n, ok := exactInt(x)
		return ok && q.enum == nil && (q.min == nil || n >= *q.min) && (q.max == nil || n <= *q.max)
	case "number":
		return q.enum == nil && isNumber(x)
	case "boolean":
		_, ok := x.(bool)
		return ok && q.enum == nil
	case "array":
		items, ok := x.([]any)
		if !ok || q.enum != nil || q.maxItems >= 0 && len(items) > q.maxItems {
			return false
		}
		if q.items != nil {
			for _, it := range items {
				if !q.items.valid(it) {
					return false
				}
			}
		}
		return true
	case "object":
		obj, ok := x.(map[string]any)
		if !ok || q.enum != nil {
			return false
		}
		for _, name := range q.required {
			if _, ok := obj[name]; !ok {
				return false
			}
		}
		for name, v := range obj {
			p, declared := q.properties[name]
			if !declared {
				if !q.open {
					return false
				}
				continue
			}
			if !p.valid(v) {
				return false
			}
		}
		return true
	}
	return false
}

// exactInt is x as an int64 when it is certainly that integer, read
// without exact arithmetic: integer text, a Go integer, or an integral
// float64 in range.
func exactInt(x any) (int64, bool) {
	switch n := x.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(n), 10, 64)
		return i, err == nil
	case float64:
		if n != math.Trunc(n) || n < math.MinInt64 || n >= math.MaxInt64 {
			return 0, false
		}
		return int64(n), true
	case int:
		return int64(n), true
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	}
	return 0, false
}

// isNumber reports whether x is a JSON number the validator reads as one.
func isNumber(x any) bool {
	switch n := x.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		return err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	case float64:
		return !math.IsInf(n, 0) && !math.IsNaN(n)
	case float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return true
	}
	return false
}
