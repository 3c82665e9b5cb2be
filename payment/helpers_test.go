package payment

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/verifier-dev/verifier/store"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// clock is an injectable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(t time.Time) *clock { return &clock{t: t} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// openStore opens a real bbolt store at path; now (nil: time.Now) is its
// clock for purging past days.
func openStore(t *testing.T, path string, now func() time.Time) *store.Bolt {
	t.Helper()
	s, err := store.OpenBolt(path, &store.Options{NoSync: true, Now: now})
	if err != nil {
		t.Fatalf("opening store: %v", err)
	}
	return s
}

// tempStore is a fresh store in t.TempDir with the clock now (nil:
// time.Now), closed at the end of the test.
func tempStore(t *testing.T, now func() time.Time) *store.Bolt {
	t.Helper()
	s := openStore(t, filepath.Join(t.TempDir(), "verifier.db"), now)
	t.Cleanup(func() { s.Close() })
	return s
}

// fakeFacilitator is an httptest facilitator whose answers the test sets.
type fakeFacilitator struct {
	srv *httptest.Server

	mu        sync.Mutex
	verify    func(facilitatorRequest) (int, string) // status, body
	settle    func(facilitatorRequest) (int, string)
	supported func() (int, string)
	delay     time.Duration
	calls     map[string]int
	last      map[string]facilitatorRequest
}

func newFakeFacilitator(t *testing.T) *fakeFacilitator {
	t.Helper()
	f := &fakeFacilitator{calls: map[string]int{}, last: map[string]facilitatorRequest{}}
	f.verify = func(r facilitatorRequest) (int, string) {
		return 200, `{"isValid":true,"payer":"0x3F6F8187C480D0FeE3e9536Eeee62CEED2CACD58"}`
	}
	f.settle = func(r facilitatorRequest) (int, string) {
		return 200, `{"success":true,"payer":"0x3F6F8187C480D0FeE3e9536Eeee62CEED2CACD58","transaction":"0xabc","network":"` + r.PaymentRequirements.Network + `"}`
	}
	f.supported = func() (int, string) {
		return 200, `{"kinds":[{"x402Version":2,"scheme":"exact","network":"solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1","extra":{"feePayer":"` + testFeePayer + `"}}],"extensions":[],"signers":{}}`
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeFacilitator) serve(w http.ResponseWriter, r *http.Request) {
	var req facilitatorRequest
	_ = json.NewDecoder(r.Body).Decode(&req)
	f.mu.Lock()
	f.calls[r.URL.Path]++
	f.last[r.URL.Path] = req
	delay := f.delay
	var status int
	var body string
	switch r.URL.Path {
	case "/verify":
		status, body = f.verify(req)
	case "/settle":
		status, body = f.settle(req)
	case "/supported":
		status, body = f.supported()
	default:
		status, body = 404, `{"error":"not found"}`
	}
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write([]byte(body))
}

func (f *fakeFacilitator) set(fn func(f *fakeFacilitator)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeFacilitator) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[path]
}

func (f *fakeFacilitator) lastRequest(path string) facilitatorRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last[path]
}

// testRoute is the REST verify route as the HTTP layer would describe it.
func testRoute(kind Kind) Route {
	if kind == KindScore {
		return Route{Kind: KindScore, Method: "GET", RouteTemplate: "/score/:agent_id", PathParams: map[string]string{"agent_id": "agent-1"},
			Resource: Resource{URL: "http://127.0.0.1:8080/score/agent-1", Description: "Signed trust-score record of an agent"}}
	}
	return Route{Kind: KindVerify, Method: "POST",
		Resource:    Resource{URL: "http://127.0.0.1:8080/verify/schema", Description: "Verify an agent's JSON output against a JSON Schema and rules"},
		InputSchema: json.RawMessage(`{"type":"object","required":["output","expected_schema"]}`),
		Example:     json.RawMessage(`{"output":{"total":3},"expected_schema":{"type":"object"}}`)}
}

// randomNonce is 32 random bytes of 0x hex.
func randomNonce(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "0x" + hex.EncodeToString(b)
}

// evmPayment is a PaymentPayload for req as a client would build it (the
// signature is not a real one: the fake facilitator does not check it).
func evmPayment(t *testing.T, req PaymentRequirements, nonce string, validBefore time.Time) *PaymentPayload {
	t.Helper()
	pl, _ := json.Marshal(EVMPayload{
		Signature: "0x" + hex.EncodeToString(make([]byte, 65)),
		Authorization: EVMAuthorization{From: "0x3F6F8187C480D0FeE3e9536Eeee62CEED2CACD58", To: req.PayTo, Value: req.Amount,
			ValidAfter: "0", ValidBefore: strconv.FormatInt(validBefore.Unix(), 10), Nonce: nonce},
	})
	return &PaymentPayload{X402Version: 2, Resource: &Resource{URL: "http://127.0.0.1:8080/verify/schema"}, Accepted: req, Payload: pl}
}

// header encodes p as a PAYMENT-SIGNATURE value.
func header(t *testing.T, p *PaymentPayload) string {
	t.Helper()
	h, err := EncodeHeader(p)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// refusal asserts that err is a *Error with the code, saying nothing was
// charged, and returns it.
func refusal(t *testing.T, err error, code string) *Error {
	t.Helper()
	return refusalCharged(t, err, code, ChargeNone)
}

// refusalCharged asserts that err is a *Error with the code and the
// charge, and returns it.
func refusalCharged(t *testing.T, err error, code string, charged Charge) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v, want a *payment.Error %s", err, code)
	}
	if e.Code != code {
		t.Fatalf("refusal code = %s (%s), want %s", e.Code, e.Message, code)
	}
	if e.Charged != charged {
		got, _ := e.Charged.MarshalJSON()
		want, _ := charged.MarshalJSON()
		t.Errorf("refusal %s says charged %s, want %s", code, got, want)
	}
	return e
}

// offered is the requirement the 402 of kind lists first.
func offered(t *testing.T, g *Gate, kind Kind) PaymentRequirements {
	t.Helper()
	offers, err := g.offers(context.Background(), kind)
	if err != nil || len(offers) == 0 {
		t.Fatalf("offers(%s) = %v, %v", kind, offers, err)
	}
	return offers[0]
}

// golden compares got (JSON) with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got any) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(b)); diff != "" {
		t.Errorf("%s differs (-golden +got):\n%s", name, diff)
	}
}

// decodeBase64JSON decodes a standard-base64 JSON header into v.
func decodeBase64JSON(t *testing.T, h string, v any) {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		t.Fatalf("header is not standard base64: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("header is not JSON: %v", err)
	}
}
