package rest

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
	"github.com/verifier-dev/verifier/tools/mcpserver"
)

// TestShedRequestLineAtInfo: the request line of a 503 the Limiter shed
// (counted in its own warning, TestLimiterReportsRefusalsCounted) is at
// INFO, not WARN.
func TestShedRequestLineAtInfo(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	f := newHTTPFixture(t, &HTTPOptions{Log: log}, nil)
	f.svc.Limiter = tools.NewLimiter(1)
	hold, err := f.svc.Limiter.Acquire(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer hold()
	if resp, body := f.postJSON(t, "/verify/schema", invoice(t, "invoice-pass.json", nil)); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503; body %s", resp.StatusCode, body)
	}
	if !strings.Contains(logs.String(), "level=INFO msg=\"http request\"") || strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("the request line of a busy 503 is not at INFO:\n%s", logs.String())
	}
}

// TestLimiterRefusesExcess fills every slot and checks that a verification
// over REST, over MCP and through the typed core gets the retryable 503 in
// the one error shape, then that a freed slot serves again.
func TestLimiterRefusesExcess(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	f.svc.Limiter = tools.NewLimiter(2)
	var held []func()
	for range 2 {
		release, err := f.svc.Limiter.Acquire(t.Context(), 0)
		if err != nil {
			t.Fatalf("acquire on a free limiter: %v", err)
		}
		held = append(held, release)
	}
	body := invoice(t, "invoice-pass.json", map[string]any{"task_id": testkit.Marker})

	resp, got := f.postJSON(t, "/verify/schema", body)
	e := checkErrorShape(t, resp, got, http.StatusServiceUnavailable, tools.CodeUnavailable)
	if e["retryable"] != true || e["retry_after"] != float64(tools.BusyRetryAfter) || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("busy 503 = %s (Retry-After %q); want retryable after %d s", got, resp.Header.Get("Retry-After"), tools.BusyRetryAfter)
	}

	_, err := f.svc.Verify(t.Context(), body)
	if e := tools.AsError(err); err == nil || e.Status != http.StatusServiceUnavailable || e.Code != tools.CodeUnavailable {
		t.Errorf("Service.Verify while full = %v, want 503 %s", err, tools.CodeUnavailable)
	}

	c := testkit.ConnectMCP(t, mcpserver.NewMCPServer(f.svc))
	res := c.Call(t, contract.VerifySchema, string(body))
	if !res.IsError || testkit.Structured(t, res)["code"] != tools.CodeUnavailable {
		t.Errorf("verify_schema while full: isError %v, %v; want the %s error", res.IsError, res.StructuredContent, tools.CodeUnavailable)
	}
	if strings.Contains(string(testkit.StructuredJSON(t, res)), testkit.Marker) {
		t.Errorf("the MCP error echoes the request: %s", testkit.StructuredJSON(t, res))
	}

	held[0]()
	if f.svc.Limiter.InUse() != 1 {
		t.Fatalf("InUse() = %d after one release, want 1", f.svc.Limiter.InUse())
	}
	if resp, got := f.postJSON(t, "/verify/schema", body); resp.StatusCode != http.StatusOK {
		t.Errorf("with a free slot: status %d, want 200; body %s", resp.StatusCode, got)
	}
	held[1]()
	if f.svc.Limiter.InUse() != 0 {
		t.Errorf("InUse() = %d after every release, want 0", f.svc.Limiter.InUse())
	}
}

// TestLimiterUnderLoad sends many verifications at once through a limiter
// smaller than the load: each gets a verdict or the busy 503, never
// anything else, at least one is served, and every slot is free afterwards.
func TestLimiterUnderLoad(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	f.svc.Limiter = tools.NewLimiter(2)
	body := invoice(t, "invoice-pass.json", nil)
	const clients = 16
	statuses := postVerifications(t, f, body, clients)
	served := 0
	for i, s := range statuses {
		switch s {
		case http.StatusOK:
			served++
		case http.StatusServiceUnavailable:
		default:
			t.Errorf("client %d: status %d, want 200 or 503", i, s)
		}
	}
	if served == 0 {
		t.Errorf("no request was served: %v", statuses)
	}
	if n := f.svc.Limiter.InUse(); n != 0 {
		t.Errorf("InUse() = %d after the load, want 0", n)
	}
}

// TestLimiterFullTurnsAwayFirst: with every slot and waiting place taken, a
// verification is refused before its body is decoded and before the gate
// sees it (a malformed body gets the 503, not a 422).
func TestLimiterFullTurnsAwayFirst(t *testing.T) {
	g := &gateLog{}
	f := newHTTPFixture(t, &HTTPOptions{Gate: g.gate}, nil)
	f.svc.Limiter = tools.NewLimiter(1)
	hold, err := f.svc.Limiter.Acquire(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range [][]byte{invoice(t, "invoice-pass.json", nil), []byte(`{"task_id":`)} {
		resp, out := f.postJSON(t, "/verify/schema", body)
		checkErrorShape(t, resp, out, http.StatusServiceUnavailable, tools.CodeUnavailable)
	}
	if calls := g.seen(); len(calls) != 0 {
		t.Errorf("the gate saw %d refused calls, want none", len(calls))
	}
	hold()
	if resp, out := f.postJSON(t, "/verify/schema", invoice(t, "invoice-pass.json", nil)); resp.StatusCode != http.StatusOK {
		t.Errorf("with a slot free: status %d, want 200; body %s", resp.StatusCode, out)
	}
}

// postVerifications posts body to f's /verify/schema from clients
// goroutines at once and returns each one's status (0 when its request
// failed, which is reported).
func postVerifications(t *testing.T, f *httpFixture, body []byte, clients int) []int {
	t.Helper()
	statuses := make([]int, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			resp, err := f.srv.Client().Post(f.srv.URL+"/verify/schema", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		})
	}
	wg.Wait()
	return statuses
}
