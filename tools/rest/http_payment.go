package rest

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
)

// routeWellKnownX402 is the x402 discovery document of the payment layer.
const routeWellKnownX402 = "GET /.well-known/x402"

// exposedPaymentHeaders lets browser clients read the x402 and allowance
// headers of a cross-origin answer.
const exposedPaymentHeaders = "PAYMENT-REQUIRED, PAYMENT-RESPONSE, Free-Allowance-Remaining, Free-Allowance-Limit, Free-Allowance-Resets"

// WithPayment puts the free allowance and x402 payments of g on the HTTP
// routes: the Gate of both verify routes and GET /score/{agent_id}, the
// live Pricing of /llms.txt, and GET /.well-known/x402; and on the
// chargeable MCP tools through s.Payment. A nil g leaves opts
// as they are (every call free).
func WithPayment(svc *tools.Service, opts *HTTPOptions, g *payment.Gate) {
	s := httpService{svc}
	if g == nil {
		return
	}
	s.Payment = g
	g.SetLog(s.Logger())
	opts.Gate = s.paymentGate(g)
	opts.SizeGate = s.sizeGate(g)
	opts.Pricing = func(r *http.Request) Pricing { return s.pricing(g, r) }
	opts.Routes = append(opts.Routes, HTTPRoute{
		Pattern:   routeWellKnownX402,
		Handler:   http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.wellKnownX402(w, r, g) }),
		Operation: []byte(wellKnownX402Operation),
	})
}

// paymentGate adapts g to the Gate hook: admit before the work (writing
// the 402, 429 or 503 itself, or the answer kept for a retry with the same
// payment; a free call is held, not yet written), settle after it (making
// the free call durable — usually already done by the verdict's commit —
// or settling the payment and keeping the answer and its verdict with it,
// and adding Payment-Response or the Free-Allowance-* headers; or writing
// the failed settlement and dropping the answer), or release the free call
// or the unsettled payment when the work failed.
func (s httpService) paymentGate(g *payment.Gate) Gate {
	// The verify routes' input description, converted once: every call's
	// Route carries it (for a 402), read only.
	doc := routeDoc{input: json.RawMessage(contract.VerifySchemaInput), example: json.RawMessage(contract.VerifySchemaExample)}
	return func(w http.ResponseWriter, r *http.Request, call GateCall) (Admitted, bool) {
		preq := payment.Request{
			Route:         s.paymentRoute(r, call, doc),
			Client:        g.ClientID(r),
			PaymentHeader: r.Header.Get(payment.HeaderPaymentSignature),
			BodySize:      call.BodyBytes,
			Probe:         call.Probe,
			RequestKey:    payment.RequestKey(r.Method+" "+r.URL.Path, call.Body),
		}
		adm, invalid, err := s.AdmitPayment(r.Context(), g, preq, call.Check)
		if invalid != nil {
			writeError(w, invalid)
			return Admitted{}, false
		}
		if err != nil {
			s.writePaymentError(w, r, err)
			return Admitted{}, false
		}
		if kept, settled, ok := adm.Kept(); ok {
			// A retry with the same payment of a request already served:
			// the kept answer, no work, no second settlement.
			h := w.Header()
			if settled != nil {
				h.Set(payment.HeaderPaymentResponse, settled.HeaderValue())
			}
			h.Set("Access-Control-Expose-Headers", exposedPaymentHeaders)
			writeJSON(w, http.StatusOK, kept.Body)
			return Admitted{}, false
		}
		settle := func(w http.ResponseWriter, ans GateAnswer) bool {
			settled, err := s.SettlePayment(r.Context(), adm, payment.Answer{Body: ans.Body, Verdict: ans.Verdict})
			if err != nil {
				s.writePaymentError(w, r, err)
				return false
			}
			h := w.Header()
			adm.SetHeader(h)
			if settled != nil {
				h.Set(payment.HeaderPaymentResponse, settled.HeaderValue())
			}
			h.Set("Access-Control-Expose-Headers", exposedPaymentHeaders)
			return true
		}
		return Admitted{Paid: adm.Paid(), Settle: settle, Release: adm.Release}, true
	}
}

// sizeGate adapts g's free-tier size limit (Gate.RefuseUnpaidBody) to the
// SizeGate hook of the verify routes.
func (s httpService) sizeGate(g *payment.Gate) func(w http.ResponseWriter, r *http.Request, bodyBytes int64) bool {
	doc := routeDoc{input: json.RawMessage(contract.VerifySchemaInput), example: json.RawMessage(contract.VerifySchemaExample)}
	return func(w http.ResponseWriter, r *http.Request, bodyBytes int64) bool {
		preq := payment.Request{
			Route:         s.paymentRoute(r, GateCall{Route: r.Pattern, Tool: contract.VerifySchema}, doc),
			Client:        g.ClientID(r),
			PaymentHeader: r.Header.Get(payment.HeaderPaymentSignature),
			BodySize:      bodyBytes,
		}
		if err := s.RefuseUnpaidBody(r.Context(), g, preq); err != nil {
			s.writePaymentError(w, r, err)
			return false
		}
		return true
	}
}

