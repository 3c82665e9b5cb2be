package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/payment"
)

const testCDPKeyID = "0f6c1e2d-3b4a-4c5d-8e9f-a0b1c2d3e4f5"

// cdpTestKey is a CDP API key made for a test: its secret as CDP hands it
// out and its public half.
type cdpTestKey struct {
	secret string
	alg    string
	pub    any      // *ecdsa.PublicKey or ed25519.PublicKey
	leaks  []string // strings that only the secret holds (the secret, its PEM body, the private scalar)
}

func newEd25519CDPKey(t *testing.T) cdpTestKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s := base64.StdEncoding.EncodeToString(priv)
	return cdpTestKey{secret: s, alg: "EdDSA", pub: pub, leaks: []string{s, s[:40], base64.RawURLEncoding.EncodeToString(priv.Seed())}}
}

func newECCDPKey(t *testing.T) cdpTestKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	s := string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
	raw, err := k.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	d := new(big.Int).SetBytes(raw) // the private scalar, as printed digits would show it
	body := strings.Split(s, "\n")[1]
	return cdpTestKey{secret: s, alg: "ES256", pub: &k.PublicKey, leaks: []string{s, body, d.String(), d.Text(16)}}
}

// cdpFacilitator is a loopback facilitator under /x402 that, like CDP's,
// answers only requests carrying a bearer JWT of its accepted key, checked
// here by hand: the signature, iss, sub, kid, a nonce, a lifetime of at most
// 120 s around now, and uris naming the request's own method, host and path.
type cdpFacilitator struct {
	srv       *httptest.Server
	supported string

	mu      sync.Mutex
	key     cdpTestKey
	settled int
}

func newCDPFacilitator(t *testing.T, key cdpTestKey, supported string) *cdpFacilitator {
	t.Helper()
	f := &cdpFacilitator{key: key, supported: supported}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *cdpFacilitator) url() string { return f.srv.URL + "/x402" }

// settlements counts the settlements made.
func (f *cdpFacilitator) settlements() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.settled
}

// accept makes the facilitator accept another key only (the old one revoked).
func (f *cdpFacilitator) accept(key cdpTestKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.key = key
}

func (f *cdpFacilitator) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if err := checkCDPToken(r, f.key); err != nil {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"errorType":"unauthorized","errorMessage":%q}`, err.Error())
		return
	}
	switch r.Method + " " + r.URL.Path {
	case "GET /x402/supported":
		fmt.Fprint(w, f.supported)
	case "POST /x402/verify":
		fmt.Fprint(w, `{"isValid":true,"payer":"0x1111111111111111111111111111111111111111"}`)
	case "POST /x402/settle":
		f.settled++
		fmt.Fprintf(w, `{"success":true,"transaction":"0x%064x","network":"eip155:84532","payer":"0x1111111111111111111111111111111111111111"}`, f.settled)
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":"not found"}`)
	}
}

// checkCDPToken checks r's bearer token against key.
func checkCDPToken(r *http.Request, key cdpTestKey) error {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	parts := strings.Split(token, ".")
	if !ok || len(parts) != 3 {
		return errors.New("no bearer JWT")
	}
	var header, claims map[string]any
	for i, dst := range []*map[string]any{&header, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil || json.Unmarshal(raw, dst) != nil {
			return errors.New("malformed JWT")
		}
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return errors.New("malformed signature")
	}
	input := []byte(parts[0] + "." + parts[1])
	switch pub := key.pub.(type) {
	case *ecdsa.PublicKey:
		digest := sha256.Sum256(input)
		if header["alg"] != "ES256" || len(sig) != 64 ||
			!ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			return errors.New("bad signature")
		}
	case ed25519.PublicKey:
		if header["alg"] != "EdDSA" || !ed25519.Verify(pub, input, sig) {
			return errors.New("bad signature")
		}
	}
	nbf, _ := claims["nbf"].(float64)
	exp, _ := claims["exp"].(float64)
	now := float64(time.Now().Unix())
	uris, _ := claims["uris"].([]any)
	switch {
	case header["kid"] != testCDPKeyID || claims["sub"] != testCDPKeyID || claims["iss"] != "cdp" || header["typ"] != "JWT":
		return errors.New("wrong kid, sub, iss or typ")
	case header["nonce"] == nil || header["nonce"] == "":
		return errors.New("no nonce")
	case exp-nbf > 120 || now < nbf-5 || now > exp:
		return errors.New("expired or not yet valid")
	case len(uris) != 1 || uris[0] != r.Method+" "+r.Host+r.URL.Path:
		return errors.New("token for another request")
	}
	return nil
}

