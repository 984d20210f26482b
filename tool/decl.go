package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	gschema "github.com/google/jsonschema-go/jsonschema"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// ErrDeclaration is wrapped by the error [NewArgs] returns for a struct
// it cannot read as an argument declaration (an unknown keyword in an
// arg tag, a $name without its value, a schema the validator refuses).
var ErrDeclaration = errors.New("tool: argument declaration")

// Args is one tool's arguments declared once, as the struct T: the
// listed input schema is generated from T by google/jsonschema-go (as
// go-sdk's AddTool[In] does), the bounds, defaults and enums come from
// each field's arg tag, and [Args.Decode] validates a call's arguments
// against that same schema with santhosh-tekuri/jsonschema before it
// decodes them into a T.
//
// A field's JSON name is its json tag's; it is required unless the tag
// says omitempty (or omitzero). Its description is its jsonschema tag.
// Its arg tag is a comma-separated list of keyword=value:
//
//	minimum, maximum   a number's bounds
//	maxLength          a string's bound, in characters
//	maxItems           an array's bound
//	default            the value an absent argument takes (a non-pointer field is set to it)
//	enum               values separated by |
//	description        the description (for shared wording: $name)
//	type               the JSON type, where the Go type does not say it (raw JSON)
//	items.K            keyword K of an array's items
//	lenient            (no value) a number given for this string is taken as its text
//
// A value $name is [ArgsOptions.Vars]' entry name: a constant declared
// once in the code, or values known only at start-up (a pad's section
// names). Absent and null arguments are alike: a pointer field stays nil,
// another keeps its default.
type Args[T any] struct {
	schema   json.RawMessage
	compiled *jsonschema.Schema
	props    map[string]bool // the top-level names declared
	names    []string        // sorted
	open     bool
	defaults T
	lenient  [][]string // instance paths ("*" for any item) whose numbers are taken as text
	// maxLength are the top-level strings' bounds, for [Args.tooLong].
	maxLength map[string]int
	// assign decodes a validated instance into a T directly, nil when T
	// has a part only encoding/json decodes exactly (raw JSON, any).
	assign assigner
	// nested are the structs inside T's fields, and nestedTop the
	// top-level names holding one, for case variants of their names.
	nested    nestedNames
	nestedTop []reflect.StructField // Name is the JSON name
	// quick proves the usual call valid without the validator's exact
	// arithmetic; nil when the schema has a part it does not check.
	quick *quick
}

// ArgsOptions are what [NewArgs] reads besides T.
type ArgsOptions struct {
	// Vars are the values arg tags name as $name.
	Vars map[string]any
	// Open lists "additionalProperties": true: arguments T does not
	// declare pass, to be read from the raw arguments (a structured pad
	// takes its state's keys directly). Case variants of declared names
	// are refused even then.
	Open bool
}

