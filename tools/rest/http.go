// Package rest is the HTTP adapter of the service core (package tools):
// the REST routes, their payment gate (x402 headers), the OpenAPI document,
// /docs, /llms.txt, the pages for people, the agent card, the transparency
// log's routes and the embedded assets they serve, and MCP at /mcp (the
// handler the caller composes, HTTPOptions.MCP). It keeps only transport
// work: reading bodies and writing responses.
package rest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/mcpwire"
)

// HTTP defaults: the zero values of HTTPOptions.
const (
	// DefaultMaxBodyBytes bounds a request body; a larger one is a 413.
	DefaultMaxBodyBytes = 4 << 20
	// DefaultVerifyTimeout is the deadline of one verification.
	DefaultVerifyTimeout = 30 * time.Second
	// healthTimeout bounds the store readiness check of GET /health.
	healthTimeout = 2 * time.Second
)

// CorrelationHeader carries the id that ties every response to its log
// line; a 500 also carries it in its body.
const CorrelationHeader = "X-Correlation-Id"

// HTTPOptions configures [NewHTTPHandler]. MCP is required; with only MCP
// set, every route is served free with the defaults.
type HTTPOptions struct {
	// MaxBodyBytes bounds a request body (0: DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// VerifyTimeout is the deadline of one verification
	// (0: DefaultVerifyTimeout).
	VerifyTimeout time.Duration
	// MCP is the MCP endpoint mounted at /mcp behind the Host and Origin
	// check, the JSON content type, the body limit and the verification
	// deadline; it finds the body already read in mcpwire.Body. Required:
	// the caller composes it (mcpserver.NewMCPHandler), so that this package
	// does not depend on the MCP adapter.
	MCP http.Handler
	// Gate admits, refuses or charges the calls that can cost something
	// (nil: every call is served free). See [Gate].
	Gate Gate
	// SizeGate, when set, is called on a verify route with the body read
	// but not yet decoded: it refuses (writing the whole response itself, and
	// returning false) a call that its body's size alone rules out — with
	// payments on, a body over the free tier's limit sent without a
	// payment — so that such a body is never decoded unpaid. Such a call is
	// asked to pay even when its body is invalid, which only decoding would
	// show; paid, it is decoded, and an invalid one is the 422, uncharged.
	SizeGate func(w http.ResponseWriter, r *http.Request, bodyBytes int64) (proceed bool)
	// Pricing reports the live free allowance and prices that /llms.txt
	// publishes (nil: the deployment neither limits nor charges).
	Pricing func(r *http.Request) Pricing
	// Routes are served beside the built-in ones and documented in
	// /openapi.json (e.g. GET /.well-known/x402 of the payment layer).
	Routes []HTTPRoute
	// Log receives one line per request (nil: the service's logger).
	Log *slog.Logger
	// ClientAddr names the client in request logs (nil: the remote address).
	ClientAddr func(r *http.Request) string
	// AllowedHosts are host names (or IP addresses), beside loopback names
	// and the public URL's host, that a request on a loopback address may
	// name in its Host header, and whose origins may send a request that
	// changes state (--allowed-host; see hostGuard).
	AllowedHosts []string
}

// HTTPRoute is an extra route of [HTTPOptions.Routes].
type HTTPRoute struct {
	// Pattern is an http.ServeMux pattern with a method, e.g.
	// "GET /.well-known/x402".
	Pattern string
	Handler http.Handler
	// Operation is the route's OpenAPI 3.1 Operation Object; it may refer to
	// the document's components (e.g. "#/components/responses/Error").
	Operation []byte
}

// Gate is the hook of a payment layer, called by the chargeable routes (both
// verify routes and GET /score/{agent_id}):
//
//   - for a verify route's x402 discovery probe (a POST with an empty body),
//     with call.Probe set, before anything else;
//   - for every other chargeable call after the request was found valid (an
//     invalid request is never gated, so never charged) and before any work.
//     A score request is gated for an agent with no history too (SPEC §8).
//
// It returns proceed=false after writing the whole response itself (a 402, a
// 429). When it proceeds, the route calls the admission's Settle once the
// work has succeeded and before the answer is written, or its Release when
// the work failed (see [Admitted]).
type Gate func(w http.ResponseWriter, r *http.Request, call GateCall) (adm Admitted, proceed bool)

