package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// testPublicURL is what the fixtures advertise.
const testPublicURL = "https://verifier.test"

// httpFixture is the HTTP mode on a real key store and bbolt store in temp
// dirs, behind a real listener.
type httpFixture struct {
	svc  *tools.Service
	h    *HTTPHandler
	srv  *httptest.Server
	logs *testkit.SyncBuffer
}

// newHTTPFixture serves NewHTTPHandler(svc, withMCP(svc, opts)); wrap, when not nil,
// wraps the store (to inject faults).
func newHTTPFixture(t *testing.T, opts *HTTPOptions, wrap func(store.Store) store.Store) *httpFixture {
	t.Helper()
	keys, err := signing.OpenKeyStore(filepath.Join(t.TempDir(), "keys"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return newHTTPFixtureKeys(t, keys, opts, wrap)
}

// newHTTPFixtureKeys is newHTTPFixture with the given key store.
func newHTTPFixtureKeys(t *testing.T, keys *signing.KeyStore, opts *HTTPOptions, wrap func(store.Store) store.Store) *httpFixture {
	t.Helper()
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "verifier.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	logs := &testkit.SyncBuffer{}
	svc := &tools.Service{
		Engine: engine.New(nil), Keys: keys, Store: st, Version: "test", PublicURL: testPublicURL,
		Log: slog.New(slog.NewTextHandler(logs, nil)),
	}
	if wrap != nil {
		svc.Store = wrap(st)
	}
	h, err := NewHTTPHandler(svc, withMCP(svc, opts))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &httpFixture{svc: svc, h: h, srv: srv, logs: logs}
}

// do sends one request and returns the response with its body read.
func (f *httpFixture) do(t *testing.T, method, path string, body io.Reader, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// postJSON posts body to path as application/json.
// get GETs path and returns the body, failing the test unless the answer
// is a 200.
func (f *httpFixture) get(t *testing.T, path string) []byte {
	t.Helper()
	resp, body := f.do(t, http.MethodGet, path, nil, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d: %s", path, resp.StatusCode, body)
	}
	return body
}

func (f *httpFixture) postJSON(t *testing.T, path string, body []byte) (*http.Response, []byte) {
	t.Helper()
	return f.do(t, http.MethodPost, path, bytes.NewReader(body), jsonHeader())
}

func jsonHeader() http.Header { return http.Header{"Content-Type": {"application/json"}} }

// invoice returns the repository's invoice request, with members replaced.
func invoice(t *testing.T, name string, set map[string]any) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testkit.SuitesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		m[k] = v
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// decodeObject decodes a JSON object body.
func decodeObject(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, body)
	}
	return m
}

// checkErrorShape asserts the one error shape of SPEC §6 with the given
// status and code, and that nothing of marker came back.
func checkErrorShape(t *testing.T, resp *http.Response, body []byte, status int, code string) map[string]any {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("status = %d, want %d; body %s", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if _, err := uuid.Parse(resp.Header.Get(CorrelationHeader)); err != nil {
		t.Errorf("%s = %q, want a UUID", CorrelationHeader, resp.Header.Get(CorrelationHeader))
	}
	if bytes.Contains(body, []byte(testkit.Marker)) {
		t.Errorf("the error echoes the request: %s", body)
	}
	for k, v := range resp.Header {
		if strings.Contains(strings.Join(v, " "), testkit.Marker) {
			t.Errorf("header %s echoes the request: %q", k, v)
		}
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatalf("error body is not a JSON object: %v\n%s", err, body)
	}
	allowed := []string{"code", "status", "retryable", "charged", "message", "retry_after", "next_actions", "fields", "fields_omitted", "correlation_id"}
	for k := range raw {
		if !slices.Contains(allowed, k) {
			t.Errorf("error has member %q, not in the error shape", k)
		}
	}
	var e tools.Error
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"code", "status", "retryable", "charged", "message", "next_actions"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("error lacks %q: %s", k, body)
		}
	}
	if e.Code != code || e.Status != resp.StatusCode || e.Charged != payment.ChargeNone || e.Message == "" || len(e.NextActions) == 0 {
		t.Errorf("error = %s; want code %q, status %d, not charged, a message and next actions", body, code, resp.StatusCode)
	}
	if e.Retryable != (e.RetryAfter != nil) {
		t.Errorf("retryable = %v but retry_after = %v", e.Retryable, e.RetryAfter)
	}
	if e.RetryAfter != nil && resp.Header.Get("Retry-After") != fmt.Sprint(*e.RetryAfter) {
		t.Errorf("Retry-After = %q, want %d", resp.Header.Get("Retry-After"), *e.RetryAfter)
	}
	if (status == http.StatusInternalServerError) != (e.CorrelationID != "") {
		t.Errorf("correlation_id = %q for status %d: want it exactly on a 500", e.CorrelationID, status)
	}
	if e.CorrelationID != "" && e.CorrelationID != resp.Header.Get(CorrelationHeader) {
		t.Errorf("correlation_id = %q, header %q", e.CorrelationID, resp.Header.Get(CorrelationHeader))
	}
	return decodeObject(t, body)
}

