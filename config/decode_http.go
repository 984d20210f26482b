package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// maxCallTimeout bounds [explore] call_timeout: a call of the server's
// own tools running for more than an hour is runaway work, whatever the
// setting meant.
const maxCallTimeout = time.Hour

func (d *decoder) explore(p keyPath, v any, e *Explore) {
	m, ok := d.table(p, v)
	if !ok {
		return
	}
	d.checkKeys(p, m, "cache_mb", "max_calls_per_owner", "call_timeout", "max_reference_bytes")
	if v, ok := m["cache_mb"]; ok {
		if n, ok := d.integer(p.key("cache_mb"), v, 0, 1<<20); ok {
			e.CacheBytes = int64(n) << 20
		}
	}
	if v, ok := m["max_calls_per_owner"]; ok {
		e.MaxCallsPerOwner, _ = d.integer(p.key("max_calls_per_owner"), v, 1, 100_000)
	}
	if v, ok := m["call_timeout"]; ok {
		e.CallTimeout, _ = d.durationUpTo(p.key("call_timeout"), v, false, maxCallTimeout)
	}
	if v, ok := m["max_reference_bytes"]; ok {
		if n, ok := d.size(p.key("max_reference_bytes"), v); ok {
			if n < 1<<10 || n > maxReferenceBytes {
				d.fail(p.key("max_reference_bytes"), "%s out of range [1.0 KiB, %s]", SizeText(n), SizeText(maxReferenceBytes))
			} else {
				e.MaxReferenceBytes = n
			}
		}
	}
}

func (d *decoder) http(p keyPath, v any, h *HTTP) {
	m, ok := d.table(p, v)
	if !ok {
		return
	}
	d.checkKeys(p, m, "addr", "allowed_origins", "tokens", "tokens_file", "max_sessions", "max_sessions_per_owner", "max_connections", "upstream_idle", "public_url")
	if v, ok := m["max_connections"]; ok {
		h.MaxConnections, _ = d.integer(p.key("max_connections"), v, 1, 1_000_000)
	}
	if v, ok := m["public_url"]; ok {
		h.PublicURL, _ = d.url(p.key("public_url"), v)
	}
	if v, ok := m["upstream_idle"]; ok {
		h.UpstreamIdle, _ = d.duration(p.key("upstream_idle"), v, false)
	}
	if v, ok := m["max_sessions"]; ok {
		h.MaxSessions, _ = d.integer(p.key("max_sessions"), v, 1, 1_000_000)
	}
	if v, ok := m["max_sessions_per_owner"]; ok {
		h.MaxSessionsPerOwner, _ = d.integer(p.key("max_sessions_per_owner"), v, 1, 1_000_000)
	}
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
	seen := tokenSeen{}
	if v, ok := m["tokens"]; ok {
		h.Tokens = d.tokens(p.key("tokens"), v, seen)
		h.InlineTokens = slices.Clone(h.Tokens)
	}
	if v, ok := m["tokens_file"]; ok {
		if path, ok := d.path(p.key("tokens_file"), v); ok {
			h.TokensFile = path
			h.Tokens = append(h.Tokens, d.tokensFile(p.key("tokens_file"), path, seen)...)
		}
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

// tokenSeen remembers where each token hash was configured, to report
// duplicates across [[http.tokens]] and the tokens file.
type tokenSeen map[[32]byte]string

func (d *decoder) tokens(p keyPath, v any, seen tokenSeen) []Token {
	arr, ok := d.array(p, v)
	if !ok {
		return nil
	}
	var out []Token
	for i, e := range arr {
		ep := p.index(i)
		m, ok := d.table(ep, e)
		if !ok {
			continue
		}
		d.checkKeys(ep, m, "owner", "token", "token_sha256")
		var t Token
		okAll := true
		if v, present := m["owner"]; !present {
			d.fail(ep.key("owner"), "required")
			okAll = false
		} else if s, ok := d.nonEmpty(ep.key("owner"), v); !ok {
			okAll = false
		} else if msg := validOwner(s); msg != "" {
			d.fail(ep.key("owner"), "%s", msg)
			okAll = false
		} else {
			t.Owner = s
		}
		clear, hasClear := m["token"]
		hash, hasHash := m["token_sha256"]
		switch {
		case hasClear && hasHash:
			d.fail(ep.key("token_sha256"), "give token or token_sha256, not both")
			okAll = false
		case hasClear:
			// Never print the token itself: config errors end up in logs.
			if s, ok := d.nonEmpty(ep.key("token"), clear); ok {
				t.SHA256 = sha256.Sum256([]byte(s))
			} else {
				okAll = false
			}
		case hasHash:
			s, ok := d.nonEmpty(ep.key("token_sha256"), hash)
			b, err := hex.DecodeString(strings.TrimSpace(s))
			if ok && (err != nil || len(b) != sha256.Size) {
				d.fail(ep.key("token_sha256"), "want 64 hexadecimal digits (the SHA-256 of the token, as `scratchpad-mcp token add` writes)")
				ok = false
			}
			if ok {
				copy(t.SHA256[:], b)
			}
			okAll = okAll && ok
		default:
			d.fail(ep.key("token"), "required: token (may be \"{{ env.NAME }}\") or token_sha256")
			okAll = false
		}
		if !okAll {
			continue
		}
		here := ep.String()
		if d.tokensOnly {
			here = filepath.Base(d.file) + " " + here
		}
		if prev, dup := seen[t.SHA256]; dup {
			k := ep.key("token")
			if hasHash {
				k = ep.key("token_sha256")
			}
			d.fail(k, "same token as %s", prev)
			continue
		}
		seen[t.SHA256] = here
		out = append(out, t)
	}
	return out
}

// validOwner: an owner names a folder of memory_dir and a segment of
// Redis keys, so it is a plain name.
func validOwner(s string) string {
	bad := len(s) > 64 || s == "." || s == ".."
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			bad = true
		}
	}
	if bad {
		return fmt.Sprintf("invalid owner %q: use 1-64 characters of [A-Za-z0-9._-] (it names a folder under memory_dir)", s)
	}
	return ""
}

// tokensFile reads the [http] tokens_file named at p: TOML with [[tokens]]
// entries like [[http.tokens]]. Its problems name that file, its keys and
// lines.
func (d *decoder) tokensFile(p keyPath, path string, seen tokenSeen) []Token {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && d.tokensFileMayBeMissing {
		return nil
	}
	if err != nil {
		d.fail(p, "cannot read the tokens file: %v (`scratchpad-mcp token add OWNER --config FILE` creates it)", err)
		return nil
	}
	src := string(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	var raw map[string]any
	if _, err := toml.Decode(src, &raw); err != nil {
		e := &Error{File: path, Msg: err.Error(), Err: err}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			e.Line, e.Col, e.Msg = pe.Position.Line, pe.Position.Col, "invalid TOML: "+pe.Message
		}
		d.errs = append(d.errs, e)
		return nil
	}
	sub := &decoder{file: path, dir: filepath.Dir(path), home: d.home, lookup: d.lookup, pos: scanPositions(src), tokensOnly: true}
	var root keyPath
	sub.checkKeys(root, raw, "tokens")
	var out []Token
	if v, ok := raw["tokens"]; ok {
		out = sub.tokens(root.key("tokens"), v, seen)
	}
	d.errs = append(d.errs, sub.errs...)
	return out
}
