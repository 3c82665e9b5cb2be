package payment

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/store"
)

// paidRequest is a paid verify request with header h for the request key.
func paidRequest(h, key string) Request {
	return Request{Route: testRoute(KindVerify), Client: "192.0.2.1", PaymentHeader: h, RequestKey: key}
}

// TestSettleUnknownKeepsAnswer: a settle the facilitator never answers is
// charged "unknown"; the answer is kept, and the same payment for the same
// request gets it without a word to the facilitator, while another request
// (or one without a key) is a replay, refused locally.
func TestSettleUnknownKeepsAnswer(t *testing.T) {
	c := newClock(testNow)
	g, fac := paidGate(t, c, nil)
	ctx := context.Background()
	h := header(t, evmPayment(t, offered(t, g, KindVerify), randomNonce(t), testNow.Add(time.Minute)))
	adm, err := g.Admit(ctx, paidRequest(h, "k1"))
	if err != nil {
		t.Fatal(err)
	}
	fac.set(func(f *fakeFacilitator) { f.delay = time.Second }) // past the 300ms timeout
	answer := Answer{Body: []byte(`{"verification_id":"v1","x":"<&>"}`), Text: "the text"}
	_, err = adm.Settle(ctx, answer)
	e := refusalCharged(t, err, CodeFacilitatorUnavailable, ChargeUnknown)
	if !e.Retryable || len(e.NextActions) != 1 || e.NextActions[0].Action != ActionRetrySamePayment {
		t.Errorf("unknown settlement = retryable %v, next actions %+v", e.Retryable, e.NextActions)
	}
	fac.set(func(f *fakeFacilitator) { f.delay = 0 })

	verifies := fac.count("/verify")
	retry, err := g.Admit(ctx, paidRequest(h, "k1"))
	if err != nil {
		t.Fatalf("retry with the same payment: %v", err)
	}
	kept, sr, ok := retry.Kept()
	if !ok || !bytes.Equal(kept.Body, answer.Body) || kept.Text != answer.Text || sr != nil {
		t.Errorf("Kept() = %q %q %+v %v, want the answer, no settlement", kept.Body, kept.Text, sr, ok)
	}
	if sr, err := retry.Settle(ctx, Answer{}); sr != nil || err != nil {
		t.Errorf("Settle of a kept answer = %+v, %v; want nothing", sr, err)
	}
	for _, key := range []string{"k2", ""} {
		_, err := g.Admit(ctx, paidRequest(h, key))
		refusal(t, err, CodePaymentReplayed)
	}
	if v, s := fac.count("/verify")-verifies, fac.count("/settle"); v != 0 || s != 1 {
		t.Errorf("after the retries: %d more verify calls and %d settles, want 0 and 1", v, s)
	}
}

