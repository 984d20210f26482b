package redact

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
)

// ErrPattern is matched by every error about a configured pattern (extra
// or allow): it does not compile, matches the empty string, or its id is
// not a valid kind.
var ErrPattern = errors.New("invalid redaction pattern")

// Pattern is an extra rule from the configuration ([redaction]
// extra_patterns): ID is the kind its masks show, Regex (RE2 syntax) the
// secret, or its capture group 1 when it has groups. Keywords, when set,
// are literals every match contains (case-sensitive): the pattern is then
// run only around them. Without keywords the regexp's literal prefix
// serves when it has one of 3 bytes or more; otherwise the pattern is run
// over the whole text (slow on big results) and its matches are at most
// [maxUnkeyed] bytes long.
type Pattern struct {
	ID       string
	Regex    string
	Keywords []string
}

var validID = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)

// CompilePattern compiles one configured regexp (an extra pattern's or an
// allow-pattern's), refusing one that matches the empty string (it would
// mask, or keep, everything). The error wraps [ErrPattern] and says why
// without repeating the pattern (the caller names it and its key).
func CompilePattern(s string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(s)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%w: %s: %s", ErrPattern, se.Code, se.Expr)
		}
		return nil, fmt.Errorf("%w: %v", ErrPattern, err)
	}
	if re.MatchString("") {
		return nil, fmt.Errorf("%w: it matches the empty string", ErrPattern)
	}
	return re, nil
}

// CheckID reports whether id may name a kind: 1 to 40 of a-z 0-9 -, not
// first -, so that a mask stays plain text inside a JSON string.
func CheckID(id string) error {
	if !validID.MatchString(id) {
		return fmt.Errorf("%w: id %q: use 1 to 40 of a-z 0-9 - (not first -)", ErrPattern, id)
	}
	return nil
}
