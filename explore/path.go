package explore

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// segKind says how a path segment may be applied.
type segKind int

const (
	segKey   segKind = iota // ["name"] or .name that is not a number: object key only
	segIndex                // [3]: array index only
	segName                 // .3 in dotted syntax: array index, or the object key "3"
)

// segment is one step of a parsed path.
type segment struct {
	kind  segKind
	key   string
	index int // for segIndex and numeric segName; negative counts from the end
}

// maxPathLen bounds the work a hostile path can cause.
const maxPathLen = 4096

// parsePath accepts both $.items[3].metadata.name and items.3.metadata.name
// (also mixed, and $["key.with.dots"] / ['x']). "", "$" and "." mean the root.
// In dotted syntax a backslash escapes the next character ("a\.b" is one key).
func parsePath(p string) ([]segment, error) {
	if len(p) > maxPathLen {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrBadPath, maxPathLen)
	}
	s := strings.TrimSpace(p)
	if s == "" || s == "$" || s == "." {
		return nil, nil
	}
	i := 0
	if s[0] == '$' {
		i = 1
	} else if s[0] != '[' && s[0] != '.' {
		// Bare first segment: "items.3" is ".items.3".
		s = "." + s
	}
	var segs []segment
	for i < len(s) {
		switch s[i] {
		case '.':
			i++
			var name strings.Builder
			for i < len(s) && s[i] != '.' && s[i] != '[' {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				name.WriteByte(s[i])
				i++
			}
			if name.Len() == 0 {
				return nil, fmt.Errorf("%w: empty key after '.' at byte %d", ErrBadPath, i)
			}
			segs = append(segs, nameSegment(name.String()))
		case '[':
			j := i + 1
			for j < len(s) && s[j] == ' ' {
				j++
			}
			if j >= len(s) {
				return nil, fmt.Errorf("%w: unclosed '[' at byte %d", ErrBadPath, i)
			}
			if q := s[j]; q == '"' || q == '\'' {
				k := j + 1
				for k < len(s) && s[k] != q {
					if s[k] == '\\' {
						k++
					}
					k++
				}
				if k >= len(s) {
					return nil, fmt.Errorf("%w: unclosed quote at byte %d", ErrBadPath, j)
				}
				key, err := unquoteKey(s[j:k+1], q)
				if err != nil {
					return nil, fmt.Errorf("%w: bad quoted key at byte %d", ErrBadPath, j)
				}
				k++
				for k < len(s) && s[k] == ' ' {
					k++
				}
				if k >= len(s) || s[k] != ']' {
					return nil, fmt.Errorf("%w: expected ']' at byte %d", ErrBadPath, k)
				}
				segs = append(segs, segment{kind: segKey, key: key})
				i = k + 1
				continue
			}
			k := strings.IndexByte(s[j:], ']')
			if k < 0 {
				return nil, fmt.Errorf("%w: unclosed '[' at byte %d", ErrBadPath, i)
			}
			num := strings.TrimSpace(s[j : j+k])
			n, err := strconv.Atoi(num)
			if err != nil || num == "" || num[0] == '+' {
				return nil, fmt.Errorf("%w: %q is not an array index (use [\"key\"] for keys)", ErrBadPath, num)
			}
			segs = append(segs, segment{kind: segIndex, index: n})
			i = j + k + 1
		default:
			return nil, fmt.Errorf("%w: unexpected %q at byte %d (expected '.' or '[')", ErrBadPath, s[i], i)
		}
	}
	return segs, nil
}

func nameSegment(name string) segment {
	if n, err := strconv.Atoi(name); err == nil && name[0] != '+' {
		return segment{kind: segName, key: name, index: n}
	}
	return segment{kind: segKey, key: name}
}

func unquoteKey(q string, quote byte) (string, error) {
	if quote == '"' {
		var s string
		if err := json.Unmarshal([]byte(q), &s); err == nil {
			return s, nil
		}
		return strconv.Unquote(q)
	}
	inner := q[1 : len(q)-1]
	var b strings.Builder
	for i := 0; i < len(inner); i++ {
		if inner[i] == '\\' && i+1 < len(inner) {
			i++
		}
		b.WriteByte(inner[i])
	}
	return b.String(), nil
}

// renderIndex and renderKey build the canonical $-form of a resolved path.
func renderIndex(n int) string { return "[" + strconv.Itoa(n) + "]" }

func renderKey(k string) string {
	// strconv.Quote (not JSON) so that keys with invalid UTF-8 round-trip:
	// unquoteKey falls back to strconv.Unquote for its \x escapes.
	return quoteKey(k)
}

// pathString renders parsed segments in the canonical $-form.
func pathString(segs []segment) string {
	var b strings.Builder
	b.WriteString("$")
	for _, s := range segs {
		if s.kind == segIndex {
			b.WriteString(renderIndex(s.index))
		} else {
			b.WriteString(renderKey(s.key))
		}
	}
	return b.String()
}
