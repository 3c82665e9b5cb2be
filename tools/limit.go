package tools

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/verifier-dev/verifier/engine"
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

// DefaultMaxMemory is the default memory budget of the verifications
// running at once (--max-memory): 1 GiB.
const DefaultMaxMemory = 1 << 30

// MemoryPerBodyByte is the heap a verification is admitted for per byte of
// its request: the bound SECURITY.md states for the peak heap of one
// request, 64 times its body.
const MemoryPerBodyByte = 64

// memoryPerRequest is the least heap a verification is admitted for, what
// a small request's evaluation, answer and signing take.
const memoryPerRequest = 64 << 10

// ExpectedMemory is the heap a verification of a request of size bytes is
// admitted for: MemoryPerBodyByte per byte, and at least 64 KiB.
func ExpectedMemory(size int) int64 {
	return max(MemoryPerBodyByte*int64(size), memoryPerRequest)
}

// requestMemory is the heap a verification of req is admitted for:
// ExpectedMemory of its size, and the heap compiling its schema's patterns
// may take (engine.Verifier.CompileMemory), which a short pattern can make
// far more than its bytes.
func (s *Service) requestMemory(req *engine.Request) int64 {
	return ExpectedMemory(req.Size()) + s.Engine.CompileMemory(req)
}

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
// A Limiter with a memory budget (WithMemory) also admits a verification
// only when the heap it is expected to need (ExpectedMemory) fits in what
// the running ones leave of the budget; it waits for that as for a slot, in
// the waiting room. A verification larger than the whole budget runs alone.
// Waiting for memory is not first come, first served: a small request
// passes a large one that waits for memory to be given back, so a burst of
// large requests cannot hold up small ones (a large one that waits past the
// wait gets the 503).
//
// A nil *Limiter admits everything (the CLI and tests that need no bound).
// It is safe for concurrent use.
type Limiter struct {
	slots chan struct{}
	queue chan struct{} // places in the waiting room; nil: no waiting
	wait  time.Duration
	mem   *memoryBudget // nil: memory not accounted

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

// WithMemory gives the Limiter a memory budget of size bytes for the
// verifications running at once (size <= 0: none) and returns it. It is
// called before the Limiter is used.
func (l *Limiter) WithMemory(size int64) *Limiter {
	if l != nil && size > 0 {
		l.mem = &memoryBudget{size: size, free: size, freed: make(chan struct{})}
	}
	return l
}

// MemoryBudget is the memory budget in bytes; 0 when there is none.
func (l *Limiter) MemoryBudget() int64 {
	if l == nil || l.mem == nil {
		return 0
	}
	return l.mem.size
}

// MemoryInUse is the part of the memory budget the running verifications
// hold; 0 when there is none.
func (l *Limiter) MemoryInUse() int64 {
	if l == nil || l.mem == nil {
		return 0
	}
	l.mem.mu.Lock()
	defer l.mem.mu.Unlock()
	return l.mem.size - l.mem.free
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

// Acquire takes a slot and, with a memory budget, memory bytes of it
// (ExpectedMemory of the request), waiting in the waiting room when there
// is one. It returns the function that gives both back — once: later calls
// do nothing, so a caller may give them back early (before waiting on the
// disk) and still defer it — or the 503 when they could not be had: the
// busy one, or the request-ended one when the client went away while
// waiting.
func (l *Limiter) Acquire(ctx context.Context, memory int64) (release func(), err *Error) {
	if l == nil {
		return func() {}, nil
	}
	memory = l.mem.clamp(memory)
	if l.mem.tryTake(memory) {
		select {
		case l.slots <- struct{}{}:
			return l.releaseOnce(memory), nil
		default:
		}
		l.mem.give(memory)
	}
	select {
	case l.queue <- struct{}{}: // a nil queue never takes: no waiting room
	default:
		return nil, l.Refuse()
	}
	defer func() { <-l.queue }()
	timer := time.NewTimer(l.wait)
	defer timer.Stop()
	if l.mem.take(ctx, timer.C, memory) {
		select {
		case l.slots <- struct{}{}:
			return l.releaseOnce(memory), nil
		case <-timer.C:
		case <-ctx.Done():
		}
		l.mem.give(memory)
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return nil, RequestEnded()
	}
	return nil, l.Refuse()
}

// Full reports whether a verification arriving now would be refused: every
// slot and every waiting place taken. It is a hint, checked before a
// request is read and decoded so that load shedding costs next to nothing;
// acquire decides.
func (l *Limiter) Full() bool {
	return l != nil && len(l.slots) == cap(l.slots) && len(l.queue) == cap(l.queue)
}

// releaseOnce is a function that gives one slot and memory bytes back the
// first time it is called (by the goroutine that took them).
func (l *Limiter) releaseOnce(memory int64) func() {
	done := false
	return func() {
		if !done {
			done = true
			l.release(memory)
		}
	}
}

// release gives a slot and memory bytes back, and reports refusals not yet
// reported when it is time.
func (l *Limiter) release(memory int64) {
	l.mem.give(memory)
	<-l.slots
	if l.refused.Load() > 0 {
		l.reportRefusals()
	}
}

// Refuse counts a refusal and returns its 503.
func (l *Limiter) Refuse() *Error {
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

// IsBusy reports whether err is the Limiter's 503: load shedding, expected
// under load.
func IsBusy(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeUnavailable && e.Message == busyMessage
}

// memoryBudget is the bytes of heap the running verifications may be
// expected to need together. A nil *memoryBudget accounts nothing.
type memoryBudget struct {
	size  int64
	mu    sync.Mutex
	free  int64
	freed chan struct{} // closed, and replaced, whenever memory is given back
}

// clamp limits a request for memory to the whole budget, so that a
// verification larger than the budget runs alone instead of never.
func (m *memoryBudget) clamp(n int64) int64 {
	if m == nil {
		return 0
	}
	return min(n, m.size)
}

// tryTake takes n bytes if they are free now.
func (m *memoryBudget) tryTake(n int64) bool {
	if m == nil {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.free < n {
		return false
	}
	m.free -= n
	return true
}

// take takes n bytes, waiting for them to be given back until expire fires
// or ctx is done; it reports whether it took them.
func (m *memoryBudget) take(ctx context.Context, expire <-chan time.Time, n int64) bool {
	if m == nil {
		return true
	}
	for {
		m.mu.Lock()
		if m.free >= n {
			m.free -= n
			m.mu.Unlock()
			return true
		}
		freed := m.freed
		m.mu.Unlock()
		select {
		case <-freed:
		case <-expire:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// give gives n bytes back and wakes those waiting for memory.
func (m *memoryBudget) give(n int64) {
	if m == nil || n == 0 {
		return
	}
	m.mu.Lock()
	m.free += n
	close(m.freed)
	m.freed = make(chan struct{})
	m.mu.Unlock()
}
