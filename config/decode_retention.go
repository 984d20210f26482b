package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Retention is [retention]: what sweeps of memory_dir keep.
type Retention struct {
	Enabled    bool          // default true: sweep at start and every Interval in serve
	MaxAge     time.Duration // stored outputs; default 7 days; 0 keeps them
	RunsMaxAge time.Duration // finished runs, whole; default 30 days; 0 keeps them
	MaxBytes   int64         // whole memory_dir; 0 (default): no cap
	// OwnerMaxBytes bounds what one bearer token owner has stored under
	// memory_dir (its owners/<owner>/ tree): past it, that owner's
	// outputs are not diverted (a tool error says why) while other owners
	// go on. 0 (default): no bound.
	OwnerMaxBytes int64
	UsageMaxBytes int64         // usage.jsonl rotated above this; default 16 MiB; 0: never
	UsageKeep     int           // rotations kept; default 3
	Interval      time.Duration // between sweeps in serve; default 1h
	SweepTimeout  time.Duration // bound on one sweep; default 30s
}

// Defaults of [Retention].
const (
	DefaultMaxAge        = 7 * 24 * time.Hour
	DefaultRunsMaxAge    = 30 * 24 * time.Hour
	DefaultUsageMaxBytes = 16 << 20
	DefaultUsageKeep     = 3
	DefaultSweepInterval = time.Hour
	DefaultSweepTimeout  = 30 * time.Second
)

func defaultRetention() Retention {
	return Retention{
		Enabled: true, MaxAge: DefaultMaxAge, RunsMaxAge: DefaultRunsMaxAge,
		UsageMaxBytes: DefaultUsageMaxBytes, UsageKeep: DefaultUsageKeep,
		Interval: DefaultSweepInterval, SweepTimeout: DefaultSweepTimeout,
	}
}

// maxAge bounds retention ages: ten years.
const maxAge = 10 * 365 * 24 * time.Hour

func (d *decoder) retention(p keyPath, v any, r *Retention) {
	m, ok := d.table(p, v)
	if !ok {
		return
	}
	d.checkKeys(p, m, "enabled", "max_age", "runs_max_age", "max_bytes", "owner_max_bytes", "usage_max_bytes", "usage_keep", "interval", "sweep_timeout")
	if v, ok := m["enabled"]; ok {
		if b, ok := d.boolean(p.key("enabled"), v); ok {
			r.Enabled = b
		}
	}
	if v, ok := m["max_age"]; ok {
		if x, ok := d.age(p.key("max_age"), v); ok {
			r.MaxAge = x
		}
	}
	if v, ok := m["runs_max_age"]; ok {
		if x, ok := d.age(p.key("runs_max_age"), v); ok {
			r.RunsMaxAge = x
		}
	}
	if v, ok := m["max_bytes"]; ok {
		if x, ok := d.size(p.key("max_bytes"), v); ok {
			r.MaxBytes = x
		}
	}
	if v, ok := m["owner_max_bytes"]; ok {
		if x, ok := d.size(p.key("owner_max_bytes"), v); ok {
			r.OwnerMaxBytes = x
		}
	}
	if v, ok := m["usage_max_bytes"]; ok {
		if x, ok := d.size(p.key("usage_max_bytes"), v); ok {
			r.UsageMaxBytes = x
		}
	}
	if v, ok := m["usage_keep"]; ok {
		if n, ok := d.integer(p.key("usage_keep"), v, 1, 1000); ok {
			r.UsageKeep = n
		}
	}
	if v, ok := m["interval"]; ok {
		if x, ok := d.duration(p.key("interval"), v, false); ok {
			if x < time.Minute {
				d.fail(p.key("interval"), "%s is too short: at least 1m", x)
			} else {
				r.Interval = x
			}
		}
	}
	if v, ok := m["sweep_timeout"]; ok {
		if x, ok := d.duration(p.key("sweep_timeout"), v, false); ok {
			r.SweepTimeout = x
		}
	}
}

// age is a duration that may be long: "7d", "2w", "36h", "90m" or integer
// seconds; 0 turns its rule off.
func (d *decoder) age(p keyPath, v any) (time.Duration, bool) {
	var dur time.Duration
	switch x := v.(type) {
	case int64:
		var ok bool
		if dur, ok = d.seconds(p, x, maxAge); !ok {
			return 0, false
		}
	case string:
		s, ok := d.str(p, v)
		if !ok {
			return 0, false
		}
		if dur, ok = parseAge(strings.TrimSpace(s)); !ok {
			d.fail(p, "invalid age %q: want e.g. \"7d\", \"2w\", \"36h\", \"0\" (keep forever) or integer seconds", s)
			return 0, false
		}
		if dur < 0 || dur > maxAge {
			d.fail(p, "age %s out of range [0, 10 years]", s)
			return 0, false
		}
	default:
		d.wrongType(p, v, `an age ("7d") or integer seconds`)
		return 0, false
	}
	return dur, true
}

// parseAge accepts Go durations plus the units d (24h) and w (7d), alone
// or first: "7d", "1w2d", "1d12h"; ok is false for anything else.
func parseAge(s string) (d time.Duration, ok bool) {
	switch s {
	case "0":
		return 0, true
	case "":
		return 0, false
	}
	var total time.Duration
	rest := s
	for _, u := range []struct {
		suffix byte
		unit   time.Duration
	}{{'w', 7 * 24 * time.Hour}, {'d', 24 * time.Hour}} {
		i := strings.IndexByte(rest, u.suffix)
		if i < 0 {
			continue
		}
		n, err := strconv.ParseUint(rest[:i], 10, 32)
		if err != nil {
			return 0, false
		}
		total += time.Duration(n) * u.unit
		rest = rest[i+1:]
	}
	if rest != "" {
		x, err := time.ParseDuration(rest)
		if err != nil {
			return 0, false
		}
		total += x
	}
	return total, true
}

// size is a byte count: an integer, or a string with a unit: "500MB",
// "2GiB", "10 GB" (KB/MB/GB/TB are powers of 1000, KiB/MiB/GiB/TiB of
// 1024, B bytes); 0 turns its rule off.
func (d *decoder) size(p keyPath, v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			d.fail(p, "%d is negative", x)
			return 0, false
		}
		return x, true
	case string:
		s, ok := d.str(p, v)
		if !ok {
			return 0, false
		}
		n, ok := parseSize(s)
		if !ok {
			d.fail(p, "invalid size %q: want e.g. \"500MB\", \"2GiB\" or integer bytes", s)
		}
		return n, ok
	}
	d.wrongType(p, v, `a size ("10GB") or integer bytes`)
	return 0, false
}

func parseSize(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i == 0 {
		return 0, false
	}
	num, unit := s, ""
	if i > 0 {
		num, unit = s[:i], strings.TrimSpace(s[i:])
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 {
		return 0, false
	}
	mult := map[string]float64{
		"": 1, "B": 1,
		"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
		"KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40,
	}[strings.ToUpper(unit)]
	if mult == 0 {
		return 0, false
	}
	b := f * mult
	if b > math.MaxInt64/2 {
		return 0, false
	}
	return int64(b), true
}

// SizeText writes a byte count the way sizes are read back (binary
// units, one decimal): "512 B", "1.5 MiB", "10.0 GiB". Every figure of
// bytes the program prints uses it.
func SizeText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
