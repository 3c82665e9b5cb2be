package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

func TestMCPVerifySchema(t *testing.T) {
	svc := testkit.QuietService(t, true)
	c := testkit.ConnectMCP(t, NewMCPServer(svc))
	tests := []struct {
		name          string
		args          string
		result        string
		wantFirstLine string   // the text's first line, when set
		wantText      []string // the text contains each
		wantActions   []string // next_actions' actions, when set
		wantFields    []string // keys the structured answer must have
		noFields      []string // keys it must not have
	}{
		{
			name: "pass", args: string(testkit.ReadTestdata(t, "invoice-pass.json")), result: "pass",
			wantText:   []string{"PASS: task \"inv-2026-0042\", agent \"seller-7\"", "schema_compliance ", "overall ", "attach this signed answer"},
			wantFields: []string{"hints", "request_hash", "overall"},
		},
		{
			name: "fail", args: string(testkit.ReadTestdata(t, "invoice-fail.json")), result: "fail",
			wantText:   []string{"FAIL: task \"inv-2026-0043\"", "blocking checks failed: schema:", "Hints (3 of ", "- schema:", "repair the output using the hints"},
			wantFields: []string{"hints", "errors_detail", "flags"},
		},
		{
			name: "compact fail", args: string(testkit.WithDetail(t, testkit.ReadTestdata(t, "invoice-fail.json"), "compact")), result: "fail",
			wantText: []string{"FAIL", "Hints (3 of "},
			noFields: []string{"hints", "request_hash", "overall"},
		},
		{
			name: "pass with warnings", result: "pass",
			args: `{"task_id":"t-2","expected_schema":{"type":"object"},"submitted_output":{"a":2,"b":1},` +
				`"rules":[{"type":"lte","field":"a","other_field":"b"},{"type":"gte","field":"b","value":5}]}`,
			wantFirstLine: `PASS with 2 warnings: task "t-2": every blocking check held.`,
			wantText:      []string{"Warnings (not blocking) (2 of 2)", "review the warnings, then proceed to payment"},
			wantActions:   []string{"attach_receipt", "review_warnings", "proceed_to_payment"},
		},
		{
			name: "pass with a misspelt keyword", result: "pass",
			args:          `{"task_id":"t-3","expected_schema":{"type":"object","requried":["a"]},"submitted_output":{"a":1}}`,
			wantFirstLine: `PASS with 1 warning: task "t-3": every blocking check held.`,
			wantActions:   []string{"attach_receipt", "review_warnings", "proceed_to_payment"},
		},
		{
			name: "compact pass with warnings", result: "pass",
			args: `{"task_id":"t-4","detail":"compact","expected_schema":{"type":"object"},"submitted_output":{"a":2,"b":1},` +
				`"rules":[{"type":"lte","field":"a","other_field":"b"}]}`,
			wantFirstLine: `PASS with 1 warning: task "t-4": every blocking check held.`,
			wantActions:   []string{"attach_receipt", "review_warnings", "proceed_to_payment"},
		},
		{
			name: "boolean schema, null output", result: "pass",
			args:          `{"task_id":"t-1","expected_schema":true,"submitted_output":null}`,
			wantText:      []string{"PASS: task \"t-1\": every blocking check held."},
			wantFirstLine: `PASS: task "t-1": every blocking check held.`,
			wantActions:   []string{"attach_receipt", "proceed_to_payment"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.Call(t, contract.VerifySchema, tt.args)
			if res.IsError {
				t.Fatalf("isError: %s", testkit.Text(res))
			}
			ans := testkit.Structured(t, res)
			if ans["result"] != tt.result {
				t.Errorf("result = %v, want %s", ans["result"], tt.result)
			}
			if first, _, _ := strings.Cut(testkit.Text(res), "\n"); tt.wantFirstLine != "" && first != tt.wantFirstLine {
				t.Errorf("first line = %q, want %q", first, tt.wantFirstLine)
			}
			if tt.wantActions != nil {
				var actions []string
				for _, a := range ans["next_actions"].([]any) {
					actions = append(actions, a.(map[string]any)["action"].(string))
				}
				if diff := cmp.Diff(tt.wantActions, actions); diff != "" {
					t.Errorf("next_actions (-want +got):\n%s", diff)
				}
			}
			for _, want := range tt.wantText {
				if !strings.Contains(testkit.Text(res), want) {
					t.Errorf("text does not contain %q:\n%s", want, testkit.Text(res))
				}
			}
			for _, k := range tt.wantFields {
				if _, ok := ans[k]; !ok {
					t.Errorf("answer has no %s", k)
				}
			}
			for _, k := range tt.noFields {
				if _, ok := ans[k]; ok {
					t.Errorf("compact answer has %s", k)
				}
			}
			report, err := signing.VerifyReceipt(testkit.StructuredJSON(t, res), svc.Keys)
			if err != nil || report.Context != signing.ContextVerify {
				t.Errorf("the structured answer does not verify as a receipt: %v", err)
			}
			if _, err := svc.Store.Receipt(context.Background(), ans["verification_id"].(string)); err != nil {
				t.Errorf("verdict not stored: %v", err)
			}
		})
	}
}

