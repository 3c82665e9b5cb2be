package signing

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// KeyResolver finds the public key of a key version. Keys and *KeyStore are
// KeyResolvers.
type KeyResolver interface {
	Lookup(keyVersion string) (ed25519.PublicKey, bool)
}

// Keys maps key versions to public keys. The entry under "" (from
// KeysFromBase64 without a version) matches any version that has no entry of
// its own.
type Keys map[string]ed25519.PublicKey

// Lookup returns the key of keyVersion, or the "" entry.
func (k Keys) Lookup(keyVersion string) (ed25519.PublicKey, bool) {
	if pub, ok := k[keyVersion]; ok {
		return pub, true
	}
	pub, ok := k[""]
	return pub, ok
}

// AttestationExtensionURIPrefix starts the uri of the A2A agent-card
// extension that publishes attestation keys; any version of it is read.
const AttestationExtensionURIPrefix = "urn:json-schema-verifier:extension:attestation:"

// AttestationExtensionURI is the uri this service publishes.
const AttestationExtensionURI = AttestationExtensionURIPrefix + "v1"

// AttestationExtensionDescription is the description of the extension
// entry that publishes the keys.
const AttestationExtensionDescription = "Answers carry an Ed25519 attestation over RFC 8785 (JCS) JSON; these keys verify it by key_version."

// KeysFromBase64 returns the key given as standard base64 of its 32 raw
// bytes (a --key argument) under keyVersion, or for every version when
// keyVersion is "".
func KeysFromBase64(keyVersion, b64 string) (Keys, error) {
	pub, err := decodePublicKey(b64)
	if err != nil {
		return nil, fmt.Errorf("reading public key: %w", err)
	}
	return Keys{keyVersion: pub}, nil
}

// Fingerprint names a public key in messages: the first 16 hex digits of
// the SHA-256 of its 32 raw bytes.
func Fingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

func decodePublicKey(b64 string) (ed25519.PublicKey, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return nil, errors.New("not standard base64")
	}
	if len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%d bytes, want %d", len(b), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(b), nil
}

// KeysFromAgentCard returns the keys an A2A agent card publishes: every
// Ed25519 entry of params.publicKeys in each capabilities.extensions[] entry
// whose uri starts with AttestationExtensionURIPrefix. Member names match
// exactly (not case-insensitively), and a card with no such key, or two
// different keys under one version, is an error.
func KeysFromAgentCard(card []byte) (_ Keys, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("reading agent card: %w", err)
		}
	}()
	canonical, err := Canonicalize(card)
	if err != nil {
		return nil, err
	}
	top, err := object(canonical, "the card")
	if err != nil {
		return nil, err
	}
	caps, err := object(top["capabilities"], "capabilities")
	if err != nil {
		return nil, err
	}
	var exts []json.RawMessage
	if err := json.Unmarshal(caps["extensions"], &exts); err != nil || exts == nil {
		return nil, errors.New("capabilities.extensions is not an array")
	}
	keys := Keys{}
	for i, raw := range exts {
		ext, err := object(raw, fmt.Sprintf("capabilities.extensions[%d]", i))
		if err != nil {
			return nil, err
		}
		var uri string
		if json.Unmarshal(ext["uri"], &uri) != nil || !strings.HasPrefix(uri, AttestationExtensionURIPrefix) {
			continue
		}
		if err := addCardKeys(keys, ext["params"], i); err != nil {
			return nil, err
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("no Ed25519 key in a capabilities.extensions entry with uri %s…", AttestationExtensionURIPrefix)
	}
	return keys, nil
}

func addCardKeys(keys Keys, rawParams json.RawMessage, i int) error {
	where := fmt.Sprintf("capabilities.extensions[%d].params", i)
	params, err := object(rawParams, where)
	if err != nil {
		return err
	}
	var list []json.RawMessage
	if err := json.Unmarshal(params["publicKeys"], &list); err != nil || list == nil {
		return fmt.Errorf("%s.publicKeys is not an array", where)
	}
	for j, raw := range list {
		at := fmt.Sprintf("%s.publicKeys[%d]", where, j)
		entry, err := object(raw, at)
		if err != nil {
			return err
		}
		var pk PublicKey
		for name, dst := range map[string]*string{
			"keyVersion": &pk.KeyVersion, "algorithm": &pk.Algorithm,
			"publicKey": &pk.PublicKey, "publicKeyEncoding": &pk.PublicKeyEncoding,
		} {
			if v, ok := entry[name]; ok && json.Unmarshal(v, dst) != nil {
				return fmt.Errorf("%s.%s is not a string", at, name)
			}
		}
		if pk.Algorithm != Algorithm {
			continue // keys for other algorithms are not ours to read
		}
		if pk.KeyVersion == "" {
			return fmt.Errorf("%s.keyVersion is missing", at)
		}
		if pk.PublicKeyEncoding != PublicKeyEncoding {
			return fmt.Errorf("%s.publicKeyEncoding is not %q, the only encoding this verifier reads (standard base64 of the 32 raw key bytes)", at, PublicKeyEncoding)
		}
		pub, err := decodePublicKey(pk.PublicKey)
		if err != nil {
			return fmt.Errorf("%s.publicKey: %w", at, err)
		}
		if old, ok := keys[pk.KeyVersion]; ok && !old.Equal(pub) {
			return fmt.Errorf("%s: its keyVersion is published with two different keys", at)
		}
		keys[pk.KeyVersion] = pub
	}
	return nil
}

// object decodes raw, which must be a JSON object, by exact member names.
func object(raw json.RawMessage, what string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, fmt.Errorf("%s is not a JSON object", what)
	}
	return m, nil
}
