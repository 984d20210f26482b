package oauth

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// TestOAuthexGetsWrong keeps NOTES.md's list of what go-sdk's oauthex
// (v1.8.0) gets wrong for us true: each case runs oauthex on an input and
// asserts its bad behaviour, then runs ours on the same input. When a
// go-sdk upgrade fixes one, its case fails: then use oauthex there and
// drop ours.
func TestOAuthexGetsWrong(t *testing.T) {
	const secret = "PATHSECRET123"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		base := "http://" + r.Host
		switch r.URL.Path {
		case "/plain/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/plain":
			fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"code_challenge_methods_supported":["plain"]}`, base+"/plain", base+"/a", base+"/t")
		case "/.well-known/oauth-authorization-server/cc":
			fmt.Fprintf(w, `{"issuer":%q,"token_endpoint":%q,"grant_types_supported":["client_credentials"]}`, base+"/cc", base+"/t")
		case "/.well-known/oauth-protected-resource/mcp":
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, base, base)
		case "/register":
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"client_id":"abc","client_secret":"ISSUED-SECRET","client_id_issued_at":"2026-01-01"}`)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	hc := srv.Client()
	ctx := context.Background()
	cases := []struct {
		name string
		// theirs returns "" when oauthex behaves as NOTES says, else what it did.
		theirs func() string
		// ours returns "" when ours does right on the same input.
		ours func() string
	}{
		{"an empty quoted parameter loses the whole challenge",
			func() string {
				_, err := oauthex.ParseWWWAuthenticate([]string{`Bearer error="invalid_token", error_description="", resource_metadata="https://h/m"`})
				if err == nil {
					return "parsed it"
				}
				return ""
			},
			func() string {
				h := http.Header{"Www-Authenticate": {`Bearer error="invalid_token", error_description="", resource_metadata="https://h/m"`}}
				if c, ok := ParseChallenge(h); !ok || c.ResourceMetadata != "https://h/m" {
					return fmt.Sprintf("%+v, %v", c, ok)
				}
				return ""
			}},
		{"PKCE plain alone passes for PKCE",
			func() string {
				m, err := oauthex.GetAuthServerMeta(ctx, srv.URL+"/.well-known/oauth-authorization-server/plain", srv.URL+"/plain", hc)
				if err != nil || m == nil {
					return fmt.Sprintf("refused: %v", err)
				}
				return ""
			},
			func() string {
				m, err := serverMetadata(ctx, hc, srv.URL+"/plain", true)
				if err != nil || supportsS256(m) {
					return fmt.Sprintf("%v, S256 %v", err, err == nil && supportsS256(m))
				}
				return ""
			}},
		{"a client-credentials server without PKCE is refused",
			func() string {
				_, err := oauthex.GetAuthServerMeta(ctx, srv.URL+"/.well-known/oauth-authorization-server/cc", srv.URL+"/cc", hc)
				if err == nil || !strings.Contains(err.Error(), "PKCE") {
					return fmt.Sprintf("%v", err)
				}
				return ""
			},
			func() string {
				if _, err := serverMetadata(ctx, hc, srv.URL+"/cc", true); err != nil {
					return err.Error()
				}
				return ""
			}},
		{"an intranet authorization server is refused",
			func() string {
				// Refused before any dial: no network is needed.
				_, err := oauthex.GetAuthServerMeta(ctx, "https://10.1.2.3/.well-known/oauth-authorization-server", "https://10.1.2.3", hc)
				if err == nil || !strings.Contains(err.Error(), "non-public") {
					return fmt.Sprintf("%v", err)
				}
				return ""
			},
			func() string {
				// Ours asks the operator's servers wherever they are.
				urls, err := serverMetadataURLs("https://10.1.2.3")
				if err != nil || len(urls) != 2 || urls[0] != "https://10.1.2.3/.well-known/oauth-authorization-server" {
					return fmt.Sprintf("%v, %v", urls, err)
				}
				return ""
			}},
		{"a resource above the endpoint is refused",
			func() string {
				_, err := oauthex.GetProtectedResourceMetadata(ctx, srv.URL+"/.well-known/oauth-protected-resource/mcp", srv.URL+"/mcp", hc)
				if err == nil {
					return "accepted"
				}
				return ""
			},
			func() string {
				if !covers(srv.URL, srv.URL+"/mcp") {
					return "refused"
				}
				return ""
			}},
		{"errors quote the URL unmasked",
			func() string {
				_, err := oauthex.GetProtectedResourceMetadata(ctx, srv.URL+"/.well-known/oauth-protected-resource/mcp/"+secret, srv.URL+"/mcp/"+secret, hc)
				if err == nil || !strings.Contains(err.Error(), secret) {
					return fmt.Sprintf("%v", err)
				}
				return ""
			},
			func() string {
				_, err := discover(ctx, hc, srv.URL+"/mcp/"+secret, Challenge{ResourceMetadata: srv.URL + "/.well-known/oauth-protected-resource/mcp/" + secret})
				if err == nil || strings.Contains(err.Error(), secret) {
					return fmt.Sprintf("%v", err)
				}
				return ""
			}},
		{"a registration answer it cannot decode is quoted, client_secret and all",
			func() string {
				_, err := oauthex.RegisterClient(ctx, srv.URL+"/register", &oauthex.ClientRegistrationMetadata{RedirectURIs: []string{"http://127.0.0.1/cb"}}, hc)
				if err == nil || !strings.Contains(err.Error(), "ISSUED-SECRET") {
					return fmt.Sprintf("%v", err)
				}
				return ""
			},
			func() string {
				c, err := registerDynamic(ctx, hc, &ServerMetadata{RegistrationEndpoint: srv.URL + "/register"}, "http://127.0.0.1/cb", nil)
				if err != nil && strings.Contains(err.Error(), "ISSUED-SECRET") || err == nil && c.ID != "abc" {
					return fmt.Sprintf("%+v, %v", c.ID, err)
				}
				return ""
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.theirs(); got != "" {
				t.Errorf("oauthex no longer does what NOTES.md says (%s): use it here, drop ours and the note", got)
			}
			if got := c.ours(); got != "" {
				t.Errorf("ours on the same input: %s", got)
			}
		})
	}
}

// TestMetadataMistypedFields: a metadata document with a field the client
// does not read in another type than the RFC's is still used; one it
// reads, mistyped, is refused naming it.
func TestMetadataMistypedFields(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		base := "http://" + r.Host
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server/good":
			fmt.Fprintf(w, `{"issuer":%q,"token_endpoint":%q,"ui_locales_supported":"en","code_challenge_methods_supported":["S256"]}`, base+"/good", base+"/t")
		case "/.well-known/oauth-authorization-server/bad":
			fmt.Fprintf(w, `{"issuer":%q,"token_endpoint":5}`, base+"/bad")
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	tests := []struct {
		issuer string
		errHas string // "" accepted
	}{
		{"/good", ""},
		{"/bad", "no token_endpoint"},
	}
	for _, tt := range tests {
		md, err := serverMetadata(context.Background(), srv.Client(), srv.URL+tt.issuer, true)
		switch {
		case tt.errHas == "" && (err != nil || md.TokenEndpoint != srv.URL+"/t" || !supportsS256(md)):
			t.Errorf("%s: %+v, %v; want it used", tt.issuer, md, err)
		case tt.errHas != "" && (err == nil || !strings.Contains(err.Error(), tt.errHas)):
			t.Errorf("%s: %v; want an error with %q", tt.issuer, err, tt.errHas)
		}
	}
}