// faultyStore injects faults into a real store.
type faultyStore struct {
	store.Store
	panicReputation bool
	checkErr        error
}

func (f faultyStore) Reputation(ctx context.Context, agentID string, q store.Page) (store.Reputation, error) {
	if f.panicReputation {
		panic("reputation exploded for " + agentID)
	}
	return f.Store.Reputation(ctx, agentID, q)
}

func (f faultyStore) Check(ctx context.Context) error {
	if f.checkErr != nil {
		return f.checkErr
	}
	return f.Store.Check(ctx)
}

// unsized hides a body's length, so the client sends it chunked.
type unsized struct{ io.Reader }

func TestHTTPErrors(t *testing.T) {
	const limit = 1024
	big := bytes.Repeat([]byte(testkit.Marker), 2*limit/len(testkit.Marker))
	long := strings.Repeat(testkit.Marker, 200/len(testkit.Marker)+1)
	badRule := invoice(t, "invoice-pass.json", map[string]any{"rules": []any{map[string]any{"type": testkit.Marker, "field": "total"}}})
	for _, tt := range []struct {
		name          string
		method, path  string
		header        http.Header
		body          io.Reader
		faults        *faultyStore
		opts          *HTTPOptions
		status        int
		code          string
		allow, fields string
	}{
		{name: "unknown route", method: "GET", path: "/nope-" + testkit.Marker, status: 404, code: tools.CodeNotFound},
		{name: "root", method: "GET", path: "/", status: 404, code: tools.CodeNotFound},
		{name: "unknown receipt", method: "GET", path: "/receipts/" + testkit.Marker, status: 404, code: tools.CodeNotFound},
		{name: "unknown receipt uuid", method: "GET", path: "/receipts/" + uuid.NewString(), status: 404, code: tools.CodeNotFound},
		{name: "unknown docs asset", method: "GET", path: "/docs/" + testkit.Marker + ".js", status: 404, code: tools.CodeNotFound},
		{name: "GET on a verify route", method: "GET", path: "/verify/schema?q=" + testkit.Marker, status: 405, code: tools.CodeMethodNotAllowed, allow: "POST"},
		{name: "PUT on health", method: "PUT", path: "/health", body: strings.NewReader(testkit.Marker), status: 405, code: tools.CodeMethodNotAllowed, allow: "GET, HEAD"},
		{name: "GET on mcp", method: "GET", path: "/mcp", status: 405, code: tools.CodeMethodNotAllowed, allow: "POST"},
		{name: "body over the limit", method: "POST", path: "/verify/schema", header: jsonHeader(), body: bytes.NewReader(big), opts: &HTTPOptions{MaxBodyBytes: limit}, status: 413, code: tools.CodePayloadTooLarge},
		{name: "chunked body over the limit", method: "POST", path: "/verify/deliverable", header: jsonHeader(), body: unsized{bytes.NewReader(big)}, opts: &HTTPOptions{MaxBodyBytes: limit}, status: 413, code: tools.CodePayloadTooLarge},
		{name: "mcp body over the limit", method: "POST", path: "/mcp", header: jsonHeader(), body: bytes.NewReader(big), opts: &HTTPOptions{MaxBodyBytes: limit}, status: 413, code: tools.CodePayloadTooLarge},
		{name: "mcp chunked body over the limit", method: "POST", path: "/mcp", header: jsonHeader(), body: unsized{bytes.NewReader(big)}, opts: &HTTPOptions{MaxBodyBytes: limit}, status: 413, code: tools.CodePayloadTooLarge},
		{name: "mcp not JSON", method: "POST", path: "/mcp", header: http.Header{"Content-Type": {"text/" + testkit.Marker}}, body: strings.NewReader(testkit.Marker), status: 415, code: tools.CodeUnsupportedMediaType},
		{name: "not JSON", method: "POST", path: "/verify/schema", header: http.Header{"Content-Type": {"text/" + testkit.Marker}}, body: strings.NewReader(testkit.Marker), status: 415, code: tools.CodeUnsupportedMediaType},
		{name: "no content type", method: "POST", path: "/verify/schema", body: strings.NewReader(`{"task_id":"` + testkit.Marker + `"}`), status: 415, code: tools.CodeUnsupportedMediaType},
		{name: "JSON in latin1", method: "POST", path: "/verify/schema", header: http.Header{"Content-Type": {"application/json; charset=latin1"}}, body: strings.NewReader(testkit.Marker), status: 415, code: tools.CodeUnsupportedMediaType},
		{name: "malformed JSON", method: "POST", path: "/verify/schema", header: jsonHeader(), body: strings.NewReader(`{"task_id": "` + testkit.Marker + `",`), status: 422, code: tools.CodeInvalidRequest, fields: "body"},
		{name: "invalid rule", method: "POST", path: "/verify/schema", header: jsonHeader(), body: bytes.NewReader(badRule), status: 422, code: tools.CodeInvalidRequest, fields: "rules[0].type"},
		{name: "empty body", method: "POST", path: "/verify/schema", header: jsonHeader(), status: 422, code: tools.CodeInvalidRequest, fields: "body"},
		{name: "bad limit", method: "GET", path: "/reputation/seller-7?limit=" + testkit.Marker, status: 422, code: tools.CodeInvalidRequest, fields: "limit"},
		{name: "limit over the maximum", method: "GET", path: "/reputation/seller-7?limit=101", status: 422, code: tools.CodeInvalidRequest, fields: "limit"},
		{name: "bad cursor", method: "GET", path: "/reputation/seller-7?cursor=" + testkit.Marker, status: 422, code: tools.CodeInvalidRequest, fields: "cursor"},
		{name: "agent id too long", method: "GET", path: "/score/" + long, status: 422, code: tools.CodeInvalidRequest, fields: "agent_id"},
		{name: "agent id not UTF-8", method: "GET", path: "/reputation/%FF" + testkit.Marker, status: 422, code: tools.CodeInvalidRequest, fields: "agent_id"},
		{name: "panic", method: "GET", path: "/reputation/agent-" + testkit.Marker, faults: &faultyStore{panicReputation: true}, status: 500, code: tools.CodeInternal},
		{name: "store not ready", method: "GET", path: "/health", faults: &faultyStore{checkErr: errors.New("disk " + testkit.Marker)}, status: 503, code: tools.CodeUnavailable},
		{name: "verification over its deadline", method: "POST", path: "/verify/schema", header: jsonHeader(), body: bytes.NewReader(invoice(t, "invoice-pass.json", map[string]any{"task_id": testkit.Marker})), opts: &HTTPOptions{VerifyTimeout: time.Nanosecond}, status: 503, code: tools.CodeUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var wrap func(store.Store) store.Store
			if tt.faults != nil {
				wrap = func(s store.Store) store.Store { f := *tt.faults; f.Store = s; return f }
			}
			f := newHTTPFixture(t, tt.opts, wrap)
			resp, body := f.do(t, tt.method, tt.path, tt.body, tt.header)
			e := checkErrorShape(t, resp, body, tt.status, tt.code)
			if got := resp.Header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow = %q, want %q", got, tt.allow)
			}
			if tt.status == http.StatusRequestEntityTooLarge && !strings.Contains(e["message"].(string), fmt.Sprint(limit)) {
				t.Errorf("413 message %q does not state the limit %d", e["message"], limit)
			}
			if tt.fields != "" {
				fields, _ := e["fields"].([]any)
				if len(fields) == 0 || fields[0].(map[string]any)["field"] != tt.fields {
					t.Errorf("fields = %v, want the first to be %q", e["fields"], tt.fields)
				}
			}
			if tt.status == http.StatusInternalServerError {
				cid := resp.Header.Get(CorrelationHeader)
				logs := f.logs.String()
				if !strings.Contains(logs, "panic serving request") || !strings.Contains(logs, "correlation_id="+cid) {
					t.Errorf("the panic is not logged with correlation id %s:\n%s", cid, logs)
				}
			}
		})
	}
}

