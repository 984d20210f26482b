package config

import (
	"errors"
	"fmt"
	"strings"
)

// ErrEnvUnset is matched (with [errors.Is]) by the problem a {{ env.NAME }}
// without a default makes when NAME is not set: an [*EnvUnsetError] says
// which. [Options].SkipServersWithUnsetEnv turns it, inside one server's
// table, into a [SkippedServer].
var ErrEnvUnset = errors.New("environment variable is not set")

// EnvUnsetError names the variable a {{ env.NAME }} needs.
type EnvUnsetError struct{ Name string }

func (e *EnvUnsetError) Error() string {
	return fmt.Sprintf("environment variable %s is not set (give a fallback with {{ env.%s | default: '...' }})", e.Name, e.Name)
}

// Unwrap makes errors.Is(err, [ErrEnvUnset]) true.
func (e *EnvUnsetError) Unwrap() error { return ErrEnvUnset }

// interpolate replaces {{ env.NAME }} and {{ env.NAME | default: 'x' }}
// (or "x") in s. Other {{ ... }} text is left alone, so arguments such as
// kubectl's -o go-template={{.metadata.name}} pass through. A NAME that is
// unset has no value: that is an error without a default. A NAME set to ""
// also takes the default when one is given, so `NAME= scratchpad-mcp ...`
// falls back the way a shell's ${NAME:-x} does.
func interpolate(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		b.WriteString(rest[:i])
		body := rest[i+2:]
		if !strings.HasPrefix(strings.TrimLeft(body, " \t"), "env.") {
			b.WriteString("{{")
			rest = body
			continue
		}
		end := strings.Index(body, "}}")
		if end < 0 {
			return "", fmt.Errorf("unclosed %q in %q", "{{", s)
		}
		val, err := evalEnv(body[:end], lookup)
		if err != nil {
			return "", err
		}
		b.WriteString(val)
		rest = body[end+2:]
	}
}

// evalEnv evaluates the inside of {{ }}: env.NAME [| default: 'x'].
func evalEnv(expr string, lookup func(string) (string, bool)) (string, error) {
	e := strings.TrimSpace(expr)
	e = strings.TrimPrefix(e, "env.")
	n := 0
	for n < len(e) && (e[n] == '_' || 'A' <= e[n] && e[n] <= 'Z' || 'a' <= e[n] && e[n] <= 'z' || n > 0 && '0' <= e[n] && e[n] <= '9') {
		n++
	}
	name := e[:n]
	if name == "" {
		return "", fmt.Errorf("{{%s}}: want {{ env.NAME }} with NAME made of letters, digits and _", expr)
	}
	rest := strings.TrimSpace(e[n:])
	var def string
	hasDef := false
	if rest != "" {
		bad := fmt.Errorf("{{%s}}: after env.%s want only | default: 'value'", expr, name)
		if rest[0] != '|' {
			return "", bad
		}
		rest = strings.TrimSpace(rest[1:])
		if !strings.HasPrefix(rest, "default") {
			return "", fmt.Errorf("{{%s}}: unknown filter (only default: 'value' is supported)", expr)
		}
		rest = strings.TrimSpace(rest[len("default"):])
		if rest == "" || rest[0] != ':' {
			return "", bad
		}
		rest = strings.TrimSpace(rest[1:])
		if len(rest) < 2 || (rest[0] != '\'' && rest[0] != '"') || rest[len(rest)-1] != rest[0] {
			return "", fmt.Errorf("{{%s}}: the default must be quoted with '...' or \"...\"", expr)
		}
		def = rest[1 : len(rest)-1]
		if strings.IndexByte(def, rest[0]) >= 0 {
			return "", bad
		}
		hasDef = true
	}
	v, ok := lookup(name)
	switch {
	case ok && v != "":
		return v, nil
	case hasDef:
		return def, nil
	case ok:
		return "", nil
	}
	return "", &EnvUnsetError{Name: name}
}
