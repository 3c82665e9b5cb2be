package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifier-dev/verifier/payment"
)

// paidTool registers a tool that goes through mcpAdmit and mcpSettle like
// verify_schema does over HTTP, and counts the work done.
func paidTool(srv *mcp.Server, svc *Service, g *payment.Gate, work *atomic.Int32) {
	srv.AddTool(&mcp.Tool{Name: ToolVerifySchema + "_paid_probe", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			adm, refused := svc.mcpAdmit(ctx, g, req, int64(len(req.Params.Arguments)), nil)
			if refused != nil {
				return refused, nil
			}
			work.Add(1)
			return svc.mcpSettle(ctx, adm, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the answer"}}}, payment.Answer{Body: []byte(`{"answer":1}`), Text: "the answer"}), nil
		})
}

// toolCall posts one tools/call with _meta and returns the result.
func toolCall(t *testing.T, url, tool string, meta map[string]any) mcp.CallToolResult {
	t.Helper()
	return toolCallFrom(t, url, tool, meta, "")
}

// toolCallFrom is toolCall with an X-Forwarded-For header (when not "").
func toolCallFrom(t *testing.T, url, tool string, meta map[string]any, xff string) mcp.CallToolResult {
	t.Helper()
	r, err := mcpToolCall(t, context.Background(), url, tool, map[string]any{"x": 1}, meta, xff)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// decodeStructured decodes a result's structured content.
func decodeStructured(t *testing.T, r mcp.CallToolResult, v any) {
	t.Helper()
	b, _ := json.Marshal(r.StructuredContent)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

// mcpPaymentFor is an x402/payment object for the first requirement.
func mcpPaymentFor(t *testing.T, pr payment.PaymentRequired) map[string]any {
	t.Helper()
	req := pr.Accepts[0]
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	p := map[string]any{"x402Version": 2, "resource": pr.Resource, "accepted": req, "payload": map[string]any{
		"signature": "0x" + strings.Repeat("ab", 65),
		"authorization": map[string]any{"from": "0x3F6F8187C480D0FeE3e9536Eeee62CEED2CACD58", "to": req.PayTo, "value": req.Amount,
			"validAfter": "0", "validBefore": strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10), "nonce": "0x" + hex.EncodeToString(b)},
	}}
	return p
}

func TestMCPPayment(t *testing.T) {
	fac := &fakeFacilitator{}
	fac.settleOK.Store(true)
	fs := httptest.NewServer(fac)
	defer fs.Close()
	svc := quietService(t, true)
	g, err := payment.NewGate(payment.Config{FreePerDay: 1, PayToEVM: testPayToEVM, FacilitatorURL: fs.URL, Network: payment.Testnet}, svc.Store, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var work atomic.Int32
	srv := NewMCPServer(svc)
	paidTool(srv, svc, g, &work)
	ts := httptest.NewServer(mcpHTTPHandler(srv, svc.log()))
	defer ts.Close()
	tool := ToolVerifySchema + "_paid_probe"

	if r := toolCall(t, ts.URL, tool, nil); r.IsError || r.Meta[payment.MetaPaymentResponse] != nil {
		t.Fatalf("free call = %+v", r)
	}
	unpaid := toolCall(t, ts.URL, tool, nil)
	var pr payment.PaymentRequired
	decodeStructured(t, unpaid, &pr)
	if !unpaid.IsError || pr.X402Version != 2 || len(pr.Accepts) != 1 || unpaid.Meta["code"] != payment.CodeFreeTrialExhausted {
		t.Fatalf("payment-required result = %+v", unpaid)
	}
	var fromText payment.PaymentRequired
	if err := json.Unmarshal([]byte(unpaid.Content[0].(*mcp.TextContent).Text), &fromText); err != nil || len(fromText.Accepts) != 1 {
		t.Errorf("content[0].text is not the PaymentRequired: %v", err)
	}
	if pr.Resource.URL != svc.publicURL()+"/mcp" || pr.Extensions["bazaar"].Info == nil {
		t.Errorf("resource %+v, extensions %+v", pr.Resource, pr.Extensions)
	}

	pay := mcpPaymentFor(t, pr)
	paid := toolCall(t, ts.URL, tool, map[string]any{payment.MetaPayment: pay})
	var sr payment.SettleResponse
	b, _ := json.Marshal(paid.Meta[payment.MetaPaymentResponse])
	if err := json.Unmarshal(b, &sr); paid.IsError || err != nil || !sr.Success || sr.Transaction == "" {
		t.Fatalf("paid call = %+v (payment-response %s)", paid, b)
	}
	// The same payment for the same call: the kept answer, no work; for
	// another call: refused as a replay.
	again := toolCall(t, ts.URL, tool, map[string]any{payment.MetaPayment: pay})
	if again.IsError || work.Load() != 2 || !cmp.Equal(again.Meta, paid.Meta) {
		t.Errorf("same payment, same call = %+v after %d calls of work, want the kept answer and no work", again, work.Load())
	}
	replay, err := mcpToolCall(t, context.Background(), ts.URL, tool, map[string]any{"x": 2}, map[string]any{payment.MetaPayment: pay}, "")
	if err != nil {
		t.Fatal(err)
	}
	if !replay.IsError || replay.Meta["code"] != payment.CodePaymentReplayed || work.Load() != 2 {
		t.Errorf("replay = %+v after %d calls of work, want payment_replayed and no work", replay, work.Load())
	}

	fac.settleOK.Store(false)
	failed := toolCall(t, ts.URL, tool, map[string]any{payment.MetaPayment: mcpPaymentFor(t, pr)})
	if !failed.IsError || failed.Meta["code"] != payment.CodeSettlementFailed || strings.Contains(failed.Content[0].(*mcp.TextContent).Text, "the answer") {
		t.Errorf("failed settlement = %+v, want settlement_failed and the output withheld", failed)
	}

	// Payment off: past the allowance, the ordinary rate_limited error result.
	off, err := payment.NewGate(payment.Config{FreePerDay: -1}, svc.Store, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv2 := NewMCPServer(svc)
	paidTool(srv2, svc, off, &work)
	ts2 := httptest.NewServer(mcpHTTPHandler(srv2, svc.log()))
	defer ts2.Close()
	limited := toolCall(t, ts2.URL, tool, nil)
	var e Error
	decodeStructured(t, limited, &e)
	if !limited.IsError || e.Code != payment.CodeRateLimited || !e.Retryable || e.RetryAfter == nil {
		t.Errorf("payment off past the allowance = %+v", limited)
	}
}

func TestMCPPaymentClient(t *testing.T) {
	svc := quietService(t, true)
	var work atomic.Int32
	for _, tt := range []struct {
		name       string
		trustProxy bool
		want       []bool // isError of three calls from two forwarded addresses
	}{
		{"connection address", false, []bool{false, true, true}},
		{"X-Forwarded-For with trust-proxy", true, []bool{false, false, true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, err := payment.NewGate(payment.Config{FreePerDay: 1, TrustProxy: tt.trustProxy}, quietService(t, true).Store, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			srv := NewMCPServer(svc)
			paidTool(srv, svc, g, &work)
			ts := httptest.NewServer(mcpHTTPHandler(srv, svc.log()))
			defer ts.Close()
			for i, xff := range []string{"198.51.100.1", "198.51.100.2", "198.51.100.2"} {
				if r := toolCallFrom(t, ts.URL, ToolVerifySchema+"_paid_probe", nil, xff); r.IsError != tt.want[i] {
					t.Errorf("call %d from %s: isError %v, want %v", i+1, xff, r.IsError, tt.want[i])
				}
			}
		})
	}
	if _, refused := svc.mcpAdmit(context.Background(), nil, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: ToolVerifySchema}}, 10, nil); refused != nil {
		t.Errorf("a nil gate refused a call: %+v", refused)
	}
}