// NewArgs reads T's declaration. An error wraps [ErrDeclaration].
func NewArgs[T any](o ArgsOptions) (*Args[T], error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%w: %s is not a struct", ErrDeclaration, t)
	}
	gs, err := gschema.ForType(t, &gschema.ForOptions{TypeSchemas: map[reflect.Type]*gschema.Schema{
		// Raw JSON is any JSON value, not the bytes' array.
		reflect.TypeFor[json.RawMessage](): {},
	}})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDeclaration, err)
	}
	b, err := json.Marshal(gs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDeclaration, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDeclaration, err)
	}
	a := &Args[T]{open: o.Open, props: map[string]bool{}}
	if err := a.annotate(t, m, nil, o.Vars); err != nil {
		return nil, err
	}
	normalize(m)
	if _, ok := m["properties"]; !ok {
		// Some clients want an object schema's properties even when
		// there are none: list them, as before.
		m["properties"] = map[string]any{}
	}
	if o.Open {
		m["additionalProperties"] = true
	}
	// encoding/json writes map keys sorted: a schema's bytes are stable
	// and what snapshot tests pin, whatever jsonschema-go's field order.
	if a.schema, err = json.Marshal(m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDeclaration, err)
	}
	// What follows reads the schema as listed ($names' values as JSON
	// reads them).
	m = nil
	if err := json.Unmarshal(a.schema, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDeclaration, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(a.schema))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDeclaration, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "mem:///args.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDeclaration, err)
	}
	if a.compiled, err = c.Compile(url); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDeclaration, err)
	}
	if as, ok := newAssigner(t); ok {
		a.assign = as
	}
	a.nested, a.nestedTop = newNestedNames(t)
	a.quick = newQuick(a.schema)
	for name := range a.props {
		a.names = append(a.names, name)
	}
	a.maxLength = map[string]int{}
	if defs, ok := m["properties"].(map[string]any); ok {
		for name, p := range defs {
			if n, ok := p.(map[string]any)["maxLength"].(float64); ok {
				a.maxLength[name] = int(n)
			}
		}
	}
	sort.Strings(a.names)
	if defs, ok := m["properties"].(map[string]any); ok {
		// A pointer field stays nil when absent: its handler tells
		// absent from given.
		d, fields := map[string]any{}, structFields(t)
		for name, p := range defs {
			if pm, _ := p.(map[string]any); pm["default"] != nil && fields[name].Type.Kind() != reflect.Pointer {
				d[name] = pm["default"]
			}
		}
		if len(d) > 0 {
			db, _ := json.Marshal(d)
			if err := json.Unmarshal(db, &a.defaults); err != nil {
				return nil, fmt.Errorf("%w: defaults: %w", ErrDeclaration, err)
			}
		}
	}
	return a, nil
}

// MustArgs is [NewArgs] for a declaration in the code, read at start-up:
// one it cannot read is a programming error, found by any test.
func MustArgs[T any](o ArgsOptions) *Args[T] {
	a, err := NewArgs[T](o)
	if err != nil {
		panic(err)
	}
	return a
}

// Schema is the input schema generated from T, as tools/list shows it.
func (a *Args[T]) Schema() json.RawMessage { return a.schema }

// structFields are t's fields as encoding/json sees them, embedded
// structs' promoted ones included, with their JSON names.
func structFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}

