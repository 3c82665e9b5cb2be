//go:build x402e2e

// The end-to-end test with the real x402 client (@x402/fetch, pay.mjs) and
// the real facilitator logic (@x402/core + @x402/evm, facilitator.mjs).
// .ci/x402-e2e.sh installs the npm packages, starts the facilitator and runs
// it with -tags x402e2e; with the tag, anything missing is a failure.

package payment

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/internal/x402test"
)

// e2eEnv is what .ci/x402-e2e.sh provides.
type e2eEnv struct{ x402test.Env }

func loadE2EEnv(t *testing.T) e2eEnv { return e2eEnv{x402test.LoadEnv(t)} }

// e2eServer is a small payment-enabled HTTP service in front of a Gate, as
// the HTTP layer uses it: validate, admit, work, settle, answer. Unpaid
// requests get their 402 from offer; paid ones are admitted by pay (the two
// differ only to make a client pay the wrong amount or recipient).
type e2eServer struct {
	pay, offer *Gate
	work       atomic.Int64
}

func (s *e2eServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	route := Route{Kind: KindVerify, Method: r.Method, Resource: Resource{URL: "http://" + r.Host + r.URL.Path, Description: "e2e verify"},
		InputSchema: json.RawMessage(`{"type":"object","required":["output"]}`)}
	req := Request{Client: s.pay.ClientID(r), PaymentHeader: r.Header.Get(HeaderPaymentSignature), BodySize: int64(len(body))}
	switch {
	case r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/score/"):
		route.Kind, route.RouteTemplate = KindScore, "/score/:agent_id"
	case r.Method == http.MethodPost && len(body) == 0:
		req.Probe = true
	case r.Method == http.MethodPost:
		var in map[string]json.RawMessage
		if json.Unmarshal(body, &in) != nil || in["output"] == nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			w.Write([]byte(`{"code":"invalid_request","status":422,"retryable":false,"charged":false}`))
			return
		}
	default:
		http.NotFound(w, r)
		return
	}
	req.Route = route
	gate := s.pay
	if req.PaymentHeader == "" {
		gate = s.offer
	}
	adm, err := gate.Admit(r.Context(), req)
	var refused *Error
	if errors.As(err, &refused) {
		refused.Write(w)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.work.Add(1)
	result := "pass"
	if bytes.Contains(body, []byte(`"fail"`)) {
		result = "fail"
	}
	answer := []byte(`{"result":"` + result + `"}`)
	sr, err := adm.Settle(r.Context(), Answer{Body: answer})
	if errors.As(err, &refused) {
		refused.Write(w)
		return
	}
	for k, v := range adm.Header() {
		w.Header()[k] = v
	}
	if sr != nil {
		w.Header().Set(HeaderPaymentResponse, sr.HeaderValue())
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(answer)
}

// payResult is pay.mjs's output line.
type payResult struct {
	Status           int             `json:"status"`
	PaymentResponse  *SettleResponse `json:"paymentResponse"`
	Body             json.RawMessage `json:"body"`
	PaymentSignature *string         `json:"paymentSignature"`
	Requests         int             `json:"requests"`
	Error            string          `json:"error"`
}

// pay runs the real @x402/fetch client against url.
func (env e2eEnv) pay(t *testing.T, method, url, body string) payResult {
	t.Helper()
	var res payResult
	env.Pay(t, method, url, []byte(body), &res)
	if res.Error != "" {
		t.Logf("pay.mjs error: %s", res.Error)
	}
	return res
}

// send posts body with a PAYMENT-SIGNATURE header from Go (for replays and
// tampered payments).
func send(t *testing.T, method, url, body, paymentSignature string) (*http.Response, *Error) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if paymentSignature != "" {
		req.Header.Set(HeaderPaymentSignature, paymentSignature)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e Error
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 400 {
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatalf("error body %q: %v", b, err)
		}
	}
	return resp, &e
}

