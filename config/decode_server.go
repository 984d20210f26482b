package config

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

func (d *decoder) mcp(p keyPath, v any, c *Config) {
	m, ok := d.table(p, v)
	if !ok {
		return
	}
	d.checkKeys(p, m, "servers")
	sv, ok := m["servers"]
	if !ok {
		return
	}
	sp := p.key("servers")
	servers, ok := d.table(sp, sv)
	if !ok {
		return
	}
	for _, name := range d.sortedKeys(sp, servers) {
		before := len(d.errs)
		s, ok := d.server(sp.key(name), name, servers[name])
		if d.skipUnsetEnv {
			if missing := unsetEnv(d.errs[before:]); len(missing) > 0 {
				// The server's other problems may follow from the empty
				// value; they are said once its variables are set.
				d.errs = d.errs[:before]
				t, _ := servers[name].(map[string]any)
				_, auth := t["auth"]
				c.Skipped = append(c.Skipped, SkippedServer{Name: name, MissingEnv: missing, Auth: auth})
				continue
			}
		}
		if ok {
			c.Servers = append(c.Servers, s)
		}
	}
}

// unsetEnv is the variables, in order and once each, whose absence made
// one of errs.
func unsetEnv(errs Errors) []string {
	var names []string
	for _, e := range errs {
		var u *EnvUnsetError
		if errors.As(e, &u) && !slices.Contains(names, u.Name) {
			names = append(names, u.Name)
		}
	}
	return names
}

// validServerName: the name is part of stored file names
// ({server}-{tool}-{hash8}.json), so it must be safe there.
func validServerName(name string) string {
	if name == "" {
		return "server name must not be empty"
	}
	if len(name) > 64 {
		return "server name longer than 64 characters"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(isBareKeyChar(c) || c == '.' && i > 0) {
			return fmt.Sprintf("server name %q: use only a-z A-Z 0-9 _ - . (not first)", name)
		}
	}
	return ""
}