func TestHTTPVerify(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	for _, tt := range []struct {
		name, path, file, detail, result string
	}{
		{"pass", "/verify/schema", "invoice-pass.json", "full", "pass"},
		{"fail is a 200 too", "/verify/schema", "invoice-fail.json", "full", "fail"},
		{"deliverable alias", "/verify/deliverable", "invoice-pass.json", "full", "pass"},
		{"compact", "/verify/deliverable", "invoice-fail.json", "compact", "fail"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.postJSON(t, tt.path, invoice(t, tt.file, map[string]any{"detail": tt.detail}))
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d, Content-Type %q; body %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			if _, err := signing.VerifyReceipt(body, f.svc.Keys); err != nil {
				t.Errorf("the answer does not verify: %v", err)
			}
			a := decodeObject(t, body)
			if a["result"] != tt.result {
				t.Errorf("result = %v, want %s", a["result"], tt.result)
			}
			if _, full := a["request_hash"]; full != (tt.detail == "full") {
				t.Errorf("request_hash present = %v for detail %s", full, tt.detail)
			}
			verify := a["verify"].(map[string]any)
			if verify["public_key_url"] != testPublicURL+"/.well-known/agent-card.json" || verify["mcp"] != testPublicURL+"/mcp" {
				t.Errorf("verify block = %v, want URLs under %s", verify, testPublicURL)
			}
			// The compact receipt was stored and is served byte for byte.
			id := a["verification_id"].(string)
			stored, err := f.svc.Store.Receipt(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			rresp, receipt := f.do(t, http.MethodGet, "/receipts/"+id, nil, nil)
			if rresp.StatusCode != http.StatusOK || !bytes.Equal(receipt, stored.Receipt) {
				t.Errorf("GET /receipts/%s = %d %s, want the stored receipt", id, rresp.StatusCode, receipt)
			}
			if _, err := signing.VerifyReceipt(receipt, f.svc.Keys); err != nil {
				t.Errorf("the stored receipt does not verify: %v", err)
			}
		})
	}
}

