package mcpserver

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// paidTool registers a tool that goes through mcpAdmit and mcpSettle like
// verify_schema does over HTTP, and counts the work done.
func paidTool(srv *mcp.Server, svc *tools.Service, g *payment.Gate, work *atomic.Int32) {
	srv.AddTool(&mcp.Tool{Name: contract.VerifySchema + "_paid_probe", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			adm, refused := mcpService{svc}.mcpAdmit(ctx, g, req, int64(len(req.Params.Arguments)), nil)
			if refused != nil {
				return refused, nil
			}
			work.Add(1)
			return mcpService{svc}.mcpSettle(ctx, adm, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the answer"}}}, payment.Answer{Body: []byte(`{"answer":1}`), Text: "the answer"}), nil
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
	r, err := testkit.MCPToolCall(t, context.Background(), url, tool, map[string]any{"x": 1}, meta, xff)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestMCPPayment(t *testing.T) {
	fac := &testkit.FakeFacilitator{}
	fac.SettleOK.Store(true)
	fs := httptest.NewServer(fac)
	defer fs.Close()
	svc := testkit.QuietService(t, true)
	g, err := payment.NewGate(payment.Config{FreePerDay: 1, PayToEVM: testkit.TestPayToEVM, FacilitatorURL: fs.URL, Network: payment.Testnet}, svc.Store, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var work atomic.Int32
	srv := NewMCPServer(svc)
	paidTool(srv, svc, g, &work)
	ts := httptest.NewServer(mcpHTTPHandler(srv, svc.Logger()))
	defer ts.Close()
	tool := contract.VerifySchema + "_paid_probe"

	if r := toolCall(t, ts.URL, tool, nil); r.IsError || r.Meta[payment.MetaPaymentResponse] != nil {
		t.Fatalf("free call = %+v", r)
	}
	unpaid := toolCall(t, ts.URL, tool, nil)
	var pr payment.PaymentRequired
	testkit.DecodeStructured(t, unpaid, &pr)
	if !unpaid.IsError || pr.X402Version != 2 || len(pr.Accepts) != 1 || unpaid.Meta["code"] != payment.CodeFreeTrialExhausted {
		t.Fatalf("payment-required result = %+v", unpaid)
	}
	var fromText payment.PaymentRequired
	if err := json.Unmarshal([]byte(unpaid.Content[0].(*mcp.TextContent).Text), &fromText); err != nil || len(fromText.Accepts) != 1 {
		t.Errorf("content[0].text is not the PaymentRequired: %v", err)
	}
	if pr.Resource.URL != svc.BaseURL()+"/mcp" || pr.Extensions["bazaar"].Info == nil {
		t.Errorf("resource %+v, extensions %+v", pr.Resource, pr.Extensions)
	}

	pay := testkit.MCPPaymentFor(t, pr)
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
	replay, err := testkit.MCPToolCall(t, context.Background(), ts.URL, tool, map[string]any{"x": 2}, map[string]any{payment.MetaPayment: pay}, "")
	if err != nil {
		t.Fatal(err)
	}
	if !replay.IsError || replay.Meta["code"] != payment.CodePaymentReplayed || work.Load() != 2 {
		t.Errorf("replay = %+v after %d calls of work, want payment_replayed and no work", replay, work.Load())
	}

	fac.SettleOK.Store(false)
	failed := toolCall(t, ts.URL, tool, map[string]any{payment.MetaPayment: testkit.MCPPaymentFor(t, pr)})
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
	ts2 := httptest.NewServer(mcpHTTPHandler(srv2, svc.Logger()))
	defer ts2.Close()
	limited := toolCall(t, ts2.URL, tool, nil)
	var e tools.Error
	testkit.DecodeStructured(t, limited, &e)
	if !limited.IsError || e.Code != payment.CodeRateLimited || !e.Retryable || e.RetryAfter == nil {
		t.Errorf("payment off past the allowance = %+v", limited)
	}
}

func TestMCPPaymentClient(t *testing.T) {
	svc := testkit.QuietService(t, true)
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
			g, err := payment.NewGate(payment.Config{FreePerDay: 1, TrustProxy: tt.trustProxy}, testkit.QuietService(t, true).Store, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			srv := NewMCPServer(svc)
			paidTool(srv, svc, g, &work)
			ts := httptest.NewServer(mcpHTTPHandler(srv, svc.Logger()))
			defer ts.Close()
			for i, xff := range []string{"198.51.100.1", "198.51.100.2", "198.51.100.2"} {
				if r := toolCallFrom(t, ts.URL, contract.VerifySchema+"_paid_probe", nil, xff); r.IsError != tt.want[i] {
					t.Errorf("call %d from %s: isError %v, want %v", i+1, xff, r.IsError, tt.want[i])
				}
			}
		})
	}
	if _, refused := (mcpService{svc}).mcpAdmit(context.Background(), nil, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: contract.VerifySchema}}, 10, nil); refused != nil {
		t.Errorf("a nil gate refused a call: %+v", refused)
	}
}

// TestPaymentResultRequestEnded: over MCP, a payment step whose request
// ended (the client went away) answers the retryable unavailable error,
// not an internal error (TestPaymentGateRequestEnded is REST's).
func TestPaymentResultRequestEnded(t *testing.T) {
	svc := testkit.NewTestService(t, false)
	res := mcpService{svc}.paymentResult(context.Canceled)
	var e struct{ Code string }
	raw, _ := res.StructuredContent.(json.RawMessage)
	if err := json.Unmarshal(raw, &e); err != nil || !res.IsError || e.Code != tools.CodeUnavailable {
		t.Errorf("MCP payment result: isError %v, code %q (%v); want the %s error", res.IsError, e.Code, err, tools.CodeUnavailable)
	}
}
