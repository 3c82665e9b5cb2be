//go:build x402e2e

// The end-to-end test of CDP authentication: the loopback facilitator in its
// cdp mode (X402_FACILITATOR_MODE=cdp, e2e/x402/cdp-auth.mjs) answers only
// calls carrying a bearer JWT that jose, on the Node side, verifies with the
// public half of the operator's key; the real x402 client pays through the
// Gate.

package payment

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
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// e2eCDPKey is a CDP API key made for the test: the secret as CDP hands it
// out, and the key file of the facilitator's CDP mode (the public half).
type e2eCDPKey struct {
	secret  string
	pubFile []byte
}

func newE2ECDPKey(t *testing.T, alg, keyID string) e2eCDPKey {
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
	}
	spki, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	file, err := json.Marshal(map[string]string{"keyId": keyID, "alg": alg,
		"publicKey": string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: spki}))})
	if err != nil {
		t.Fatal(err)
	}
	return e2eCDPKey{secret: secret, pubFile: file}
}

// startCDPFacilitator runs facilitator.mjs in its cdp mode, accepting key
// only, and returns its base URL.
func (env e2eEnv) startCDPFacilitator(t *testing.T, key e2eCDPKey) string {
	t.Helper()
	keyFile := filepath.Join(t.TempDir(), "cdp-key.json")
	if err := os.WriteFile(keyFile, key.pubFile, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "node", "facilitator.mjs", "0")
	cmd.Dir = env.tools
	cmd.Env = append(os.Environ(), "X402_FACILITATOR_MODE=cdp", "X402_FACILITATOR_CDP_KEY="+keyFile)
	var out lockedLog
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	listening := regexp.MustCompile(`facilitator \(cdp\) on (127\.0\.0\.1:\d+)`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		m := listening.FindStringSubmatch(out.String())
		if m == nil {
			continue
		}
		base := "http://" + m[1]
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
	t.Fatalf("the cdp-mode facilitator did not start:\n%s", out.String())
	return ""
}

// lockedLog collects a child process's output.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// otherPath signs each request with a token for another path of the same
// facilitator (verify's for settle and the rest, settle's for verify).
type otherPath struct{ a *CDPAuth }

func (o otherPath) Authorize(req *http.Request) error {
	path := strings.TrimSuffix(req.URL.Path, "/verify") + "/settle"
	if !strings.HasSuffix(req.URL.Path, "/verify") {
		path = req.URL.Path[:strings.LastIndex(req.URL.Path, "/")] + "/verify"
	}
	token, err := o.a.Token(req.Method, req.URL.Host, path)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return nil
}

// cdpLog is the cdp-mode facilitator's log: its refusals too.
type cdpLog []struct {
	Op      string `json:"op"`
	Auth    string `json:"auth"`
	Reason  string `json:"reason"`
	Success *bool  `json:"success"`
}

func cdpLogOf(t *testing.T, base string, key *CDPAuth) cdpLog {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/log", nil)
	if err := key.Authorize(req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l cdpLog
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&l) != nil {
		t.Fatalf("GET /log = HTTP %d", resp.StatusCode)
	}
	return l
}

// TestE2ECDPAuth: against the CDP-mode facilitator, with an EC P-256 key
// and with an Ed25519 key, the check at start passes and a paid request
// goes through; a wrong key, an expired token and a token for another path
// are refused by the facilitator (jose says why), the check at start fails
// on them, and a paying client gets 503 facilitator_unavailable with
// nothing charged, /health's state saying the credentials are refused.
func TestE2ECDPAuth(t *testing.T) {
	env := loadE2EEnv(t)
	const keyID = "3c1a9e0b-7d5f-4a2e-9b8c-6d4f2e1a0b9c"
	const body = `{"output":{"total":3}}`
	for _, alg := range []string{"ES256", "EdDSA"} {
		t.Run(alg, func(t *testing.T) {
			key, wrong := newE2ECDPKey(t, alg, keyID), newE2ECDPKey(t, alg, keyID)
			fac := env.startCDPFacilitator(t, key)
			st := tempStore(t, nil)
			auth := func(secret string, now func() time.Time) *CDPAuth {
				a, err := NewCDPAuth(keyID, secret, now)
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			good := auth(key.secret, nil)
			serve := func(a Authorizer) (*Gate, string) {
				g, err := NewGate(Config{FreePerDay: -1, PayToEVM: testPayTo, FacilitatorURL: fac, Network: Testnet, FacilitatorAuth: a}, st, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				ts := httptest.NewServer(&e2eServer{pay: g, offer: g})
				t.Cleanup(ts.Close)
				return g, ts.URL
			}

			g, url := serve(good)
			if err := g.CheckFacilitator(context.Background()); err != nil {
				t.Fatalf("check at start: %v", err)
			}
			res := env.pay(t, "POST", url+"/verify/schema", body)
			if res.Status != 200 || res.PaymentResponse == nil || !res.PaymentResponse.Success || res.PaymentResponse.Network != "eip155:84532" {
				t.Fatalf("paid call = %+v, want 200 with a successful settlement", res)
			}
			if s, _ := g.FacilitatorState(); s.State != FacilitatorOK {
				t.Errorf("state after the paid call = %+v", s)
			}
			settled := 0
			for _, e := range cdpLogOf(t, fac, good) {
				if e.Op == "settle" && e.Success != nil && *e.Success {
					settled++
				}
			}
			if settled != 1 {
				t.Fatalf("%d settlements, want 1", settled)
			}

			for _, bad := range []struct {
				name   string
				auth   Authorizer
				reason string // what jose (or the uris check) said
			}{
				{"wrong key", auth(wrong.secret, nil), "ERR_JWS_SIGNATURE_VERIFICATION_FAILED"},
				{"expired token", auth(key.secret, func() time.Time { return time.Now().Add(-10 * time.Minute) }), "ERR_JWT_EXPIRED"},
				{"token for another path", otherPath{good}, "uris"},
			} {
				t.Run(bad.name, func(t *testing.T) {
					g, url := serve(bad.auth)
					if err := g.CheckFacilitator(context.Background()); err == nil || !strings.Contains(err.Error(), "refused the credentials (HTTP 401 on GET /supported)") {
						t.Errorf("check at start = %v, want the credentials refused", err)
					}
					before := len(cdpLogOf(t, fac, good))
					res := env.pay(t, "POST", url+"/verify/schema", body)
					var e Error
					_ = json.Unmarshal(res.Body, &e)
					if res.Status != 503 || e.Code != CodeFacilitatorUnavailable || res.PaymentResponse != nil {
						t.Errorf("paid call = %+v, want 503 facilitator_unavailable, nothing settled", res)
					}
					if s, _ := g.FacilitatorState(); s.State != FacilitatorFailing || s.Cause != "refused the credentials (HTTP 401 on POST /verify)" {
						t.Errorf("state = %+v, want the credentials refused on POST /verify", s)
					}
					log := cdpLogOf(t, fac, good)[before:]
					if len(log) != 1 || log[0].Auth != "refused" || !strings.Contains(log[0].Reason, bad.reason) || !strings.HasSuffix(log[0].Op, "/verify") {
						t.Errorf("facilitator log = %+v, want one refused /verify (%s)", log, bad.reason)
					}
				})
			}
		})
	}
}