// writePaymentError answers with a payment refusal, or with internal_error
// for a fault of the store.
func (s httpService) writePaymentError(w http.ResponseWriter, r *http.Request, err error) {
	var refused *payment.Error
	if errors.As(err, &refused) {
		s.NameMCPEndpoint(refused)
		w.Header().Set("Access-Control-Expose-Headers", exposedPaymentHeaders)
		refused.Write(w)
		return
	}
	if r.Context().Err() != nil {
		// The client went away (or the deadline passed) while the gate
		// worked: not a fault of ours, and nothing was charged.
		s.Logger().Info("payment gate stopped: request ended", "route", routeOf(r), "err", err)
		writeError(w, tools.RequestEnded())
		return
	}
	if store.Unavailable(err) {
		// The allowance or payment record could not be reached in time:
		// a 503, not a fault of the gate.
		s.Logger().Warn("store unavailable at the allowance or payment step", "route", routeOf(r), "err", err)
	} else {
		s.Logger().Error("payment gate failed", "route", routeOf(r), "err", err)
	}
	writeError(w, tools.AsError(err))
}

// routeDoc is the bazaar description of a verify route's input.
type routeDoc struct{ input, example json.RawMessage }

// paymentRoute describes the call for the 402: its resource URL and the
// bazaar description of its input.
func (s httpService) paymentRoute(r *http.Request, call GateCall, doc routeDoc) payment.Route {
	route := payment.Route{
		Kind:     payment.KindVerify,
		Method:   r.Method,
		Resource: payment.Resource{URL: s.BaseURL() + r.URL.Path, Description: contract.VerifySchemaSummary},
	}
	if call.Tool == contract.Record {
		route.Kind = payment.KindScore
		route.Resource.Description = contract.RecordSummary
		route.RouteTemplate = "/score/:agent_id"
		route.PathParams = map[string]string{"agent_id": r.PathValue("agent_id")}
		return route
	}
	route.InputSchema, route.Example = doc.input, doc.example
	return route
}

// pricing is /llms.txt's view of g for the asking client.
func (s httpService) pricing(g *payment.Gate, r *http.Request) Pricing {
	cfg := g.Config()
	p := Pricing{
		FreePerDay: max(cfg.FreePerDay, 0), Limited: true, PaymentEnabled: g.PaymentOn(),
		PriceVerify: cfg.PriceVerify, PriceScore: cfg.PriceScore, Asset: "USDC", Networks: g.Networks(),
	}
	if a, err := g.Allowance(r.Context(), g.ClientID(r)); err == nil {
		p.Remaining, p.Resets = &a.Remaining, a.Resets
	}
	return p
}

// wellKnownX402 serves GET /.well-known/x402 from the live configuration.
func (s httpService) wellKnownX402(w http.ResponseWriter, r *http.Request, g *payment.Gate) {
	base := s.BaseURL()
	verify := func(path string) payment.Route {
		return payment.Route{Kind: payment.KindVerify, Method: http.MethodPost, Resource: payment.Resource{URL: base + path}}
	}
	routes := []payment.Route{
		verify("/verify/schema"), verify("/verify/deliverable"),
		{Kind: payment.KindScore, Method: http.MethodGet, Resource: payment.Resource{URL: base + "/score/{agent_id}"}},
		{Kind: payment.KindVerify, Tool: contract.VerifySchema, Resource: payment.Resource{URL: base + "/mcp"}},
		{Kind: payment.KindScore, Tool: contract.Record, Resource: payment.Resource{URL: base + "/mcp"}},
	}
	body, err := json.MarshalIndent(g.WellKnown(r.Context(), routes), "", "  ")
	if err != nil {
		writeError(w, tools.AsError(err))
		return
	}
	writeJSON(w, http.StatusOK, append(body, '\n'))
}

// wellKnownX402Operation documents GET /.well-known/x402 in /openapi.json.
var wellKnownX402Operation = strings.TrimSpace(`
{"tags":["discovery"],"operationId":"getX402Discovery",
 "summary":"x402 discovery: paid routes, prices, networks, pay-to addresses and assets",
 "description":"The x402scan fan-out document (version, resources) with the live payment configuration: the free allowance, each paid route or MCP tool with its price and accepts list, the pay-to addresses and the USDC assets. With payment off, resources is empty and every route is free.",
 "responses":{"200":{"description":"The discovery document.","content":{"application/json":{"schema":{"type":"object","required":["version","resources"],
  "properties":{"version":{"type":"integer","const":1},"x402Version":{"type":"integer"},"resources":{"type":"array","items":{"type":"string","format":"uri"}},
   "payment":{"type":"string","enum":["on","off"]},"routes":{"type":"array","items":{"type":"object"}}}}}}}}}`)