// TestSettleSurvivesHangUp: a request context cancelled before (or while)
// the payment is settled does not stop the settlement; the settled answer
// is kept with its settlement.
func TestSettleSurvivesHangUp(t *testing.T) {
	c := newClock(testNow)
	g, fac := paidGate(t, c, nil)
	h := header(t, evmPayment(t, offered(t, g, KindVerify), randomNonce(t), testNow.Add(time.Minute)))
	adm, err := g.Admit(context.Background(), paidRequest(h, "k1"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sr, err := adm.Settle(ctx, Answer{Body: []byte(`{}`)})
	if err != nil || !sr.Success || fac.count("/settle") != 1 {
		t.Fatalf("Settle after the hang-up = %+v, %v (%d settles), want settled", sr, err, fac.count("/settle"))
	}
	retry, err := g.Admit(context.Background(), paidRequest(h, "k1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, kept, ok := retry.Kept(); !ok || kept == nil || kept.Transaction != sr.Transaction {
		t.Errorf("retry's settlement = %+v, %v; want %+v", kept, ok, sr)
	}
}

// TestPaymentPendingAndReleased: a retry while the payment is still being
// served is a retryable 503 (charged "unknown"); past pendingAbandoned it
// is a replay that says it may have been charged. Work that fails releases
// the payment: the same payment is accepted again.
func TestPaymentPendingAndReleased(t *testing.T) {
	c := newClock(testNow)
	g, fac := paidGate(t, c, nil)
	ctx := context.Background()
	h := header(t, evmPayment(t, offered(t, g, KindVerify), randomNonce(t), testNow.Add(time.Hour)))
	if _, err := g.Admit(ctx, paidRequest(h, "k1")); err != nil {
		t.Fatal(err)
	}
	_, err := g.Admit(ctx, paidRequest(h, "k1"))
	if e := refusalCharged(t, err, CodeFacilitatorUnavailable, ChargeUnknown); e.Status != 503 || !e.Retryable {
		t.Errorf("retry while pending = %d retryable %v", e.Status, e.Retryable)
	}
	c.Set(testNow.Add(pendingAbandoned + time.Minute))
	_, err = g.Admit(ctx, paidRequest(h, "k1"))
	refusalCharged(t, err, CodePaymentReplayed, ChargeUnknown)

	c.Set(testNow)
	h2 := header(t, evmPayment(t, offered(t, g, KindVerify), randomNonce(t), testNow.Add(time.Hour)))
	adm, err := g.Admit(ctx, paidRequest(h2, "k2"))
	if err != nil {
		t.Fatal(err)
	}
	adm.Release()
	if _, err := g.Admit(ctx, paidRequest(h2, "k2")); err != nil {
		t.Errorf("a released payment refused: %v", err)
	}
	if fac.count("/settle") != 0 {
		t.Errorf("settled %d times, want never", fac.count("/settle"))
	}
}

// TestSettleRefusedRecorded: a refused settlement keeps no answer and
// stores no verdict; the same payment again is a replay that says nothing
// was charged.
func TestSettleRefusedRecorded(t *testing.T) {
	c := newClock(testNow)
	g, fac := paidGate(t, c, nil)
	ctx := context.Background()
	h := header(t, evmPayment(t, offered(t, g, KindVerify), randomNonce(t), testNow.Add(time.Minute)))
	adm, err := g.Admit(ctx, paidRequest(h, "k1"))
	if err != nil {
		t.Fatal(err)
	}
	fac.set(func(f *fakeFacilitator) {
		f.settle = func(facilitatorRequest) (int, string) {
			return 200, `{"success":false,"errorReason":"insufficient_funds","transaction":""}`
		}
	})
	v := store.Verdict{VerificationID: "v-withheld", TaskID: "t", AgentID: "seller-1", Result: store.ResultPass,
		VerifiedAt: testNow, KeyVersion: "k", Receipt: []byte(`{}`)}
	_, err = adm.Settle(ctx, Answer{Body: []byte(`{}`), Verdict: &v})
	refusal(t, err, CodeSettlementFailed)
	if _, err := g.st.(store.Store).Receipt(ctx, "v-withheld"); err == nil {
		t.Error("the verdict of a withheld answer was stored")
	}
	_, err = g.Admit(ctx, paidRequest(h, "k1"))
	e := refusal(t, err, CodePaymentReplayed)
	if !strings.Contains(e.Message, "did not settle") {
		t.Errorf("replay of a refused payment says %q", e.Message)
	}
}

// TestFacilitatorOutageLogged: an unreachable facilitator is logged with
// the cause, without its URL or the payer.
func TestFacilitatorOutageLogged(t *testing.T) {
	c := newClock(testNow)
	g, fac := paidGate(t, c, nil)
	var logs bytes.Buffer
	g.SetLog(slog.New(slog.NewTextHandler(&logs, nil)))
	h := header(t, evmPayment(t, offered(t, g, KindVerify), randomNonce(t), testNow.Add(time.Minute)))
	fac.srv.Close()
	_, err := g.Admit(context.Background(), paidRequest(h, "k1"))
	refusal(t, err, CodeFacilitatorUnavailable)
	got := logs.String()
	for _, want := range []string{"level=WARN", "payment facilitator unavailable", "verifying payment", "connection refused"} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
	for _, secret := range []string{fac.srv.URL, "0x3F6F8187C480D0FeE3e9536Eeee62CEED2CACD58"} {
		if strings.Contains(strings.ToLower(got), strings.ToLower(secret)) {
			t.Errorf("log has %q:\n%s", secret, got)
		}
	}
}

// TestVerifyRequestEnded: a request that ends while its payment is being
// verified is not a facilitator outage: the error wraps the context's, no
// warning is logged, and nothing is recorded (the payment stays usable).
func TestVerifyRequestEnded(t *testing.T) {
	c := newClock(testNow)
	g, _ := paidGate(t, c, nil)
	var logs bytes.Buffer
	g.SetLog(slog.New(slog.NewTextHandler(&logs, nil)))
	h := header(t, evmPayment(t, offered(t, g, KindVerify), randomNonce(t), testNow.Add(time.Minute)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := g.Admit(ctx, paidRequest(h, "k1"))
	var refused *Error
	if errors.As(err, &refused) || !errors.Is(err, context.Canceled) {
		t.Errorf("Admit with the request ended = %v, want the context's error", err)
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("a request that ended was logged as an outage:\n%s", logs.String())
	}
	if _, err := g.Admit(context.Background(), paidRequest(h, "k1")); err != nil {
		t.Errorf("the payment after the ended request: %v", err)
	}
}

// TestSettleMessageSaysWhatHappened: an unknown settlement's message says
// what became of the request to the facilitator — an error answer, no
// answer in time, or no connection — not "in time" for all three.
func TestSettleMessageSaysWhatHappened(t *testing.T) {
	for _, tt := range []struct {
		name      string
		fault     func(f *fakeFacilitator)
		want, not string
	}{
		{"error answer", func(f *fakeFacilitator) {
			f.settle = func(facilitatorRequest) (int, string) { return 500, `{"error":"boom"}` }
		}, "answered HTTP 500 instead of a settlement result", "time limit"},
		{"no answer in time", func(f *fakeFacilitator) { f.delay = time.Second }, // past the 300ms timeout
			"did not answer within the time limit", "HTTP"},
		{"no connection", func(f *fakeFacilitator) { f.srv.Close() },
			"connection to the facilitator failed", "time limit"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, fac := paidGate(t, newClock(testNow), nil)
			ctx := context.Background()
			h := header(t, evmPayment(t, offered(t, g, KindVerify), randomNonce(t), testNow.Add(time.Minute)))
			adm, err := g.Admit(ctx, paidRequest(h, "k1"))
			if err != nil {
				t.Fatal(err)
			}
			if tt.name == "no connection" {
				tt.fault(fac)
			} else {
				fac.set(tt.fault)
			}
			_, err = adm.Settle(ctx, Answer{Body: []byte(`{}`)})
			e := refusalCharged(t, err, CodeFacilitatorUnavailable, ChargeUnknown)
			if !strings.Contains(e.Message, tt.want) || strings.Contains(e.Message, tt.not) {
				t.Errorf("message %q: want %q, not %q", e.Message, tt.want, tt.not)
			}
		})
	}
}
