//go:build x402e2e

// The end-to-end test of CDP authentication: the loopback facilitator in its
// cdp mode (X402_FACILITATOR_MODE=cdp, e2e/x402/cdp-auth.mjs) answers only
// calls carrying a bearer JWT that jose, on the Node side, verifies with the
// public half of the operator's key; the real x402 client pays through the
// Gate.

package payment

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/internal/x402test"
)

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
			key, wrong := x402test.NewCDPKey(t, alg, keyID), x402test.NewCDPKey(t, alg, keyID)
			fac := x402test.StartCDPFacilitator(t, env.Tools, key)
			st := tempStore(t, nil)
			auth := func(secret string, now func() time.Time) *CDPAuth {
				a, err := NewCDPAuth(keyID, secret, now)
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			good := auth(key.Secret, nil)
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
				{"wrong key", auth(wrong.Secret, nil), "ERR_JWS_SIGNATURE_VERIFICATION_FAILED"},
				{"expired token", auth(key.Secret, func() time.Time { return time.Now().Add(-10 * time.Minute) }), "ERR_JWT_EXPIRED"},
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
