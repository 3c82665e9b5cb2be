package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// faultFacilitator is a facilitator whose settle can be late (answer after
// settleDelay, whatever its caller does: the payment is settled on
// arrival), hang until its caller gives up (settleHang), or refuse
// (settleFail). It counts what it was asked and signals each settle that
// arrives on settleStarted.
type faultFacilitator struct {
	verifies, settles, answered atomic.Int32
	settleStarted               chan struct{}

	mu          sync.Mutex
	settleDelay time.Duration
	settleHang  bool
	settleFail  bool
}

func newFaultFacilitator(t *testing.T) (*faultFacilitator, *httptest.Server) {
	t.Helper()
	f := &faultFacilitator{settleStarted: make(chan struct{}, 16)}
	fs := httptest.NewServer(f)
	t.Cleanup(fs.Close)
	return f, fs
}

func (f *faultFacilitator) set(delay time.Duration, hang, fail bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settleDelay, f.settleHang, f.settleFail = delay, hang, fail
}

func (f *faultFacilitator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Reading the body lets the server notice when the caller gives up.
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/verify":
		f.verifies.Add(1)
		io.WriteString(w, `{"isValid":true,"payer":"0x3F6F8187C480D0FeE3e9536Eeee62CEED2CACD58"}`)
	case "/settle":
		f.settles.Add(1)
		f.settleStarted <- struct{}{}
		f.mu.Lock()
		delay, hang, fail := f.settleDelay, f.settleHang, f.settleFail
		f.mu.Unlock()
		switch {
		case hang:
			<-r.Context().Done()
			return
		case delay > 0:
			time.Sleep(delay)
		}
		if fail {
			io.WriteString(w, `{"success":false,"errorReason":"invalid_exact_evm_insufficient_balance","transaction":"","network":"eip155:84532"}`)
			return
		}
		io.WriteString(w, `{"success":true,"transaction":"0x0b","network":"eip155:84532","payer":"0x3F6F8187C480D0FeE3e9536Eeee62CEED2CACD58"}`)
		if r.Context().Err() == nil {
			f.answered.Add(1)
		}
	default:
		http.NotFound(w, r)
	}
}

// faultServer is the HTTP mode, paid calls only, in front of a fault
// facilitator; timeout bounds each facilitator call.
func faultServer(t *testing.T, timeout time.Duration) (*httptest.Server, *faultFacilitator, *tools.Service) {
	t.Helper()
	fac, fs := newFaultFacilitator(t)
	ts, svc := paymentServer(t, payment.Config{FreePerDay: -1, PayToEVM: testkit.TestPayToEVM, FacilitatorURL: fs.URL,
		Network: payment.Testnet, FacilitatorTimeout: timeout})
	return ts, fac, svc
}

// invoiceOf is the passing invoice request for agent.
func invoiceOf(t *testing.T, agent string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(testkit.ReadTestdata(t, "invoice-pass.json"), &m); err != nil {
		t.Fatal(err)
	}
	m["agent_id"] = agent
	b, _ := json.Marshal(m)
	return b
}

// paymentRequiredOf is the PaymentRequired of the verify routes (from the
// 402 of an unpaid request).
func paymentRequiredOf(t *testing.T, url string, body []byte) (httpResult, payment.PaymentRequired) {
	t.Helper()
	unpaid := do(t, "POST", url+"/verify/schema", body, "")
	pr, err := payment.DecodePaymentRequired(unpaid.header.Get("Payment-Required"))
	if unpaid.status != 402 || err != nil {
		t.Fatalf("unpaid request = %d (%v), want a 402", unpaid.status, err)
	}
	return unpaid, *pr
}

