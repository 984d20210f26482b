package config

import (
	"testing"
	"time"
)

func TestRetention(t *testing.T) {
	c, err := Parse("", []byte(""), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Retention{Enabled: true, MaxAge: 7 * 24 * time.Hour, RunsMaxAge: 30 * 24 * time.Hour,
		UsageMaxBytes: 16 << 20, UsageKeep: 3, Interval: time.Hour, SweepTimeout: 30 * time.Second}
	if c.Retention != want {
		t.Fatalf("defaults: %+v", c.Retention)
	}
	c, err = Parse("", []byte(`[retention]
enabled = false
max_age = "1w2d"
runs_max_age = "0"
max_bytes = "1.5GiB"
usage_max_bytes = 1000
usage_keep = 9
interval = "2h"
sweep_timeout = 5
`), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	want = Retention{Enabled: false, MaxAge: 9 * 24 * time.Hour, RunsMaxAge: 0, MaxBytes: 3 << 29,
		UsageMaxBytes: 1000, UsageKeep: 9, Interval: 2 * time.Hour, SweepTimeout: 5 * time.Second}
	if c.Retention != want {
		t.Fatalf("got %+v\nwant %+v", c.Retention, want)
	}
	for s, n := range map[string]int64{"10GB": 10e9, "500 MB": 500e6, "2KiB": 2048, "7": 7, "3b": 3} {
		if got, ok := parseSize(s); !ok || got != n {
			t.Errorf("parseSize(%q) = %d, %v", s, got, ok)
		}
	}
	for s, d := range map[string]time.Duration{"7d": 7 * 24 * time.Hour, "36h": 36 * time.Hour, "1d12h": 36 * time.Hour, "2w": 14 * 24 * time.Hour} {
		if got, ok := parseAge(s); !ok || got != d {
			t.Errorf("parseAge(%q) = %v, %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "d", "7x", "1.5d", "-1d"} {
		if _, ok := parseAge(s); ok {
			t.Errorf("parseAge(%q) accepted", s)
		}
	}
}
