package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
)

// textHints is how many hints the text of a verify_schema result lists.
const textHints = 3

const verifySchemaDescription = `Verify an agent's JSON output against the buyer's JSON Schema, optional bounds and cross-field rules; get pass/fail, the share of checks that held, repair hints and an Ed25519-signed receipt.

When to call: before delivering work (seller: prove it meets the spec) and before paying for it (buyer: check it yourself). Send the output exactly as it will be delivered.

What to do with the answer:
- result "fail": repair the output using hints[] (check, $.path, expected, found), then call verify_schema again with the same expected_schema, bounds and rules. Repeat until it passes.
- result "pass": attach the whole answer as the receipt (seller) or proceed to payment (buyer). Anyone can check it offline with verify_receipt.
- isError: the request itself is invalid; fix the fields named in fields[] and call again. Nothing was charged.
- isError with an x402 PaymentRequired (HTTP deployments that charge past a free daily allowance): pay one of accepts[] and call again with the payment in _meta["x402/payment"].

Each call issues a new receipt (not idempotent) and records the verdict in agent_id's reputation.`

func verifySchemaTool() *mcp.Tool {
	f := false
	return &mcp.Tool{
		Name:        contract.VerifySchema,
		Title:       "Verify output against a JSON Schema",
		Description: verifySchemaDescription,
		InputSchema: json.RawMessage(contract.VerifySchemaInput),
		OutputSchema: contract.ResultSchema("The signed verification answer or, when isError is set, the error object or an x402 PaymentRequired.",
			contract.VerifyAnswer, contract.PaymentRequiredSchema),
		// It writes: each call stores a new verdict in the agent's
		// reputation (not read-only, not idempotent), and only adds to the
		// store (not destructive). It reaches nothing outside this verifier:
		// schemas are never fetched (not open-world).
		Annotations: &mcp.ToolAnnotations{
			Title:           "Verify output against a JSON Schema",
			ReadOnlyHint:    false,
			IdempotentHint:  false,
			DestructiveHint: &f,
			OpenWorldHint:   &f,
		},
	}
}

// mcpVerifySchema adapts verify_schema to Service.Verify: the arguments
// object is the request body, passed on byte for byte, so MCP, REST and the
// CLI run the same decoding, checks and signing.
func (s mcpService) mcpVerifySchema(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	start := time.Now()
	body := []byte(req.Params.Arguments)
	if len(body) == 0 {
		body = []byte("{}")
	}
	// A body over the free tier's limit sent unpaid is refused before it
	// is decoded. Otherwise decode first, and compile the schema before any
	// payment step (mcpAdmit's check): an invalid request is never charged.
	charge := &toolCharge{svc: s}
	v, err := s.VerifyCall(ctx, tools.VerifyCall{
		Body: body,
		RefuseBody: func(size int64) error {
			if refused := s.mcpRefuseUnpaidBody(ctx, s.Payment, req, size); refused != nil {
				return &toolRefusal{result: refused, outcome: "payment_refused"}
			}
			return nil
		},
		Admit: func(size int64, check func() *tools.Error) (tools.Charge, error) {
			adm, refused := s.mcpAdmit(ctx, s.Payment, req, size, check)
			if refused != nil {
				return nil, &toolRefusal{result: refused, outcome: refusedOutcome(refused)}
			}
			charge.adm = adm
			return charge, nil
		},
	})
	var refusal *toolRefusal
	if errors.As(err, &refusal) {
		s.logCall(ctx, contract.VerifySchema, start, refusal.outcome)
		return refusal.result, nil
	}
	if err != nil {
		e := tools.AsError(err)
		s.logCall(ctx, contract.VerifySchema, start, e.Code)
		return errorResult(e), nil
	}
	s.logCall(ctx, contract.VerifySchema, start, v.Outcome.Result())
	result := charge.result
	if v.Logged {
		meta := result.GetMeta()
		if meta == nil {
			meta = map[string]any{}
		}
		meta[MetaLogIndex] = v.LogIndex
		result.SetMeta(meta)
	}
	return result, nil
}

// toolRefusal ends a tool call with a result the payment steps rendered:
// a refusal, a kept answer or a failed settlement.
type toolRefusal struct {
	result  *mcp.CallToolResult
	outcome string // how the call log names it
}

func (r *toolRefusal) Error() string { return "tool call answered by its payment step: " + r.outcome }

// toolCharge is the Charge of a verify_schema call: its settlement keeps
// the result's text with a payment and puts the settlement in the result's
// _meta (result), or withholds the answer for the result that says why.
type toolCharge struct {
	svc    mcpService
	adm    *payment.Admission
	result *mcp.CallToolResult // the answer, once settled
}

