package payment

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/store"
)

// TestAllowanceExactUnderConcurrency: 1000 parallel requests against an
// allowance of 100 grant exactly 100, each with a distinct remaining count.
func TestAllowanceExactUnderConcurrency(t *testing.T) {
	tests := []struct {
		name    string
		cfg     func(facilitator string) Config
		refused string
	}{
		{"payment off", func(string) Config { return Config{FreePerDay: 100} }, CodeRateLimited},
		{"payment on", func(f string) Config {
			return Config{FreePerDay: 100, PayToEVM: testPayTo, FacilitatorURL: f, Network: Testnet}
		}, CodePaymentRequired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fac := newFakeFacilitator(t)
			g, err := NewGate(tt.cfg(fac.srv.URL), tempStore(t, nil), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			const n = 1000
			var (
				wg        sync.WaitGroup
				mu        sync.Mutex
				remaining []int
				refused   int
				other     []error
			)
			for range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					adm, err := g.Admit(context.Background(), Request{Route: testRoute(KindVerify), Client: "198.51.100.7", BodySize: 100})
					mu.Lock()
					defer mu.Unlock()
					var e *Error
					switch {
					case err == nil && adm.allowance != nil:
						remaining = append(remaining, adm.allowance.Remaining)
					case errors.As(err, &e) && e.Code == tt.refused:
						refused++
					default:
						other = append(other, err)
					}
				}()
			}
			wg.Wait()
			if len(other) > 0 {
				t.Fatalf("%d unexpected outcomes, first: %v", len(other), other[0])
			}
			if len(remaining) != 100 || refused != n-100 {
				t.Fatalf("granted %d and refused %d of %d, want exactly 100 and %d", len(remaining), refused, n, n-100)
			}
			sort.Ints(remaining)
			for i, r := range remaining {
				if r != i {
					t.Fatalf("remaining counts after each grant = %v, want 0..99 each once", remaining)
				}
			}
			if fac.count("/verify") != 0 {
				t.Errorf("the facilitator was called %d times for unpaid requests", fac.count("/verify"))
			}
		})
	}
}

// TestAllowanceResetsAtUTCMidnight uses an injected clock a moment before
// midnight UTC, seen from a non-UTC zone.
func TestAllowanceResetsAtUTCMidnight(t *testing.T) {
	zone := time.FixedZone("UTC-5", -5*3600)
	c := newClock(time.Date(2026, 3, 1, 23, 59, 58, 400e6, time.UTC).In(zone))
	g, err := NewGate(Config{FreePerDay: 2}, tempStore(t, c.Now), c.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admit := func() (*Admission, error) {
		return g.Admit(ctx, Request{Route: testRoute(KindVerify), Client: "203.0.113.9"})
	}
	for i, want := range []string{"1", "0"} {
		adm, err := admit()
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		h := adm.Header()
		if got := h.Get(HeaderAllowanceRemaining); got != want {
			t.Errorf("call %d: %s = %s, want %s", i, HeaderAllowanceRemaining, got, want)
		}
		if got, want := h.Get(HeaderAllowanceResets), "2026-03-02T00:00:00Z"; got != want {
			t.Errorf("call %d: %s = %s, want %s", i, HeaderAllowanceResets, got, want)
		}
		if got := h.Get(HeaderAllowanceLimit); got != "2" {
			t.Errorf("call %d: %s = %s, want 2", i, HeaderAllowanceLimit, got)
		}
	}
	_, err = admit()
	e := refusal(t, err, CodeRateLimited)
	if e.Status != 429 || !e.Retryable || e.RetryAfter == nil || *e.RetryAfter != 2 {
		t.Errorf("429 = status %d retryable %v retry_after %v, want 429, true, 2 (1.6 s to midnight, rounded up)", e.Status, e.Retryable, e.RetryAfter)
	}
	if got := e.Header.Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After = %q, want 2", got)
	}
	if e.FreeTrial == nil || e.FreeTrial.Code != CodeFreeTrialExhausted {
		t.Errorf("free_trial = %+v, want code %s", e.FreeTrial, CodeFreeTrialExhausted)
	}

	c.Set(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC))
	adm, err := admit()
	if err != nil {
		t.Fatalf("after midnight UTC: %v", err)
	}
	if got := adm.Header().Get(HeaderAllowanceRemaining); got != "1" {
		t.Errorf("after midnight: remaining = %s, want 1", got)
	}
}

// TestAllowanceSurvivesRestart closes and reopens the store between calls.
func TestAllowanceSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verifier.db")
	c := newClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	ctx := context.Background()
	req := Request{Route: testRoute(KindVerify), Client: "203.0.113.10"}

	s := openStore(t, path, c.Now)
	g, err := NewGate(Config{FreePerDay: 3}, s, c.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := g.Admit(ctx, req); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, path, c.Now)
	defer s.Close()
	g, err = NewGate(Config{FreePerDay: 3}, s, c.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	adm, err := g.Admit(ctx, req)
	if err != nil {
		t.Fatalf("third call after restart: %v", err)
	}
	if got := adm.Header().Get(HeaderAllowanceRemaining); got != "0" {
		t.Errorf("after restart: remaining = %s, want 0 (2 used before the restart)", got)
	}
	_, err = g.Admit(ctx, req)
	refusal(t, err, CodeRateLimited)
}

