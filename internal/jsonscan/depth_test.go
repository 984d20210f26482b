package jsonscan

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// oldUsable is toolsearch's schema check before it used [ValidDepth]: a
// flat count of brackets outside strings, then gjson's (recursive)
// validator. ValidDepth must give its verdict.
func oldUsable(schema []byte, maxDepth int) bool {
	if len(schema) == 0 {
		return false
	}
	depth, inString := 0, false
	for i := 0; i < len(schema); i++ {
		c := schema[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > maxDepth {
				return false
			}
		case '}', ']':
			depth--
		}
	}
	return gjson.ValidBytes(schema)
}

// oldDeeperThan is explore's depth check before it used [DeeperThan].
func oldDeeperThan(b []byte, start, end, limit int) bool {
	depth := 0
	for i := start; i < end; {
		switch b[i] {
		case '"':
			i = StringEnd(b[:end], i)
			continue
		case '{', '[':
			depth++
			if depth > limit {
				return true
			}
		case '}', ']':
			depth--
		}
		i++
	}
	return false
}

func nested(open, close string, n int) string {
	return strings.Repeat(open, n) + strings.Repeat(close, n)
}

var depthCases = []string{
	nested("[", "]", 3), nested("[", "]", 4), nested("[", "]", 5),
	`{"a":{"b":{"c":1}}}`, `{"a":{"b":{"c":{"d":1}}}}`, `{"a":{"b":{"c":{"d":{"e":1}}}}}`,
	`["[[[[[[","{{{{{"]`, `{"k\"[[[[[":"]]]]"}`, `[[[[1]]],[[[2]]]]`, `[[[[[1]]]]`, `[1,2`,
	`"[[[[[[["`, `1`, ``, `{"a":[{"b":[{}]}]}`, `[[[[[]]]]]`, `[]]]]`, `]]]][[[[[`,
}

// TestValidDepth: the old check's verdict at a limit of 4 on each case,
// and a million '[' (which took gjson's validator past the stack limit,
// a fatal error) refused without recursion, at any limit.
func TestValidDepth(t *testing.T) {
	for _, c := range depthCases {
		if got, want := ValidDepth([]byte(c), 4), oldUsable([]byte(c), 4); got != want {
			t.Errorf("ValidDepth(%q, 4) = %v, old check %v", c, got, want)
		}
	}
	for _, in := range []string{strings.Repeat("[", 1e6), nested("[", "]", 1e6), nested(`{"a":`, "}", 1e6)} {
		for _, limit := range []int{64, MaxDepth, 1 << 30} {
			if ValidDepth([]byte(in), limit) {
				t.Errorf("%d bytes nested a million deep valid at limit %d", len(in), limit)
			}
		}
	}
	if !ValidDepth([]byte(nested("[", "]", MaxDepth)), 1<<30) {
		t.Error("the limit is not capped at MaxDepth")
	}
}

func FuzzValidDepth(f *testing.F) {
	for _, c := range append(depthCases, cases...) {
		f.Add(c, 4)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		limit = min(max(limit, 0), 200)
		if got, want := ValidDepth([]byte(s), limit), oldUsable([]byte(s), limit); got != want {
			t.Fatalf("ValidDepth(%q, %d) = %v, old check %v", s, limit, got, want)
		}
	})
}

// TestDeeperThan: the old walk's verdict on each valid value, and on a
// million '[' an answer (true) at once.
func TestDeeperThan(t *testing.T) {
	for _, c := range depthCases {
		b := []byte(" " + c)
		if !Valid(b) {
			continue
		}
		for limit := 0; limit < 7; limit++ {
			if got, want := DeeperThan(b, 1, limit), oldDeeperThan(b, 1, len(b), limit); got != want {
				t.Errorf("DeeperThan(%q, %d) = %v, old walk %v", c, limit, got, want)
			}
		}
	}
	deep := bytes.Repeat([]byte("["), 1e6)
	if !DeeperThan(deep, 0, 64) || !DeeperThan(deep, 0, MaxDepth) {
		t.Error("a million [ is not deeper than 64")
	}
	if DeeperThan(deep, 0, 2e6) {
		t.Error("a million [ is deeper than 2e6")
	}
}

func FuzzDeeperThan(f *testing.F) {
	for _, c := range append(depthCases, cases...) {
		f.Add(c, 3)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		b := []byte(s)
		if !Valid(b) {
			return // both read values already checked
		}
		limit = min(max(limit, 0), 200)
		i := SkipSpace(b, 0)
		end := ValueEnd(b, i)
		if got, want := DeeperThan(b[:end], i, limit), oldDeeperThan(b, i, end, limit); got != want {
			t.Fatalf("DeeperThan(%q, %d) = %v, old walk %v", s, limit, got, want)
		}
	})
}
