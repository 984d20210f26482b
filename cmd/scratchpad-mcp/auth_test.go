package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testoauth"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/oauth"
)

// runBin runs the binary with env added to this process's and returns
// its exit code and output.
func runBin(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return 0, out.String()
}

// TestAuthLoginServeRefreshRevoke is the whole life of a remote upstream
// behind OAuth, through the binary: status before login, `auth login`
// with a headless browser (curl following the redirects), serve over
// stdio with a call to it beside a stdio upstream, the token expired
// mid-session (refreshed, the call answered), the grant revoked (the call
// answers with the command to run, the other upstream still works), a
// new login picked up by the running serve, doctor's report, logout.
func TestAuthLoginServeRefreshRevoke(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl for the headless browser")
	}
	srv := testoauth.New(t, testoauth.Options{ScopesSupported: []string{"mcp"}})
	cfgPath, _ := writeConfig(t, `
[mcp.servers.remote]
transport = "http_streamable"
url = "`+srv.MCPURL()+`"

[mcp.servers.remote.auth]
type = "oauth"
`)
	authDir := filepath.Join(t.TempDir(), "auth")
	env := []string{"SCRATCHPAD_MCP_AUTH_DIR=" + authDir, "SCRATCHPAD_BROWSER=" + curl + " -sfL -o /dev/null"}

	if code, out := runBin(t, env, "auth", "status", "--config", cfgPath); code != 0 || !strings.Contains(out, "not logged in") {
		t.Fatalf("auth status before login: %d\n%s", code, out)
	}
	// Served before any login: the stdio upstream works, and calling the
	// remote one's tool (not listed yet) names the login.
	pre := stdioSession(t, append(os.Environ(), env...), binary(t), "serve", "--config", cfgPath)
	waitForTool(t, pre, "echo")
	if res := callResult(t, pre, "whoami"); !res.IsError || !strings.Contains(text(res), "auth login --config "+cfgPath+" remote") {
		t.Errorf("whoami before any login: %q, want a tool error naming the login command", text(res))
	}
	pre.Close()

	code, out := runBin(t, env, "auth", "login", "--config", cfgPath, "remote")
	if code != 0 || !strings.Contains(out, "logged in to remote") || !strings.Contains(out, "/authorize?") {
		t.Fatalf("auth login: %d\n%s", code, out)
	}
	rec := filepath.Join(authDir, "remote.json")
	if fi, err := os.Stat(rec); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, %v", fi, err)
	}
	if code, out := runBin(t, env, "auth", "status", "--config", cfgPath); code != 0 || !strings.Contains(out, "logged in") || !strings.Contains(out, "mcp") {
		t.Fatalf("auth status after login: %d\n%s", code, out)
	}

	c := stdioSession(t, append(os.Environ(), env...), binary(t), "serve", "--config", cfgPath)
	defer c.Close()
	waitForTool(t, c, "whoami")
	if got := callTool(t, c, "whoami", nil); !strings.Contains(got, "hello dyn-") {
		t.Fatalf("whoami: %q", got)
	}

	srv.ExpireAccess()
	if got := callTool(t, c, "whoami", nil); !strings.Contains(got, "hello") {
		t.Fatalf("whoami after the token expired at the server: %q", got)
	}
	if srv.Refreshes.Load() == 0 {
		t.Error("no refresh")
	}

	srv.RevokeAll()
	got := callResult(t, c, "whoami")
	if !got.IsError || !strings.Contains(text(got), "scratchpad-mcp auth login --config "+cfgPath+" remote") {
		t.Fatalf("whoami after revocation: %v %q, want a tool error naming the login command", got.IsError, text(got))
	}
	t.Logf("after revocation: %s", text(got))
	if got := callTool(t, c, "echo", map[string]any{"text": "still here"}); !strings.Contains(got, "still here") {
		t.Errorf("the stdio upstream after the remote one's revocation: %q", got)
	}

	if code, out := runBin(t, env, "auth", "login", "--config", cfgPath, "remote"); code != 0 {
		t.Fatalf("second login: %d\n%s", code, out)
	}
	var last string
	if !testwait.Until(testwait.Timeout, func() bool {
		res := callResult(t, c, "whoami")
		last = text(res)
		return !res.IsError && strings.Contains(last, "hello")
	}) {
		t.Fatalf("the running serve did not pick up the new login: %q", last)
	}

	code, out = runBin(t, env, "doctor", "--config", cfgPath)
	if !strings.Contains(out, "auth: oauth (authorization_code): logged in") {
		t.Errorf("doctor (%d) does not show the auth state:\n%s", code, out)
	}
	if strings.Contains(out, string(mustRead(t, rec))) {
		t.Error("doctor printed the token record")
	}

	if code, out := runBin(t, env, "auth", "logout", "--config", cfgPath, "remote"); code != 0 || !strings.Contains(out, "logged out of remote") {
		t.Fatalf("auth logout: %d\n%s", code, out)
	}
	if _, err := os.Stat(rec); !os.IsNotExist(err) {
		t.Errorf("token file after logout: %v", err)
	}
	code, out = runBin(t, env, "doctor", "--config", cfgPath)
	if code == 0 || !strings.Contains(out, "NEEDS LOGIN") || !strings.Contains(out, "auth login --config "+cfgPath+" remote") {
		t.Errorf("doctor after logout (%d):\n%s", code, out)
	}
}

