package signing

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// repoTestdata is the repository's top-level testdata/ folder: the vendored
// RFC 8785 vectors (jcs/) and request-hash vectors (request-hash/).
var repoTestdata = filepath.Join("..", "testdata")

// testSeed is the fixed seed of the test signer, so signatures are stable.
func testSeed(label string) []byte {
	sum := sha256.Sum256([]byte("signing test seed: " + label))
	return sum[:]
}

// testSigner returns the fixed signer whose version the answers in
// testdata/answers name in verify.key_version.
func testSigner(t testing.TB) *Signer {
	t.Helper()
	s, err := NewSigner("v1-2026-10a", testSeed("v1"))
	if err != nil {
		t.Fatalf("NewSigner: %v", err)
	}
	return s
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading test data: %v", err)
	}
	return b
}

// sign makes a receipt of answer (JSON object, no attestation) with s under
// context, timestamp taken from attestedAt.
func sign(t testing.TB, s *Signer, context string, answer []byte, attestedAt string) []byte {
	t.Helper()
	receipt, err := s.Sign(context, answer, attestedAt)
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	return receipt
}

// golden compares got with testdata/golden/name, rewriting it with -update.
// A missing golden fails.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden:\ngot:  %s\nwant: %s", name, got, want)
	}
}
