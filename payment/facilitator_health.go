package payment

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// FacilitatorStatusError is the error of a facilitator call answered
// without a valid x402 reply, with the HTTP status it had. It wraps
// ErrFacilitatorUnavailable.
type FacilitatorStatusError struct {
	Method, Path string
	Status       int
}

func (e *FacilitatorStatusError) Error() string {
	return fmt.Sprintf("%v: %s %s answered HTTP %d without a valid x402 reply", ErrFacilitatorUnavailable, e.Method, e.Path, e.Status)
}

func (e *FacilitatorStatusError) Unwrap() error { return ErrFacilitatorUnavailable }

// CredentialsRefused reports whether the facilitator refused the
// request's credentials (HTTP 401 or 403).
func (e *FacilitatorStatusError) CredentialsRefused() bool {
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
}

// authError is an Authorizer's failure to authenticate a request.
type authError struct{ err error }

func (e authError) Error() string { return "authenticating the request: " + e.err.Error() }
func (e authError) Unwrap() error { return e.err }

// States of [FacilitatorState].
const (
	FacilitatorUnknown = "unknown" // not called yet
	FacilitatorOK      = "ok"      // the last call had a valid x402 reply
	FacilitatorFailing = "failing" // the last call had none
)

// FacilitatorState is the facilitator's last known state: what the last
// call to it (a verify, a settle, a /supported) showed.
type FacilitatorState struct {
	State string    // FacilitatorUnknown, FacilitatorOK or FacilitatorFailing
	At    time.Time // when the last call ended (zero while unknown)
	// Cause says why it is failing, in the verifier's words: never the
	// facilitator's reply, a URL or a credential.
	Cause string
}

// facilitatorHealth keeps the outcome of the last facilitator call.
type facilitatorHealth struct {
	mu    sync.Mutex
	state FacilitatorState
}

// record notes the outcome of a call whose context was ctx. A call given
// up by its caller (ctx cancelled, not timed out) says nothing of the
// facilitator and is not noted.
func (h *facilitatorHealth) record(ctx context.Context, err error) {
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		return
	}
	s := FacilitatorState{State: FacilitatorOK, At: time.Now().UTC()}
	if err != nil {
		s.State, s.Cause = FacilitatorFailing, facilitatorCause(ctx, err)
	}
	h.mu.Lock()
	h.state = s
	h.mu.Unlock()
}

func (h *facilitatorHealth) get() FacilitatorState {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state.State == "" {
		return FacilitatorState{State: FacilitatorUnknown}
	}
	return h.state
}

// facilitatorCause describes a failed call from a fixed vocabulary.
func facilitatorCause(ctx context.Context, err error) string {
	var se *FacilitatorStatusError
	var ae authError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "did not answer in time"
	case errors.As(err, &se) && se.CredentialsRefused():
		return fmt.Sprintf("refused the credentials (HTTP %d on %s %s)", se.Status, se.Method, se.Path)
	case errors.As(err, &se):
		return fmt.Sprintf("answered HTTP %d without a valid x402 reply (%s %s)", se.Status, se.Method, se.Path)
	case errors.As(err, &ae):
		return "the request could not be authenticated (the CDP key could not sign)"
	default:
		return "could not be reached, or its reply could not be read"
	}
}

// State is the facilitator's last known state.
func (f *Facilitator) State() FacilitatorState { return f.health.get() }

// FacilitatorState is the facilitator's last known state; ok is false with
// payment off (there is no facilitator).
func (g *Gate) FacilitatorState() (s FacilitatorState, ok bool) {
	if !g.PaymentOn() || g.fac == nil {
		return FacilitatorState{}, false
	}
	return g.fac.State(), true
}

// CheckFacilitator asks the facilitator's GET /supported once, as the
// server starts: it fails with a message saying what to fix when the
// facilitator cannot be reached, refuses the credentials (HTTP 401/403),
// or does not list x402 v2 "exact" payments on every network this server
// takes payments on. With payment off it does nothing.
func (g *Gate) CheckFacilitator(ctx context.Context) error {
	if !g.PaymentOn() {
		return nil
	}
	sup, err := g.fac.Supported(ctx)
	var se *FacilitatorStatusError
	var ae authError
	switch {
	case errors.As(err, &ae):
		return fmt.Errorf("the CDP API key could not sign the request to the facilitator: %w", ae)
	case errors.As(err, &se) && se.CredentialsRefused():
		return fmt.Errorf("the facilitator %s refused the credentials (HTTP %d on GET /supported): check CDP_API_KEY_ID and CDP_API_KEY_SECRET (or --cdp-api-key-file, --facilitator-header)",
			g.cfg.FacilitatorURL, se.Status)
	case errors.As(err, &se):
		return fmt.Errorf("the facilitator %s answered GET /supported with HTTP %d and no x402 list of supported payments: check --facilitator", g.cfg.FacilitatorURL, se.Status)
	case err != nil:
		return fmt.Errorf("the facilitator %s cannot be reached (%w): check --facilitator and the network, or --facilitator-timeout",
			g.cfg.FacilitatorURL, err)
	}
	var missing []string
	for _, network := range g.networks() {
		if !supports(sup, network) {
			missing = append(missing, network)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the facilitator %s does not support x402 v%d %q payments on %s (--network %s): use a facilitator that does, or the other --network",
			g.cfg.FacilitatorURL, X402Version, SchemeExact, strings.Join(missing, ", "), g.cfg.Network)
	}
	return nil
}

// supports reports whether sup lists exact x402 v2 payments on network.
func supports(sup *SupportedResponse, network string) bool {
	for _, k := range sup.Kinds {
		if k.X402Version == X402Version && k.Scheme == SchemeExact && k.Network == network {
			return true
		}
	}
	return false
}