// uniqueAgent is an agent id no other test uses.
func uniqueAgent(prefix string) string {
	return prefix + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// reputationTotal is GET /reputation/{agent}'s total.
func reputationTotal(t *testing.T, url, agent string) float64 {
	t.Helper()
	res := do(t, "GET", url+"/reputation/"+agent, nil, "")
	total, ok := res.body["total"].(float64)
	if res.status != 200 || !ok {
		t.Fatalf("reputation = %d %v", res.status, res.body)
	}
	return total
}

// TestPaidSettleLate: when the facilitator's settle answers only after the
// facilitator timeout, or never (it hangs until the verifier gives up),
// the payment may have gone through: the client is told charged "unknown",
// and the same request with the same payment then gets the kept answer
// (200, the same receipt each time), not payment_replayed, without a
// second settlement or any word to the facilitator. The verdict counts
// once.
func TestPaidSettleLate(t *testing.T) {
	for _, tt := range []struct {
		name  string
		delay time.Duration
		hang  bool
	}{
		{"settle answers late", time.Second, false},
		{"settle hangs until the verifier gives up", 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts, fac, _ := faultServer(t, 300*time.Millisecond)
			fac.set(tt.delay, tt.hang, false)
			agent := uniqueAgent("late")
			body := invoiceOf(t, agent)
			unpaid, _ := paymentRequiredOf(t, ts.URL, body)
			sig := payFor(t, unpaid)

			first := do(t, "POST", ts.URL+"/verify/schema", body, sig)
			if first.status != 503 || first.body["charged"] != "unknown" || first.body["code"] != payment.CodeFacilitatorUnavailable ||
				first.body["retryable"] != true || !strings.Contains(first.body["message"].(string), "same payment") {
				t.Fatalf("late settle = %d %v, want 503 with charged \"unknown\" and how to get the answer", first.status, first.body)
			}
			retry := do(t, "POST", ts.URL+"/verify/schema", body, sig)
			id, _ := retry.body["verification_id"].(string)
			if retry.status != 200 || id == "" || retry.body["result"] != "pass" {
				t.Fatalf("retry with the same payment = %d %v, want the kept answer", retry.status, retry.body)
			}
			again := do(t, "POST", ts.URL+"/verify/schema", body, sig)
			if again.status != 200 || again.body["verification_id"] != id || !testkit.CmpJSON(again.body["attestation"], retry.body["attestation"]) {
				t.Errorf("second retry = %d %v, want the same receipt", again.status, again.body)
			}
			if n := fac.settles.Load(); n != 1 {
				t.Errorf("facilitator saw %d settles, want 1", n)
			}
			if n := fac.verifies.Load(); n != 1 {
				t.Errorf("facilitator saw %d verifies, want 1 (retries are answered locally)", n)
			}
			if got := do(t, "GET", ts.URL+"/receipts/"+id, nil, ""); got.status != 200 {
				t.Errorf("receipt of the kept answer = %d, want 200", got.status)
			}
			if n := reputationTotal(t, ts.URL, agent); n != 1 {
				t.Errorf("reputation total = %v, want the one verdict", n)
			}
		})
	}
}

// TestPaidClientHangsUpDuringSettle: a client that hangs up while its
// payment is being settled does not cancel the settlement; the answer is
// kept, and the same request with the same payment gets it with the
// settlement's Payment-Response.
func TestPaidClientHangsUpDuringSettle(t *testing.T) {
	ts, fac, _ := faultServer(t, 5*time.Second)
	fac.set(500*time.Millisecond, false, false)
	body := invoiceOf(t, uniqueAgent("hangup"))
	unpaid, _ := paymentRequiredOf(t, ts.URL, body)
	sig := payFor(t, unpaid)

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-fac.settleStarted
		cancel() // hang up while the settlement is under way
	}()
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/verify/schema", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Payment-Signature", sig)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the request was answered (%d) before the client hung up", resp.StatusCode)
	}
	retry := retryWhilePending(t, func() httpResult { return do(t, "POST", ts.URL+"/verify/schema", body, sig) })
	sr, err := payment.DecodeSettleResponse(retry.header.Get("Payment-Response"))
	if retry.status != 200 || retry.body["result"] != "pass" || err != nil || !sr.Success {
		t.Fatalf("retry after the hang-up = %d %v (Payment-Response %+v, %v), want the kept answer", retry.status, retry.body, sr, err)
	}
	if n := fac.answered.Load(); n != 1 {
		t.Errorf("settlements answered to the verifier = %d, want 1 (the hang-up must not cancel it)", n)
	}
	if n := fac.settles.Load(); n != 1 {
		t.Errorf("facilitator saw %d settles, want 1", n)
	}
}

