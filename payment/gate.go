package payment

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/store"
)

// Headers of free answers (SPEC §7).
const (
	HeaderAllowanceRemaining = "Free-Allowance-Remaining"
	HeaderAllowanceLimit     = "Free-Allowance-Limit"
	HeaderAllowanceResets    = "Free-Allowance-Resets" // RFC 3339, the next UTC midnight
)

// feePayerRetry is how long to wait before asking the facilitator again for
// its Solana fee payer after a failed lookup.
const feePayerRetry = 30 * time.Second

// facilitatorRetryAfter is the retry_after of facilitator_unavailable.
const facilitatorRetryAfter = 5

// pendingRetryAfter is the retry_after of a retry that finds its payment
// still being served.
const pendingRetryAfter = 2

// pendingAbandoned is how long a payment may stay pending (taken, its
// settlement not recorded) before a retry takes it for abandoned: the
// server stopped while serving it. Work and settlement are bounded far
// below this.
const pendingAbandoned = 15 * time.Minute

// Gate decides, per request, whether it is served free (the daily
// allowance), paid (an x402 payment verified by the facilitator, settled
// after the work), or refused (429 past the allowance with payment off, 402
// with what to pay, 503 when the facilitator is down). A nil *Gate admits
// everything free: stdio mode has no allowance and no payment.
type Gate struct {
	cfg      Config
	st       Ledger
	now      func() time.Time
	fac      *Facilitator
	evm, svm Chain
	amounts  map[Kind]string

	log *slog.Logger

	mu           sync.Mutex
	feePayer     string    // Solana fee payer, "" until known
	feePayerNext time.Time // no lookup before this time
}

// SetLog sets where the gate logs facilitator failures (default
// slog.Default()).
func (g *Gate) SetLog(l *slog.Logger) {
	if g != nil && l != nil {
		g.log = l
	}
}

// Ledger is what a gate keeps in the store: each client's free allowance
// and each payment's use. A store.Store is one.
type Ledger interface {
	PeekAllowance(ctx context.Context, client string, now time.Time, limit int) (store.Allowance, error)
	ReserveAllowance(ctx context.Context, client string, now time.Time, limit int) (store.Allowance, store.AllowanceHold, error)
	UsePayment(ctx context.Context, paymentID string, expires time.Time, use store.PaymentUse) (first bool, recorded store.PaymentUse, err error)
	LookupPayment(ctx context.Context, paymentID string) (use store.PaymentUse, found bool, err error)
	SettlePayment(ctx context.Context, paymentID string, use store.PaymentUse, v *store.Verdict) error
	ReleasePayment(ctx context.Context, paymentID string) error
}

// NewGate checks cfg and builds the gate. st counts the allowance and the
// used payments; now is the clock (nil: time.Now); client calls the
// facilitator (nil: a client without its own timeout, each call being
// bounded by cfg.FacilitatorTimeout).
func NewGate(cfg Config, st Ledger, now func() time.Time, client *http.Client) (*Gate, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if st == nil {
		return nil, fmt.Errorf("%w: no store", ErrConfig)
	}
	cfg = cfg.withDefaults()
	if now == nil {
		now = time.Now
	}
	g := &Gate{cfg: cfg, st: st, now: now, amounts: map[Kind]string{}, feePayer: cfg.SolanaFeePayer, log: slog.Default()}
	g.evm, g.svm = chains(cfg.Network)
	g.amounts[KindVerify], _ = atomicAmount(cfg.PriceVerify)
	g.amounts[KindScore], _ = atomicAmount(cfg.PriceScore)
	if cfg.PaymentOn() {
		g.fac = &Facilitator{URL: cfg.FacilitatorURL, Client: client, Timeout: cfg.FacilitatorTimeout, Auth: cfg.FacilitatorAuth}
	}
	return g, nil
}

// Config returns the configuration in force, defaults filled in.
func (g *Gate) Config() Config { return g.cfg }

// PaymentOn reports whether the gate takes payments.
func (g *Gate) PaymentOn() bool { return g != nil && g.cfg.PaymentOn() }

