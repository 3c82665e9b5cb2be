package signing

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// answers returns the realistic answers of testdata/answers by name, with
// the verified_at each carries.
func answers(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, name := range []string{"full-fail", "compact-pass"} {
		out[name] = readFile(t, filepath.Join("testdata", "answers", name+".json"))
	}
	return out
}

func verifiedAt(t testing.TB, answer []byte) string {
	t.Helper()
	var top struct {
		VerifiedAt string `json:"verified_at"`
	}
	if err := json.Unmarshal(answer, &top); err != nil || top.VerifiedAt == "" {
		t.Fatalf("answer has no verified_at (err %v)", err)
	}
	return top.VerifiedAt
}

func TestVerifyReceiptRoundTrip(t *testing.T) {
	s := testSigner(t)
	for name, answer := range answers(t) {
		for _, ctx := range []string{ContextVerify, ContextTrustScore} {
			t.Run(name+"/"+ctx, func(t *testing.T) {
				receipt := sign(t, s, ctx, answer, verifiedAt(t, answer))
				report, err := VerifyReceipt(receipt, s.Keys())
				if err != nil {
					t.Fatalf("VerifyReceipt: %v", err)
				}
				if !report.Valid || report.Context != ctx || report.KeyVersion != s.KeyVersion() {
					t.Errorf("report = %+v, want valid under %s with %s", report, ctx, s.KeyVersion())
				}
				var names []string
				for _, c := range report.Checks {
					if !c.OK {
						t.Errorf("check %s failed on a valid receipt: %s", c.Name, c.Detail)
					}
					if c.Detail == "" {
						t.Errorf("check %s has no detail: a reader sees \"ok %s:\" and learns nothing", c.Name, c.Name)
					}
					names = append(names, c.Name)
				}
				want := []string{CheckJSON, CheckAttestation, CheckAlgorithm, CheckTimestamp, CheckVerifyKeyVersion, CheckKey, CheckSignature}
				if !slices.Equal(names, want) {
					t.Errorf("checks = %v, want %v", names, want)
				}
			})
		}
	}
}

// mutation is one tampered copy of a receipt.
type mutation struct {
	name    string
	receipt []byte
}

func decodeNumbers(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	return v
}

// apply replaces the value at path (map keys and array indexes) in v by f of
// it and returns v.
func apply(v any, path []any, f func(any) any) any {
	if len(path) == 0 {
		return f(v)
	}
	switch step := path[0].(type) {
	case string:
		m := v.(map[string]any)
		m[step] = apply(m[step], path[1:], f)
		return m
	default:
		a := v.([]any)
		i := step.(int)
		a[i] = apply(a[i], path[1:], f)
		return a
	}
}

// mutations returns, for a receipt, one copy per scalar with that scalar
// changed (strings get an "x", numbers +1, booleans flipped, null becomes
// 0), one per object member with that member removed, one per array with its
// last element removed, and one per object with a member added. Numbers stay
// literals (json.Number), so only the mutated value changes.
func mutations(t *testing.T, receipt []byte) []mutation {
	t.Helper()
	var out []mutation
	emit := func(name string, path []any, f func(any) any) {
		doc := apply(decodeNumbers(t, receipt), path, f) // a fresh copy each time
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("re-encoding %s: %v", name, err)
		}
		out = append(out, mutation{name, b})
	}
	var walk func(name string, path []any, v any)
	walk = func(name string, path []any, v any) {
		path = slices.Clip(path)
		switch x := v.(type) {
		case map[string]any:
			emit(name+" +member", path, func(v any) any { v.(map[string]any)["tampered"] = true; return v })
			for k, child := range x {
				emit(name+"."+k+" removed", path, func(v any) any { delete(v.(map[string]any), k); return v })
				walk(name+"."+k, append(path, k), child)
			}
		case []any:
			if len(x) > 0 {
				emit(name+" last element removed", path, func(v any) any { a := v.([]any); return a[:len(a)-1] })
			}
			for i, child := range x {
				walk(fmt.Sprintf("%s[%d]", name, i), append(path, i), child)
			}
		case string:
			emit(name+" changed", path, func(v any) any { return v.(string) + "x" })
		case json.Number:
			emit(name+" changed", path, func(v any) any {
				f, _ := strconv.ParseFloat(string(v.(json.Number)), 64)
				return json.Number(strconv.FormatFloat(f+1, 'g', -1, 64))
			})
		case bool:
			emit(name+" changed", path, func(v any) any { return !v.(bool) })
		case nil:
			emit(name+" changed", path, func(any) any { return json.Number("0") })
		default:
			t.Fatalf("unexpected %T at %s", v, name)
		}
	}
	walk("$", nil, decodeNumbers(t, receipt))
	return out
}