// TestMCPVerifySchemaSameAsCore checks that the tool runs the one core: the
// same request gives the same answer over MCP as from Service.Verify, up to
// the verification id and signature.
func TestMCPVerifySchemaSameAsCore(t *testing.T) {
	svc := testkit.QuietService(t, true)
	at := time.Date(2026, 10, 1, 1, 1, 9, 606993000, time.UTC)
	svc.Now = func() time.Time { return at }
	c := testkit.ConnectMCP(t, NewMCPServer(svc))
	body := testkit.ReadTestdata(t, "invoice-fail.json")
	res := c.Call(t, contract.VerifySchema, string(body))
	core, err := svc.Verify(context.Background(), body)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(core.Answer, &want); err != nil {
		t.Fatal(err)
	}
	got := testkit.Structured(t, res)
	for _, m := range []map[string]any{want, got} {
		delete(m, "verification_id")
		delete(m, "attestation")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MCP answer differs from Service.Verify (-core +mcp):\n%s", diff)
	}
}

func TestMCPVerifySchemaInvalidArguments(t *testing.T) {
	c := testkit.ConnectMCP(t, NewMCPServer(testkit.QuietService(t, true)))
	tests := []struct {
		name, args string
		fields     []string
	}{
		{"no arguments", ``, []string{"task_id", "expected_schema", "submitted_output"}},
		{"missing submitted_output", `{"task_id":"t","expected_schema":{}}`, []string{"submitted_output"}},
		{"unknown argument", `{"task_id":"t","expected_schema":{},"submitted_output":1,"expected_schma":{}}`, nil},
		{"bad rule type", `{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"sum","field":"a"}]}`, []string{"rules[0].type"}},
		{"schema not a schema", `{"task_id":"t","expected_schema":42,"submitted_output":1}`, []string{"expected_schema"}},
		{"task_id too long", `{"task_id":"` + strings.Repeat("x", 201) + `","expected_schema":{},"submitted_output":1}`, []string{"task_id"}},
		// The arguments reach the engine byte for byte: I-JSON violations
		// that a decode-and-re-encode would hide are still caught.
		{"duplicate key", `{"task_id":"t","expected_schema":{},"submitted_output":{"a":1,"a":2}}`, []string{"submitted_output"}},
		{"integer beyond 2^53", `{"task_id":"t","expected_schema":{},"submitted_output":9007199254740993}`, []string{"submitted_output"}},
		{"remote ref", `{"task_id":"t","expected_schema":{"$ref":"https://example.com/s.json"},"submitted_output":1}`, []string{`expected_schema["$ref"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.Call(t, contract.VerifySchema, tt.args)
			testkit.WantError(t, res, tools.CodeInvalidRequest, 422, tt.fields...)
			if !strings.Contains(testkit.Text(res), "Fix: ") {
				t.Errorf("text gives no fix:\n%s", testkit.Text(res))
			}
		})
	}
}

func TestVerifyTextCapsHints(t *testing.T) {
	svc := testkit.QuietService(t, false)
	v, err := svc.Verify(context.Background(), testkit.ReadTestdata(t, "invoice-fail.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := verifyText(v)
	if n := strings.Count(got, "\n- "); n != textHints {
		t.Errorf("text lists %d hints, want %d:\n%s", n, textHints, got)
	}
	if !strings.Contains(got, v.Verdict.VerificationID) {
		t.Errorf("text does not name the verification id:\n%s", got)
	}
}

// TestVerifyTextSameAsFmt: verifyText prints what the fmt calls it
// replaced print, for passes and failures, with and without an agent, many
// hints or none, and ratios of every shape.
func TestVerifyTextSameAsFmt(t *testing.T) {
	svc := testkit.QuietService(t, false)
	agent := "seller \"7\" \u00e9\x01"
	findings := []engine.Finding{
		{Check: "schema:required", Path: "$.total", Expected: "a value", Found: "nothing", Blocking: true},
		{Check: "bounds:range", Path: "$.line_items[0].quantity", Expected: ">= 1", Found: "number 0", Blocking: true},
		{Check: "schema:required", Path: "$.b", Expected: "x", Found: "y", Blocking: true},
		{Check: "content:placeholder", Path: "$.note", Expected: "real text", Found: `"TODO"`},
	}
	for _, tt := range []struct {
		name string
		v    func() *tools.Verified
	}{
		{"pass", func() *tools.Verified { return verified(t, svc, "invoice-pass.json") }},
		{"fail", func() *tools.Verified { return verified(t, svc, "invoice-fail.json") }},
		{"agent and warnings", func() *tools.Verified {
			v := verified(t, svc, "invoice-pass.json")
			req := *v.Request
			req.AgentID = &agent
			out := *v.Outcome
			out.Findings = findings[3:]
			out.Schema = engine.Ratio{Ratio: 1.0 / 3, Passed: 1, Total: 3}
			out.Integrity = engine.Ratio{Ratio: 1e-7, Passed: 0, Total: 12345678}
			out.Overall = engine.Ratio{Ratio: 0, Passed: 0, Total: 0}
			v.Request, v.Outcome = &req, &out
			return v
		}},
		{"many hints, repeated checks", func() *tools.Verified {
			v := verified(t, svc, "invoice-fail.json")
			out := *v.Outcome
			out.Findings = findings
			out.Overall = engine.Ratio{Ratio: 0.999999, Passed: 999999, Total: 1000000}
			v.Outcome = &out
			return v
		}},
		{"fail without findings", func() *tools.Verified {
			v := verified(t, svc, "invoice-fail.json")
			out := *v.Outcome
			out.Findings = nil
			v.Outcome = &out
			return v
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.v()
			if got, want := verifyText(v), verifyTextFmt(v); got != want {
				t.Errorf("verifyText =\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func verified(t *testing.T, svc *tools.Service, name string) *tools.Verified {
	t.Helper()
	v, err := svc.Verify(context.Background(), testkit.ReadTestdata(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// verifyTextFmt is verifyText as it was written with fmt.
func verifyTextFmt(v *tools.Verified) string {
	out, req := v.Outcome, v.Request
	ratio := func(r engine.Ratio) string { return fmt.Sprintf("%d/%d (%g)", r.Passed, r.Total, r.Ratio) }
	var b strings.Builder
	fmt.Fprint(&b, strings.ToUpper(out.Result()))
	switch n := out.Warnings(); {
	case out.Pass && n == 1:
		b.WriteString(" with 1 warning")
	case out.Pass && n > 1:
		fmt.Fprintf(&b, " with %d warnings", n)
	}
	fmt.Fprintf(&b, ": task %q", req.TaskID)
	if req.AgentID != nil {
		fmt.Fprintf(&b, ", agent %q", *req.AgentID)
	}
	if out.Pass {
		b.WriteString(": every blocking check held.\n")
	} else {
		fmt.Fprintf(&b, ": blocking checks failed: %s.\n", strings.Join(out.BlockingChecks(), ", "))
	}
	fmt.Fprintf(&b, "schema_compliance %s, integrity_checks %s, overall %s\n",
		ratio(out.Schema), ratio(out.Integrity), ratio(out.Overall))
	if n := out.FindingsTotal(); n > 0 {
		label := "Hints"
		if out.Pass {
			label = "Warnings (not blocking)"
		}
		fmt.Fprintf(&b, "%s (%d of %d):\n", label, min(n, textHints), n)
		for _, f := range out.Findings[:min(len(out.Findings), textHints)] {
			fmt.Fprintf(&b, "- %s at %s: expected %s, found %s\n", f.Check, f.Path, f.Expected, f.Found)
		}
	}
	fmt.Fprintf(&b, "Receipt: verification_id %s, signed with Ed25519 key %s; the structured content is the signed answer.\n",
		v.Verdict.VerificationID, v.Verdict.KeyVersion)
	switch {
	case out.Pass && out.Warnings() > 0:
		b.WriteString("Next: attach this signed answer as the receipt (seller); review the warnings, then proceed to payment (buyer); verify_receipt checks it offline.")
	case out.Pass:
		b.WriteString("Next: attach this signed answer as the receipt (seller), or proceed to payment (buyer); verify_receipt checks it offline.")
	default:
		b.WriteString("Next: repair the output using the hints, then call verify_schema again with the same expected_schema, bounds and rules.")
	}
	return b.String()
}

// TestVerifySchemaInputSchemaAgreesWithEngine checks the hand-written input
// schema against the engine, which has the last word: a request the engine
// accepts must pass the schema (clients may validate before sending), and
// what the schema rejects the engine rejects too.
func TestVerifySchemaInputSchemaAgreesWithEngine(t *testing.T) {
	svc := testkit.QuietService(t, false)
	schema := testkit.ResolveSchema(t, json.RawMessage(contract.VerifySchemaInput))
	base := `"task_id":"t-1","expected_schema":{"type":"object"},"submitted_output":{"a":[1,2],"d":"2026-05-01","b":3}`
	valid := []struct{ name, body string }{
		{"invoice pass", string(testkit.ReadTestdata(t, "invoice-pass.json"))},
		{"invoice fail", string(testkit.ReadTestdata(t, "invoice-fail.json"))},
		{"every default explicit", `{` + base + `,"agent_id":null,"strict_content_check":false,"bounds":null,"rules":null,"enforce_rules":false,"detail":"full"}`},
		{"every rule type", `{` + base + `,"rules":[` +
			`{"type":"sum_equals","field":"a[]","equals":3,"tolerance":0.5,"if_present":true},` +
			`{"type":"gte","field":"b","other_field":"a[]"},{"type":"lte","field":"b","value":9},` +
			`{"type":"exists_in","field":"b","values":[3,4]},{"type":"exists_in","field":"b","in_field":"a[]"},` +
			`{"type":"unique","field":"a[]"}],"enforce_rules":true}`},
		{"bounds of both kinds", `{` + base + `,"bounds":{"b":{"min":0},"d":{"min":"2026-01-01","max":"2026-12-31","if_present":true}},"detail":"compact"}`},
		{"boolean schema, null output", `{"task_id":"t","expected_schema":false,"submitted_output":null,"agent_id":"seller"}`},
		{"every optional member null", `{` + base + `,"agent_id":null,"strict_content_check":null,"enforce_rules":null,"detail":null,` +
			`"bounds":{"b":{"min":null,"max":4,"if_present":null}},"rules":[{"type":"unique","field":"a[]","equals_field":null,"equals":null,` +
			`"other_field":null,"value":null,"in_field":null,"values":null,"tolerance":null,"if_present":null}]}`},
		{"tv-1 canonical form", string(testkit.ReadTestdata(t, "request-hash/tv-1.canonical.json"))},
		{"tv-2 canonical form", string(testkit.ReadTestdata(t, "request-hash/tv-2.canonical.json"))},
		{"tv-3 canonical form", string(testkit.ReadTestdata(t, "request-hash/tv-3.canonical.json"))},
	}
	for _, tt := range valid {
		t.Run("valid/"+tt.name, func(t *testing.T) {
			if _, err := svc.Engine.DecodeRequest([]byte(tt.body)); err != nil {
				t.Fatalf("the engine rejects it: %v", err)
			}
			var args any
			if err := json.Unmarshal([]byte(tt.body), &args); err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(args); err != nil {
				t.Errorf("the input schema rejects a request the engine accepts: %v", err)
			}
		})
	}
	invalid := []struct{ name, body string }{
		{"unknown field", `{` + base + `,"rulez":[]}`},
		{"missing task_id", `{"expected_schema":{},"submitted_output":1}`},
		{"empty task_id", `{"task_id":"","expected_schema":{},"submitted_output":1}`},
		{"empty agent_id", `{` + base + `,"agent_id":""}`},
		{"detail", `{` + base + `,"detail":"short"}`},
		{"flag not a boolean", `{` + base + `,"enforce_rules":"yes"}`},
		{"unknown rule type", `{` + base + `,"rules":[{"type":"sum","field":"a"}]}`},
		{"unknown rule field", `{` + base + `,"rules":[{"type":"unique","field":"a","equal":1}]}`},
		{"rule without field", `{` + base + `,"rules":[{"type":"unique"}]}`},
		{"negative tolerance", `{` + base + `,"rules":[{"type":"sum_equals","field":"a[]","equals":3,"tolerance":-1}]}`},
		{"unknown bound field", `{` + base + `,"bounds":{"b":{"min":0,"mx":3}}}`},
		{"bound limit a bool", `{` + base + `,"bounds":{"b":{"min":true}}}`},
		{"rules not an array", `{` + base + `,"rules":{}}`},
	}
	for _, tt := range invalid {
		t.Run("invalid/"+tt.name, func(t *testing.T) {
			var args any
			if err := json.Unmarshal([]byte(tt.body), &args); err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(args); err == nil {
				t.Error("the input schema accepts it")
			}
			if _, err := svc.Engine.DecodeRequest([]byte(tt.body)); err == nil {
				t.Error("the engine accepts what the input schema rejects")
			}
		})
	}
}
