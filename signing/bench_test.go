package signing

import (
	"crypto/ed25519"
	"path/filepath"
	"testing"
)

// benchAnswer is the compact passing answer, about 1 KB.
func benchAnswer(b *testing.B) []byte {
	answer := readFile(b, filepath.Join("testdata", "answers", "compact-pass.json"))
	if n := len(answer); n < 800 || n > 1300 {
		b.Fatalf("bench answer is %d bytes, want about 1 KB", n)
	}
	return answer
}

// BenchmarkSign is the floor: one bare Ed25519 signature over the answer.
func BenchmarkSign(b *testing.B) {
	answer := benchAnswer(b)
	priv := ed25519.NewKeyFromSeed(testSeed("v1"))
	b.SetBytes(int64(len(answer)))
	for b.Loop() {
		ed25519.Sign(priv, answer)
	}
}

// BenchmarkAttest is what signing an answer costs: SignedDocument (checking
// and canonicalizing) plus the signature.
func BenchmarkAttest(b *testing.B) {
	answer := benchAnswer(b)
	s := testSigner(b)
	b.SetBytes(int64(len(answer)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Attest(ContextVerify, answer, "2026-11-02T23:59:59.000001+00:00"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyReceipt checks a receipt of the same answer.
func BenchmarkVerifyReceipt(b *testing.B) {
	answer := benchAnswer(b)
	s := testSigner(b)
	receipt := sign(b, s, ContextVerify, answer, "2026-11-02T23:59:59.000001+00:00")
	keys := s.Keys()
	b.SetBytes(int64(len(receipt)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := VerifyReceipt(receipt, keys); err != nil {
			b.Fatal(err)
		}
	}
}