func TestVerifyReceiptTamper(t *testing.T) {
	s := testSigner(t)
	for name, answer := range answers(t) {
		receipt := sign(t, s, ContextVerify, answer, verifiedAt(t, answer))
		if _, err := VerifyReceipt(receipt, s.Keys()); err != nil {
			t.Fatalf("%s: untampered receipt: %v", name, err)
		}
		muts := mutations(t, receipt)
		// A bit flip inside the signature keeps it valid base64 of 64 bytes.
		sig := decodeNumbers(t, receipt).(map[string]any)["attestation"].(map[string]any)["signature"].(string)
		raw, _ := base64.StdEncoding.DecodeString(sig)
		for _, bit := range []int{0, 255, 511} {
			raw[bit/8] ^= 1 << (bit % 8)
			flipped := base64.StdEncoding.EncodeToString(raw)
			raw[bit/8] ^= 1 << (bit % 8)
			muts = append(muts, mutation{fmt.Sprintf("$.attestation.signature bit %d", bit),
				bytes.Replace(receipt, []byte(sig), []byte(flipped), 1)})
		}
		if len(muts) < 60 {
			t.Fatalf("%s: only %d mutations generated", name, len(muts))
		}
		for _, m := range muts {
			t.Run(name+"/"+m.name, func(t *testing.T) {
				if bytes.Equal(m.receipt, receipt) {
					t.Fatal("mutation did not change the receipt")
				}
				report, err := VerifyReceipt(m.receipt, s.Keys())
				if err == nil || report.Valid {
					t.Fatalf("VerifyReceipt(tampered) = valid (%+v), want an error", report)
				}
				if !errors.Is(err, ErrBadSignature) && !errors.Is(err, ErrMalformedReceipt) && !errors.Is(err, ErrUnknownKey) {
					t.Errorf("VerifyReceipt(tampered) error = %v, want one of the sentinels", err)
				}
			})
		}
	}
}

func TestVerifyReceiptUnknownKey(t *testing.T) {
	other, err := NewSigner("v9-2026-12a", testSeed("v9"))
	if err != nil {
		t.Fatal(err)
	}
	answer := []byte(`{"result":"pass","verified_at":"2026-12-01T00:00:00.000000+00:00"}`)
	receipt := sign(t, other, ContextVerify, answer, "2026-12-01T00:00:00.000000+00:00")
	report, err := VerifyReceipt(receipt, testSigner(t).Keys())
	if !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("VerifyReceipt error = %v, want ErrUnknownKey", err)
	}
	if !strings.Contains(err.Error(), `"v9-2026-12a"`) {
		t.Errorf("error %q does not name the key version", err)
	}
	if report.Valid || report.KeyVersion != "v9-2026-12a" {
		t.Errorf("report = %+v", report)
	}
	// Right version name, wrong key: a bad signature, not an unknown key.
	impostor := Keys{"v9-2026-12a": testSigner(t).public()}
	if _, err := VerifyReceipt(receipt, impostor); !errors.Is(err, ErrBadSignature) {
		t.Errorf("VerifyReceipt with the wrong key = %v, want ErrBadSignature", err)
	}
}

// otherService is a receipt scheme user other than this package: its
// receipts are written and signed here by hand, with no Signer and no
// SignedDocument, so a bug shared by signing and verifying cannot hide.
type otherService struct {
	pub  ed25519.PublicKey
	priv ed25519.PrivateKey
}

func newOtherService(t *testing.T) otherService {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(nil) // a throwaway key
	if err != nil {
		t.Fatal(err)
	}
	return otherService{pub, priv}
}

// receipt signs canonical (the JCS signed document, written by hand) and
// puts the signature into receiptTemplate's %s.
func (o otherService) receipt(canonical, receiptTemplate string) []byte {
	sig := ed25519.Sign(o.priv, []byte(canonical))
	return fmt.Appendf(nil, receiptTemplate, base64.StdEncoding.EncodeToString(sig))
}

