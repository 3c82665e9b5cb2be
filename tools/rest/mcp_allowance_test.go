package rest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
	"github.com/verifier-dev/verifier/tools/mcpserver"
)

// callTool posts one tools/call with the given arguments to an MCP endpoint.
func callTool(t *testing.T, url, tool string, args json.RawMessage) mcp.CallToolResult {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var msg struct {
		Result mcp.CallToolResult `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	return msg.Result
}

// resultCode is the error code a tool result carries in its structured
// content.
func resultCode(t *testing.T, r mcp.CallToolResult) string {
	t.Helper()
	var e struct{ Code string }
	testkit.DecodeStructured(t, r, &e)
	return e.Code
}

// TestMCPToolsShareTheAllowance drives the real verify_schema and
// get_verification_record handlers over HTTP with payment off and an
// allowance of one call: the second verification is rate limited, an invalid
// request is still a 422, and a record (of an unknown agent too) stays free
// with payment off.
func TestMCPToolsShareTheAllowance(t *testing.T) {
	svc := testkit.NewTestService(t, true)
	srv := oneFreeCallMCPServer(t, svc)

	request := json.RawMessage(testkit.ReadTestdata(t, "invoice-pass.json"))
	if r := callTool(t, srv.URL, contract.VerifySchema, request); r.IsError {
		t.Fatalf("first call (free) isError: %+v", r.Content)
	}
	if r := callTool(t, srv.URL, contract.VerifySchema, json.RawMessage(`{"task_id":"t"}`)); !r.IsError || resultCode(t, r) != tools.CodeInvalidRequest {
		t.Errorf("invalid request past the allowance: isError %v code %q, want invalid_request", r.IsError, resultCode(t, r))
	}
	if r := callTool(t, srv.URL, contract.VerifySchema, request); !r.IsError || resultCode(t, r) != tools.CodeRateLimited {
		t.Errorf("second call: isError %v code %q, want rate_limited", r.IsError, resultCode(t, r))
	}
	if r := callTool(t, srv.URL, contract.Record, json.RawMessage(`{"agent_id":"nobody-yet"}`)); r.IsError {
		t.Errorf("record of an agent without history is refused: %+v", r.Content)
	}
}

// TestMCPUnansweredCallGivesBackItsFreeCall: a verify_schema call admitted
// on the free allowance whose work is turned away (every verification slot
// taken: a 503) gives its free call back, so the client's next call is
// still free.
func TestMCPUnansweredCallGivesBackItsFreeCall(t *testing.T) {
	svc := testkit.NewTestService(t, true)
	svc.Limiter = tools.NewLimiter(1)
	srv := oneFreeCallMCPServer(t, svc)

	request := json.RawMessage(testkit.ReadTestdata(t, "invoice-pass.json"))
	release, busy := svc.Limiter.Acquire(t.Context(), 0) // the only slot
	if busy != nil {
		t.Fatal(busy)
	}
	if r := callTool(t, srv.URL, contract.VerifySchema, request); !r.IsError || resultCode(t, r) != tools.CodeUnavailable {
		t.Fatalf("call with every slot taken: isError %v code %q, want unavailable", r.IsError, resultCode(t, r))
	}
	release()
	if r := callTool(t, srv.URL, contract.VerifySchema, request); r.IsError {
		t.Fatalf("next call is not free: the unanswered call kept the free call: %+v", r.Content)
	}
	if r := callTool(t, srv.URL, contract.VerifySchema, request); !r.IsError || resultCode(t, r) != tools.CodeRateLimited {
		t.Errorf("third call: isError %v code %q, want rate_limited (the answered call used the allowance)", r.IsError, resultCode(t, r))
	}
}

// oneFreeCallMCPServer serves svc's MCP endpoint over HTTP with payment off
// and a free allowance of one call per client and day.
func oneFreeCallMCPServer(t *testing.T, svc *tools.Service) *httptest.Server {
	t.Helper()
	gate, err := payment.NewGate(payment.Config{FreePerDay: 1}, svc.Store, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	WithPayment(svc, &HTTPOptions{}, gate)
	srv := httptest.NewServer(mcpserver.NewMCPHandler(svc))
	t.Cleanup(srv.Close)
	return srv
}
