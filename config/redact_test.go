package config

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

// TestRedactURL: passwords and query values are always masked; path
// segments and user names by SecretSegment's rule. Realistic secret-path
// URLs lose their secret and ordinary ones stay readable (issue 39,
// item 8).
func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		// Passwords, query values, fragments (as before).
		{"http://user:PASS@host:8080/mcp?api_key=SECRET&v=1", "http://user:xxxxx@host:8080/mcp?api_key=xxxxx&v=xxxxx"},
		{"https://host/sse", "https://host/sse"},
		{"https://token@host/mcp", "https://token@host/mcp"},
		{"https://host/mcp?token=a&token=b#frag", "https://host/mcp?token=xxxxx&token=xxxxx"},
		{"http://[::1]:99/x?k=%2Fsecret", "http://[::1]:99/x?k=xxxxx"},
		{"http://host/%zz", "(an unparseable URL)"},

		// Secrets in the path.
		{"https://mcp.example.com/mcp/PATHSECRET123", "https://mcp.example.com/mcp/xxxxx"},
		{"https://mcp.example.com/mcp/PATHSECRET123/sse", "https://mcp.example.com/mcp/xxxxx/sse"},
		// Zapier-style: a base64 key between words.
		{"https://mcp.zapier.com/api/mcp/s/ZDM1YjE2NjAtNzQ0Ni00NzE4LWI5ZDAtOGQ1ZDI3ZTk5ZjFhOjE2ZDM2/mcp", "https://mcp.zapier.com/api/mcp/s/xxxxx/mcp"},
		{"https://actions.zapier.com/mcp/sk-ak-9fQx2Lm7Rt4Wz8Kp3Vb6Nc1Hd5Jg0Ys/sse", "https://actions.zapier.com/mcp/xxxxx/sse"},
		// Composio-style: a UUID.
		{"https://mcp.composio.dev/composio/server/2f1c9f0e-9c7b-4a8e-b1a2-7d3e5f6a8b9c/mcp", "https://mcp.composio.dev/composio/server/xxxxx/mcp"},
		{"https://backend.composio.dev/v3/mcp/4b5e7a2c-1d3f-4e6a-9b8c-0d1e2f3a4b5c/mcp?include_composio_helper_actions=true", "https://backend.composio.dev/v3/mcp/xxxxx/mcp?include_composio_helper_actions=xxxxx"},
		// GitHub-style token as the user name, and in a path.
		{"https://ghp_1A2b3C4d5E6f7G8h9I0jKlMnOpQrStUvWxYz@github.example.com/mcp", "https://xxxxx@github.example.com/mcp"},
		{"https://gh.example.com/t/github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTU/mcp", "https://gh.example.com/t/xxxxx/mcp"},
		// Hex keys, long numbers, long letter-only keys, Slack-style hooks.
		{"https://h.example.com/hook/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "https://h.example.com/hook/xxxxx"},
		{"https://h.example.com/accounts/123456789012/mcp", "https://h.example.com/accounts/xxxxx/mcp"},
		{"https://hooks.example.com/services/T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsTuVwX", "https://hooks.example.com/services/xxxxx/xxxxx/xxxxx"},
		// Percent-escaped secrets and the rest of the path kept as sent.
		{"https://h.example.com/mcp/abc%2Bdef%3D%3D123456/a%20b", "https://h.example.com/mcp/xxxxx/a%20b"},

		// Ordinary paths stay readable.
		{"https://api.githubcopilot.com/mcp/", "https://api.githubcopilot.com/mcp/"},
		{"https://api.githubcopilot.com/mcp/x/repos/readonly", "https://api.githubcopilot.com/mcp/x/repos/readonly"},
		{"https://mcp.linear.app/sse", "https://mcp.linear.app/sse"},
		{"https://api.example.com/v1/mcp", "https://api.example.com/v1/mcp"},
		{"https://api.example.com/v1beta1/projects/my-project/mcp", "https://api.example.com/v1beta1/projects/my-project/mcp"},
		{"https://api.example.com/2025-11-25/mcp", "https://api.example.com/2025-11-25/mcp"},
		{"https://api.example.com/api/v2/servers/github/mcp", "https://api.example.com/api/v2/servers/github/mcp"},
		{"https://auth.example.com/oauth2/token", "https://auth.example.com/oauth2/token"},
		{"https://server.smithery.ai/@smithery/toolbox/mcp", "https://server.smithery.ai/@smithery/toolbox/mcp"},
		{"https://h.example.com/.well-known/oauth-protected-resource/mcp", "https://h.example.com/.well-known/oauth-protected-resource/mcp"},
		{"https://h.example.com/k8s/tools/12345/sse", "https://h.example.com/k8s/tools/12345/sse"},
		{"http://127.0.0.1:8931/mcp", "http://127.0.0.1:8931/mcp"},
	} {
		if got := RedactURL(tc.raw); got != tc.want {
			t.Errorf("RedactURL(%q)\n = %q\nwant %q", tc.raw, got, tc.want)
		}
	}
}