func TestAllowancePerClient(t *testing.T) {
	g, err := NewGate(Config{FreePerDay: 1}, tempStore(t, nil), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, client := range []string{"192.0.2.1", "192.0.2.2", "2001:db8:1:2::/64"} {
		if _, err := g.Admit(ctx, Request{Route: testRoute(KindVerify), Client: client}); err != nil {
			t.Errorf("first call of %s: %v", client, err)
		}
	}
	_, err = g.Admit(ctx, Request{Route: testRoute(KindVerify), Client: "192.0.2.1"})
	refusal(t, err, CodeRateLimited)
	for client, want := range map[string]int{"192.0.2.1": 0, "192.0.2.3": 1} {
		a, err := g.Allowance(ctx, client)
		if err != nil || a.Remaining != want || a.Limit != 1 {
			t.Errorf("Allowance(%s) = %+v, %v; want %d left of 1", client, a, err, want)
		}
	}
	if a, _ := g.Allowance(ctx, "192.0.2.3"); a.Remaining != 1 {
		t.Errorf("Allowance used some of the allowance: %d left", a.Remaining)
	}
	if n := g.Networks(); n != nil {
		t.Errorf("Networks with payment off = %v", n)
	}
}

func TestPaymentOff(t *testing.T) {
	g, err := NewGate(Config{FreePerDay: -1}, tempStore(t, nil), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tests := []struct {
		name string
		req  Request
		code string // "" when admitted free
	}{
		{"score is free", Request{Route: testRoute(KindScore), Client: "192.0.2.1"}, ""},
		{"probe uses nothing", Request{Route: testRoute(KindVerify), Client: "192.0.2.1", Probe: true}, ""},
		{"a payment header is ignored", Request{Route: testRoute(KindVerify), Client: "192.0.2.1", PaymentHeader: "eyJ9"}, CodeRateLimited},
		{"no free calls configured", Request{Route: testRoute(KindVerify), Client: "192.0.2.1", BodySize: 10 << 20}, CodeRateLimited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			adm, err := g.Admit(ctx, tt.req)
			if tt.code != "" {
				refusal(t, err, tt.code)
				return
			}
			if err != nil {
				t.Fatalf("Admit = %v, want free", err)
			}
			if adm.Paid() || len(adm.Header()) != 0 {
				t.Errorf("admission = paid %v, headers %v; want free without allowance headers", adm.Paid(), adm.Header())
			}
			if sr, err := adm.Settle(ctx, Answer{}); sr != nil || err != nil {
				t.Errorf("Settle of a free admission = %v, %v", sr, err)
			}
		})
	}
}

func TestNilGateAdmitsFree(t *testing.T) {
	var g *Gate
	adm, err := g.Admit(context.Background(), Request{Route: testRoute(KindVerify)})
	if err != nil || adm.Paid() || g.PaymentOn() {
		t.Errorf("nil gate: %v, paid %v", err, adm.Paid())
	}
}

// TestAllowanceGivenBackWhenNotAnswered: a free call whose work fails is
// released and uses nothing; settled calls are durable across a restart.
func TestAllowanceGivenBackWhenNotAnswered(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verifier.db")
	c := newClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	ctx := context.Background()
	req := Request{Route: testRoute(KindVerify), Client: "203.0.113.11"}
	s := openStore(t, path, c.Now)
	g, err := NewGate(Config{FreePerDay: 2}, s, c.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, answered := range []bool{false, true, false, true} {
		adm, err := g.Admit(ctx, req)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if !answered {
			adm.Release()
			continue
		}
		if sr, err := adm.Settle(ctx, Answer{}); sr != nil || err != nil {
			t.Fatalf("call %d: Settle of a free call = %v, %v", i, sr, err)
		}
		adm.Release() // a no-op after Settle
	}
	_, err = g.Admit(ctx, req)
	refusal(t, err, CodeRateLimited)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path, c.Now)
	defer s.Close()
	if a, err := s.PeekAllowance(ctx, req.Client, c.Now(), 2); err != nil || a.Remaining != 0 {
		t.Errorf("after a restart: %+v, %v; want the 2 answered calls used", a, err)
	}
}

// TestAllowanceMessage: free_trial.message in each state: how to start and
// what is left; once used up, the hosted service's sentence (ending with
// payment, or with payment off the refusal); no allowance at all.
func TestAllowanceMessage(t *testing.T) {
	resets := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name      string
		a         store.Allowance
		paymentOn bool
		want      string
	}{
		{"calls left", store.Allowance{Remaining: 3, Limit: 5, Resets: resets}, true,
			"Free during launch. No sign-up, API key or wallet: call verify_schema over MCP, or POST /verify/schema, and the free checks are used first. " +
				"This client has 3 of 5 free checks left for today (REST and MCP share them); they reset at 2026-03-02T00:00:00Z."},
		{"used up, payment on", store.Allowance{Remaining: 0, Limit: 5, Resets: resets}, true,
			"Free during launch. This client's 5 free checks for today are used up (REST and MCP share them); they reset at 2026-03-02T00:00:00Z. Payment applies until then."},
		{"used up, payment off", store.Allowance{Remaining: 0, Limit: 5, Resets: resets.In(time.FixedZone("x", 3600))}, false,
			"Free during launch. This client's 5 free checks for today are used up (REST and MCP share them); they reset at 2026-03-02T00:00:00Z. Verifications are refused until then."},
		{"no allowance", store.Allowance{Limit: 0, Resets: resets}, true,
			"This deployment has no free allowance: every verification is paid with x402."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := allowanceMessage(tt.a, tt.paymentOn); got != tt.want {
				t.Errorf("allowanceMessage = %q\nwant %q", got, tt.want)
			}
		})
	}
}
