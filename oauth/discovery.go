package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// ResourceMetadata is a server's OAuth 2.0 Protected Resource Metadata
// (RFC 9728 §2): go-sdk's type. Its fetch is ours (see [discover]):
// oauthex.GetProtectedResourceMetadata wants the resource to equal the
// endpoint, and quotes URLs unmasked in its errors (NOTES.md, issue 35).
type ResourceMetadata = oauthex.ProtectedResourceMetadata

// ServerMetadata is an authorization server's metadata (RFC 8414 §2, or
// OpenID Connect Discovery 1.0): go-sdk's type. Its fetch and checks are
// ours ([serverMetadata]): oauthex.GetAuthServerMeta takes PKCE "plain"
// alone for PKCE and refuses a client-credentials server without any.
type ServerMetadata = oauthex.AuthServerMeta

// Discovery is what discovery found for one MCP server: the resource to
// name in authorization and token requests (RFC 8707), its metadata,
// its authorization server's, and the scope the challenge asked for.
type Discovery struct {
	Resource string // the canonical URI sent as the resource parameter
	PRM      ResourceMetadata
	AS       ServerMetadata
	// Legacy: no protected resource metadata was found, so the MCP
	// server's origin was taken as its authorization server (the
	// 2025-03-26 revision's rule, still met in the field).
	Legacy bool
}

// resourceMetadataURLs are where to look for the protected resource
// metadata of the MCP endpoint mcpURL, in the specification's order: the
// challenge's resource_metadata when given; else the well-known URI with
// the endpoint's path inserted, then at the root (RFC 9728 §3.1).
func resourceMetadataURLs(mcpURL string, ch Challenge) ([]string, error) {
	if ch.ResourceMetadata != "" {
		return []string{ch.ResourceMetadata}, nil
	}
	u, err := url.Parse(mcpURL)
	if err != nil {
		return nil, err
	}
	root := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/.well-known/oauth-protected-resource"}
	var out []string
	if p := strings.TrimSuffix(u.EscapedPath(), "/"); p != "" {
		out = append(out, root.String()+p)
	}
	return append(out, root.String()), nil
}

// serverMetadataURLs are where to look for the metadata of the
// authorization server issuer, in the specification's order: for an
// issuer with a path, RFC 8414 and OpenID Connect with the path inserted
// after the well-known prefix, then OpenID Connect with it appended; for
// one without, RFC 8414 then OpenID Connect.
func serverMetadataURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil, err
	}
	base := u.Scheme + "://" + u.Host
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	if p == "" {
		return []string{base + "/.well-known/oauth-authorization-server", base + "/.well-known/openid-configuration"}, nil
	}
	return []string{
		base + "/.well-known/oauth-authorization-server" + p,
		base + "/.well-known/openid-configuration" + p,
		base + p + "/.well-known/openid-configuration",
	}, nil
}

// errNotFound is a metadata URL that had no document (any 4xx, or an
// answer that is not JSON): the next URL in the order is tried.
var errNotFound = errors.New("no metadata there")

