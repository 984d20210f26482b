package wire

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The reasons [Sealer.Open] refuses a requestState; each is wrapped in the
// error it returns, and [StateError] makes the -32602 the client sees.
var (
	ErrStateMalformed = errors.New("malformed")
	ErrStateSignature = errors.New("bad signature")
	ErrStateExpired   = errors.New("expired")
	ErrStateOwner     = errors.New("issued to another owner")
	ErrStateAgent     = errors.New("issued to another agent")
	ErrStateMethod    = errors.New("issued for another method")
	ErrStateName      = errors.New("issued for another tool, prompt or resource")
	ErrStateArgs      = errors.New("issued for other arguments")
	// ErrStateTooBig is returned by [Sealer.Seal] for a payload over
	// [MaxState] once sealed.
	ErrStateTooBig = errors.New("too big")
)

// ErrShortKey is returned by [NewSealer] for a key under 32 bytes.
var ErrShortKey = errors.New("requestState key shorter than 32 bytes")

// MaxState bounds a sealed requestState (an upstream's own state included).
const MaxState = 64 << 10

const statePrefix = "sp1."

// StatePayload is what the proxy's requestState carries: whose call it
// continues and where it goes. Short JSON names keep the token small.
type StatePayload struct {
	Upstream string `json:"u,omitempty"` // the upstream that asked
	State    string `json:"s,omitempty"` // that upstream's own requestState
	Parked   string `json:"p,omitempty"` // the parked call (2025 upstream)
	StateBinding
	Expires int64    `json:"e"`           // unix seconds
	Keys    []string `json:"k,omitempty"` // the input request keys issued
}

// StateBinding is who and what a state was issued for; [Sealer.Open] refuses
// one presented for anything else. Agent is [AgentDigest] of the agent key,
// Digest [ArgsDigest] of the call's arguments.
type StateBinding struct {
	Owner  string `json:"o"`
	Agent  string `json:"a"`
	Method string `json:"m"`
	Name   string `json:"n"`
	Digest string `json:"d"`
}

// AgentDigest is the first 16 bytes of sha256(agent key), hex: the agent is
// bound without the key (which may hold a role or run id) being readable in
// the token.
func AgentDigest(agentKey string) string {
	sum := sha256.Sum256([]byte(agentKey))
	return hex.EncodeToString(sum[:16])
}

// ArgsDigest is the first 16 bytes of sha256 of the arguments in canonical
// form (decoded and encoded again: members sorted, whitespace gone, numbers
// as written), hex; absent or null arguments digest as {}.
func ArgsDigest(args json.RawMessage) (string, error) {
	var v any = map[string]any{}
	if len(bytes.TrimSpace(args)) > 0 && !isNull(args) {
		d := json.NewDecoder(bytes.NewReader(args))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return "", fmt.Errorf("arguments: %w", err)
		}
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:16]), nil
}

// Sealer seals and opens the requestState the proxy hands out:
// "sp1." + b64url(payload) + "." + b64url(HMAC-SHA256(key, "sp1." +
// b64url(payload))). The first key seals; every key opens, so a key can be
// rotated without refusing states issued just before.
type Sealer struct {
	keys [][]byte
}

// NewSealer returns a Sealer sealing with keys[0] and opening with any of
// keys. Each key is at least 32 bytes ([ErrShortKey]).
func NewSealer(keys ...[]byte) (*Sealer, error) {
	if len(keys) == 0 {
		return nil, ErrShortKey
	}
	s := &Sealer{}
	for _, k := range keys {
		if len(k) < 32 {
			return nil, ErrShortKey
		}
		s.keys = append(s.keys, bytes.Clone(k))
	}
	return s, nil
}

func mac(key []byte, signed string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(signed))
	return h.Sum(nil)
}

var b64 = base64.RawURLEncoding

// Seal returns p sealed with the current key.
func (s *Sealer) Seal(p StatePayload) (string, error) {
	body, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	signed := statePrefix + b64.EncodeToString(body)
	tok := signed + "." + b64.EncodeToString(mac(s.keys[0], signed))
	if len(tok) > MaxState {
		return "", fmt.Errorf("requestState: %w (%d bytes)", ErrStateTooBig, len(tok))
	}
	return tok, nil
}

// Open verifies tok (signature in constant time under each key, then expiry
// against now, then owner, agent, method, name and arguments against want) and
// returns its payload. The error wraps the first reason found (ErrState*).
func (s *Sealer) Open(tok string, want StateBinding, now time.Time) (StatePayload, error) {
	var p StatePayload
	if len(tok) > MaxState || !strings.HasPrefix(tok, statePrefix) {
		return p, ErrStateMalformed
	}
	dot := strings.LastIndexByte(tok, '.')
	if dot < len(statePrefix) {
		return p, ErrStateMalformed
	}
	signed, sig := tok[:dot], tok[dot+1:]
	got, err := b64.Strict().DecodeString(sig)
	if err != nil || len(got) != sha256.Size {
		return p, ErrStateSignature
	}
	ok := false
	for _, k := range s.keys {
		if hmac.Equal(got, mac(k, signed)) {
			ok = true
		}
	}
	if !ok {
		return p, ErrStateSignature
	}
	body, err := b64.Strict().DecodeString(signed[len(statePrefix):])
	if err != nil || json.Unmarshal(body, &p) != nil {
		return StatePayload{}, ErrStateMalformed
	}
	checks := []struct {
		bad bool
		err error
	}{
		{now.Unix() >= p.Expires, ErrStateExpired},
		{p.Owner != want.Owner, ErrStateOwner},
		{p.Agent != want.Agent, ErrStateAgent},
		{p.Method != want.Method, ErrStateMethod},
		{p.Name != want.Name, ErrStateName},
		{p.Digest != want.Digest, ErrStateArgs},
	}
	for _, c := range checks {
		if c.bad {
			return StatePayload{}, c.err
		}
	}
	return p, nil
}

// StateError is the -32602 (HTTP 400) a refused requestState is answered
// with: "invalid requestState: <reason>".
func StateError(err error) *Error {
	return InvalidParams("invalid requestState: %v", err)
}