// annotate adds the arg tags of struct t's fields to m, t's schema as
// jsonschema-go generated it; path is where t's values are found in an
// instance (for lenient fields).
func (a *Args[T]) annotate(t reflect.Type, m map[string]any, path []string, vars map[string]any) error {
	props, _ := m["properties"].(map[string]any)
	for name, f := range structFields(t) {
		if path == nil {
			a.props[name] = true
		}
		if props[name] == true { // any value: the empty schema, which tags may add to
			props[name] = map[string]any{}
		}
		p, _ := props[name].(map[string]any)
		if p == nil {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		at := append(append([]string{}, path...), name)
		if tag := f.Tag.Get("arg"); tag != "" {
			for kv := range strings.SplitSeq(tag, ",") {
				k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
				target := p
				if after, ok := strings.CutPrefix(k, "items."); ok {
					if target, _ = p["items"].(map[string]any); target == nil {
						return fmt.Errorf("%w: %s.%s: items keyword on a field without items", ErrDeclaration, t, f.Name)
					}
					k = after
				}
				if k == "lenient" {
					a.lenient = append(a.lenient, at)
					continue
				}
				val, err := tagValue(k, v, vars)
				if err != nil {
					return fmt.Errorf("%w: %s.%s: %w", ErrDeclaration, t, f.Name, err)
				}
				target[k] = val
			}
		}
		switch {
		case ft.Kind() == reflect.Struct:
			if err := a.annotate(ft, p, at, vars); err != nil {
				return err
			}
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			if items, ok := p["items"].(map[string]any); ok {
				if err := a.annotate(ft.Elem(), items, append(at, "*"), vars); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// tagValue is the value of keyword k written v in an arg tag.
func tagValue(k, v string, vars map[string]any) (any, error) {
	if name, ok := strings.CutPrefix(v, "$"); ok {
		x, ok := vars[name]
		if !ok {
			return nil, fmt.Errorf("no value for $%s", name)
		}
		return x, nil
	}
	switch k {
	case "minimum", "maximum", "maxLength", "maxItems":
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%s=%q is not a number", k, v)
		}
		return n, nil
	case "enum":
		return strings.Split(v, "|"), nil
	case "description", "type":
		return v, nil
	case "default":
		var x any
		if err := json.Unmarshal([]byte(v), &x); err != nil {
			return v, nil // a bare word is a string
		}
		return x, nil
	}
	return nil, fmt.Errorf("unknown keyword %q", k)
}

// normalize rewrites what jsonschema-go generates into the schemas
// models have been shown: a slice or pointer's ["null", T] is T (an
// absent argument is how a model says none), and no
// "additionalProperties" (false for structs, {} for maps): undeclared
// top-level arguments are refused by [Args.Decode] without the listing
// paying for the word in every tool (issue 28).
func normalize(v any) {
	switch x := v.(type) {
	case map[string]any:
		if ts, ok := x["type"].([]any); ok && len(ts) == 2 && ts[0] == "null" {
			x["type"] = ts[1]
		}
		delete(x, "additionalProperties")
		if props, ok := x["properties"].(map[string]any); ok {
			for k, c := range props {
				if c == true { // jsonschema-go's any: the empty schema, as written before
					props[k] = map[string]any{}
				}
			}
		}
		for _, c := range x {
			normalize(c)
		}
	case []any:
		for _, c := range x {
			normalize(c)
		}
	}
}

// Problem is one thing wrong with a call's arguments.
type Problem struct {
	// Path is where: the argument's name, then item indexes and
	// property names inside it; empty for the arguments as a whole.
	Path []string
	// Keyword is the schema keyword the value fails ("type", "enum",
	// "required", "minimum", "maxLength"…), or "unknown" for an
	// undeclared argument and "json" for arguments that are not one
	// JSON object.
	Keyword string
	// Message says it as the model reads it, with Path.
	Message string
	// Value is the value at Path as given (numbers as json.Number), nil
	// when absent.
	Value any
}

// Messages are the problems' messages.
func Messages(ps []Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Message
	}
	return out
}

// Decode validates raw, a call's arguments, against the schema of T and
// decodes them into a T, its defaults filled: every problem is returned
// at once, so the model can fix them all in one retry. Absent or null
// arguments decode as no arguments.
func (a *Args[T]) Decode(raw json.RawMessage) (T, []Problem) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		t = []byte("{}")
	}
	if t[0] != '{' {
		return a.defaults, []Problem{{Keyword: "json", Message: "the arguments must be one JSON object"}}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(t))
	if err != nil {
		return a.defaults, []Problem{{Keyword: "json", Message: "the arguments must be one JSON object: " + err.Error()}}
	}
	return a.decode(inst.(map[string]any), t)
}

// DecodeValue is [Args.Decode] for arguments already decoded, as
// encoding/json decodes into an any or as Go code writes them (ints,
// typed slices): the same validation, without encoding them first. args
// is not changed.
func (a *Args[T]) DecodeValue(args map[string]any) (T, []Problem) {
	obj, ok := plain(args).(map[string]any)
	if !ok {
		return a.defaults, []Problem{{Keyword: "json", Message: "the arguments must be JSON values"}}
	}
	return a.decode(obj, nil)
}

// plain is a copy of v made of the values the validator reads: its
// containers copied (validation rewrites them), values it does not know
// (typed slices and maps, structs) passed through JSON.
func plain(v any) any {
	switch x := v.(type) {
	case nil, bool, string, json.Number, float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return v
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			out[k] = plain(c)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = plain(c)
		}
		return out
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v // the validator calls it of an invalid type
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return v
	}
	return out
}

