// Command authclient is the client the MCP conformance suite's
// authorization scenarios run (conformance client --command authclient):
// it makes scratchpad-mcp's upstream client the client under test. For
// the scenario's server URL it writes a config with an [auth] table (the
// scenario's context supplies a pre-registered client or a key), runs
// `scratchpad-mcp auth login` with itself as the headless browser, then
// `scratchpad-mcp serve` over stdio, and as that server's MCP client
// lists the tools and calls each one: every request the scenario's
// server sees comes from the proxy.
//
// SCRATCHPAD_BIN names the scratchpad-mcp binary. "authclient follow URL"
// is the browser: it follows the authorization URL's redirects.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cimdURL is the Client ID Metadata Document URL the suite's
// authorization server expects (the suite's own clients use it).
const cimdURL = "https://conformance-test.local/client-metadata.json"

func main() {
	if len(os.Args) == 3 && os.Args[1] == "follow" {
		if err := follow(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "authclient follow:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "authclient:", err)
		os.Exit(1)
	}
}

func follow(u string) error {
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Get(u)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d at the end of the redirects", resp.StatusCode)
	}
	return nil
}

func run() error {
	if len(os.Args) < 2 {
		return fmt.Errorf("usage: authclient SERVER_URL")
	}
	serverURL := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	var sc struct {
		ClientID         string `json:"client_id"`
		ClientSecret     string `json:"client_secret"`
		PrivateKeyPEM    string `json:"private_key_pem"`
		SigningAlgorithm string `json:"signing_algorithm"`
	}
	if c := os.Getenv("MCP_CONFORMANCE_CONTEXT"); c != "" {
		if err := json.Unmarshal([]byte(c), &sc); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	bin := os.Getenv("SCRATCHPAD_BIN")
	if bin == "" {
		return fmt.Errorf("SCRATCHPAD_BIN is not set")
	}
	dir, err := os.MkdirTemp("", "authclient-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	cc := strings.HasPrefix(scenario, "auth/client-credentials")
	var auth strings.Builder
	fmt.Fprintf(&auth, "type = \"oauth\"\n")
	if cc {
		fmt.Fprintf(&auth, "grant = \"client_credentials\"\n")
	} else {
		fmt.Fprintf(&auth, "client_metadata_url = %q\n", cimdURL)
	}
	if sc.ClientID != "" {
		fmt.Fprintf(&auth, "client_id = %q\n", sc.ClientID)
	}
	if sc.ClientSecret != "" {
		fmt.Fprintf(&auth, "client_secret = %q\n", sc.ClientSecret)
	}
	if sc.PrivateKeyPEM != "" {
		key := filepath.Join(dir, "key.pem")
		if err := os.WriteFile(key, []byte(sc.PrivateKeyPEM), 0o600); err != nil {
			return err
		}
		fmt.Fprintf(&auth, "private_key_file = %q\nsigning_algorithm = %q\n", key, sc.SigningAlgorithm)
	}
	cfg := filepath.Join(dir, "scratchpad.toml")
	toml := fmt.Sprintf("memory_dir = %q\n\n[mcp.servers.conformance]\ntransport = \"http_streamable\"\nurl = %q\ntimeout = \"20s\"\nprefix = \"conformance\"\n\n[mcp.servers.conformance.auth]\n%s",
		filepath.Join(dir, "mem"), serverURL, auth.String())
	if err := os.WriteFile(cfg, []byte(toml), 0o600); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	env := append(os.Environ(), "SCRATCHPAD_MCP_AUTH_DIR="+filepath.Join(dir, "auth"), "SCRATCHPAD_BROWSER="+self+" follow")

	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	login := func() error {
		login := exec.CommandContext(ctx, bin, "auth", "login", "--config", cfg, "--timeout", "20s", "conformance")
		login.Env, login.Stdout, login.Stderr = env, os.Stderr, os.Stderr
		if err := login.Run(); err != nil {
			return fmt.Errorf("auth login: %w", err)
		}
		return nil
	}
	if !cc {
		if err := login(); err != nil {
			return err
		}
	}
	serve := exec.Command(bin, "serve", "--config", cfg, "--log-level", "debug")
	serve.Env, serve.Stderr = env, os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "authclient", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: serve}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	called := 0
	for _, t := range tools.Tools {
		if !strings.HasPrefix(t.Name, "conformance__") {
			continue // the proxy's own tools
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: t.Name, Arguments: map[string]any{}})
		if err != nil {
			return fmt.Errorf("tools/call %s: %w", t.Name, err)
		}
		if b, _ := json.Marshal(res.Content); res.IsError && strings.Contains(string(b), "auth login") && !cc {
			// The step-up a person does: the proxy asks for a new login
			// (with the scope the server wants); log in once more and
			// call again, as the error says to.
			if err := login(); err != nil {
				return err
			}
			if res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: t.Name, Arguments: map[string]any{}}); err != nil {
				return fmt.Errorf("tools/call %s after a new login: %w", t.Name, err)
			}
		}
		if res.IsError {
			b, _ := json.Marshal(res.Content)
			return fmt.Errorf("tools/call %s: tool error %s", t.Name, b)
		}
		called++
	}
	if called == 0 {
		return fmt.Errorf("the server listed no tool (the proxy did not connect to it)")
	}
	return nil
}
