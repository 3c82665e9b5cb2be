package payment

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// paidGate is a payment-on gate (testnet, EVM) in front of a fake
// facilitator, with no free calls.
func paidGate(t *testing.T, c *clock, mutate func(*Config)) (*Gate, *fakeFacilitator) {
	t.Helper()
	fac := newFakeFacilitator(t)
	cfg := Config{FreePerDay: -1, PayToEVM: testPayTo, FacilitatorURL: fac.srv.URL, Network: Testnet, FacilitatorTimeout: 300 * time.Millisecond}
	if mutate != nil {
		mutate(&cfg)
	}
	g, err := NewGate(cfg, tempStore(t, c.Now), c.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	g.SetLog(slog.New(slog.DiscardHandler))
	return g, fac
}

var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestPaymentRequired402(t *testing.T) {
	c := newClock(testNow)
	g, fac := paidGate(t, c, func(cfg *Config) { cfg.FreePerDay = 1 })
	ctx := context.Background()
	req := Request{Route: testRoute(KindVerify), Client: "192.0.2.1", BodySize: 100}
	if _, err := g.Admit(ctx, req); err != nil {
		t.Fatalf("first call should be free: %v", err)
	}
	_, err := g.Admit(ctx, req)
	e := refusal(t, err, CodePaymentRequired)
	if e.Status != 402 || e.Retryable {
		t.Errorf("status %d retryable %v, want 402, false", e.Status, e.Retryable)
	}
	var pr PaymentRequired
	decodeBase64JSON(t, e.Header.Get(HeaderPaymentRequired), &pr)
	ours, _ := json.Marshal(e.PaymentRequired)
	theirs, _ := json.Marshal(pr)
	if diff := cmp.Diff(jsonValue(t, ours), jsonValue(t, theirs)); diff != "" {
		t.Errorf("PAYMENT-REQUIRED header differs from the refusal's PaymentRequired:\n%s", diff)
	}
	if len(pr.Accepts) != 1 {
		t.Fatalf("accepts = %+v, want one (EVM only)", pr.Accepts)
	}
	a := pr.Accepts[0]
	if a.Network != "eip155:84532" || a.Amount != "20000" || a.Asset != "0x036CbD53842c5426634e7929541eC2318f3dCF7e" ||
		a.PayTo != testPayTo || a.Extra["name"] != "USDC" || a.Extra["version"] != "2" {
		t.Errorf("accepts[0] = %+v", a)
	}
	if _, ok := pr.Extensions["bazaar"]; !ok {
		t.Errorf("no bazaar extension in %+v", pr.Extensions)
	}
	if e.FreeTrial == nil || e.FreeTrial.Code != CodeFreeTrialExhausted || e.FreeTrial.Available || e.FreeTrial.CallsPerClientPerDay != 1 {
		t.Errorf("free_trial = %+v", e.FreeTrial)
	}
	if got := e.Header.Get(HeaderAllowanceRemaining); got != "0" {
		t.Errorf("%s = %q on the 402, want 0", HeaderAllowanceRemaining, got)
	}
	golden(t, "402_verify_body.json", e)
	golden(t, "402_verify_payment_required.json", pr)
	golden(t, "402_verify_mcp_meta.json", e.MCPMeta())
	if fac.count("/verify") != 0 {
		t.Errorf("facilitator called for an unpaid request")
	}
}

// TestNotFreeKeepsAllowance: score requests, probes and oversized bodies
// get the 402 without using any of the allowance.
func TestNotFreeKeepsAllowance(t *testing.T) {
	c := newClock(testNow)
	g, _ := paidGate(t, c, func(cfg *Config) { cfg.FreePerDay = 5; cfg.FreeTierMaxBody = 1000 })
	ctx := context.Background()
	tests := []struct {
		name   string
		req    Request
		reason string
	}{
		{"score", Request{Route: testRoute(KindScore), Client: "192.0.2.1"}, ReasonNotCovered},
		{"probe", Request{Route: testRoute(KindVerify), Client: "192.0.2.1", Probe: true}, ReasonProbe},
		{"probe with a payment", Request{Route: testRoute(KindVerify), Client: "192.0.2.1", Probe: true, PaymentHeader: "eyJ4NDAyVmVyc2lvbiI6Mn0="}, ReasonProbe},
		{"body over the free tier", Request{Route: testRoute(KindVerify), Client: "192.0.2.1", BodySize: 1001}, ReasonBodyTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := g.Admit(ctx, tt.req)
			e := refusal(t, err, CodePaymentRequired)
			if e.FreeTrial == nil || !e.FreeTrial.Available || e.FreeTrial.RemainingCallsToday != 5 || e.FreeTrial.Reason != tt.reason || e.FreeTrial.Code != "" {
				t.Errorf("free_trial = %+v, want available with 5 left, reason %s", e.FreeTrial, tt.reason)
			}
			if tt.req.Route.Kind == KindScore && e.PaymentRequired.Accepts[0].Amount != "10000" {
				t.Errorf("score amount = %s, want 10000", e.PaymentRequired.Accepts[0].Amount)
			}
		})
	}
	adm, err := g.Admit(ctx, Request{Route: testRoute(KindVerify), Client: "192.0.2.1", BodySize: 1000})
	if err != nil {
		t.Fatalf("a body at the free limit should be free: %v", err)
	}
	if got := adm.Header().Get(HeaderAllowanceRemaining); got != "4" {
		t.Errorf("remaining after the first free call = %s, want 4", got)
	}
}

