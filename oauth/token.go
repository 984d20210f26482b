package oauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// Token endpoint authentication methods (RFC 7591 §2, RFC 7523).
const (
	AuthBasic         = "client_secret_basic"
	AuthPost          = "client_secret_post"
	AuthNone          = "none"
	AuthPrivateKeyJWT = "private_key_jwt"
)

// chooseAuthMethod picks how a client with (or without) a secret
// authenticates at a token endpoint that supports methods: basic when it
// may (RFC 8414: absent means client_secret_basic), else post.
func chooseAuthMethod(secret string, methods []string) string {
	if secret == "" {
		return AuthNone
	}
	if len(methods) == 0 || slices.Contains(methods, AuthBasic) {
		return AuthBasic
	}
	if slices.Contains(methods, AuthPost) {
		return AuthPost
	}
	return AuthBasic
}

// signer makes a private_key_jwt client assertion for an audience; nil
// for clients that authenticate otherwise.
type signer func(clientID, audience string) (string, error)

// tokenRequest POSTs form to a token endpoint, authenticated as client,
// and returns the token. An OAuth error answer is a [*TokenError].
func tokenRequest(ctx context.Context, hc *http.Client, endpoint string, form url.Values, client Identity, sign signer, now time.Time) (*Token, error) {
	form = cloneValues(form)
	header := http.Header{}
	switch client.AuthMethod {
	case AuthBasic:
		// RFC 6749 §2.3.1: both form-encoded before base64.
		header.Set("Authorization", "Basic "+basic(url.QueryEscape(client.ID), url.QueryEscape(client.Secret)))
	case AuthPost:
		form.Set("client_id", client.ID)
		form.Set("client_secret", client.Secret)
	case AuthPrivateKeyJWT:
		if sign == nil {
			return nil, fmt.Errorf("private_key_jwt without a private key")
		}
		jwt, err := sign(client.ID, endpoint)
		if err != nil {
			return nil, err
		}
		form.Set("client_id", client.ID)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", jwt)
	default:
		form.Set("client_id", client.ID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, config.RedactURLError(err)
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, config.RedactURLError(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		te := &TokenError{Status: resp.StatusCode}
		_ = json.Unmarshal(b, te)
		return nil, te
	}
	var raw struct {
		AccessToken  string          `json:"access_token"`
		TokenType    string          `json:"token_type"`
		RefreshToken string          `json:"refresh_token"`
		Scope        string          `json:"scope"`
		ExpiresIn    json.RawMessage `json:"expires_in"`
	}
	if err := json.Unmarshal(b, &raw); err != nil || raw.AccessToken == "" {
		return nil, &TokenError{Status: resp.StatusCode, Code: "invalid_response", Description: "no access_token in the answer"}
	}
	if raw.TokenType != "" && !strings.EqualFold(raw.TokenType, "Bearer") {
		return nil, &TokenError{Status: resp.StatusCode, Code: "invalid_response", Description: fmt.Sprintf("token_type %q, not Bearer", raw.TokenType)}
	}
	t := &Token{AccessToken: raw.AccessToken, TokenType: "Bearer", RefreshToken: raw.RefreshToken, Scope: raw.Scope, Obtained: now}
	// expires_in is a number; some servers send it as a string.
	var secs float64
	if json.Unmarshal(raw.ExpiresIn, &secs) != nil {
		var s string
		if json.Unmarshal(raw.ExpiresIn, &s) == nil {
			fmt.Sscan(s, &secs)
		}
	}
	if secs > 0 {
		t.Expiry = now.Add(time.Duration(secs * float64(time.Second)))
	}
	return t, nil
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// basic is the value of a Basic Authorization header for user and
// password.
func basic(user, password string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
}
