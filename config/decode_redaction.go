package config

import (
	"fmt"

	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
)

// Redaction is [redaction]: what is done with the credentials found in
// results before they are counted, stored or shown (package redact).
type Redaction struct {
	// Mode is RedactMask (default: each secret becomes
	// [REDACTED:kind:fingerprint]), RedactFlag (kept, its place reported)
	// or RedactOff. A server's own redaction key overrides it
	// ([Server.RedactionMode]).
	Mode string
	// ExtraPatterns are extra rules, validated at load: their ids and
	// regexps compile (RE2) and do not match the empty string.
	ExtraPatterns []redact.Pattern
	// Allow are regexps: a secret one of them matches is kept.
	Allow []string
	// Entropy turns on the generic, entropy-based rules (off by default:
	// they are where the false positives are).
	Entropy bool
	// FingerprintKey is fingerprint_key: the key of the masks'
	// fingerprints, so that they stay the same across restarts and
	// instances; "" means a random key per process.
	FingerprintKey string
}

// Values of [Redaction].Mode and of a server's redaction key.
const (
	RedactMask = string(redact.Mask)
	RedactFlag = string(redact.Flag)
	RedactOff  = string(redact.Off)
)

// Options are the [redact.Options] of r, for [redact.New].
func (r Redaction) Options() redact.Options {
	o := redact.Options{Mode: redact.Mode(r.Mode), Extra: r.ExtraPatterns, Allow: r.Allow, Entropy: r.Entropy}
	if r.FingerprintKey != "" {
		o.Key = []byte(r.FingerprintKey)
	}
	return o
}

// RedactionMode is the redaction mode of s's results: its own redaction
// key, else [redaction] mode.
func (c *Config) RedactionMode(s *Server) string {
	if s != nil && s.Redaction != "" {
		return s.Redaction
	}
	return c.Redaction.Mode
}

func (d *decoder) redaction(p keyPath, v any, r *Redaction) {
	m, ok := d.table(p, v)
	if !ok {
		return
	}
	d.checkKeys(p, m, "mode", "extra_patterns", "allow", "entropy", "fingerprint_key")
	if v, ok := m["mode"]; ok {
		if s, ok := d.oneOf(p.key("mode"), v, RedactMask, RedactFlag, RedactOff); ok {
			r.Mode = s
		}
	}
	if v, ok := m["entropy"]; ok {
		r.Entropy, _ = d.boolean(p.key("entropy"), v)
	}
	if v, ok := m["fingerprint_key"]; ok {
		r.FingerprintKey, _ = d.nonEmpty(p.key("fingerprint_key"), v)
	}
	if v, ok := m["allow"]; ok {
		if arr, ok := d.array(p.key("allow"), v); ok {
			for i, e := range arr {
				if s, ok := d.regexp(p.key("allow").index(i), e); ok {
					r.Allow = append(r.Allow, s)
				}
			}
		}
	}
	if v, ok := m["extra_patterns"]; ok {
		arr, ok := d.array(p.key("extra_patterns"), v)
		if !ok {
			return
		}
		seen := map[string]int{}
		for _, k := range redact.Kinds(true) {
			seen[k] = -1
		}
		for i, e := range arr {
			ep := p.key("extra_patterns").index(i)
			t, ok := d.table(ep, e)
			if !ok {
				continue
			}
			d.checkKeys(ep, t, "id", "regex", "keywords")
			var pat redact.Pattern
			good := true
			if v, ok := t["id"]; ok {
				if pat.ID, ok = d.nonEmpty(ep.key("id"), v); ok {
					if err := redact.CheckID(pat.ID); err != nil {
						d.fail(ep.key("id"), "invalid id %q: use 1 to 40 of a-z 0-9 - (not first -): it is shown in masks", pat.ID)
						good = false
					} else if j, dup := seen[pat.ID]; dup {
						if j < 0 {
							d.fail(ep.key("id"), "id %q is a built-in rule's", pat.ID)
						} else {
							d.fail(ep.key("id"), "duplicate id %q (also %s)", pat.ID, p.key("extra_patterns").index(j).key("id"))
						}
						good = false
					} else {
						seen[pat.ID] = i
					}
				} else {
					good = false
				}
			} else {
				d.fail(ep.key("id"), "required: the kind its masks show ([REDACTED:id:…])")
				good = false
			}
			if v, ok := t["regex"]; ok {
				if pat.Regex, ok = d.regexp(ep.key("regex"), v); !ok {
					good = false
				}
			} else {
				d.fail(ep.key("regex"), "required")
				good = false
			}
			if v, ok := t["keywords"]; ok {
				kws, ok := d.strings(ep.key("keywords"), v)
				for j, k := range kws {
					if k == "" {
						d.fail(ep.key("keywords").index(j), "must not be empty")
						ok = false
					}
				}
				pat.Keywords = kws
				good = good && ok
			}
			if good {
				r.ExtraPatterns = append(r.ExtraPatterns, pat)
			}
		}
	}
}

// regexp is a string that [redact.CompilePattern] accepts; the error
// names the pattern.
func (d *decoder) regexp(p keyPath, v any) (string, bool) {
	s, ok := d.nonEmpty(p, v)
	if !ok {
		return "", false
	}
	if _, err := redact.CompilePattern(s); err != nil {
		pos, _ := d.pos.value(p)
		if pos.Line == 0 {
			pos, _ = d.pos.key(p)
		}
		d.failAt(p, pos, err, fmt.Sprintf("invalid pattern %q: %v", s, err))
		return "", false
	}
	return s, true
}
