package rest

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"text/template"
	"time"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
)

// ErrorCode is one row of the documented error-code table (SPEC §6).
type ErrorCode struct {
	Code      string
	Status    int
	Retryable bool
	Meaning   string
}

// ErrorCodes is the error-code table that /llms.txt and /openapi.json
// publish, the payment codes (SPEC §7, package payment) included.
func ErrorCodes() []ErrorCode {
	return []ErrorCode{
		{tools.CodeInvalidRequest, http.StatusUnprocessableEntity, false, "The request is malformed or breaks a rule of the request format; fields[] names each field, its problem and the fix. Never charged."},
		{tools.CodePayloadTooLarge, http.StatusRequestEntityTooLarge, false, "The body is over the size limit, which the message states."},
		{tools.CodeNotFound, http.StatusNotFound, false, "No such route, or no receipt under that verification id."},
		{tools.CodeMethodNotAllowed, http.StatusMethodNotAllowed, false, "The route exists but not for this method; the Allow header lists the methods."},
		{tools.CodeUnsupportedMediaType, http.StatusUnsupportedMediaType, false, "A POST body not sent as Content-Type: application/json (UTF-8)."},
		{tools.CodeForbidden, http.StatusForbidden, false, "The Host header (on a loopback address) or the Origin header (on /mcp, and on a POST) names a site this server does not answer for: the DNS-rebinding defence. Use a loopback name or the public URL's host; an operator adds names with --allowed-host."},
		{tools.CodeRateLimited, http.StatusTooManyRequests, true, "The free allowance is used up and payment is off; retry_after says when it resets."},
		{tools.CodeInternal, http.StatusInternalServerError, false, "A fault of the service, or a store that answered with a fault (a corrupt file, a broken invariant); the body carries only a correlation_id to report."},
		{tools.CodeUnavailable, http.StatusServiceUnavailable, true, "Temporarily unable to serve: overloaded, the verification over its time limit, or the store could not be reached or did not answer within the request's deadline (no verdict stored, nothing charged); retry after retry_after seconds."},
		{payment.CodePaymentRequired, http.StatusPaymentRequired, false, "Pay to be served (x402 v2): past the free allowance, over the free-tier size, a trust record, or an empty POST probing a verify route. The Payment-Required header and the body carry the payment options; free_trial.code is free_trial_exhausted once the allowance is used up."},
		{payment.CodePaymentInvalid, http.StatusPaymentRequired, false, "The Payment-Signature cannot be accepted (malformed, wrong amount, network or payee, or refused by the facilitator)."},
		{payment.CodePaymentReplayed, http.StatusPaymentRequired, false, "The payment was already used for another call; each payment pays once. (The same payment sent again for the same call gets that call's kept answer instead.)"},
		{payment.CodeSettlementFailed, http.StatusPaymentRequired, false, "The work was done but the payment did not settle, so the answer is withheld, its verdict is not recorded, and nothing was charged."},
		{payment.CodeFacilitatorUnavailable, http.StatusServiceUnavailable, true, "The payment facilitator is down or slow; retry after retry_after seconds. charged is false when the payment was only being checked; \"unknown\" when it was sent for settlement and no answer came (or it is still being settled): the answer is kept, so send the same call with the same payment again to get it, never charged twice."},
	}
}

// ErrorTable renders ErrorCodes as the Markdown table that /llms.txt and
// /openapi.json publish (and README.md copies): code, HTTP status,
// retryable, meaning.
func ErrorTable() string {
	return errorTable(func(ErrorCode) bool { return true })
}

// errorTable renders the rows of ErrorCodes that keep selects.
func errorTable(keep func(ErrorCode) bool) string {
	var b strings.Builder
	b.WriteString("| code | HTTP | retryable | meaning |\n|---|---|---|---|\n")
	for _, c := range ErrorCodes() {
		if keep(c) {
			fmt.Fprintf(&b, "| %s | %d | %t | %s |\n", c.Code, c.Status, c.Retryable, c.Meaning)
		}
	}
	return b.String()
}

// IsPaymentCode reports whether code is one of the payment layer's (SPEC
// §7), which /llms.txt lists in a section of its own after the other errors,
// as the hosted service's documentation does.
func IsPaymentCode(code string) bool {
	switch code {
	case payment.CodePaymentRequired, payment.CodePaymentInvalid, payment.CodePaymentReplayed,
		payment.CodeSettlementFailed, payment.CodeFacilitatorUnavailable:
		return true
	}
	return false
}

// llmsText renders /llms.txt from its embedded template.
type llmsText struct{ tmpl *template.Template }

func newLLMsText() (*llmsText, error) {
	tmpl, err := template.New("llms.txt.tmpl").ParseFS(docsFS, "docs/llms.txt.tmpl")
	if err != nil {
		return nil, fmt.Errorf("parsing llms.txt template: %w", err)
	}
	return &llmsText{tmpl: tmpl}, nil
}

// llmsData is what the llms.txt template reads.
type llmsData struct {
	URL, Version, KeyVersion      string
	MaxBody                       string
	VerifyTimeout                 string
	Pricing                       *Pricing // nil: neither limited nor charged
	Resets                        string
	ErrorTable, PaymentErrorTable string // the codes other than payment codes, and the payment codes
	ContextVerify, ContextScore   string
	Canonicalization, Hash        string
	ExampleRequest                string
	Tools                         llmsTools
}

// llmsTools are the tool names llms.txt lists, from package contract.
type llmsTools struct{ VerifySchema, Record, VerifyReceipt string }

// llmsTxt serves GET /llms.txt with the live allowance and prices.
func (h *HTTPHandler) llmsTxt(w http.ResponseWriter, r *http.Request) {
	d := llmsData{
		URL: h.svc.BaseURL(), Version: h.svc.Version, KeyVersion: h.svc.Keys.Current().KeyVersion(),
		MaxBody:           fmt.Sprintf("%d bytes (%s)", h.opts.MaxBodyBytes, humanBytes(h.opts.MaxBodyBytes)),
		VerifyTimeout:     h.opts.VerifyTimeout.String(),
		ErrorTable:        errorTable(func(c ErrorCode) bool { return !IsPaymentCode(c.Code) }),
		PaymentErrorTable: errorTable(func(c ErrorCode) bool { return IsPaymentCode(c.Code) }),
		ContextVerify:     signing.ContextVerify, ContextScore: signing.ContextTrustScore,
		Canonicalization: engine.Canonicalization, Hash: engine.HashAlgorithm,
		ExampleRequest: strings.ReplaceAll(contract.VerifySchemaExample, "\n", "\n    "),
		Tools:          llmsTools{VerifySchema: contract.VerifySchema, Record: contract.Record, VerifyReceipt: contract.VerifyReceipt},
	}
	if h.opts.Pricing != nil {
		p := h.opts.Pricing(r)
		d.Pricing = &p
		if !p.Resets.IsZero() {
			d.Resets = p.Resets.UTC().Format(time.RFC3339)
		}
	}
	var b bytes.Buffer
	if err := h.llms.tmpl.Execute(&b, d); err != nil {
		h.fail(w, r, fmt.Errorf("rendering llms.txt: %w", err))
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/plain; charset=utf-8")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b.Bytes())
}
