package config

import (
	"errors"
	"path"
	"strings"
	"testing"
)

func TestPatternMatch(t *testing.T) {
	tests := []struct {
		pattern string
		match   []string
		noMatch []string
	}{
		{"list_pods", []string{"list_pods"}, []string{"list_pod", "list_podsx", "xlist_pods", "", "LIST_PODS"}},
		{"*", []string{"", "a", "list_pods", "ünïcode"}, nil},
		{"list_*", []string{"list_", "list_pods", "list_a/b"}, []string{"list", "get_list_x"}},
		{"*_pods", []string{"_pods", "list_pods", "a_b_pods"}, []string{"pods", "list_pods_x"}},
		{"*list*", []string{"list", "xlistx", "a_list_b"}, []string{"lis", "l_i_s_t"}},
		{"a*b*c", []string{"abc", "aXbYc", "abbbc", "abcbc"}, []string{"ab", "acb", "abcx"}},
		{"**a", []string{"a", "ba"}, []string{"ab"}},
		{"log?", []string{"logs", "logx", "log_", "logé"}, []string{"log", "logss"}},
		{"??", []string{"ab", "éé"}, []string{"a", "abc"}},
		{"get_[pn]od", []string{"get_pod", "get_nod"}, []string{"get_xod", "get_od", "get_pnod"}},
		{"[!a]b", []string{"bb", "éb", "_b"}, []string{"ab", "b", "abb"}},
		{"v[0-9]", []string{"v0", "v5", "v9"}, []string{"va", "v10", "v"}},
		{"x[-a]", []string{"x-", "xa"}, []string{"xb"}},
		{"x[a-]", []string{"x-", "xa"}, []string{"xb"}},
		{"x[a-c-e]", []string{"xa", "xb", "xc", "x-", "xe"}, []string{"xd"}},
		{"{get,list}_pods", []string{"get_pods", "list_pods"}, []string{"_pods", "getlist_pods", "watch_pods"}},
		{"list{,_all}", []string{"list", "list_all"}, []string{"list_", "list_allx"}},
		{"{a,b}{c,d}", []string{"ac", "ad", "bc", "bd"}, []string{"ab", "cd", "a"}},
		{"{*_pods,get_*}", []string{"list_pods", "get_x", "get_"}, []string{"list_nodes"}},
		{"{a*,*b}", []string{"a", "axx", "xxb", "b"}, []string{"xax"}},
		{"fs/read.file-1", []string{"fs/read.file-1"}, []string{"fs/readxfile-1"}},
		{"[ab]*[!c]", []string{"ad", "bxxd", "ab"}, []string{"ac", "a", "ca"}},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			p, err := CompilePattern(tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if p.String() != tt.pattern {
				t.Errorf("String() = %q", p.String())
			}
			for _, n := range tt.match {
				if !p.Match(n) {
					t.Errorf("%q should match %q", tt.pattern, n)
				}
			}
			for _, n := range tt.noMatch {
				if p.Match(n) {
					t.Errorf("%q should not match %q", tt.pattern, n)
				}
			}
		})
	}
}

func TestPatternErrors(t *testing.T) {
	tests := []struct {
		pattern string
		offset  int
		msg     string
	}{
		{"", 0, "empty pattern"},
		{"list_[pods", 5, "unclosed class"},
		{"list pods", 4, "character ' ' not allowed"},
		{"list_pods!", 9, "'!' is only allowed first in a class"},
		{"a]", 1, "unmatched ']'"},
		{"a}", 1, "unmatched '}'"},
		{"a,b", 1, "',' outside"},
		{"{a,b", 0, "unclosed alternates"},
		{"x{a,{b}}", 4, "nested alternates"},
		{"[]", 1, "empty class"},
		{"[!]", 2, "empty class"},
		{"[z-a]", 1, "reversed range"},
		{"[a*]", 2, "not allowed inside a class"},
		{"[a{]", 2, "not allowed inside a class"},
		{"[a ]", 2, "not allowed in a class"},
		{"[a-%]", 3, "not allowed in a class range"},
		{"tool:name", 4, "character ':' not allowed"},
		{"naïve", 2, "character 'ï' not allowed"},
		{"a\\*", 1, `character '\\' not allowed`},
		{strings.Repeat("{a,b}", 9), 0, "expand to more than"},
		{strings.Repeat("a", maxPatternLen+1), maxPatternLen, "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			p, err := CompilePattern(tt.pattern)
			var pe *PatternError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *PatternError", err)
			}
			if pe.Offset != tt.offset || !strings.Contains(pe.Msg, tt.msg) {
				t.Errorf("got offset %d %q, want offset %d containing %q", pe.Offset, pe.Msg, tt.offset, tt.msg)
			}
			if !p.IsZero() || p.Match("") || p.Match("a") {
				t.Error("a failed compile must return the zero Pattern, which matches nothing")
			}
		})
	}
}

func TestPatternText(t *testing.T) {
	var p Pattern
	if err := p.UnmarshalText([]byte("list_*")); err != nil || !p.Match("list_x") {
		t.Fatalf("UnmarshalText: %v", err)
	}
	if b, _ := p.MarshalText(); string(b) != "list_*" {
		t.Errorf("MarshalText = %q", b)
	}
	if err := p.UnmarshalText([]byte("[")); err == nil {
		t.Error("UnmarshalText accepted an invalid pattern")
	}
}

func TestPatternMatchNoAlloc(t *testing.T) {
	p, err := CompilePattern("{get,list}_*[!x]_{pods,nodes}")
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		p.Match("list_namespaced_a_pods")
		p.Match("watch_everything")
	})
	if allocs != 0 {
		t.Errorf("Match allocates %.1f times per run", allocs)
	}
}

// FuzzCompilePattern: no input may panic, and where a pattern means the
// same to path.Match (no {}, '-' or '!', no '/') both matchers agree on
// ASCII names. (path.Match's * steps over bytes, not runes, so it can
// match "*??" against one 3-byte rune; ours does not.)
func FuzzCompilePattern(f *testing.F) {
	for _, s := range []string{"list_*", "a*b?c", "[!a-z]x", "{a,b}*", "[", "{", "a{b,{c}}", "*_*_*", "é", "[a-]", "x{,y}"} {
		f.Add(s, "list_pods")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		p, err := CompilePattern(pattern)
		if err != nil {
			if !p.IsZero() {
				t.Fatal("error with non-zero pattern")
			}
			var pe *PatternError
			if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > len(pattern) {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		got := p.Match(name)
		if strings.ContainsAny(pattern, "{}-!") {
			return
		}
		want, perr := path.Match(pattern, name)
		if perr == nil && isASCII(name) && !strings.Contains(name, "/") && !strings.Contains(pattern, "/") && got != want {
			t.Fatalf("Match(%q, %q) = %v, path.Match says %v", pattern, name, got, want)
		}
	})
}

func BenchmarkPatternMatch(b *testing.B) {
	p, _ := CompilePattern("{get,list}_*[!x]_{pods,nodes}")
	b.ReportAllocs()
	for b.Loop() {
		p.Match("list_namespaced_a_pods")
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
