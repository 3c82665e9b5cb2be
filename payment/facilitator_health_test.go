package payment

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestFacilitatorState: the facilitator's last known state follows its
// calls: unknown before any, ok after a valid x402 reply, failing with a
// cause of the verifier's own words after a refusal, a timeout or no
// connection; a call its caller gave up on changes nothing.
func TestFacilitatorState(t *testing.T) {
	var status atomic.Int32
	var hang atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang.Load() {
			<-r.Context().Done()
			return
		}
		w.WriteHeader(int(status.Load()))
		fmt.Fprint(w, `{"kinds":[],"detail":"token sk_live_from_reply rejected"}`)
	}))
	defer srv.Close()
	f := &Facilitator{URL: srv.URL, Timeout: 200 * time.Millisecond}
	if s := f.State(); s.State != FacilitatorUnknown || !s.At.IsZero() {
		t.Fatalf("before any call: %+v", s)
	}
	ctx := context.Background()
	steps := []struct {
		name      string
		status    int
		hang      bool
		ctx       func() context.Context
		wantState string
		wantCause string
	}{
		{"ok", 200, false, nil, FacilitatorOK, ""},
		{"credentials refused", 401, false, nil, FacilitatorFailing, "refused the credentials (HTTP 401 on GET /supported)"},
		{"ok again", 200, false, nil, FacilitatorOK, ""},
		{"forbidden", 403, false, nil, FacilitatorFailing, "refused the credentials (HTTP 403 on GET /supported)"},
		{"caller gave up", 200, true, func() context.Context {
			c, cancel := context.WithCancel(ctx)
			time.AfterFunc(20*time.Millisecond, cancel)
			return c
		}, FacilitatorFailing, "refused the credentials (HTTP 403 on GET /supported)"},
		{"timed out", 200, true, nil, FacilitatorFailing, "did not answer in time"},
	}
	for _, s := range steps {
		status.Store(int32(s.status))
		hang.Store(s.hang)
		c := ctx
		if s.ctx != nil {
			c = s.ctx()
		}
		before := time.Now().Add(-time.Second)
		_, _ = f.Supported(c)
		got := f.State()
		if got.State != s.wantState || got.Cause != s.wantCause || got.At.Before(before) {
			t.Errorf("%s: state = %+v, want %s %q", s.name, got, s.wantState, s.wantCause)
		}
		if strings.Contains(got.Cause, "sk_live") || strings.Contains(got.Cause, srv.URL) {
			t.Errorf("%s: the cause quotes the reply or the URL: %q", s.name, got.Cause)
		}
	}
	hang.Store(false)
	srv.Close()
	_, _ = f.Supported(ctx)
	if got := f.State(); got.State != FacilitatorFailing || got.Cause != "could not be reached, or its reply could not be read" {
		t.Errorf("down: state = %+v", got)
	}
}