// decode validates obj, which it may rewrite, and decodes it into a T;
// raw is obj's text when it came as text (the fast path), or nil.
func (a *Args[T]) decode(obj map[string]any, raw []byte) (T, []Problem) {
	v := a.defaults
	problems := a.nameProblems(obj)
	for _, f := range a.nestedTop {
		if x, ok := obj[f.Name]; ok {
			problems = a.nested.caseVariants(f.Type, x, []string{f.Name}, problems)
		}
	}
	// null is absent: drop it before the schema sees it, and decode
	// without it (encoding/json would set a json.RawMessage to null).
	nulls := false
	for k, x := range obj {
		if x == nil && a.props[k] {
			delete(obj, k)
			nulls = true
		}
	}
	lenient := false
	for _, p := range a.lenient {
		lenient = textify(obj, p) || lenient
	}
	if huge := hugeNumbers(obj, nil, nil); len(huge) > 0 {
		sort.SliceStable(huge, func(i, j int) bool { return pattern(huge[i].Path) < pattern(huge[j].Path) })
		if len(huge) > maxHugeSaid {
			n := len(huge) - maxHugeSaid
			huge = append(huge[:maxHugeSaid], Problem{Keyword: "range", Message: fmt.Sprintf("and %d more numbers like these", n)})
		}
		return v, append(problems, huge...)
	}
	values := a.tooLong(obj)
	if len(values) > 0 || a.quick == nil || !a.quick.valid(obj) {
		values = append(values, a.validate(obj)...)
	}
	sort.SliceStable(values, func(i, j int) bool {
		return strings.Join(values[i].Path, "\x00") < strings.Join(values[j].Path, "\x00")
	})
	problems = append(problems, values...)
	if len(problems) > 0 {
		return v, problems
	}
	if a.assign != nil {
		if err := a.assign(reflect.ValueOf(&v).Elem(), obj); err != nil {
			return a.defaults, []Problem{{Keyword: "json", Message: "the arguments do not decode: " + Clip(err.Error(), 200)}}
		}
		return v, nil
	}
	if raw == nil || lenient || nulls || json.Unmarshal(raw, &v) != nil {
		// No text, a number given for a lenient string, a null, or 1.0
		// for an int (the schema accepts it, encoding/json does not):
		// decode what the validator read, integers written as integers.
		v = a.defaults
		b, err := json.Marshal(canonical(obj))
		if err == nil {
			err = json.Unmarshal(b, &v)
		}
		if err != nil {
			return v, []Problem{{Keyword: "json", Message: "the arguments do not decode: " + Clip(err.Error(), 200)}}
		}
	}
	return v, nil
}

// validate is the validator's judgement of obj: every problem.
func (a *Args[T]) validate(obj map[string]any) []Problem {
	err := a.compiled.Validate(obj)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Problem{{Keyword: "json", Message: err.Error()}}
	}
	return collect(ve, obj)
}

// maxNumberText is the longest number text [hugeNumbers] lets through:
// more digits than any float64 or int64 needs, and far less than what
// makes the validator's exact arithmetic slow.
const maxNumberText = 64

// maxHugeSaid is how many of them an answer names; the rest are counted.
const maxHugeSaid = 5

// hugeNumbers are the problems of the numbers in v that no argument can
// take: outside float64's range (1e999999, 1e-999999) or longer than
// [maxNumberText]. The validator reads every number as an exact big.Rat,
// so each such 9-byte number costs it tens of milliseconds (a few KiB of
// them, minutes); they are refused before it sees them.
func hugeNumbers(v any, path []string, out []Problem) []Problem {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			out = hugeNumbers(c, append(path[:len(path):len(path)], k), out)
		}
	case []any:
		for i, c := range x {
			out = hugeNumbers(c, append(path[:len(path):len(path)], strconv.Itoa(i)), out)
		}
	case json.Number:
		if len(x) > maxNumberText {
			return append(out, Problem{Path: path, Keyword: "range", Value: x,
				Message: fmt.Sprintf("%s is a number of %d characters; at most %d are read", where(path), len(x), maxNumberText)})
		}
		if f, err := strconv.ParseFloat(string(x), 64); err != nil || math.IsInf(f, 0) || hugeExponent(string(x)) {
			return append(out, Problem{Path: path, Keyword: "range", Value: x,
				Message: fmt.Sprintf("%s is %s, outside the numbers this server reads (within ±1e308, exponents within ±400)", where(path), x)})
		}
	}
	return out
}

// hugeExponent reports whether number text n has an exponent beyond
// ±400: ParseFloat reads 1e-999999 as 0 without an error, the validator
// reads it exactly (slowly).
func hugeExponent(n string) bool {
	i := strings.IndexAny(n, "eE")
	if i < 0 {
		return false
	}
	e, err := strconv.Atoi(strings.TrimPrefix(n[i+1:], "+"))
	return err != nil || e > 400 || e < -400
}

