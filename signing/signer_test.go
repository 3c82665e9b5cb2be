package signing

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewSignerRejects(t *testing.T) {
	tests := []struct {
		name    string
		version string
		seed    []byte
	}{
		{"empty version", "", make([]byte, 32)},
		{"short seed", "v1", make([]byte, 31)},
		{"long seed", "v1", make([]byte, 64)},
		{"nil seed", "v1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if s, err := NewSigner(tt.version, tt.seed); err == nil {
				t.Errorf("NewSigner(%q, %d bytes) = %v, want an error", tt.version, len(tt.seed), s)
			}
		})
	}
}

// secretForms are the ways the test seed or private key could leak into text.
func secretForms(seed []byte) []string {
	s, _ := NewSigner("x", seed)
	return []string{
		base64.StdEncoding.EncodeToString(seed), base64.RawStdEncoding.EncodeToString(seed),
		hex.EncodeToString(seed), fmt.Sprint(seed), fmt.Sprintf("%x", []byte(s.priv)),
		base64.StdEncoding.EncodeToString(s.priv), fmt.Sprint([]byte(s.priv)),
	}
}

func TestSignerNeverPrintsPrivateKey(t *testing.T) {
	s := testSigner(t)
	var logged bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logged, nil))
	logger.Info("signer", "signer", s, "value", *s)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("signer", "signer", s)
	marshalled, err := json.Marshal(map[string]any{"p": s, "v": *s})
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	outputs := map[string]string{
		"json": string(marshalled), "slog": logged.String(),
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %v"} {
		outputs["fmt "+verb] = fmt.Sprintf(verb, s) + fmt.Sprintf(verb, *s)
	}
	outputs["fmt in struct"] = fmt.Sprintf("%+v %#v", struct{ S *Signer }{s}, struct{ S Signer }{*s})
	pub := s.PublicKey().PublicKey
	for name, out := range outputs {
		for _, secret := range secretForms(testSeed("v1")) {
			if strings.Contains(out, secret) {
				t.Errorf("%s output contains private key material: %s", name, out)
			}
		}
		if name != "fmt %T %v" && !strings.Contains(out, pub) && !strings.Contains(out, "v1-2026-10a") {
			t.Errorf("%s output = %s, want the key version or public key", name, out)
		}
	}
}

func TestSignerPublicKey(t *testing.T) {
	s := testSigner(t)
	pk := s.PublicKey()
	raw, err := base64.StdEncoding.DecodeString(pk.PublicKey)
	if err != nil || len(raw) != 32 {
		t.Fatalf("PublicKey().PublicKey = %q, want base64 of 32 bytes (err %v)", pk.PublicKey, err)
	}
	if pk.KeyVersion != "v1-2026-10a" || pk.Algorithm != "Ed25519" || pk.PublicKeyEncoding != "base64 of the raw 32-byte Ed25519 public key" {
		t.Errorf("PublicKey() = %+v", pk)
	}
	b, _ := json.Marshal(pk)
	want := `{"keyVersion":"v1-2026-10a","algorithm":"Ed25519","publicKey":"` + pk.PublicKey + `","publicKeyEncoding":"base64 of the raw 32-byte Ed25519 public key"}`
	if string(b) != want {
		t.Errorf("json of PublicKey = %s, want %s", b, want)
	}
}

func TestAttestRejects(t *testing.T) {
	s := testSigner(t)
	tests := []struct{ name, context, response, at string }{
		{"unknown context", "json-schema-verifier/other/v1", `{}`, "t"},
		{"empty context", "", `{}`, "t"},
		{"not json", ContextVerify, `{`, "t"},
		{"empty timestamp", ContextVerify, `{}`, ""},
		{"empty response", ContextVerify, ``, "t"},
		{"two values", ContextVerify, `{} {}`, "t"},
		{"timestamp not UTF-8", ContextVerify, `{}`, "\xff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if a, err := s.Attest(tt.context, []byte(tt.response), tt.at); err == nil {
				t.Errorf("Attest = %+v, want an error", a)
			}
		})
	}
}

// TestReceiptGolden pins the bytes: Ed25519 is deterministic, so a fixed key
// and answer always give the same receipt. A change here breaks every
// receipt already issued.
func TestReceiptGolden(t *testing.T) {
	s := testSigner(t)
	for _, name := range []string{"full-fail", "compact-pass"} {
		t.Run(name, func(t *testing.T) {
			answer := readFile(t, filepath.Join("testdata", "answers", name+".json"))
			var top struct {
				VerifiedAt string `json:"verified_at"`
			}
			if err := json.Unmarshal(answer, &top); err != nil {
				t.Fatal(err)
			}
			doc, err := SignedDocument(ContextVerify, s.KeyVersion(), top.VerifiedAt, answer)
			if err != nil {
				t.Fatalf("SignedDocument: %v", err)
			}
			golden(t, name+".signed.json", doc)
			golden(t, name+".receipt.json", sign(t, s, ContextVerify, answer, top.VerifiedAt))
		})
	}
}

// TestSign: Sign's receipt is the answer's own bytes with Attest's
// attestation added as the last member, and it refuses what is not one JSON
// object.
func TestSign(t *testing.T) {
	s := testSigner(t)
	const at = "2026-11-30T00:00:00.000000+00:00"
	tests := []struct{ name, in, before string }{ // before: the receipt up to the attestation object
		{"object", `{"b":1,"a":[2.50,"\u00e9"]}`, `{"b":1,"a":[2.50,"\u00e9"],"attestation":`},
		{"empty object", `{}`, `{"attestation":`},
		{"empty object with space", "{ \n}\n", `{"attestation":`},
		{"trailing newline", "{\"a\":1}\n", `{"a":1,"attestation":`},
		{"indented", "{\n  \"a\": 1\n}\n", "{\n  \"a\": 1,\"attestation\":"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Sign(ContextVerify, []byte(tt.in), at)
			if err != nil {
				t.Fatalf("Sign(%q): %v", tt.in, err)
			}
			a, err := s.Attest(ContextVerify, []byte(tt.in), at)
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf(`%s{"algorithm":"Ed25519","key_version":%q,"timestamp":%q,"signature":%q}}`,
				tt.before, a.KeyVersion, a.Timestamp, a.Signature)
			if string(got) != want {
				t.Errorf("Sign(%q) = %s, want %s", tt.in, got, want)
			}
			if _, err := VerifyReceipt(got, s.Keys()); err != nil {
				t.Errorf("VerifyReceipt(Sign(%q)): %v", tt.in, err)
			}
		})
	}
	for _, bad := range []string{``, `[]`, `"x"`, `{`, `{}}`, `{"a":1} x`, ` {}`, `{"a":1,"a":2}`} {
		if got, err := s.Sign(ContextVerify, []byte(bad), at); err == nil {
			t.Errorf("Sign(%q) = %s, want an error", bad, got)
		}
	}
	if got, err := s.Sign("other", []byte(`{}`), at); err == nil {
		t.Errorf("Sign under an unknown context = %s, want an error", got)
	}
}
