package tools

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
)

// Names of the service's own metrics; the Go runtime's (go_*) and the
// process's (process_*) are served beside them.
const (
	MetricHTTPRequests   = "verifier_http_requests_total"
	MetricHTTPDuration   = "verifier_http_request_duration_seconds"
	MetricVerifyDuration = "verifier_verification_duration_seconds"
	MetricVerifications  = "verifier_verifications_total"
	MetricStoreDuration  = "verifier_store_operation_duration_seconds"
	MetricStoreErrors    = "verifier_store_operation_errors_total"
	MetricAllowance      = "verifier_free_allowance_total"
	MetricPayments       = "verifier_payments_total"
	MetricSigningKey     = "verifier_signing_key_info"
)

// Outcomes of the free allowance (label outcome of MetricAllowance).
const (
	AllowanceGranted   = "granted"   // a free call was held for a verification
	AllowanceExhausted = "exhausted" // refused free: the client's calls for the day are used up
)

// Outcomes of payments (label outcome of MetricPayments).
const (
	PaymentRequired          = "required"                // 402: asked to pay (payment_required)
	PaymentInvalid           = "invalid"                 // 402: payment_invalid
	PaymentReplayed          = "replayed"                // 402: payment_replayed
	PaymentAccepted          = "accepted"                // a payment was verified; the work goes on
	PaymentKeptAnswer        = "kept_answer"             // a retry with the same payment got its kept answer
	PaymentSettled           = "settled"                 // the facilitator settled the payment
	PaymentSettlementFailed  = "settlement_failed"       // 402: the settlement was refused; answer withheld
	PaymentSettlementUnknown = "settlement_unknown"      // 503: no answer from the facilitator at settlement
	PaymentFacilitatorDown   = "facilitator_unavailable" // 503: the facilitator could not be asked before the work
)

// Histogram buckets, in seconds: a verification takes from well under a
// millisecond to its deadline; a store operation from microseconds (a
// read) to a commit's fsync.
var (
	durationBuckets      = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	storeDurationBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
)

// Metrics are the Prometheus metrics of HTTP mode, on a registry of their
// own (never the process-wide default). A nil *Metrics observes nothing.
type Metrics struct {
	reg           *prometheus.Registry
	requests      *prometheus.CounterVec
	requestTime   *prometheus.HistogramVec
	verifyTime    prometheus.Histogram
	verifications *prometheus.CounterVec
	storeTime     *prometheus.HistogramVec
	storeErrors   *prometheus.CounterVec
	allowance     *prometheus.CounterVec
	payments      *prometheus.CounterVec
}

