package jsonscan

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// streamedInner runs b through a Stream with Inner "result" in pieces
// cut at cuts (offsets, taken modulo len(b)+1, in any order): its
// members, and the result's.
func streamedInner(b []byte, cuts []int) (members, inner []Member, innerOK bool, err error) {
	s := Stream{Inner: "result"}
	at := []int{0}
	for _, c := range cuts {
		at = append(at, int(uint(c)%uint(len(b)+1)))
	}
	at = append(at, len(b))
	// Sorted, so that the pieces cover b in order.
	for i := 1; i < len(at); i++ {
		for j := i; j > 0 && at[j] < at[j-1]; j-- {
			at[j], at[j-1] = at[j-1], at[j]
		}
	}
	for i := 1; i < len(at); i++ {
		_, _ = s.Write(b[at[i-1]:at[i]])
	}
	members, err = s.Close()
	inner, innerOK = s.InnerMembers()
	return members, inner, innerOK, err
}

// innerAsMembers fails t unless the inner members a Stream found are the
// Members of the last top-level "result" (its key as written) when that
// is an object and b is valid, and none otherwise.
func innerAsMembers(t *testing.T, b []byte, cuts []int, members []Member, valid bool, inner []Member, ok bool) {
	t.Helper()
	var want []Member
	wantOK := false
	if valid {
		for _, m := range members {
			if string(b[m.KeyStart:m.KeyEnd]) == "result" {
				want, wantOK = nil, b[m.ValueStart] == '{'
				if wantOK {
					offs, _ := Members(b[m.ValueStart:m.ValueEnd])
					for _, o := range offs {
						want = append(want, Member{o.KeyStart + m.ValueStart, o.KeyEnd + m.ValueStart, o.ValueStart + m.ValueStart, o.ValueEnd + m.ValueStart})
					}
				}
			}
		}
	}
	if ok != wantOK || len(inner) != len(want) {
		t.Fatalf("%.80q cut at %v: inner %v %v, want %v %v", b, cuts, inner, ok, want, wantOK)
	}
	for i := range want {
		if inner[i] != want[i] {
			t.Fatalf("%.80q cut at %v: inner[%d] %+v, want %+v", b, cuts, i, inner[i], want[i])
		}
	}
}

// sameAsScan fails t unless streaming b in the pieces cuts makes gives
// Scan's verdict, error kind and member, and members.
func sameAsScan(t *testing.T, b []byte, cuts []int) {
	t.Helper()
	var keys, values []string
	want := Scan(b, func(k, v []byte) { keys, values = append(keys, string(k)), append(values, string(v)) })
	members, inner, innerOK, got := streamedInner(b, cuts)
	innerAsMembers(t, b, cuts, members, got == nil, inner, innerOK)
	if (got == nil) != (want == nil) || errors.Is(got, ErrTooDeep) != errors.Is(want, ErrTooDeep) {
		t.Fatalf("%.80q cut at %v: stream %v, scan %v", b, cuts, got, want)
	}
	if want != nil {
		var ge, we *Error
		errors.As(got, &ge)
		errors.As(want, &we)
		if !bytes.Equal(ge.Member, we.Member) {
			t.Fatalf("%.80q cut at %v: member at fault %q, scan %q", b, cuts, ge.Member, we.Member)
		}
	}
	// Members by offset, as Members gives them too.
	if offs, err := Members(b); (err == nil) != (want == nil) || len(offs) != len(keys) {
		t.Fatalf("%.80q: Members %v, %v", b, offs, err)
	} else {
		for i, m := range offs {
			if string(b[m.KeyStart:m.KeyEnd]) != keys[i] || string(b[m.ValueStart:m.ValueEnd]) != values[i] {
				t.Fatalf("%.80q: Members[%d] = %+v", b, i, m)
			}
		}
	}
	var gk, gv []string
	for _, m := range members {
		gk, gv = append(gk, string(b[m.KeyStart:m.KeyEnd])), append(gv, string(b[m.ValueStart:m.ValueEnd]))
	}
	if strings.Join(gk, "\x00") != strings.Join(keys, "\x00") || strings.Join(gv, "\x00") != strings.Join(values, "\x00") {
		t.Fatalf("%.80q cut at %v: members %q=%q, scan %q=%q", b, cuts, gk, gv, keys, values)
	}
}

func TestStreamIsScan(t *testing.T) {
	all := append([]string{}, cases...)
	all = append(all, `{"id":1,"result":[1,}`, `{"id":1,"res`, `{"a":-0.5e+3,"b":[true,false,null,{}],"c":"\u00e9\\"}`, `{"a":1}  `,
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\"k\":\"v\"}"}]}}`,
		`{"id":1,"result":{"content":[{"type":"text","text":"a\"b"}],"isError":false,"resultType":"task","n":-1.5e3,"o":{"p":[1,{"q":2}]},"t":true,"z":null}}`,
		`{"result":{"a":1},"id":2,"result":[]}`, `{"result":{"a":1},"result":{"b":{}}}`, `{"res\u0075lt":{"a":1}}`, `{"result":{}}`, `{"result":{"a":1}`, `-`, `-0`, `1e5`, `1E+5`, `0.`, `{"a":1e}`)
	for _, c := range all {
		b := []byte(c)
		sameAsScan(t, b, nil)
		for cut := 0; cut <= len(b); cut++ {
			sameAsScan(t, b, []int{cut})
			sameAsScan(t, b, []int{cut, cut + 1, cut + 3})
		}
	}
	deep := []byte(`{"id":1,"result":` + strings.Repeat("[", MaxDepth+5))
	sameAsScan(t, deep, []int{20, 5000})
}

func FuzzStreamIsScan(f *testing.F) {
	for _, c := range cases {
		f.Add(c, 3, 7)
	}
	f.Fuzz(func(t *testing.T, s string, a, b int) {
		if strings.Count(s, "[")+strings.Count(s, "{") > MaxDepth {
			return
		}
		sameAsScan(t, []byte(s), []int{a, b})
	})
}
