package tools

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/store"
)

// Error codes (SPEC §6, §7). They are stable: clients branch on them.
const (
	CodeInvalidRequest       = "invalid_request"
	CodePayloadTooLarge      = "payload_too_large"
	CodeNotFound             = "not_found"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodeUnsupportedMediaType = "unsupported_media_type"
	CodeForbidden            = "forbidden"
	CodeRateLimited          = payment.CodeRateLimited
	CodeInternal             = "internal_error"
	CodeUnavailable          = "unavailable"
)

// Error is the one error shape of SPEC §6, in REST bodies and MCP tool
// results alike; it is the payment gate's type, so a refusal by either
// renders the same way. It never carries the caller's values.
type Error = payment.Error

// AsError converts any error into the error shape: an invalid request keeps
// its field problems; a store that could not be reached or did not answer
// in time (store.Unavailable) is StoreUnavailable's 503; anything else
// unexpected — a store that answered with a fault among it — becomes
// internal_error.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var invalid *engine.InvalidRequestError
	if errors.As(err, &invalid) {
		return invalidRequest(invalid)
	}
	if store.Unavailable(err) {
		return StoreUnavailable()
	}
	return &Error{
		Code: CodeInternal, Status: http.StatusInternalServerError,
		Message:     "The verifier hit an internal fault. Nothing was charged. Report the correlation id to the operator: the same request is not expected to succeed until the fault is fixed.",
		NextActions: []engine.NextAction{{Action: "report_fault"}},
	}
}

// InvalidRequest is the 422 for a request with field problems.
func InvalidRequest(fields []engine.FieldProblem) *Error {
	return invalidRequest(&engine.InvalidRequestError{Fields: fields})
}

// invalidRequest is the 422 of an engine error: its listed problems, and
// in fields_omitted how many more it found. The message counts them all.
func invalidRequest(invalid *engine.InvalidRequestError) *Error {
	fields := invalid.Fields
	first := "the request"
	if len(fields) > 0 {
		first = fields[0].Field + " " + fields[0].Problem
	}
	more := ""
	if n := len(fields) - 1 + invalid.Omitted; n > 0 {
		more = fmt.Sprintf(" (and %d more problem(s))", n)
	}
	if invalid.Omitted > 0 {
		more += fmt.Sprintf("; fields lists the first %d, fields_omitted counts the %d others", len(fields), invalid.Omitted)
	}
	return &Error{
		Code: CodeInvalidRequest, Status: http.StatusUnprocessableEntity,
		Message:       fmt.Sprintf("The request is invalid: %s%s. Nothing was charged; fix the field(s) and send it again.", first, more),
		NextActions:   []engine.NextAction{{Action: "fix_request_fields", Fields: invalid.FieldNames()}},
		Fields:        fields,
		FieldsOmitted: invalid.Omitted,
	}
}

// NewError builds an error of the given code with a message.
func NewError(code string, status int, message string) *Error {
	e := &Error{Code: code, Status: status, Message: message}
	switch code {
	case CodeNotFound:
		e.NextActions = []engine.NextAction{{Action: "check_the_url"}}
	case CodeRateLimited, CodeUnavailable:
		e.Retryable = true
		e.NextActions = []engine.NextAction{{Action: "retry_later"}}
	default:
		e.NextActions = []engine.NextAction{{Action: "fix_request"}}
	}
	return e
}

// StoreUnavailableRetryAfter is the Retry-After, in seconds, of
// StoreUnavailable.
const StoreUnavailableRetryAfter = 1

// StoreUnavailable is the 503 of a call whose store could not be reached or
// did not answer within the request's deadline (store.Unavailable): no
// verdict was stored and nothing was charged, so the call can be sent
// again as it is.
func StoreUnavailable() *Error {
	return NewError(CodeUnavailable, http.StatusServiceUnavailable,
		"The verifier's store could not be reached or did not answer in time, so the call was not served: no verdict was stored and nothing was charged. Send the request again.").WithRetryAfter(StoreUnavailableRetryAfter)
}

// RequestEnded is the 503 of a call whose request ended (the client
// disconnected or the deadline passed) before it could be served.
func RequestEnded() *Error {
	return NewError(CodeUnavailable, http.StatusServiceUnavailable,
		"The request ended before it could be served. Nothing was charged; send it again.").WithRetryAfter(1)
}
