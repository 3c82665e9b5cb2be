//go:build x402e2e

// The end-to-end test of the real HTTP layer with payments on, driven by the
// real x402 client (@x402/fetch, pay.mjs) against the real facilitator
// logic (facilitator.mjs). .ci/x402-e2e.sh provides both; with the tag,
// anything missing is a failure.

package rest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/internal/x402test"
	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// x402Tools is what .ci/x402-e2e.sh provides.
type x402Tools struct{ x402test.Env }

func loadX402Tools(t *testing.T) x402Tools { return x402Tools{x402test.LoadEnv(t)} }

type paid struct {
	Status           int                     `json:"status"`
	PaymentResponse  *payment.SettleResponse `json:"paymentResponse"`
	Body             map[string]any          `json:"body"`
	PaymentSignature *string                 `json:"paymentSignature"`
	Requests         int                     `json:"requests"`
	Error            string                  `json:"error"`
}

// pay runs pay.mjs (the real @x402/fetch client with a fresh key).
func (x x402Tools) pay(t *testing.T, method, url string, body []byte) paid {
	t.Helper()
	var p paid
	x.Pay(t, method, url, body, &p)
	return p
}

// settled counts the facilitator's successful settlements so far, and the
// calls it was asked.
func (x x402Tools) settled(t *testing.T) (settled, calls int) {
	l := x.Log(t)
	return l.Settled(), len(l)
}

// testnetServer is the HTTP mode with payments on testnet through the
// facilitator at url, on svc's store.
func testnetServer(t *testing.T, svc *tools.Service, mutate func(*payment.Config)) *httptest.Server {
	t.Helper()
	cfg := payment.Config{FreePerDay: -1, PayToEVM: testkit.TestPayToEVM, FacilitatorURL: os.Getenv("X402_FACILITATOR"), Network: payment.Testnet,
		FacilitatorTimeout: time.Second}
	if mutate != nil {
		mutate(&cfg)
	}
	return gatedServer(t, svc, cfg)
}