// TestRefuseUnpaidBody: the free tier's size limit, before decoding,
// refuses exactly the unpaid verify calls over it, as Admit would, and
// leaves every other call to Admit.
func TestRefuseUnpaidBody(t *testing.T) {
	c := newClock(testNow)
	g, fac := paidGate(t, c, func(cfg *Config) { cfg.FreePerDay = 5; cfg.FreeTierMaxBody = 1000 })
	ctx := context.Background()
	verify := testRoute(KindVerify)
	for _, tt := range []struct {
		name    string
		req     Request
		refused bool
	}{
		{"body over the free tier", Request{Route: verify, Client: "192.0.2.1", BodySize: 1001}, true},
		{"body at the free tier's limit", Request{Route: verify, Client: "192.0.2.1", BodySize: 1000}, false},
		{"paid over the free tier (header)", Request{Route: verify, Client: "192.0.2.1", BodySize: 1001, PaymentHeader: "eyJ4NDAyVmVyc2lvbiI6Mn0="}, false},
		{"paid over the free tier (MCP)", Request{Route: verify, Client: "192.0.2.1", BodySize: 1001, PaymentJSON: []byte(`{}`)}, false},
		{"a probe", Request{Route: verify, Client: "192.0.2.1", Probe: true}, false},
		{"a score", Request{Route: testRoute(KindScore), Client: "192.0.2.1", BodySize: 1001}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := g.RefuseUnpaidBody(ctx, tt.req)
			if !tt.refused {
				if err != nil {
					t.Errorf("refused: %v; want it left to Admit", err)
				}
				return
			}
			e := refusal(t, err, CodePaymentRequired)
			if e.FreeTrial == nil || e.FreeTrial.Reason != ReasonBodyTooLarge || e.FreeTrial.RemainingCallsToday != 5 {
				t.Errorf("free_trial = %+v, want reason %s with the 5 free calls kept", e.FreeTrial, ReasonBodyTooLarge)
			}
		})
	}
	off, err := NewGate(Config{FreePerDay: 5, FreeTierMaxBody: 1000}, tempStore(t, c.Now), c.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := off.RefuseUnpaidBody(ctx, Request{Route: verify, Client: "192.0.2.1", BodySize: 1 << 30}); err != nil {
		t.Errorf("payment off: refused %v; the free tier's limit applies only when paying is possible", err)
	}
	var none *Gate
	if err := none.RefuseUnpaidBody(ctx, Request{Route: verify, BodySize: 1 << 30}); err != nil {
		t.Errorf("nil gate: refused %v", err)
	}
	if fac.count("/verify") != 0 {
		t.Errorf("facilitator called for an unpaid request")
	}
}

