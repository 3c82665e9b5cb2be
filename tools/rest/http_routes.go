package rest

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"syscall"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
)

// verify serves POST /verify/schema and /verify/deliverable: 200 with the
// signed answer for a pass and for a fail alike.
func (h *HTTPHandler) verify(w http.ResponseWriter, r *http.Request) {
	call := GateCall{Route: r.Pattern, Tool: contract.VerifySchema}
	if r.ContentLength == 0 {
		h.emptyVerify(w, r, call)
		return
	}
	if e := checkJSONContentType(r); e != nil {
		writeError(w, e)
		return
	}
	// When the verification could not even wait for a slot, it is turned
	// away before its body is read and decoded, and before the gate: load
	// shedding costs next to nothing and uses no allowance.
	if h.svc.Limiter.Full() {
		h.fail(w, r, h.svc.Limiter.Refuse())
		return
	}
	body, e := readBody(w, r, h.opts.MaxBodyBytes)
	if e != nil {
		writeError(w, e)
		return
	}
	if len(body) == 0 {
		h.emptyVerify(w, r, call)
		return
	}
	call.BodyBytes, call.Body = int64(len(body)), body
	vc := tools.VerifyCall{Body: body, Timeout: h.opts.VerifyTimeout}
	if h.opts.SizeGate != nil {
		vc.RefuseBody = func(size int64) error {
			if !h.opts.SizeGate(w, r, size) {
				return errAnswered
			}
			return nil
		}
	}
	if h.opts.Gate != nil {
		vc.Admit = func(_ int64, check func() *tools.Error) (tools.Charge, error) {
			call.Check = check
			adm, ok := h.opts.Gate(w, r, call)
			if !ok {
				return nil, errAnswered
			}
			return gateCharge{adm: adm, w: w}, nil
		}
	}
	v, err := h.svc.VerifyCall(r.Context(), vc)
	if errors.Is(err, errAnswered) {
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if v.Logged {
		w.Header().Set(LogIndexHeader, strconv.FormatInt(v.LogIndex, 10))
	}
	writeJSON(w, http.StatusOK, v.Answer)
}

// errAnswered ends a call whose response a Gate or SizeGate wrote itself.
var errAnswered = errors.New("the gate wrote the response")

// gateCharge is the Charge of a call a Gate admitted: its settlement
// writes the payment headers, or the response of a failed settlement.
type gateCharge struct {
	adm Admitted
	w   http.ResponseWriter
}

func (c gateCharge) Paid() bool { return c.adm.Paid }

func (c gateCharge) Settle(_ context.Context, _ *tools.Verified, ans payment.Answer) error {
	if !c.adm.settle(c.w, GateAnswer{Body: ans.Body, Verdict: ans.Verdict}) {
		return errAnswered
	}
	return nil
}

func (c gateCharge) Release() { c.adm.release() }

// emptyVerify answers a verify POST with no body: the x402 discovery probe,
// which a Gate answers, else a 422.
func (h *HTTPHandler) emptyVerify(w http.ResponseWriter, r *http.Request, call GateCall) {
	call.Probe = true
	if _, ok := h.admit(w, r, call); !ok {
		return
	}
	writeError(w, fieldError("body", "is empty",
		"Send the verification request as a JSON object with Content-Type: application/json; see the example in /openapi.json."))
}

// admit asks the gate, if any, whether a call may proceed.
func (h *HTTPHandler) admit(w http.ResponseWriter, r *http.Request, call GateCall) (Admitted, bool) {
	if h.opts.Gate == nil {
		return Admitted{}, true
	}
	return h.opts.Gate(w, r, call)
}

// score serves GET /score/{agent_id}: the signed trust record.
func (h *HTTPHandler) score(w http.ResponseWriter, r *http.Request) {
	agentID := r.PathValue("agent_id")
	if p := tools.AgentIDProblem(agentID); p != nil {
		writeError(w, tools.InvalidRequest([]engine.FieldProblem{*p}))
		return
	}
	// Every score is paid where payment is on, one for an agent with no
	// history too (a signed record that says so), as the hosted service
	// documents (SPEC §8).
	var adm Admitted
	if h.opts.Gate != nil {
		var ok bool
		if adm, ok = h.admit(w, r, GateCall{Route: r.Pattern, Tool: contract.Record}); !ok {
			return
		}
		defer adm.release()
	}
	record, err := h.svc.Record(r.Context(), agentID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if !adm.settle(w, GateAnswer{Body: record}) {
		return
	}
	writeJSON(w, http.StatusOK, record)
}

// reputation serves GET /reputation/{agent_id}?limit=&cursor=.
func (h *HTTPHandler) reputation(w http.ResponseWriter, r *http.Request) {
	agentID := r.PathValue("agent_id")
	if p := tools.AgentIDProblem(agentID); p != nil {
		writeError(w, tools.InvalidRequest([]engine.FieldProblem{*p}))
		return
	}
	q := r.URL.Query()
	page := store.Page{Cursor: q.Get("cursor")}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > store.MaxPageLimit {
			writeError(w, fieldError("limit", "is not a whole number from 1 to "+strconv.Itoa(store.MaxPageLimit),
				"Use a limit from 1 to "+strconv.Itoa(store.MaxPageLimit)+", or leave it out for "+strconv.Itoa(store.DefaultPageLimit)+"."))
			return
		}
		page.Limit = n
	}
	rep, err := h.svc.Reputation(r.Context(), agentID, page)
	if errors.Is(err, store.ErrInvalidPage) {
		writeError(w, fieldError("cursor", "is not a cursor this server issued",
			"Leave cursor out for the first page, then pass the next_cursor of the previous page unchanged."))
		return
	}
	if err != nil {
		h.fail(w, r, h.storeError(err))
		return
	}
	body, err := ijson.Marshal(rep)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// receipt serves GET /receipts/{verification_id}: the stored compact
// receipt, byte for byte as it was signed. Where the transparency log is
// served, its Log-Index header gives the receipt's record index and a Link
// header (rel "log-proof") the route of its inclusion proof: the body stays
// the document the hosted service defines.
func (h *HTTPHandler) receipt(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("verification_id")
	v, err := h.svc.Store.Receipt(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalidArgument) {
		writeError(w, tools.NewError(tools.CodeNotFound, http.StatusNotFound,
			"No receipt was issued under this verification id by this service. Nothing was charged; check the verification_id of the receipt."))
		return
	}
	if err != nil {
		h.fail(w, r, h.storeError(err))
		return
	}
	if index, ok := h.svc.LogIndex(r.Context(), id); ok {
		w.Header().Set(LogIndexHeader, strconv.FormatInt(index, 10))
		w.Header().Set("Link", "</log/proof/"+url.PathEscape(id)+`>; rel="log-proof"`)
	}
	writeJSON(w, http.StatusOK, v.Receipt)
}

// health serves GET /health: liveness and store readiness, and with
// payments on the facilitator's last known state. A store whose last write
// failed (a verification's, or the store's periodic write probe's) is not
// ready: no verdict could be stored.
func (h *HTTPHandler) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
	defer cancel()
	if err := h.svc.Store.Check(ctx); err != nil {
		h.log.Error("store not ready", "correlation_id", w.Header().Get(CorrelationHeader), "err", err)
		writeError(w, tools.NewError(tools.CodeUnavailable, http.StatusServiceUnavailable, storeNotReady(err)).WithRetryAfter(5))
		return
	}
	body, err := ijson.Marshal(struct {
		Status     string `json:"status"`
		Store      string `json:"store"`
		Version    string `json:"version"`
		KeyVersion string `json:"key_version"`
		// Facilitator is the payment facilitator's last known state.
		Facilitator *facilitatorHealth `json:"facilitator,omitempty"`
	}{"ok", "ok", h.svc.Version, h.svc.Keys.Current().KeyVersion(), h.facilitatorHealth()})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// storeNotReady says why GET /health finds the store not ready, in fixed
// words: never the error's text, which names files. The cause of a failed
// write is the operating system's name for it (such as "no space left on
// device"), when the error carries one.
func storeNotReady(err error) string {
	if !errors.Is(err, store.ErrWriteFailing) {
		return "The service is up but its store is not ready. Try again shortly."
	}
	cause := ""
	var errno syscall.Errno
	if errors.As(err, &errno) {
		cause = " (" + errno.Error() + ")"
	}
	return "The service is up but its last write to its store failed" + cause +
		", so no verdict can be stored and no receipt issued. It is ready again once a write succeeds; try again later."
}

// storeError maps a store failure: an id the store cannot key is the
// caller's to fix; anything else is a fault (logged, 500).
func (h *HTTPHandler) storeError(err error) error {
	if errors.Is(err, store.ErrInvalidArgument) {
		return fieldError("agent_id", "is not an id this service can look up",
			"Use the agent_id exactly as sent in verification requests (1 to 200 characters).")
	}
	return err
}
