package signing

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestVerifyReceiptMalformed(t *testing.T) {
	s := testSigner(t)
	const at = "2026-11-01T00:00:00.000000+00:00"
	good := sign(t, s, ContextVerify, []byte(`{"result":"pass","verified_at":"`+at+`"}`), at)
	sig := strings.Split(strings.Split(string(good), `"signature":"`)[1], `"`)[0]
	withAtt := func(att string) string {
		return `{"result":"pass","verified_at":"` + at + `","attestation":` + att + `}`
	}
	attOf := func(alg, kv, ts, sig string) string {
		return fmt.Sprintf(`{"algorithm":%q,"key_version":%q,"timestamp":%q,"signature":%q}`, alg, kv, ts, sig)
	}
	tests := []struct {
		name    string
		receipt string
		want    error
		check   string // the failing check
	}{
		{"empty", ``, ErrMalformedReceipt, CheckJSON},
		{"not json", `{"result":`, ErrMalformedReceipt, CheckJSON},
		{"array", `[` + string(good) + `]`, ErrMalformedReceipt, CheckJSON},
		{"string", `"receipt"`, ErrMalformedReceipt, CheckJSON},
		{"duplicate key", `{"result":"fail",` + string(good[1:]), ErrMalformedReceipt, CheckJSON},
		{"trailing data", string(good) + `{}`, ErrMalformedReceipt, CheckJSON},
		{"invalid utf-8", "{\"x\":\"\xff\"," + string(good[1:]), ErrMalformedReceipt, CheckJSON},
		{"too big", `{"pad":"` + strings.Repeat("a", MaxReceiptBytes) + `"}`, ErrMalformedReceipt, CheckJSON},
		{"integer past 2^53", `{"n":9007199254740993,` + string(good[1:]), ErrMalformedReceipt, CheckJSON},
		{"underflow", `{"n":1e-400,` + string(good[1:]), ErrMalformedReceipt, CheckJSON},
		{"digits past float64", `{"n":0.1000000000000000000001,` + string(good[1:]), ErrMalformedReceipt, CheckJSON},
		{"case-folded keys", `{"RESULT":"fail",` + string(good[1:]), ErrMalformedReceipt, CheckJSON},
		{"kelvin sign key", `{"o":{"k":1,"\u212a":2},` + string(good[1:]), ErrMalformedReceipt, CheckJSON},
		{"long s key", `{"o":[{"s":1,"ſ":2}],` + string(good[1:]), ErrMalformedReceipt, CheckJSON},
		{"no attestation", `{"result":"pass"}`, ErrMalformedReceipt, CheckAttestation},
		{"attestation not object", withAtt(`"signed"`), ErrMalformedReceipt, CheckAttestation},
		{"attestation null", withAtt(`null`), ErrMalformedReceipt, CheckAttestation},
		{"missing signature", withAtt(`{"algorithm":"Ed25519","key_version":"v1-2026-10a","timestamp":"` + at + `"}`), ErrMalformedReceipt, CheckAttestation},
		{"signature not string", withAtt(`{"algorithm":"Ed25519","key_version":"v1-2026-10a","timestamp":"` + at + `","signature":1}`), ErrMalformedReceipt, CheckAttestation},
		{"empty key version", withAtt(attOf("Ed25519", "", at, sig)), ErrMalformedReceipt, CheckAttestation},
		{"extra member", withAtt(`{"algorithm":"Ed25519","key_version":"v1-2026-10a","timestamp":"` + at + `","signature":"` + sig + `","public_key":"x"}`), ErrMalformedReceipt, CheckAttestation},
		{"capitalised member", withAtt(`{"Algorithm":"Ed25519","key_version":"v1-2026-10a","timestamp":"` + at + `","signature":"` + sig + `"}`), ErrMalformedReceipt, CheckAttestation},
		{"other algorithm", withAtt(attOf("ed25519", "v1-2026-10a", at, sig)), ErrMalformedReceipt, CheckAlgorithm},
		{"timestamp differs", withAtt(attOf("Ed25519", "v1-2026-10a", "2026-11-01T00:00:00.000001+00:00", sig)), ErrMalformedReceipt, CheckTimestamp},
		{"verified_at not string", `{"verified_at":1,"attestation":` + attOf("Ed25519", "v1-2026-10a", at, sig) + `}`, ErrMalformedReceipt, CheckTimestamp},
		{"verify key_version differs", `{"result":"pass","verified_at":"` + at + `","verify":{"key_version":"v2-2026-11a"},"attestation":` + attOf("Ed25519", "v1-2026-10a", at, sig) + `}`, ErrMalformedReceipt, CheckVerifyKeyVersion},
		{"verify not object", `{"result":"pass","verified_at":"` + at + `","verify":[],"attestation":` + attOf("Ed25519", "v1-2026-10a", at, sig) + `}`, ErrMalformedReceipt, CheckVerifyKeyVersion},
		{"signature not base64", withAtt(attOf("Ed25519", "v1-2026-10a", at, "!"+sig[1:])), ErrBadSignature, CheckSignature},
		{"signature url base64", withAtt(attOf("Ed25519", "v1-2026-10a", at, strings.NewReplacer("+", "-", "/", "_").Replace(sig)+"x")), ErrBadSignature, CheckSignature},
		{"signature short", withAtt(attOf("Ed25519", "v1-2026-10a", at, sig[:40])), ErrBadSignature, CheckSignature},
		{"signature of another answer", `{"result":"fail","verified_at":"` + at + `","attestation":` + attOf("Ed25519", "v1-2026-10a", at, sig) + `}`, ErrBadSignature, CheckSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			report, err := VerifyReceipt([]byte(tt.receipt), s.Keys())
			if !errors.Is(err, tt.want) {
				t.Fatalf("VerifyReceipt error = %v, want %v", err, tt.want)
			}
			if report == nil || report.Valid {
				t.Fatalf("report = %+v, want an invalid report", report)
			}
			var failed []string
			for _, c := range report.Checks {
				if !c.OK {
					failed = append(failed, c.Name)
					if c.Detail == "" {
						t.Errorf("failed check %s has no detail", c.Name)
					}
				}
			}
			if len(failed) == 0 || failed[0] != tt.check {
				t.Errorf("failed checks = %v, want %s first", failed, tt.check)
			}
		})
	}
	if _, err := VerifyReceipt(good, s.Keys()); err != nil {
		t.Fatalf("the unmodified receipt does not verify: %v", err)
	}
}