func callResult(t *testing.T, c *mcp.ClientSession, name string) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// TestAuthConfigErrors: auth for a stdio server, and a login for a server
// without [auth], are refused naming the key or the server.
func TestAuthConfigErrors(t *testing.T) {
	cfgPath, _ := writeConfig(t, "\n[mcp.servers.k8s.auth]\ntype = \"oauth\"\n")
	code, out := runBin(t, nil, "auth", "status", "--config", cfgPath)
	if code == 0 || !strings.Contains(out, "mcp.servers.k8s.auth") || !strings.Contains(out, `not used by transport "stdio"`) {
		t.Errorf("auth on a stdio server: %d\n%s", code, out)
	}
	cfgPath, _ = writeConfig(t, "")
	code, out = runBin(t, nil, "auth", "login", "--config", cfgPath, "k8s")
	if code != 2 || !strings.Contains(out, `server "k8s" has no [mcp.servers.k8s.auth] table`) {
		t.Errorf("login to a server without auth: %d\n%s", code, out)
	}
}

// TestAuthOwnersLogInThroughTheServer: with bearer tokens, two owners
// call a tool of an OAuth server; each gets a login URL of its own in
// the tool error, whose redirect comes back to the server's
// /oauth/callback; after it, each calls as its own identity (the
// authorization server registered one client per login), and neither
// token is the other's or the operator's.
func TestAuthOwnersLogInThroughTheServer(t *testing.T) {
	srv := testoauth.New(t, testoauth.Options{})
	authDir := filepath.Join(t.TempDir(), "auth")
	t.Setenv("SCRATCHPAD_MCP_AUTH_DIR", authDir)
	cfgPath, _ := writeConfig(t, `
[mcp.servers.remote]
transport = "http_streamable"
url = "`+srv.MCPURL()+`"

[mcp.servers.remote.auth]
type = "oauth"

[[http.tokens]]
owner = "alice"
token = "alice-token-0123456789"

[[http.tokens]]
owner = "bob"
token = "bob-token-0123456789ab"
`)
	base := startHTTP(t, "http", cfgPath)
	loginURL := regexp.MustCompile(`open (http\S+) in a browser`)
	who := map[string]string{}
	tokens := map[string]string{"alice": "alice-token-0123456789", "bob": "bob-token-0123456789ab"}
	completed := make(chan string, 1)
	var elicitationID string
	for _, owner := range []string{"alice", "bob"} {
		var c *mcp.ClientSession
		var login string
		if owner == "alice" {
			// A client without URL elicitation reads the URL in a tool error.
			c = httpClient(t, base+"/mcp", map[string]string{"Authorization": "Bearer " + tokens[owner]})
			waitForTool(t, c, "echo")
			res := callResult(t, c, "whoami")
			m := loginURL.FindStringSubmatch(text(res))
			if !res.IsError || m == nil {
				t.Fatalf("%s: whoami before login: %q, want a tool error with a login URL", owner, text(res))
			}
			login = m[1]
		} else {
			// One with URL elicitation is asked to open it (-32042).
			hc := &http.Client{Transport: headerTransport{map[string]string{"Authorization": "Bearer " + tokens[owner]}, http.DefaultTransport}}
			cl := mcp.NewClient(&mcp.Implementation{Name: "url-elicitation", Version: "1"}, &mcp.ClientOptions{
				Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "cancel"}, nil
				},
				ElicitationCompleteHandler: func(_ context.Context, r *mcp.ElicitationCompleteNotificationRequest) {
					select {
					case completed <- r.Params.ElicitationID:
					default:
					}
				},
			})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			var err error
			c, err = cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			waitForTool(t, c, "echo")
			ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
			_, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
			cancel()
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeURLElicitationRequired {
				t.Fatalf("%s: whoami before login: %v, want a URL elicitation (-32042)", owner, err)
			}
			var data struct {
				Elicitations []struct{ Mode, URL, ElicitationID string }
			}
			if json.Unmarshal(rpcErr.Data, &data) != nil || len(data.Elicitations) != 1 || data.Elicitations[0].Mode != "url" || data.Elicitations[0].ElicitationID == "" {
				t.Fatalf("%s: elicitation data %s", owner, rpcErr.Data)
			}
			login, elicitationID = data.Elicitations[0].URL, data.Elicitations[0].ElicitationID
		}
		if !strings.HasPrefix(login, base+oauth.BeginPath+"?") {
			t.Fatalf("%s: the login URL is not the server's begin page: %s", owner, login)
		}
		browser := srv.Browser(owner + "-person")
		if code, body := proveLogin(t, browser, login, tokens[owner]); code != http.StatusOK {
			t.Fatalf("%s: the login: HTTP %d %s", owner, code, body)
		}
		if v := browser.Visited(); len(v) < 2 || !strings.Contains(v[0], "redirect_uri="+url.QueryEscape(base+oauth.CallbackPath)) {
			t.Fatalf("%s: the login does not come back to the server: %v", owner, v)
		}
		if owner == "bob" {
			select {
			case id := <-completed:
				if id != elicitationID {
					t.Errorf("bob: elicitation %q completed, want %q", id, elicitationID)
				}
			case <-time.After(testwait.Timeout):
				t.Errorf("bob: no notifications/elicitation/complete after the login")
			}
		}
		var last string
		if !testwait.Until(testwait.Timeout, func() bool {
			// Until the upstream has connected with the new token (it
			// looks every 2 s), the call still asks for the login.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
			if err != nil {
				last = err.Error()
				return false
			}
			last = text(res)
			return !res.IsError && strings.HasPrefix(last, "hello dyn-") && strings.HasSuffix(last, " as "+owner+"-person")
		}) {
			t.Fatalf("%s: whoami after the login: %q", owner, last)
		}
		who[owner] = last
		if _, err := os.Stat(filepath.Join(authDir, "owners", owner, "remote.json")); err != nil {
			t.Errorf("%s's token file: %v", owner, err)
		}
	}
	if who["alice"] == who["bob"] {
		t.Errorf("alice and bob call as the same identity: %q", who["alice"])
	}
	if _, err := os.Stat(filepath.Join(authDir, "remote.json")); !os.IsNotExist(err) {
		t.Errorf("the operator's record was written: %v", err)
	}
	// The operator sees and removes an owner's login.
	if code, out := runBin(t, nil, "auth", "status", "--config", cfgPath, "--owner", "alice"); code != 0 || !strings.Contains(out, "logged in") {
		t.Errorf("auth status --owner alice: %d\n%s", code, out)
	}
	if code, out := runBin(t, nil, "auth", "logout", "--config", cfgPath, "--owner", "bob", "remote"); code != 0 || !strings.Contains(out, "logged out of remote") {
		t.Errorf("auth logout --owner bob: %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(authDir, "owners", "bob", "remote.json")); !os.IsNotExist(err) {
		t.Errorf("bob's token after logout: %v", err)
	}
	if code, out := runBin(t, nil, "auth", "status", "--config", cfgPath, "--owner", "../x"); code != 2 {
		t.Errorf("auth status --owner ../x: %d\n%s", code, out)
	}
}

