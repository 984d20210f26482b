package config

import (
	"errors"
	"strconv"
)

// ErrInvalid is matched (with [errors.Is]) by every error that [Load] and
// [Parse] return because the file's content is wrong: syntax, unknown keys,
// bad values, invalid patterns, missing environment variables. An error that
// is not ErrInvalid (a missing or unreadable file) wraps the [io/fs] error.
var ErrInvalid = errors.New("invalid config")

// Error is one problem in a config file. Key is the full dotted key path
// ("mcp.servers.k8s.timeout", quoted segments where TOML needs them, array
// elements as "[i]"); Line and Col are 1-based and 0 when unknown.
type Error struct {
	File string
	Key  string
	Line int
	Col  int
	Msg  string
	Err  error // the cause when there is one (a *PatternError), for errors.As
}

// Error formats as "file:line:col: key: msg", leaving out the parts that
// are unknown.
func (e *Error) Error() string {
	b := make([]byte, 0, len(e.File)+len(e.Key)+len(e.Msg)+16)
	if e.File != "" {
		b = append(b, e.File...)
	} else {
		b = append(b, "config"...)
	}
	if e.Line > 0 {
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(e.Line), 10)
		if e.Col > 0 {
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(e.Col), 10)
		}
	}
	b = append(b, ": "...)
	if e.Key != "" {
		b = append(b, e.Key...)
		b = append(b, ": "...)
	}
	b = append(b, e.Msg...)
	return string(b)
}

// Is makes errors.Is(err, ErrInvalid) true for every *Error.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// Errors is what [Load] returns when a file has more than one problem: all
// of them, in file order, so one run of the loader shows every typo. Use
// [errors.As] with a *[Error] target to get the first one.
type Errors []*Error

func (es Errors) Error() string {
	switch len(es) {
	case 0:
		return "no errors"
	case 1:
		return es[0].Error()
	}
	b := []byte(es[0].Error())
	for _, e := range es[1:] {
		b = append(b, '\n')
		b = append(b, e.Error()...)
	}
	return string(b)
}

// Unwrap exposes each *Error to errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}
