package payment

import (
	"net/http/httptest"
	"testing"

	"github.com/verifier-dev/verifier/engine"
)

// TestErrorJSON: the one error shape marshals its members in the order
// SPEC §6 sends them — a verification's field problems and a 402's
// free_trial and PaymentRequired fields alike — without HTML escaping, and
// Write sends those bytes with the Retry-After header.
func TestErrorJSON(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  *Error
		want string
	}{
		{"invalid request", &Error{
			Code: "invalid_request", Status: 422, Message: "a < b & c > d",
			NextActions: []engine.NextAction{{Action: "fix_request_fields", Fields: []string{"task_id"}}},
			Fields:      []engine.FieldProblem{{Field: "task_id", Problem: "is missing", Fix: "add it"}}, FieldsOmitted: 2,
		}, `{"code":"invalid_request","status":422,"retryable":false,"charged":false,"message":"a < b & c > d",` +
			`"next_actions":[{"action":"fix_request_fields","fields":["task_id"]}],` +
			`"fields":[{"field":"task_id","problem":"is missing","fix":"add it"}],"fields_omitted":2}`},
		{"payment required", &Error{
			Code: CodePaymentRequired, Status: 402, Charged: ChargeUnknown, Message: "pay",
			NextActions:     []engine.NextAction{{Action: "pay", Using: "x402"}},
			FreeTrial:       &FreeTrial{Via: FreeTrialVia, Covers: freeCovers},
			PaymentRequired: &PaymentRequired{X402Version: 2, Error: "payment required"},
		}, `{"code":"payment_required","status":402,"retryable":false,"charged":"unknown","message":"pay",` +
			`"next_actions":[{"action":"pay","using":"x402"}],"free_trial":{"available":false,"via":"mcp+rest",` +
			`"transport":"","url":"","tool":"","calls_per_client_per_day":0,"remaining_calls_today":0,` +
			`"resets_at":"0001-01-01T00:00:00Z","client":"","rest_free":false,"launch":false,"message":"",` +
			`"max_free_body_bytes":0,"covers":"` + freeCovers + `"},"x402Version":2,"error":"payment required",` +
			`"accepts":null}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.err.MarshalJSON()
			if err != nil || string(got) != tt.want {
				t.Fatalf("MarshalJSON() = %s, %v\nwant %s", got, err, tt.want)
			}
			rec := httptest.NewRecorder()
			tt.err.WithRetryAfter(0).Write(rec)
			if rec.Code != tt.err.Status || rec.Header().Get("Retry-After") != "1" {
				t.Errorf("Write: status %d, Retry-After %q, want %d and 1 (at least a second)", rec.Code, rec.Header().Get("Retry-After"), tt.err.Status)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Write: Content-Type %q", ct)
			}
		})
	}
}
