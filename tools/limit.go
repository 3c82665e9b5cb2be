package tools

import (
	"context"
	"net/http"
	"runtime"
	"time"
)

// BusyRetryAfter is the retry_after, in seconds, of the 503 a verification
// gets when every slot of the Limiter is taken.
const BusyRetryAfter = 1

// DefaultMaxConcurrent is the default bound on concurrent verifications: four
// per CPU the Go scheduler uses. Verification is CPU-bound (decoding,
// schema evaluation, RFC 8785 canonicalization, Ed25519), so more in
// flight only adds memory and latency to every one of them.
func DefaultMaxConcurrent() int { return 4 * runtime.GOMAXPROCS(0) }

// DefaultQueueWait is how long a verification waits for a slot when every
// slot is taken and the waiting room has space, before it gets the 503.
const DefaultQueueWait = 2 * time.Second

// DefaultMaxQueued is the default size of the waiting room: eight
// verifications per slot may wait for one.
func DefaultMaxQueued(slots int) int { return 8 * slots }

// Limiter bounds how many verifications run at once. A verification that
// finds every slot taken waits for one in a bounded waiting room (queue
// places, each for at most wait); when the waiting room is full, or the wait
// or the request's deadline runs out, it fails with 503 unavailable,
// retryable after BusyRetryAfter seconds. So a burst of keep-alive clients is
// served in turn, while a real overload costs the server little: the
// waiting room bounds the requests held in memory.
//
// A nil *Limiter admits everything (the CLI and tests that need no bound).
// It is safe for concurrent use.
type Limiter struct {
	slots chan struct{}
	queue chan struct{} // places in the waiting room; nil: no waiting
	wait  time.Duration
}

// NewLimiter returns a Limiter with n slots and no waiting room; n <= 0
// means no bound (nil).
func NewLimiter(n int) *Limiter {
	if n <= 0 {
		return nil
	}
	return &Limiter{slots: make(chan struct{}, n)}
}

// NewQueuedLimiter returns a Limiter with n slots where up to queue more
// verifications wait at most wait for a slot; n <= 0 means no bound (nil).
func NewQueuedLimiter(n, queue int, wait time.Duration) *Limiter {
	l := NewLimiter(n)
	if l != nil && queue > 0 && wait > 0 {
		l.queue, l.wait = make(chan struct{}, queue), wait
	}
	return l
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

// acquire takes a slot, waiting in the waiting room when there is one. It
// returns the function that gives the slot back, or the 503 when none could
// be had.
func (l *Limiter) acquire(ctx context.Context) (release func(), err *Error) {
	if l == nil {
		return func() {}, nil
	}
	release = func() { <-l.slots }
	select {
	case l.slots <- struct{}{}:
		return release, nil
	default:
	}
	select {
	case l.queue <- struct{}{}: // a nil queue never takes: no waiting room
	default:
		return nil, errBusy()
	}
	defer func() { <-l.queue }()
	timer := time.NewTimer(l.wait)
	defer timer.Stop()
	select {
	case l.slots <- struct{}{}:
		return release, nil
	case <-timer.C:
	case <-ctx.Done():
	}
	return nil, errBusy()
}

// errBusy is the 503 of a verification refused by the Limiter.
func errBusy() *Error {
	return NewError(CodeUnavailable, http.StatusServiceUnavailable,
		"The verifier is at its limit of concurrent verifications. Nothing was charged; send the request again in a moment.").
		WithRetryAfter(BusyRetryAfter)
}
