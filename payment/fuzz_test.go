package payment

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"
)

// FuzzPaymentSignature feeds arbitrary headers through decoding and the
// scheme checks: no panic, and what decodes keeps valid JSON in Raw.
func FuzzPaymentSignature(f *testing.F) {
	f.Add(base64.StdEncoding.EncodeToString([]byte(notesPaymentPayload)))
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepted":{"network":"solana:x"},"payload":{"transaction":"AQID"}}`)))
	f.Add("eyJ4NDAyVmVyc2lvbiI6Mn0=")
	f.Add("")
	evm := PaymentRequirements{Scheme: "exact", Network: "eip155:84532", Amount: "10000", PayTo: testPayTo, MaxTimeoutSeconds: 60}
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, h string) {
		p, err := DecodePaymentSignature(h)
		if err != nil {
			return
		}
		if !json.Valid(p.Raw) {
			t.Fatalf("Raw is not JSON: %q", p.Raw)
		}
		for _, req := range []PaymentRequirements{evm, {Scheme: "exact", Network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"}} {
			id, _, reason := checkScheme(p, req, now)
			if (reason == "") != (id != "") {
				t.Fatalf("checkScheme = id %q, reason %q: exactly one must be set", id, reason)
			}
			if len(id) > 1024 {
				t.Fatalf("replay id of %d bytes is too long for the store", len(id))
			}
		}
	})
}

// FuzzClientID: any remote address or X-Forwarded-For gives a short key.
func FuzzClientID(f *testing.F) {
	f.Add("203.0.113.7:5123", "198.51.100.1, 192.0.2.1")
	f.Add("[2001:db8::1]:80", "[2001:db8::2]:9")
	f.Fuzz(func(t *testing.T, remote, xff string) {
		for _, id := range []string{ClientIDOf(remote), ClientIDOf(lastForwardedFor([]string{xff}))} {
			if id == "" || len(id) > 64 {
				t.Fatalf("client id %q", id)
			}
		}
	})
}
