package rest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
	"github.com/verifier-dev/verifier/tools/mcpserver"
)

// TestCanonicalFormsAsRequests sends the canonical form of each published
// request-hash vector (every unused member written as null) as a request,
// over REST and over MCP: each is accepted and answers with the vector's
// request_hash (SPEC §1, §5).
func TestCanonicalFormsAsRequests(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	c := testkit.ConnectMCP(t, mcpserver.NewMCPServer(testkit.QuietService(t, true)))
	for _, name := range []string{"tv-1", "tv-2", "tv-3"} {
		body := testkit.ReadTestdata(t, "request-hash/"+name+".canonical.json")
		want := strings.TrimSpace(string(testkit.ReadTestdata(t, "request-hash/"+name+".sha256")))
		t.Run(name+"/REST", func(t *testing.T) {
			resp, got := f.postJSON(t, "/verify/schema", body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200: %s", resp.StatusCode, got)
			}
			if h := decodeObject(t, got)["request_hash"]; h != want {
				t.Errorf("request_hash = %v, want %s", h, want)
			}
		})
		t.Run(name+"/MCP", func(t *testing.T) {
			res := c.Call(t, contract.VerifySchema, string(body))
			if res.IsError {
				t.Fatalf("isError: %s", testkit.Text(res))
			}
			if h := testkit.Structured(t, res)["request_hash"]; h != want {
				t.Errorf("request_hash = %v, want %s", h, want)
			}
		})
	}
}

