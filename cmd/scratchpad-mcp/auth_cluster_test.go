package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testoauth"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// TestAuthClusterTokensShared: with [cluster] redis_url, `auth login` on
// one host puts the token on Redis (no token file); a serve on another
// host (its own token directory, the sealing key copied) uses it, and
// `auth status` there says where it is. Without the key the other host's
// status names the key file instead of asking for a login.
func TestAuthClusterTokensShared(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl for the headless browser")
	}
	srv := testoauth.New(t, testoauth.Options{ScopesSupported: []string{"mcp"}})
	rs := testredis.Start(t)
	cfgPath, _ := writeConfig(t, `
[mcp.servers.remote]
transport = "http_streamable"
url = "`+srv.MCPURL()+`"

[mcp.servers.remote.auth]
type = "oauth"
`+clusterConfig(rs.URL()))
	dirA, dirB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	browser := "SCRATCHPAD_BROWSER=" + curl + " -sfL -o /dev/null"
	envA := []string{"SCRATCHPAD_MCP_AUTH_DIR=" + dirA, browser}
	envB := []string{"SCRATCHPAD_MCP_AUTH_DIR=" + dirB, browser}

	if code, out := runBin(t, envA, "auth", "login", "--config", cfgPath, "remote"); code != 0 || !strings.Contains(out, "logged in to remote") {
		t.Fatalf("auth login on host A: %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dirA, "remote.json")); !os.IsNotExist(err) {
		t.Errorf("a token file on host A in replica mode: %v", err)
	}

	// Host B without the key: told so, not told to log in.
	if code, out := runBin(t, envB, "auth", "status", "--config", cfgPath); !strings.Contains(out, "unreadable") || !strings.Contains(out, filepath.Join(dirB, layout.OAuthSealKeyFile)) || strings.Contains(out, "not logged in") {
		t.Errorf("auth status on host B without A's key: %d\n%s", code, out)
	}
	key, err := os.ReadFile(filepath.Join(dirA, layout.OAuthSealKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirB, layout.OAuthSealKeyFile), key, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := runBin(t, envB, "auth", "status", "--config", cfgPath)
	if code != 0 || !strings.Contains(out, "logged in") || !strings.Contains(out, "[cluster] redis_url") {
		t.Fatalf("auth status on host B with the key: %d\n%s", code, out)
	}

	c := stdioSession(t, append(os.Environ(), envB...), binary(t), "serve", "--config", cfgPath)
	defer c.Close()
	waitForTool(t, c, "whoami")
	if got := callTool(t, c, "whoami", nil); !strings.Contains(got, "hello dyn-") {
		t.Fatalf("whoami on host B with host A's login: %q", got)
	}
}
