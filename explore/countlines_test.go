package explore

import (
	"slices"
	"testing"
)

// Group values that tie on count are listed numbers first, in numeric
// order, then strings.
func TestCompareValues(t *testing.T) {
	got := []string{"100356743", `"web"`, "10035604", "100003635", "2.5", "-1", `"api"`, "1e3"}
	slices.SortFunc(got, compareValues)
	want := []string{"-1", "2.5", "1e3", "10035604", "100003635", "100356743", `"api"`, `"web"`}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}
