package rest

import (
	"strings"

	"github.com/verifier-dev/verifier/tools"
)

// WithMetrics serves m at GET /metrics and has s count into it: requests,
// verifications, and allowance and payment outcomes. The store is
// instrumented separately (InstrumentStore), before the payment layer is
// built on it. A nil m leaves opts as they are.
func WithMetrics(svc *tools.Service, opts *HTTPOptions, m *tools.Metrics) {
	s := httpService{svc}
	if m == nil {
		return
	}
	s.Metrics = m
	opts.Routes = append(opts.Routes, HTTPRoute{Pattern: routeMetrics, Handler: m.Handler(), Operation: []byte(metricsOperation)})
}

// routeMetrics serves the Prometheus metrics (HTTP mode, when enabled).
const routeMetrics = "GET /metrics"

// metricsOperation documents GET /metrics in /openapi.json.
var metricsOperation = strings.TrimSpace(`
{"tags":["discovery"],"operationId":"getMetrics",
 "summary":"Prometheus metrics",
 "description":"The service's metrics in the Prometheus text format: requests by route and status, verification latency and results, store operation latency and errors by backend, free allowance and payment outcomes, the signing key's version, and the Go runtime's and the process's metrics. Served only where the operator enabled it (--metrics; on by default on a loopback address).",
 "security":[],
 "responses":{"200":{"description":"The metrics.","content":{"text/plain":{"schema":{"type":"string"}}}},"default":{"$ref":"#/components/responses/Error"}}}`)
