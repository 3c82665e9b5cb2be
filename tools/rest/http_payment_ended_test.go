package rest

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// TestPaymentGateRequestEnded: when the gate fails because the request
// ended (the client went away), the answer is a retryable 503, not an
// internal error.
func TestPaymentGateRequestEnded(t *testing.T) {
	svc := testkit.NewTestService(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest(http.MethodPost, "/verify/schema", nil).WithContext(ctx)
	w := httptest.NewRecorder()
	httpService{svc}.writePaymentError(w, r, errors.Join(errors.New("taking allowance"), context.Canceled))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Errorf("status %d (Retry-After %q), want 503 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
}

// TestPaymentGateRequestEndedLogsNoFault: a client that hangs up while the
// free allowance is taken gets the retryable 503, and the log has no
// warning or error for it (no "payment gate failed", no 500).
func TestPaymentGateRequestEndedLogsNoFault(t *testing.T) {
	svc := testkit.NewTestService(t, true)
	g, err := payment.NewGate(payment.Config{FreePerDay: 10}, svc.Store, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	svc.Log = slog.New(slog.NewTextHandler(&logs, nil))
	opts := HTTPOptions{Log: svc.Log}
	WithPayment(svc, &opts, g)
	h, err := NewHTTPHandler(svc, withMCP(svc, &opts))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest(http.MethodPost, "/verify/schema", bytes.NewReader(testkit.ReadTestdata(t, "invoice-pass.json"))).WithContext(ctx)
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("status %d, want 503; body %s", w.Code, w.Body)
	}
	if s := logs.String(); strings.Contains(s, "level=WARN") || strings.Contains(s, "level=ERROR") || !strings.Contains(s, "status=503") {
		t.Errorf("log of a request its client ended, want INFO lines only:\n%s", s)
	}
	if a, err := g.Allowance(context.Background(), g.ClientID(r)); err != nil || a.Remaining != 10 {
		t.Errorf("allowance after the ended request = %+v, %v; want all 10 left", a, err)
	}
}