// TestVerifyReceiptHostedCard: verify_receipt takes the signer's agent card
// as the hosted service publishes it (testdata/hosted-agent-card.json, whose
// key is the test key of seed 32 × 0x68) and verifies a receipt signed with
// its key; a card naming another publicKeyEncoding is refused as a field
// problem that says which encoding is read.
func TestVerifyReceiptHostedCard(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	seed := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x68}, 32))
	if err := os.WriteFile(filepath.Join(dir, "v1-2026-11a.key"), []byte(seed+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "current"), []byte("v1-2026-11a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hostedKeys, err := signing.OpenKeyStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	signer := testkit.QuietService(t, false)
	signer.Keys = hostedKeys
	res := testkit.ConnectMCP(t, mcpserver.NewMCPServer(signer)).Call(t, contract.VerifySchema, string(testkit.ReadTestdata(t, "invoice-pass.json")))
	if res.IsError {
		t.Fatalf("verify_schema: %s", testkit.Text(res))
	}
	receipt := testkit.StructuredJSON(t, res)
	card := testkit.ReadTestdata(t, "hosted-agent-card.json")

	c := testkit.ConnectMCP(t, mcpserver.NewMCPServer(testkit.QuietService(t, false))) // its own keys: only the card can verify
	report := testkit.Structured(t, c.Call(t, contract.VerifyReceipt, `{"receipt":`+string(receipt)+`,"agent_card":`+string(card)+`}`))
	if report["valid"] != true || report["key_source"] != "agent_card" || report["key_version"] != "v1-2026-11a" {
		t.Errorf("verify_receipt with the hosted card = %v, want valid, key_source agent_card, key v1-2026-11a", report)
	}
	// Without the card the server's own keys cannot vouch for it: the
	// receipt (made without a public URL) is checked only with the key it
	// carries, which proves it intact, not who signed it (the precondition
	// of the check above).
	without := testkit.Structured(t, c.Call(t, contract.VerifyReceipt, `{"receipt":`+string(receipt)+`}`))
	if without["key_source"] != "receipt" {
		t.Errorf("verify_receipt without the card = %v, want it checked by the receipt's own key (key_source receipt), not the server's", without)
	}

	bad := strings.Replace(string(card), `"base64 of the raw 32-byte Ed25519 public key"`, `"base64"`, 1)
	res = c.Call(t, contract.VerifyReceipt, `{"receipt":`+string(receipt)+`,"agent_card":`+bad+`}`)
	testkit.WantError(t, res, tools.CodeInvalidRequest, 422, "agent_card")
	if !strings.Contains(testkit.Text(res), `base64 of the raw 32-byte Ed25519 public key`) {
		t.Errorf("the refusal does not say which encoding is read: %s", testkit.Text(res))
	}
	res = c.Call(t, contract.VerifyReceipt, `{"receipt":`+string(receipt)+`,"agent_card":`+string(card)+`,"public_key":"`+seed+`"}`)
	testkit.WantError(t, res, tools.CodeInvalidRequest, 422, "agent_card")
}

// TestVerifyBlockServiceName: verify.service is the hosted service's name,
// in full and compact answers.
func TestVerifyBlockServiceName(t *testing.T) {
	c := testkit.ConnectMCP(t, mcpserver.NewMCPServer(testkit.QuietService(t, false)))
	for _, detail := range []string{"full", "compact"} {
		ans := testkit.Structured(t, c.Call(t, contract.VerifySchema, string(testkit.WithDetail(t, testkit.ReadTestdata(t, "invoice-pass.json"), detail))))
		verify, _ := ans["verify"].(map[string]any)
		if verify["service"] != "Agent Output Verifier" {
			t.Errorf("%s answer: verify.service = %v, want \"Agent Output Verifier\"", detail, verify["service"])
		}
	}
}

// freeTrialMembers are the free_trial members the hosted service documents
// (SPEC §7), then ours.
var freeTrialMembers = []string{
	"available", "via", "transport", "url", "tool", "calls_per_client_per_day", "remaining_calls_today",
	"resets_at", "client", "rest_free", "launch", "message",
	"reason", "max_free_body_bytes", "covers",
}

// TestFreeTrialMembers: a 402's free_trial carries every documented
// member, with this server's MCP URL, over REST and in MCP's _meta; code is
// free_trial_exhausted once the allowance is used up, and absent before.
func TestFreeTrialMembers(t *testing.T) {
	fac := &testkit.FakeFacilitator{}
	fac.SettleOK.Store(true)
	fs := httptest.NewServer(fac)
	defer fs.Close()
	ts, svc := paymentServer(t, payment.Config{FreePerDay: 1, PayToEVM: testkit.TestPayToEVM, FacilitatorURL: fs.URL, Network: payment.Testnet})
	invoice := testkit.ReadTestdata(t, "invoice-pass.json")

	check := func(t *testing.T, ft map[string]any, remaining int, exhausted bool) {
		t.Helper()
		for _, name := range freeTrialMembers {
			if _, ok := ft[name]; !ok && name != "reason" {
				t.Errorf("free_trial lacks %s: %v", name, ft)
			}
		}
		want := map[string]any{
			"available": remaining > 0, "via": "mcp+rest", "transport": "streamable-http", "url": svc.PublicURL + "/mcp",
			"tool": "verify_schema", "calls_per_client_per_day": float64(1), "remaining_calls_today": float64(remaining), "rest_free": true,
		}
		for name, v := range want {
			if ft[name] != v {
				t.Errorf("free_trial.%s = %v, want %v", name, ft[name], v)
			}
		}
		if resets, _ := ft["resets_at"].(string); resets == "" {
			t.Errorf("free_trial.resets_at = %v, want a time", ft["resets_at"])
		} else if _, err := time.Parse(time.RFC3339, resets); err != nil {
			t.Errorf("free_trial.resets_at %q: %v", resets, err)
		}
		if ft["client"] != payment.FreeTrialClient {
			t.Errorf("free_trial.client = %q, want the hosted service's %q", ft["client"], payment.FreeTrialClient)
		}
		if ft["launch"] != true {
			t.Errorf("free_trial.launch = %v, want true (the hosted body's boolean)", ft["launch"])
		}
		msg, _ := ft["message"].(string)
		if exhausted {
			want := "Free during launch. This client's 1 free checks for today are used up (REST and MCP share them); they reset at " +
				fmt.Sprint(ft["resets_at"]) + ". Payment applies until then."
			if msg != want {
				t.Errorf("free_trial.message = %q, want the hosted sentence %q", msg, want)
			}
		} else if !strings.HasPrefix(msg, "Free during launch. No sign-up, API key or wallet") || !strings.Contains(msg, fmt.Sprintf("%d of 1 free checks left", remaining)) {
			t.Errorf("free_trial.message = %q, want how to start and what is left today", msg)
		}
		if code, has := ft["code"]; exhausted != has || (exhausted && code != payment.CodeFreeTrialExhausted) {
			t.Errorf("free_trial.code = %v (present %v), want free_trial_exhausted only when used up (%v)", code, has, exhausted)
		}
		for name := range ft {
			if !slices.Contains(freeTrialMembers, name) && name != "code" {
				t.Errorf("free_trial has an undocumented member %s", name)
			}
		}
	}

	// Before the allowance is used: a score (never free) shows it whole.
	score := do(t, "GET", ts.URL+"/score/nobody", nil, "")
	ft, _ := score.body["free_trial"].(map[string]any)
	if score.status != 402 {
		t.Fatalf("score = %d %v, want 402", score.status, score.body)
	}
	check(t, ft, 1, false)

	if free := do(t, "POST", ts.URL+"/verify/schema", invoice, ""); free.status != 200 {
		t.Fatalf("first call = %d, want free", free.status)
	}
	unpaid := do(t, "POST", ts.URL+"/verify/schema", invoice, "")
	ft, _ = unpaid.body["free_trial"].(map[string]any)
	if unpaid.status != 402 {
		t.Fatalf("second call = %d %v, want 402", unpaid.status, unpaid.body)
	}
	check(t, ft, 0, true)

	r := callTool(t, ts.URL+"/mcp", contract.VerifySchema, json.RawMessage(invoice))
	if !r.IsError || r.Meta["code"] != payment.CodeFreeTrialExhausted {
		t.Fatalf("MCP call past the allowance = %+v, want the payment-required result", r)
	}
	metaTrial, _ := json.Marshal(r.Meta["free_trial"])
	var mcpFT map[string]any
	if err := json.Unmarshal(metaTrial, &mcpFT); err != nil {
		t.Fatal(err)
	}
	check(t, mcpFT, 0, true)
}

// TestRecordOfUnknownAgentIsPaidOverMCP: with payment on,
// get_verification_record for an agent with no history asks for payment
// like any other (TestHTTPPaymentOn pays for one over REST); with payment
// off it is free.
func TestRecordOfUnknownAgentIsPaidOverMCP(t *testing.T) {
	fac := &testkit.FakeFacilitator{}
	fac.SettleOK.Store(true)
	fs := httptest.NewServer(fac)
	defer fs.Close()
	ts, _ := paymentServer(t, payment.Config{FreePerDay: 5, PayToEVM: testkit.TestPayToEVM, FacilitatorURL: fs.URL, Network: payment.Testnet})
	r := callTool(t, ts.URL+"/mcp", contract.Record, json.RawMessage(`{"agent_id":"nobody-yet"}`))
	var pr payment.PaymentRequired
	testkit.DecodeStructured(t, r, &pr)
	if !r.IsError || r.Meta["code"] != payment.CodePaymentRequired || len(pr.Accepts) == 0 {
		t.Errorf("record of an unknown agent with payment on = %+v, want a payment-required result", r)
	}

	off, _ := paymentServer(t, payment.Config{FreePerDay: 5})
	if r := callTool(t, off.URL+"/mcp", contract.Record, json.RawMessage(`{"agent_id":"nobody-yet"}`)); r.IsError {
		t.Errorf("record of an unknown agent with payment off is refused: %+v", r)
	}
}

// answerTextCases are requests whose answer text (errors, errors_detail,
// flags, hints) TestAnswerTextGolden holds to a golden: the documented
// invoice example (total written 135.0, line totals summing to 129.5,
// enforce_rules true) and one failure of every rule type and a bound.
func answerTextCases(t *testing.T) []struct{ name, body string } {
	const everyCheck = `{"task_id":"wording","expected_schema":{"type":"object"},"enforce_rules":true,
	"submitted_output":{"items":[{"id":"a","qty":0,"price":10.5},{"id":"a","qty":3,"price":2}],"max_qty":2,
	  "currency":"GBP","allowed":["USD","EUR"],"due":"2027-02-01","weight":1e3,"counts":[1,2]},
	"bounds":{"due":{"min":"2026-01-01","max":"2026-12-31"},"weight":{"max":500},"absent":{"min":0}},
	"rules":[
	  {"type":"gte","field":"items[].qty","value":1.0},
	  {"type":"lte","field":"items[].qty","other_field":"max_qty"},
	  {"type":"exists_in","field":"currency","in_field":"allowed[]"},
	  {"type":"exists_in","field":"items[].id","values":["b","c"]},
	  {"type":"unique","field":"items[].id"},
	  {"type":"sum_equals","field":"items[].price","equals":12.0},
	  {"type":"sum_equals","field":"counts[]","equals":4},
	  {"type":"sum_equals","field":"items[].qty","equals_field":"nowhere"},
	  {"type":"gte","field":"currency","value":0},
	  {"type":"unique","field":"missing[]"}]}`
	return []struct{ name, body string }{
		{"invoice-sum", string(testkit.ReadTestdata(t, "invoice-sum.json"))},
		{"every-check", everyCheck},
		{"keyword-typo", `{"task_id":"typo","expected_schema":{"type":"object","requried":["total"],` +
			`"properties":{"total":{"type":"number","minimun":0}},"x-foo":1},"submitted_output":{"total":-1}}`},
	}
}

// TestAnswerTextGolden holds the answer's text to
// testdata/answer-text.golden.json (refresh with -update): the wording of
// every integrity check, from the one table in engine/wording.go.
func TestAnswerTextGolden(t *testing.T) {
	svc := testkit.QuietService(t, false)
	got := map[string]any{}
	for _, c := range answerTextCases(t) {
		v, err := svc.Verify(t.Context(), []byte(c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var ans map[string]any
		if err := json.Unmarshal(v.Answer, &ans); err != nil {
			t.Fatal(err)
		}
		text := map[string]any{}
		for _, k := range []string{"errors", "errors_detail", "flags", "hints"} {
			text[k] = ans[k]
		}
		got[c.name] = text
	}
	gotJSON, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	gotJSON = append(gotJSON, '\n')
	testkit.CheckGolden(t, filepath.Join("testdata", "answer-text.golden.json"), gotJSON)

	// The documented example, line by line (SPEC §4).
	inv := got["invoice-sum"].(map[string]any)
	line := "enforce_rules: consistency:sum_equals at 'line_items[].line_total': values sum to 129.5, expected total (135.0)"
	detail := inv["errors_detail"].([]any)[0].(map[string]any)
	flag := inv["flags"].([]any)[0].(map[string]any)
	hint := inv["hints"].([]any)[0].(map[string]any)
	for _, c := range []struct{ what, got, want string }{
		{"errors[0]", inv["errors"].([]any)[0].(string), line},
		{"errors_detail[0].check", detail["check"].(string), "consistency:sum_equals"},
		{"errors_detail[0].path", detail["path"].(string), "$.line_items[].line_total"},
		{"errors_detail[0].expected", detail["expected"].(string), "a sum equal to total (135.0)"},
		{"errors_detail[0].found", detail["found"].(string), "sum 129.5"},
		{"errors_detail[0].message", detail["message"].(string), line},
		{"flags[0].field", flag["field"].(string), "line_items[].line_total"},
		{"flags[0].detail", flag["detail"].(string), "values sum to 129.5, expected total (135.0)"},
		{"hints[0].path", hint["path"].(string), "$.line_items[].line_total"},
		{"hints[0].expected", hint["expected"].(string), "a sum equal to total (135.0)"},
		{"hints[0].found", hint["found"].(string), "sum 129.5"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
}

// TestMCPStringifiedOutputHint: over MCP, submitted_output sent as a string
// holding the JSON object the schema wants gets a hint to send the value
// itself.
func TestMCPStringifiedOutputHint(t *testing.T) {
	c := testkit.ConnectMCP(t, mcpserver.NewMCPServer(testkit.QuietService(t, false)))
	res := c.Call(t, contract.VerifySchema, `{"task_id":"t","expected_schema":{"type":"object"},"submitted_output":"{\"total\": 5}"}`)
	ans := testkit.Structured(t, res)
	hints, _ := ans["hints"].([]any)
	if len(hints) != 1 {
		t.Fatalf("hints = %v, want the schema:type hint", ans["hints"])
	}
	hint := hints[0].(map[string]any)
	if hint["check"] != "schema:type" || !strings.Contains(hint["expected"].(string), "not a string holding JSON") {
		t.Errorf("hint = %v, want schema:type saying to send the value itself", hint)
	}
}

// TestRecordInvalidAgentIDBeforePayment: with payment on, a
// get_verification_record call whose agent_id is invalid is refused as
// invalid_request before any payment step (a record of an agent with no
// history is paid now, so the check must come before the gate).
func TestRecordInvalidAgentIDBeforePayment(t *testing.T) {
	fac := &testkit.FakeFacilitator{}
	fac.SettleOK.Store(true)
	fs := httptest.NewServer(fac)
	defer fs.Close()
	ts, _ := paymentServer(t, payment.Config{FreePerDay: 5, PayToEVM: testkit.TestPayToEVM, FacilitatorURL: fs.URL, Network: payment.Testnet})
	for _, id := range []string{`""`, `"` + strings.Repeat("x", 201) + `"`} {
		r := callTool(t, ts.URL+"/mcp", contract.Record, json.RawMessage(`{"agent_id":`+id+`}`))
		if !r.IsError || resultCode(t, r) != tools.CodeInvalidRequest {
			t.Errorf("agent_id %.10s…: isError %v code %q, want invalid_request before payment", id, r.IsError, resultCode(t, r))
		}
	}
}
