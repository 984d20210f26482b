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

func TestTreeOf(t *testing.T) {
	for name, want := range map[string]string{
		"owners/alice/run-1/iteration-0/scratchpad/x.json": "owners/alice",
		"owners/bob":                          "owners/bob",
		"owners":                              "",
		"run-1/iteration-0/scratchpad/x.json": "",
		"scratchpad/x.json":                   "",
		"":                                    "",
	} {
		if got := TreeOf(name); got != want {
			t.Errorf("TreeOf(%q) = %q, want %q", name, got, want)
		}
	}
}
