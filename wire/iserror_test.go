package wire

import (
	"strings"
	"testing"
)

func TestIsErrorResult(t *testing.T) {
	big := strings.Repeat("x", 2<<20)
	for _, tc := range []struct {
		raw  string
		want bool
	}{
		{`{"content":[],"isError":true}`, true},
		{`{"isError" : true,"content":[]}`, true},
		{`{"content":[{"type":"text","text":"\"isError\":true"}]}`, false},
		{`{"content":[],"isError":false}`, false},
		{`{"content":[{"type":"text","text":"` + big + `"}],"isError":true}`, true},
		{`{"isError":true,"content":[{"type":"text","text":"` + big + `"}]}`, true},
		{`{"content":[{"type":"text","text":"` + big + `"}]}`, false},
	} {
		if got := IsErrorResult([]byte(tc.raw)); got != tc.want {
			t.Errorf("%.60s…: %v, want %v", tc.raw, got, tc.want)
		}
	}
}
