package main

import (
	"crypto/x509"
	"os"
	"os/exec"
	"testing"
)

// TestFallbackRoots checks that the binary carries CA roots of its own for a
// system that has none, as the FROM scratch release image: a process whose
// SSL_CERT_FILE and SSL_CERT_DIR name nothing still has a system pool with
// roots in it, to reach the x402 facilitator over HTTPS.
func TestFallbackRoots(t *testing.T) {
	if os.Getenv("VERIFIER_TEST_NO_SYSTEM_ROOTS") == "1" {
		pool, err := x509.SystemCertPool()
		if err != nil {
			t.Fatalf("SystemCertPool: %v", err)
		}
		if pool.Equal(x509.NewCertPool()) {
			t.Fatal("no CA roots without the system's: the fallback roots are not linked in")
		}
		return
	}
	missing := t.TempDir() + "/none"
	cmd := exec.Command(os.Args[0], "-test.run=^TestFallbackRoots$", "-test.count=1")
	cmd.Env = append(os.Environ(), "VERIFIER_TEST_NO_SYSTEM_ROOTS=1", "SSL_CERT_FILE="+missing, "SSL_CERT_DIR="+missing)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the process without system roots: %v\n%s", err, out)
	}
}
