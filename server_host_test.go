package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServeHTTPAllowedHost: on a loopback listener, --public-url's host and
// each --allowed-host name are answered, in Host and Origin, beside the
// loopback names; any other Host is a 403 naming the flag, on REST and MCP
// alike.
func TestServeHTTPAllowedHost(t *testing.T) {
	srv := startHTTP(t, "--public-url", "https://verifier.example", "--allowed-host", "verifier.lan", "--allowed-host", "10.0.0.7")
	send := func(method, path, host, origin, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, host := range []string{"localhost", "verifier.example", "verifier.lan:8080", "10.0.0.7"} {
		if status, body := send(http.MethodGet, "/reputation/a", host, "", ""); status != http.StatusOK {
			t.Errorf("Host %s: GET /reputation = %d: %s", host, status, body)
		}
		if status, body := send(http.MethodPost, "/mcp", host, "https://"+host, ping); status != http.StatusOK {
			t.Errorf("Host and Origin %s: /mcp = %d: %s", host, status, body)
		}
	}
	for _, path := range []string{"/reputation/a", "/score/a", "/agents/a", "/log/receipts/0"} {
		status, body := send(http.MethodGet, path, "evil.example", "", "")
		if status != http.StatusForbidden || !strings.Contains(body, `"code":"forbidden"`) || !strings.Contains(body, "--allowed-host") || strings.Contains(body, "evil") {
			t.Errorf("Host evil.example: GET %s = %d %s, want 403 forbidden naming --allowed-host", path, status, body)
		}
	}
	if status, body := send(http.MethodPost, "/mcp", "verifier.lan", "http://evil.example", ping); status != http.StatusForbidden || !strings.Contains(body, "Origin header") {
		t.Errorf("a foreign Origin on /mcp = %d %s, want 403 naming the Origin header", status, body)
	}
}
