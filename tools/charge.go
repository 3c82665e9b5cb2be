package tools

import (
	"context"
	"errors"
	"time"

	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/store"
)

// Charge is the payment of one chargeable call, as a transport's payment
// step admitted it (see [VerifyCall.Admit]).
type Charge interface {
	// Paid says the call is paid: its verdict is not stored by the work
	// but handed to Settle with the answer, and stored only if the answer
	// is released (a withheld answer never counts for reputation).
	Paid() bool
	// Settle is called once the work has succeeded, before the answer is
	// given: it makes a free call durable or settles the payment (storing a
	// paid verdict with it). An error withholds the answer; the transport
	// has rendered it or renders it from the error.
	// v is the verification, ans the answer to keep with a payment (a
	// paid verification's verdict in ans.Verdict).
	Settle(ctx context.Context, v *Verified, ans payment.Answer) error
	// Release gives back what the admission held (a free call of the
	// allowance, an unsettled payment) when the call is not answered. It
	// is also called after Settle, and must then do nothing.
	Release()
}

// VerifyCall is one verification call as a transport hands it to
// [Service.VerifyCall]: the raw request body and the transport's payment
// steps. Nil steps serve the call free (stdio, the CLI).
type VerifyCall struct {
	// Body is the verification request as received.
	Body []byte
	// RefuseBody, when set, is the free tier's size limit: it runs before
	// the body is decoded, so an unpaid body over the limit is never
	// decoded. An error ends the call.
	RefuseBody func(size int64) error
	// Admit, when set, is the payment step, run once the request decoded
	// and before any work. check finds what only the work would otherwise
	// find wrong with the request (a schema that does not compile): the
	// step runs it before it verifies a payment or refuses the call, so an
	// invalid request is neither charged nor asked to pay. An error ends
	// the call.
	Admit func(size int64, check func() *Error) (Charge, error)
	// Timeout, when positive, is the deadline of the call, counted from
	// its decoding: the admission's store calls (free allowance, payment
	// record), the verification and the storing of its verdict all end by
	// it.
	Timeout time.Duration
}

// freeCharge is the charge of a call no payment step admitted.
type freeCharge struct{}

func (freeCharge) Paid() bool                                              { return false }
func (freeCharge) Settle(context.Context, *Verified, payment.Answer) error { return nil }
func (freeCharge) Release()                                                {}

// VerifyCall runs the one chain every transport serves a verification
// with: decode, the size limit and admission of call's payment steps,
// the verification (under the limiter), signing, storing the verdict (a
// paid one with its settlement), settling, and reading the verdict's
// transparency-log index. Errors are *Error values, or the errors of
// call's steps unchanged.
func (s *Service) VerifyCall(ctx context.Context, call VerifyCall) (*Verified, error) {
	size := int64(len(call.Body))
	if call.RefuseBody != nil {
		if err := call.RefuseBody(size); err != nil {
			return nil, err
		}
	}
	req, err := s.Engine.DecodeRequest(call.Body)
	if err != nil {
		return nil, AsError(err)
	}
	// One deadline bounds the admission's store calls (the free
	// allowance, the payment's record) as well as the work: a store that
	// does not answer in time is a 503, never a wait without end.
	if call.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, call.Timeout)
		defer cancel()
	}
	var charge Charge = freeCharge{}
	if call.Admit != nil {
		if charge, err = call.Admit(size, func() *Error { return s.checkSchema(req) }); err != nil {
			return nil, err
		}
	}
	defer charge.Release() // a call that is not answered gives back its free call or payment
	v, err := s.verifyRequest(ctx, req, !charge.Paid())
	if err != nil {
		return nil, err
	}
	ans := payment.Answer{Body: v.Answer}
	if charge.Paid() {
		ans.Verdict = &v.Verdict
	}
	if err := charge.Settle(ctx, v, ans); err != nil {
		if charge.Paid() || s.Store == nil || !store.Unavailable(err) {
			return nil, err
		}
		// A free call's verdict is stored and counts: the answer is given,
		// not a failure the client would be told while the verdict
		// stands. The free call itself stays held by the store, which
		// writes a hold left alone as used.
		s.Logger().Warn("recording a free call: the verdict is stored, so the answer is given", "verification_id", v.Verdict.VerificationID, "err", err)
	}
	v.LogIndex, v.Logged = s.LogIndex(ctx, v.Verdict.VerificationID)
	return v, nil
}

// AdmitPayment is g's admission of a chargeable call, counted in the
// metrics. check, when not nil, finds what only the work would otherwise
// find wrong with the request: it runs before a payment is verified, else
// only before a refusal (a free call leaves it to the work), and its error
// comes back as invalid — the request is neither charged nor asked to pay.
// err is g's refusal (a *payment.Error) or fault. An admission may hold a
// kept answer (Admission.Kept): the transport answers with it, no work.
func (s *Service) AdmitPayment(ctx context.Context, g *payment.Gate, preq payment.Request, check func() *Error) (adm *payment.Admission, invalid *Error, err error) {
	paying := g.PaymentOn() && (preq.PaymentHeader != "" || len(preq.PaymentJSON) > 0) && !preq.Probe
	if paying && check != nil {
		if e := check(); e != nil {
			return nil, e, nil
		}
	}
	adm, err = g.Admit(ctx, preq)
	s.Metrics.observeAdmit(preq.Route.Kind == payment.KindVerify && !preq.Probe, adm, err)
	if err != nil {
		if !paying && check != nil {
			if e := check(); e != nil {
				return nil, e, nil
			}
		}
		return nil, nil, err
	}
	return adm, nil, nil
}

// SettlePayment settles adm with ans, counted in the metrics.
func (s *Service) SettlePayment(ctx context.Context, adm *payment.Admission, ans payment.Answer) (*payment.SettleResponse, error) {
	settled, err := adm.Settle(ctx, ans)
	s.Metrics.observeSettle(adm, err)
	return settled, err
}

// RefuseUnpaidBody is g's free-tier size limit for a body not yet decoded
// (Gate.RefuseUnpaidBody), a refusal counted in the metrics.
func (s *Service) RefuseUnpaidBody(ctx context.Context, g *payment.Gate, preq payment.Request) error {
	err := g.RefuseUnpaidBody(ctx, preq)
	if err != nil {
		s.Metrics.observeAdmit(false, nil, err)
	}
	return err
}

// LogIndex returns the log index of the stored verdict verificationID;
// ok is false when no log is served, the verdict was not stored, or the
// log could not be read (logged: the answer is still given, without it).
func (s *Service) LogIndex(ctx context.Context, verificationID string) (int64, bool) {
	if s.LogKey == nil || s.Store == nil {
		return 0, false
	}
	l, ok := store.LogOf(s.Store)
	if !ok {
		return 0, false
	}
	index, err := l.LogIndex(ctx, verificationID)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.Logger().Error("reading the log index of a verdict", "verification_id", verificationID, "err", err)
		}
		return 0, false
	}
	return index, true
}

// NameMCPEndpoint puts this server's MCP URL into a refusal's free_trial
// (its url member), which the payment gate cannot know.
func (s *Service) NameMCPEndpoint(refused *payment.Error) {
	if refused.FreeTrial != nil {
		refused.FreeTrial.URL = s.BaseURL() + "/mcp"
	}
}