func TestE2EHTTPPayments(t *testing.T) {
	x := loadX402Tools(t)
	svc := testkit.QuietService(t, true)
	ts := testnetServer(t, svc, nil)
	pass, fail := testkit.ReadTestdata(t, "invoice-pass.json"), testkit.ReadTestdata(t, "invoice-fail.json")
	verdicts := func() int {
		rep, err := svc.Store.Reputation(context.Background(), "seller-7", store.Page{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		return rep.Total
	}

	var sig string
	t.Run("paid verify", func(t *testing.T) {
		before, _ := x.settled(t)
		p := x.pay(t, "POST", ts.URL+"/verify/schema", pass)
		if p.Status != 200 || p.Requests != 2 || p.Body["result"] != "pass" || p.PaymentResponse == nil || !p.PaymentResponse.Success ||
			p.PaymentResponse.Network != "eip155:84532" || p.PaymentResponse.Transaction == "" {
			t.Fatalf("paid verify = %+v", p)
		}
		if after, _ := x.settled(t); after != before+1 {
			t.Errorf("settlements %d → %d, want one more", before, after)
		}
		sig = *p.PaymentSignature
	})

	t.Run("replay refused before the work", func(t *testing.T) {
		n, _ := x.settled(t)
		v := verdicts()
		// The same payment for another request (the same one gets its kept answer).
		res := do(t, "POST", ts.URL+"/verify/deliverable", pass, sig)
		if res.status != 402 || res.body["code"] != payment.CodePaymentReplayed {
			t.Errorf("replay = %d %v", res.status, res.body["code"])
		}
		if after, _ := x.settled(t); after != n || verdicts() != v {
			t.Errorf("the replay settled or verified again")
		}
	})

	t.Run("fail verdict charged like a pass", func(t *testing.T) {
		p := x.pay(t, "POST", ts.URL+"/verify/deliverable", fail)
		if p.Status != 200 || p.Body["result"] != "fail" || p.PaymentResponse == nil || !p.PaymentResponse.Success {
			t.Errorf("fail verdict = %d %v %+v", p.Status, p.Body["result"], p.PaymentResponse)
		}
	})

	t.Run("paid score", func(t *testing.T) {
		p := x.pay(t, "GET", ts.URL+"/score/seller-7", nil)
		if p.Status != 200 || p.Body["has_history"] != true || p.PaymentResponse == nil || !p.PaymentResponse.Success {
			t.Errorf("score = %d %+v", p.Status, p.PaymentResponse)
		}
	})

	t.Run("invalid request never charged", func(t *testing.T) {
		_, calls := x.settled(t)
		p := x.pay(t, "POST", ts.URL+"/verify/schema", []byte(`{"task_id":"t"}`))
		if p.Status != 422 || p.Requests != 1 || p.PaymentSignature != nil {
			t.Errorf("invalid request = %+v", p)
		}
		if _, after := x.settled(t); after != calls {
			t.Errorf("the facilitator was asked about an invalid request")
		}
	})

	// Payments signed for another price or payee (their own servers never
	// reach a facilitator, so nothing settles there) are refused here.
	for _, tt := range []struct {
		name   string
		mutate func(*payment.Config)
	}{
		{"wrong amount", func(c *payment.Config) { c.PriceVerify = "0.001" }},
		{"wrong recipient", func(c *payment.Config) { c.PayToEVM = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" }},
	} {
		t.Run(tt.name+" refused", func(t *testing.T) {
			other := testnetServer(t, testkit.QuietService(t, true), func(c *payment.Config) {
				tt.mutate(c)
				c.FacilitatorURL = "http://127.0.0.1:9"
			})
			p := x.pay(t, "POST", other.URL+"/verify/schema", pass)
			if p.Status != 503 || p.PaymentSignature == nil {
				t.Fatalf("payment to the other server = %+v, want 503 (no facilitator there)", p)
			}
			v := verdicts()
			res := do(t, "POST", ts.URL+"/verify/schema", pass, *p.PaymentSignature)
			if res.status != 402 || res.body["code"] != payment.CodePaymentInvalid || verdicts() != v {
				t.Errorf("%s = %d %v", tt.name, res.status, res.body)
			}
			// The same payment with accepted and the signed value rewritten to
			// ours: the real facilitator's signature check refuses it.
			raw, _ := base64.StdEncoding.DecodeString(*p.PaymentSignature)
			var pp map[string]any
			json.Unmarshal(raw, &pp)
			probe := do(t, "POST", ts.URL+"/verify/schema", nil, "")
			want, _ := payment.DecodePaymentRequired(probe.header.Get("Payment-Required"))
			pp["accepted"] = want.Accepts[0]
			auth := pp["payload"].(map[string]any)["authorization"].(map[string]any)
			auth["value"], auth["to"] = want.Accepts[0].Amount, want.Accepts[0].PayTo
			b, _ := json.Marshal(pp)
			res = do(t, "POST", ts.URL+"/verify/schema", pass, base64.StdEncoding.EncodeToString(b))
			if res.status != 402 || res.body["code"] != payment.CodePaymentInvalid || !strings.Contains(res.body["error"].(string), "signature") {
				t.Errorf("tampered payment = %d %v %v", res.status, res.body["code"], res.body["error"])
			}
		})
	}

	t.Run("discovery", func(t *testing.T) {
		probe := do(t, "POST", ts.URL+"/verify/schema", nil, "")
		pr, err := payment.DecodePaymentRequired(probe.header.Get("Payment-Required"))
		if probe.status != 402 || err != nil || len(pr.Accepts) != 1 || pr.Extensions["bazaar"].Info == nil {
			t.Errorf("probe = %d %v", probe.status, err)
		}
		wk := do(t, "GET", ts.URL+"/.well-known/x402", nil, "")
		if wk.status != 200 || wk.body["payment"] != "on" {
			t.Errorf("well-known = %d %v", wk.status, wk.body)
		}
	})
}