// gateLog records what a test gate saw.
type gateLog struct {
	mu       sync.Mutex
	calls    []GateCall
	settled  int
	released int // Release calls before any Settle
}

func (g *gateLog) seen() []GateCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.calls)
}

// gate is a payment layer stand-in: probes get a 402, X-Test-Refuse a 429,
// X-Test-Settle-Fail a failed settlement, anything else is admitted and
// settled with a Payment-Response header.
func (g *gateLog) gate(w http.ResponseWriter, r *http.Request, call GateCall) (Admitted, bool) {
	seen := call
	seen.Check = nil // a func: calls are compared without it
	seen.Body = nil  // the bytes sent: compared by BodyBytes
	g.mu.Lock()
	g.calls = append(g.calls, seen)
	g.mu.Unlock()
	refuse := func(w http.ResponseWriter, status int, code string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"code":%q}`, code)
	}
	settled := false
	release := func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if !settled {
			g.released++
		}
	}
	switch {
	case call.Probe:
		refuse(w, http.StatusPaymentRequired, "payment_required")
		return Admitted{}, false
	case r.Header.Get("X-Test-Refuse") != "":
		refuse(w, http.StatusTooManyRequests, "rate_limited")
		return Admitted{}, false
	case r.Header.Get("X-Test-Settle-Fail") != "":
		return Admitted{Settle: func(w http.ResponseWriter, _ GateAnswer) bool {
			refuse(w, http.StatusPaymentRequired, "settlement_failed")
			return false
		}, Release: release}, true
	}
	return Admitted{Settle: func(w http.ResponseWriter, _ GateAnswer) bool {
		g.mu.Lock()
		g.settled++
		settled = true
		g.mu.Unlock()
		w.Header().Set("Payment-Response", "settled")
		return true
	}, Release: release}, true
}

func TestHTTPGate(t *testing.T) {
	pass := invoice(t, "invoice-pass.json", map[string]any{"agent_id": "seller-7"})
	for _, tt := range []struct {
		name       string
		method     string
		path       string
		header     http.Header
		body       io.Reader
		status     int
		want       []GateCall // nil: the gate is not called
		settled    int
		released   int
		paymentHdr bool
		timeout    time.Duration // the verification deadline (0: the default)
	}{
		{name: "empty POST is a probe", method: "POST", path: "/verify/schema", status: 402,
			want: []GateCall{{Route: routeVerifySchema, Tool: contract.VerifySchema, Probe: true}}},
		{name: "empty chunked POST is a probe", method: "POST", path: "/verify/deliverable", header: jsonHeader(), body: unsized{strings.NewReader("")}, status: 402,
			want: []GateCall{{Route: routeVerifyDeliverable, Tool: contract.VerifySchema, Probe: true}}},
		{name: "invalid request is never gated", method: "POST", path: "/verify/schema", header: jsonHeader(), body: strings.NewReader(`{"task_id":""}`), status: 422},
		{name: "wrong content type is never gated", method: "POST", path: "/verify/schema", body: bytes.NewReader(pass), status: 415},
		{name: "valid request is gated and settled", method: "POST", path: "/verify/schema", header: jsonHeader(), body: bytes.NewReader(pass), status: 200,
			want: []GateCall{{Route: routeVerifySchema, Tool: contract.VerifySchema, BodyBytes: int64(len(pass))}}, settled: 1, paymentHdr: true},
		{name: "refused", method: "POST", path: "/verify/schema", header: http.Header{"Content-Type": {"application/json"}, "X-Test-Refuse": {"1"}}, body: bytes.NewReader(pass), status: 429,
			want: []GateCall{{Route: routeVerifySchema, Tool: contract.VerifySchema, BodyBytes: int64(len(pass))}}},
		{name: "failed settlement withholds the answer", method: "POST", path: "/verify/schema", header: http.Header{"Content-Type": {"application/json"}, "X-Test-Settle-Fail": {"1"}}, body: bytes.NewReader(pass), status: 402,
			want: []GateCall{{Route: routeVerifySchema, Tool: contract.VerifySchema, BodyBytes: int64(len(pass))}}, released: 1},
		{name: "failed work is released, not settled", method: "POST", path: "/verify/schema", header: jsonHeader(), body: bytes.NewReader(pass), status: 503, timeout: time.Nanosecond,
			want: []GateCall{{Route: routeVerifySchema, Tool: contract.VerifySchema, BodyBytes: int64(len(pass))}}, released: 1},
		{name: "invalid score request is never gated", method: "GET", path: "/score/" + strings.Repeat("x", 201), status: 422},
		{name: "reputation is free", method: "GET", path: "/reputation/seller-7", status: 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := &gateLog{}
			f := newHTTPFixture(t, &HTTPOptions{Gate: g.gate, VerifyTimeout: tt.timeout}, nil)
			resp, body := f.do(t, tt.method, tt.path, tt.body, tt.header)
			if resp.StatusCode != tt.status {
				t.Errorf("status = %d, want %d; body %s", resp.StatusCode, tt.status, body)
			}
			if got := g.seen(); !cmp.Equal(got, tt.want) {
				t.Errorf("gate calls = %+v, want %+v", got, tt.want)
			}
			g.mu.Lock()
			settled, released := g.settled, g.released
			g.mu.Unlock()
			if settled != tt.settled || released != tt.released {
				t.Errorf("settled %d and released %d times, want %d and %d", settled, released, tt.settled, tt.released)
			}
			if got := resp.Header.Get("Payment-Response") != ""; got != tt.paymentHdr {
				t.Errorf("Payment-Response present = %v, want %v", got, tt.paymentHdr)
			}
			if tt.status != http.StatusOK && bytes.Contains(body, []byte("verification_id")) {
				t.Errorf("a refused call got the answer: %s", body)
			}
			rep, err := f.svc.Store.Reputation(context.Background(), "seller-7", store.Page{})
			if err != nil {
				t.Fatal(err)
			}
			if worked := tt.settled > 0 || strings.Contains(tt.name, "failed settlement"); (rep.Total > 0) != worked {
				t.Errorf("stored verdicts = %d; the work must run exactly when the gate admits", rep.Total)
			}
		})
	}
	t.Run("score of an agent without history is gated too", func(t *testing.T) {
		g := &gateLog{}
		f := newHTTPFixture(t, &HTTPOptions{Gate: g.gate}, nil)
		resp, body := f.do(t, http.MethodGet, "/score/nobody", nil, nil)
		want := []GateCall{{Route: routeScore, Tool: contract.Record}}
		if resp.StatusCode != http.StatusOK || !cmp.Equal(g.seen(), want) || resp.Header.Get("Payment-Response") == "" {
			t.Errorf("score without history: status %d, gate calls %+v, Payment-Response %q; want 200 through the gate, settled (%s)",
				resp.StatusCode, g.seen(), resp.Header.Get("Payment-Response"), body)
		}
	})
	t.Run("score of an agent with history is gated", func(t *testing.T) {
		g := &gateLog{}
		f := newHTTPFixture(t, &HTTPOptions{Gate: g.gate}, nil)
		if _, err := f.svc.Verify(context.Background(), pass); err != nil {
			t.Fatal(err)
		}
		resp, body := f.do(t, http.MethodGet, "/score/seller-7", nil, nil)
		want := []GateCall{{Route: routeScore, Tool: contract.Record}}
		if resp.StatusCode != http.StatusOK || !cmp.Equal(g.seen(), want) || resp.Header.Get("Payment-Response") == "" {
			t.Errorf("status %d, gate calls %+v, Payment-Response %q; want 200, %+v, settled; body %s",
				resp.StatusCode, g.seen(), resp.Header.Get("Payment-Response"), want, body)
		}
	})
}

// stampPattern is the layout of verified_at.
var stampPattern = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$`)