// TestVerifyReceiptReportsEveryFailure: independent checks all run, so one
// report shows everything wrong with a receipt.
func TestVerifyReceiptReportsEveryFailure(t *testing.T) {
	receipt := `{"verified_at":"a","verify":{"key_version":"v2"},"attestation":{"algorithm":"RSA","key_version":"v1","timestamp":"b","signature":"AAAA"}}`
	report, err := VerifyReceipt([]byte(receipt), Keys{})
	for _, want := range []error{ErrMalformedReceipt, ErrUnknownKey} {
		if !errors.Is(err, want) {
			t.Errorf("error %v does not wrap %v", err, want)
		}
	}
	const want = `verifying receipt: malformed receipt: algorithm is "RSA", want Ed25519; ` +
		`malformed receipt: attestation.timestamp "b" differs from verified_at "a"; ` +
		`malformed receipt: verify.key_version "v2" differs from attestation.key_version "v1"; ` +
		`unknown key version: no public key is known for key_version "v1"`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant one line of every failure: %s", err, want)
	}
	got := map[string]bool{}
	for _, c := range report.Checks {
		got[c.Name] = c.OK
	}
	for _, name := range []string{CheckAlgorithm, CheckTimestamp, CheckVerifyKeyVersion, CheckKey} {
		if ok, ran := got[name]; !ran || ok {
			t.Errorf("check %s: ran %v ok %v, want a failure", name, ran, ok)
		}
	}
	if _, err := VerifyReceipt([]byte(receipt), nil); err == nil {
		t.Error("VerifyReceipt with nil keys gave no error")
	}
}

