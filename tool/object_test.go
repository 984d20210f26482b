package tool

import "testing"

func TestMarshalOrdered(t *testing.T) {
	members := []struct {
		k string
		v any
	}{{"error", "too_large"}, {"path", "$.a[?@.n < 3 && @.m > 1]"}, {"n", 2}, {"suggestions", []string{"b", "a"}}}
	got, err := MarshalOrdered(len(members), func(i int) (string, any) { return members[i].k, members[i].v })
	want := `{"error":"too_large","path":"$.a[?@.n < 3 && @.m > 1]","n":2,"suggestions":["b","a"]}`
	if err != nil || string(got) != want {
		t.Fatalf("MarshalOrdered = %s, %v; want %s", got, err, want)
	}
	if got, _ := MarshalOrdered(0, nil); string(got) != "{}" {
		t.Fatalf("no members: %s", got)
	}
	if _, err := MarshalOrdered(1, func(int) (string, any) { return "x", func() {} }); err == nil {
		t.Fatal("an unencodable value gave no error")
	}
}