// Price is kind's price in USDC ("0.02").
func (g *Gate) Price(kind Kind) string {
	if kind == KindScore {
		return g.cfg.PriceScore
	}
	return g.cfg.PriceVerify
}

// Allowance reports client's free allowance today without using any of it
// (for /llms.txt and the like).
func (g *Gate) Allowance(ctx context.Context, client string) (store.Allowance, error) {
	if client == "" {
		client = unknownClient
	}
	a, err := g.st.PeekAllowance(ctx, client, g.now(), g.cfg.freeLimit())
	if err != nil {
		return store.Allowance{}, fmt.Errorf("reading free allowance: %w", err)
	}
	return a, nil
}

// Networks lists the CAIP-2 ids payments are taken on (none with payment
// off).
func (g *Gate) Networks() []string {
	if !g.PaymentOn() {
		return nil
	}
	return g.networks()
}

// ClientID is the allowance key of the request's client (see [ClientID]).
func (g *Gate) ClientID(r *http.Request) string { return ClientID(r, g.cfg.TrustProxy) }

// Request is one call to admit.
type Request struct {
	Route Route
	// Client is the client id ([Gate.ClientID]).
	Client string
	// PaymentHeader is the PAYMENT-SIGNATURE header (HTTP), PaymentJSON the
	// _meta["x402/payment"] object (MCP); at most one is set.
	PaymentHeader string
	PaymentJSON   json.RawMessage
	// BodySize is the request body's size in bytes (verify routes).
	BodySize int64
	// RequestKey identifies the request a payment pays for ([RequestKey]):
	// a paid answer is kept under its payment, and a retry with the same
	// payment and the same key gets it. "" matches nothing: such a retry
	// is refused as a replay.
	RequestKey string
	// Probe marks the x402 discovery probe (a POST with no body to a verify
	// route): with payment on it gets the 402, and uses no allowance.
	Probe bool
}

// Admission is a request let through: free (the allowance, or payment off)
// or paid (verified and recorded, not yet settled). After the work, call
// Settle before answering; when the work fails, call Release. A paid
// admission may instead carry a kept answer ([Admission.Kept]): the request
// is a retry, with the same payment, of one already served.
//
// A free call of the allowance is held from Admit on: counted at once
// (exactly, under any concurrency), written durably by Settle — without a
// commit of its own when the verdict's commit already wrote it — and given
// back by Release, so a call that is not answered uses no free call. An
// admission neither settled nor released keeps its free call.
type Admission struct {
	allowance *store.Allowance    // free verify calls: the allowance after this one
	hold      store.AllowanceHold // free verify calls: the call held

	gate       *Gate
	route      Route
	payload    *PaymentPayload
	req        PaymentRequirements
	payer      string
	paymentID  string
	requestKey string
	kept       *store.PaymentUse // a retry's kept answer

	mu        sync.Mutex
	done      bool // settled, or released
	settled   *SettleResponse
	settleErr error
}

// Answer is what a paid call answers with, handed to [Admission.Settle]:
// it is kept with the payment once the payment is settled (or sent for
// settlement without an answer), so a retry with the same payment gets it.
type Answer struct {
	Body []byte // the signed answer, byte for byte
	Text string // the MCP result's text ("" over REST)
	// Verdict, when not nil, is stored with the kept answer, in the same
	// transaction: a paid verdict counts (reputation, scores, receipt
	// lookup) only once its answer is released.
	Verdict *store.Verdict
}

// RequestKey is the [Request.RequestKey] of a request to target (a route
// or tool) with body: a digest, so a retry matches only the same request.
func RequestKey(target string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(target))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// Paid reports whether the request is paid (Settle will charge it).
func (a *Admission) Paid() bool { return a != nil && a.payload != nil }

// Payer is the paying address ("" when free).
func (a *Admission) Payer() string {
	if a == nil {
		return ""
	}
	return a.payer
}

// Requirements is the requirement the payment was made for (nil when free).
func (a *Admission) Requirements() *PaymentRequirements {
	if !a.Paid() {
		return nil
	}
	r := a.req
	return &r
}

// Header is what a free answer carries: the Free-Allowance-* headers (empty
// for paid answers and for routes outside the allowance).
func (a *Admission) Header() http.Header {
	h := http.Header{}
	a.SetHeader(h)
	return h
}

