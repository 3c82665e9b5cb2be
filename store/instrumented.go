package store

import (
	"context"
	"errors"
	"time"
)

// OpObserver is told of every operation of an [Instrumented] store: the
// backend's name, the operation's, how long it took, and whether it failed
// (see [IsFault]).
type OpObserver interface {
	ObserveStoreOp(backend, op string, elapsed time.Duration, failed bool)
}

// Operation names an [Instrumented] store reports, one per method of
// [Store] (Close is not observed), plus the commit of a held free call.
const (
	OpPutVerdict       = "put_verdict"
	OpReceipt          = "receipt"
	OpReputation       = "reputation"
	OpScore            = "score"
	OpReserveAllowance = "reserve_allowance"
	OpCommitAllowance  = "commit_allowance"
	OpTakeAllowance    = "take_allowance"
	OpPeekAllowance    = "peek_allowance"
	OpUsePayment       = "use_payment"
	OpLookupPayment    = "lookup_payment"
	OpSettlePayment    = "settle_payment"
	OpReleasePayment   = "release_payment"
	OpCheck            = "check"
)

// Instrumented wraps st, a store of the named backend ("bbolt",
// "postgres", …), so that obs is told of each of its operations. The
// wrapper changes nothing of what st does or returns.
func Instrumented(st Store, backend string, obs OpObserver) Store {
	return &instrumented{st: st, backend: backend, obs: obs}
}

// IsFault reports whether err, returned by a store operation, is a failure
// of the store: nil, an answer about the caller's input (ErrNotFound,
// ErrInvalidArgument, ErrInvalidPage) and a caller that went away
// (context.Canceled) are not.
func IsFault(err error) bool {
	switch {
	case err == nil,
		errors.Is(err, ErrNotFound),
		errors.Is(err, ErrInvalidArgument),
		errors.Is(err, ErrInvalidPage),
		errors.Is(err, context.Canceled):
		return false
	}
	return true
}

type instrumented struct {
	st      Store
	backend string
	obs     OpObserver
}

// observe reports an operation that started at start and returned err.
func (s *instrumented) observe(op string, start time.Time, err error) {
	s.obs.ObserveStoreOp(s.backend, op, time.Since(start), IsFault(err))
}

func (s *instrumented) PutVerdict(ctx context.Context, v Verdict) error {
	start := time.Now()
	err := s.st.PutVerdict(ctx, v)
	s.observe(OpPutVerdict, start, err)
	return err
}

func (s *instrumented) Receipt(ctx context.Context, verificationID string) (Verdict, error) {
	start := time.Now()
	v, err := s.st.Receipt(ctx, verificationID)
	s.observe(OpReceipt, start, err)
	return v, err
}

func (s *instrumented) Reputation(ctx context.Context, agentID string, q Page) (Reputation, error) {
	start := time.Now()
	r, err := s.st.Reputation(ctx, agentID, q)
	s.observe(OpReputation, start, err)
	return r, err
}

func (s *instrumented) Score(ctx context.Context, agentID string, now time.Time) (Score, error) {
	start := time.Now()
	sc, err := s.st.Score(ctx, agentID, now)
	s.observe(OpScore, start, err)
	return sc, err
}

func (s *instrumented) ReserveAllowance(ctx context.Context, client string, now time.Time, limit int) (Allowance, AllowanceHold, error) {
	start := time.Now()
	a, hold, err := s.st.ReserveAllowance(ctx, client, now, limit)
	s.observe(OpReserveAllowance, start, err)
	if hold != nil {
		hold = &instrumentedHold{hold: hold, s: s}
	}
	return a, hold, err
}

func (s *instrumented) TakeAllowance(ctx context.Context, client string, now time.Time, limit int) (Allowance, error) {
	start := time.Now()
	a, err := s.st.TakeAllowance(ctx, client, now, limit)
	s.observe(OpTakeAllowance, start, err)
	return a, err
}

func (s *instrumented) PeekAllowance(ctx context.Context, client string, now time.Time, limit int) (Allowance, error) {
	start := time.Now()
	a, err := s.st.PeekAllowance(ctx, client, now, limit)
	s.observe(OpPeekAllowance, start, err)
	return a, err
}

func (s *instrumented) UsePayment(ctx context.Context, paymentID string, expires time.Time, use PaymentUse) (bool, PaymentUse, error) {
	start := time.Now()
	first, recorded, err := s.st.UsePayment(ctx, paymentID, expires, use)
	s.observe(OpUsePayment, start, err)
	return first, recorded, err
}

func (s *instrumented) LookupPayment(ctx context.Context, paymentID string) (PaymentUse, bool, error) {
	start := time.Now()
	use, found, err := s.st.LookupPayment(ctx, paymentID)
	s.observe(OpLookupPayment, start, err)
	return use, found, err
}

func (s *instrumented) SettlePayment(ctx context.Context, paymentID string, use PaymentUse, v *Verdict) error {
	start := time.Now()
	err := s.st.SettlePayment(ctx, paymentID, use, v)
	s.observe(OpSettlePayment, start, err)
	return err
}

func (s *instrumented) ReleasePayment(ctx context.Context, paymentID string) error {
	start := time.Now()
	err := s.st.ReleasePayment(ctx, paymentID)
	s.observe(OpReleasePayment, start, err)
	return err
}

func (s *instrumented) Check(ctx context.Context) error {
	start := time.Now()
	err := s.st.Check(ctx)
	s.observe(OpCheck, start, err)
	return err
}

func (s *instrumented) Close() error { return s.st.Close() }

// instrumentedHold reports the commit of a held free call; Release writes
// nothing and is not observed.
type instrumentedHold struct {
	hold AllowanceHold
	s    *instrumented
}

func (h *instrumentedHold) Commit() error {
	start := time.Now()
	err := h.hold.Commit()
	h.s.observe(OpCommitAllowance, start, err)
	return err
}

func (h *instrumentedHold) Release() { h.hold.Release() }
