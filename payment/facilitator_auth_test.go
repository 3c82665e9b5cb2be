package payment

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseStaticHeaders(t *testing.T) {
	env := map[string]string{"FAC_KEY": "k-123", "CRLF": "a\r\nX-Injected: 1", "TAB": "a\tb"}
	getenv := func(n string) string { return env[n] }
	tests := []struct {
		name    string
		lines   []string
		want    http.Header
		wantErr string
	}{
		{"plain", []string{"X-Api-Key: abc"}, http.Header{"X-Api-Key": {"abc"}}, ""},
		{"variables", []string{"authorization: Bearer ${FAC_KEY}", "X-Key:$FAC_KEY-$$"},
			http.Header{"Authorization": {"Bearer k-123"}, "X-Key": {"k-123-$"}}, ""},
		{"twice", []string{"X-A: 1", "x-a: 2"}, http.Header{"X-A": {"1", "2"}}, ""},
		{"tab inside the value", []string{"X-A: $TAB"}, http.Header{"X-A": {"a\tb"}}, ""},
		{"no colon", []string{"Bearer abc"}, nil, "colon"},
		{"empty name", []string{": abc"}, nil, "colon"},
		{"bad name", []string{"X Api Key: abc"}, nil, "not a header name"},
		{"reserved", []string{"Host: evil.example"}, nil, "Host is set by the verifier"},
		{"reserved any case", []string{"content-type: text/plain"}, nil, "Content-Type is set by the verifier"},
		{"empty value", []string{"X-A:  "}, nil, "empty value"},
		{"CR LF from the environment", []string{"X-A: $CRLF"}, nil, "CR, LF"},
		{"CR LF in the flag", []string{"X-A: a\nX-B: b"}, nil, "CR, LF"},
		{"unset variable", []string{"X-A: ${NOPE}"}, nil, "NOPE is unset or empty"},
		{"unclosed brace", []string{"X-A: ${FAC_KEY"}, nil, "no closing }"},
		{"bad variable", []string{"X-A: ${1X}"}, nil, "not a variable name"},
		{"lone dollar", []string{"X-A: 5$"}, nil, "write $$ for a $"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ParseStaticHeaders(tt.lines, getenv)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrFacilitatorHeader) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want ErrFacilitatorHeader about %q", err, tt.wantErr)
				}
				for _, secret := range []string{"k-123", "abc", "X-Injected", "evil.example"} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("the error quotes a value: %v", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest(http.MethodGet, "http://f.example/supported", nil)
			if err := h.Authorize(req); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, req.Header); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFacilitatorSendsHeaders: the headers reach the facilitator on every
// call, beside (not instead of) the client's own.
func TestFacilitatorSendsHeaders(t *testing.T) {
	srv, seen := authFacilitator(t, testnetSupported)
	h, err := ParseStaticHeaders([]string{"X-Api-Key: k-1", "Authorization: Bearer b-2"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	f := &Facilitator{URL: srv.URL + "/platform/v2/x402", Timeout: 5 * time.Second, Auth: h}
	if _, err := f.Verify(context.Background(), &PaymentPayload{Raw: json.RawMessage(`{}`)}, PaymentRequirements{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Supported(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, r := range seen() {
		if r.header.Get("X-Api-Key") != "k-1" || r.auth != "Bearer b-2" || r.header.Get("Accept") != "application/json" {
			t.Errorf("%s %s headers = %v", r.method, r.path, r.header)
		}
	}
}