// SetHeader sets the headers of [Admission.Header] in h.
func (a *Admission) SetHeader(h http.Header) {
	if a != nil && a.allowance != nil {
		setAllowanceHeaders(h, *a.allowance)
	}
}

func setAllowanceHeaders(h http.Header, a store.Allowance) {
	h.Set(HeaderAllowanceRemaining, strconv.Itoa(a.Remaining))
	h.Set(HeaderAllowanceLimit, strconv.Itoa(a.Limit))
	h.Set(HeaderAllowanceResets, a.Resets.UTC().Format(time.RFC3339))
}

// Admit lets a request through or refuses it. A refusal is an *Error
// (errors.As): 429 rate_limited, 402 payment_required / payment_invalid /
// payment_replayed, 503 facilitator_unavailable. Any other error wraps
// ctx's error when ctx ended first, else is a fault of the store (500). Call Admit after the request is known to be valid: an
// invalid request is rejected before any payment step.
func (g *Gate) Admit(ctx context.Context, r Request) (*Admission, error) {
	if g == nil {
		return &Admission{}, nil
	}
	if r.Client == "" {
		r.Client = unknownClient
	}
	now := g.now()
	payOn := g.cfg.PaymentOn()
	// A probe has no work to pay for: its payment is left untouched.
	if payOn && !r.Probe && (r.PaymentHeader != "" || len(r.PaymentJSON) > 0) {
		return g.admitPaid(ctx, r, now)
	}
	switch r.Route.Kind {
	case KindScore:
		if !payOn {
			return &Admission{}, nil
		}
		return nil, g.paymentRequired(ctx, r, now, nil, ReasonNotCovered)
	case KindVerify:
	default:
		return nil, fmt.Errorf("admitting request: unknown route kind %d", r.Route.Kind)
	}
	switch {
	case r.Probe && !payOn:
		return &Admission{}, nil
	case r.Probe:
		return nil, g.paymentRequired(ctx, r, now, nil, ReasonProbe)
	case g.unpaidOverFreeBody(r):
		return nil, g.paymentRequired(ctx, r, now, nil, ReasonBodyTooLarge)
	}
	a, hold, err := g.st.ReserveAllowance(ctx, r.Client, now, g.cfg.freeLimit())
	if err != nil {
		return nil, fmt.Errorf("taking free allowance: %w", err)
	}
	if a.Granted {
		return &Admission{allowance: &a, hold: hold}, nil
	}
	if !payOn {
		return nil, g.rateLimited(a, now)
	}
	return nil, g.paymentRequired(ctx, r, now, &a, "")
}

// RefuseUnpaidBody is the free tier's size limit, applied before the body
// is decoded: with payment on, a verify call that carries no payment and a
// body over the free tier's limit gets Admit's 402 at once, so that such a
// body is never decoded unpaid (nor checked: an invalid one learns so when
// paid, and is not charged). It returns nil for every other call, which
// Admit decides.
func (g *Gate) RefuseUnpaidBody(ctx context.Context, r Request) error {
	if g == nil || !g.unpaidOverFreeBody(r) || r.PaymentHeader != "" || len(r.PaymentJSON) > 0 {
		return nil
	}
	return g.paymentRequired(ctx, r, g.now(), nil, ReasonBodyTooLarge)
}

// unpaidOverFreeBody reports whether r, if it carries no payment, must pay
// for the size of its body.
func (g *Gate) unpaidOverFreeBody(r Request) bool {
	return g.cfg.PaymentOn() && r.Route.Kind == KindVerify && !r.Probe && r.BodySize > g.cfg.FreeTierMaxBody
}