// tooLong refuses the top-level strings too long to be within their
// maxLength whatever their characters (4 bytes a character at most), and
// blanks them in obj for the validator: it copies a string to count its
// characters, and a refused megabyte should cost nothing.
func (a *Args[T]) tooLong(obj map[string]any) []Problem {
	var out []Problem
	for name, max := range a.maxLength {
		s, ok := obj[name].(string)
		if !ok || len(s) <= 4*max {
			continue
		}
		out = append(out, Problem{Path: []string{name}, Keyword: "maxLength", Value: s,
			Message: fmt.Sprintf("%s must be at most %d characters, not %d", name, max, utf8.RuneCountInString(s))})
		obj[name] = "" // present, for required; refused already
	}
	return out
}

// nameProblems are the problems of top-level names: a case variant of a
// declared one (encoding/json would decode it as the declared one,
// unchecked) and, unless the schema is open, undeclared ones.
func (a *Args[T]) nameProblems(obj map[string]any) []Problem {
	known := true
	for name := range obj {
		known = known && a.props[name]
	}
	if known {
		return nil // the usual call: no names to sort
	}
	var problems []Problem
	var unknown []string
	for _, name := range sortedKeys(obj) {
		if a.props[name] {
			continue
		}
		if d := a.foldMatch(name); d != "" {
			problems = append(problems, Problem{Path: []string{name}, Keyword: "unknown",
				Message: fmt.Sprintf("%s is not an argument (names are case-sensitive): did you mean %s?", clip(name), d)})
			continue
		}
		if !a.open {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		problems = append(problems, Problem{Keyword: "unknown", Message: Undeclared(unknown, a.names)})
	}
	return problems
}

func (a *Args[T]) foldMatch(name string) string {
	for _, d := range a.names {
		if strings.EqualFold(name, d) {
			return d
		}
	}
	return ""
}

// textify replaces the numbers found at path in v by their text.
func textify(v any, path []string) bool {
	if len(path) == 0 {
		return false
	}
	changed := false
	switch x := v.(type) {
	case map[string]any:
		c, ok := x[path[0]]
		if !ok {
			return false
		}
		if n, isNum := c.(json.Number); isNum && len(path) == 1 {
			x[path[0]] = n.String()
			return true
		}
		return textify(c, path[1:])
	case []any:
		if path[0] != "*" {
			return false
		}
		for i, c := range x {
			if n, isNum := c.(json.Number); isNum && len(path) == 1 {
				x[i] = n.String()
				changed = true
				continue
			}
			changed = textify(c, path[1:]) || changed
		}
	}
	return changed
}

// canonical is v with its integral numbers written as integers.
func canonical(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = canonical(c)
		}
	case []any:
		for i, c := range x {
			x[i] = canonical(c)
		}
	case json.Number:
		if r, ok := new(big.Rat).SetString(x.String()); ok && r.IsInt() {
			return json.Number(r.Num().String())
		}
	case float64:
		if r := new(big.Rat); r.SetFloat64(x) != nil && r.IsInt() {
			return json.Number(r.Num().String())
		}
	}
	return v
}

// collect turns the validator's error tree into problems: its leaves,
// with the wording models have been answered in, and an array's items
// failing alike said once, with how many more.
func collect(ve *jsonschema.ValidationError, inst any) []Problem {
	var leaves []*jsonschema.ValidationError
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	type group struct {
		p    Problem
		more int
	}
	var order []string
	groups := map[string]*group{}
	for _, e := range leaves {
		for _, p := range problemsOf(e, inst) {
			key := p.Keyword + "\x00" + pattern(p.Path)
			if g, ok := groups[key]; ok {
				g.more++
				continue
			}
			groups[key] = &group{p: p}
			order = append(order, key)
		}
	}
	sort.Slice(order, func(i, j int) bool {
		pi, pj := groups[order[i]].p, groups[order[j]].p
		if a, b := strings.Join(pi.Path, "\x00"), strings.Join(pj.Path, "\x00"); a != b {
			return a < b
		}
		return pi.Message < pj.Message
	})
	out := make([]Problem, 0, len(order))
	for _, k := range order {
		g := groups[k]
		if g.more > 0 {
			g.p.Message += fmt.Sprintf(" (and %d more items like it)", g.more)
		}
		out = append(out, g.p)
	}
	return out
}

