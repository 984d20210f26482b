package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// clientName is how the proxy names itself to authorization servers (the
// consent screen shows it).
const clientName = "scratchpad-mcp"

// identify returns the client identity to use with the authorization
// server as, in the specification's order: the configured (pre-registered)
// client; a Client ID Metadata Document when one is configured and the
// server supports them; dynamic registration (RFC 7591) when the server
// has a registration endpoint. redirectURI is the login's loopback
// redirect ("" for client_credentials).
func identify(ctx context.Context, hc *http.Client, cfg *config.Auth, as *ServerMetadata, redirectURI string, scopes []string) (Identity, error) {
	switch {
	case cfg.ClientID != "":
		c := Identity{ID: cfg.ClientID, Secret: cfg.ClientSecret, Registered: "configured"}
		c.AuthMethod = chooseAuthMethod(c.Secret, as.TokenEndpointAuthMethodsSupported)
		if cfg.PrivateKeyFile != "" {
			c.AuthMethod = AuthPrivateKeyJWT
		}
		return c, nil
	case cfg.ClientMetadataURL != "" && as.ClientIDMetadataDocumentSupported:
		return Identity{ID: cfg.ClientMetadataURL, AuthMethod: AuthNone, Registered: "metadata document"}, nil
	case as.RegistrationEndpoint != "":
		return registerDynamic(ctx, hc, as, redirectURI, scopes)
	}
	var why []string
	if cfg.ClientMetadataURL != "" {
		why = append(why, "it does not support Client ID Metadata Documents")
	} else if as.ClientIDMetadataDocumentSupported {
		why = append(why, "it supports Client ID Metadata Documents, but client_metadata_url is not set")
	}
	why = append(why, "it has no registration_endpoint")
	return Identity{}, fmt.Errorf("%w: authorization server %s: %s; set client_id (and client_secret) of a client registered there",
		ErrRegistration, config.RedactURL(as.Issuer), strings.Join(why, ", "))
}

// registerDynamic registers a client (RFC 7591): a public client with the
// loopback redirect, authenticating with none where the server allows it
// (a native application cannot keep a secret), else with the secret the
// server issues.
func registerDynamic(ctx context.Context, hc *http.Client, as *ServerMetadata, redirectURI string, scopes []string) (Identity, error) {
	method := AuthNone
	if m := as.TokenEndpointAuthMethodsSupported; len(m) > 0 && !slices.Contains(m, AuthNone) {
		method = chooseAuthMethod("secret", m)
	}
	// go-sdk's type for what is sent; the request and the answer are ours
	// (oauthex.RegisterClient quotes the whole answer in its errors, the
	// issued client_secret included: NOTES.md, issue 35).
	b, _ := json.Marshal(oauthex.ClientRegistrationMetadata{
		ClientName:              clientName,
		RedirectURIs:            []string{redirectURI},
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: method,
		Scope:                   strings.Join(scopes, " "),
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, as.RegistrationEndpoint, bytes.NewReader(b))
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrRegistration, config.RedactURLError(err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrRegistration, config.RedactURLError(err))
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrRegistration, err)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		te := &TokenError{Status: resp.StatusCode}
		_ = json.Unmarshal(rb, te)
		return Identity{}, fmt.Errorf("%w: %s: %w", ErrRegistration, config.RedactURL(as.RegistrationEndpoint), te)
	}
	var got struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		AuthMethod   string `json:"token_endpoint_auth_method"`
	}
	if err := json.Unmarshal(rb, &got); err != nil || got.ClientID == "" {
		return Identity{}, fmt.Errorf("%w: %s answered without a client_id", ErrRegistration, config.RedactURL(as.RegistrationEndpoint))
	}
	c := Identity{ID: got.ClientID, Secret: got.ClientSecret, AuthMethod: got.AuthMethod, Registered: "dynamic"}
	if c.AuthMethod == "" {
		c.AuthMethod = chooseAuthMethod(c.Secret, as.TokenEndpointAuthMethodsSupported)
	}
	return c, nil
}
