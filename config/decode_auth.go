package config

import (
	"net/url"
	"strings"
)

// auth decodes [mcp.servers.<name>.auth]. The combinations a grant cannot
// use are refused here, naming the key, so that `auth login` and serve
// never find out late.
func (d *decoder) auth(p keyPath, v any) *Auth {
	m, ok := d.table(p, v)
	if !ok {
		return nil
	}
	d.checkKeys(p, m, "type", "grant", "client_id", "client_secret", "client_metadata_url", "scopes",
		"private_key_file", "signing_algorithm")
	a := &Auth{Grant: GrantAuthorizationCode}
	if v, ok := m["type"]; ok {
		a.Type, _ = d.oneOf(p.key("type"), v, AuthOAuth)
	} else {
		d.fail(p.key("type"), "required: %q", AuthOAuth)
	}
	if v, ok := m["grant"]; ok {
		a.Grant, _ = d.oneOf(p.key("grant"), v, GrantAuthorizationCode, GrantClientCredentials)
	}
	if v, ok := m["client_id"]; ok {
		a.ClientID, _ = d.nonEmpty(p.key("client_id"), v)
	}
	if v, ok := m["client_secret"]; ok {
		a.ClientSecret, _ = d.nonEmpty(p.key("client_secret"), v)
	}
	if v, ok := m["client_metadata_url"]; ok {
		if s, ok := d.nonEmpty(p.key("client_metadata_url"), v); ok {
			// The draft asks for an https URL with a path: the URL is the
			// client's identity, and the document it names says so.
			if u, err := url.Parse(s); err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
				d.fail(p.key("client_metadata_url"), "invalid URL %q: want an https:// URL with a path (e.g. https://example.com/client.json)", s)
			} else {
				a.ClientMetadataURL = s
			}
		}
	}
	if v, ok := m["scopes"]; ok {
		if sc, ok := d.strings(p.key("scopes"), v); ok {
			for i, s := range sc {
				if s == "" || strings.ContainsAny(s, " \\\"") {
					d.fail(p.key("scopes").index(i), "invalid scope %q: one scope per string, without spaces, quotes or backslashes", s)
				}
			}
			a.Scopes = sc
		}
	}
	if v, ok := m["private_key_file"]; ok {
		a.PrivateKeyFile, _ = d.path(p.key("private_key_file"), v)
	}
	if v, ok := m["signing_algorithm"]; ok {
		a.SigningAlgorithm, _ = d.oneOf(p.key("signing_algorithm"), v, SigningAlgorithms...)
	}

	if m["client_secret"] != nil && m["client_id"] == nil {
		d.fail(p.key("client_secret"), "needs client_id (a secret belongs to a pre-registered client)")
	}
	if m["private_key_file"] != nil && m["signing_algorithm"] == nil {
		d.fail(p.key("signing_algorithm"), "required with private_key_file: one of %s", strings.Join(SigningAlgorithms, ", "))
	}
	if m["signing_algorithm"] != nil && m["private_key_file"] == nil {
		d.fail(p.key("signing_algorithm"), "used only with private_key_file")
	}
	switch a.Grant {
	case GrantClientCredentials:
		if m["client_id"] == nil {
			d.fail(p.key("client_id"), "required with grant = %q (a service is a pre-registered client)", GrantClientCredentials)
		}
		switch {
		case m["client_secret"] != nil && m["private_key_file"] != nil:
			d.fail(p.key("private_key_file"), "client_secret or private_key_file, not both")
		case m["client_secret"] == nil && m["private_key_file"] == nil:
			d.fail(p.key("client_secret"), "required with grant = %q: client_secret, or private_key_file with signing_algorithm", GrantClientCredentials)
		}
		if m["client_metadata_url"] != nil {
			d.fail(p.key("client_metadata_url"), "not used with grant = %q (only with %q)", GrantClientCredentials, GrantAuthorizationCode)
		}
	case GrantAuthorizationCode:
		if m["private_key_file"] != nil {
			d.fail(p.key("private_key_file"), "used only with grant = %q", GrantClientCredentials)
		}
	}
	return a
}