func TestPaidFlow(t *testing.T) {
	c := newClock(testNow)
	g, fac := paidGate(t, c, nil)
	ctx := context.Background()
	off := offered(t, g, KindVerify)
	h := header(t, evmPayment(t, off, randomNonce(t), testNow.Add(time.Minute)))

	adm, err := g.Admit(ctx, Request{Route: testRoute(KindVerify), Client: "192.0.2.1", PaymentHeader: h})
	if err != nil {
		t.Fatalf("Admit: %v", err)
	}
	if !adm.Paid() || adm.Payer() == "" || !cmp.Equal(*adm.Requirements(), off) || len(adm.Header()) != 0 {
		t.Errorf("admission = paid %v payer %q req %+v headers %v", adm.Paid(), adm.Payer(), adm.Requirements(), adm.Header())
	}
	if got := fac.lastRequest("/verify").PaymentRequirements; !cmp.Equal(got, off) {
		t.Errorf("verify was sent requirements %+v, want what we offered", got)
	}
	if fac.count("/settle") != 0 {
		t.Fatal("settled before the work")
	}
	sr, err := adm.Settle(ctx, Answer{})
	if err != nil || !sr.Success {
		t.Fatalf("Settle = %+v, %v", sr, err)
	}
	got, err := DecodeSettleResponse(sr.HeaderValue())
	if err != nil || !got.Success || got.Transaction != "0xabc" || got.Network != "eip155:84532" {
		t.Errorf("PAYMENT-RESPONSE decodes to %+v, %v", got, err)
	}
	if sr2, err := adm.Settle(ctx, Answer{}); sr2 != sr || err != nil || fac.count("/settle") != 1 {
		t.Errorf("second Settle = %v, %v with %d settle calls, want the first outcome and one call", sr2, err, fac.count("/settle"))
	}

	// The same payment again: refused before any work, not settled twice.
	_, err = g.Admit(ctx, Request{Route: testRoute(KindVerify), Client: "192.0.2.1", PaymentHeader: h})
	e := refusal(t, err, CodePaymentReplayed)
	if e.Status != 402 || e.Header.Get(HeaderPaymentRequired) == "" {
		t.Errorf("replay refusal = %d with headers %v", e.Status, e.Header)
	}
	if fac.count("/settle") != 1 {
		t.Errorf("settle calls = %d, want 1", fac.count("/settle"))
	}
}

func TestReplayConcurrent(t *testing.T) {
	c := newClock(testNow)
	g, _ := paidGate(t, c, nil)
	h := header(t, evmPayment(t, offered(t, g, KindVerify), randomNonce(t), testNow.Add(time.Minute)))
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted, replayed := 0, 0
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := g.Admit(context.Background(), Request{Route: testRoute(KindVerify), Client: "192.0.2.1", PaymentHeader: h})
			mu.Lock()
			defer mu.Unlock()
			var e *Error
			switch {
			case err == nil:
				admitted++
			case errors.As(err, &e) && e.Code == CodePaymentReplayed:
				replayed++
			default:
				t.Errorf("unexpected: %v", err)
			}
		}()
	}
	wg.Wait()
	if admitted != 1 || replayed != 19 {
		t.Errorf("admitted %d, replayed %d; want 1 and 19", admitted, replayed)
	}
}