func (c *toolCharge) Paid() bool { return c.adm.Paid() }

func (c *toolCharge) Settle(ctx context.Context, v *tools.Verified, ans payment.Answer) error {
	s := c.svc
	ans.Text = verifyText(v)
	if s.Store == nil && s.StoreErr != nil {
		ans.Text += "\nThis verdict was NOT recorded in the agent's reputation: " + s.StoreErr.Error()
	}
	result := answerResult(ans.Text, v.Answer)
	if settled := s.mcpSettle(ctx, c.adm, result, ans); settled != result {
		// The settlement failed: no verdict was stored. The call log
		// names the verification's result, as it was before settling.
		return &toolRefusal{result: settled, outcome: v.Outcome.Result()}
	}
	c.result = result
	return nil
}

func (c *toolCharge) Release() { c.adm.Release() }

// verifyText renders a verification for a person: verdict ("PASS with N
// warnings" when a pass carries warnings), ratios, the first hints and what
// to do next. It is built by appending, as fmt would
// print it (%q is strconv.Quote, %g of a float64 strconv's shortest 'g'),
// at a fraction of fmt's cost.
func verifyText(v *tools.Verified) string {
	out, req := v.Outcome, v.Request
	b := make([]byte, 0, 512)
	b = append(b, strings.ToUpper(out.Result())...)
	warnings := out.Warnings()
	if out.Pass && warnings > 0 {
		b = strconv.AppendInt(append(b, " with "...), int64(warnings), 10)
		if warnings == 1 {
			b = append(b, " warning"...)
		} else {
			b = append(b, " warnings"...)
		}
	}
	b = strconv.AppendQuote(append(b, ": task "...), req.TaskID)
	if req.AgentID != nil {
		b = strconv.AppendQuote(append(b, ", agent "...), *req.AgentID)
	}
	if out.Pass {
		b = append(b, ": every blocking check held.\n"...)
	} else {
		b = append(b, ": blocking checks failed: "...)
		for i, check := range out.BlockingChecks() {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, check...)
		}
		b = append(b, ".\n"...)
	}
	b = appendRatio(append(b, "schema_compliance "...), out.Schema)
	b = appendRatio(append(b, ", integrity_checks "...), out.Integrity)
	b = appendRatio(append(b, ", overall "...), out.Overall)
	b = append(b, '\n')
	if n := out.FindingsTotal(); n > 0 {
		if out.Pass {
			b = append(b, "Warnings (not blocking)"...)
		} else {
			b = append(b, "Hints"...)
		}
		b = strconv.AppendInt(append(b, " ("...), int64(min(n, textHints)), 10)
		b = strconv.AppendInt(append(b, " of "...), int64(n), 10)
		b = append(b, "):\n"...)
		for _, f := range out.Findings[:min(len(out.Findings), textHints)] {
			b = append(append(append(b, "- "...), f.Check...), " at "...)
			b = append(append(append(b, f.Path...), ": expected "...), f.Expected...)
			b = append(append(append(b, ", found "...), f.Found...), '\n')
		}
	}
	b = append(append(b, "Receipt: verification_id "...), v.Verdict.VerificationID...)
	b = append(append(b, ", signed with Ed25519 key "...), v.Verdict.KeyVersion...)
	b = append(b, "; the structured content is the signed answer.\n"...)
	switch {
	case out.Pass && warnings > 0:
		b = append(b, "Next: attach this signed answer as the receipt (seller); review the warnings, then proceed to payment (buyer); verify_receipt checks it offline."...)
	case out.Pass:
		b = append(b, "Next: attach this signed answer as the receipt (seller), or proceed to payment (buyer); verify_receipt checks it offline."...)
	default:
		b = append(b, "Next: repair the output using the hints, then call verify_schema again with the same expected_schema, bounds and rules."...)
	}
	return string(b)
}

// appendRatio appends r as "passed/total (ratio)", the ratio as %g prints
// it.
func appendRatio(b []byte, r engine.Ratio) []byte {
	b = strconv.AppendInt(b, int64(r.Passed), 10)
	b = strconv.AppendInt(append(b, '/'), int64(r.Total), 10)
	b = strconv.AppendFloat(append(b, " ("...), r.Ratio, 'g', -1, 64)
	return append(b, ')')
}

// MetaLogIndex is the member of a verify_schema result's _meta carrying
// the stored receipt's record index in the transparency log (REST's
// LogIndexHeader). It is set only when the transparency log is served, and
// outside the signed answer.
const MetaLogIndex = "verifier/log-index"
