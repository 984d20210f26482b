package oauth

import (
	"context"
	"errors"
	"io/fs"
	"net/url"
	"time"
)

// Status is what is stored for a server, for `auth status` and doctor.
type Status struct {
	LoggedIn    bool      // a record for this server's URL exists
	Grant       string    // authorization_code or client_credentials
	Scope       string    // of the token, as the server said
	Expiry      time.Time // zero: no expiry known
	Expired     bool      // the access token is past its expiry
	Refreshable bool      // a refresh token is stored
	Issuer      string
	Registered  string // how the client identity came
	// Refused says why the stored tokens were dropped ("" when not).
	Refused string
}

// Status reads the stored record (no network but the shared store's, whose
// commands have their own timeout). An unreadable record is an error;
// none is a Status that is not LoggedIn.
func (c *Client) Status() (Status, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec, err := c.currentLocked(context.Background())
	if err != nil || rec == nil {
		return Status{Grant: c.cfg.Grant}, err
	}
	return Status{
		LoggedIn: rec.Token.AccessToken != "", Grant: rec.Grant, Scope: rec.Token.Scope,
		Expiry: rec.Token.Expiry, Expired: !rec.Token.Expiry.IsZero() && !c.opts.Now().Before(rec.Token.Expiry),
		Refreshable: rec.Token.RefreshToken != "", Issuer: rec.Issuer, Registered: rec.Client.Registered, Refused: rec.Refused,
	}, nil
}

// Logout revokes the stored tokens where the authorization server offers
// revocation (RFC 7009; best effort, bounded by ctx) and removes the
// record. It reports whether there was one.
func (c *Client) Logout(ctx context.Context) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec, err := c.currentLocked(ctx)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		// An unreadable record is removed all the same.
		rec = nil
	}
	had := rec != nil || c.opts.Store.has(ctx, c.opts.Owner, c.opts.Server.Name)
	if rec != nil && rec.RevocationEndpoint != "" {
		for _, t := range []struct{ tok, hint string }{{rec.Token.RefreshToken, "refresh_token"}, {rec.Token.AccessToken, "access_token"}} {
			if t.tok == "" {
				continue
			}
			form := url.Values{"token": {t.tok}, "token_type_hint": {t.hint}}
			// The answer does not matter: the record goes either way.
			_, _ = tokenRequest(ctx, c.hc, rec.RevocationEndpoint, form, rec.Client, nil, c.opts.Now())
		}
	}
	if err := c.opts.Store.Delete(ctx, c.opts.Owner, c.opts.Server.Name); err != nil {
		return had, err
	}
	c.rec, c.loaded = nil, false
	return had, nil
}
