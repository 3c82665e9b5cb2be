// Package x402test is what the x402 end-to-end tests (built with -tags
// x402e2e) share: the environment .ci/x402-e2e.sh provides (the @x402/fetch
// client script, the loopback facilitator and its log), and the
// facilitator of e2e/x402 started in its cdp mode with the CDP API keys it
// accepts, for the tests of CDP authentication. It is used by tests only.
package x402test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// CDPKey is a CDP API key made for a test: its id, its secret as the CDP
// portal hands it out (a PEM EC P-256 key for ES256, the base64 of a
// 64-byte Ed25519 key for EdDSA), and the key file of the facilitator's cdp
// mode, which holds the public half.
type CDPKey struct {
	ID, Alg, Secret string
	PublicFile      []byte // {"keyId", "alg", "publicKey": SPKI PEM}
}

// NewCDPKey makes a fresh key: alg is "ES256" or "EdDSA".
func NewCDPKey(t testing.TB, alg, id string) CDPKey {
	t.Helper()
	var secret string
	var pub any
	switch alg {
	case "ES256":
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		secret, pub = string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})), &k.PublicKey
	case "EdDSA":
		p, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		secret, pub = base64.StdEncoding.EncodeToString(k), p
	default:
		t.Fatalf("no CDP key algorithm %q", alg)
	}
	spki, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	file, err := json.Marshal(map[string]string{"keyId": id, "alg": alg,
		"publicKey": string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: spki}))})
	if err != nil {
		t.Fatal(err)
	}
	return CDPKey{ID: id, Alg: alg, Secret: secret, PublicFile: file}
}

// listening is the facilitator's first line on stdout.
var listening = regexp.MustCompile(`facilitator \(cdp\) on (127\.0\.0\.1:\d+)`)

// StartCDPFacilitator runs tools/facilitator.mjs (tools holds e2e/x402
// with its node_modules) in its cdp mode, accepting key only, until the
// test ends, and returns its base URL.
func StartCDPFacilitator(t testing.TB, tools string, key CDPKey) string {
	t.Helper()
	dir := t.TempDir()
	keyFile, outFile := filepath.Join(dir, "cdp-key.json"), filepath.Join(dir, "facilitator.out")
	if err := os.WriteFile(keyFile, key.PublicFile, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(outFile)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close() // the facilitator writes to its own copy
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "node", "facilitator.mjs", "0")
	cmd.Dir = tools
	cmd.Env = append(os.Environ(), "X402_FACILITATOR_MODE=cdp", "X402_FACILITATOR_CDP_KEY="+keyFile)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		printed, _ := os.ReadFile(outFile)
		m := listening.FindSubmatch(printed)
		if m == nil {
			continue
		}
		base := "http://" + string(m[1])
		resp, err := http.Get(base + "/supported")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("the cdp-mode facilitator answered GET /supported without a token: HTTP %d", resp.StatusCode)
		}
		return base
	}
	printed, _ := os.ReadFile(outFile)
	t.Fatalf("the cdp-mode facilitator did not start:\n%s", printed)
	return ""
}