const (
	// The other service's verify answer, members shuffled, 1.0, 0.966667,
	// 1E1, escapes and whitespace as another encoder might write them.
	otherVerifyReceipt = `{
  "verify": {"service": "other-verifier", "key_version": "svc-2027-01"},
  "overall": 0.983333,
  "schema_compliance": 1.0,
  "integrity_checks": 0.966667,
  "result": "pass",
  "checks_total": 1E1,
  "note": "caf\u00e9 <ok> \ud83d\ude00",
  "verified_at": "2027-01-05T10:00:00.123456+00:00",
  "attestation": {
    "signature": "%s",
    "timestamp": "2027-01-05T10:00:00.123456+00:00",
    "key_version": "svc-2027-01",
    "algorithm": "Ed25519"
  },
  "agent_id": "seller-9"
}`
	// Its JCS signed document: members sorted by UTF-16 code units, 1.0 as
	// 1, 1E1 as 10, escapes resolved.
	otherVerifyCanonical = `{"algorithm":"Ed25519","attested_at":"2027-01-05T10:00:00.123456+00:00",` +
		`"context":"json-schema-verifier/verify-schema-attestation/v1","key_version":"svc-2027-01",` +
		`"response":{"agent_id":"seller-9","checks_total":10,"integrity_checks":0.966667,` +
		`"note":"café <ok> 😀","overall":0.983333,"result":"pass","schema_compliance":1,` +
		`"verified_at":"2027-01-05T10:00:00.123456+00:00",` +
		`"verify":{"key_version":"svc-2027-01","service":"other-verifier"}}}`

	// A trust-score answer of the other service: no verified_at.
	otherScoreReceipt = `{"score": 87.5, "interval": [80.0, 93.25], "agent_id": "seller-9",
  "attestation": {"algorithm": "Ed25519", "key_version": "svc-2027-01",
    "timestamp": "2027-01-05T11:00:00.000000+00:00", "signature": "%s"},
  "inputs": {"passed": 120, "failed": 3, "weighted_pass_rate": 0.97}}`
	otherScoreCanonical = `{"algorithm":"Ed25519","attested_at":"2027-01-05T11:00:00.000000+00:00",` +
		`"context":"json-schema-verifier/trust-score-attestation/v1","key_version":"svc-2027-01",` +
		`"response":{"agent_id":"seller-9","inputs":{"failed":3,"passed":120,"weighted_pass_rate":0.97},` +
		`"interval":[80,93.25],"score":87.5}}`

	// The other service's agent card, as saved by a buyer.
	otherCard = `{"name": "Other Verifier", "url": "https://other.example/a2a", "version": "2.1.0",
  "capabilities": {"streaming": false, "extensions": [
    {"uri": "urn:example:unrelated", "params": {"publicKeys": "not ours"}},
    {"uri": "urn:json-schema-verifier:extension:attestation:v1", "required": false, "params": {"publicKeys": [
      {"keyVersion": "svc-2026-12", "algorithm": "Ed25519", "publicKey": "%s", "publicKeyEncoding": "base64 of the raw 32-byte Ed25519 public key"},
      {"keyVersion": "svc-2027-01", "algorithm": "Ed25519", "publicKey": "%s", "publicKeyEncoding": "base64 of the raw 32-byte Ed25519 public key"},
      {"keyVersion": "svc-pq", "algorithm": "ML-DSA-65", "publicKey": "AAAA", "publicKeyEncoding": "base64 of the raw 32-byte Ed25519 public key"}
    ]}}
  ]}}`
)

func TestVerifyReceiptFromAnotherService(t *testing.T) {
	svc := newOtherService(t)
	old := newOtherService(t)
	pubB64 := base64.StdEncoding.EncodeToString(svc.pub)
	card := fmt.Sprintf(otherCard, base64.StdEncoding.EncodeToString(old.pub), pubB64)

	// The hand-written canonical documents must be what SignedDocument
	// builds; if this fails, one of the two is wrong about RFC 8785.
	for _, c := range []struct{ receipt, canonical, ctx string }{
		{otherVerifyReceipt, otherVerifyCanonical, ContextVerify},
		{otherScoreReceipt, otherScoreCanonical, ContextTrustScore},
	} {
		receipt := fmt.Appendf(nil, c.receipt, "x")
		var top map[string]json.RawMessage
		if err := json.Unmarshal(receipt, &top); err != nil {
			t.Fatal(err)
		}
		var att Attestation
		if err := json.Unmarshal(top["attestation"], &att); err != nil {
			t.Fatal(err)
		}
		delete(top, "attestation")
		resp, _ := json.Marshal(top)
		doc, err := SignedDocument(c.ctx, att.KeyVersion, att.Timestamp, resp)
		if err != nil {
			t.Fatalf("SignedDocument: %v", err)
		}
		if string(doc) != c.canonical {
			t.Fatalf("SignedDocument disagrees with the hand-written JCS form:\ngot  %s\nwant %s", doc, c.canonical)
		}
	}

	byVersion, err := KeysFromBase64("svc-2027-01", pubB64)
	if err != nil {
		t.Fatalf("KeysFromBase64: %v", err)
	}
	anyVersion, err := KeysFromBase64("", pubB64)
	if err != nil {
		t.Fatalf("KeysFromBase64: %v", err)
	}
	fromCard, err := KeysFromAgentCard([]byte(card))
	if err != nil {
		t.Fatalf("KeysFromAgentCard: %v", err)
	}
	receipts := []struct {
		name    string
		receipt []byte
		ctx     string
	}{
		{"verify", svc.receipt(otherVerifyCanonical, otherVerifyReceipt), ContextVerify},
		{"score", svc.receipt(otherScoreCanonical, otherScoreReceipt), ContextTrustScore},
	}
	for _, r := range receipts {
		for keysName, keys := range map[string]KeyResolver{"key with version": byVersion, "key for any version": anyVersion, "agent card": fromCard} {
			t.Run(r.name+"/"+keysName, func(t *testing.T) {
				report, err := VerifyReceipt(r.receipt, keys)
				if err != nil {
					t.Fatalf("VerifyReceipt: %v", err)
				}
				if !report.Valid || report.Context != r.ctx || report.KeyVersion != "svc-2027-01" {
					t.Errorf("report = %+v, want valid under %s", report, r.ctx)
				}
			})
		}
		t.Run(r.name+"/old key from the card", func(t *testing.T) {
			wrong := Keys{"svc-2027-01": old.pub}
			if _, err := VerifyReceipt(r.receipt, wrong); !errors.Is(err, ErrBadSignature) {
				t.Errorf("VerifyReceipt with another key = %v, want ErrBadSignature", err)
			}
		})
	}
}