// TestPaymentRefusals: payments that must be refused before the work, and
// whether the facilitator was asked.
func TestPaymentRefusals(t *testing.T) {
	c := newClock(testNow)
	g, fac := paidGate(t, c, nil)
	off := offered(t, g, KindVerify)
	mod := func(f func(p *PaymentPayload, a *EVMAuthorization)) string {
		p := evmPayment(t, off, randomNonce(t), testNow.Add(time.Minute))
		var pl EVMPayload
		json.Unmarshal(p.Payload, &pl)
		f(p, &pl.Authorization)
		p.Payload, _ = json.Marshal(pl)
		return header(t, p)
	}
	cheaper := off
	cheaper.Amount = "1000"
	tests := []struct {
		name      string
		header    string
		reason    string
		askedFac  bool
		facVerify string
	}{
		{"not base64", "%%%", "invalid_payment_payload", false, ""},
		{"not JSON", "bm90IGpzb24=", "invalid_payment_payload", false, ""},
		{"version 1", mod(func(p *PaymentPayload, _ *EVMAuthorization) { p.X402Version = 1 }), "invalid_x402_version", false, ""},
		{"accepted a lower amount", mod(func(p *PaymentPayload, a *EVMAuthorization) { p.Accepted = cheaper; a.Value = "1000" }), "no_matching_requirements", false, ""},
		{"accepted another recipient", mod(func(p *PaymentPayload, a *EVMAuthorization) {
			p.Accepted.PayTo = "0x0000000000000000000000000000000000000002"
			a.To = p.Accepted.PayTo
		}), "no_matching_requirements", false, ""},
		{"signed a lower amount", mod(func(_ *PaymentPayload, a *EVMAuthorization) { a.Value = "1000" }), "invalid_exact_evm_payload_authorization_value_mismatch", false, ""},
		{"signed for another recipient", mod(func(_ *PaymentPayload, a *EVMAuthorization) { a.To = "0x0000000000000000000000000000000000000002" }), "invalid_exact_evm_recipient_mismatch", false, ""},
		{"expired", mod(func(_ *PaymentPayload, a *EVMAuthorization) { a.ValidBefore = "1700000000" }), "invalid_exact_evm_payload_authorization_valid_before", false, ""},
		{"bad nonce", mod(func(_ *PaymentPayload, a *EVMAuthorization) { a.Nonce = "0x1234" }), "invalid_exact_evm_payload", false, ""},
		{"facilitator says invalid", mod(func(*PaymentPayload, *EVMAuthorization) {}), "invalid_exact_evm_signature", true, `{"isValid":false,"invalidReason":"invalid_exact_evm_signature"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.facVerify != "" {
				fac.set(func(f *fakeFacilitator) {
					f.verify = func(facilitatorRequest) (int, string) { return 200, tt.facVerify }
				})
			}
			before := fac.count("/verify")
			_, err := g.Admit(context.Background(), Request{Route: testRoute(KindVerify), Client: "192.0.2.1", PaymentHeader: tt.header})
			e := refusal(t, err, CodePaymentInvalid)
			if e.PaymentRequired == nil || e.PaymentRequired.Error != tt.reason {
				t.Errorf("error reason = %+v, want %s", e.PaymentRequired, tt.reason)
			}
			if asked := fac.count("/verify") > before; asked != tt.askedFac {
				t.Errorf("facilitator asked = %v, want %v", asked, tt.askedFac)
			}
			if strings.Contains(e.Message, "0x0000000000000000000000000000000000000002") {
				t.Errorf("message echoes the caller's input: %s", e.Message)
			}
		})
	}
}

// TestNothingRecordedWhenNotVerified: a payment refused by the facilitator
// or not checked because it was down is not recorded, so the same payment
// is accepted once the facilitator says it is valid.
func TestNothingRecordedWhenNotVerified(t *testing.T) {
	c := newClock(testNow)
	g, fac := paidGate(t, c, nil)
	ctx := context.Background()
	h := header(t, evmPayment(t, offered(t, g, KindVerify), randomNonce(t), testNow.Add(time.Minute)))
	req := Request{Route: testRoute(KindVerify), Client: "192.0.2.1", PaymentHeader: h}

	fac.set(func(f *fakeFacilitator) { f.delay = time.Second })
	start := time.Now()
	_, err := g.Admit(ctx, req)
	e := refusal(t, err, CodeFacilitatorUnavailable)
	if e.Status != 503 || !e.Retryable || e.RetryAfter == nil || e.Header.Get("Retry-After") == "" {
		t.Errorf("slow facilitator: %d retryable %v retry_after %v", e.Status, e.Retryable, e.RetryAfter)
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("Admit waited %s for a slow facilitator, want the 300ms bound", d)
	}

	fac.set(func(f *fakeFacilitator) {
		f.delay = 0
		f.verify = func(facilitatorRequest) (int, string) { return 503, `service unavailable` }
	})
	_, err = g.Admit(ctx, req)
	refusal(t, err, CodeFacilitatorUnavailable)

	fac.set(func(f *fakeFacilitator) {
		f.verify = func(facilitatorRequest) (int, string) {
			return 200, `{"isValid":false,"invalidReason":"insufficient_funds"}`
		}
	})
	_, err = g.Admit(ctx, req)
	refusal(t, err, CodePaymentInvalid)

	fac.set(func(f *fakeFacilitator) {
		f.verify = func(facilitatorRequest) (int, string) { return 200, `{"isValid":true,"payer":"0x1"}` }
	})
	if _, err := g.Admit(ctx, req); err != nil {
		t.Fatalf("the payment should be usable once verified: %v", err)
	}
	fac.srv.Close()
	_, err = g.Admit(ctx, Request{Route: testRoute(KindVerify), Client: "192.0.2.1",
		PaymentHeader: header(t, evmPayment(t, offered(t, g, KindVerify), randomNonce(t), testNow.Add(time.Minute)))})
	refusal(t, err, CodeFacilitatorUnavailable)
}

func TestSettleFailures(t *testing.T) {
	tests := []struct {
		name   string
		settle func(facilitatorRequest) (int, string)
		delay  time.Duration
		code   string
	}{
		{"settlement refused", func(facilitatorRequest) (int, string) {
			return 200, `{"success":false,"errorReason":"invalid_exact_evm_nonce_already_used","transaction":"","network":"eip155:84532"}`
		}, 0, CodeSettlementFailed},
		{"settle as HTTP 400", func(facilitatorRequest) (int, string) {
			return 400, `{"success":false,"errorReason":"invalid_transaction_state","transaction":""}`
		}, 0, CodeSettlementFailed},
		{"facilitator error", func(facilitatorRequest) (int, string) { return 500, `{"error":"boom"}` }, 0, CodeFacilitatorUnavailable},
		{"facilitator slow", func(facilitatorRequest) (int, string) { return 200, `{"success":true,"transaction":"0x1"}` }, time.Second, CodeFacilitatorUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock(testNow)
			g, fac := paidGate(t, c, nil)
			ctx := context.Background()
			adm, err := g.Admit(ctx, Request{Route: testRoute(KindVerify), Client: "192.0.2.1",
				PaymentHeader: header(t, evmPayment(t, offered(t, g, KindVerify), randomNonce(t), testNow.Add(time.Minute)))})
			if err != nil {
				t.Fatal(err)
			}
			fac.set(func(f *fakeFacilitator) { f.settle, f.delay = tt.settle, tt.delay })
			sr, err := adm.Settle(ctx, Answer{})
			if sr != nil {
				t.Errorf("Settle returned a settlement %+v with the failure", sr)
			}
			charged := ChargeNone
			if tt.code == CodeFacilitatorUnavailable { // sent, never answered: it may have settled
				charged = ChargeUnknown
			}
			e := refusalCharged(t, err, tt.code, charged)
			if tt.code == CodeSettlementFailed {
				if e.Status != 402 || e.Settlement == nil || e.Settlement.Success || e.PaymentRequired.Error != e.Settlement.ErrorReason {
					t.Errorf("settlement_failed = %d, settlement %+v, x402 error %q", e.Status, e.Settlement, e.PaymentRequired.Error)
				}
				resp, err := DecodeSettleResponse(e.Header.Get(HeaderPaymentResponse))
				if err != nil || resp.Success {
					t.Errorf("PAYMENT-RESPONSE on the failure = %+v, %v", resp, err)
				}
			} else if e.Status != 503 || !e.Retryable {
				t.Errorf("facilitator failure = %d retryable %v", e.Status, e.Retryable)
			}
			if _, again := adm.Settle(ctx, Answer{}); again != err {
				t.Errorf("second Settle = %v, want the first failure", again)
			}
		})
	}
}

func TestMCPPayment(t *testing.T) {
	c := newClock(testNow)
	g, _ := paidGate(t, c, nil)
	ctx := context.Background()
	route := Route{Kind: KindVerify, Tool: "verify_schema", Resource: Resource{Description: "Verify an agent's output"},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"output":{}}}`)}
	_, err := g.Admit(ctx, Request{Route: route, Client: "192.0.2.1"})
	e := refusal(t, err, CodePaymentRequired)
	if meta := e.MCPMeta(); meta["code"] != CodeFreeTrialExhausted {
		t.Errorf("MCP _meta code = %v, want %s", meta["code"], CodeFreeTrialExhausted)
	}
	if got := e.PaymentRequired.Resource.URL; got != "mcp://tool/verify_schema" {
		t.Errorf("resource.url = %s, want mcp://tool/verify_schema", got)
	}
	golden(t, "402_mcp_payment_required.json", e.PaymentRequired)

	// A trust record is never free: its 402 does not say the trial ran out.
	_, err = g.Admit(ctx, Request{Route: Route{Kind: KindScore, Tool: "get_verification_record"}, Client: "192.0.2.1"})
	se := refusal(t, err, CodePaymentRequired)
	if meta := se.MCPMeta(); meta["code"] != CodePaymentRequired || se.FreeTrial.Reason != ReasonNotCovered {
		t.Errorf("score _meta code = %v, free_trial %+v; want %s, %s", meta["code"], se.FreeTrial, CodePaymentRequired, ReasonNotCovered)
	}

	// The client sends the PaymentPayload object itself in _meta.
	p := evmPayment(t, e.PaymentRequired.Accepts[0], randomNonce(t), testNow.Add(time.Minute))
	p.Resource = e.PaymentRequired.Resource
	raw, _ := json.Marshal(p)
	adm, err := g.Admit(ctx, Request{Route: route, Client: "192.0.2.1", PaymentJSON: raw})
	if err != nil {
		t.Fatalf("Admit with _meta payment: %v", err)
	}
	sr, err := adm.Settle(ctx, Answer{})
	if err != nil || !sr.Success {
		t.Fatalf("Settle = %+v, %v", sr, err)
	}
	_, err = g.Admit(ctx, Request{Route: route, Client: "192.0.2.1", PaymentJSON: raw})
	refusal(t, err, CodePaymentReplayed)
}

