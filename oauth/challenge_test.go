package oauth

import (
	"net/http"
	"testing"
)

func TestParseChallenge(t *testing.T) {
	tests := []struct {
		name   string
		header []string
		want   Challenge
		ok     bool
	}{
		{"resource metadata and scope", []string{`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read files:write"`},
			Challenge{ResourceMetadata: "https://mcp.example.com/.well-known/oauth-protected-resource", Scope: "files:read files:write"}, true},
		{"insufficient scope", []string{`Bearer error="insufficient_scope", scope="a b", error_description="need b"`},
			Challenge{Scope: "a b", Error: "insufficient_scope"}, true},
		{"after another scheme", []string{`Basic realm="x", Bearer error=invalid_token, resource_metadata="https://h/m"`},
			Challenge{ResourceMetadata: "https://h/m", Error: "invalid_token"}, true},
		{"in a second header", []string{`Basic realm="x"`, `bearer Scope="s"`}, Challenge{Scope: "s"}, true},
		{"quoted comma and escape", []string{`Bearer realm="a, b", scope="x\"y"`}, Challenge{Scope: `x"y`}, true},
		{"bare scheme", []string{`Bearer`}, Challenge{}, true},
		{"token68 first", []string{`Negotiate abc==, Bearer scope="s"`}, Challenge{Scope: "s"}, true},
		{"none", []string{`Basic realm="x"`}, Challenge{}, false},
		{"no header", nil, Challenge{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tt.header {
				h.Add("WWW-Authenticate", v)
			}
			got, ok := ParseChallenge(h)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ParseChallenge(%q) = %+v, %v; want %+v, %v", tt.header, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestWellKnownOrder(t *testing.T) {
	prm, _ := resourceMetadataURLs("https://example.com/public/mcp", Challenge{})
	want := []string{"https://example.com/.well-known/oauth-protected-resource/public/mcp", "https://example.com/.well-known/oauth-protected-resource"}
	if !equal(prm, want) {
		t.Errorf("protected resource metadata URLs = %q, want %q", prm, want)
	}
	if got, _ := resourceMetadataURLs("https://example.com/mcp", Challenge{ResourceMetadata: "https://x/y"}); !equal(got, []string{"https://x/y"}) {
		t.Errorf("with a challenge: %q", got)
	}
	as, _ := serverMetadataURLs("https://auth.example.com/tenant1")
	want = []string{
		"https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
		"https://auth.example.com/.well-known/openid-configuration/tenant1",
		"https://auth.example.com/tenant1/.well-known/openid-configuration",
	}
	if !equal(as, want) {
		t.Errorf("issuer with a path: %q, want %q", as, want)
	}
	as, _ = serverMetadataURLs("https://auth.example.com")
	want = []string{"https://auth.example.com/.well-known/oauth-authorization-server", "https://auth.example.com/.well-known/openid-configuration"}
	if !equal(as, want) {
		t.Errorf("issuer without a path: %q, want %q", as, want)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
