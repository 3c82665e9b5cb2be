package tools

// WithMetrics serves m at GET /metrics and has s count into it: requests,
// verifications, and allowance and payment outcomes. The store is
// instrumented separately (InstrumentStore), before the payment layer is
// built on it. A nil m leaves opts as they are.
func (s *Service) WithMetrics(opts *HTTPOptions, m *Metrics) {
	if m == nil {
		return
	}
	s.Metrics = m
	opts.Routes = append(opts.Routes, HTTPRoute{Pattern: routeMetrics, Handler: m.Handler(), Operation: []byte(metricsOperation)})
}
