package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
)

const recordDescription = `Get an agent's signed trust record: a 0-100 trust score with its 95% confidence interval, computed from every verdict verify_schema has recorded for that agent_id (recent verdicts weigh more; 30-day half-life), the inputs and formula behind it, and its most recent verdicts.

When to call: before hiring or paying an agent (a seller) whose work you have not checked yet, or to compare sellers. The score is evidence, not a substitute: still verify the delivered output with verify_schema before paying.

What to do with the answer: has_history false means the agent is unknown (no verdicts yet); a low score or a wide interval means little or poor evidence. The record is signed under the trust-score context; verify_receipt checks it. isError: fix the agent_id as fields[] says; or, on HTTP deployments that charge for records, pay the x402 PaymentRequired and call again with the payment in _meta["x402/payment"].`

func recordTool() *mcp.Tool {
	f := false
	return &mcp.Tool{
		Name:        contract.Record,
		Title:       "Get an agent's signed trust record",
		Description: recordDescription,
		InputSchema: json.RawMessage(contract.RecordInput),
		OutputSchema: contract.ResultSchema("The signed trust record or, when isError is set, the error object or an x402 PaymentRequired.",
			contract.RecordAnswer, contract.PaymentRequiredSchema),
		Annotations: &mcp.ToolAnnotations{
			Title:           "Get an agent's signed trust record",
			ReadOnlyHint:    true,
			IdempotentHint:  false, // each call signs a new record
			DestructiveHint: &f,
			OpenWorldHint:   &f,
		},
	}
}

// mcpRecord adapts get_verification_record to Service.Record.
func (s mcpService) mcpRecord(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	start := time.Now()
	args, e := toolArgs(req.Params.Arguments, "agent_id")
	if e == nil {
		e = recordArgs(args)
	}
	if e != nil {
		s.logCall(ctx, contract.Record, start, e.Code)
		return errorResult(e), nil
	}
	var agentID string
	_ = json.Unmarshal(args["agent_id"], &agentID) // checked by recordArgs
	adm, refused := s.admitRecord(ctx, req)
	if refused != nil {
		s.logCall(ctx, contract.Record, start, refusedOutcome(refused))
		return refused, nil
	}
	defer adm.Release() // a call that is not answered gives back its payment (a no-op once settled)
	signed, err := s.Record(ctx, agentID)
	if err != nil {
		e := tools.AsError(err)
		s.logCall(ctx, contract.Record, start, e.Code)
		return errorResult(e), nil
	}
	var rec tools.TrustRecord
	if err := json.Unmarshal(signed, &rec); err != nil {
		s.Logger().ErrorContext(ctx, "reading back trust record", "err", err)
		s.logCall(ctx, contract.Record, start, tools.CodeInternal)
		return errorResult(tools.AsError(err)), nil
	}
	s.logCall(ctx, contract.Record, start, "ok")
	text := fmt.Sprintf("%s\nRecord %s, signed with Ed25519 key %s under the trust-score context; the structured content is the signed record.",
		rec.Message, rec.RecordID, rec.Verify.KeyVersion)
	return s.mcpSettle(ctx, adm, answerResult(text, signed), payment.Answer{Body: signed, Text: text}), nil
}

// admitRecord is the payment step of get_verification_record: every
// record is paid where payment is on, one for an agent with no history too
// (SPEC §8), as over REST.
func (s mcpService) admitRecord(ctx context.Context, req *mcp.CallToolRequest) (*payment.Admission, *mcp.CallToolResult) {
	if s.Payment == nil || s.Store == nil {
		return &payment.Admission{}, nil
	}
	return s.mcpAdmit(ctx, s.Payment, req, 0, nil)
}

// recordArgs checks get_verification_record's arguments.
func recordArgs(args map[string][]byte) *tools.Error {
	raw, sent := args["agent_id"]
	if !sent {
		return tools.InvalidRequest([]engine.FieldProblem{{Field: "agent_id", Problem: "is required",
			Fix: "Send agent_id: the id that verification requests named, 1 to 200 characters."}})
	}
	var agentID string
	if tools.JSONKind(raw) != '"' || json.Unmarshal(raw, &agentID) != nil {
		return tools.InvalidRequest([]engine.FieldProblem{{Field: "agent_id", Problem: "must be a string",
			Fix: "Send agent_id as a string of 1 to 200 characters."}})
	}
	// Checked here, before any payment step: an invalid request is never
	// charged, nor its payment sent to the facilitator.
	if p := tools.AgentIDProblem(agentID); p != nil {
		return tools.InvalidRequest([]engine.FieldProblem{*p})
	}
	return nil
}
