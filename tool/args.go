package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Param is one argument as a tool's input schema declares it: the
// schema is the one declaration of an argument's type, default, bounds
// and whether it is required, which every handler's decoding reads
// ([Params], [Checked]).
type Param struct {
	Type     string // "string", "integer", "number", "boolean", "array", "object"; "" for any
	Default  any    // the schema's default as JSON decodes it (numbers as float64); nil if none
	Required bool
	Enum     []any // allowed values; nil for any

	// The schema's bounds, nil where it sets none: "minimum" and
	// "maximum" of a number, "maxLength" of a string (in characters),
	// "maxItems" of an array.
	Minimum, Maximum *float64
	MaxLength        *int
	MaxItems         *int

	// Items is what an array's "items" declares, nil where it declares
	// nothing: each item is checked against its type, enum and bounds
	// (the properties of object items are the handler's to check).
	Items *Param
}

// Schema is an object schema's arguments as [Schema.Check] checks them.
type Schema struct {
	Params map[string]Param
	// Open is set when the schema's "additionalProperties" is true or a
	// schema: arguments it does not declare pass (a structured pad takes
	// its state's keys directly). Otherwise they are refused.
	Open bool
}

// MaxSafeInteger bounds an integer argument whatever its schema says:
// the largest integer every JSON implementation reads exactly (2^53).
const MaxSafeInteger = 1 << 53

// echoBytes bounds how much of an argument's name a problem repeats: a
// 200 KB name is the model's mistake, not something to read back.
const echoBytes = 40

// schemaProp is a property of a schema as JSON gives it.
type schemaProp struct {
	Type      any             `json:"type"`
	Default   any             `json:"default"`
	Enum      []any           `json:"enum"`
	Minimum   *float64        `json:"minimum"`
	Maximum   *float64        `json:"maximum"`
	MaxLength *int            `json:"maxLength"`
	MaxItems  *int            `json:"maxItems"`
	Items     json.RawMessage `json:"items"`
}

func (p schemaProp) param() Param {
	t, _ := p.Type.(string) // a list of types is not checked
	out := Param{Type: t, Default: p.Default, Enum: p.Enum,
		Minimum: p.Minimum, Maximum: p.Maximum, MaxLength: p.MaxLength, MaxItems: p.MaxItems}
	var items schemaProp
	if len(p.Items) > 0 && json.Unmarshal(p.Items, &items) == nil {
		it := items.param()
		out.Items = &it
	}
	return out
}

