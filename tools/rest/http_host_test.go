package rest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// hostRequest sends one request to the fixture with the given Host (empty:
// the server's address) and Origin (empty: none).
func (f *httpFixture) hostRequest(t *testing.T, method, path, host, origin string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// hostRoutes are one request to each kind of route: REST reads and
// writes, pages, documents, the log, MCP.
type hostRoute struct {
	method, path string
	body         []byte
}

func hostRoutes(t *testing.T) []hostRoute {
	invoice := testkit.ReadTestdata(t, "invoice-pass.json")
	return []hostRoute{
		{http.MethodGet, "/reputation/agent-1", nil},
		{http.MethodGet, "/score/agent-1", nil},
		{http.MethodGet, "/agents/agent-1", nil},
		{http.MethodGet, "/log/receipts/0", nil},
		{http.MethodGet, "/receipts/nope", nil},
		{http.MethodGet, "/health", nil},
		{http.MethodGet, "/", nil},
		{http.MethodGet, "/check", nil},
		{http.MethodGet, "/docs", nil},
		{http.MethodGet, "/openapi.json", nil},
		{http.MethodGet, "/llms.txt", nil},
		{http.MethodGet, "/.well-known/agent-card.json", nil},
		{http.MethodPost, "/verify/schema", invoice},
		{http.MethodPost, "/verify/deliverable", invoice},
		{http.MethodGet, "/nope", nil},
		{http.MethodPost, "/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)},
	}
}

// checkForbidden checks a hostGuard refusal: 403, the one error shape
// (a JSON-RPC error on /mcp) naming header and --allowed-host, and no echo
// of the foreign name.
func checkForbidden(t *testing.T, path, header string, resp *http.Response, body []byte) {
	t.Helper()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status %d, want 403: %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if bytes.Contains(body, []byte("evil")) {
		t.Errorf("the refusal echoes the foreign name: %s", body)
	}
	if path == "/mcp" {
		var m struct {
			ID    any `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &m); err != nil || m.ID != nil || m.Error.Code != -32600 ||
			!strings.Contains(m.Error.Message, header+" header") || !strings.Contains(m.Error.Message, AllowedHostFlag) {
			t.Errorf("/mcp refusal is not a JSON-RPC error naming %s and %s: %s", header, AllowedHostFlag, body)
		}
		return
	}
	var e tools.Error
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("body is not the error shape: %s", body)
	}
	if e.Code != tools.CodeForbidden || e.Status != http.StatusForbidden || e.Retryable || len(e.Fields) != 1 ||
		e.Fields[0].Field != header || !strings.Contains(e.Fields[0].Fix, AllowedHostFlag) {
		t.Errorf("error = %+v, want forbidden on %s with a fix naming %s", e, header, AllowedHostFlag)
	}
}

// TestHostGuardRefusesForeignHost: on a loopback listener every route —
// REST, pages, documents, the log, MCP — refuses a Host that is not a
// loopback name, the public URL's host or an --allowed-host name (a DNS
// rebinding), with a 403 in the route's error shape.
func TestHostGuardRefusesForeignHost(t *testing.T) {
	f := newHTTPFixture(t, &HTTPOptions{AllowedHosts: []string{"verifier.lan"}}, nil)
	for _, rt := range hostRoutes(t) {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			for _, host := range []string{"evil.example", "evil.example:8080", "127.0.0.1.evil.example", "localhost.evil.example"} {
				resp, body := f.hostRequest(t, rt.method, rt.path, host, "", rt.body)
				checkForbidden(t, rt.path, "Host", resp, body)
			}
		})
	}
	// The names it answers for.
	port := f.srv.Listener.Addr().String()[strings.LastIndex(f.srv.Listener.Addr().String(), ":"):]
	for _, host := range []string{"", "localhost" + port, "LOCALHOST", "127.0.0.1", "127.0.0.2" + port, "[::1]" + port,
		"0.0.0.0" + port, "[::]" + port, "verifier.test", "verifier.test:443", "verifier.lan", "Verifier.LAN" + port, "verifier.lan."} {
		resp, body := f.hostRequest(t, http.MethodGet, "/health", host, "", nil)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("Host %q: status %d, want 200: %s", host, resp.StatusCode, body)
		}
		resp, body = f.hostRequest(t, http.MethodPost, "/mcp", host, "", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if resp.StatusCode != http.StatusOK {
			t.Errorf("Host %q, /mcp: status %d, want 200: %s", host, resp.StatusCode, body)
		}
	}
}

// TestHostGuardOrigin: a present Origin must be the server's own on /mcp
// and on every POST: the Host's origin, a loopback origin on a loopback
// connection, the public URL's origin or an --allowed-host name's.
// Reads (GET) are not refused for their Origin.
func TestHostGuardOrigin(t *testing.T) {
	f := newHTTPFixture(t, &HTTPOptions{AllowedHosts: []string{"verifier.lan"}}, nil)
	invoice := testkit.ReadTestdata(t, "invoice-pass.json")
	ping := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	self := f.srv.URL
	for _, tt := range []struct {
		origin string
		ok     bool
	}{
		{"http://evil.example", false},
		{"https://evil.example:443", false},
		{"null", false},
		{"file://", false},
		{"http://127.0.0.1.evil.example", false},
		{"https://verifier.test.evil.example", false},
		{"http://verifier.test:8080", true}, // the public URL's host, another scheme and port
		{self, true},
		{"http://localhost:6274", true}, // a local tool's page (the MCP Inspector)
		{"http://[::1]:3000", true},
		{"https://verifier.test", true},
		{"https://verifier.lan:8443", true},
	} {
		t.Run(tt.origin, func(t *testing.T) {
			for _, rt := range []struct {
				path string
				body []byte
			}{{"/verify/schema", invoice}, {"/mcp", ping}} {
				resp, body := f.hostRequest(t, http.MethodPost, rt.path, "", tt.origin, rt.body)
				if tt.ok {
					if resp.StatusCode != http.StatusOK {
						t.Errorf("POST %s: status %d, want 200: %s", rt.path, resp.StatusCode, body)
					}
					continue
				}
				checkForbidden(t, rt.path, "Origin", resp, body)
			}
		})
	}
	if resp, body := f.hostRequest(t, http.MethodGet, "/reputation/agent-1", "", "http://evil.example", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("GET with a foreign Origin: status %d, want 200 (a read; the browser keeps the answer from the page): %s", resp.StatusCode, body)
	}
}

// TestHostGuardNotLoopback: off a loopback address (no local address is
// loopback here) the Host is not checked — a public listener answers any
// name — but a foreign Origin on a POST still is.
func TestHostGuardNotLoopback(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "http://evil.example/health", nil)
	f.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Errorf("GET /health with Host evil.example off loopback: %d, want 200", rec.Code)
	}
	rec = httptest.NewRecorder()
	req = httptest.NewRequest(http.MethodPost, "http://verifier.example/verify/schema", bytes.NewReader(testkit.ReadTestdata(t, "invoice-pass.json")))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "https://evil.example")
	f.h.ServeHTTP(rec, req)
	checkForbidden(t, "/verify/schema", "Origin", rec.Result(), rec.Body.Bytes())
}
