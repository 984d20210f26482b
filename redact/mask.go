package redact

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"hash"
	"math"
)

// A mask is "[REDACTED:" kind ":" fingerprint "]": kind and fingerprint are
// made of a-z 0-9 and -, so a mask never needs an escape inside a JSON
// string and is never itself taken for a secret ([maskRe] keeps it).
//
// The fingerprint is the first 2 bytes (4 hex digits) of HMAC-SHA256 of
// the secret (its decoded text) under the redactor's key: the same secret
// gets the same fingerprint wherever it appears, so an agent can tell two
// secrets apart, and the fingerprint says nothing about the secret to
// someone without the key. With 16 bits two different secrets share a
// fingerprint with probability 1/65536 per pair (among 100 secrets about
// 7%): a hint, not an identity.

const maskPrefix = "[REDACTED:"

// processKey is the key when none is configured: random per process, so
// fingerprints are stable within a run of the proxy and differ across runs.
var processKey = func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // never fails (crypto/rand's contract)
	return k
}()

// fingerprinter computes fingerprints; one per scan state (hash.Hash is
// not safe for concurrent use).
type fingerprinter struct{ mac hash.Hash }

func newFingerprinter(key []byte) fingerprinter {
	return fingerprinter{mac: hmac.New(sha256.New, key)}
}

const hexDigits = "0123456789abcdef"

func (f *fingerprinter) sum(secret []byte) [4]byte {
	f.mac.Reset()
	f.mac.Write(secret)
	var buf [sha256.Size]byte
	s := f.mac.Sum(buf[:0])
	return [4]byte{hexDigits[s[0]>>4], hexDigits[s[0]&15], hexDigits[s[1]>>4], hexDigits[s[1]&15]}
}

// appendMask appends the mask of a secret of kind with fingerprint fp.
func appendMask(dst []byte, kind string, fp [4]byte) []byte {
	dst = append(dst, maskPrefix...)
	dst = append(dst, kind...)
	dst = append(dst, ':')
	dst = append(dst, fp[:]...)
	return append(dst, ']')
}

// entropy is the Shannon entropy of b in bits per byte, as gitleaks
// computes it.
func entropy(b []byte) float64 {
	if len(b) == 0 {
		return 0
	}
	var n [256]int
	for _, c := range b {
		n[c]++
	}
	var e float64
	l := float64(len(b))
	for _, c := range n {
		if c > 0 {
			p := float64(c) / l
			e -= p * math.Log2(p)
		}
	}
	return e
}