// ParseSchema reads the arguments an object schema declares (its
// top-level properties, required list and additionalProperties).
func ParseSchema(schema json.RawMessage) (Schema, error) {
	var s struct {
		Properties map[string]schemaProp `json:"properties"`
		Required   []string              `json:"required"`
		Additional json.RawMessage       `json:"additionalProperties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return Schema{}, fmt.Errorf("tool: input schema: %w", err)
	}
	out := Schema{Params: make(map[string]Param, len(s.Properties))}
	for name, p := range s.Properties {
		out.Params[name] = p.param()
	}
	for _, name := range s.Required {
		p := out.Params[name]
		p.Required = true
		out.Params[name] = p
	}
	if a := bytes.TrimSpace(s.Additional); len(a) > 0 && !bytes.Equal(a, []byte("false")) {
		out.Open = true
	}
	return out, nil
}

// MustParseSchema is [ParseSchema] for a schema written in the code: a
// schema that does not parse is a programming error.
func MustParseSchema(schema json.RawMessage) Schema {
	s, err := ParseSchema(schema)
	if err != nil {
		panic(err)
	}
	return s
}

// Params reads the arguments an object schema declares (its top-level
// properties and required list).
func Params(schema json.RawMessage) (map[string]Param, error) {
	s, err := ParseSchema(schema)
	return s.Params, err
}

// MustParams is [Params] for a schema written in the code: a schema
// that does not parse is a programming error.
func MustParams(schema json.RawMessage) map[string]Param {
	return MustParseSchema(schema).Params
}

// CheckArgs is [Schema.Check] for a schema that declares every argument
// (no additionalProperties).
func CheckArgs(params map[string]Param, raw json.RawMessage) (json.RawMessage, []string) {
	return Schema{Params: params}.Check(raw)
}

// Check checks raw arguments against s: they must be one JSON object (or
// absent); every required argument present and not null; every declared
// one given of its type, within its bounds and, with an enum, one of its
// values ([Param.Problem]); no argument the schema does not declare,
// unless s is Open, and never one that differs from a declared name only
// in case (encoding/json would decode it as the declared one). Missing
// arguments with a default get it.
//
// It returns the completed arguments re-encoded as one JSON object
// holding exactly the names it checked, once each, integers written as
// integers (1.0 is 1): a handler decoding them with encoding/json sees
// what was checked and nothing else. Or it returns every problem found,
// so the model can fix them all in one retry.
func (s Schema) Check(raw json.RawMessage) (json.RawMessage, []string) {
	args := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if t[0] != '{' {
			return nil, []string{"the arguments must be one JSON object"}
		}
		if err := json.Unmarshal(t, &args); err != nil {
			return nil, []string{"the arguments must be one JSON object: " + err.Error()}
		}
	}
	var problems, unknown []string
	for _, name := range sortedKeys(args) {
		if _, ok := s.Params[name]; ok {
			continue
		}
		if d := s.foldMatch(name); d != "" {
			problems = append(problems, fmt.Sprintf("%s is not an argument (names are case-sensitive): did you mean %s?", clip(name), d))
			continue
		}
		if !s.Open {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		problems = append(problems, Undeclared(unknown, s.Params))
	}
	for _, name := range sortedKeys(s.Params) {
		p := s.Params[name]
		v, given := args[name]
		if !given || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			delete(args, name)
			switch {
			case p.Required:
				problems = append(problems, name+" is required")
			case p.Default != nil:
				b, _ := json.Marshal(p.Default)
				args[name] = b
			}
			continue
		}
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			problems = append(problems, name+" "+decodeProblem(err))
			continue
		}
		if msg := p.Problem(x); msg != "" {
			problems = append(problems, name+" "+msg)
			continue
		}
		if b, ok := p.canonical(x); ok {
			args[name] = b
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, []string{err.Error()}
	}
	return b, nil
}

// foldMatch is the declared name that name differs from only in case
// (as bytes.EqualFold compares, which is how encoding/json matches a
// name to a struct field), or "".
func (s Schema) foldMatch(name string) string {
	for d := range s.Params {
		if strings.EqualFold(name, d) {
			return d
		}
	}
	return ""
}

// Undeclared is the problem of arguments no schema property declares:
// their names (each cut to a short prefix, at most ten of them) and the
// names the tool takes.
func Undeclared(names []string, params map[string]Param) string {
	sort.Strings(names)
	shown := make([]string, 0, min(len(names), 10))
	for _, n := range names[:min(len(names), 10)] {
		shown = append(shown, clip(n))
	}
	list := strings.Join(shown, ", ")
	if len(names) > len(shown) {
		list += fmt.Sprintf(" and %d more", len(names)-len(shown))
	}
	takes := "no arguments"
	if len(params) > 0 {
		takes = strings.Join(sortedKeys(params), ", ")
	}
	return fmt.Sprintf("unknown argument(s) %s (this tool takes: %s)", list, takes)
}

// Clip is s cut to at most n bytes at a character boundary, with "…"
// when it was cut: what an answer repeats of a value the model sent,
// which may be megabytes.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// clip is a name as a problem repeats it: quoted, cut to echoBytes.
func clip(s string) string { return strconv.Quote(Clip(s, echoBytes)) }

func sortedKeys[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// decodeProblem says why a value inside a valid JSON object did not
// decode: only a number too large for a float64 can fail.
func decodeProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return "is a number out of range"
	}
	return "is not valid JSON"
}

// Problem says what is wrong with x, a value as encoding/json decodes it
// into an any (numbers as float64), for p: its type, enum and bounds,
// and for an array its items'; "" when nothing is. An integer must also
// be within ±[MaxSafeInteger].
func (p Param) Problem(x any) string {
	ok := true
	switch p.Type {
	case "string":
		_, ok = x.(string)
	case "boolean":
		_, ok = x.(bool)
	case "number":
		_, ok = x.(float64)
	case "integer":
		f, isNum := x.(float64)
		ok = isNum && f == math.Trunc(f)
	case "array":
		_, ok = x.([]any)
	case "object":
		_, ok = x.(map[string]any)
	}
	if !ok {
		return fmt.Sprintf("must be %s %s, not %s", article(p.Type), p.Type, kindOf(x))
	}
	if len(p.Enum) > 0 {
		for _, e := range p.Enum {
			if fmt.Sprint(e) == fmt.Sprint(x) {
				return ""
			}
		}
		vals := make([]string, len(p.Enum))
		for i, e := range p.Enum {
			b, _ := json.Marshal(e)
			vals[i] = string(b)
		}
		return "must be one of " + strings.Join(vals, ", ")
	}
	return p.Bounds(x)
}

// Bounds says which of p's bounds x, a value as encoding/json decodes it
// into an any, is past ("must be at most 1000"), or "": [Param.Problem]
// without the type and enum, for a caller that reads lenient forms of a
// value itself (the explore subcommand's key=value strings).
func (p Param) Bounds(x any) string {
	switch v := x.(type) {
	case float64:
		switch {
		case p.Minimum != nil && v < *p.Minimum:
			return "must be at least " + number(*p.Minimum)
		case p.Maximum != nil && v > *p.Maximum:
			return "must be at most " + number(*p.Maximum)
		case p.Type == "integer" && math.Abs(v) > MaxSafeInteger:
			return fmt.Sprintf("must be between %d and %d", -MaxSafeInteger, MaxSafeInteger)
		}
	case string:
		// A string of n bytes has at most n characters: only a long one
		// is counted.
		if p.MaxLength != nil && len(v) > *p.MaxLength {
			if n := utf8.RuneCountInString(v); n > *p.MaxLength {
				return fmt.Sprintf("must be at most %d characters, not %d", *p.MaxLength, n)
			}
		}
	case []any:
		if p.MaxItems != nil && len(v) > *p.MaxItems {
			return fmt.Sprintf("must have at most %d items, not %d", *p.MaxItems, len(v))
		}
		if p.Items != nil {
			bad, first := 0, ""
			for i, it := range v {
				if msg := p.Items.Problem(it); msg != "" {
					if bad == 0 {
						first = fmt.Sprintf("item %d %s", i, msg)
					}
					bad++
				}
			}
			switch {
			case bad == 1:
				return first
			case bad > 1:
				return fmt.Sprintf("%s (and %d more items like it)", first, bad-1)
			}
		}
	}
	return ""
}

// number renders a bound as JSON would.
func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// canonical is x re-encoded where handlers would not decode the text the
// model sent: an integer given as 1.0 or 1e2 (encoding/json refuses it
// for an int), alone or as an array's items. ok is false when the given
// text serves as it is.
func (p Param) canonical(x any) (json.RawMessage, bool) {
	switch {
	case p.Type == "integer":
		return strconv.AppendInt(nil, int64(x.(float64)), 10), true
	case p.Type == "array" && p.Items != nil && p.Items.Type == "integer":
		items := x.([]any)
		ints := make([]int64, len(items))
		for i, it := range items {
			ints[i] = int64(it.(float64))
		}
		b, _ := json.Marshal(ints)
		return b, true
	}
	return nil, false
}

func article(t string) string {
	if t == "integer" || t == "array" || t == "object" {
		return "an"
	}
	return "a"
}

func kindOf(x any) string {
	switch v := x.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64:
		if v == math.Trunc(v) {
			return "an integer"
		}
		return "a number"
	case []any:
		return "an array"
	}
	return "an object"
}

// Checked wraps h so that its arguments are checked against schema and
// completed with its defaults ([Schema.Check]) before h runs: h decodes
// arguments the schema has vouched for, exactly the names it declares
// (or, for an open schema, the others too), and declares no defaults or
// bounds of its own. Problems are answered with fail, without running h.
func Checked(schema json.RawMessage, fail func(problems []string) Result, h Handler) Handler {
	s := MustParseSchema(schema)
	return func(ctx context.Context, raw json.RawMessage) Result {
		args, problems := s.Check(raw)
		if len(problems) > 0 {
			return fail(problems)
		}
		return h(ctx, args)
	}
}
