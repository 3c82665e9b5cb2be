package payment

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/internal/ijson"
)

// Error codes of allowance and payment refusals (SPEC §6, §7). They are
// stable: clients branch on them.
const (
	CodeRateLimited            = "rate_limited"            // 429: free allowance used, payment off
	CodePaymentRequired        = "payment_required"        // 402: pay to be served
	CodePaymentInvalid         = "payment_invalid"         // 402: the payment cannot be accepted
	CodePaymentReplayed        = "payment_replayed"        // 402: the payment was already used
	CodeSettlementFailed       = "settlement_failed"       // 402: the work was done but the payment did not settle; answer withheld
	CodeFacilitatorUnavailable = "facilitator_unavailable" // 503: the facilitator is down or slow; retry
)

// Charge is what is known of whether a refused call was charged: the JSON
// of an error's "charged" field is false (ChargeNone), true (ChargeMade)
// or "unknown" (ChargeUnknown: the payment was sent for settlement and the
// facilitator's answer never came; the message says how to get the answer).
type Charge uint8

// What is known of a charge.
const (
	ChargeNone Charge = iota
	ChargeMade
	ChargeUnknown
)

// chargeUnknownJSON is ChargeUnknown's JSON.
const chargeUnknownJSON = `"unknown"`

// MarshalJSON writes false, true or "unknown".
func (c Charge) MarshalJSON() ([]byte, error) {
	switch c {
	case ChargeMade:
		return []byte("true"), nil
	case ChargeUnknown:
		return []byte(chargeUnknownJSON), nil
	}
	return []byte("false"), nil
}

// UnmarshalJSON reads false, true or "unknown".
func (c *Charge) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "false":
		*c = ChargeNone
	case "true":
		*c = ChargeMade
	case chargeUnknownJSON:
		*c = ChargeUnknown
	default:
		return fmt.Errorf("charged is false, true or \"unknown\", not %.20s", b)
	}
	return nil
}

// CodeFreeTrialExhausted is free_trial.code (and the MCP _meta code) once a
// client has used its free allowance for the day.
const CodeFreeTrialExhausted = "free_trial_exhausted"

// ActionRetrySamePayment is the next action of a paid call whose
// settlement's outcome is not known yet: send the same request with the
// same payment again to get the kept answer.
const ActionRetrySamePayment = "retry_same_payment"

// FreeTrial is the 402 (and 429) body's live free_trial object, with
// every member the hosted service documents (SPEC §7) in its order, then
// ours (reason, max_free_body_bytes, covers).
type FreeTrial struct {
	// Available: this client has free calls left today.
	Available bool `json:"available"`
	// Via is FreeTrialVia: the allowance serves MCP and REST alike.
	Via string `json:"via"`
	// Transport is FreeTrialTransport, the MCP transport of URL.
	Transport string `json:"transport"`
	// URL is this server's MCP endpoint. The gate does not know it: the
	// HTTP layer fills it in before the refusal is written.
	URL string `json:"url"`
	// Tool is the MCP tool the allowance pays for (FreeTrialTool).
	Tool                 string    `json:"tool"`
	CallsPerClientPerDay int       `json:"calls_per_client_per_day"`
	RemainingCallsToday  int       `json:"remaining_calls_today"`
	ResetsAt             time.Time `json:"resets_at"`
	// Client says how a client is identified, and that REST and MCP share
	// one allowance, in the hosted service's words (FreeTrialClient).
	Client string `json:"client"`
	// RESTFree: the REST verify routes are free within the same allowance
	// (always, here; the member is the hosted service's).
	RESTFree bool `json:"rest_free"`
	// Launch is true, as in the hosted service's body: verification is free
	// during launch (within the allowance). False only on a deployment
	// without a free allowance.
	Launch bool `json:"launch"`
	// Message is the allowance in words: how to start, what is left today
	// and when it resets; once used up, the hosted service's sentence.
	Message string `json:"message"`
	// Code is CodeFreeTrialExhausted once the allowance is used up.
	Code string `json:"code,omitempty"`
	// Reason says why this request was not free although calls are left:
	// ReasonBodyTooLarge, ReasonNotCovered or ReasonProbe.
	Reason string `json:"reason,omitempty"`
	// MaxFreeBodyBytes is the largest body served free.
	MaxFreeBodyBytes int64 `json:"max_free_body_bytes"`
	// Covers names what the allowance pays for.
	Covers string `json:"covers"`
}

// Reasons a request with free calls left still needs payment.
const (
	ReasonBodyTooLarge = "body_over_free_tier_limit"
	ReasonNotCovered   = "route_not_in_free_allowance"
	ReasonProbe        = "discovery_probe"
)

// freeCovers is FreeTrial.Covers.
const freeCovers = "POST /verify/schema, POST /verify/deliverable and MCP verify_schema"

