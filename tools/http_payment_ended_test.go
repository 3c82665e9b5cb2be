package tools

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestPaymentGateRequestEnded: when the gate fails because the request
// ended (the client went away), the answer is a retryable 503, not an
// internal error.
func TestPaymentGateRequestEnded(t *testing.T) {
	svc := newTestService(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest(http.MethodPost, "/verify/schema", nil).WithContext(ctx)
	w := httptest.NewRecorder()
	svc.writePaymentError(w, r, errors.Join(errors.New("taking allowance"), context.Canceled))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Errorf("status %d (Retry-After %q), want 503 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
	res := svc.paymentResult(context.Canceled)
	var e struct{ Code string }
	raw, _ := res.StructuredContent.(json.RawMessage)
	if err := json.Unmarshal(raw, &e); err != nil || !res.IsError || e.Code != CodeUnavailable {
		t.Errorf("MCP payment result: isError %v, code %q (%v); want the %s error", res.IsError, e.Code, err, CodeUnavailable)
	}
}
