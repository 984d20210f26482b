package config

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

func (d *decoder) explore(p keyPath, v any, e *Explore) {
	m, ok := d.table(p, v)
	if !ok {
		return
	}
	d.checkKeys(p, m, "cache_mb")
	if v, ok := m["cache_mb"]; ok {
		if n, ok := d.integer(p.key("cache_mb"), v, 0, 1<<20); ok {
			e.CacheBytes = int64(n) << 20
		}
	}
}

func (d *decoder) http(p keyPath, v any, h *HTTP) {
	m, ok := d.table(p, v)
	if !ok {
		return
	}
	d.checkKeys(p, m, "addr", "allowed_origins", "tokens")
	if v, ok := m["addr"]; ok {
		if s, ok := d.nonEmpty(p.key("addr"), v); ok {
			if msg := validAddr(s); msg != "" {
				d.fail(p.key("addr"), "%s", msg)
			} else {
				h.Addr = s
			}
		}
	}
	if v, ok := m["allowed_origins"]; ok {
		origins, _ := d.strings(p.key("allowed_origins"), v)
		for i, o := range origins {
			if msg := validOrigin(o); msg != "" {
				d.fail(p.key("allowed_origins").index(i), "%s", msg)
				continue
			}
			h.AllowedOrigins = append(h.AllowedOrigins, strings.TrimSuffix(o, "/"))
		}
	}
	if v, ok := m["tokens"]; ok {
		h.Tokens = d.tokens(p.key("tokens"), v)
	}
}

func validAddr(s string) string {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Sprintf("invalid address %q: want host:port, e.g. %q", s, DefaultHTTPAddr)
	}
	_ = host
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Sprintf("invalid port %q in %q", port, s)
	}
	return ""
}

// validOrigin: an Origin header is scheme://host[:port], nothing more.
func validOrigin(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Sprintf("invalid origin %q: want scheme://host[:port], e.g. \"https://app.example.com\"", s)
	}
	return ""
}

func (d *decoder) tokens(p keyPath, v any) []Token {
	arr, ok := d.array(p, v)
	if !ok {
		return nil
	}
	var out []Token
	seen := map[string]int{}
	for i, e := range arr {
		ep := p.index(i)
		m, ok := d.table(ep, e)
		if !ok {
			continue
		}
		d.checkKeys(ep, m, "owner", "token")
		var t Token
		okAll := true
		for _, k := range []string{"owner", "token"} {
			v, present := m[k]
			if !present {
				d.fail(ep.key(k), "required")
				okAll = false
				continue
			}
			s, ok := d.nonEmpty(ep.key(k), v)
			okAll = okAll && ok
			if k == "owner" {
				t.Owner = s
			} else {
				t.Token = s
			}
		}
		if !okAll {
			continue
		}
		if j, dup := seen[t.Token]; dup {
			// Never print the token itself: config errors end up in logs.
			d.fail(ep.key("token"), "same token as %s", p.index(j))
			continue
		}
		seen[t.Token] = i
		out = append(out, t)
	}
	return out
}