// TestVerifyReceiptExactNumbers: numbers exactly representable pass, in every
// spelling.
func TestVerifyReceiptExactNumbers(t *testing.T) {
	s := testSigner(t)
	const at = "2026-11-01T00:00:00.000000+00:00"
	for _, n := range []string{"1.0", "0.966667", "1E0", "-0", "-0.0", "100e-2", "9007199254740992", "9007199254740994",
		"1.7976931348623157e308", "5e-324", "0.000001", "123456789012345680000", "1e+21"} {
		t.Run(n, func(t *testing.T) {
			answer := []byte(`{"n":` + n + `,"verified_at":"` + at + `"}`)
			if _, err := VerifyReceipt(sign(t, s, ContextVerify, answer, at), s.Keys()); err != nil {
				t.Errorf("VerifyReceipt with %s: %v", n, err)
			}
		})
	}
}

func TestExactNumber(t *testing.T) {
	tests := []struct {
		lit  string
		want bool
	}{
		{"0", true}, {"-0", true}, {"0.0e5", true}, {"1.0", true}, {"1.50", true}, {"0.966667", true},
		{"1e2", true}, {"100", true}, {"2.5E-3", true}, {"9007199254740993", false},
		{"9007199254740992", true}, {"1e-400", false}, {"0.1000000000000000000001", false},
		{"1e400", false}, {"0.30000000000000004", true}, {"0.3000000000000000444", false},
		{"1." + strings.Repeat("0", 900), true}, {"1" + strings.Repeat("0", 9) + "e-9", true},
		{"0." + strings.Repeat("0", 900) + "5e901", true}, {"0." + strings.Repeat("3", 900), false},
		{"-5e-324", true}, {"1e-1000001", false}, {"0e1000001", false},
	}
	for _, tt := range tests {
		if got := exactNumber(tt.lit); got != tt.want {
			t.Errorf("exactNumber(%s) = %v, want %v", tt.lit, got, tt.want)
		}
	}
}

// TestVerifyReceiptEmbeddedKey: a receipt that carries a public key in
// verify.public_key is checked against it as well. Carrying the signer's
// own key verifies (and EmbeddedKey returns it for any version); another
// key is ErrKeyMismatch, naming both fingerprints; a malformed one is
// ErrMalformedReceipt. Either way the key check is the one that fails.
func TestVerifyReceiptEmbeddedKey(t *testing.T) {
	s := testSigner(t)
	other, err := NewSigner("v9-2026-12a", testSeed("v9"))
	if err != nil {
		t.Fatal(err)
	}
	const at = "2026-11-01T00:00:00.000000+00:00"
	receiptWith := func(key string) []byte {
		return sign(t, s, ContextVerify, []byte(`{"verified_at":"`+at+`","verify":{"public_key":`+key+`}}`), at)
	}
	own, err := VerifyReceipt(receiptWith(`"`+s.PublicKey().PublicKey+`"`), s.Keys())
	if err != nil || !own.Valid {
		t.Fatalf("VerifyReceipt with the signer's own key embedded: %v", err)
	}
	keys, err := EmbeddedKey(receiptWith(`"` + s.PublicKey().PublicKey + `"`))
	if pub, ok := keys.Lookup("any"); err != nil || !ok || !pub.Equal(s.public()) {
		t.Errorf("EmbeddedKey = %v, %v; want the signer's key for any version", keys, err)
	}
	tests := []struct {
		name, key string
		want      error
		detail    []string
	}{
		{"another key", `"` + other.PublicKey().PublicKey + `"`, ErrKeyMismatch, []string{Fingerprint(other.public()), Fingerprint(s.public())}},
		{"not base64 of a key", `"AAAA"`, ErrMalformedReceipt, []string{"verify.public_key"}},
		{"not a string", `1`, ErrMalformedReceipt, []string{"verify.public_key is not a string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			report, err := VerifyReceipt(receiptWith(tt.key), s.Keys())
			if !errors.Is(err, tt.want) || report.Valid {
				t.Fatalf("VerifyReceipt error = %v, want %v", err, tt.want)
			}
			for _, c := range report.Checks {
				if c.OK == (c.Name == CheckKey) {
					t.Errorf("check %s ok = %v, want only %s to fail", c.Name, c.OK, CheckKey)
				}
			}
			for _, want := range tt.detail {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}
