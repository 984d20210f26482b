package layout

import "testing"

func TestOutputServer(t *testing.T) {
	servers := []string{"gh", "gh-enterprise", "fs/local", "k8s"}
	for _, tc := range []struct{ name, want string }{
		{OutputName("gh", "search", "json", make([]byte, 4)), "gh"},
		{OutputName("gh-enterprise", "search", "json", make([]byte, 4)), "gh-enterprise"},
		{OutputName("fs/local", "read", "txt", make([]byte, 4)), "fs/local"},
		{"k8s.json", ""},
		{"ghost-x-00000000.json", ""},
		{"notes.md", ""},
	} {
		if got := OutputServer(tc.name, servers); got != tc.want {
			t.Errorf("OutputServer(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
