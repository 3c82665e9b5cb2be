package payment

import (
	"net/http"
	"strings"
	"testing"

	"golang.org/x/net/http/httpguts"
)

// FuzzParseStaticHeaders: any --facilitator-header line and environment
// value either gives headers a request may carry, or an error that quotes
// no value.
func FuzzParseStaticHeaders(f *testing.F) {
	f.Add("X-Api-Key: ${KEY}", "k-1")
	f.Add("Authorization: Bearer $KEY$$", "a\r\nHost: x")
	f.Add("X A: b", "")
	f.Add("X-A: ${", "v")
	f.Fuzz(func(t *testing.T, line, value string) {
		h, err := ParseStaticHeaders([]string{line}, func(string) string { return value })
		if err != nil {
			if len(value) >= 4 && strings.Contains(err.Error(), value) {
				t.Fatalf("the error quotes the variable's value: %v", err)
			}
			return
		}
		req, _ := http.NewRequest(http.MethodGet, "http://f.example/", nil)
		if err := h.Authorize(req); err != nil {
			t.Fatal(err)
		}
		for name, values := range req.Header {
			if !httpguts.ValidHeaderFieldName(name) || reservedHeaders[name] {
				t.Fatalf("header name %q", name)
			}
			for _, v := range values {
				if !httpguts.ValidHeaderFieldValue(v) || v == "" {
					t.Fatalf("header %s value %q", name, v)
				}
			}
		}
	})
}

// FuzzNewCDPAuth: any key id and secret either make a key that signs, or
// an error that quotes neither the secret nor a long part of it.
func FuzzNewCDPAuth(f *testing.F) {
	f.Add("k", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n")
	f.Add("k", "TP5XAY0cqrTFK643BdmJ3yyyCRpqFNfTNF2B7791sllJCq4InAk2Vix6ZRQdKAo3Fyj+95LVx87p/JL/GgxP3w==")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, id, secret string) {
		a, err := NewCDPAuth(id, secret, nil)
		if err != nil {
			if s := strings.TrimSpace(secret); len(s) >= 8 && strings.Contains(err.Error(), s) {
				t.Fatalf("the error quotes the secret: %v", err)
			}
			return
		}
		if _, err := a.Token(http.MethodPost, "f.example", "/verify"); err != nil {
			t.Fatalf("a parsed key does not sign: %v", err)
		}
	})
}