func TestSolanaOffer(t *testing.T) {
	c := newClock(testNow)
	g, fac := paidGate(t, c, func(cfg *Config) { cfg.PayToEVM, cfg.PayToSolana = "", testSolPayTo })
	ctx := context.Background()

	fac.set(func(f *fakeFacilitator) { f.supported = func() (int, string) { return 500, `{}` } })
	_, err := g.Admit(ctx, Request{Route: testRoute(KindVerify), Client: "192.0.2.1"})
	refusal(t, err, CodeFacilitatorUnavailable)
	fac.set(func(f *fakeFacilitator) { f.supported = newFakeFacilitator(t).supported })
	_, err = g.Admit(ctx, Request{Route: testRoute(KindVerify), Client: "192.0.2.1"})
	refusal(t, err, CodeFacilitatorUnavailable)
	if n := fac.count("/supported"); n != 1 {
		t.Errorf("GET /supported called %d times within the retry delay, want 1", n)
	}

	c.Set(testNow.Add(feePayerRetry))
	_, err = g.Admit(ctx, Request{Route: testRoute(KindVerify), Client: "192.0.2.1"})
	e := refusal(t, err, CodePaymentRequired)
	want := PaymentRequirements{Scheme: "exact", Network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", Amount: "20000",
		Asset: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU", PayTo: testSolPayTo, MaxTimeoutSeconds: 60,
		Extra: map[string]any{"feePayer": testFeePayer}}
	if diff := cmp.Diff([]PaymentRequirements{want}, e.PaymentRequired.Accepts); diff != "" {
		t.Errorf("accepts (-want +got):\n%s", diff)
	}

	pl, _ := json.Marshal(SVMPayload{Transaction: "AQIDBAUGBwgJ"})
	p := &PaymentPayload{X402Version: 2, Accepted: want, Payload: pl}
	adm, err := g.Admit(ctx, Request{Route: testRoute(KindVerify), Client: "192.0.2.1", PaymentHeader: header(t, p)})
	if err != nil || !adm.Paid() {
		t.Fatalf("Solana payment: %v", err)
	}
	_, err = g.Admit(ctx, Request{Route: testRoute(KindVerify), Client: "192.0.2.1", PaymentHeader: header(t, p)})
	refusal(t, err, CodePaymentReplayed)
}

