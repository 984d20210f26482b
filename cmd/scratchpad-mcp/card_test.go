package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/scratchpad-mcp/scratchpad-mcp/server"
)

// cardSchema compiles the Server Card schema of SEP-2127 checked into
// testdata/servercard (the extension repository's schema.json, v1), and
// holds the validator to the repository's own examples: every valid one
// passes, every invalid one fails.
func cardSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "servercard")
	raw, err := os.ReadFile(filepath.Join(dir, "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const loc = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(loc + "#/$defs/ServerCard")
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"valid", "invalid"} {
		files, _ := filepath.Glob(filepath.Join(dir, kind, "*.json"))
		if len(files) == 0 {
			t.Fatalf("no %s examples in %s", kind, dir)
		}
		for _, f := range files {
			err := validateCard(s, mustRead(t, f))
			if (err == nil) != (kind == "valid") {
				t.Fatalf("the schema judges %s wrongly: %v", f, err)
			}
		}
	}
	return s
}

func validateCard(s *jsonschema.Schema, b []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

type servedCard struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Remotes []struct {
		Type    string `json:"type"`
		URL     string `json:"url"`
		Headers []struct {
			Name       string `json:"name"`
			IsRequired bool   `json:"isRequired"`
			IsSecret   bool   `json:"isSecret"`
		} `json:"headers"`
		SupportedProtocolVersions []string `json:"supportedProtocolVersions"`
	} `json:"remotes"`
	Meta map[string]struct {
		Tools []struct {
			Name, Summary string
		} `json:"tools"`
	} `json:"_meta"`
}