// retryWhilePending repeats call while it answers that the payment is
// still being settled (503, charged "unknown"), for up to ten seconds.
func retryWhilePending(t *testing.T, call func() httpResult) httpResult {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := call()
		if res.status != 503 || res.body["charged"] != "unknown" || time.Now().After(deadline) {
			return res
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPaidSettleFailedNotCounted: a verdict whose answer is withheld
// because the settlement failed is not stored: it is in neither the
// agent's reputation nor its score (a paid record of an agent with no
// history).
func TestPaidSettleFailedNotCounted(t *testing.T) {
	ts, fac, _ := faultServer(t, 5*time.Second)
	fac.set(0, false, true)
	agent := uniqueAgent("withheld")
	body := invoiceOf(t, agent)
	unpaid, _ := paymentRequiredOf(t, ts.URL, body)
	failed := do(t, "POST", ts.URL+"/verify/schema", body, payFor(t, unpaid))
	if failed.status != 402 || failed.body["code"] != payment.CodeSettlementFailed || failed.body["charged"] != false {
		t.Fatalf("failed settlement = %d %v", failed.status, failed.body)
	}
	if n := reputationTotal(t, ts.URL, agent); n != 0 {
		t.Errorf("reputation total after a withheld answer = %v, want 0", n)
	}
	unpaidScore := do(t, "GET", ts.URL+"/score/"+agent, nil, "")
	if unpaidScore.status != 402 {
		t.Fatalf("score = %d %v, want 402 (every score is paid)", unpaidScore.status, unpaidScore.body)
	}
	fac.set(0, false, false)
	score := retryWhilePending(t, func() httpResult { return do(t, "GET", ts.URL+"/score/"+agent, nil, payFor(t, unpaidScore)) })
	if score.status != 200 || score.body["has_history"] != false {
		t.Errorf("score after a withheld answer = %d %v, want the record of an agent without history", score.status, score.body)
	}
}

// TestPaidReplayRefusedLocally: a payment already used, sent again for
// another request, is refused as payment_replayed before anything is sent
// to the facilitator.
func TestPaidReplayRefusedLocally(t *testing.T) {
	ts, fac, _ := faultServer(t, 5*time.Second)
	body := invoiceOf(t, uniqueAgent("replay"))
	unpaid, _ := paymentRequiredOf(t, ts.URL, body)
	sig := payFor(t, unpaid)
	if paid := do(t, "POST", ts.URL+"/verify/schema", body, sig); paid.status != 200 {
		t.Fatalf("paid = %d %v", paid.status, paid.body)
	}
	verifies, settles := fac.verifies.Load(), fac.settles.Load()
	for _, other := range [][]byte{invoiceOf(t, uniqueAgent("replay-other")), testkit.WithDetail(t, body, "compact")} {
		replay := do(t, "POST", ts.URL+"/verify/schema", other, sig)
		if replay.status != 402 || replay.body["code"] != payment.CodePaymentReplayed {
			t.Errorf("replay for another request = %d %v, want payment_replayed", replay.status, replay.body)
		}
	}
	if v, s := fac.verifies.Load()-verifies, fac.settles.Load()-settles; v != 0 || s != 0 {
		t.Errorf("the replays cost %d verify and %d settle calls, want none", v, s)
	}
}

// TestMCPPaidSettleFaults: the same faults over MCP (HTTP). A late
// settlement is an error result with charged "unknown", and the same call
// with the same payment gets the kept answer; a client hanging up does not
// cancel the settlement; a failed settlement's verdict is not counted; a
// replay for another call is refused without a facilitator call.
func TestMCPPaidSettleFaults(t *testing.T) {
	ctx := context.Background()
	t.Run("late settle", func(t *testing.T) {
		ts, fac, _ := faultServer(t, 300*time.Millisecond)
		fac.set(time.Second, false, false)
		agent := uniqueAgent("mcp-late")
		body := invoiceOf(t, agent)
		_, pr := paymentRequiredOf(t, ts.URL, body)
		pay := map[string]any{payment.MetaPayment: testkit.MCPPaymentFor(t, pr)}
		first, err := testkit.MCPToolCall(t, ctx, ts.URL+"/mcp", contract.VerifySchema, json.RawMessage(body), pay, "")
		if err != nil {
			t.Fatal(err)
		}
		if e := testkit.Structured(t, &first); !first.IsError || e["charged"] != "unknown" || e["code"] != payment.CodeFacilitatorUnavailable {
			t.Fatalf("late settle = %+v (%v), want an error result with charged \"unknown\"", first, e)
		}
		retry, err := testkit.MCPToolCall(t, ctx, ts.URL+"/mcp", contract.VerifySchema, json.RawMessage(body), pay, "")
		if err != nil {
			t.Fatal(err)
		}
		answer := testkit.Structured(t, &retry)
		if retry.IsError || answer["result"] != "pass" || answer["verification_id"] == nil {
			t.Fatalf("retry with the same payment = %+v, want the kept answer", retry)
		}
		again, _ := testkit.MCPToolCall(t, ctx, ts.URL+"/mcp", contract.VerifySchema, json.RawMessage(body), pay, "")
		if !testkit.CmpJSON(testkit.Structured(t, &again), answer) {
			t.Errorf("second retry = %v, want the same answer %v", testkit.Structured(t, &again), answer)
		}
		if s, v := fac.settles.Load(), fac.verifies.Load(); s != 1 || v != 1 {
			t.Errorf("facilitator saw %d settles and %d verifies, want 1 and 1", s, v)
		}
		if n := reputationTotal(t, ts.URL, agent); n != 1 {
			t.Errorf("reputation total = %v, want the one verdict", n)
		}
	})
	t.Run("client hangs up during settle", func(t *testing.T) {
		ts, fac, _ := faultServer(t, 5*time.Second)
		fac.set(500*time.Millisecond, false, false)
		body := invoiceOf(t, uniqueAgent("mcp-hangup"))
		_, pr := paymentRequiredOf(t, ts.URL, body)
		pay := map[string]any{payment.MetaPayment: testkit.MCPPaymentFor(t, pr)}
		hctx, cancel := context.WithCancel(ctx)
		go func() {
			<-fac.settleStarted
			cancel()
		}()
		if r, err := testkit.MCPToolCall(t, hctx, ts.URL+"/mcp", contract.VerifySchema, json.RawMessage(body), pay, ""); err == nil {
			t.Fatalf("the call was answered (%+v) before the client hung up", r)
		}
		var retry mcp.CallToolResult
		deadline := time.Now().Add(10 * time.Second)
		for {
			var err error
			if retry, err = testkit.MCPToolCall(t, ctx, ts.URL+"/mcp", contract.VerifySchema, json.RawMessage(body), pay, ""); err != nil {
				t.Fatal(err)
			}
			if !retry.IsError || testkit.Structured(t, &retry)["charged"] != "unknown" || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if retry.IsError || testkit.Structured(t, &retry)["result"] != "pass" || retry.Meta[payment.MetaPaymentResponse] == nil {
			t.Fatalf("retry after the hang-up = %+v, want the kept answer with its payment response", retry)
		}
		if a, s := fac.answered.Load(), fac.settles.Load(); a != 1 || s != 1 {
			t.Errorf("settles answered %d of %d, want 1 of 1 (the hang-up must not cancel it)", a, s)
		}
	})
	t.Run("failed settle is not counted", func(t *testing.T) {
		ts, fac, _ := faultServer(t, 5*time.Second)
		fac.set(0, false, true)
		agent := uniqueAgent("mcp-withheld")
		body := invoiceOf(t, agent)
		_, pr := paymentRequiredOf(t, ts.URL, body)
		failed, err := testkit.MCPToolCall(t, ctx, ts.URL+"/mcp", contract.VerifySchema, json.RawMessage(body), map[string]any{payment.MetaPayment: testkit.MCPPaymentFor(t, pr)}, "")
		if err != nil {
			t.Fatal(err)
		}
		if !failed.IsError || failed.Meta["code"] != payment.CodeSettlementFailed {
			t.Fatalf("failed settlement = %+v", failed)
		}
		if n := reputationTotal(t, ts.URL, agent); n != 0 {
			t.Errorf("reputation total after a withheld answer = %v, want 0", n)
		}
	})
	t.Run("replay refused locally", func(t *testing.T) {
		ts, fac, _ := faultServer(t, 5*time.Second)
		body := invoiceOf(t, uniqueAgent("mcp-replay"))
		_, pr := paymentRequiredOf(t, ts.URL, body)
		pay := map[string]any{payment.MetaPayment: testkit.MCPPaymentFor(t, pr)}
		if paid, err := testkit.MCPToolCall(t, ctx, ts.URL+"/mcp", contract.VerifySchema, json.RawMessage(body), pay, ""); err != nil || paid.IsError {
			t.Fatalf("paid call = %+v, %v", paid, err)
		}
		verifies := fac.verifies.Load()
		other := invoiceOf(t, uniqueAgent("mcp-replay-other"))
		replay, err := testkit.MCPToolCall(t, ctx, ts.URL+"/mcp", contract.VerifySchema, json.RawMessage(other), pay, "")
		if err != nil {
			t.Fatal(err)
		}
		if !replay.IsError || replay.Meta["code"] != payment.CodePaymentReplayed {
			t.Errorf("replay for another call = %+v, want payment_replayed", replay)
		}
		if n := fac.verifies.Load() - verifies; n != 0 || fac.settles.Load() != 1 {
			t.Errorf("the replay cost %d verify calls (%d settles in all), want none (1)", n, fac.settles.Load())
		}
	})
}
