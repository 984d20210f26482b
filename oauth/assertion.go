package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"math/big"
	"os"
	"time"
)

// password.

// assertionLifetime is how long a client assertion is valid: long enough
// for clock skew, short enough that a captured one is soon useless.
const assertionLifetime = 5 * time.Minute

// loadSigner reads a PEM private key (PKCS#8, PKCS#1 or SEC 1) and returns
// a signer of private_key_jwt assertions (RFC 7523 §3) with alg. The key
// is checked to fit alg now, not at the first token request.
func loadSigner(path, alg string, now func() time.Time) (signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("private_key_file: %w", err)
	}
	key, err := parsePrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("private_key_file %s: %w", path, err)
	}
	var h func() hash.Hash
	var ch crypto.Hash
	switch alg[2:] {
	case "256":
		h, ch = sha256.New, crypto.SHA256
	case "384":
		h, ch = sha512.New384, crypto.SHA384
	case "512":
		h, ch = sha512.New, crypto.SHA512
	default:
		return nil, fmt.Errorf("signing_algorithm %q is not supported", alg)
	}
	var size int // ES: the byte length of r and s
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if alg[:2] != "RS" {
			return nil, fmt.Errorf("private_key_file %s holds an RSA key; signing_algorithm %s wants an EC one", path, alg)
		}
	case *ecdsa.PrivateKey:
		want := map[string]int{"ES256": 256, "ES384": 384, "ES512": 521}[alg]
		if k.Curve.Params().BitSize != want {
			return nil, fmt.Errorf("private_key_file %s holds a P-%d key; signing_algorithm %s wants P-%d", path, k.Curve.Params().BitSize, alg, want)
		}
		size = (want + 7) / 8
	default:
		return nil, fmt.Errorf("private_key_file %s: %T keys are not supported (RSA or EC)", path, key)
	}
	return func(clientID, audience string) (string, error) {
		t := now()
		header, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
		claims, _ := json.Marshal(map[string]any{
			"iss": clientID, "sub": clientID, "aud": audience,
			"iat": t.Unix(), "exp": t.Add(assertionLifetime).Unix(), "jti": randomString(16),
		})
		input := b64(header) + "." + b64(claims)
		d := h()
		d.Write([]byte(input))
		digest := d.Sum(nil)
		var sig []byte
		switch k := key.(type) {
		case *rsa.PrivateKey:
			sig, err = rsa.SignPKCS1v15(rand.Reader, k, ch, digest)
		case *ecdsa.PrivateKey:
			// JWS wants r||s of fixed size, not ASN.1 (RFC 7518 §3.4).
			var r, s *big.Int
			r, s, err = ecdsa.Sign(rand.Reader, k, digest)
			if err == nil {
				sig = make([]byte, 2*size)
				r.FillBytes(sig[:size])
				s.FillBytes(sig[size:])
			}
		}
		if err != nil {
			return "", fmt.Errorf("signing the client assertion: %w", err)
		}
		return input + "." + b64(sig), nil
	}, nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func parsePrivateKey(b []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		if s, ok := k.(crypto.Signer); ok {
			return s, nil
		}
		return nil, fmt.Errorf("%T keys are not supported", k)
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	if k, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	return nil, fmt.Errorf("a %q block that is not a PKCS#8, PKCS#1 or EC private key", block.Type)
}
