package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// EnvAuthDir names the environment variable that overrides where tokens
// are stored (tests, containers, a second installation).
const EnvAuthDir = "SCRATCHPAD_MCP_AUTH_DIR"

// DefaultDir is where a user's upstream credentials live: $SCRATCHPAD_MCP_AUTH_DIR,
// else scratchpad-mcp/auth in the user's configuration directory
// ($XDG_CONFIG_HOME or ~/.config on Linux, ~/Library/Application Support
// on macOS, %AppData% on Windows). Never under memory_dir: what agents
// can read must not hold credentials.
func DefaultDir() (string, error) {
	if d := os.Getenv(EnvAuthDir); d != "" {
		return filepath.Abs(d)
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no directory for OAuth tokens (set %s): %w", EnvAuthDir, err)
	}
	return filepath.Join(base, "scratchpad-mcp", "auth"), nil
}

// Store keeps one [Record] per server (and owner) as a JSON file of mode
// 0600 in a directory of mode 0700: {Dir}/{server}.json for the user,
// {Dir}/owners/{owner}/{server}.json for an owner of a bearer token.
// Writes are atomic (a temporary file renamed over the old one), so a
// serve refreshing and an `auth login` writing at once leave one whole
// record, never a mix.
//
// With Shared set (replica mode, [cluster] redis_url) the records are on
// the store replicas share instead, sealed with the key in Dir
// ([layout.OAuthSealKeyFile]; see [Shared]); Dir then holds that key
// alone.
type Store struct {
	Dir    string
	Shared Shared

	keyMu sync.Mutex
	key   *sealKey // loaded at the first use of Shared
}

// Record is what is stored for one server: the identity the client
// registered, the endpoints found by discovery (so refreshing needs no
// rediscovery), the scope asked for and the token.
type Record struct {
	URL      string `json:"url"`      // the MCP endpoint logged in to: a token is never sent elsewhere
	Resource string `json:"resource"` // the resource parameter (RFC 8707)
	Issuer   string `json:"issuer"`
	// Endpoints of the authorization server.
	AuthorizationEndpoint string   `json:"authorization_endpoint,omitempty"`
	TokenEndpoint         string   `json:"token_endpoint"`
	RevocationEndpoint    string   `json:"revocation_endpoint,omitempty"`
	Client                Identity `json:"client"`
	// Scopes are what was asked for, grown by step-up challenges: the
	// next login asks for them all.
	Scopes []string `json:"scopes,omitempty"`
	Grant  string   `json:"grant"`
	Token  Token    `json:"token"`
	// Refused says why the tokens were dropped (the refresh token
	// refused): the next login is needed, and asking the authorization
	// server again before it would only be refused again.
	Refused string `json:"refused,omitempty"`
}

// Identity is the client's identity at the authorization server.
type Identity struct {
	ID     string `json:"client_id"`
	Secret string `json:"client_secret,omitempty"`
	// AuthMethod is how it authenticates at the token endpoint:
	// client_secret_basic, client_secret_post, private_key_jwt or none.
	AuthMethod string `json:"auth_method"`
	// Registered says how the identity came: "configured", "metadata
	// document" or "dynamic".
	Registered string `json:"registered"`
}

// Token is an access token and what came with it.
type Token struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Scope        string    `json:"scope,omitempty"`
	Obtained     time.Time `json:"obtained,omitzero"`
	Expiry       time.Time `json:"expiry,omitzero"` // zero: the server did not say
}

// String never shows the tokens: a Token printed by mistake in a log or
// an error leaks nothing.
func (t Token) String() string {
	return fmt.Sprintf("token(scope %q, expires %s)", t.Scope, t.Expiry.Format(time.RFC3339))
}

// path is the record file of server for owner ("" the user).
func (s *Store) path(owner, server string) (string, error) {
	if err := pathElement(server); err != nil {
		return "", fmt.Errorf("server name: %w", err)
	}
	if owner == "" {
		return filepath.Join(s.Dir, server+".json"), nil
	}
	if err := pathElement(owner); err != nil {
		return "", fmt.Errorf("owner: %w", err)
	}
	return filepath.Join(s.Dir, layout.OwnersDir, owner, server+".json"), nil
}

// pathElement refuses a name that would leave the store's directory.
// Config and owner names are checked where they are read; this is the
// last guard.
func pathElement(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\:`) || strings.ContainsRune(name, 0) {
		return fmt.Errorf("%q is not usable as a file name", name)
	}
	return nil
}

// Load reads the record of server for owner. A missing record is an
// error matching [fs.ErrNotExist].
func (s *Store) Load(ctx context.Context, owner, server string) (*Record, error) {
	p, err := s.path(owner, server)
	if err != nil {
		return nil, err
	}
	var b []byte
	where := p
	if s.Shared != nil {
		where = "the token record of " + server + " on [cluster] redis_url"
		b, err = s.loadShared(ctx, owner, server)
	} else {
		b, err = os.ReadFile(p)
	}
	if err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		// Never quote the content: it holds tokens.
		return nil, fmt.Errorf("%s: not a token record (remove it with `scratchpad-mcp auth logout %s`)", where, server)
	}
	return &r, nil
}

// has reports whether a record of server for owner is stored, usable or
// not.
func (s *Store) has(ctx context.Context, owner, server string) bool {
	if s.Shared == nil {
		return !s.modTime(owner, server).IsZero()
	}
	if _, err := s.path(owner, server); err != nil {
		return false
	}
	_, err := s.Shared.GetValue(ctx, layout.OAuthRecordName(owner, server))
	return err == nil
}

// modTime is the record file's modification time (zero when missing): a
// record written by another process (a login) is read again.
func (s *Store) modTime(owner, server string) time.Time {
	p, err := s.path(owner, server)
	if err != nil {
		return time.Time{}
	}
	fi, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// Save writes the record of server for owner atomically, mode 0600 (or
// sealed, on Shared).
func (s *Store) Save(ctx context.Context, owner, server string, r *Record) error {
	p, err := s.path(owner, server)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if s.Shared != nil {
		return s.saveShared(ctx, owner, server, b)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	return writeAtomic(p, append(b, '\n'))
}

// Delete removes the record of server for owner; a missing one is not an
// error.
func (s *Store) Delete(ctx context.Context, owner, server string) error {
	p, err := s.path(owner, server)
	if err != nil {
		return err
	}
	if s.Shared != nil {
		if err := s.Shared.DeleteValue(ctx, layout.OAuthRecordName(owner, server)); err != nil {
			return fmt.Errorf("removing the OAuth token of upstream %q: %w", server, err)
		}
		return nil
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("token store: %w", err)
	}
	return nil
}

// writeAtomic writes data to path atomically, 0600, through memdir (the
// one atomic write of the project: temp created exclusively beside it,
// fsync, rename, fsync of the folder).
func writeAtomic(path string, data []byte) error {
	if err := memdir.At(filepath.Dir(path)).WriteFile(filepath.Base(path), data); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	return nil
}