// Admitted is a call a [Gate] let through.
type Admitted struct {
	// Paid says the call is paid: its verdict is not stored by the work but
	// handed to Settle with the answer, and stored only if the answer is
	// released (a withheld answer never counts for reputation).
	Paid bool
	// Settle, when set, is called once the work has succeeded and before the
	// answer is written, with the answer: it may add headers
	// (Payment-Response, Free-Allowance-*) and return true, or write a
	// response of its own (a failed settlement) and return false, and the
	// answer is dropped. A call whose work fails is never settled.
	Settle func(w http.ResponseWriter, ans GateAnswer) bool
	// Release, when set, is called when the call is not answered after all
	// (the work failed, or the answer was dropped): the gate gives back what
	// it held for the call (a free call of the allowance). It is also
	// called after Settle, and must then do nothing.
	Release func()
}

// GateAnswer is a gated call's answer, handed to [Admitted.Settle].
type GateAnswer struct {
	Body []byte // the answer as it will be written
	// Verdict is the verdict of a paid verification, not yet stored (nil
	// otherwise).
	Verdict *store.Verdict
}

// settle runs a's Settle, if any.
func (a Admitted) settle(w http.ResponseWriter, ans GateAnswer) bool {
	return a.Settle == nil || a.Settle(w, ans)
}

// release runs a's Release, if any.
func (a Admitted) release() {
	if a.Release != nil {
		a.Release()
	}
}

// GateCall describes a chargeable call to a [Gate].
type GateCall struct {
	Route     string // the route pattern, e.g. "POST /verify/schema"
	Tool      string // the MCP tool it mirrors: "verify_schema" or "get_verification_record"
	Probe     bool   // an x402 discovery probe: a POST with no body
	BodyBytes int64  // the size of the (valid) request body; 0 for GET
	// Body is the (valid) request body (nil for GET): with the method and
	// path, it identifies the request a payment pays for.
	Body []byte
	// Check, when set, finds what only the work would otherwise find wrong
	// with the request (an expected_schema that does not compile). The
	// gate runs it before it verifies a payment or refuses the call, and
	// answers its error instead: an invalid request is neither charged nor
	// asked to pay.
	Check func() *tools.Error
}

// Pricing is the cost of calls as /llms.txt states it. The payment layer
// fills it from its live configuration.
type Pricing struct {
	// FreePerDay is each client's daily free allowance of verifications
	// (by remote IP, reset at UTC midnight); 0 with Limited means none.
	FreePerDay int
	// Limited says whether the free allowance is enforced at all.
	Limited bool
	// Remaining is what is left of the asking client's allowance today, when
	// known.
	Remaining *int
	// Resets is the next reset of the allowance (UTC midnight).
	Resets time.Time
	// PaymentEnabled says whether calls past the allowance, and scores, can
	// be paid with x402 v2 (else they are refused with rate_limited).
	PaymentEnabled bool
	// PriceVerify and PriceScore are decimal amounts of Asset, e.g. "0.02".
	PriceVerify, PriceScore string
	Asset                   string   // e.g. "USDC"
	Networks                []string // CAIP-2 ids, e.g. "eip155:8453"
}

// httpService is the service as the HTTP routes serve it: the payment
// gate of the REST routes and the transparency log's routes.
type httpService struct{ *tools.Service }

// HTTPHandler serves the REST, discovery and documentation routes and MCP
// at /mcp, with one error shape for every failure (SPEC §6).
type HTTPHandler struct {
	svc      *tools.Service
	opts     HTTPOptions
	mux      *http.ServeMux
	patterns []string
	log      *slog.Logger

	card    *cardDoc // the agent card
	openapi staticDoc
	docs    map[string]staticDoc // the /docs page and its assets, by name
	pages   pages                // the pages for people: /, /check, /agents/{agent_id}
	llms    *llmsText
	guard   *hostGuard // the Host and Origin check of every route
}

// Route patterns of the built-in routes.
const (
	routeVerifySchema      = "POST /verify/schema"
	routeVerifyDeliverable = "POST /verify/deliverable"
	routeScore             = "GET /score/{agent_id}"
	routeReputation        = "GET /reputation/{agent_id}"
	routeReceipt           = "GET /receipts/{verification_id}"
	routeHealth            = "GET /health"
	routeAgentCard         = "GET /.well-known/agent-card.json"
	routeAgentCardLegacy   = "GET /.well-known/agent.json"
	routeLLMs              = "GET /llms.txt"
	routeOpenAPI           = "GET /openapi.json"
	routeDocs              = "GET /docs"
	routeDocsAsset         = "GET /docs/{asset}"
	routeMCP               = "POST /mcp"
)

