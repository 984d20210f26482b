package config

import (
	"context"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// ReadTokensFile reads a tokens file ([HTTP].TokensFile) alone: its
// [[tokens]] entries, checked as [Load] checks them ({{ env.NAME }}
// resolved with lookup; nil means os.LookupEnv). A problem, a file that
// cannot be read included, is a *[Error] or [Errors] naming the file, key
// and line.
func ReadTokensFile(path string, lookup func(string) (string, bool)) ([]Token, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	d := &decoder{file: path, dir: filepath.Dir(path), home: os.UserHomeDir, lookup: lookup, pos: scanPositions("")}
	toks := d.tokensFile(keyPath{}, path, tokenSeen{})
	switch len(d.errs) {
	case 0:
		return toks, nil
	case 1:
		return nil, d.errs[0]
	}
	return nil, d.errs
}

// Fingerprint is a token's short public name: the first 8 hex digits of
// its SHA-256 (what the tokens file keeps, never the token), for
// `scratchpad-mcp token list` and logs.
func (t Token) Fingerprint() string { return hex.EncodeToString(t.SHA256[:4]) }

// TokenRecheck is how often at most a [TokenSet] looks at its file.
const TokenRecheck = time.Second

// TokenSet is the bearer tokens in force for a running server: the
// config's [[http.tokens]] and its tokens file's, the file re-read when
// it is replaced or its modification time or size changes, looked at
// (one stat) at most once every [TokenRecheck], by whichever request
// comes first (the first look always reads it); the others
// go on with the tokens they have. So `scratchpad-mcp token add` and
// `token revoke` take effect within a second, without a restart. A file
// that no longer reads (a hand edit half done) keeps the last tokens
// that did, said once per change in the log; a file removed revokes
// its tokens.
type TokenSet struct {
	// Revoked, when set, is called (from the request whose look saw the
	// change, before it goes on) with each owner one of whose tokens is
	// no longer in force: revoked, or replaced by --rotate. The server
	// ends that owner's sessions: their requests would be refused from
	// now on, and a stream already open must not outlive the token.
	Revoked func(owner string)

	inline []Token
	path   string
	log    *slog.Logger
	every  time.Duration

	next atomic.Int64 // unix nanoseconds of the next look at the file
	cur  atomic.Pointer[[]Token]
	mu   sync.Mutex  // one look at a time
	last os.FileInfo // the file at the last look; nil: none
	// unsure: no look yet. The file may have changed since the config
	// was loaded, so the first look reads it whatever it finds.
	unsure bool
}

// NewTokenSet is the tokens of c's [HTTP] (Tokens as loaded), watching
// its TokensFile when it has one. log gets the re-reads.
func NewTokenSet(c *Config, log *slog.Logger) *TokenSet {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &TokenSet{inline: c.HTTP.InlineTokens, path: c.HTTP.TokensFile, log: log, every: TokenRecheck, unsure: true}
	toks := slices.Clone(c.HTTP.Tokens)
	s.cur.Store(&toks)
	s.next.Store(time.Now().Add(s.every).UnixNano())
	return s
}

// Tokens is the tokens in force now. It costs an atomic load, and one
// stat of the file at most every [TokenRecheck].
func (s *TokenSet) Tokens() []Token {
	if s.path != "" && time.Now().UnixNano() >= s.next.Load() && s.mu.TryLock() {
		s.look()
		s.mu.Unlock()
	}
	return *s.cur.Load()
}

// Watch looks at the file every [TokenRecheck] until ctx ends, so that
// a revocation ends the owner's work (Revoked) within a second even when
// no request comes to look.
func (s *TokenSet) Watch(ctx context.Context) {
	if s.path == "" {
		return
	}
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.Tokens()
		}
	}
}

// look re-reads the file if it changed; s.mu is held.
func (s *TokenSet) look() {
	s.next.Store(time.Now().Add(s.every).UnixNano())
	fi, err := os.Stat(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if s.last != nil || s.unsure {
			s.last, s.unsure = nil, false
			s.swap(slices.Clone(s.inline))
			toks := *s.cur.Load()
			s.log.Warn("the tokens file is gone: its tokens are refused", "tokens_file", s.path, "tokens", len(toks))
		}
		return
	case err != nil:
		return // unreadable for now: the last tokens stay
	case !s.unsure && s.last != nil && os.SameFile(s.last, fi) && fi.ModTime().Equal(s.last.ModTime()) && fi.Size() == s.last.Size():
		// Same file (an atomic replace is a new one), same time, same
		// size: unchanged.
		return
	}
	s.last, s.unsure = fi, false
	file, err := ReadTokensFile(s.path, nil)
	if err != nil {
		s.log.Warn("the tokens file changed but does not read; the tokens in force stay", "tokens_file", s.path, "error", err)
		return
	}
	toks := append(slices.Clone(s.inline), file...)
	s.swap(toks)
	s.log.Info("tokens file re-read", "tokens_file", s.path, "tokens", len(toks))
}

// swap puts toks in force and tells Revoked of each owner that lost a
// token. s.mu is held.
func (s *TokenSet) swap(toks []Token) {
	old := *s.cur.Load()
	s.cur.Store(&toks)
	if s.Revoked == nil {
		return
	}
	kept := make(map[[32]byte]bool, len(toks))
	for _, t := range toks {
		kept[t.SHA256] = true
	}
	told := map[string]bool{}
	for _, t := range old {
		if !kept[t.SHA256] && !told[t.Owner] {
			told[t.Owner] = true
			s.log.Info("a bearer token is no longer in force: its owner's sessions end", "owner", t.Owner)
			s.Revoked(t.Owner)
		}
	}
}