func TestHTTPReputationAndScore(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	var answers []map[string]any
	for i, file := range []string{"invoice-pass.json", "invoice-fail.json", "invoice-pass.json"} {
		_, body := f.postJSON(t, "/verify/schema", invoice(t, file, map[string]any{"agent_id": "seller-7", "task_id": fmt.Sprint("t", i)}))
		answers = append(answers, decodeObject(t, body))
		time.Sleep(2 * time.Millisecond) // distinct verified_at
	}
	f.postJSON(t, "/verify/schema", invoice(t, "invoice-pass.json", map[string]any{"agent_id": "test-bot"}))

	resp, body := f.do(t, http.MethodGet, "/reputation/seller-7?limit=2", nil, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var page tools.Reputation
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatal(err)
	}
	if page.Total != 3 || page.Passed != 2 || page.Failed != 1 || page.PassRate != 0.666667 || len(page.Recent) != 2 || page.NextCursor == nil {
		t.Fatalf("first page = %s", body)
	}
	if *page.FirstSeen != answers[0]["verified_at"] || *page.LastSeen != answers[2]["verified_at"] {
		t.Errorf("first/last seen = %s/%s, want the answers' verified_at %s/%s", *page.FirstSeen, *page.LastSeen, answers[0]["verified_at"], answers[2]["verified_at"])
	}
	for i, v := range page.Recent {
		want := answers[2-i]
		if v.VerificationID != want["verification_id"] || v.VerifiedAt != want["verified_at"] || !stampPattern.MatchString(v.VerifiedAt) {
			t.Errorf("recent[%d] = %+v, want the answer %v at %v", i, v, want["verification_id"], want["verified_at"])
		}
	}
	_, body = f.do(t, http.MethodGet, "/reputation/seller-7?limit=2&cursor="+*page.NextCursor, nil, nil)
	var next tools.Reputation
	if err := json.Unmarshal(body, &next); err != nil {
		t.Fatal(err)
	}
	if len(next.Recent) != 1 || next.Recent[0].VerificationID != answers[0]["verification_id"] || next.NextCursor != nil {
		t.Errorf("second page = %s, want the oldest verdict and no cursor", body)
	}
	if !bytes.Contains(body, []byte(`"next_cursor":null`)) {
		t.Errorf("the last page must say next_cursor null: %s", body)
	}
	_, body = f.do(t, http.MethodGet, "/reputation/test-bot", nil, nil)
	if !bytes.Contains(body, []byte(`"total":0`)) || !bytes.Contains(body, []byte(`"first_seen":null`)) {
		t.Errorf("a test- agent has reputation: %s", body)
	}

	resp, body = f.do(t, http.MethodGet, "/score/seller-7", nil, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("score: %d %s", resp.StatusCode, body)
	}
	report, err := signing.VerifyReceipt(body, f.svc.Keys)
	if err != nil || report.Context != signing.ContextTrustScore {
		t.Errorf("the trust record does not verify under the trust-score context: %v (%+v)", err, report)
	}
	rec := decodeObject(t, body)
	if rec["agent_id"] != "seller-7" || rec["has_history"] != true {
		t.Errorf("record = %s", body)
	}
}

