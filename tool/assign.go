package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// An assigner writes a validated instance value (as the validator read
// it: json.Number or Go numbers, strings, bools, []any, map[string]any)
// into a Go value, as encoding/json would decode its text — without
// encoding it and parsing it again, which cost a warm exploration call
// more than its own work (BenchmarkDecode).
//
// It is built only for types whose decoding it knows exactly: booleans,
// strings, numbers, pointers, slices and structs of those ([newAssigner]
// reports false otherwise: raw JSON, interfaces, maps, `,string`
// options); such declarations keep encoding/json (FuzzAssignIsEncodingJSON
// holds the two to the same result).
type assigner func(v reflect.Value, x any) error

// errAssign is what an [assigner] answers for a value the schema should
// have refused (a declaration whose schema and Go type disagree, e.g. a
// "type" tag) or a number out of its field's range.
var errAssign = errors.New("value does not fit")

// newAssigner is the assigner of t, or false when t has a part it does
// not decode exactly as encoding/json does.
func newAssigner(t reflect.Type) (assigner, bool) {
	return buildAssigner(t, map[reflect.Type]bool{})
}

func buildAssigner(t reflect.Type, seen map[reflect.Type]bool) (assigner, bool) {
	if t.Implements(reflect.TypeFor[json.Unmarshaler]()) || reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return nil, false
	}
	zero := reflect.Zero(t) // for the range checks
	switch t.Kind() {
	case reflect.Bool:
		return scalar(t, func(x any) (bool, bool) { b, ok := x.(bool); return b, ok }, reflect.Value.SetBool), true
	case reflect.String:
		return scalar(t, func(x any) (string, bool) { s, ok := x.(string); return s, ok }, reflect.Value.SetString), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return scalar(t, func(x any) (int64, bool) {
			n, ok := intOf(x)
			return n, ok && !zero.OverflowInt(n)
		}, reflect.Value.SetInt), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return scalar(t, func(x any) (uint64, bool) {
			n, ok := intOf(x)
			return uint64(n), ok && n >= 0 && !zero.OverflowUint(uint64(n))
		}, reflect.Value.SetUint), true
	case reflect.Float32, reflect.Float64:
		return scalar(t, func(x any) (float64, bool) {
			f, ok := floatOf(x)
			return f, ok && !zero.OverflowFloat(f)
		}, reflect.Value.SetFloat), true
	case reflect.Pointer:
		elem, ok := buildAssigner(t.Elem(), seen)
		if !ok {
			return nil, false
		}
		return func(v reflect.Value, x any) error {
			if x == nil {
				v.SetZero()
				return nil
			}
			p := reflect.New(t.Elem())
			if err := elem(p.Elem(), x); err != nil {
				return err
			}
			v.Set(p)
			return nil
		}, true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, false // []byte is base64 text to encoding/json
		}
		elem, ok := buildAssigner(t.Elem(), seen)
		if !ok {
			return nil, false
		}
		return func(v reflect.Value, x any) error {
			if x == nil {
				v.SetZero()
				return nil
			}
			items, ok := x.([]any)
			if !ok {
				return mismatch(x, t)
			}
			s := reflect.MakeSlice(t, len(items), len(items))
			for i, item := range items {
				if item == nil {
					continue // encoding/json leaves a null item zero
				}
				if err := elem(s.Index(i), item); err != nil {
					return err
				}
			}
			v.Set(s)
			return nil
		}, true
	case reflect.Struct:
		if seen[t] {
			return nil, false // recursive types: rare, left to encoding/json
		}
		seen[t] = true
		defer delete(seen, t)
		type field struct {
			index  []int
			assign assigner
		}
		fields := map[string]field{}
		for _, f := range reflect.VisibleFields(t) {
			name, opts := jsonName(f)
			if f.Anonymous {
				switch {
				case f.Type.Kind() == reflect.Pointer:
					return nil, false // a nil embedded pointer: encoding/json allocates it
				case f.Type.Kind() == reflect.Struct && f.Tag.Get("json") != "":
					return nil, false // a named embedded struct is not promoted
				case f.Type.Kind() == reflect.Struct:
					continue // its fields are promoted, listed on their own
				}
			}
			if !f.IsExported() || f.Tag.Get("json") == "-" {
				continue
			}
			if _, dup := fields[name]; dup || strings.Contains(opts, "string") {
				return nil, false // encoding/json's conflict rules, or text for numbers
			}
			a, ok := buildAssigner(f.Type, seen)
			if !ok {
				return nil, false
			}
			fields[name] = field{f.Index, a}
		}
		return func(v reflect.Value, x any) error {
			obj, ok := x.(map[string]any)
			if !ok {
				return mismatch(x, t)
			}
			for name, c := range obj {
				f, ok := fields[name]
				if !ok {
					continue // an open declaration's other arguments
				}
				if c == nil {
					continue // null: absent, the field keeps its value
				}
				if err := f.assign(v.FieldByIndex(f.index), c); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
			}
			return nil
		}, true
	}
	return nil, false
}