func TestSecretSegment(t *testing.T) {
	for seg, secret := range map[string]bool{
		"": false, "mcp": false, "sse": false, "api": false, "v1": false, "v10": false, "v2beta1": false, "v3rc2": false,
		"2025-11-25": false, "oauth2": false, "k8s": false, "s3": false, "my-project_name.v2": false,
		"PATHSECRET123": true, "tenant1234": true, "abcdef0123456789": true, "123456789": true,
		"aBcDeFgHiJkLmNoPqRsTuVwX":      true, // 24 letters
		"averyverylongwordforapathpart": true,
		strings.Repeat("ab-", 30):       true,  // 90 bytes
		"PATHSECRET":                    false, // what the rule cannot see: letters only
	} {
		if got := SecretSegment(seg); got != secret {
			t.Errorf("SecretSegment(%q) = %v, want %v", seg, got, secret)
		}
	}
}

// An HTTP client's error names the URL it was asked for: masked.
func TestRedactURLError(t *testing.T) {
	_, err := http.Get("http://127.0.0.1:1/mcp/PATHSECRET123?api_key=K123")
	if err == nil {
		t.Fatal("reached a closed port")
	}
	err = RedactURLError(err)
	if msg := err.Error(); strings.Contains(msg, "PATHSECRET123") || strings.Contains(msg, "K123") || !strings.Contains(msg, "/mcp/xxxxx") {
		t.Errorf("masked: %s", msg)
	}
	if RedactURLError(nil) != nil || !errors.Is(RedactURLError(errors.ErrUnsupported), errors.ErrUnsupported) {
		t.Error("other errors changed")
	}
}

// What a server says about its own URL loses the URL's secrets.
func TestRedactURLIn(t *testing.T) {
	raw := "https://u:PASSWORD-1@h.example.com/mcp/PATHSECRET123/sse?api_key=KEY-0123456&v=1"
	text := "HTTP 404: Cannot POST /mcp/PATHSECRET123/sse?api_key=KEY-0123456&v=1 (auth PASSWORD-1)"
	want := "HTTP 404: Cannot POST /mcp/xxxxx/sse?api_key=xxxxx&v=1 (auth xxxxx)"
	if got := RedactURLIn(text, raw); got != want {
		t.Errorf("RedactURLIn = %q, want %q", got, want)
	}
	if got := RedactURLIn("nothing here", "https://h/mcp"); got != "nothing here" {
		t.Errorf("changed: %q", got)
	}
}

// A config error about a server's url does not print its secrets.
func TestConfigURLErrorMasked(t *testing.T) {
	for _, url := range []string{"ftp://u:PASSWORD-1@h.example.com/mcp/PATHSECRET123", "http://exa mple.com/mcp/PATHSECRET123?k=PASSWORD-1"} {
		_, err := Parse("t.toml", []byte("[mcp.servers.a]\ntransport = \"sse\"\nurl = \""+url+"\"\n"), nil)
		if err == nil {
			t.Fatalf("%s: no error", url)
		}
		if msg := err.Error(); strings.Contains(msg, "PATHSECRET123") || strings.Contains(msg, "PASSWORD-1") || !strings.Contains(msg, "mcp.servers.a.url: invalid url") {
			t.Errorf("%s: %s", url, msg)
		}
	}
}