func TestHTTPHealth(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	resp, body := f.do(t, http.MethodGet, "/health", nil, nil)
	want := fmt.Sprintf(`{"status":"ok","store":"ok","version":"test","key_version":%q}`, f.svc.Keys.Current().KeyVersion())
	if resp.StatusCode != http.StatusOK || string(body) != want {
		t.Errorf("GET /health = %d %s, want 200 %s", resp.StatusCode, body, want)
	}
}

func TestHTTPMCPMounted(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	resp, body := f.do(t, http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
		http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}})
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"verify_schema"`)) {
		t.Errorf("POST /mcp tools/list = %d %s", resp.StatusCode, body)
	}
}

func TestHTTPRequestLog(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	resp, _ := f.postJSON(t, "/verify/schema", invoice(t, "invoice-pass.json", map[string]any{"task_id": testkit.Marker}))
	cid := resp.Header.Get(CorrelationHeader)
	var line string
	for l := range strings.Lines(f.logs.String()) {
		if strings.Contains(l, "correlation_id="+cid) {
			line = l
		}
	}
	for _, want := range []string{`msg="http request"`, "method=POST", `route="POST /verify/schema"`, "status=200", "duration_ms=", "client=127.0.0.1:"} {
		if !strings.Contains(line, want) {
			t.Errorf("request log line %q lacks %s", line, want)
		}
	}
	if strings.Contains(f.logs.String(), testkit.Marker) {
		t.Errorf("the logs carry the request body:\n%s", f.logs.String())
	}
}

func TestNewHTTPHandlerNeedsAStore(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	svc := &tools.Service{Engine: f.svc.Engine, Keys: f.svc.Keys, Version: f.svc.Version}
	if _, err := NewHTTPHandler(svc, withMCP(svc, nil)); err == nil {
		t.Error("NewHTTPHandler without a store: no error")
	}
}

func TestReadAllSized(t *testing.T) {
	body := strings.Repeat("0123456789", 300)
	for _, tt := range []struct {
		name string
		size int64
	}{
		{"exact", int64(len(body))},
		{"unknown", -1},
		{"declared shorter", 10},
		{"declared longer", int64(len(body)) + 100},
		{"empty declared", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAllSized(iotest.OneByteReader(strings.NewReader(body)), tt.size)
			if err != nil || string(got) != body {
				t.Errorf("readAllSized(size %d) = %d bytes, %v; want the %d bytes", tt.size, len(got), err, len(body))
			}
		})
	}
	if _, err := readAllSized(iotest.ErrReader(io.ErrUnexpectedEOF), 10); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("readAllSized of a failing reader: %v, want its error", err)
	}
}