func TestBothPayTo(t *testing.T) {
	c := newClock(testNow)
	g, _ := paidGate(t, c, func(cfg *Config) {
		cfg.PayToSolana, cfg.SolanaFeePayer, cfg.Network = testSolPayTo, testFeePayer, Mainnet
	})
	_, err := g.Admit(context.Background(), Request{Route: testRoute(KindScore), Client: "192.0.2.1"})
	e := refusal(t, err, CodePaymentRequired)
	var networks []string
	for _, a := range e.PaymentRequired.Accepts {
		networks = append(networks, a.Network+" "+a.Amount)
	}
	if want := []string{"eip155:8453 10000", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp 10000"}; !cmp.Equal(networks, want) {
		t.Errorf("accepts networks = %v, want %v (mainnet only)", networks, want)
	}
	if got := e.PaymentRequired.Accepts[0].Extra["name"]; got != "USD Coin" {
		t.Errorf("Base mainnet EIP-712 name = %v, want USD Coin", got)
	}
	wk := g.WellKnown(context.Background(), []Route{testRoute(KindVerify), testRoute(KindScore),
		{Kind: KindVerify, Tool: "verify_schema"}})
	golden(t, "well_known_x402.json", wk)
	golden(t, "x_payment_info_verify.json", g.PaymentInfo(KindVerify))
}

func TestWellKnownPaymentOff(t *testing.T) {
	g, err := NewGate(Config{}, tempStore(t, nil), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	wk := g.WellKnown(context.Background(), []Route{testRoute(KindVerify)})
	if wk.Payment != "off" || len(wk.Resources) != 0 || !wk.Routes[0].Free || wk.FreeAllowance.CallsPerClientPerDay != DefaultFreePerDay {
		t.Errorf("payment-off document = %+v", wk)
	}
	if g.PaymentInfo(KindVerify) != nil {
		t.Error("x-payment-info with payment off")
	}
}
