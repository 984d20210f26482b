package config

import (
	"strings"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/redisurl"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

func (d *decoder) pad(p keyPath, v any, pd *Pad) {
	m, ok := d.table(p, v)
	if !ok {
		return
	}
	d.checkKeys(p, m, "enabled", "backend", "scope", "render", "max_tokens", "entry_ttl", "history", "format", "schema", "sections",
		"redis_url", "redis_prefix", "redis_ttl", "default_ttl", "header", "read_only", "template")
	if v, ok := m["enabled"]; ok {
		if b, ok := d.boolean(p.key("enabled"), v); ok {
			pd.Enabled = b
		}
	}
	d.padBackend(p, m, pd)
	if v, ok := m["scope"]; ok {
		if s, ok := d.oneOf(p.key("scope"), v, ScopeAgent, ScopeRun); ok {
			pd.Scope = s
		}
	}
	if v, ok := m["render"]; ok {
		if s, ok := d.oneOf(p.key("render"), v, RenderMarkdown, RenderXML, RenderJSON, RenderKV); ok {
			pd.Render = s
		}
	}
	if v, ok := m["max_tokens"]; ok {
		pd.MaxTokens, _ = d.integer(p.key("max_tokens"), v, 0, maxContextWindow)
	}
	if v, ok := m["entry_ttl"]; ok {
		pd.EntryTTL, _ = d.duration(p.key("entry_ttl"), v, true)
	}
	if v, ok := m["default_ttl"]; ok {
		pd.DefaultTTL, _ = d.duration(p.key("default_ttl"), v, true)
	}
	if v, ok := m["header"]; ok {
		if s, ok := d.str(p.key("header"), v); ok {
			if strings.ContainsAny(s, "\r\n") {
				d.fail(p.key("header"), "one line")
			} else {
				pd.Header = s
			}
		}
	}
	if v, ok := m["read_only"]; ok {
		pd.ReadOnly, _ = d.boolean(p.key("read_only"), v)
	}
	if v, ok := m["template"]; ok {
		pd.Template, _ = d.str(p.key("template"), v)
	}
	if v, ok := m["history"]; ok {
		if n, ok := d.integer(p.key("history"), v, 1, 10_000); ok {
			pd.History = n
		}
	}
	if v, ok := m["format"]; ok {
		if s, ok := d.oneOf(p.key("format"), v, FormatMarkdown, FormatJSON); ok {
			pd.Format = s
		}
	}
	if v, ok := m["schema"]; ok {
		pd.Schema, _ = d.path(p.key("schema"), v)
		if pd.Format != FormatJSON {
			d.fail(p.key("schema"), "only used with format = %q", FormatJSON)
		}
	}
	if v, ok := m["sections"]; ok {
		if secs, ok := d.sections(p.key("sections"), v); ok {
			pd.Sections = secs
		}
	}
}

func (d *decoder) sections(p keyPath, v any) ([]Section, bool) {
	arr, ok := d.array(p, v)
	if !ok {
		return nil, false
	}
	if len(arr) == 0 {
		d.fail(p, "no sections: remove the key to get the default sections")
		return nil, false
	}
	out := make([]Section, 0, len(arr))
	seen := map[string]int{}
	good := true
	for i, e := range arr {
		ep := p.index(i)
		m, ok := d.table(ep, e)
		if !ok {
			good = false
			continue
		}
		d.checkKeys(ep, m, "name", "cap", "purpose", "numbered")
		var s Section
		if v, ok := m["name"]; ok {
			s.Name, ok = d.nonEmpty(ep.key("name"), v)
			s.Name = strings.TrimSpace(s.Name)
			switch {
			case !ok:
				good = false
			case strings.ContainsAny(s.Name, "\r\n"):
				d.fail(ep.key("name"), "section name must be one line")
				good = false
			default:
				// Headings are matched case-insensitively by a reader, so
				// "plan" and "Plan" are the same section.
				fold := strings.ToLower(s.Name)
				if j, dup := seen[fold]; dup {
					d.fail(ep.key("name"), "duplicate section %q (also %s)", s.Name, p.index(j).key("name"))
					good = false
				}
				seen[fold] = i
			}
		} else {
			d.fail(ep.key("name"), "required")
			good = false
		}
		if v, ok := m["cap"]; ok {
			if s.Cap, ok = d.integer(ep.key("cap"), v, 0, 1_000_000); !ok {
				good = false
			}
		} else {
			d.fail(ep.key("cap"), "required (characters; 0 for no cap)")
			good = false
		}
		if v, ok := m["purpose"]; ok {
			s.Purpose, _ = d.str(ep.key("purpose"), v)
		}
		if v, ok := m["numbered"]; ok {
			s.Numbered, _ = d.boolean(ep.key("numbered"), v)
		}
		out = append(out, s)
	}
	return out, good
}

// maxRedisTTL bounds [pad] redis_ttl: a year.
const maxRedisTTL = 366 * 24 * time.Hour

// padBackend decodes backend, redis_url, redis_prefix and redis_ttl. The Redis keys
// need backend = "redis", and it needs redis_url; when backend itself is
// invalid only that is reported.
func (d *decoder) padBackend(p keyPath, m map[string]any, pd *Pad) {
	backendOK := true
	if v, ok := m["backend"]; ok {
		var s string
		if s, backendOK = d.oneOf(p.key("backend"), v, BackendFile, BackendRedis); backendOK {
			pd.Backend = s
		}
	}
	if v, ok := m["redis_url"]; ok {
		pd.RedisURL, _ = d.redisURL(p.key("redis_url"), v)
	}
	if v, ok := m["redis_prefix"]; ok {
		if s, ok := d.redisPrefix(p.key("redis_prefix"), v); ok {
			pd.RedisPrefix = s
		}
	}
	if v, ok := m["redis_ttl"]; ok {
		pd.RedisTTL, _ = d.durationUpTo(p.key("redis_ttl"), v, false, maxRedisTTL)
	}
	if !backendOK {
		return
	}
	if pd.Backend == BackendRedis {
		if _, ok := m["redis_url"]; !ok {
			d.fail(p.key("backend"), "redis_url is required with backend = %q", BackendRedis)
		}
		return
	}
	for _, k := range []string{"redis_url", "redis_prefix", "redis_ttl"} {
		if _, ok := m[k]; ok {
			d.fail(p.key(k), "only used with backend = %q", BackendRedis)
		}
	}
}

// redisPrefix checks a key prefix with the rule of package layout
// ([layout.CheckRedisPrefix]), for [pad] redis_prefix and [cluster] prefix.
func (d *decoder) redisPrefix(p keyPath, v any) (string, bool) {
	s, ok := d.str(p, v)
	if !ok {
		return "", false
	}
	if msg := layout.CheckRedisPrefix(s); msg != "" {
		d.fail(p, "invalid prefix %q: %s", s, msg)
		return "", false
	}
	return s, true
}

// redisURL checks a Redis URL with the check the pad's client applies. Messages show it
// with the password redacted: config errors end up in logs.
func (d *decoder) redisURL(p keyPath, v any) (string, bool) {
	s, ok := d.nonEmpty(p, v)
	if !ok {
		return "", false
	}
	redacted, err := redisurl.Check(s)
	switch {
	case err == nil:
		return s, true
	case redacted == "":
		d.fail(p, "invalid url: %v", err)
	default:
		d.fail(p, "invalid url %q: %v", redacted, err)
	}
	return "", false
}
