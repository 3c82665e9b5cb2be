package rest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// invalidSchemaRequest decodes but its expected_schema does not compile:
// only compiling finds the problem.
const invalidSchemaRequest = `{"task_id":"t","expected_schema":{"type":"object","properties":{"n":{"type":5}}},"submitted_output":{"n":1}}`

// mcpCall posts one tools/call with arguments and _meta (nil: none).
func mcpCall(t *testing.T, url, tool string, args json.RawMessage, meta map[string]any) mcp.CallToolResult {
	t.Helper()
	params := map[string]any{"name": tool, "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var msg struct {
		Result mcp.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil {
		t.Fatalf("response %s: %v", raw, err)
	}
	return msg.Result
}

// TestInvalidSchemaBeforePayment: a request whose expected_schema does not
// compile is a 422 before any payment step, over REST and MCP, past the
// free allowance and with a payment attached: never a 402, the facilitator
// never asked, the payment left unused (it pays for a valid request
// afterwards). A valid request is still asked to pay.
func TestInvalidSchemaBeforePayment(t *testing.T) {
	valid := testkit.ReadTestdata(t, "invoice-pass.json")
	for _, tt := range []struct {
		name string
		// payment pays for what an unpaid valid call is refused.
		payment func(t *testing.T, base string, body []byte) any
		// Call sends body with pay (nil: no payment) and returns the HTTP
		// status (over MCP: the error object's, 402 for x402's
		// PaymentRequired, 200 for an answer) and the error code.
		call func(t *testing.T, base string, body []byte, pay any) (status int, code string)
	}{
		{
			name: "REST",
			payment: func(t *testing.T, base string, body []byte) any {
				return payFor(t, do(t, "POST", base+"/verify/schema", body, ""))
			},
			call: func(t *testing.T, base string, body []byte, pay any) (int, string) {
				sig, _ := pay.(string)
				res := do(t, "POST", base+"/verify/schema", body, sig)
				code, _ := res.body["code"].(string)
				return res.status, code
			},
		},
		{
			name: "MCP",
			payment: func(t *testing.T, base string, body []byte) any {
				var pr payment.PaymentRequired
				testkit.DecodeStructured(t, mcpCall(t, base+"/mcp", contract.VerifySchema, body, nil), &pr)
				return map[string]any{payment.MetaPayment: testkit.MCPPaymentFor(t, pr)}
			},
			call: func(t *testing.T, base string, body []byte, pay any) (int, string) {
				meta, _ := pay.(map[string]any)
				r := mcpCall(t, base+"/mcp", contract.VerifySchema, body, meta)
				if !r.IsError {
					return http.StatusOK, ""
				}
				if e, ok := r.Meta["error"].(map[string]any); ok { // x402's PaymentRequired
					code, _ := e["code"].(string)
					return http.StatusPaymentRequired, code
				}
				var e struct {
					Code   string `json:"code"`
					Status int    `json:"status"`
				}
				testkit.DecodeStructured(t, r, &e)
				return e.Status, e.Code
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fac := &testkit.FakeFacilitator{}
			fac.SettleOK.Store(true)
			fs := httptest.NewServer(fac)
			defer fs.Close()
			ts, svc := paymentServer(t, payment.Config{FreePerDay: -1, PayToEVM: testkit.TestPayToEVM, FacilitatorURL: fs.URL, Network: payment.Testnet})

			if status, code := tt.call(t, ts.URL, valid, nil); status != http.StatusPaymentRequired || code != payment.CodePaymentRequired {
				t.Fatalf("valid unpaid = %d %s, want 402 payment_required", status, code)
			}
			if status, code := tt.call(t, ts.URL, []byte(invalidSchemaRequest), nil); status != http.StatusUnprocessableEntity || code != tools.CodeInvalidRequest {
				t.Errorf("invalid schema unpaid = %d %s, want 422 invalid_request", status, code)
			}
			pay := tt.payment(t, ts.URL, valid)
			if status, code := tt.call(t, ts.URL, []byte(invalidSchemaRequest), pay); status != http.StatusUnprocessableEntity || code != tools.CodeInvalidRequest {
				t.Errorf("invalid schema paid = %d %s, want 422 invalid_request", status, code)
			}
			if n := fac.Verifies.Load(); n != 0 {
				t.Errorf("the facilitator verified %d payment(s) of an invalid request", n)
			}
			if status, code := tt.call(t, ts.URL, valid, pay); status != http.StatusOK {
				t.Errorf("the payment sent with the invalid request does not pay for a valid one: %d %s", status, code)
			}
			if v, s := fac.Verifies.Load(), fac.Settles.Load(); v != 1 || s != 1 {
				t.Errorf("facilitator verified %d, settled %d; want 1, 1", v, s)
			}
			if n := svc.Engine.CachedSchemas(); n != 1 {
				t.Errorf("%d schemas cached, want 1: the paid work caches the schema it compiled", n)
			}
		})
	}
}
