package tools

import (
	"net/http"
	"runtime"
)

// BusyRetryAfter is the retry_after, in seconds, of the 503 a verification
// gets when every slot of the Limiter is taken.
const BusyRetryAfter = 1

// DefaultMaxConcurrent is the default bound on concurrent verifications: four
// per CPU the Go scheduler uses. Verification is CPU-bound (decoding,
// schema evaluation, RFC 8785 canonicalization, Ed25519), so more in
// flight only adds memory and latency to every one of them.
func DefaultMaxConcurrent() int { return 4 * runtime.GOMAXPROCS(0) }

// Limiter bounds how many verifications run at once. A verification that
// finds every slot taken is not queued: it fails at once with 503
// unavailable, retryable after BusyRetryAfter seconds, so that an overload
// costs the server nothing and the caller learns of it immediately.
//
// A nil *Limiter admits everything (the CLI and tests that need no bound).
// It is safe for concurrent use.
type Limiter struct {
	slots chan struct{}
}

// NewLimiter returns a Limiter with n slots; n <= 0 means no bound (nil).
func NewLimiter(n int) *Limiter {
	if n <= 0 {
		return nil
	}
	return &Limiter{slots: make(chan struct{}, n)}
}

// Cap is the number of slots; 0 for a nil Limiter (no bound).
func (l *Limiter) Cap() int {
	if l == nil {
		return 0
	}
	return cap(l.slots)
}

// InUse is the number of slots taken now; 0 for a nil Limiter.
func (l *Limiter) InUse() int {
	if l == nil {
		return 0
	}
	return len(l.slots)
}

// acquire takes a slot without waiting. It returns the function that gives
// the slot back, or the 503 when none is free.
func (l *Limiter) acquire() (release func(), err *Error) {
	if l == nil {
		return func() {}, nil
	}
	select {
	case l.slots <- struct{}{}:
		return func() { <-l.slots }, nil
	default:
		return nil, errBusy()
	}
}

// errBusy is the 503 of a verification refused by the Limiter.
func errBusy() *Error {
	return NewError(CodeUnavailable, http.StatusServiceUnavailable,
		"The verifier is at its limit of concurrent verifications. Nothing was charged; send the request again in a moment.").
		WithRetryAfter(BusyRetryAfter)
}
