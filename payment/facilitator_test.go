package payment

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFacilitatorClient(t *testing.T) {
	req := PaymentRequirements{Scheme: "exact", Network: "eip155:84532", Amount: "20000",
		Asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", PayTo: testPayTo, MaxTimeoutSeconds: 60,
		Extra: map[string]any{"name": "USDC", "version": "2"}}
	p := evmPayment(t, req, randomNonce(t), time.Now().Add(time.Minute))
	p, err := DecodePaymentSignature(header(t, p))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		status    int
		body      string
		call      func(*Facilitator) (any, error)
		want      any
		wantUnavl bool
	}{
		{"verify ok", 200, `{"isValid":true,"payer":"0xabc"}`,
			func(f *Facilitator) (any, error) { return f.Verify(context.Background(), p, req) },
			&VerifyResponse{IsValid: true, Payer: "0xabc"}, false},
		{"verify invalid", 200, `{"isValid":false,"invalidReason":"invalid_exact_evm_signature","payer":"0xabc"}`,
			func(f *Facilitator) (any, error) { return f.Verify(context.Background(), p, req) },
			&VerifyResponse{IsValid: false, InvalidReason: "invalid_exact_evm_signature", Payer: "0xabc"}, false},
		{"verify invalid as HTTP 400", 400, `{"isValid":false,"invalidReason":"invalid_payload"}`,
			func(f *Facilitator) (any, error) { return f.Verify(context.Background(), p, req) },
			&VerifyResponse{IsValid: false, InvalidReason: "invalid_payload"}, false},
		{"verify 500 without answer", 500, `{"error":"boom"}`,
			func(f *Facilitator) (any, error) { return f.Verify(context.Background(), p, req) }, nil, true},
		{"verify not JSON", 200, `<html>`,
			func(f *Facilitator) (any, error) { return f.Verify(context.Background(), p, req) }, nil, true},
		{"settle ok", 200, `{"success":true,"transaction":"0xdead","network":"eip155:84532","payer":"0xabc"}`,
			func(f *Facilitator) (any, error) { return f.Settle(context.Background(), p, req) },
			&SettleResponse{Success: true, Transaction: "0xdead", Network: "eip155:84532", Payer: "0xabc"}, false},
		{"settle fail", 200, `{"success":false,"errorReason":"invalid_exact_evm_nonce_already_used","transaction":""}`,
			func(f *Facilitator) (any, error) { return f.Settle(context.Background(), p, req) },
			&SettleResponse{Success: false, ErrorReason: "invalid_exact_evm_nonce_already_used", Network: "eip155:84532"}, false},
		{"settle 502", 502, `bad gateway`,
			func(f *Facilitator) (any, error) { return f.Settle(context.Background(), p, req) }, nil, true},
		{"supported", 200, notesSupported,
			func(f *Facilitator) (any, error) { return f.Supported(context.Background()) },
			&SupportedResponse{Kinds: []SupportedKind{{X402Version: 2, Scheme: "exact", Network: "eip155:84532"}}, Extensions: []string{},
				Signers: map[string][]string{"eip155:*": {"0x0000000000000000000000000000000000000001"}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got facilitatorRequest
			var method, path string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				method, path = r.Method, r.URL.Path
				_ = json.NewDecoder(r.Body).Decode(&got)
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			res, err := tt.call(&Facilitator{URL: srv.URL, Timeout: time.Second})
			if tt.wantUnavl {
				if !errors.Is(err, ErrFacilitatorUnavailable) {
					t.Fatalf("error = %v, want ErrFacilitatorUnavailable", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if path == "/supported" {
				if method != "GET" {
					t.Errorf("method = %s, want GET", method)
				}
				return
			}
			if method != "POST" || got.X402Version != 2 || !cmp.Equal(got.PaymentRequirements, req) {
				t.Errorf("request = %s %s %+v, want POST with x402Version 2 and our requirement", method, path, got)
			}
			if !cmp.Equal(jsonValue(t, got.PaymentPayload), jsonValue(t, p.Raw)) {
				t.Errorf("paymentPayload sent = %s, want the client's payload as received", got.PaymentPayload)
			}
		})
	}
}

func TestFacilitatorTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	f := &Facilitator{URL: srv.URL, Timeout: 100 * time.Millisecond}
	start := time.Now()
	_, err := f.Verify(context.Background(), &PaymentPayload{Raw: json.RawMessage(`{}`)}, PaymentRequirements{})
	if !errors.Is(err, ErrFacilitatorUnavailable) {
		t.Fatalf("error = %v, want ErrFacilitatorUnavailable", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("timed out after %s, want about 100ms", d)
	}
}

func TestFacilitatorDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := (&Facilitator{URL: url, Timeout: time.Second}).Settle(context.Background(), &PaymentPayload{Raw: json.RawMessage(`{}`)}, PaymentRequirements{})
	if !errors.Is(err, ErrFacilitatorUnavailable) {
		t.Fatalf("error = %v, want ErrFacilitatorUnavailable", err)
	}
}