func TestE2ERealClientAndFacilitator(t *testing.T) {
	env := loadE2EEnv(t)
	ctx := context.Background()
	st := tempStore(t, nil)
	cfg := Config{FreePerDay: 1, PayToEVM: testPayTo, FacilitatorURL: env.Facilitator, Network: Testnet}
	gate := func(mutate func(*Config)) *Gate {
		c := cfg
		if mutate != nil {
			mutate(&c)
		}
		g, err := NewGate(c, st, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	real := gate(nil)
	srv := &e2eServer{pay: real, offer: real}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	cheap := httptest.NewServer(&e2eServer{pay: real, offer: gate(func(c *Config) { c.PriceVerify = "0.001" })})
	defer cheap.Close()
	other := httptest.NewServer(&e2eServer{pay: real, offer: gate(func(c *Config) { c.PayToEVM = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" })})
	defer other.Close()
	const valid, failing = `{"output":{"total":3}}`, `{"output":{"total":3},"expect":"fail"}`

	t.Run("free call within the allowance", func(t *testing.T) {
		res := env.pay(t, "POST", ts.URL+"/verify/schema", valid)
		if res.Status != 200 || res.PaymentResponse != nil || res.PaymentSignature != nil || res.Requests != 1 {
			t.Errorf("free call = %+v, want 200 without payment", res)
		}
	})

	t.Run("discovery probe", func(t *testing.T) {
		resp, e := send(t, "POST", ts.URL+"/verify/schema", "", "")
		pr, err := DecodePaymentRequired(resp.Header.Get(HeaderPaymentRequired))
		if resp.StatusCode != 402 || err != nil || len(pr.Accepts) != 1 || pr.Extensions["bazaar"].Info == nil {
			t.Errorf("probe = %d %v %+v", resp.StatusCode, err, pr)
		}
		if e.FreeTrial == nil || e.FreeTrial.Code != CodeFreeTrialExhausted {
			t.Errorf("probe free_trial = %+v, want exhausted after the free call", e.FreeTrial)
		}
	})

	var paidSig string
	t.Run("paid verify", func(t *testing.T) {
		before, work := env.Log(t).Settled(), srv.work.Load()
		res := env.pay(t, "POST", ts.URL+"/verify/schema", valid)
		if res.Status != 200 || res.Requests != 2 || res.PaymentSignature == nil {
			t.Fatalf("paid verify = %+v, want 200 after a 402 and one paid retry", res)
		}
		if string(res.Body) != `{"result":"pass"}` {
			t.Errorf("body = %s", res.Body)
		}
		pr := res.PaymentResponse
		if pr == nil || !pr.Success || pr.Network != "eip155:84532" || !isHex(pr.Transaction, 32) || pr.Payer == "" {
			t.Errorf("PAYMENT-RESPONSE decoded by the client = %+v", pr)
		}
		if got := env.Log(t).Settled(); got != before+1 {
			t.Errorf("settlements = %d, want %d", got, before+1)
		}
		if srv.work.Load() != work+1 {
			t.Errorf("work done %d times, want once", srv.work.Load()-work)
		}
		paidSig = *res.PaymentSignature
	})

	t.Run("replay refused before the work", func(t *testing.T) {
		if paidSig == "" {
			t.Fatal("no payment to replay")
		}
		before, work := env.Log(t).Settled(), srv.work.Load()
		resp, e := send(t, "POST", ts.URL+"/verify/schema", valid, paidSig)
		if resp.StatusCode != 402 || e.Code != CodePaymentReplayed {
			t.Errorf("replay = %d %s, want 402 %s", resp.StatusCode, e.Code, CodePaymentReplayed)
		}
		if srv.work.Load() != work || env.Log(t).Settled() != before {
			t.Errorf("replay redid the work or settled again")
		}
	})

	t.Run("fail verdict charged like a pass", func(t *testing.T) {
		res := env.pay(t, "POST", ts.URL+"/verify/schema", failing)
		if res.Status != 200 || string(res.Body) != `{"result":"fail"}` || res.PaymentResponse == nil || !res.PaymentResponse.Success {
			t.Errorf("fail verdict = %+v, want 200, fail, settled", res)
		}
	})

	t.Run("paid score", func(t *testing.T) {
		res := env.pay(t, "GET", ts.URL+"/score/agent-1", "")
		if res.Status != 200 || res.PaymentResponse == nil || !res.PaymentResponse.Success {
			t.Errorf("score = %+v, want paid and answered", res)
		}
		var pp PaymentPayload
		decodeBase64JSON(t, *res.PaymentSignature, &pp)
		if pp.Accepted.Amount != "10000" {
			t.Errorf("score paid %s, want 10000 (0.01 USDC)", pp.Accepted.Amount)
		}
	})

	t.Run("invalid request never charged", func(t *testing.T) {
		n := len(env.Log(t))
		res := env.pay(t, "POST", ts.URL+"/verify/schema", `{"nope":1}`)
		if res.Status != 422 || res.Requests != 1 || res.PaymentSignature != nil {
			t.Errorf("invalid request = %+v, want 422 with no payment step", res)
		}
		if len(env.Log(t)) != n {
			t.Errorf("the facilitator was asked about an invalid request")
		}
	})

	var cheapSig string
	for _, tt := range []struct{ name, url string }{{"wrong amount", cheap.URL}, {"wrong recipient", other.URL}} {
		t.Run(tt.name+" refused", func(t *testing.T) {
			before, work := env.Log(t).Settled(), srv.work.Load()
			res := env.pay(t, "POST", tt.url+"/verify/schema", valid)
			if res.Status != 402 || res.PaymentSignature == nil {
				t.Fatalf("%s = %+v, want a paid attempt refused with 402", tt.name, res)
			}
			var e Error
			if json.Unmarshal(res.Body, &e) != nil || e.Code != CodePaymentInvalid {
				t.Errorf("body = %s, want %s", res.Body, CodePaymentInvalid)
			}
			if env.Log(t).Settled() != before || srv.work.Load() != work {
				t.Errorf("a wrong payment was settled or served")
			}
			if tt.url == cheap.URL {
				cheapSig = *res.PaymentSignature
			}
		})
	}

	t.Run("tampered amount caught by the facilitator's signature check", func(t *testing.T) {
		if cheapSig == "" {
			t.Fatal("no cheap payment to tamper with")
		}
		raw, _ := base64.StdEncoding.DecodeString(cheapSig)
		var p map[string]any
		json.Unmarshal(raw, &p)
		offer := offered(t, real, KindVerify)
		p["accepted"] = offer
		p["payload"].(map[string]any)["authorization"].(map[string]any)["value"] = offer.Amount
		b, _ := json.Marshal(p)
		log := len(env.Log(t))
		resp, e := send(t, "POST", ts.URL+"/verify/schema", valid, base64.StdEncoding.EncodeToString(b))
		if resp.StatusCode != 402 || e.Code != CodePaymentInvalid || !strings.Contains(e.Message, "invalid_exact_evm_signature") {
			t.Errorf("tampered = %d %s %q", resp.StatusCode, e.Code, e.Message)
		}
		l := env.Log(t)
		if len(l) != log+1 || l[log].Op != "verify" || l[log].Reason != "invalid_exact_evm_signature" {
			t.Errorf("facilitator log after the tampered payment = %+v, want one verify refused with invalid_exact_evm_signature", l[log:])
		}
	})

	t.Run("facilitator down or slow: 503, nothing charged", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		dead.Close()
		hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}))
		defer hang.Close()
		for _, url := range []string{dead.URL, hang.URL} {
			g := gate(func(c *Config) { c.FacilitatorURL, c.FacilitatorTimeout = url, 500*time.Millisecond })
			down := &e2eServer{pay: g, offer: g}
			ds := httptest.NewServer(down)
			res := env.pay(t, "POST", ds.URL+"/verify/schema", valid)
			ds.Close()
			var e Error
			if res.Status != 503 || json.Unmarshal(res.Body, &e) != nil || e.Code != CodeFacilitatorUnavailable || !e.Retryable || down.work.Load() != 0 {
				t.Errorf("facilitator %s: %+v, want 503 %s retryable and no work", url, res, CodeFacilitatorUnavailable)
			}
			// Nothing was recorded: the same payment passes once the facilitator is back.
			if res.PaymentSignature == nil {
				t.Fatal("no payment was attempted")
			}
			if _, err := real.Admit(ctx, Request{Route: testRoute(KindVerify), Client: "e2e", PaymentHeader: *res.PaymentSignature}); err != nil {
				t.Errorf("the payment refused during the outage was recorded: %v", err)
			}
		}
	})
}
