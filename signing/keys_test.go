package signing

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestKeysFromBase64(t *testing.T) {
	pub := testSigner(t).public()
	b64 := base64.StdEncoding.EncodeToString(pub)
	keys, err := KeysFromBase64("v1", " "+b64+"\n")
	if err != nil {
		t.Fatalf("KeysFromBase64: %v", err)
	}
	if got, ok := keys.Lookup("v1"); !ok || !got.Equal(pub) {
		t.Errorf("Lookup(v1) = %x, %v; want the key", got, ok)
	}
	if _, ok := keys.Lookup("v2"); ok {
		t.Error("Lookup(v2) found a key given for v1 only")
	}
	wild, err := KeysFromBase64("", b64)
	if err != nil {
		t.Fatalf("KeysFromBase64: %v", err)
	}
	if got, ok := wild.Lookup("anything"); !ok || !got.Equal(pub) {
		t.Errorf("wildcard Lookup = %x, %v; want the key", got, ok)
	}
	for name, bad := range map[string]string{
		"not base64": "%%%", "short": base64.StdEncoding.EncodeToString(pub[:31]),
		"seed-and-key": base64.StdEncoding.EncodeToString(testSigner(t).priv), "empty": "",
		"url alphabet": base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 32)), // has - and _
	} {
		t.Run(name, func(t *testing.T) {
			if k, err := KeysFromBase64("v1", bad); err == nil {
				t.Errorf("KeysFromBase64(%q) = %v, want an error", bad, k)
			}
		})
	}
}

func TestKeysFromAgentCardRoundTrip(t *testing.T) {
	a := testSigner(t)
	b, err := NewSigner("v2-2026-11a", testSeed("v2"))
	if err != nil {
		t.Fatal(err)
	}
	card := map[string]any{
		"name": "verifier",
		"capabilities": map[string]any{
			"extensions": []any{map[string]any{
				"uri":    AttestationExtensionURI,
				"params": map[string]any{"publicKeys": []PublicKey{a.PublicKey(), b.PublicKey()}},
			}},
		},
	}
	raw, err := json.Marshal(card)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := KeysFromAgentCard(raw)
	if err != nil {
		t.Fatalf("KeysFromAgentCard: %v", err)
	}
	if len(keys) != 2 || !keys["v1-2026-10a"].Equal(a.public()) || !keys["v2-2026-11a"].Equal(b.public()) {
		t.Errorf("KeysFromAgentCard = %v, want both keys", keys)
	}
	if !strings.Contains(string(raw), `"uri":"urn:json-schema-verifier:extension:attestation:v1"`) {
		t.Errorf("extension uri missing from %s", raw)
	}
}

func TestKeysFromAgentCardRejects(t *testing.T) {
	pub := base64.StdEncoding.EncodeToString(testSigner(t).public())
	other := base64.StdEncoding.EncodeToString(make([]byte, 32))
	ext := func(keys string) string {
		return `{"capabilities":{"extensions":[{"uri":"urn:json-schema-verifier:extension:attestation:v1","params":{"publicKeys":[` + keys + `]}}]}}`
	}
	key := func(v, alg, k, enc string) string {
		return fmt.Sprintf(`{"keyVersion":%q,"algorithm":%q,"publicKey":%q,"publicKeyEncoding":%q}`, v, alg, k, enc)
	}
	tests := map[string]string{
		"not json":               `{"capabilities":`,
		"duplicate member":       `{"capabilities":{},"capabilities":{}}`,
		"no capabilities":        `{"name":"x"}`,
		"no extensions":          `{"capabilities":{}}`,
		"extensions not array":   `{"capabilities":{"extensions":{}}}`,
		"no attestation ext":     `{"capabilities":{"extensions":[{"uri":"urn:other","params":{}}]}}`,
		"empty key list":         ext(``),
		"only other algorithms":  ext(key("v1", "ML-DSA-65", pub, PublicKeyEncoding)),
		"bad key":                ext(key("v1", "Ed25519", "AAAA", PublicKeyEncoding)),
		"hex encoding":           ext(key("v1", "Ed25519", pub, "hex")),
		"bare base64":            ext(key("v1", "Ed25519", pub, "base64")),
		"no encoding":            ext(`{"keyVersion":"v1","algorithm":"Ed25519","publicKey":"` + pub + `"}`),
		"missing version":        ext(key("", "Ed25519", pub, PublicKeyEncoding)),
		"version twice":          ext(key("v1", "Ed25519", pub, PublicKeyEncoding) + "," + key("v1", "Ed25519", other, PublicKeyEncoding)),
		"params not object":      `{"capabilities":{"extensions":[{"uri":"urn:json-schema-verifier:extension:attestation:v1","params":[]}]}}`,
		"publicKeys not array":   `{"capabilities":{"extensions":[{"uri":"urn:json-schema-verifier:extension:attestation:v1","params":{"publicKeys":{}}}]}}`,
		"capitalised publicKeys": `{"capabilities":{"extensions":[{"uri":"urn:json-schema-verifier:extension:attestation:v1","params":{"PublicKeys":[` + key("v1", "Ed25519", pub, PublicKeyEncoding) + `]}}]}}`,
		"keyVersion not string":  ext(`{"keyVersion":1,"algorithm":"Ed25519","publicKey":"` + pub + `","publicKeyEncoding":"` + PublicKeyEncoding + `"}`),
	}
	for name, card := range tests {
		t.Run(name, func(t *testing.T) {
			if keys, err := KeysFromAgentCard([]byte(card)); err == nil {
				t.Errorf("KeysFromAgentCard(%s) = %v, want an error", card, keys)
			}
		})
	}
	// The same key listed twice under one version is fine.
	if _, err := KeysFromAgentCard([]byte(ext(key("v1", "Ed25519", pub, PublicKeyEncoding) + "," + key("v1", "Ed25519", pub, PublicKeyEncoding)))); err != nil {
		t.Errorf("KeysFromAgentCard with a repeated entry: %v", err)
	}
}