// admitPaid checks a payment: decode, match against what is offered,
// scheme checks, the local record of used payments (a replay is refused,
// and a retry of a request already served gets its kept answer, without a
// word to the facilitator), facilitator verify, then the replay guard.
// Nothing is recorded unless the facilitator said the payment is valid.
func (g *Gate) admitPaid(ctx context.Context, r Request, now time.Time) (*Admission, error) {
	offers, err := g.offers(ctx, r.Route.Kind)
	if err != nil {
		return nil, g.unavailable("listing offers", err)
	}
	var p *PaymentPayload
	if r.PaymentHeader != "" {
		p, err = DecodePaymentSignature(r.PaymentHeader)
	} else {
		p, err = ParsePaymentPayload(r.PaymentJSON)
	}
	if err != nil {
		return nil, g.invalid(r, offers, "invalid_payment_payload",
			"The payment is not an x402 v2 PaymentPayload (standard base64 JSON in the Payment-Signature header, or a JSON object in _meta[\"x402/payment\"]).")
	}
	if p.X402Version != X402Version {
		return nil, g.invalid(r, offers, "invalid_x402_version", "The payment is not x402 version 2.")
	}
	var req *PaymentRequirements
	for i := range offers {
		if offers[i].matches(p.Accepted) {
			req = &offers[i]
			break
		}
	}
	if req == nil {
		return nil, g.invalid(r, offers, "no_matching_requirements",
			"The payment's accepted requirement is not one this route offers: scheme, network, amount, asset, payTo and maxTimeoutSeconds must be copied from accepts.")
	}
	id, expires, reason := checkScheme(p, *req, now)
	if reason != "" {
		return nil, g.invalid(r, offers, reason, "The signed payment does not pay what the accepted requirement asks ("+reason+").")
	}
	adm := &Admission{gate: g, route: r.Route, payload: p, req: *req, paymentID: id, requestKey: r.RequestKey}
	use, used, err := g.st.LookupPayment(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("reading payment: %w", err)
	}
	if used {
		return g.usedPayment(r, offers, adm, use, now)
	}
	vr, err := g.fac.Verify(ctx, p, *req)
	if err != nil && ctx.Err() != nil {
		// The client went away (or the deadline passed): no outage, and
		// nothing was recorded or charged.
		return nil, fmt.Errorf("verifying payment: request ended: %w", ctx.Err())
	}
	if err != nil {
		return nil, g.unavailable("verifying payment", err)
	}
	if !vr.IsValid {
		reason := vr.InvalidReason
		if reason == "" {
			reason = "invalid_payment"
		}
		return nil, g.invalid(r, offers, reason, "The facilitator refused the payment ("+reason+").")
	}
	adm.payer = vr.Payer
	first, use, err := g.st.UsePayment(ctx, id, expires, store.PaymentUse{State: store.PaymentPending, RequestKey: r.RequestKey, Since: now})
	if err != nil {
		return nil, fmt.Errorf("recording payment: %w", err)
	}
	if !first {
		return g.usedPayment(r, offers, adm, use, now)
	}
	return adm, nil
}

// usedPayment answers a payment already recorded: the kept answer for a
// retry of the same request, a retryable 503 while that request is still
// being served, else payment_replayed. Nothing is sent to the facilitator.
func (g *Gate) usedPayment(r Request, offers []PaymentRequirements, adm *Admission, use store.PaymentUse, now time.Time) (*Admission, error) {
	same := r.RequestKey != "" && use.RequestKey == r.RequestKey
	switch {
	case same && (use.State == store.PaymentSettled || use.State == store.PaymentUnknown):
		adm.kept = &use
		adm.done = true
		return adm, nil
	case same && use.State == store.PaymentPending && now.Sub(use.Since) < pendingAbandoned:
		e := &Error{
			Code: CodeFacilitatorUnavailable, Status: http.StatusServiceUnavailable, Charged: ChargeUnknown,
			Message:     "This payment is still being settled for this same request. Send the request again with the same payment in a few seconds to get the answer; the payment is not settled twice.",
			NextActions: []engine.NextAction{{Action: ActionRetrySamePayment}},
		}
		return nil, e.WithRetryAfter(pendingRetryAfter)
	case same && use.State == store.PaymentPending:
		e := g.refusal402(r, offers, CodePaymentReplayed, "payment_already_used",
			"This payment was taken for this request, but the server stopped before its settlement was recorded: it may have been charged, and no answer was kept. Pay again with a fresh payment.", nil)
		e.Charged = ChargeUnknown
		return nil, e
	case same && use.State == store.PaymentFailed:
		return nil, g.refusal402(r, offers, CodePaymentReplayed, "payment_already_used",
			"This payment did not settle when it was used for this request, so the answer was withheld and nothing was charged. Pay again with a fresh payment.", nil)
	}
	msg := "This payment was already used for another request; a payment is accepted once. Nothing was charged for this request; pay again with a fresh payment."
	if use.RequestKey == "" { // recorded without its request
		msg = "This payment was already used; a payment is accepted once. Nothing was charged for this request; pay again with a fresh payment."
	}
	return nil, g.refusal402(r, offers, CodePaymentReplayed, "payment_already_used", msg, nil)
}