// jsonName is f's JSON name and its options.
func jsonName(f reflect.StructField) (name, opts string) {
	tag := f.Tag.Get("json")
	name, opts, _ = strings.Cut(tag, ",")
	if name == "" && tag != "-" {
		name = f.Name
	}
	return name, opts
}

// scalar is the assigner of a scalar type t: read turns an instance
// value into the field's value (false: it does not fit), set writes it.
func scalar[V any](t reflect.Type, read func(any) (V, bool), set func(reflect.Value, V)) assigner {
	return func(v reflect.Value, x any) error {
		n, ok := read(x)
		if !ok {
			return mismatch(x, t)
		}
		set(v, n)
		return nil
	}
}

func mismatch(x any, t reflect.Type) error {
	return fmt.Errorf("%w: %s into %s", errAssign, Clip(fmt.Sprint(x), 40), t)
}

// intOf is x as an int64 when x is a number without a fraction in
// range, as the schema's "integer" accepts it (1.0 and 1e3 too).
func intOf(x any) (int64, bool) {
	if n, ok := exactInt(x); ok {
		return n, true
	}
	switch n := x.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(n))
		if !ok || !r.IsInt() || !r.Num().IsInt64() {
			return 0, false
		}
		return r.Num().Int64(), true
	case float32:
		return exactInt(float64(n))
	case uint:
		return int64(n), n <= math.MaxInt64
	case uint64:
		return int64(n), n <= math.MaxInt64
	}
	return 0, false
}

// floatOf is x as a float64, as encoding/json reads the number's text.
func floatOf(x any) (float64, bool) {
	switch n := x.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		return f, err == nil
	case float64:
		return n, true
	case float32:
		return float64(n), true
	}
	if i, ok := intOf(x); ok {
		return float64(i), true
	}
	return 0, false
}

// nestedNames are the fields of the structs found inside T's fields
// (array items, nested objects), by type, for [nestedNames.caseVariants].
type nestedNames map[reflect.Type]map[string]reflect.StructField

// newNestedNames lists the structs nested in t's fields, and the
// top-level fields whose values hold one, by name.
func newNestedNames(t reflect.Type) (nestedNames, []reflect.StructField) {
	n := nestedNames{}
	var top []reflect.StructField
	for name, f := range structFields(t) {
		if n.add(f.Type) {
			f.Name = name // the JSON name, for the caller
			top = append(top, f)
		}
	}
	slices.SortFunc(top, func(a, b reflect.StructField) int { return strings.Compare(a.Name, b.Name) })
	return n, top
}

// add lists the structs in t, and reports whether there is one.
func (n nestedNames) add(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return n.add(t.Elem())
	case reflect.Struct:
		if t == reflect.TypeFor[json.RawMessage]() {
			return false
		}
		if _, seen := n[t]; !seen {
			fields := structFields(t)
			n[t] = fields
			for _, f := range fields {
				n.add(f.Type)
			}
		}
		return true
	}
	return false
}

// caseVariants are the problems of names inside x, the value of a field
// of type t at path, that differ from a declared one only in case:
// encoding/json would decode such a name as the declared one, past the
// schema (which checks only the declared name), and the direct assigner
// would drop it. The top level's are [Args.nameProblems]'.
func (n nestedNames) caseVariants(t reflect.Type, x any, path []string, out []Problem) []Problem {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		items, _ := x.([]any)
		for i, item := range items {
			out = n.caseVariants(t.Elem(), item, append(path[:len(path):len(path)], strconv.Itoa(i)), out)
		}
	case reflect.Struct:
		fields, ok := n[t]
		obj, isObj := x.(map[string]any)
		if !ok || !isObj {
			return out
		}
		for _, key := range sortedKeys(obj) {
			if f, declared := fields[key]; declared {
				out = n.caseVariants(f.Type, obj[key], append(path[:len(path):len(path)], key), out)
				continue
			}
			for d := range fields {
				if strings.EqualFold(key, d) {
					out = append(out, Problem{Path: append(path[:len(path):len(path)], key), Keyword: "unknown",
						Message: fmt.Sprintf("%s %s is not an argument (names are case-sensitive): did you mean %s?", where(path), clip(key), d)})
					break
				}
			}
		}
	}
	return out
}