// NewHTTPHandler builds the HTTP mode of the service. svc must have a store:
// receipts and reputation are read from it. opts must carry the MCP
// handler of /mcp.
func NewHTTPHandler(svc *tools.Service, opts *HTTPOptions) (*HTTPHandler, error) {
	if svc == nil || svc.Store == nil || svc.Keys == nil || svc.Engine == nil {
		return nil, errors.New("the HTTP mode needs a service with an engine, keys and a store")
	}
	if opts == nil || opts.MCP == nil {
		return nil, errors.New("the HTTP mode needs the MCP handler of /mcp (HTTPOptions.MCP)")
	}
	h := &HTTPHandler{svc: svc, mux: http.NewServeMux()}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.MaxBodyBytes <= 0 {
		h.opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if h.opts.VerifyTimeout <= 0 {
		h.opts.VerifyTimeout = DefaultVerifyTimeout
	}
	h.log = h.opts.Log
	if h.log == nil {
		h.log = svc.Logger()
	}
	h.guard = newHostGuard(svc.PublicURL, h.opts.AllowedHosts)
	var err error
	if h.card, err = h.buildCard(); err != nil {
		return nil, err
	}
	if h.openapi, err = h.buildOpenAPI(); err != nil {
		return nil, err
	}
	if h.docs, err = buildDocs(); err != nil {
		return nil, err
	}
	if h.pages, err = buildPages(); err != nil {
		return nil, err
	}
	if h.llms, err = newLLMsText(); err != nil {
		return nil, err
	}
	for _, rt := range h.routes() {
		if err := h.handle(rt.Pattern, rt.Handler); err != nil {
			return nil, err
		}
	}
	return h, nil
}

func (h *HTTPHandler) routes() []HTTPRoute {
	builtin := []HTTPRoute{
		{Pattern: routeVerifySchema, Handler: http.HandlerFunc(h.verify)},
		{Pattern: routeVerifyDeliverable, Handler: http.HandlerFunc(h.verify)},
		{Pattern: routeScore, Handler: http.HandlerFunc(h.score)},
		{Pattern: routeReputation, Handler: http.HandlerFunc(h.reputation)},
		{Pattern: routeReceipt, Handler: http.HandlerFunc(h.receipt)},
		{Pattern: routeHealth, Handler: http.HandlerFunc(h.health)},
		{Pattern: routeAgentCard, Handler: h.card},
		{Pattern: routeAgentCardLegacy, Handler: h.card},
		{Pattern: routeLLMs, Handler: http.HandlerFunc(h.llmsTxt)},
		{Pattern: routeOpenAPI, Handler: h.openapi},
		{Pattern: routeDocs, Handler: http.HandlerFunc(h.docsPage)},
		{Pattern: routeDocsAsset, Handler: http.HandlerFunc(h.docsAsset)},
		{Pattern: routeCheckPage, Handler: http.HandlerFunc(h.checkPage)},
		{Pattern: routeFavicon, Handler: http.HandlerFunc(h.favicon)},
		{Pattern: routeAgentPage, Handler: http.HandlerFunc(h.agentPage)},
		{Pattern: routeMCP, Handler: h.mcpLimits(h.opts.MCP)},
	}
	return append(builtin, h.opts.Routes...)
}

// mcpLimits applies the JSON content type, the body limit and the
// verification deadline to /mcp
// before the MCP SDK sees the request (reading the body, which the SDK
// would read whole anyway), so that those failures have the one error
// shape there too.
func (h *HTTPHandler) mcpLimits(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e := checkJSONContentType(r); e != nil {
			writeError(w, e)
			return
		}
		body, e := readBody(w, r, h.opts.MaxBodyBytes)
		if e != nil {
			writeError(w, e)
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		// The MCP endpoint is stateless: the request's context is the tool
		// call's, so the verification deadline of REST applies to it too.
		ctx, cancel := context.WithTimeout(r.Context(), h.opts.VerifyTimeout)
		defer cancel()
		// The body is kept for the wording of the SDK's refusals
		// (sdkErrorGuard).
		ctx = mcpwire.WithBody(ctx, body)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// handle registers one route, turning the mux's panic on a bad or
// conflicting pattern into an error.
func (h *HTTPHandler) handle(pattern string, handler http.Handler) (err error) {
	if handler == nil {
		return fmt.Errorf("route %q has no handler", pattern)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("registering route %q: %v", pattern, p)
		}
	}()
	h.mux.Handle(pattern, handler)
	h.patterns = append(h.patterns, pattern)
	return nil
}

// Patterns lists the route patterns the handler serves, in registration
// order.
func (h *HTTPHandler) Patterns() []string { return slices.Clone(h.patterns) }

// ServeHTTP gives the request a correlation id, logs it, recovers a panic as
// a 500, refuses a foreign Host or Origin on every route (hostGuard) and
// answers unknown routes (404) and wrong methods (405 with Allow) in the
// one error shape.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	cid := newCorrelationID()
	w.Header().Set(CorrelationHeader, cid)
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p) // the handler asked to abort the connection
			}
			h.log.Error("panic serving request", "correlation_id", cid, "route", routeOf(r), "panic", fmt.Sprint(p), "stack", stack())
			if !sw.wrote {
				writeError(sw, tools.AsError(errors.New("panic")))
			}
		}
		elapsed := time.Since(start)
		h.logRequest(r, sw, cid, elapsed)
		h.svc.Metrics.ObserveRequest(routeOf(r), sw.statusCode(), elapsed)
	}()
	if h.guard.refused(sw, r) {
		return
	}
	if _, pattern := h.mux.Handler(r); pattern == "" {
		h.unrouted(sw, r)
		return
	}
	h.mux.ServeHTTP(sw, r)
}

