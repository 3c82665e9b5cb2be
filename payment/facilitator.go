package payment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// ErrFacilitatorUnavailable is wrapped when the facilitator cannot be
// reached, times out, or answers with something other than a verify or
// settle response. Nothing was verified or settled.
var ErrFacilitatorUnavailable = errors.New("facilitator unavailable")

// maxFacilitatorReply bounds what is read of a facilitator answer.
const maxFacilitatorReply = 1 << 20

// Facilitator is a client of an x402 v2 facilitator's HTTP API. Each call is
// bounded by Timeout.
type Facilitator struct {
	URL     string       // base URL, without the trailing slash
	Client  *http.Client // nil means http.DefaultClient
	Timeout time.Duration
	// Auth, when set, authenticates each request (a CDP bearer token,
	// static headers).
	Auth Authorizer

	health facilitatorHealth // the outcome of the last call, for /health
}

// facilitatorRequest is the body of POST /verify and POST /settle.
type facilitatorRequest struct {
	X402Version         int                 `json:"x402Version"`
	PaymentPayload      json.RawMessage     `json:"paymentPayload"`
	PaymentRequirements PaymentRequirements `json:"paymentRequirements"`
}

// Verify asks the facilitator whether p is a valid payment for req (what
// this server offered, not the client's copy). An invalid payment is a
// VerifyResponse with IsValid false, not an error.
func (f *Facilitator) Verify(ctx context.Context, p *PaymentPayload, req PaymentRequirements) (*VerifyResponse, error) {
	var vr VerifyResponse
	body := facilitatorRequest{X402Version: X402Version, PaymentPayload: p.Raw, PaymentRequirements: req}
	has := func(m map[string]json.RawMessage) bool { _, ok := m["isValid"]; return ok }
	if err := f.post(ctx, "/verify", body, &vr, has); err != nil {
		return nil, fmt.Errorf("verifying payment: %w", err)
	}
	return &vr, nil
}

// Settle asks the facilitator to execute the payment p for req. A failed
// settlement is a SettleResponse with Success false, not an error.
func (f *Facilitator) Settle(ctx context.Context, p *PaymentPayload, req PaymentRequirements) (*SettleResponse, error) {
	var sr SettleResponse
	body := facilitatorRequest{X402Version: X402Version, PaymentPayload: p.Raw, PaymentRequirements: req}
	has := func(m map[string]json.RawMessage) bool { _, ok := m["success"]; return ok }
	if err := f.post(ctx, "/settle", body, &sr, has); err != nil {
		return nil, fmt.Errorf("settling payment: %w", err)
	}
	if sr.Network == "" {
		sr.Network = req.Network
	}
	return &sr, nil
}

// Supported reads the facilitator's GET /supported.
func (f *Facilitator) Supported(ctx context.Context) (*SupportedResponse, error) {
	var sr SupportedResponse
	has := func(m map[string]json.RawMessage) bool { _, ok := m["kinds"]; return ok }
	if err := f.do(ctx, http.MethodGet, "/supported", nil, &sr, has); err != nil {
		return nil, fmt.Errorf("reading supported kinds: %w", err)
	}
	return &sr, nil
}

func (f *Facilitator) post(ctx context.Context, path string, body any, out any, valid func(map[string]json.RawMessage) bool) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return f.do(ctx, http.MethodPost, path, b, out, valid)
}

// newRequest builds every request to the facilitator: the one place for
// what each carries (its headers; an authorization header goes here).
func (f *Facilitator) newRequest(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, f.URL+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if f.Auth != nil {
		if err := f.Auth.Authorize(req); err != nil {
			return nil, authError{err}
		}
	}
	return req, nil
}

// do calls the facilitator. Any status is accepted when the body is the
// expected answer (valid says so): the reference client treats a non-2xx
// reply carrying isValid/success as that answer. Anything else, including a
// timeout, wraps ErrFacilitatorUnavailable.
func (f *Facilitator) do(ctx context.Context, method, path string, body []byte, out any, valid func(map[string]json.RawMessage) bool) (err error) {
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = DefaultFacilitatorTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer func() { f.health.record(ctx, err) }()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := f.newRequest(ctx, method, path, rd)
	if err != nil {
		return fmt.Errorf("%w: %s %s: building the request: %w", ErrFacilitatorUnavailable, method, path, err)
	}
	client := f.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		// The cause without the URL, which may carry the operator's
		// credentials: "context deadline exceeded", "connection refused".
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return fmt.Errorf("%w: %s %s: %w", ErrFacilitatorUnavailable, method, path, err)
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, maxFacilitatorReply))
	if err != nil {
		return fmt.Errorf("%w: reading the reply: %v", ErrFacilitatorUnavailable, err)
	}
	var fields map[string]json.RawMessage
	// A refusal of the credentials is never an answer about the payment.
	refused := resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden
	if refused || json.Unmarshal(reply, &fields) != nil || !valid(fields) {
		return &FacilitatorStatusError{Method: method, Path: path, Status: resp.StatusCode}
	}
	if err := json.Unmarshal(reply, out); err != nil {
		return fmt.Errorf("%w: %s %s: %v", ErrFacilitatorUnavailable, method, path, err)
	}
	return nil
}
