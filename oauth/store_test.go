package oauth

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStorePaths(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	ctx := context.Background()
	tests := []struct {
		owner, server string
		want          string // relative to Dir; "" refused
	}{
		{"", "linear", "linear.json"},
		{"alice", "linear", filepath.Join("owners", "alice", "linear.json")},
		{"", "../x", ""},
		{"", "a/b", ""},
		{"..", "linear", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		rec := &Record{URL: "https://x/mcp", Token: Token{AccessToken: "secret-a"}}
		err := s.Save(ctx, tt.owner, tt.server, rec)
		if tt.want == "" {
			if err == nil {
				t.Errorf("Save(%q, %q) accepted", tt.owner, tt.server)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Save(%q, %q): %v", tt.owner, tt.server, err)
		}
		fi, err := os.Stat(filepath.Join(s.Dir, tt.want))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want a 0600 file", tt.want, fi, err)
		}
		if di, _ := os.Stat(filepath.Dir(filepath.Join(s.Dir, tt.want))); tt.owner != "" && di.Mode().Perm() != 0o700 {
			t.Errorf("owner directory mode %v, want 0700", di.Mode().Perm())
		}
		got, err := s.Load(ctx, tt.owner, tt.server)
		if err != nil || got.Token.AccessToken != "secret-a" {
			t.Errorf("Load: %+v, %v", got, err)
		}
		if err := s.Delete(ctx, tt.owner, tt.server); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Load(ctx, tt.owner, tt.server); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Load after Delete: %v", err)
		}
		if err := s.Delete(ctx, tt.owner, tt.server); err != nil {
			t.Errorf("a second Delete: %v", err)
		}
	}
	// No temporary file is left behind, and a broken record's error does
	// not quote it (it holds tokens).
	if err := os.WriteFile(filepath.Join(s.Dir, "bad.json"), []byte("secret-b not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "", "bad"); err == nil || strings.Contains(err.Error(), "secret-b") {
		t.Errorf("Load of a broken record: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(s.Dir, ".*tmp*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestDefaultDir(t *testing.T) {
	d := t.TempDir()
	t.Setenv(EnvAuthDir, d)
	if got, err := DefaultDir(); err != nil || got != d {
		t.Errorf("DefaultDir with %s = %q, %v", EnvAuthDir, got, err)
	}
	t.Setenv(EnvAuthDir, "")
	got, err := DefaultDir()
	if base, berr := os.UserConfigDir(); berr == nil && (err != nil || got != filepath.Join(base, "scratchpad-mcp", "auth")) {
		t.Errorf("DefaultDir = %q, %v", got, err)
	}
}