// proveLogin is an owner's browser b on the login URL handed out: the
// begin page's form posted with token, the redirects followed (to the
// authorization server and back). It returns the last status and body.
func proveLogin(t *testing.T, b *testoauth.Browser, loginURL, token string) (int, string) {
	t.Helper()
	u, err := url.Parse(loginURL)
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{oauth.BeginLoginField: {u.Query().Get(oauth.BeginLoginField)}, oauth.BeginTokenField: {token}}
	resp, err := b.PostForm(u.Scheme+"://"+u.Host+oauth.BeginPath, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// A login through the server is the owner's, not the URL holder's (issue
// 39, item 6): bob's login URL (which the model and its provider read in
// the tool error) opened in mallory's browser shows whose login it is
// and goes no further without bob's bearer token (mallory's own is
// refused); bob's calls still ask for the login. Bob's own browser with
// his token completes it, and his calls run as him. The server's log
// holds no state, code, login cookie or bearer token.
func TestAuthWebLoginIsTheOwners(t *testing.T) {
	srv := testoauth.New(t, testoauth.Options{})
	t.Setenv("SCRATCHPAD_MCP_AUTH_DIR", filepath.Join(t.TempDir(), "auth"))
	tokens := map[string]string{"bob": "bob-token-0123456789ab", "mallory": "mallory-token-012345678"}
	cfgPath, _ := writeConfig(t, `
[mcp.servers.remote]
transport = "http_streamable"
url = "`+srv.MCPURL()+`"

[mcp.servers.remote.auth]
type = "oauth"

[[http.tokens]]
owner = "bob"
token = "`+tokens["bob"]+`"

[[http.tokens]]
owner = "mallory"
token = "`+tokens["mallory"]+`"
`)
	log := &serverLog{}
	base := startHTTPLogged(t, "http", cfgPath, log)
	bob := httpClient(t, base+"/mcp", map[string]string{"Authorization": "Bearer " + tokens["bob"]})
	waitForTool(t, bob, "echo")
	res := callResult(t, bob, "whoami")
	m := regexp.MustCompile(`open (http\S+) in a browser`).FindStringSubmatch(text(res))
	if !res.IsError || m == nil {
		t.Fatalf("whoami before login: %q, want a tool error with a login URL", text(res))
	}
	login := m[1]
	if strings.Contains(login, "state=") {
		t.Fatalf("the URL handed to the model carries the OAuth state: %s", login)
	}

	// Mallory opens it: a page naming bob; her own token is refused.
	before := srv.Authorizations.Load()
	mallory := srv.Browser("mallory-person")
	resp, err := mallory.Get(login)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "owner bob") {
		t.Fatalf("mallory opening bob's login URL: HTTP %d %s", resp.StatusCode, page)
	}
	if code, _ := proveLogin(t, mallory, login, tokens["mallory"]); code != http.StatusForbidden {
		t.Fatalf("mallory's token on bob's login: HTTP %d, want 403", code)
	}
	if n := srv.Authorizations.Load(); n != before {
		t.Fatalf("mallory's browser reached the authorization server for bob's login (%d authorizations)", n-before)
	}
	if res := callResult(t, bob, "whoami"); !res.IsError || !strings.Contains(text(res), "needs an OAuth login") {
		t.Fatalf("bob's whoami after mallory's attempt: %q", text(res))
	}

	// Bob, with his token.
	browser := srv.Browser("bob-person")
	if code, body := proveLogin(t, browser, login, tokens["bob"]); code != http.StatusOK {
		t.Fatalf("bob's login: HTTP %d %s", code, body)
	}
	var last string
	if !testwait.Until(testwait.Timeout, func() bool {
		res := callResult(t, bob, "whoami")
		last = text(res)
		return !res.IsError && strings.HasPrefix(last, "hello dyn-")
	}) {
		t.Fatalf("bob's whoami after his login: %q", last)
	}
	if !strings.HasSuffix(last, " as bob-person") {
		t.Fatalf("bob's calls run as %q, want bob-person", last)
	}

	// What must never be logged.
	secrets := map[string]string{}
	for o, tok := range tokens {
		secrets[o+"'s bearer token"] = tok
	}
	for _, v := range browser.Visited() {
		u, _ := url.Parse(v)
		for _, k := range []string{"state", "code"} {
			if s := u.Query().Get(k); s != "" {
				secrets[k+" in "+u.Path] = s
			}
		}
	}
	for _, sc := range browser.SetCookies() {
		if name, val, _ := strings.Cut(strings.SplitN(sc, ";", 2)[0], "="); strings.Contains(name, "login") && val != "" {
			secrets["the login cookie"] = val
		}
	}
	if secrets["state in /authorize"] == "" || secrets["code in "+oauth.CallbackPath] == "" || secrets["the login cookie"] == "" {
		t.Fatalf("the test did not see the login's secrets: %v", secrets)
	}
	logged := log.String()
	for what, s := range secrets {
		if strings.Contains(logged, s) {
			t.Errorf("the server's log holds %s", what)
		}
	}
	if !strings.Contains(logged, "needs an OAuth login") {
		t.Errorf("the log was not captured:\n%s", logged)
	}
}

// TestAuthStatusBesideAnUnsetEnv (issue 38 item 6): a server whose table
// needs an unset {{ env.X }} does not stop `auth status` for the others;
// the row or the line of that server names the variable, and a login to
// it says which one to set. Nor does a tokens file not made yet.
func TestAuthStatusBesideAnUnsetEnv(t *testing.T) {
	cfgPath, _ := writeConfig(t, `
[http]
tokens_file = "tokens-not-made-yet.toml"

[mcp.servers.remote]
transport = "http_streamable"
url = "https://mcp.example.com/mcp"

[mcp.servers.remote.auth]
type = "oauth"

[mcp.servers.db]
transport = "stdio"
cmd = ["db-mcp"]
env = { DB_URL = "{{ env.SPM_TEST_UNSET_DB_URL }}" }

[mcp.servers.vault]
transport = "http_streamable"
url = "https://{{ env.SPM_TEST_UNSET_VAULT_HOST }}/mcp"

[mcp.servers.vault.auth]
type = "oauth"
`)
	env := []string{"SCRATCHPAD_MCP_AUTH_DIR=" + filepath.Join(t.TempDir(), "auth")}
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"status"}, 0, []string{"remote", "not logged in", "vault", "NOT LOADED: needs environment variable SPM_TEST_UNSET_VAULT_HOST (not set)", "db needs environment variable SPM_TEST_UNSET_DB_URL (not set)"}},
		{[]string{"status", "remote"}, 0, []string{"remote", "not logged in"}},
		{[]string{"status", "vault"}, 0, []string{"vault", "NOT LOADED: needs environment variable SPM_TEST_UNSET_VAULT_HOST"}},
		{[]string{"login", "vault"}, 1, []string{`server "vault" needs environment variable SPM_TEST_UNSET_VAULT_HOST (not set)`}},
	} {
		args := append([]string{"auth", tc.args[0], "--config", cfgPath}, tc.args[1:]...)
		code, out := runBin(t, env, args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d\n%s", tc.args, code, tc.code, out)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q\n%s", tc.args, w, out)
			}
		}
	}
}