// TestCheckFacilitator: the check at start passes against a facilitator
// that answers, with the credentials, and lists the network; it refuses a
// facilitator that cannot be reached, refuses the credentials, or does not
// take exact x402 v2 payments on a configured network.
func TestCheckFacilitator(t *testing.T) {
	k := edTestKey(t)
	auth, err := NewCDPAuth("key-1", k.secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	reply := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/x402/supported" || r.Method != http.MethodGet {
				http.NotFound(w, r)
				return
			}
			token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if jwt, err := checkJWT(t, token, "EdDSA", k.pub); err != nil || fmt.Sprint(jwt.claims["uris"]) != "[GET "+r.Host+"/x402/supported]" {
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprint(w, `{"error":"unauthorized"}`)
				return
			}
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		}
	}
	both := `{"kinds":[{"x402Version":2,"scheme":"exact","network":"eip155:84532"},{"x402Version":2,"scheme":"exact","network":"solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"}]}`
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	tests := []struct {
		name    string
		handler http.Handler // nil: nothing listens
		network string
		solana  bool
		auth    Authorizer
		wantErr string
	}{
		{"testnet supported", reply(200, testnetSupported), Testnet, false, auth, ""},
		{"both chains supported", reply(200, both), Testnet, true, auth, ""},
		{"unreachable", nil, Testnet, false, auth, "cannot be reached"},
		{"no credentials", reply(200, testnetSupported), Testnet, false, nil, "refused the credentials (HTTP 401 on GET /supported)"},
		{"forbidden", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(403) }), Testnet, false, auth, "refused the credentials (HTTP 403"},
		{"not a facilitator", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "<html>") }), Testnet, false, auth,
			"answered GET /supported with HTTP 200 and no x402 list"},
		{"mainnet not supported", reply(200, testnetSupported), Mainnet, false, auth, `does not support x402 v2 "exact" payments on eip155:8453 (--network mainnet)`},
		{"solana not supported", reply(200, testnetSupported), Testnet, true, auth, "payments on solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"},
		{"only x402 v1", reply(200, `{"kinds":[{"x402Version":1,"scheme":"exact","network":"eip155:84532"}]}`), Testnet, false, auth, "payments on eip155:84532"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := down.URL
			if tt.handler != nil {
				srv := httptest.NewServer(tt.handler)
				defer srv.Close()
				url = srv.URL
			}
			cfg := Config{PayToEVM: testPayTo, FacilitatorURL: url + "/x402", Network: tt.network, FacilitatorAuth: tt.auth, FacilitatorTimeout: 5 * time.Second}
			if tt.solana {
				cfg.PayToSolana = testSolPayTo
			}
			g, err := NewGate(cfg, tempStore(t, nil), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = g.CheckFacilitator(context.Background())
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if s, ok := g.FacilitatorState(); !ok || s.State != FacilitatorOK {
					t.Errorf("state after the check = %+v, %v", s, ok)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one about %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), k.secret) {
				t.Errorf("the error holds the secret: %v", err)
			}
		})
	}
	t.Run("payment off", func(t *testing.T) {
		g, err := NewGate(Config{}, tempStore(t, nil), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.CheckFacilitator(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, ok := g.FacilitatorState(); ok {
			t.Error("a facilitator state with payment off")
		}
	})
}

// TestFacilitatorAuthFailure: an authorizer that cannot sign makes the call
// facilitator_unavailable without sending it.
func TestFacilitatorAuthFailure(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls.Add(1) }))
	defer srv.Close()
	f := &Facilitator{URL: srv.URL, Timeout: time.Second, Auth: failingAuth{}}
	_, err := f.Supported(context.Background())
	if !errors.Is(err, ErrFacilitatorUnavailable) || calls.Load() != 0 {
		t.Fatalf("error = %v after %d calls, want ErrFacilitatorUnavailable and none", err, calls.Load())
	}
	if s := f.State(); s.State != FacilitatorFailing || !strings.Contains(s.Cause, "could not be authenticated") {
		t.Errorf("state = %+v", s)
	}
}

type failingAuth struct{}

func (failingAuth) Authorize(*http.Request) error { return errors.New("no entropy") }

// TestFacilitatorCredentialsRefused: a 401 or 403 is the facilitator
// refusing this server's credentials, never a verdict on the payment, even
// when its body looks like one.
func TestFacilitatorCredentialsRefused(t *testing.T) {
	for _, status := range []int{401, 403} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(status)
			fmt.Fprint(w, `{"isValid":false,"invalidReason":"unauthorized","success":false}`)
		}))
		f := &Facilitator{URL: srv.URL, Timeout: time.Second}
		_, verr := f.Verify(context.Background(), &PaymentPayload{Raw: []byte(`{}`)}, PaymentRequirements{})
		_, serr := f.Settle(context.Background(), &PaymentPayload{Raw: []byte(`{}`)}, PaymentRequirements{})
		srv.Close()
		var se *FacilitatorStatusError
		for _, err := range []error{verr, serr} {
			if !errors.Is(err, ErrFacilitatorUnavailable) || !errors.As(err, &se) || !se.CredentialsRefused() {
				t.Errorf("HTTP %d: error = %v, want the credentials refused", status, err)
			}
		}
	}
}
