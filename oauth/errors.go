package oauth

import (
	"errors"
	"fmt"
)

// Sentinel errors. Match them with [errors.Is]; the errors carrying them
// say which server and why.
var (
	// ErrLoginRequired means there is no usable token for a server whose
	// grant needs a person: never logged in, logged out, the refresh token
	// refused (revoked or expired), or the server asks for more scope.
	// The error is a [*LoginError] naming the command to run.
	ErrLoginRequired = errors.New("login required")
	// ErrDiscovery means the server's protected resource metadata or its
	// authorization server's metadata could not be found or is unusable
	// (no PKCE S256, an issuer that does not match, a resource another
	// server's).
	ErrDiscovery = errors.New("oauth discovery failed")
	// ErrRegistration means no client identity could be had: none
	// configured, and the authorization server offers neither Client ID
	// Metadata Documents (with client_metadata_url set) nor dynamic
	// registration, or the registration was refused.
	ErrRegistration = errors.New("oauth client registration failed")
	// ErrAuthorization means the authorization step of a login failed:
	// the server redirected back with an error, the state did not match,
	// or nobody completed it in time.
	ErrAuthorization = errors.New("oauth authorization failed")
	// ErrSealKey means a token record on the replicas' shared store
	// ([Store].Shared) cannot be opened with this process's key
	// ([layout.OAuthSealKeyFile] in the token directory): another host
	// sealed it with its own key, or the record was altered or moved to
	// another name. Every replica needs the same key file.
	ErrSealKey = errors.New("oauth: the shared token record cannot be opened with this key")
)

// LoginError is [ErrLoginRequired] for one server, with the reason and the
// command that fixes it.
type LoginError struct {
	Server  string // the server's name in the config
	Reason  string // "not logged in", "the refresh token was refused: …"
	Command string // "scratchpad-mcp auth login linear"
	// URL, when set, is a login through the server (an owner of a bearer
	// token): its begin page ([BeginPath]), which only the owner can get
	// past; open it, then call again. It replaces Command. It holds no
	// state or other secret.
	URL string
}

func (e *LoginError) Error() string {
	if e.URL != "" {
		return fmt.Sprintf("upstream %q needs an OAuth login (%s): open %s in a browser to log in (the page asks for the owner's scratchpad-mcp bearer token), then call again", e.Server, e.Reason, e.URL)
	}
	return fmt.Sprintf("upstream %q needs an OAuth login (%s): run `%s`", e.Server, e.Reason, e.Command)
}

// Is makes the error match [ErrLoginRequired].
func (e *LoginError) Is(target error) bool { return target == ErrLoginRequired }

// TokenError is an OAuth error response of an authorization server's
// token or registration endpoint (RFC 6749 §5.2, RFC 7591 §3.2.2).
type TokenError struct {
	Status      int    // the HTTP status
	Code        string `json:"error"` // invalid_grant, invalid_client, …
	Description string `json:"error_description"`
}

func (e *TokenError) Error() string {
	msg := fmt.Sprintf("HTTP %d", e.Status)
	if e.Code != "" {
		msg += ": " + e.Code
	}
	if e.Description != "" {
		msg += ": " + e.Description
	}
	return msg
}
