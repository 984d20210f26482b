package oauth

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// Shared is what a [Store] needs of the store replicas share ([cluster]
// redis_url); package state's Redis store is one. Names come from
// [layout.OAuthRecordName]; GetValue's error for a name with no value
// matches [fs.ErrNotExist].
type Shared interface {
	GetValue(ctx context.Context, name string) ([]byte, error)
	PutValue(ctx context.Context, name string, data []byte, ttl time.Duration) error
	DeleteValue(ctx context.Context, name string) error
	Lock(ctx context.Context, name string, ttl time.Duration) (unlock func(), err error)
}

// refreshLockTTL bounds how long a replica that died while refreshing
// keeps the others waiting: more than a token request may take (the
// HTTP client's 30 s).
const refreshLockTTL = time.Minute

// sealMagic starts every sealed record; the key's id follows, so that a
// record sealed with another key says so instead of failing as garbage.
const sealMagic = "spmcp-sealed-v1"

// sealKey is the AES-256-GCM key records on Shared are sealed with.
type sealKey struct {
	aead cipher.AEAD
	id   string // the first 8 bytes of the key's SHA-256, in hex
	path string
}

// keyFile is where the sealing key lives: beside the file records, 0600
// in a 0700 folder, never on Redis.
func (s *Store) keyFile() string { return filepath.Join(s.Dir, layout.OAuthSealKeyFile) }

// sealer returns the store's key, creating the key file when there is
// none yet (the first replica of a host). With reload it reads the file
// again: an operator may have copied the right key in since.
func (s *Store) sealer(reload bool) (*sealKey, error) {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	if s.key != nil && !reload {
		return s.key, nil
	}
	k, err := loadSealKey(s.keyFile())
	if err != nil {
		return nil, err
	}
	s.key = k
	return k, nil
}

func loadSealKey(path string) (*sealKey, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		b, err = createSealKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("token store: the key sealing tokens on [cluster] redis_url: %w", err)
	}
	raw, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(b)))
	if err != nil || len(raw) != 32 {
		return nil, fmt.Errorf("token store: %s is not a token sealing key (32 bytes, base64); remove it to make a new one, or copy the one the other replicas use", path)
	}
	block, _ := aes.NewCipher(raw) // a 32-byte key is always accepted
	aead, _ := cipher.NewGCM(block)
	sum := sha256.Sum256(raw)
	return &sealKey{aead: aead, id: hex.EncodeToString(sum[:8]), path: path}, nil
}

// createSealKey writes a new random key to path, unless another process
// got there first: the key is written to a temporary file and linked to
// path, which fails if path exists, so two replicas starting at once end
// with one key, never each its own.
func createSealKey(path string) ([]byte, error) {
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails
	data := []byte(base64.StdEncoding.EncodeToString(raw[:]) + "\n")
	d := memdir.At(filepath.Dir(path))
	tmp, err := d.WriteTemp(filepath.Base(path), func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return nil, err
	}
	defer func() { _ = d.Remove(tmp) }()
	if err := os.Link(d.Join(tmp), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return os.ReadFile(path)
}

// seal encrypts a record for name: the name is authenticated with it, so
// a record copied to another owner's or server's name does not open.
func (k *sealKey) seal(name string, plain []byte) []byte {
	nonce := make([]byte, k.aead.NonceSize())
	_, _ = rand.Read(nonce)
	out := fmt.Appendf(nil, "%s.%s.", sealMagic, k.id)
	out = append(out, nonce...)
	return k.aead.Seal(out, nonce, plain, []byte(name))
}

// sealedBy returns the key id a sealed value names, and its rest.
func sealedBy(b []byte) (id string, rest []byte, ok bool) {
	rest, ok = bytes.CutPrefix(b, []byte(sealMagic+"."))
	if !ok || len(rest) < 17 || rest[16] != '.' {
		return "", nil, false
	}
	return string(rest[:16]), rest[17:], true
}

func (k *sealKey) open(name string, rest []byte) ([]byte, error) {
	n := k.aead.NonceSize()
	if len(rest) < n {
		return nil, errors.New("too short")
	}
	return k.aead.Open(nil, rest[:n], rest[n:], []byte(name))
}

// loadShared reads and opens the record of server for owner on Shared.
func (s *Store) loadShared(ctx context.Context, owner, server string) ([]byte, error) {
	name := layout.OAuthRecordName(owner, server)
	b, err := s.Shared.GetValue(ctx, name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("reading the OAuth token of upstream %q: %w", server, err)
	}
	return s.openSealed(name, b, "the token record of "+server, sealHints{
		notSealed: " (remove it with `scratchpad-mcp auth logout " + server + "`)",
		otherKey:  " (copy it from the host that wrote the record), or log in again",
		broken:    ": log in again",
	})
}

// sealHints end the errors of [Store.openSealed]: what the operator
// does about each.
type sealHints struct{ notSealed, otherKey, broken string }

// openSealed opens a value sealed for name (what: how errors name it),
// reading the key file again once if the value names another key.
func (s *Store) openSealed(name string, b []byte, what string, h sealHints) ([]byte, error) {
	k, err := s.sealer(false)
	if err != nil {
		return nil, err
	}
	id, rest, ok := sealedBy(b)
	if !ok {
		return nil, fmt.Errorf("%w: %s on [cluster] redis_url is not sealed%s", ErrSealKey, what, h.notSealed)
	}
	if id != k.id {
		if k, err = s.sealer(true); err != nil {
			return nil, err
		}
	}
	if id != k.id {
		return nil, fmt.Errorf("%w: %s on [cluster] redis_url was sealed with key %s, and %s is key %s: every replica needs the same key file%s", ErrSealKey, what, id, k.path, k.id, h.otherKey)
	}
	plain, err := k.open(name, rest)
	if err != nil {
		return nil, fmt.Errorf("%w: %s on [cluster] redis_url does not open with key %s (altered, or moved from another name)%s", ErrSealKey, what, k.id, h.broken)
	}
	return plain, nil
}

// saveShared seals a record and puts it on Shared.
func (s *Store) saveShared(ctx context.Context, owner, server string, plain []byte) error {
	k, err := s.sealer(false)
	if err != nil {
		return err
	}
	name := layout.OAuthRecordName(owner, server)
	if err := s.Shared.PutValue(ctx, name, k.seal(name, plain), 0); err != nil {
		return fmt.Errorf("storing the OAuth token of upstream %q: %w", server, err)
	}
	return nil
}

// lock takes the refresh lock of server for owner on Shared, so that one
// replica at a time asks the authorization server for a token; without
// Shared there is nobody to wait for (this process's Client holds its
// own mutex).
func (s *Store) lock(ctx context.Context, owner, server string) (func(), error) {
	if s.Shared == nil {
		return func() {}, nil
	}
	unlock, err := s.Shared.Lock(ctx, layout.OAuthRecordName(owner, server), refreshLockTTL)
	if err != nil {
		return nil, fmt.Errorf("waiting for the OAuth refresh lock of upstream %q: %w", server, err)
	}
	return unlock, nil
}

// String says where the records are, for `auth status` and doctor: the
// directory, or the shared store (its URL without the password, when it
// prints one) and the sealing key's file.
func (s *Store) String() string {
	if s.Shared == nil {
		return s.Dir
	}
	where := "the shared store"
	if str, ok := s.Shared.(fmt.Stringer); ok {
		where = str.String()
	}
	return fmt.Sprintf("[cluster] redis_url %s, sealed with the key in %s", where, s.keyFile())
}
