package config

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"
)

// typeName names a decoded TOML value's type the way the TOML spec does.
func typeName(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case []map[string]any:
		return "array of tables"
	case map[string]any:
		return "table"
	}
	return "date-time"
}

func (d *decoder) wrongType(p keyPath, v any, want string) {
	d.fail(p, "want %s, got %s", want, typeName(v))
}

func (d *decoder) table(p keyPath, v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		d.wrongType(p, v, "a table")
	}
	return m, ok
}

// str returns a string value with {{ env.NAME }} interpolated.
func (d *decoder) str(p keyPath, v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		d.wrongType(p, v, "a string")
		return "", false
	}
	out, err := interpolate(s, d.lookup)
	if err != nil {
		pos, _ := d.pos.key(p)
		d.failAt(p, pos, err, err.Error()) // the cause kept: an unset variable is told apart
		return "", false
	}
	return out, true
}

// nonEmpty is str that also rejects "" (after interpolation).
func (d *decoder) nonEmpty(p keyPath, v any) (string, bool) {
	s, ok := d.str(p, v)
	if ok && strings.TrimSpace(s) == "" {
		d.fail(p, "must not be empty")
		return "", false
	}
	return s, ok
}

// oneOf is a string that must be one of the listed values.
func (d *decoder) oneOf(p keyPath, v any, values ...string) (string, bool) {
	s, ok := d.str(p, v)
	if !ok {
		return "", false
	}
	for _, x := range values {
		if s == x {
			return s, true
		}
	}
	q := make([]string, len(values))
	for i, x := range values {
		q[i] = fmt.Sprintf("%q", x)
	}
	d.fail(p, "invalid value %q: want one of %s", s, strings.Join(q, ", "))
	return "", false
}

func (d *decoder) integer(p keyPath, v any, lo, hi int64) (int, bool) {
	n, ok := v.(int64)
	if !ok {
		d.wrongType(p, v, "an integer")
		return 0, false
	}
	if n < lo || n > hi {
		d.fail(p, "%d out of range [%d, %d]", n, lo, hi)
		return 0, false
	}
	return int(n), true
}

// fraction accepts a float or an integer in [0, 1).
func (d *decoder) fraction(p keyPath, v any) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case int64:
		f = float64(x)
	default:
		d.wrongType(p, v, "a number")
		return 0, false
	}
	if math.IsNaN(f) || f < 0 || f >= 1 {
		d.fail(p, "%v out of range: want 0 <= value < 1", f)
		return 0, false
	}
	return f, true
}

func (d *decoder) boolean(p keyPath, v any) (bool, bool) {
	b, ok := v.(bool)
	if !ok {
		d.wrongType(p, v, "true or false")
	}
	return b, ok
}

// maxDuration bounds every duration key: beyond a day is a typo.
const maxDuration = 7 * 24 * time.Hour

// duration accepts "30s"-style strings and integer seconds. Zero is
// allowed only when allowZero.
func (d *decoder) duration(p keyPath, v any, allowZero bool) (time.Duration, bool) {
	return d.durationUpTo(p, v, allowZero, maxDuration)
}

// seconds is x seconds, or a failure when x is not in [0, max].
func (d *decoder) seconds(p keyPath, x int64, max time.Duration) (time.Duration, bool) {
	if x < 0 || x > int64(max/time.Second) {
		d.fail(p, "%d seconds out of range [0, %d]", x, int64(max/time.Second))
		return 0, false
	}
	return time.Duration(x) * time.Second, true
}

// durationUpTo is duration with another upper bound.
func (d *decoder) durationUpTo(p keyPath, v any, allowZero bool, maxDuration time.Duration) (time.Duration, bool) {
	var dur time.Duration
	switch x := v.(type) {
	case int64:
		var ok bool
		if dur, ok = d.seconds(p, x, maxDuration); !ok {
			return 0, false
		}
	case string:
		s, ok := d.str(p, v)
		if !ok {
			return 0, false
		}
		var err error
		dur, err = time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			d.fail(p, "invalid duration %q: want e.g. \"30s\", \"2m\" or an integer number of seconds", s)
			return 0, false
		}
		if dur < 0 || dur > maxDuration {
			d.fail(p, "duration %s out of range [0s, %s]", dur, maxDuration)
			return 0, false
		}
	default:
		d.wrongType(p, v, `a duration ("30s") or integer seconds`)
		return 0, false
	}
	if dur == 0 && !allowZero {
		d.fail(p, "must be greater than zero")
		return 0, false
	}
	return dur, true
}

// array returns the elements of an inline array or an array of tables.
func (d *decoder) array(p keyPath, v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case []map[string]any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = x[i]
		}
		return out, true
	}
	d.wrongType(p, v, "an array")
	return nil, false
}

func (d *decoder) strings(p keyPath, v any) ([]string, bool) {
	arr, ok := d.array(p, v)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(arr))
	good := true
	for i, e := range arr {
		s, ok := d.str(p.index(i), e)
		good = good && ok
		out = append(out, s)
	}
	return out, good
}

// strMap decodes a table of strings; validKey checks each key (nil: any).
func (d *decoder) strMap(p keyPath, v any, validKey func(string) string) (map[string]string, bool) {
	m, ok := d.table(p, v)
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(m))
	good := true
	for _, k := range d.sortedKeys(p, m) {
		if validKey != nil {
			if msg := validKey(k); msg != "" {
				d.fail(p.key(k), "%s", msg)
				good = false
				continue
			}
		}
		s, ok := d.str(p.key(k), m[k])
		good = good && ok
		out[k] = s
	}
	return out, good
}

// path interpolates, expands a leading ~ and makes a relative path
// relative to the config file's directory (a client may start the server
// from any working directory).
func (d *decoder) path(p keyPath, v any) (string, bool) {
	s, ok := d.nonEmpty(p, v)
	if !ok {
		return "", false
	}
	out, err := d.expand(s)
	if err != nil {
		d.fail(p, "%v", err)
		return "", false
	}
	return out, true
}

func (d *decoder) expand(s string) (string, error) {
	if s == "~" || strings.HasPrefix(s, "~/") || strings.HasPrefix(s, `~\`) {
		h, err := d.home()
		if err != nil || h == "" {
			return "", fmt.Errorf("cannot expand ~ in %q: no home directory", s)
		}
		return filepath.Join(h, s[1:]), nil
	}
	if strings.HasPrefix(s, "~") {
		return "", fmt.Errorf("%q: only ~ and ~/ are expanded (not ~user)", s)
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(d.dir, s)
	}
	return filepath.Clean(s), nil
}