func (d *decoder) server(p keyPath, name string, v any) (Server, bool) {
	s := Server{
		Name:               name,
		Protocol:           ProtocolAuto,
		Timeout:            DefaultTimeout,
		RestartMaxAttempts: DefaultRestartMaxAttempts,
		RestartBackoffMax:  DefaultRestartBackoffMax,
	}
	m, ok := d.table(p, v)
	if !ok {
		return s, false
	}
	if msg := validServerName(name); msg != "" {
		d.fail(p, "%s", msg)
	}
	d.checkKeys(p, m, "transport", "cmd", "args", "env", "cwd", "url", "headers",
		"mcp_filter", "prefix", "timeout", "restart_max_attempts", "restart_backoff_max", "max_result_bytes", "max_app_data_bytes", "scratchpad", "shared", "listing", "protocol", "auth", "redaction", "secrets_by_reference")

	if v, ok := m["transport"]; ok {
		s.Transport, _ = d.oneOf(p.key("transport"), v, TransportStdio, TransportSSE, TransportHTTPStreamable)
	}
	if v, ok := m["cmd"]; ok {
		s.Cmd, _ = d.command(p.key("cmd"), v)
	}
	if v, ok := m["args"]; ok {
		s.Args, _ = d.strings(p.key("args"), v)
	}
	if v, ok := m["env"]; ok {
		s.Env, _ = d.strMap(p.key("env"), v, validEnvName)
	}
	if v, ok := m["cwd"]; ok {
		s.Cwd, _ = d.path(p.key("cwd"), v)
	}
	if v, ok := m["url"]; ok {
		s.URL, _ = d.url(p.key("url"), v)
	}
	if v, ok := m["headers"]; ok {
		s.Headers, _ = d.strMap(p.key("headers"), v, validHeaderName)
	}
	if v, ok := m["mcp_filter"]; ok {
		s.Filter, _ = d.patterns(p.key("mcp_filter"), v)
		s.FilterSet = true
	}
	if v, ok := m["prefix"]; ok {
		if pre, ok := d.nonEmpty(p.key("prefix"), v); ok {
			if msg := validPrefix(pre); msg != "" {
				d.fail(p.key("prefix"), "%s", msg)
			}
			s.Prefix = pre
		}
	}
	if v, ok := m["listing"]; ok {
		s.Listing, _ = d.oneOf(p.key("listing"), v, ListingSearch, ListingAlways)
	}
	if v, ok := m["protocol"]; ok {
		s.Protocol, _ = d.oneOf(p.key("protocol"), v, ProtocolAuto, Protocol20260728, Protocol2025)
	}
	if v, ok := m["redaction"]; ok {
		s.Redaction, _ = d.oneOf(p.key("redaction"), v, RedactMask, RedactFlag, RedactOff)
	}
	if v, ok := m["shared"]; ok {
		s.Shared, _ = d.boolean(p.key("shared"), v)
	}
	if v, ok := m["secrets_by_reference"]; ok {
		s.SecretsByReference, _ = d.boolean(p.key("secrets_by_reference"), v)
	}
	if v, ok := m["timeout"]; ok {
		if t, ok := d.duration(p.key("timeout"), v, false); ok {
			s.Timeout = t
		}
	}
	if v, ok := m["restart_max_attempts"]; ok {
		if n, ok := d.integer(p.key("restart_max_attempts"), v, NeverRestart, 1_000_000); ok && n != 0 {
			s.RestartMaxAttempts = n
		}
	}
	if v, ok := m["restart_backoff_max"]; ok {
		if t, ok := d.duration(p.key("restart_backoff_max"), v, false); ok {
			s.RestartBackoffMax = t
		}
	}
	if v, ok := m["max_result_bytes"]; ok {
		if n, ok := d.integer(p.key("max_result_bytes"), v, 1024, 1<<40); ok {
			s.MaxResultBytes = int64(n)
		}
	}
	if v, ok := m["max_app_data_bytes"]; ok {
		if n, ok := d.integer(p.key("max_app_data_bytes"), v, 0, 1<<40); ok {
			s.MaxAppDataBytes = int64(n)
			if n == 0 {
				s.MaxAppDataBytes = NoAppData
			}
		}
	}
	if v, ok := m["scratchpad"]; ok {
		s.Thresholds = d.thresholds(p.key("scratchpad"), v)
	}
	if v, ok := m["auth"]; ok {
		s.Auth = d.auth(p.key("auth"), v)
	}

	// Transport: stated, or implied by cmd. A url alone is ambiguous
	// (legacy SSE or streamable HTTP), so it must be said.
	if _, stated := m["transport"]; !stated {
		switch {
		case m["cmd"] != nil:
			s.Transport = TransportStdio
		case m["url"] != nil:
			d.fail(p.key("transport"), "required with url: %q or %q", TransportSSE, TransportHTTPStreamable)
		default:
			d.fail(p.key("transport"), "required: %q (with cmd), %q or %q (with url)", TransportStdio, TransportSSE, TransportHTTPStreamable)
		}
	}
	switch s.Transport {
	case TransportStdio:
		if m["cmd"] == nil {
			d.fail(p.key("cmd"), "required for transport %q", s.Transport)
		}
		for _, k := range []string{"url", "headers", "auth"} {
			if m[k] != nil {
				d.fail(p.key(k), "not used by transport %q (only by %q and %q)", s.Transport, TransportSSE, TransportHTTPStreamable)
			}
		}
	case TransportSSE, TransportHTTPStreamable:
		if m["url"] == nil {
			d.fail(p.key("url"), "required for transport %q", s.Transport)
		}
		for _, k := range []string{"cmd", "args", "env", "cwd", "restart_max_attempts", "restart_backoff_max"} {
			if m[k] != nil {
				d.fail(p.key(k), "not used by transport %q (only by %q)", s.Transport, TransportStdio)
			}
		}
		if s.Transport == TransportSSE && s.Protocol == Protocol20260728 {
			d.fail(p.key("protocol"), "%q needs transport %q or %q: the sse transport carries only the 2025 revisions", Protocol20260728, TransportHTTPStreamable, TransportStdio)
		}
		if s.Auth != nil && s.Shared && s.Auth.Grant == GrantAuthorizationCode {
			d.fail(p.key("shared"), "not with grant = %q in [%s]: one instance for every owner would make one person's login every owner's (use %q, a service identity)",
				GrantAuthorizationCode, p.key("auth"), GrantClientCredentials)
		}
		if s.Auth != nil {
			for h := range s.Headers {
				if strings.EqualFold(h, "Authorization") {
					d.fail(p.key("headers").key(h), "not with [%s]: OAuth sets the Authorization header", p.key("auth"))
				}
			}
		}
	}
	return s, true
}

// command accepts cmd as an array (used as is) or a string split into
// words like a shell would, honouring '...', "..." and backslashes.
func (d *decoder) command(p keyPath, v any) ([]string, bool) {
	var argv []string
	switch v.(type) {
	case string:
		s, ok := d.str(p, v)
		if !ok {
			return nil, false
		}
		w, err := splitWords(s)
		if err != nil {
			d.fail(p, "%v", err)
			return nil, false
		}
		argv = w
	case []any:
		w, ok := d.strings(p, v)
		if !ok {
			return nil, false
		}
		argv = w
	default:
		d.wrongType(p, v, "a string or an array of strings")
		return nil, false
	}
	if len(argv) == 0 || argv[0] == "" {
		d.fail(p, "must name a program")
		return nil, false
	}
	if a, err := d.expand(argv[0]); err == nil && strings.HasPrefix(argv[0], "~") {
		argv[0] = a // ~/bin/server; a bare name is left for PATH lookup
	}
	return argv, true
}

// splitWords splits s into words the way a POSIX shell does for the plain
// cases: whitespace separates, '...' is literal, "..." honours \" and \\,
// a backslash outside quotes escapes the next character.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unclosed ' in command")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New(`unclosed " in command`)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func validEnvName(k string) string {
	if k == "" || strings.ContainsAny(k, "=\x00") {
		return fmt.Sprintf("invalid environment variable name %q", k)
	}
	return ""
}

