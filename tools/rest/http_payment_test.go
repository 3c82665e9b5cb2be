package rest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// paymentServer is the HTTP mode with a payment gate of cfg.
func paymentServer(t *testing.T, cfg payment.Config) (*httptest.Server, *tools.Service) {
	t.Helper()
	svc := testkit.NewTestService(t, true)
	ts := gatedServer(t, svc, cfg)
	svc.PublicURL = ts.URL
	return ts, svc
}

// gatedServer serves svc's HTTP mode behind a payment gate of cfg on its
// store.
func gatedServer(t *testing.T, svc *tools.Service, cfg payment.Config) *httptest.Server {
	t.Helper()
	g, err := payment.NewGate(cfg, svc.Store, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var opts HTTPOptions
	WithPayment(svc, &opts, g)
	h, err := NewHTTPHandler(svc, withMCP(svc, &opts))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

type httpResult struct {
	status int
	header http.Header
	body   map[string]any
}

func do(t *testing.T, method, url string, body []byte, paymentSignature string) httpResult {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if paymentSignature != "" {
		req.Header.Set("Payment-Signature", paymentSignature)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	res := httpResult{status: resp.StatusCode, header: resp.Header}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &res.body); err != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("body %q: %v", raw, err)
	}
	return res
}

// payFor builds a Payment-Signature for the first requirement of a 402
// (the fake facilitator does not check the signature).
func payFor(t *testing.T, res httpResult) string {
	t.Helper()
	pr, err := payment.DecodePaymentRequired(res.header.Get("Payment-Required"))
	if err != nil {
		t.Fatalf("402 without a readable Payment-Required: %v", err)
	}
	req := pr.Accepts[0]
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	nonce := "0x" + hex.EncodeToString(b)
	pl, _ := json.Marshal(payment.EVMPayload{Signature: "0x" + strings.Repeat("ab", 65), Authorization: payment.EVMAuthorization{
		From: "0x3F6F8187C480D0FeE3e9536Eeee62CEED2CACD58", To: req.PayTo, Value: req.Amount, ValidAfter: "0",
		ValidBefore: strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10), Nonce: nonce}})
	h, err := payment.EncodeHeader(payment.PaymentPayload{X402Version: 2, Resource: pr.Resource, Accepted: req, Payload: pl})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHTTPAllowancePaymentOff(t *testing.T) {
	ts, _ := paymentServer(t, payment.Config{FreePerDay: 1})
	invoice := testkit.ReadTestdata(t, "invoice-pass.json")
	res := do(t, "POST", ts.URL+"/verify/schema", invoice, "")
	if res.status != 200 || res.header.Get("Free-Allowance-Remaining") != "0" || res.header.Get("Free-Allowance-Limit") != "1" || res.header.Get("Free-Allowance-Resets") == "" {
		t.Fatalf("free call = %d with headers %v", res.status, res.header)
	}
	res = do(t, "POST", ts.URL+"/verify/deliverable", invoice, "")
	if res.status != 429 || res.body["code"] != payment.CodeRateLimited || res.header.Get("Retry-After") == "" || res.body["retry_after"] == nil {
		t.Errorf("past the allowance = %d %v", res.status, res.body)
	}
	res = do(t, "POST", ts.URL+"/verify/schema", nil, "")
	if res.status != 422 {
		t.Errorf("empty POST with payment off = %d, want 422", res.status)
	}
	wk := do(t, "GET", ts.URL+"/.well-known/x402", nil, "")
	if wk.status != 200 || wk.body["payment"] != "off" {
		t.Errorf("well-known = %d %v", wk.status, wk.body)
	}
}

func TestHTTPPaymentOn(t *testing.T) {
	fac := &testkit.FakeFacilitator{}
	fac.SettleOK.Store(true)
	fs := httptest.NewServer(fac)
	defer fs.Close()
	ts, svc := paymentServer(t, payment.Config{FreePerDay: -1, PayToEVM: testkit.TestPayToEVM, FacilitatorURL: fs.URL, Network: payment.Testnet})
	invoice := testkit.ReadTestdata(t, "invoice-pass.json")

	probe := do(t, "POST", ts.URL+"/verify/schema", nil, "")
	if probe.status != 402 || probe.body["code"] != payment.CodePaymentRequired || probe.body["x402Version"] != float64(2) {
		t.Fatalf("probe = %d %v", probe.status, probe.body)
	}
	if bad := do(t, "POST", ts.URL+"/verify/schema", []byte(`{"task_id":"x"}`), ""); bad.status != 422 {
		t.Errorf("invalid request = %d, want 422 before any payment step", bad.status)
	}
	unpaid := do(t, "POST", ts.URL+"/verify/schema", invoice, "")
	ft, _ := unpaid.body["free_trial"].(map[string]any)
	if unpaid.status != 402 || ft["code"] != payment.CodeFreeTrialExhausted {
		t.Fatalf("unpaid = %d %v", unpaid.status, unpaid.body)
	}

	sig := payFor(t, unpaid)
	paid := do(t, "POST", ts.URL+"/verify/schema", invoice, sig)
	sr, err := payment.DecodeSettleResponse(paid.header.Get("Payment-Response"))
	if paid.status != 200 || err != nil || !sr.Success || paid.body["result"] != "pass" {
		t.Fatalf("paid = %d %v, Payment-Response %+v %v", paid.status, paid.body, sr, err)
	}
	// The same payment for the same request: the kept answer, not settled
	// again; for another request: refused as a replay.
	again := do(t, "POST", ts.URL+"/verify/schema", invoice, sig)
	if again.status != 200 || again.body["verification_id"] != paid.body["verification_id"] || again.header.Get("Payment-Response") != paid.header.Get("Payment-Response") {
		t.Errorf("same payment, same request = %d %v, want the kept answer", again.status, again.body)
	}
	replay := do(t, "POST", ts.URL+"/verify/deliverable", invoice, sig)
	if replay.status != 402 || replay.body["code"] != payment.CodePaymentReplayed || replay.body["charged"] != false || fac.Settles.Load() != 1 {
		t.Errorf("replay = %d %v after %d settlements", replay.status, replay.body, fac.Settles.Load())
	}

	// A failed settlement withholds the answer.
	fac.SettleOK.Store(false)
	failed := do(t, "POST", ts.URL+"/verify/schema", invoice, payFor(t, unpaid))
	if failed.status != 402 || failed.body["code"] != payment.CodeSettlementFailed || failed.body["result"] != nil || failed.header.Get("Payment-Response") == "" {
		t.Errorf("failed settlement = %d %v", failed.status, failed.body)
	}

	// Scores: paid for every agent, one without history too (SPEC §8): the
	// paid answer is a signed record saying there is no history.
	fac.SettleOK.Store(true)
	nobody := do(t, "GET", ts.URL+"/score/nobody", nil, "")
	if nobody.status != 402 || nobody.body["code"] != payment.CodePaymentRequired {
		t.Fatalf("score without history = %d %v, want 402 payment_required", nobody.status, nobody.body)
	}
	paidNobody := do(t, "GET", ts.URL+"/score/nobody", nil, payFor(t, nobody))
	if paidNobody.status != 200 || paidNobody.header.Get("Payment-Response") == "" ||
		paidNobody.body["has_history"] != false || paidNobody.body["attestation"] == nil {
		t.Errorf("paid score without history = %d %v, want 200, a Payment-Response and a signed record with has_history false", paidNobody.status, paidNobody.body)
	}
	var agent string
	if err := svc.Store.PutVerdict(context.Background(), sampleVerdict(&agent)); err != nil {
		t.Fatal(err)
	}
	score := do(t, "GET", ts.URL+"/score/"+agent, nil, "")
	if score.status != 402 {
		t.Fatalf("score with history = %d, want 402", score.status)
	}
	fac.SettleOK.Store(true)
	if res := do(t, "GET", ts.URL+"/score/"+agent, nil, payFor(t, score)); res.status != 200 || res.header.Get("Payment-Response") == "" {
		t.Errorf("paid score = %d %v", res.status, res.body)
	}

	wk := do(t, "GET", ts.URL+"/.well-known/x402", nil, "")
	if wk.status != 200 || wk.body["payment"] != "on" || len(wk.body["resources"].([]any)) != 3 {
		t.Errorf("well-known = %d %v", wk.status, wk.body)
	}
}

// sampleVerdict is a stored verdict of a fresh agent, whose id it sets.
func sampleVerdict(agent *string) store.Verdict {
	*agent = "seller-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	return store.Verdict{VerificationID: "v-" + *agent, TaskID: "t", AgentID: *agent, Result: store.ResultPass,
		OutputHash: "sha256:00", SchemaHash: "sha256:00", RulesHash: "sha256:00", RequestHash: "sha256:00",
		Overall: store.Ratio{Ratio: 1, Passed: 1, Total: 1}, VerifiedAt: time.Now().UTC(), KeyVersion: "k1",
		Receipt: json.RawMessage(`{}`)}
}