// TestServerCard serves the binary over streamable HTTP and SSE, with and
// without bearer tokens, and fetches its Server Card from both paths
// (SEP-2127's <streamable-http-url>/server-card and the well-known one):
// valid against the SEP's schema, the name server.json gives, a remote
// that names where to connect and what it speaks, an Authorization header
// required exactly when tokens are, and the own tools every agent gets
// (no coordinator-only tool, no upstream tool). With tokens it is served
// without one and holds no owner's name or token. Caching and the HTTP
// edges: ETag and 304, CORS, HEAD, 405 for POST, 403 for a rebound Host.
func TestServerCard(t *testing.T) {
	schema := cardSchema(t)
	var registry struct{ Name string }
	if err := json.Unmarshal(mustRead(t, filepath.Join("..", "..", "server.json")), &registry); err != nil {
		t.Fatal(err)
	}
	const token = "card-owner-token-0123456789"
	for _, tc := range []struct {
		name, transport, extra string
		remote                 string // the remote's type
		auth                   bool
		publicURL              string
	}{
		{name: "http", transport: "http", remote: "streamable-http"},
		{name: "sse", transport: "sse", remote: "sse"},
		{name: "http with tokens and public_url", transport: "http", remote: "streamable-http", auth: true,
			publicURL: "https://mcp.example.com/", extra: `
[http]
public_url = "https://mcp.example.com/"

[[http.tokens]]
owner = "carol-owner"
token = "` + token + `"
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := writeConfig(t, tc.extra)
			base := startHTTP(t, tc.transport, cfg)
			var first []byte
			for _, path := range []string{server.CardPath, server.CardWellKnownPath} {
				res, body := getCard(t, base+path, nil)
				if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != server.CardMediaType {
					t.Fatalf("GET %s: %s %q\n%s", path, res.Status, res.Header.Get("Content-Type"), body)
				}
				if first == nil {
					first = body
				} else if !bytes.Equal(first, body) {
					t.Errorf("the two paths serve different cards:\n%s\n%s", first, body)
				}
				if err := validateCard(schema, body); err != nil {
					t.Errorf("GET %s: not a valid Server Card: %v\n%s", path, err, body)
				}
				for h, want := range map[string]string{"Access-Control-Allow-Origin": "*", "Cache-Control": "public, max-age=3600"} {
					if got := res.Header.Get(h); got != want {
						t.Errorf("GET %s: %s %q, want %q", path, h, got, want)
					}
				}
				etag := res.Header.Get("ETag")
				if res, _ := getCard(t, base+path, map[string]string{"If-None-Match": etag}); etag == "" || res.StatusCode != http.StatusNotModified {
					t.Errorf("GET %s with If-None-Match %s: %s, want 304", path, etag, res.Status)
				}
			}
			var c servedCard
			if err := json.Unmarshal(first, &c); err != nil {
				t.Fatal(err)
			}
			if c.Name != registry.Name || c.Version == "" {
				t.Errorf("name %q version %q; want server.json's name %q and a version", c.Name, c.Version, registry.Name)
			}
			wantURL := base + "/mcp"
			if tc.remote == "sse" {
				wantURL = base + "/sse"
			}
			if tc.publicURL != "" {
				wantURL = strings.TrimSuffix(tc.publicURL, "/") + "/mcp"
			}
			if len(c.Remotes) != 1 || c.Remotes[0].Type != tc.remote || c.Remotes[0].URL != wantURL {
				t.Fatalf("remotes %+v; want one %s at %s", c.Remotes, tc.remote, wantURL)
			}
			if got := slices.Contains(c.Remotes[0].SupportedProtocolVersions, "2026-07-28"); got != (tc.remote == "streamable-http") || !slices.Contains(c.Remotes[0].SupportedProtocolVersions, "2025-11-25") {
				t.Errorf("supportedProtocolVersions %v over %s", c.Remotes[0].SupportedProtocolVersions, tc.remote)
			}
			hdrs := c.Remotes[0].Headers
			if tc.auth != (len(hdrs) == 1 && hdrs[0].Name == "Authorization" && hdrs[0].IsRequired && hdrs[0].IsSecret) || !tc.auth && len(hdrs) != 0 {
				t.Errorf("headers %+v with tokens %v", hdrs, tc.auth)
			}
			var tools []string
			for _, tl := range c.Meta[server.CardToolsKey].Tools {
				tools = append(tools, tl.Name)
				if tl.Summary == "" {
					t.Errorf("tool %s has no summary", tl.Name)
				}
			}
			for _, want := range []string{"count_by", "grep", "read_scratchpad", "append_scratchpad", "memory", "read_artifact"} {
				if !slices.Contains(tools, want) {
					t.Errorf("tools %v lack %s", tools, want)
				}
			}
			for _, not := range []string{"write_artifact", "listing", "words", "whoami"} {
				if slices.Contains(tools, not) {
					t.Errorf("tools %v hold %s (a coordinator's or an upstream's)", tools, not)
				}
			}
			if tc.auth {
				for _, leak := range []string{token, "carol-owner"} {
					if bytes.Contains(first, []byte(leak)) {
						t.Errorf("the public card holds %q", leak)
					}
				}
				if res, _ := getCard(t, base+"/mcp", nil); res.StatusCode != http.StatusUnauthorized {
					t.Errorf("GET /mcp without a token: %s; the card's exemption must not reach /mcp", res.Status)
				}
			}
			// The HTTP edges.
			req, _ := http.NewRequest(http.MethodPost, base+server.CardPath, strings.NewReader("{}"))
			if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("POST the card: %v %v, want 405", res, err)
			} else {
				res.Body.Close()
			}
			req, _ = http.NewRequest(http.MethodHead, base+server.CardPath, nil)
			if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusOK {
				t.Errorf("HEAD the card: %v %v, want 200", res, err)
			} else {
				res.Body.Close()
			}
			req, _ = http.NewRequest(http.MethodGet, base+server.CardPath, nil)
			req.Host = "rebind.example.com"
			if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
				t.Errorf("GET the card under another Host: %v %v, want 403 (DNS rebinding)", res, err)
			} else {
				res.Body.Close()
			}
		})
	}
}

func getCard(t *testing.T, url string, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", server.CardMediaType)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}