// validHeaderName: RFC 9110 token characters.
func validHeaderName(k string) string {
	if k == "" {
		return "empty header name"
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if isBareKeyChar(c) || strings.IndexByte("!#$%&'*+.^`|~", c) >= 0 {
			continue
		}
		return fmt.Sprintf("invalid header name %q", k)
	}
	return ""
}

// validPrefix: the exposed name prefix__tool must stay a valid MCP tool
// name (A-Z a-z 0-9 _ - .).
func validPrefix(pre string) string {
	if len(pre) > 64 {
		return "prefix longer than 64 characters"
	}
	for i := 0; i < len(pre); i++ {
		if c := pre[i]; !isBareKeyChar(c) && c != '.' {
			return fmt.Sprintf("prefix %q: use only a-z A-Z 0-9 _ - .", pre)
		}
	}
	return ""
}

func (d *decoder) url(p keyPath, v any) (string, bool) {
	s, ok := d.nonEmpty(p, v)
	if !ok {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		// Neither the URL nor url.Parse's error (which quotes it) is
		// shown: a secret in it would be printed.
		d.fail(p, "invalid url: %v", err)
		return "", false
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		d.fail(p, "invalid url %q: want an http:// or https:// URL", shownURL(s, u))
		return "", false
	}
	if u.Host == "" {
		d.fail(p, "invalid url %q: no host", shownURL(s, u))
		return "", false
	}
	return s, true
}

// shownURL is s as an error shows it: as written unless [RedactURL]
// masks something of it.
func shownURL(s string, u *url.URL) string {
	if r := RedactURL(s); r != u.String() {
		return r
	}
	return s
}

// patterns decodes mcp_filter. An invalid pattern's error points at the
// offending character.
func (d *decoder) patterns(p keyPath, v any) ([]Pattern, bool) {
	arr, ok := d.array(p, v)
	if !ok {
		return nil, false
	}
	out := make([]Pattern, 0, len(arr))
	good := true
	for i, e := range arr {
		ep := p.index(i)
		raw, isStr := e.(string)
		s, ok := d.str(ep, e)
		if !ok {
			good = false
			continue
		}
		pat, err := CompilePattern(s)
		if err != nil {
			pos, _ := d.pos.value(ep)
			if pos.Line == 0 {
				pos, _ = d.pos.key(ep)
			}
			// The column is exact when the text is what the file holds.
			if isStr && raw == s && pos.Col > 0 {
				pos.Col += 1 + patternCol(err, s)
			}
			d.failAt(ep, pos, err, "invalid pattern: "+patternMsg(err))
			good = false
			continue
		}
		out = append(out, pat)
	}
	return out, good
}

// thresholds decodes [mcp.servers.<name>.scratchpad]: pattern = N,
// pattern = { min_tokens = N } or pattern = {} (DefaultMinTokens).
func (d *decoder) thresholds(p keyPath, v any) []Threshold {
	m, ok := d.table(p, v)
	if !ok {
		return nil
	}
	var out []Threshold
	for _, k := range d.sortedKeys(p, m) {
		kp := p.key(k)
		switch k {
		case "min_tokens":
			// Looks like a table-wide default, would silently be a pattern
			// for a tool named "min_tokens".
			d.fail(kp, `keys here are tool-name patterns: for every tool write "*" = { min_tokens = N }`)
			continue
		case "enabled", "context_safety_margin", "max_extraction_tokens", "turn_depth_bonus":
			d.fail(kp, "keys here are tool-name patterns: %s belongs in [agent.scratchpad]", k)
			continue
		}
		pat, err := CompilePattern(k)
		if err != nil {
			pos, exact := d.pos.key(kp)
			if exact {
				pos.Col += patternCol(err, k)
				if pos.Quoted {
					pos.Col++
				}
			}
			d.failAt(kp, pos, err, "invalid pattern: "+patternMsg(err))
			continue
		}
		n := DefaultMinTokens
		switch x := m[k].(type) {
		case int64:
			var ok bool
			if n, ok = d.integer(kp, x, 1, math.MaxInt32); !ok {
				continue
			}
		case map[string]any:
			d.checkKeys(kp, x, "min_tokens")
			if mv, ok := x["min_tokens"]; ok {
				var ok bool
				if n, ok = d.integer(kp.key("min_tokens"), mv, 1, math.MaxInt32); !ok {
					continue
				}
			}
		default:
			d.wrongType(kp, m[k], "{ min_tokens = N }, an integer, or {}")
			continue
		}
		out = append(out, Threshold{Pattern: pat, MinTokens: n})
	}
	return out
}

// patternCol is the column offset (in runes) of a pattern error.
func patternCol(err error, s string) int {
	var pe *PatternError
	if !errors.As(err, &pe) || pe.Offset > len(s) {
		return 0
	}
	return utf8.RuneCountInString(s[:pe.Offset])
}

func patternMsg(err error) string {
	var pe *PatternError
	if errors.As(err, &pe) {
		return pe.Msg
	}
	return err.Error()
}
