package oidcauth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// sealer seals values into cookie-safe strings with AES-256-GCM: a
// sealed value is encrypted (its content cannot be read) and
// authenticated (it cannot be changed or forged without the key). The
// purpose is sealed with it as additional data, so a login cookie cannot
// stand in for a session cookie.
type sealer struct{ aead cipher.AEAD }

// minKeyLen is the least key file content accepted.
const minKeyLen = 32

// newSealer derives the key from secret (SHA-256), or generates one when
// secret is nil.
func newSealer(secret []byte) (*sealer, error) {
	var key [32]byte
	if secret == nil {
		if _, err := rand.Read(key[:]); err != nil {
			return nil, err
		}
	} else {
		if len(secret) < minKeyLen {
			return nil, fmt.Errorf("oidc.session_key_file holds %d bytes; it needs at least %d random ones (openssl rand -base64 48)", len(secret), minKeyLen)
		}
		key = sha256.Sum256(secret)
	}
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead}, nil
}

// envelope is what is sealed: the value and when it stops being valid.
type envelope struct {
	Expires int64           `json:"exp"`
	Value   json.RawMessage `json:"v"`
}

// seal returns v sealed for purpose until expires.
func (s *sealer) seal(purpose string, v any, expires time.Time) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	plain, err := json.Marshal(envelope{Expires: expires.Unix(), Value: raw})
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, []byte(purpose))), nil
}

// errSealed is a sealed value that is not valid: forged, changed, sealed
// with another key (a restart without session_key_file) or expired.
var errSealed = errors.New("not valid or expired")

// open unseals what seal returned for purpose into v, if it has not
// expired by now.
func (s *sealer) open(purpose, sealed string, now time.Time, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil || len(b) < s.aead.NonceSize() {
		return errSealed
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, b[:n], b[n:], []byte(purpose))
	if err != nil {
		return errSealed
	}
	var e envelope
	if err := json.Unmarshal(plain, &e); err != nil || now.Unix() >= e.Expires {
		return errSealed
	}
	return json.Unmarshal(e.Value, v)
}