// The fixed members of FreeTrial, as the hosted service writes them.
const (
	FreeTrialVia       = "mcp+rest"
	FreeTrialTransport = "streamable-http"
	FreeTrialTool      = "verify_schema"
	// FreeTrialClient is free_trial.client, the hosted service's sentence.
	// The address is the one ClientID reads: IPv6 cut to its /64, and
	// behind --trust-proxy the last X-Forwarded-For entry (README).
	FreeTrialClient = "identified by request IP address; the same address's REST and MCP verification calls share one allowance"
)

// Error is the service's one error shape (SPEC §6, §7): every refusal — by
// the payment gate, or by the verification service, whose tools.Error is
// this type — in REST bodies and MCP tool results alike, never carrying the
// caller's values. It lives here because payment is the lowest package
// that refuses requests. A 402 also carries the x402 data: it marshals as
// the response body, the §6 fields, free_trial, and then the
// PaymentRequired fields (x402Version, error, resource, accepts,
// extensions), so the body also reads as a PaymentRequired.
type Error struct {
	Code        string              `json:"code"`
	Status      int                 `json:"status"`
	Retryable   bool                `json:"retryable"`
	Charged     Charge              `json:"charged"` // false, true or "unknown"
	Message     string              `json:"message"`
	RetryAfter  *int                `json:"retry_after,omitempty"`
	NextActions []engine.NextAction `json:"next_actions"`
	// Fields are the problems of an invalid request, field by field;
	// FieldsOmitted counts those found past the ones listed.
	Fields        []engine.FieldProblem `json:"fields,omitempty"`
	FieldsOmitted int                   `json:"fields_omitted,omitempty"`
	// CorrelationID names an internal fault in the operator's log.
	CorrelationID string     `json:"correlation_id,omitempty"`
	FreeTrial     *FreeTrial `json:"free_trial,omitempty"`
	// PaymentRequired is set on every 402: it goes in the PAYMENT-REQUIRED
	// header and, over MCP, is the tool result's structured content.
	PaymentRequired *PaymentRequired `json:"-"`
	// Settlement is the failed settlement of a settlement_failed refusal.
	Settlement *SettleResponse `json:"-"`
	// Header holds the response headers (PAYMENT-REQUIRED, PAYMENT-RESPONSE,
	// Retry-After, Free-Allowance-*).
	Header http.Header `json:"-"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// errorFields is Error without its methods, for marshalling.
type errorFields Error

// MarshalJSON writes the response body: the §6 fields first, then the
// PaymentRequired fields (the two sets of names are disjoint). Like every
// answer of the service, it does not escape <, > and & (RFC 8259 does not
// ask it).
func (e *Error) MarshalJSON() ([]byte, error) {
	base, err := ijson.Marshal((*errorFields)(e))
	if err != nil || e.PaymentRequired == nil {
		return base, err
	}
	pr, err := ijson.Marshal(e.PaymentRequired)
	if err != nil {
		return nil, err
	}
	out := append(base[:len(base)-1], ',')
	return append(out, pr[1:]...), nil
}

// Plain is the §6 error object without the x402 fields (for MCP _meta).
func (e *Error) Plain() any { return (*errorFields)(e) }

// MCPMeta is the _meta of an MCP payment-required tool result: the code
// (CodeFreeTrialExhausted when the allowance is used up, else e.Code), the
// §6 error object (without free_trial) and the free_trial object.
func (e *Error) MCPMeta() map[string]any {
	code := e.Code
	if e.FreeTrial != nil && e.FreeTrial.Code != "" && e.Code == CodePaymentRequired {
		code = e.FreeTrial.Code
	}
	plain := errorFields(*e)
	plain.FreeTrial = nil
	m := map[string]any{"code": code, "error": &plain}
	if e.FreeTrial != nil {
		m["free_trial"] = e.FreeTrial
	}
	return m
}

// IsPaymentRequired reports whether e is a 402 with PaymentRequired data:
// over MCP it becomes the x402 payment-required tool result rather than a
// plain error result.
func (e *Error) IsPaymentRequired() bool { return e.PaymentRequired != nil }

// WithRetryAfter marks e retryable after seconds (at least 1) and sets the
// Retry-After header.
func (e *Error) WithRetryAfter(seconds int) *Error {
	seconds = max(seconds, 1)
	e.Retryable = true
	e.RetryAfter = &seconds
	e.header().Set("Retry-After", strconv.Itoa(seconds))
	return e
}

func (e *Error) header() http.Header {
	if e.Header == nil {
		e.Header = http.Header{}
	}
	return e.Header
}

// Write answers an HTTP request with the refusal: its headers, its status
// and its JSON body.
func (e *Error) Write(w http.ResponseWriter) {
	body, err := e.MarshalJSON()
	if err != nil { // an Error always marshals
		panic(err)
	}
	for k, v := range e.Header {
		w.Header()[k] = slices.Clone(v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_, _ = w.Write(append(body, '\n'))
}