// pattern is path with item indexes as "*".
func pattern(path []string) string {
	out := make([]string, len(path))
	for i, s := range path {
		if _, err := strconv.Atoi(s); err == nil {
			s = "*"
		}
		out[i] = s
	}
	return strings.Join(out, "/")
}

// where names a location as a problem says it: "tags item 1",
// "patches item 0 op".
func where(path []string) string {
	var b strings.Builder
	for i, s := range path {
		if i > 0 {
			b.WriteByte(' ')
			if _, err := strconv.Atoi(s); err == nil {
				b.WriteString("item ")
			}
		}
		b.WriteString(s)
	}
	return b.String()
}

// problemsOf is what one failed keyword says.
func problemsOf(e *jsonschema.ValidationError, inst any) []Problem {
	at := e.InstanceLocation
	one := func(keyword, msg string) []Problem {
		return []Problem{{Path: at, Keyword: keyword, Message: strings.TrimSpace(where(at) + " " + msg), Value: valueAt(inst, at)}}
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		out := make([]Problem, len(k.Missing))
		for i, name := range k.Missing {
			p := append(append([]string{}, at...), name)
			out[i] = Problem{Path: p, Keyword: "required", Message: where(p) + " is required"}
		}
		return out
	case *kind.Type:
		want, got := strings.Join(k.Want, " or "), "null"
		if k.Got != "null" {
			// The validator calls 2 a number; models read "an integer"
			// for it, as this answer always said.
			if k.Got == "number" && integral(valueAt(inst, at)) {
				k.Got = "integer"
			}
			got = article(k.Got) + " " + k.Got
		}
		return one("type", fmt.Sprintf("must be %s %s, not %s", article(want), want, got))
	case *kind.Enum:
		vals := make([]string, len(k.Want))
		for i, w := range k.Want {
			b, _ := json.Marshal(w)
			vals[i] = string(b)
		}
		return one("enum", "must be one of "+strings.Join(vals, ", "))
	case *kind.Minimum:
		return one("minimum", "must be at least "+k.Want.RatString())
	case *kind.Maximum:
		return one("maximum", "must be at most "+k.Want.RatString())
	case *kind.MaxLength:
		return one("maxLength", fmt.Sprintf("must be at most %d characters, not %d", k.Want, k.Got))
	case *kind.MaxItems:
		return one("maxItems", fmt.Sprintf("must have at most %d items, not %d", k.Want, k.Got))
	}
	kw := "schema"
	if p := e.ErrorKind.KeywordPath(); len(p) > 0 {
		kw = p[0]
	}
	return one(kw, "does not fit the schema: "+fmt.Sprint(e.ErrorKind))
}

// valueAt is the value at path in v, or nil.
func valueAt(v any, path []string) any {
	for _, s := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[s]
		case []any:
			i, err := strconv.Atoi(s)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// Handle is the [Handler] of a tool whose arguments a declares: they are
// validated and decoded ([Args.Decode]) before h runs, which gets them as
// a T and the call's raw arguments (an open declaration's undeclared
// ones are read from there); problems are answered with fail, without
// running h.
func Handle[T any](a *Args[T], fail func([]Problem) Result, h func(ctx context.Context, args T, raw json.RawMessage) Result) Handler {
	return func(ctx context.Context, raw json.RawMessage) Result {
		v, problems := a.Decode(raw)
		if len(problems) > 0 {
			return fail(problems)
		}
		return h(ctx, v, raw)
	}
}

// integral reports whether v is a number without a fraction.
func integral(v any) bool {
	switch x := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(x.String())
		return ok && r.IsInt()
	case float64:
		r := new(big.Rat).SetFloat64(x)
		return r != nil && r.IsInt()
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return true
	}
	return false
}