// unrouted answers a request no route matches: the mux decides between 404
// and 405 (and its Allow header); the body is the one error shape.
func (h *HTTPHandler) unrouted(w http.ResponseWriter, r *http.Request) {
	probe := &headerCapture{header: http.Header{}}
	h.mux.ServeHTTP(probe, r)
	switch probe.status {
	case http.StatusMethodNotAllowed:
		allow := probe.header.Get("Allow")
		w.Header().Set("Allow", allow)
		e := tools.NewError(tools.CodeMethodNotAllowed, http.StatusMethodNotAllowed,
			fmt.Sprintf("This route does not accept this method; it accepts: %s. Nothing was charged.", allow))
		e.NextActions[0].Action = "use_allowed_method"
		writeError(w, e)
	default:
		if r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			// The root answers by what the client reads: a browser gets
			// the home page, a program keeps the JSON 404.
			w.Header().Add("Vary", "Accept")
			if acceptsHTML(r.Header) {
				h.homePage(w, r)
				return
			}
		}
		writeError(w, tools.NewError(tools.CodeNotFound, http.StatusNotFound,
			"No route matches this URL. Nothing was charged; the routes are listed at /openapi.json, /llms.txt and /docs."))
	}
}

// acceptsHTML reports whether the Accept header names text/html (with a
// quality above 0), as a browser's does.
func acceptsHTML(h http.Header) bool {
	for _, value := range h.Values("Accept") {
		for part := range strings.SplitSeq(value, ",") {
			mediaType, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil || mediaType != "text/html" {
				continue
			}
			if q, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(q, 64); err != nil || f <= 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}

func (h *HTTPHandler) logRequest(r *http.Request, sw *statusWriter, cid string, d time.Duration) {
	client := r.RemoteAddr
	if h.opts.ClientAddr != nil {
		client = h.opts.ClientAddr(r)
	}
	// A 500 is our fault. A 503 is a deadline or a dependency the client
	// retries: worth a warning, not an error — except load shedding (the
	// Limiter reports it, counted) and a request its client ended, which are
	// ordinary.
	level := slog.LevelInfo
	switch {
	case sw.status >= 500 && sw.status != http.StatusServiceUnavailable:
		level = slog.LevelError
	case sw.status >= 500 && !sw.shed && r.Context().Err() == nil:
		level = slog.LevelWarn
	}
	h.log.LogAttrs(r.Context(), level, "http request",
		slog.String("method", r.Method),
		slog.String("route", routeOf(r)),
		slog.Int("status", sw.statusCode()),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
		slog.Int64("bytes", sw.bytes),
		slog.String("client", client),
		slog.String("correlation_id", cid),
	)
}

// routeOf is the pattern that served r, or "unmatched".
func routeOf(r *http.Request) string {
	if r.Pattern != "" {
		return r.Pattern
	}
	return "unmatched"
}
