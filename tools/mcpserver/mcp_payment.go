package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
)

// mcpAdmit is the payment step of a chargeable tool call over HTTP
// (verify_schema; get_verification_record for an agent with history),
// called after the arguments were found valid and before the work. The
// client is the call's connection address (X-Forwarded-For with
// --trust-proxy); a payment rides in
// _meta["x402/payment"] as a plain JSON object. It returns the admission,
// or the tool result to answer with instead: the x402 payment-required
// result for a 402, the error result for a 429 or 503. check, when not nil,
// finds what only the work would otherwise find wrong with the request: it
// runs before a payment is verified, else before a refusal, and its error
// result is answered instead (never charged, never asked to pay). A nil g
// admits every call free (stdio).
func (s mcpService) mcpAdmit(ctx context.Context, g *payment.Gate, req *mcp.CallToolRequest, bodySize int64, check func() *tools.Error) (*payment.Admission, *mcp.CallToolResult) {
	if g == nil {
		return &payment.Admission{}, nil
	}
	preq := s.mcpPaymentRequest(g, req, bodySize)
	preq.RequestKey = payment.RequestKey("mcp "+req.Params.Name, req.Params.Arguments)
	adm, invalid, err := s.AdmitPayment(ctx, g, preq, check)
	if invalid != nil {
		return nil, errorResult(invalid)
	}
	if err != nil {
		return nil, s.paymentResult(err)
	}
	if kept, settled, ok := adm.Kept(); ok {
		// A retry with the same payment of a call already served: the kept
		// answer, no work, no second settlement.
		return nil, keptResult(kept, settled)
	}
	return adm, nil
}

// mcpPaymentRequest is a tool call as g sees it. The client is the call's
// connection address (X-Forwarded-For with --trust-proxy); a payment rides
// in _meta["x402/payment"] as a plain JSON object.
func (s mcpService) mcpPaymentRequest(g *payment.Gate, req *mcp.CallToolRequest, bodySize int64) payment.Request {
	// The HTTP request as far as the client id needs it: the connection's
	// address, and X-Forwarded-For when the gate trusts a proxy.
	hr := &http.Request{RemoteAddr: ClientAddr(req), Header: http.Header{}}
	if req.Extra != nil && req.Extra.Header != nil {
		hr.Header = req.Extra.Header
	}
	preq := payment.Request{Route: s.mcpPaymentRoute(req.Params.Name), Client: g.ClientID(hr), BodySize: bodySize}
	if v, ok := req.Params.GetMeta()[payment.MetaPayment]; ok && v != nil {
		raw, err := json.Marshal(v)
		if err != nil {
			raw = []byte(`"unreadable"`)
		}
		preq.PaymentJSON = raw
	}
	return preq
}

// mcpRefuseUnpaidBody is the free tier's size limit for a tool call whose
// arguments are not yet decoded (Gate.RefuseUnpaidBody): the payment
// result of the refusal, or nil to go on. A nil g refuses nothing (stdio).
func (s mcpService) mcpRefuseUnpaidBody(ctx context.Context, g *payment.Gate, req *mcp.CallToolRequest, bodySize int64) *mcp.CallToolResult {
	if g == nil {
		return nil
	}
	if err := s.RefuseUnpaidBody(ctx, g, s.mcpPaymentRequest(g, req, bodySize)); err != nil {
		return s.paymentResult(err)
	}
	return nil
}

// refusedOutcome is how the call log names a result mcpAdmit answered
// with instead of the work: a refusal, or a kept answer.
func refusedOutcome(r *mcp.CallToolResult) string {
	if r.IsError {
		return "payment_refused"
	}
	return "kept_answer"
}

// keptResult is the tool result of a kept paid answer.
func keptResult(kept payment.Answer, settled *payment.SettleResponse) *mcp.CallToolResult {
	r := answerResult(kept.Text, kept.Body)
	if settled != nil {
		r.SetMeta(map[string]any{payment.MetaPaymentResponse: settled})
	}
	return r
}

// mcpSettle settles adm after the work, keeping ans (the result's text
// and signed answer, and a paid verification's verdict, stored only now)
// with the payment: the result then carries _meta["x402/payment-response"].
// A failed settlement replaces the result (the tool output is withheld)
// with the payment-required result that says why, or with the error
// result of an unknown outcome (charged "unknown", the answer kept for a
// retry with the same payment).
func (s mcpService) mcpSettle(ctx context.Context, adm *payment.Admission, result *mcp.CallToolResult, ans payment.Answer) *mcp.CallToolResult {
	settled, err := s.SettlePayment(ctx, adm, ans)
	if err != nil {
		return s.paymentResult(err)
	}
	if settled != nil {
		meta := result.GetMeta()
		if meta == nil {
			meta = map[string]any{}
		}
		meta[payment.MetaPaymentResponse] = settled
		result.SetMeta(meta)
	}
	return result
}

// paymentResult is the tool result of a refused call. A 402 is x402's
// payment-required result: isError, the PaymentRequired as structured
// content and as JSON text, and in _meta the code (free_trial_exhausted
// once the allowance is used up), the error object and free_trial. A 429 or
// 503 is the ordinary error result; a store fault is internal_error.
func (s mcpService) paymentResult(err error) *mcp.CallToolResult {
	var refused *payment.Error
	if !errors.As(err, &refused) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			s.Logger().Info("payment gate stopped: request ended", "err", err)
			return errorResult(tools.RequestEnded())
		}
		if store.Unavailable(err) {
			s.Logger().Warn("store unavailable at the allowance or payment step", "err", err)
		} else {
			s.Logger().Error("payment gate failed", "err", err)
		}
		return errorResult(tools.AsError(err))
	}
	s.NameMCPEndpoint(refused)
	if !refused.IsPaymentRequired() {
		return errorResult(refused)
	}
	body, err := json.Marshal(refused.PaymentRequired)
	if err != nil { // a PaymentRequired always encodes
		return errorResult(tools.AsError(fmt.Errorf("encoding PaymentRequired: %w", err)))
	}
	r := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(body)}},
		StructuredContent: json.RawMessage(body),
		IsError:           true,
	}
	r.SetMeta(refused.MCPMeta())
	return r
}

// mcpPaymentRoute describes a chargeable tool for the 402: the MCP
// endpoint as the resource and the tool's input schema for bazaar.
func (s mcpService) mcpPaymentRoute(tool string) payment.Route {
	r := payment.Route{Kind: payment.KindVerify, Tool: tool, Resource: payment.Resource{URL: s.BaseURL() + "/mcp"}}
	switch tool {
	case contract.Record:
		r.Kind = payment.KindScore
		r.Resource.Description = contract.RecordSummary
		r.InputSchema = json.RawMessage(contract.RecordInput)
		r.Example = json.RawMessage(contract.RecordExample)
	default:
		r.Resource.Description = contract.VerifySchemaSummary
		r.InputSchema = json.RawMessage(contract.VerifySchemaInput)
		r.Example = json.RawMessage(contract.VerifySchemaExample)
	}
	return r
}
