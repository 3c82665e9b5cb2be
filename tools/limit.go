package tools

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"runtime"
	"sync/atomic"
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

// ShedReportEvery is the least time between two warnings of a Limiter that
// reports its refusals: each warning counts the refusals since the last.
const ShedReportEvery = 10 * time.Second

// Limiter bounds how many verifications run at once. A slot covers the
// CPU-bound work (decoding, evaluation, canonicalization, signing); the
// verification gives it back before its verdict is written, which waits on
// the disk, so the next one computes meanwhile and their writes share
// commits. A verification that
// finds every slot taken waits for one in a bounded waiting room (queue
// places, each for at most wait); when the waiting room is full, or the wait
// or the request's deadline runs out, it fails with 503 unavailable,
// retryable after BusyRetryAfter seconds. So a burst of keep-alive clients is
// served in turn, while a real overload costs the server little: the
// waiting room bounds the requests held in memory.
//
// Refusals are expected load shedding, not faults: a Limiter with a logger
// reports them as one warning per ShedReportEvery at most, with their
// count, instead of a line each.
//
// A nil *Limiter admits everything (the CLI and tests that need no bound).
// It is safe for concurrent use.
type Limiter struct {
	slots chan struct{}
	queue chan struct{} // places in the waiting room; nil: no waiting
	wait  time.Duration

	log     *slog.Logger // nil: refusals are not reported
	refused atomic.Int64 // refusals since the last report
	report  atomic.Int64 // Unix nanoseconds before which no report is made
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
// log, when not nil, gets the warnings that count refusals.
func NewQueuedLimiter(n, queue int, wait time.Duration, log *slog.Logger) *Limiter {
	l := NewLimiter(n)
	if l == nil {
		return nil
	}
	if queue > 0 && wait > 0 {
		l.queue, l.wait = make(chan struct{}, queue), wait
	}
	l.log = log
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
// returns the function that gives the slot back — once: later calls do
// nothing, so a caller may give it back early (before waiting on the disk)
// and still defer it — or the 503 when none could be had: the busy one, or
// the request-ended one when the client went away while waiting.
func (l *Limiter) acquire(ctx context.Context) (release func(), err *Error) {
	if l == nil {
		return func() {}, nil
	}
	select {
	case l.slots <- struct{}{}:
		return l.releaseOnce(), nil
	default:
	}
	select {
	case l.queue <- struct{}{}: // a nil queue never takes: no waiting room
	default:
		return nil, l.refuse()
	}
	defer func() { <-l.queue }()
	timer := time.NewTimer(l.wait)
	defer timer.Stop()
	select {
	case l.slots <- struct{}{}:
		return l.releaseOnce(), nil
	case <-timer.C:
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.Canceled) {
			return nil, errRequestEnded()
		}
	}
	return nil, l.refuse()
}

// full reports whether a verification arriving now would be refused: every
// slot and every waiting place taken. It is a hint, checked before a
// request is read and decoded so that load shedding costs next to nothing;
// acquire decides.
func (l *Limiter) full() bool {
	return l != nil && len(l.slots) == cap(l.slots) && len(l.queue) == cap(l.queue)
}

// releaseOnce is a function that gives one slot back the first time it is
// called (by the goroutine that took it).
func (l *Limiter) releaseOnce() func() {
	done := false
	return func() {
		if !done {
			done = true
			l.release()
		}
	}
}

// release gives a slot back, and reports refusals not yet reported when it
// is time.
func (l *Limiter) release() {
	<-l.slots
	if l.refused.Load() > 0 {
		l.reportRefusals()
	}
}

// refuse counts a refusal and returns its 503.
func (l *Limiter) refuse() *Error {
	l.refused.Add(1)
	l.reportRefusals()
	return errBusy()
}

// reportRefusals logs the refusals since the last report, at most once per
// ShedReportEvery.
func (l *Limiter) reportRefusals() {
	if l.log == nil {
		return
	}
	now := time.Now().UnixNano()
	next := l.report.Load()
	if now < next || !l.report.CompareAndSwap(next, now+int64(ShedReportEvery)) {
		return
	}
	if n := l.refused.Swap(0); n > 0 {
		l.log.Warn("shedding load: verifications refused with 503 unavailable, every slot and waiting place taken or the wait ran out",
			"refused", n, "max_concurrent", cap(l.slots), "max_queued", cap(l.queue), "queue_wait", l.wait.String(),
			"reported_every", ShedReportEvery.String())
	}
}

// busyMessage is the message of the Limiter's 503.
const busyMessage = "The verifier is at its limit of concurrent verifications. Nothing was charged; send the request again in a moment."

// errBusy is the 503 of a verification refused by the Limiter.
func errBusy() *Error {
	return NewError(CodeUnavailable, http.StatusServiceUnavailable, busyMessage).WithRetryAfter(BusyRetryAfter)
}

// isBusy reports whether err is the Limiter's 503: load shedding, expected
// under load.
func isBusy(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeUnavailable && e.Message == busyMessage
}