// paidPost sends body to path with a payment for the first requirement of
// the 402 the unpaid request gets. The payment is well formed; the test
// facilitator, not a chain, says whether it is good.
func paidPost(t *testing.T, s *httpServer, path string, body []byte) (*http.Response, []byte) {
	t.Helper()
	resp, answer := s.post(t, path, body)
	if resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("unpaid call = %d %s, want 402", resp.StatusCode, answer)
	}
	raw, err := base64.StdEncoding.DecodeString(resp.Header.Get(payment.HeaderPaymentRequired))
	if err != nil {
		t.Fatal(err)
	}
	var pr struct {
		Accepts []json.RawMessage `json:"accepts"`
	}
	var req payment.PaymentRequirements
	if err := json.Unmarshal(raw, &pr); err != nil || len(pr.Accepts) == 0 || json.Unmarshal(pr.Accepts[0], &req) != nil {
		t.Fatalf("PAYMENT-REQUIRED %s: %v", raw, err)
	}
	random := func(n int) string {
		b := make([]byte, n)
		_, _ = rand.Read(b)
		return "0x" + hex.EncodeToString(b)
	}
	p, err := json.Marshal(map[string]any{"x402Version": 2, "accepted": pr.Accepts[0], "payload": map[string]any{
		"signature": random(65),
		"authorization": map[string]string{"from": random(20), "to": req.PayTo, "value": req.Amount, "validAfter": "0",
			"validBefore": fmt.Sprint(time.Now().Add(time.Minute).Unix()), "nonce": random(32)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	hreq, _ := http.NewRequest(http.MethodPost, s.base+path, strings.NewReader(string(body)))
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set(payment.HeaderPaymentSignature, base64.StdEncoding.EncodeToString(p))
	presp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	defer presp.Body.Close()
	out, err := io.ReadAll(presp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return presp, out
}

// facilitatorMember is /health's facilitator member.
type facilitatorMember struct {
	State     string `json:"state"`
	CheckedAt string `json:"checked_at"`
	Cause     string `json:"cause"`
}

func healthFacilitator(t *testing.T, s *httpServer) (facilitatorMember, []byte) {
	t.Helper()
	resp, body := s.get(t, "/health")
	var h struct {
		Status      string             `json:"status"`
		Facilitator *facilitatorMember `json:"facilitator"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &h) != nil || h.Status != "ok" || h.Facilitator == nil {
		t.Fatalf("GET /health = %d %s, want 200 with a facilitator member", resp.StatusCode, body)
	}
	return *h.Facilitator, body
}

const testnetKinds = `{"kinds":[{"x402Version":2,"scheme":"exact","network":"eip155:84532"}],"extensions":[],"signers":{}}`

// TestServeHTTPCDPKey: with a CDP API key (from the variables, or CDP's key
// file) a real server checks the facilitator at start, takes a paid call
// through it, reports the facilitator's state on /health, and when the key
// is revoked answers paid calls 503 facilitator_unavailable (nothing
// charged) and /health says the credentials are refused. The secret is in
// none of the logs, answers or /health.
func TestServeHTTPCDPKey(t *testing.T) {
	invoice := mustRead(t, filepath.Join("testdata", "invoice-pass.json"))
	tests := []struct {
		name string
		key  cdpTestKey
		args func(t *testing.T, key cdpTestKey) ([]string, map[string]string)
	}{
		{"Ed25519 key from the variables", newEd25519CDPKey(t), func(_ *testing.T, k cdpTestKey) ([]string, map[string]string) {
			return nil, map[string]string{"CDP_API_KEY_ID": testCDPKeyID, "CDP_API_KEY_SECRET": k.secret}
		}},
		{"EC key from the key file", newECCDPKey(t), func(t *testing.T, k cdpTestKey) ([]string, map[string]string) {
			file := filepath.Join(t.TempDir(), "cdp_api_key.json")
			data, _ := json.Marshal(map[string]string{"id": testCDPKeyID, "privateKey": k.secret})
			if err := os.WriteFile(file, data, 0o600); err != nil {
				t.Fatal(err)
			}
			return []string{"--cdp-api-key-file", file}, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fac := newCDPFacilitator(t, tt.key, testnetKinds)
			args, env := tt.args(t, tt.key)
			args = append(args, "--network", "testnet", "--pay-to-evm", e2ePayToAddress, "--facilitator", fac.url(), "--free-per-day", "0")
			srv := startHTTPEnv(t, env, args...)
			var seen strings.Builder // every answer, for the secret grep
			if !strings.Contains(srv.stderr.String(), "facilitator checked") || !strings.Contains(srv.stderr.String(), "CDP API key "+testCDPKeyID+" ("+tt.key.alg+")") {
				t.Errorf("the log does not show the checked facilitator and its key:\n%s", srv.stderr)
			}
			if st, body := healthFacilitator(t, srv); st.State != "ok" || st.CheckedAt == "" || st.Cause != "" {
				t.Errorf("/health after the start = %s, want the facilitator ok", body)
			}

			resp, answer := paidPost(t, srv, "/verify/schema", invoice)
			seen.Write(answer)
			if resp.StatusCode != http.StatusOK || resp.Header.Get(payment.HeaderPaymentResponse) == "" || fac.settlements() != 1 {
				t.Fatalf("paid call = %d %s (settled %d), want 200 with PAYMENT-RESPONSE", resp.StatusCode, answer, fac.settlements())
			}

			fac.accept(newEd25519CDPKey(t)) // the operator's key is revoked
			resp, answer = paidPost(t, srv, "/verify/schema", invoice)
			seen.Write(answer)
			if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(answer), `"facilitator_unavailable"`) || fac.settlements() != 1 {
				t.Errorf("paid call with a revoked key = %d %s, want 503 facilitator_unavailable, nothing settled", resp.StatusCode, answer)
			}
			st, body := healthFacilitator(t, srv)
			seen.Write(body)
			if st.State != "failing" || st.Cause != "refused the credentials (HTTP 401 on POST /verify)" {
				t.Errorf("/health with a revoked key = %s", body)
			}
			if err := srv.stop(t); err != nil {
				t.Fatal(err)
			}
			all := srv.stderr.String() + seen.String()
			for _, leak := range append(tt.key.leaks, "Bearer ") {
				if strings.Contains(all, leak) {
					t.Errorf("a secret (%.12q…) is in the logs, answers or /health:\n%s", leak, all)
				}
			}
		})
	}
}

// e2ePayToAddress receives the test payments.
const e2ePayToAddress = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"

// TestServeHTTPFacilitatorRefusals: with payments on, the server does not
// start when the facilitator cannot be reached, refuses the credentials or
// does not take the network, nor with credentials it cannot use; the
// message says what to fix and holds no secret.
func TestServeHTTPFacilitatorRefusals(t *testing.T) {
	key, wrong := newEd25519CDPKey(t), newECCDPKey(t)
	good := newCDPFacilitator(t, key, testnetKinds)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	var elsewhere atomic.Int32 // requests that reached the redirect's target
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		elsewhere.Add(1)
		fmt.Fprint(w, testnetKinds)
	}))
	defer target.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	envKey := map[string]string{"CDP_API_KEY_ID": testCDPKeyID, "CDP_API_KEY_SECRET": key.secret}
	envWrong := map[string]string{"CDP_API_KEY_ID": testCDPKeyID, "CDP_API_KEY_SECRET": wrong.secret}
	pay := func(fac string, more ...string) []string {
		return append([]string{"--network", "testnet", "--pay-to-evm", e2ePayToAddress, "--facilitator", fac, "--facilitator-timeout", "3s"}, more...)
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"unreachable", envKey, pay(down.URL), "cannot be reached"},
		{"credentials refused", envWrong, pay(good.url()), "refused the credentials (HTTP 401 on GET /supported): check CDP_API_KEY_ID"},
		{"no credentials", nil, pay(good.url()), "refused the credentials (HTTP 401"},
		{"redirected", envKey, pay(redirect.URL, "--facilitator-header", "X-Key: k"), "answered GET /supported with HTTP 307"},
		{"network not supported", envKey, append(pay(good.url()), "--network", "mainnet"), `does not support x402 v2 "exact" payments on eip155:8453`},
		{"secret without id", map[string]string{"CDP_API_KEY_SECRET": key.secret}, pay(good.url()), "CDP_API_KEY_SECRET is set but not the key's id"},
		{"id without secret", nil, pay(good.url(), "--cdp-api-key-id", testCDPKeyID), "not its secret"},
		{"not a key", map[string]string{"CDP_API_KEY_ID": "k", "CDP_API_KEY_SECRET": key.secret[:40]}, pay(good.url()), "invalid CDP API key"},
		{"key file and id flag", envKey, pay(good.url(), "--cdp-api-key-file", "/nonexistent", "--cdp-api-key-id", "k"), "use one"},
		{"missing key file", nil, pay(good.url(), "--cdp-api-key-file", filepath.Join(t.TempDir(), "none.json")), "--cdp-api-key-file"},
		{"two Authorization headers", envKey, pay(good.url(), "--facilitator-header", "Authorization: Bearer x"), "both set the Authorization header"},
		{"header with an unset variable", nil, pay(good.url(), "--facilitator-header", "X-Key: ${FAC_KEY}"), "FAC_KEY is unset or empty"},
		{"header with CR LF", map[string]string{"FAC_KEY": "a\r\nHost: evil"}, pay(good.url(), "--facilitator-header", "X-Key: $FAC_KEY"), "CR, LF"},
		{"key flag with payments off", nil, []string{"--cdp-api-key-id", testCDPKeyID}, "payment would stay off"},
		{"header with payments off", nil, []string{"--facilitator-header", "X-Key: v"}, "payment would stay off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stderr := &lockedBuffer{}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			all := append([]string{"--http", "127.0.0.1:0", "--data-dir", t.TempDir()}, tt.args...)
			err := run(ctx, all, strings.NewReader(""), io.Discard, stderr, envWith(tt.env))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("run = %v, want an error about %q\n%s", err, tt.want, stderr)
			}
			if strings.Contains(stderr.String(), "serving HTTP") {
				t.Errorf("the server started:\n%s", stderr)
			}
			if elsewhere.Load() != 0 {
				t.Errorf("a redirect took the credentials to another address")
			}
			out := err.Error() + stderr.String()
			for _, leak := range append(append(key.leaks, wrong.leaks...), "Bearer ", "evil") {
				if strings.Contains(out, leak) {
					t.Errorf("a secret (%.12q…) is in the error or the log:\n%s", leak, out)
				}
			}
		})
	}
}

// TestServeHTTPFacilitatorHeader: --facilitator-header sends an API key
// (here from the environment) to a facilitator keyed that way, from the
// check at start on; --facilitator-check=false starts without the check.
func TestServeHTTPFacilitatorHeader(t *testing.T) {
	var mu sync.Mutex
	var got []string
	fac := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("X-Api-Key"))
		mu.Unlock()
		if r.Header.Get("X-Api-Key") != "fk-123" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		fmt.Fprint(w, testnetKinds)
	}))
	defer fac.Close()
	args := []string{"--network", "testnet", "--pay-to-evm", e2ePayToAddress, "--facilitator", fac.URL, "--facilitator-header", "X-Api-Key: ${FAC_KEY}"}
	srv := startHTTPEnv(t, map[string]string{"FAC_KEY": "fk-123"}, args...)
	if st, body := healthFacilitator(t, srv); st.State != "ok" {
		t.Errorf("/health = %s", body)
	}
	if strings.Contains(srv.stderr.String(), "fk-123") || !strings.Contains(srv.stderr.String(), "headers X-Api-Key") {
		t.Errorf("the log should name the header, not its value:\n%s", srv.stderr)
	}
	mu.Lock()
	if len(got) != 1 || got[0] != "fk-123" {
		t.Errorf("the facilitator saw X-Api-Key %q, want one check carrying it", got)
	}
	mu.Unlock()

	unchecked := startHTTPEnv(t, nil, "--network", "testnet", "--pay-to-evm", e2ePayToAddress, "--facilitator", "http://127.0.0.1:9", "--facilitator-check=false")
	if !strings.Contains(unchecked.stderr.String(), "not checked at start") {
		t.Errorf("no warning that the facilitator was not checked:\n%s", unchecked.stderr)
	}
	if st, body := healthFacilitator(t, unchecked); st.State != "unknown" || st.CheckedAt != "" {
		t.Errorf("/health before any call = %s, want unknown", body)
	}
}