// TestHTTPAllowanceUsedOnlyWhenAnswered: a free call that is not answered —
// turned away by the concurrency limit, or found invalid by the work (a
// schema that does not compile) — uses none of the allowance.
func TestHTTPAllowanceUsedOnlyWhenAnswered(t *testing.T) {
	ts, svc := paymentServer(t, payment.Config{FreePerDay: 1})
	svc.Limiter = tools.NewLimiter(1)
	invoice := testkit.ReadTestdata(t, "invoice-pass.json")
	release, busy := svc.Limiter.Acquire(t.Context(), 0)
	if busy != nil {
		t.Fatal(busy)
	}
	if res := do(t, "POST", ts.URL+"/verify/schema", invoice, ""); res.status != 503 {
		t.Fatalf("with every slot taken = %d %v, want 503", res.status, res.body)
	}
	release()
	var req map[string]any
	if err := json.Unmarshal(invoice, &req); err != nil {
		t.Fatal(err)
	}
	req["expected_schema"] = map[string]any{"type": "no-such-type"}
	bad, _ := json.Marshal(req)
	if res := do(t, "POST", ts.URL+"/verify/schema", bad, ""); res.status != 422 {
		t.Fatalf("schema that does not compile = %d %v, want 422", res.status, res.body)
	}
	res := do(t, "POST", ts.URL+"/verify/schema", invoice, "")
	if res.status != 200 || res.header.Get("Free-Allowance-Remaining") != "0" {
		t.Fatalf("first answered call = %d, Free-Allowance-Remaining %q; want 200 and 0", res.status, res.header.Get("Free-Allowance-Remaining"))
	}
	if res := do(t, "POST", ts.URL+"/verify/schema", invoice, ""); res.status != 429 {
		t.Errorf("second answered call = %d, want 429", res.status)
	}
}