// getJSON fetches a metadata document into v.
func getJSON(ctx context.Context, hc *http.Client, rawURL string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return config.RedactURLError(err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MCP-Protocol-Version", ProtocolVersion)
	resp, err := hc.Do(req)
	if err != nil {
		return config.RedactURLError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		return fmt.Errorf("%w: HTTP %d", errNotFound, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "" && mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return fmt.Errorf("%w: Content-Type %q", errNotFound, mt)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return err
	}
	if len(b) > maxDocument {
		return fmt.Errorf("document over %d bytes", maxDocument)
	}
	// A field of another type than the RFC's (a string for a list) is
	// left zero, not the document refused: go-sdk's types name more
	// fields than the client reads, and the ones it reads are checked
	// by the callers.
	var mistyped *json.UnmarshalTypeError
	if err := json.Unmarshal(b, v); err != nil && !errors.As(err, &mistyped) {
		return fmt.Errorf("%w: %v", errNotFound, err)
	}
	return nil
}

// maxDocument bounds a metadata or token response: they are small, and
// a server that streams forever must not fill the memory.
const maxDocument = 1 << 20

// ProtocolVersion is the MCP-Protocol-Version sent with discovery
// requests, as the specification's clients do.
const ProtocolVersion = "2025-11-25"

// discover finds the authorization server of the MCP endpoint mcpURL and
// its metadata. ch is the challenge of the server's 401, if any.
func discover(ctx context.Context, hc *http.Client, mcpURL string, ch Challenge) (*Discovery, error) {
	d := &Discovery{Resource: canonicalResource(mcpURL)}
	urls, err := resourceMetadataURLs(mcpURL, ch)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDiscovery, err)
	}
	var tried []string
	found := false
	for _, u := range urls {
		var prm ResourceMetadata
		err := getJSON(ctx, hc, u, &prm)
		if errors.Is(err, errNotFound) {
			tried = append(tried, config.RedactURL(u)+" ("+err.Error()+")")
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: protected resource metadata %s: %v", ErrDiscovery, config.RedactURL(u), err)
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("%w: protected resource metadata %s names no authorization_servers", ErrDiscovery, config.RedactURL(u))
		}
		if prm.Resource != "" {
			// RFC 9728 §3.3: the metadata must be this resource's. A
			// resource above the endpoint (the origin, a parent path)
			// covers it; the token is then asked for that resource.
			if !covers(prm.Resource, mcpURL) {
				return nil, fmt.Errorf("%w: protected resource metadata %s is for %q, not %q", ErrDiscovery, config.RedactURL(u), config.RedactURL(prm.Resource), config.RedactURL(mcpURL))
			}
			d.Resource = canonicalResource(prm.Resource)
		}
		d.PRM, found = prm, true
		break
	}
	var issuer string
	if found {
		// The first one: the specification leaves the choice to the
		// client, and servers list their preferred one first.
		issuer = d.PRM.AuthorizationServers[0]
	} else {
		if ch.ResourceMetadata != "" {
			return nil, fmt.Errorf("%w: the resource_metadata of the server's challenge has none: %s", ErrDiscovery, strings.Join(tried, "; "))
		}
		u, _ := url.Parse(mcpURL)
		issuer = u.Scheme + "://" + u.Host
		d.Legacy = true
	}
	as, err := serverMetadata(ctx, hc, issuer, !d.Legacy)
	if err != nil && d.Legacy && errors.Is(err, errNotFound) {
		// 2025-03-26: without any metadata, the default endpoints on
		// the server's origin.
		d.AS = ServerMetadata{
			Issuer:                        issuer,
			AuthorizationEndpoint:         issuer + "/authorize",
			TokenEndpoint:                 issuer + "/token",
			RegistrationEndpoint:          issuer + "/register",
			CodeChallengeMethodsSupported: []string{"S256"},
		}
		return d, nil
	}
	if err != nil {
		if d.Legacy {
			return nil, fmt.Errorf("%w: no protected resource metadata (%s), and %v", ErrDiscovery, strings.Join(tried, "; "), err)
		}
		return nil, fmt.Errorf("%w: %w", ErrDiscovery, err)
	}
	d.AS = *as
	return d, nil
}

// serverMetadata fetches the metadata of the authorization server issuer
// from the first well-known URL that has it, and checks that it is that
// issuer's (RFC 8414 §3.3). Not in the legacy case (strict false): there
// the document on the MCP server's origin describes whatever server it
// names, as the 2025-03-26 revision had it.
func serverMetadata(ctx context.Context, hc *http.Client, issuer string, strict bool) (*ServerMetadata, error) {
	urls, err := serverMetadataURLs(issuer)
	if err != nil {
		return nil, fmt.Errorf("authorization server %q: %v", config.RedactURL(issuer), err)
	}
	var tried []string
	for _, u := range urls {
		var md ServerMetadata
		err := getJSON(ctx, hc, u, &md)
		if errors.Is(err, errNotFound) {
			tried = append(tried, config.RedactURL(u)+" ("+err.Error()+")")
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("authorization server metadata %s: %v", config.RedactURL(u), err)
		}
		if strict && strings.TrimSuffix(md.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
			return nil, fmt.Errorf("authorization server metadata %s is for issuer %q, not %q", config.RedactURL(u), config.RedactURL(md.Issuer), config.RedactURL(issuer))
		}
		if md.TokenEndpoint == "" {
			return nil, fmt.Errorf("authorization server metadata %s has no token_endpoint", config.RedactURL(u))
		}
		return &md, nil
	}
	return nil, fmt.Errorf("%w: no authorization server metadata for %q: %s", errNotFound, config.RedactURL(issuer), strings.Join(tried, "; "))
}

// supportsS256 reports whether the authorization server says it does PKCE
// with S256. Absent means no PKCE, and the specification forbids going on;
// "plain" alone is no better (MCP: clients MUST use S256).
func supportsS256(m *ServerMetadata) bool {
	return slices.Contains(m.CodeChallengeMethodsSupported, "S256")
}

// canonicalResource is the canonical URI of an MCP server (RFC 8707 §2,
// as the specification shows it): lowercase scheme and host, no fragment,
// no trailing slash unless it is the whole path.
func canonicalResource(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "/" && u.RawQuery == "" {
		u.Path, u.RawPath = "", ""
	}
	return u.String()
}

// covers reports whether resource (from protected resource metadata)
// names the endpoint mcpURL or a parent of it on the same origin.
func covers(resource, mcpURL string) bool {
	r, err1 := url.Parse(canonicalResource(resource))
	m, err2 := url.Parse(canonicalResource(mcpURL))
	if err1 != nil || err2 != nil || r.Scheme != m.Scheme || r.Host != m.Host {
		return false
	}
	rp := strings.TrimSuffix(r.Path, "/")
	return rp == "" || m.Path == rp || strings.HasPrefix(m.Path, rp+"/")
}