// NewMetrics registers the service's metrics, the Go runtime's and the
// process's on a new registry. keys is read at every scrape for the
// current key version.
func NewMetrics(keys *signing.KeyStore) (*Metrics, error) {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricHTTPRequests, Help: "HTTP requests served, by route pattern (\"unmatched\" for none) and status code."}, []string{"route", "status"}),
		requestTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: MetricHTTPDuration, Help: "Time to serve an HTTP request, by route pattern.", Buckets: durationBuckets}, []string{"route"}),
		verifyTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    MetricVerifyDuration,
			Help:    "Time to verify a request and sign its answer (REST and MCP), from a slot being granted to the signed answer; storing the verdict is not included.",
			Buckets: durationBuckets}),
		verifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricVerifications, Help: "Verifications done and signed (REST and MCP), by result (pass or fail)."}, []string{"result"}),
		storeTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: MetricStoreDuration, Help: "Time of a store operation, by backend and operation.",
			Buckets: storeDurationBuckets}, []string{"backend", "op"}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricStoreErrors, Help: "Store operations that failed (a fault of the store, not a missing record), by backend and operation."},
			[]string{"backend", "op"}),
		allowance: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricAllowance, Help: "Free allowance decisions for verifications: granted, or exhausted (refused free)."}, []string{"outcome"}),
		payments: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricPayments, Help: "x402 payment outcomes: required, invalid, replayed, accepted, kept_answer, settled, settlement_failed, settlement_unknown, facilitator_unavailable."},
			[]string{"outcome"}),
	}
	// Every label value known in advance is present from the start, at 0.
	for _, r := range []string{store.ResultPass, store.ResultFail} {
		m.verifications.WithLabelValues(r)
	}
	for _, o := range []string{AllowanceGranted, AllowanceExhausted} {
		m.allowance.WithLabelValues(o)
	}
	for _, o := range []string{PaymentRequired, PaymentInvalid, PaymentReplayed, PaymentAccepted, PaymentKeptAnswer,
		PaymentSettled, PaymentSettlementFailed, PaymentSettlementUnknown, PaymentFacilitatorDown} {
		m.payments.WithLabelValues(o)
	}
	for _, c := range []prometheus.Collector{
		m.requests, m.requestTime, m.verifyTime, m.verifications, m.storeTime, m.storeErrors, m.allowance, m.payments,
		newKeyVersionCollector(keys),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := m.reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// InstrumentStore wraps st, a store of the named backend ("bbolt",
// "postgres"), so that its operations' latency and failures are counted.
func (m *Metrics) InstrumentStore(st store.Store, backend string) store.Store {
	if m == nil {
		return st
	}
	return store.Instrumented(st, backend, m)
}

// ObserveStoreOp implements store.OpObserver.
func (m *Metrics) ObserveStoreOp(backend, op string, elapsed time.Duration, failed bool) {
	m.storeTime.WithLabelValues(backend, op).Observe(elapsed.Seconds())
	if failed {
		m.storeErrors.WithLabelValues(backend, op).Inc()
	}
}

// ObserveRequest counts one served HTTP request.
func (m *Metrics) ObserveRequest(route string, status int, elapsed time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.requestTime.WithLabelValues(route).Observe(elapsed.Seconds())
}

// observeVerification counts one signed verification answer.
func (m *Metrics) observeVerification(result string, elapsed time.Duration) {
	if m == nil {
		return
	}
	m.verifyTime.Observe(elapsed.Seconds())
	m.verifications.WithLabelValues(result).Inc()
}

// observeAdmit counts what the payment gate decided for a call. freeAsked
// says the call could have been a free call of the allowance (a
// verification, not a discovery probe, not refused for its size alone).
func (m *Metrics) observeAdmit(freeAsked bool, adm *payment.Admission, err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.observeRefusal(freeAsked, err)
		return
	}
	switch _, _, kept := adm.Kept(); {
	case kept:
		m.payments.WithLabelValues(PaymentKeptAnswer).Inc()
	case adm.Paid():
		m.payments.WithLabelValues(PaymentAccepted).Inc()
	case freeAsked:
		m.allowance.WithLabelValues(AllowanceGranted).Inc()
	}
}

// observeSettle counts the settlement of a paid call (a free call's
// commit is a store operation, counted there).
func (m *Metrics) observeSettle(adm *payment.Admission, err error) {
	if m == nil || !adm.Paid() {
		return
	}
	if err == nil {
		m.payments.WithLabelValues(PaymentSettled).Inc()
		return
	}
	m.observeRefusal(false, err)
}

// observeRefusal counts a refusal of the payment layer by its code. Other
// errors (a fault of the store, a request that ended) are counted by the
// store's metrics and the request's status.
func (m *Metrics) observeRefusal(freeAsked bool, err error) {
	var refused *payment.Error
	if !errors.As(err, &refused) {
		return
	}
	exhausted := refused.FreeTrial != nil && refused.FreeTrial.Code == payment.CodeFreeTrialExhausted
	switch refused.Code {
	case payment.CodeRateLimited:
		exhausted = true
	case payment.CodePaymentRequired:
		m.payments.WithLabelValues(PaymentRequired).Inc()
	case payment.CodePaymentInvalid:
		m.payments.WithLabelValues(PaymentInvalid).Inc()
	case payment.CodePaymentReplayed:
		m.payments.WithLabelValues(PaymentReplayed).Inc()
	case payment.CodeSettlementFailed:
		m.payments.WithLabelValues(PaymentSettlementFailed).Inc()
	case payment.CodeFacilitatorUnavailable:
		if refused.Charged == payment.ChargeUnknown {
			m.payments.WithLabelValues(PaymentSettlementUnknown).Inc()
		} else {
			m.payments.WithLabelValues(PaymentFacilitatorDown).Inc()
		}
	}
	if exhausted && freeAsked {
		m.allowance.WithLabelValues(AllowanceExhausted).Inc()
	}
}

// keyVersionCollector reports the current signing key's version as the
// label of a gauge that is always 1, read at each scrape.
type keyVersionCollector struct {
	keys *signing.KeyStore
	desc *prometheus.Desc
}

func newKeyVersionCollector(keys *signing.KeyStore) *keyVersionCollector {
	return &keyVersionCollector{keys: keys, desc: prometheus.NewDesc(MetricSigningKey,
		"The signing key in use: its key_version label; the value is always 1.", []string{"key_version"}, nil)}
}

// Describe implements prometheus.Collector.
func (c *keyVersionCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *keyVersionCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 1, c.keys.Current().KeyVersion())
}
