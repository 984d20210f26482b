package config

import (
	"path/filepath"
	"reflect"
	"testing"
)

func TestAuthDecodes(t *testing.T) {
	c, err := Parse("auth.toml", []byte(`
[mcp.servers.linear]
transport = "http_streamable"
url = "https://mcp.linear.app/mcp"
[mcp.servers.linear.auth]
type = "oauth"

[mcp.servers.gh]
transport = "http_streamable"
url = "https://api.githubcopilot.com/mcp/"
[mcp.servers.gh.auth]
type = "oauth"
client_id = "Iv1.abc"
client_secret = "{{ env.GH_SECRET }}"
scopes = ["repo", "read:org"]

[mcp.servers.svc]
transport = "sse"
url = "https://mcp.example.com/sse"
[mcp.servers.svc.auth]
type = "oauth"
grant = "client_credentials"
client_id = "svc"
private_key_file = "keys/svc.pem"
signing_algorithm = "ES256"
`), &Options{LookupEnv: func(k string) (string, bool) { return map[string]string{"GH_SECRET": "s3"}[k], k == "GH_SECRET" }, HomeDir: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]*Auth{
		"linear": {Type: AuthOAuth, Grant: GrantAuthorizationCode},
		"gh":     {Type: AuthOAuth, Grant: GrantAuthorizationCode, ClientID: "Iv1.abc", ClientSecret: "s3", Scopes: []string{"repo", "read:org"}},
		"svc":    {Type: AuthOAuth, Grant: GrantClientCredentials, ClientID: "svc", PrivateKeyFile: "keys/svc.pem", SigningAlgorithm: "ES256"},
	}
	for name, want := range tests {
		got := c.Server(name).Auth
		if got != nil && name == "svc" {
			// Relative to the config's directory.
			if !filepath.IsAbs(got.PrivateKeyFile) {
				t.Errorf("private_key_file %q is not absolute", got.PrivateKeyFile)
			}
			g := *got
			g.PrivateKeyFile = want.PrivateKeyFile
			got = &g
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Auth = %+v, want %+v", name, got, want)
		}
	}
}