// Kept is the answer kept for this payment when the request is a retry,
// with the same payment, of a request already served: answer with it (and
// with the settlement, when the facilitator confirmed one) instead of doing
// the work. Settle and Release are then no-ops. ok is false otherwise.
func (a *Admission) Kept() (ans Answer, settled *SettleResponse, ok bool) {
	if a == nil || a.kept == nil {
		return Answer{}, nil, false
	}
	ans = Answer{Body: a.kept.Answer, Text: a.kept.Text}
	if a.kept.State == store.PaymentSettled && len(a.kept.Settlement) > 0 {
		var sr SettleResponse
		if json.Unmarshal(a.kept.Settlement, &sr) == nil {
			settled = &sr
		}
	}
	return ans, settled, true
}

// Settle charges a paid admission after the work, or makes a free call of
// the allowance durable (then returning nil, nil). It settles once; later
// calls return the first outcome. The settlement is not cancelled by ctx
// (a client that hangs up does not stop a payment under way): it is
// bounded by the facilitator timeout.
//
// Once the facilitator settled the payment, or was asked to and never
// answered, ans is kept with the payment (and its verdict stored), so a
// retry with the same payment gets it. A settlement without an answer is an
// *Error facilitator_unavailable with charged "unknown"; a refused one is
// settlement_failed (402, nothing charged, ans discarded); any other error
// is a fault of the store recording a free call. Either way the answer
// must be withheld. When the answer cannot be kept, it is released at once
// (nil, nil for an unknown outcome) rather than lost.
func (a *Admission) Settle(ctx context.Context, ans Answer) (*SettleResponse, error) {
	if !a.Paid() {
		if a != nil && a.hold != nil {
			if err := a.hold.Commit(); err != nil {
				return nil, fmt.Errorf("recording free call: %w", err)
			}
		}
		return nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kept != nil {
		_, sr, _ := a.Kept()
		return sr, nil
	}
	if a.done {
		return a.settled, a.settleErr
	}
	a.done = true
	g := a.gate
	ctx = context.WithoutCancel(ctx)
	sr, err := g.fac.Settle(ctx, a.payload, a.req)
	switch {
	case err != nil:
		g.log.Warn("settling payment: no answer from the facilitator, outcome unknown",
			"network", a.req.Network, "err", err)
		if !a.keep(ctx, store.PaymentUnknown, nil, ans) {
			return nil, nil
		}
		e := &Error{
			Code: CodeFacilitatorUnavailable, Status: http.StatusServiceUnavailable, Charged: ChargeUnknown,
			Message: "The work was done and the payment was sent for settlement, but " + settleFailure(err) + ", so whether it was charged is unknown. " +
				"The answer is kept for this payment: send the same request with the same payment again to get it; the payment is not settled twice.",
			NextActions: []engine.NextAction{{Action: ActionRetrySamePayment}},
		}
		a.settleErr = e.WithRetryAfter(facilitatorRetryAfter)
	case !sr.Success:
		a.settleErr = a.settlementFailed(ctx, sr)
	default:
		if sr.Payer == "" {
			sr.Payer = a.payer
		}
		a.settled = sr
		a.keep(ctx, store.PaymentSettled, sr, ans)
	}
	return a.settled, a.settleErr
}

// settleFailure says, for a settlement's message, what became of the
// request to the facilitator: an answer that was not a settlement result,
// no answer within the time limit, or no connection.
func settleFailure(err error) string {
	var status *FacilitatorStatusError
	var netErr net.Error
	switch {
	case errors.As(err, &status):
		return fmt.Sprintf("the facilitator answered HTTP %d instead of a settlement result", status.Status)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "the facilitator did not answer within the time limit"
	}
	return "the connection to the facilitator failed before its answer came"
}

// keep records the settlement's outcome with the answer and its verdict,
// and reports whether that worked (a failure is logged: the caller then
// releases the answer at once rather than lose it).
func (a *Admission) keep(ctx context.Context, state store.PaymentState, sr *SettleResponse, ans Answer) bool {
	g := a.gate
	use := store.PaymentUse{State: state, RequestKey: a.requestKey, Since: g.now(), Text: ans.Text, Answer: ans.Body}
	if sr != nil {
		use.Settlement, _ = json.Marshal(sr) // a SettleResponse always marshals
	}
	if err := g.st.SettlePayment(ctx, a.paymentID, use, ans.Verdict); err != nil {
		g.log.Error("keeping a paid answer: released without being kept", "state", state.String(), "err", err)
		return false
	}
	return true
}

// settlementFailed records a refused settlement (no answer kept, no
// verdict stored) and is its refusal: 402 settlement_failed.
func (a *Admission) settlementFailed(ctx context.Context, sr *SettleResponse) *Error {
	g := a.gate
	use := store.PaymentUse{State: store.PaymentFailed, RequestKey: a.requestKey, Since: g.now()}
	use.Settlement, _ = json.Marshal(sr)
	if err := g.st.SettlePayment(ctx, a.paymentID, use, nil); err != nil {
		g.log.Error("recording a failed settlement", "err", err)
	}
	reason := sr.ErrorReason
	if reason == "" {
		reason = "settlement_failed"
	}
	offers, oerr := g.offers(ctx, a.route.Kind)
	if oerr != nil {
		offers = []PaymentRequirements{a.req}
	}
	e := g.refusal402(Request{Route: a.route}, offers, CodeSettlementFailed, reason,
		"The payment did not settle ("+reason+"), so the answer is withheld. Nothing was charged; send the request again with a fresh payment.", nil)
	e.Settlement = sr
	if h, herr := EncodeHeader(sr); herr == nil {
		e.header().Set(HeaderPaymentResponse, h)
	}
	return e
}

// Release gives back what the admission holds when the work failed and the
// call is not answered: the free call of the allowance, or the payment,
// which was not sent for settlement (nothing was charged) and may be used
// again. A no-op after Settle.
func (a *Admission) Release() {
	if a == nil {
		return
	}
	if a.hold != nil {
		a.hold.Release()
	}
	if !a.Paid() {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return
	}
	a.done = true
	if err := a.gate.st.ReleasePayment(context.Background(), a.paymentID); err != nil {
		a.gate.log.Error("releasing an unsettled payment", "err", err)
	}
}

// HeaderValue is the PAYMENT-RESPONSE header value of s.
func (s *SettleResponse) HeaderValue() string {
	h, err := EncodeHeader(s)
	if err != nil { // a SettleResponse always marshals
		panic(err)
	}
	return h
}

// offers is what kind costs: one requirement per configured pay-to
// address. The Solana one needs the facilitator's fee payer; while it is
// unknown only the EVM one is offered, and with nothing to offer the error
// wraps ErrFacilitatorUnavailable.
func (g *Gate) offers(ctx context.Context, kind Kind) ([]PaymentRequirements, error) {
	amount := g.amounts[kind]
	var out []PaymentRequirements
	if g.cfg.PayToEVM != "" {
		out = append(out, PaymentRequirements{
			Scheme: SchemeExact, Network: g.evm.Network, Amount: amount, Asset: g.evm.Asset,
			PayTo: g.cfg.PayToEVM, MaxTimeoutSeconds: g.cfg.MaxTimeoutSeconds,
			Extra: map[string]any{"name": g.evm.EIP712Name, "version": g.evm.EIP712Version},
		})
	}
	var feeErr error
	if g.cfg.PayToSolana != "" {
		var feePayer string
		feePayer, feeErr = g.solanaFeePayer(ctx)
		if feeErr == nil {
			out = append(out, PaymentRequirements{
				Scheme: SchemeExact, Network: g.svm.Network, Amount: amount, Asset: g.svm.Asset,
				PayTo: g.cfg.PayToSolana, MaxTimeoutSeconds: g.cfg.MaxTimeoutSeconds,
				Extra: map[string]any{"feePayer": feePayer},
			})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("nothing to offer: %w", feeErr)
	}
	return out, nil
}

// solanaFeePayer is the configured fee payer, or the one the facilitator's
// GET /supported lists for the Solana network (looked up at most every
// feePayerRetry).
func (g *Gate) solanaFeePayer(ctx context.Context) (string, error) {
	g.mu.Lock()
	if g.feePayer != "" {
		defer g.mu.Unlock()
		return g.feePayer, nil
	}
	if g.now().Before(g.feePayerNext) {
		g.mu.Unlock()
		return "", fmt.Errorf("%w: the Solana fee payer is not known yet", ErrFacilitatorUnavailable)
	}
	g.feePayerNext = g.now().Add(feePayerRetry)
	g.mu.Unlock()

	sup, err := g.fac.Supported(ctx)
	if err != nil {
		return "", err
	}
	for _, k := range sup.Kinds {
		if fp, _ := k.Extra["feePayer"].(string); k.Network == g.svm.Network && k.Scheme == SchemeExact && checkSolanaAddress(fp) == nil {
			g.mu.Lock()
			g.feePayer = fp
			g.mu.Unlock()
			return fp, nil
		}
	}
	return "", fmt.Errorf("%w: the facilitator supports no exact payments on %s", ErrFacilitatorUnavailable, g.svm.Network)
}

// paymentRequired is the 402 for an unpaid request. a is the allowance
// already read (nil: peek it); reason says why a client with free calls
// left must pay.
func (g *Gate) paymentRequired(ctx context.Context, r Request, now time.Time, a *store.Allowance, reason string) error {
	offers, err := g.offers(ctx, r.Route.Kind)
	if err != nil {
		return g.unavailable("listing offers", err)
	}
	if a == nil {
		peek, err := g.st.PeekAllowance(ctx, r.Client, now, g.cfg.freeLimit())
		if err != nil {
			return fmt.Errorf("reading free allowance: %w", err)
		}
		a = &peek
	}
	ft := g.freeTrial(*a, reason)
	if r.Route.Kind == KindScore { // never free: the allowance is not what ran out
		ft.Code, ft.Reason = "", ReasonNotCovered
	}
	price := g.Price(r.Route.Kind)
	var msg string
	switch {
	case ft.Code == CodeFreeTrialExhausted && r.Route.Kind == KindVerify:
		msg = fmt.Sprintf("This client's free allowance (%d verifications per UTC day) is used up; it resets at %s. Each further call costs %s USDC, paid with x402; nothing was charged.",
			a.Limit, a.Resets.UTC().Format(time.RFC3339), price)
	case reason == ReasonBodyTooLarge:
		msg = fmt.Sprintf("The request body is above the free tier's limit of %d bytes, so this call costs %s USDC, paid with x402; nothing was charged.", g.cfg.FreeTierMaxBody, price)
	case reason == ReasonProbe:
		msg = fmt.Sprintf("x402 discovery: this route costs %s USDC per call past the free allowance; send the request with a JSON body.", price)
	default:
		msg = fmt.Sprintf("This route costs %s USDC per call, paid with x402; nothing was charged.", price)
	}
	return g.refusal402(r, offers, CodePaymentRequired, "Payment required", msg, ft)
}

func (g *Gate) freeTrial(a store.Allowance, reason string) *FreeTrial {
	ft := &FreeTrial{
		Available: a.Remaining > 0, Via: FreeTrialVia, Transport: FreeTrialTransport, Tool: FreeTrialTool,
		CallsPerClientPerDay: a.Limit, RemainingCallsToday: a.Remaining, ResetsAt: a.Resets.UTC(),
		Client: FreeTrialClient, RESTFree: true, Launch: a.Limit > 0, Message: allowanceMessage(a, g.PaymentOn()),
		MaxFreeBodyBytes: g.cfg.FreeTierMaxBody, Covers: freeCovers,
	}
	if a.Remaining == 0 {
		ft.Code = CodeFreeTrialExhausted
	} else {
		ft.Reason = reason
	}
	return ft
}

// allowanceMessage is FreeTrial.Message. Once the allowance is used up it
// is the hosted service's sentence; paymentOn says whether payment (or,
// with payment off, a refusal) applies until the reset.
func allowanceMessage(a store.Allowance, paymentOn bool) string {
	if a.Limit <= 0 {
		return "This deployment has no free allowance: every verification is paid with x402."
	}
	resets := a.Resets.UTC().Format(time.RFC3339)
	if a.Remaining <= 0 {
		until := "Payment applies until then."
		if !paymentOn {
			until = "Verifications are refused until then."
		}
		return fmt.Sprintf("Free during launch. This client's %d free checks for today are used up (REST and MCP share them); they reset at %s. %s",
			a.Limit, resets, until)
	}
	return fmt.Sprintf("Free during launch. No sign-up, API key or wallet: call verify_schema over MCP, or POST /verify/schema, and the free checks are used first. "+
		"This client has %d of %d free checks left for today (REST and MCP share them); they reset at %s.", a.Remaining, a.Limit, resets)
}

// refusal402 builds a 402 carrying PaymentRequired (x402Error in its error
// field) in the PAYMENT-REQUIRED header.
func (g *Gate) refusal402(r Request, offers []PaymentRequirements, code, x402Error, msg string, ft *FreeTrial) *Error {
	pr := &PaymentRequired{
		X402Version: X402Version, Error: x402Error, Resource: r.Route.resource(), Accepts: offers,
		Extensions: map[string]Extension{"bazaar": r.Route.bazaar()},
	}
	e := &Error{
		Code: code, Status: http.StatusPaymentRequired, Message: msg, FreeTrial: ft, PaymentRequired: pr,
		NextActions: []engine.NextAction{{Action: "pay", Using: "x402"}},
	}
	if h, err := EncodeHeader(pr); err == nil {
		e.header().Set(HeaderPaymentRequired, h)
	}
	e.header().Set("Cache-Control", "no-store")
	if ft != nil {
		setAllowanceHeaders(e.header(), store.Allowance{Remaining: ft.RemainingCallsToday, Limit: ft.CallsPerClientPerDay, Resets: ft.ResetsAt})
	}
	return e
}

func (g *Gate) invalid(r Request, offers []PaymentRequirements, reason, msg string) *Error {
	return g.refusal402(r, offers, CodePaymentInvalid, reason, msg+" Nothing was charged; pay again with one of the offered requirements.", nil)
}

// unavailable is the 503 when the facilitator cannot be reached while
// doing what (verifying payment, ...); the cause is logged.
func (g *Gate) unavailable(what string, err error) *Error {
	g.log.Warn("payment facilitator unavailable", "while", what, "err", err)
	msg := "The payment facilitator is unavailable, so the payment could not be checked. Nothing was charged; send the request again shortly."
	if !errors.Is(err, ErrFacilitatorUnavailable) {
		msg = "The payment could not be checked. Nothing was charged; send the request again shortly."
	}
	e := &Error{
		Code: CodeFacilitatorUnavailable, Status: http.StatusServiceUnavailable, Message: msg,
		NextActions: []engine.NextAction{{Action: "retry_later"}},
	}
	return e.WithRetryAfter(facilitatorRetryAfter)
}

// rateLimited is the 429 past the allowance with payment off.
func (g *Gate) rateLimited(a store.Allowance, now time.Time) *Error {
	secs := int(math.Ceil(a.Resets.Sub(now).Seconds()))
	e := &Error{
		Code: CodeRateLimited, Status: http.StatusTooManyRequests,
		Message: fmt.Sprintf("This client's free allowance (%d verifications per UTC day) is used up; it resets at %s (in %d seconds). Nothing was charged.",
			a.Limit, a.Resets.UTC().Format(time.RFC3339), secs),
		NextActions: []engine.NextAction{{Action: "retry_later"}},
		FreeTrial:   g.freeTrial(a, ""),
	}
	setAllowanceHeaders(e.header(), a)
	return e.WithRetryAfter(secs)
}
