package rest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/contract"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// metricsServer is the HTTP mode with metrics at /metrics, its store
// instrumented as backend "bbolt", and the payment gate of cfg (nil: every
// call free).
func metricsServer(t *testing.T, cfg *payment.Config) (*httptest.Server, *tools.Service) {
	t.Helper()
	svc := testkit.NewTestService(t, true)
	m, err := tools.NewMetrics(svc.Keys)
	if err != nil {
		t.Fatal(err)
	}
	svc.Store = m.InstrumentStore(svc.Store, "bbolt")
	var opts HTTPOptions
	if cfg != nil {
		g, err := payment.NewGate(*cfg, svc.Store, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		WithPayment(svc, &opts, g)
	}
	WithMetrics(svc, &opts, m)
	h, err := NewHTTPHandler(svc, withMCP(svc, &opts))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	svc.PublicURL = ts.URL
	return ts, svc
}

// scrape reads /metrics with the Prometheus text parser.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics = %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// sample finds the metric of family name whose labels include labels (nil
// when there is none).
func sample(fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, lp := range m.GetLabel() {
			have[lp.GetName()] = lp.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

// counter is the value of a counter sample, or -1 when it is missing.
func counter(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	m := sample(fams, name, labels)
	if m == nil || m.GetCounter() == nil {
		return -1
	}
	return m.GetCounter().GetValue()
}

// histogramCount is a histogram sample's count and bucket count, or -1
// when it is missing.
func histogramCount(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (count float64, buckets int) {
	m := sample(fams, name, labels)
	if m == nil || m.GetHistogram() == nil {
		return -1, 0
	}
	return float64(m.GetHistogram().GetSampleCount()), len(m.GetHistogram().GetBucket())
}

// TestMetricsMoveWithRequests: /metrics parses as the Prometheus text
// format, and its counters and histograms move as requests are served.
func TestMetricsMoveWithRequests(t *testing.T) {
	ts, svc := metricsServer(t, nil)
	before := scrape(t, ts.URL)
	// Requests have no series until one is served (this scrape is counted
	// once it is); every other family is there from the start.
	for _, name := range []string{tools.MetricVerifyDuration, tools.MetricVerifications,
		tools.MetricAllowance, tools.MetricPayments, tools.MetricSigningKey, "go_goroutines", "process_cpu_seconds_total"} {
		if before[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if got := counter(before, tools.MetricVerifications, map[string]string{"result": "pass"}); got != 0 {
		t.Errorf("verifications{pass} before any = %v, want 0", got)
	}
	keyInfo := sample(before, tools.MetricSigningKey, map[string]string{"key_version": svc.Keys.Current().KeyVersion()})
	if keyInfo == nil || keyInfo.GetGauge().GetValue() != 1 {
		t.Errorf("%s{key_version=%q} = %v, want 1", tools.MetricSigningKey, svc.Keys.Current().KeyVersion(), keyInfo)
	}

	pass := do(t, "POST", ts.URL+"/verify/schema", testkit.ReadTestdata(t, "invoice-pass.json"), "")
	fail := do(t, "POST", ts.URL+"/verify/schema", testkit.ReadTestdata(t, "invoice-fail.json"), "")
	invalid := do(t, "POST", ts.URL+"/verify/schema", []byte(`{"task_id":"x"}`), "")
	if pass.status != 200 || pass.body["result"] != "pass" || fail.status != 200 || fail.body["result"] != "fail" || invalid.status != 422 {
		t.Fatalf("pass, fail, invalid = %d %v, %d %v, %d", pass.status, pass.body["result"], fail.status, fail.body["result"], invalid.status)
	}
	id, _ := pass.body["verification_id"].(string)
	if res := do(t, "GET", ts.URL+"/receipts/"+id, nil, ""); res.status != 200 {
		t.Fatalf("GET /receipts/%s = %d", id, res.status)
	}
	if res := do(t, "GET", ts.URL+"/receipts/nothing-here", nil, ""); res.status != 404 {
		t.Fatalf("GET /receipts/nothing-here = %d", res.status)
	}
	if res := do(t, "GET", ts.URL+"/no/such/route", nil, ""); res.status != 404 {
		t.Fatalf("GET /no/such/route = %d", res.status)
	}

	after := scrape(t, ts.URL)
	for _, tt := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{tools.MetricVerifications, map[string]string{"result": "pass"}, 1},
		{tools.MetricVerifications, map[string]string{"result": "fail"}, 1},
		{tools.MetricHTTPRequests, map[string]string{"route": routeVerifySchema, "status": "200"}, 2},
		{tools.MetricHTTPRequests, map[string]string{"route": routeVerifySchema, "status": "422"}, 1},
		{tools.MetricHTTPRequests, map[string]string{"route": routeReceipt, "status": "200"}, 1},
		{tools.MetricHTTPRequests, map[string]string{"route": routeReceipt, "status": "404"}, 1},
		{tools.MetricHTTPRequests, map[string]string{"route": "unmatched", "status": "404"}, 1},
		// The first scrape is counted once it is served.
		{tools.MetricHTTPRequests, map[string]string{"route": routeMetrics, "status": "200"}, 1},
		{tools.MetricStoreErrors, map[string]string{"backend": "bbolt"}, -1}, // no failure, no series
	} {
		if got := counter(after, tt.name, tt.labels); got != tt.want {
			t.Errorf("%s%v = %v, want %v", tt.name, tt.labels, got, tt.want)
		}
	}
	for _, tt := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{tools.MetricVerifyDuration, nil, 2}, // the 422 never reached the engine
		{tools.MetricHTTPDuration, map[string]string{"route": routeVerifySchema}, 3},
		{tools.MetricStoreDuration, map[string]string{"backend": "bbolt", "op": "put_verdict"}, 2},
		{tools.MetricStoreDuration, map[string]string{"backend": "bbolt", "op": "receipt"}, 2},
	} {
		count, buckets := histogramCount(after, tt.name, tt.labels)
		if count != tt.want || buckets < 10 {
			t.Errorf("%s%v: count %v with %d buckets, want %v with 10 or more", tt.name, tt.labels, count, buckets, tt.want)
		}
	}
}

// TestMetricsStoreErrors: a store operation that fails is counted as an
// error of its backend and operation.
func TestMetricsStoreErrors(t *testing.T) {
	ts, svc := metricsServer(t, nil)
	// Closing the underlying store makes every later operation fail.
	if err := svc.Store.Close(); err != nil {
		t.Fatal(err)
	}
	if res := do(t, "GET", ts.URL+"/reputation/seller-1", nil, ""); res.status != 500 {
		t.Fatalf("reputation on a closed store = %d, want 500", res.status)
	}
	fams := scrape(t, ts.URL)
	if got := counter(fams, tools.MetricStoreErrors, map[string]string{"backend": "bbolt", "op": "reputation"}); got != 1 {
		t.Errorf("store errors{reputation} = %v, want 1", got)
	}
	if got := counter(fams, tools.MetricHTTPRequests, map[string]string{"route": routeReputation, "status": "500"}); got != 1 {
		t.Errorf("requests{reputation, 500} = %v, want 1", got)
	}
}

// TestMetricsPaymentOutcomes: the free allowance's and payments' outcomes
// are counted as the gate decides them.
func TestMetricsPaymentOutcomes(t *testing.T) {
	fac := &testkit.FakeFacilitator{}
	fac.SettleOK.Store(true)
	fs := httptest.NewServer(fac)
	defer fs.Close()
	ts, _ := metricsServer(t, &payment.Config{FreePerDay: 1, PayToEVM: testkit.TestPayToEVM, FacilitatorURL: fs.URL, Network: payment.Testnet})
	invoice := testkit.ReadTestdata(t, "invoice-pass.json")

	if free := do(t, "POST", ts.URL+"/verify/schema", invoice, ""); free.status != 200 {
		t.Fatalf("free call = %d %v", free.status, free.body)
	}
	unpaid := do(t, "POST", ts.URL+"/verify/schema", invoice, "")
	if unpaid.status != 402 {
		t.Fatalf("unpaid call past the allowance = %d %v", unpaid.status, unpaid.body)
	}
	if probe := do(t, "POST", ts.URL+"/verify/schema", nil, ""); probe.status != 402 {
		t.Fatalf("probe = %d", probe.status)
	}
	sig := payFor(t, unpaid)
	if paid := do(t, "POST", ts.URL+"/verify/schema", invoice, sig); paid.status != 200 {
		t.Fatalf("paid = %d %v", paid.status, paid.body)
	}
	if again := do(t, "POST", ts.URL+"/verify/schema", invoice, sig); again.status != 200 {
		t.Fatalf("same payment, same request = %d", again.status)
	}
	if replay := do(t, "POST", ts.URL+"/verify/deliverable", invoice, sig); replay.status != 402 || replay.body["code"] != payment.CodePaymentReplayed {
		t.Fatalf("replay = %d %v", replay.status, replay.body)
	}
	fac.SettleOK.Store(false)
	if failed := do(t, "POST", ts.URL+"/verify/schema", invoice, payFor(t, unpaid)); failed.status != 402 {
		t.Fatalf("failed settlement = %d", failed.status)
	}
	bad, _ := json.Marshal("not a payment")
	if invalid := do(t, "POST", ts.URL+"/verify/schema", invoice, string(bad)); invalid.status != 402 || invalid.body["code"] != payment.CodePaymentInvalid {
		t.Fatalf("unreadable payment = %d %v", invalid.status, invalid.body)
	}

	fams := scrape(t, ts.URL)
	for _, tt := range []struct {
		outcome string
		want    float64
	}{
		{tools.PaymentRequired, 2}, // the unpaid call and the probe
		{tools.PaymentAccepted, 2},
		{tools.PaymentSettled, 1},
		{tools.PaymentKeptAnswer, 1},
		{tools.PaymentReplayed, 1},
		{tools.PaymentSettlementFailed, 1},
		{tools.PaymentInvalid, 1},
		{tools.PaymentSettlementUnknown, 0},
		{tools.PaymentFacilitatorDown, 0},
	} {
		if got := counter(fams, tools.MetricPayments, map[string]string{"outcome": tt.outcome}); got != tt.want {
			t.Errorf("payments{%s} = %v, want %v", tt.outcome, got, tt.want)
		}
	}
	// The probe is not a refusal of a free call.
	for outcome, want := range map[string]float64{tools.AllowanceGranted: 1, tools.AllowanceExhausted: 1} {
		if got := counter(fams, tools.MetricAllowance, map[string]string{"outcome": outcome}); got != want {
			t.Errorf("allowance{%s} = %v, want %v", outcome, got, want)
		}
	}
	// The free call, the paid one and the failed settlement's were verified
	// (the kept answer was not verified again).
	if got := counter(fams, tools.MetricVerifications, map[string]string{"result": "pass"}); got != 3 {
		t.Errorf("verifications{pass} = %v, want 3", got)
	}
}

// TestMetricsAllowancePaymentOff: with payment off, a call past the
// allowance is a 429, counted as the allowance exhausted.
func TestMetricsAllowancePaymentOff(t *testing.T) {
	ts, _ := metricsServer(t, &payment.Config{FreePerDay: 1})
	invoice := testkit.ReadTestdata(t, "invoice-pass.json")
	for i, want := range []int{200, 429, 429} {
		if res := do(t, "POST", ts.URL+"/verify/schema", invoice, ""); res.status != want {
			t.Fatalf("call %d = %d, want %d", i, res.status, want)
		}
	}
	fams := scrape(t, ts.URL)
	for outcome, want := range map[string]float64{tools.AllowanceGranted: 1, tools.AllowanceExhausted: 2} {
		if got := counter(fams, tools.MetricAllowance, map[string]string{"outcome": outcome}); got != want {
			t.Errorf("allowance{%s} = %v, want %v", outcome, got, want)
		}
	}
	if got := counter(fams, tools.MetricHTTPRequests, map[string]string{"route": routeVerifySchema, "status": "429"}); got != 2 {
		t.Errorf("requests{verify, 429} = %v, want 2", got)
	}
}

// TestMetricsMCP: tool calls over /mcp are counted as requests of its
// route, their verifications and allowance outcomes as over REST.
func TestMetricsMCP(t *testing.T) {
	ts, _ := metricsServer(t, &payment.Config{FreePerDay: 1})
	request := json.RawMessage(testkit.ReadTestdata(t, "invoice-pass.json"))
	if r := callTool(t, ts.URL+"/mcp", contract.VerifySchema, request); r.IsError {
		t.Fatalf("first call (free) isError: %+v", r.Content)
	}
	if r := callTool(t, ts.URL+"/mcp", contract.VerifySchema, request); !r.IsError || resultCode(t, r) != tools.CodeRateLimited {
		t.Fatalf("second call: isError %v code %q, want rate_limited", r.IsError, resultCode(t, r))
	}
	fams := scrape(t, ts.URL)
	for _, tt := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{tools.MetricHTTPRequests, map[string]string{"route": routeMCP, "status": "200"}, 2},
		{tools.MetricVerifications, map[string]string{"result": "pass"}, 1},
		{tools.MetricAllowance, map[string]string{"outcome": tools.AllowanceGranted}, 1},
		{tools.MetricAllowance, map[string]string{"outcome": tools.AllowanceExhausted}, 1},
	} {
		if got := counter(fams, tt.name, tt.labels); got != tt.want {
			t.Errorf("%s%v = %v, want %v", tt.name, tt.labels, got, tt.want)
		}
	}
	if count, _ := histogramCount(fams, tools.MetricVerifyDuration, nil); count != 1 {
		t.Errorf("verification duration count = %v, want 1", count)
	}
}

// TestMetricsMCPPayment: a paid verify_schema call over /mcp is counted as
// accepted and settled, its refusal as required and the allowance as
// exhausted.
func TestMetricsMCPPayment(t *testing.T) {
	fac := &testkit.FakeFacilitator{}
	fac.SettleOK.Store(true)
	fs := httptest.NewServer(fac)
	defer fs.Close()
	ts, _ := metricsServer(t, &payment.Config{FreePerDay: 1, PayToEVM: testkit.TestPayToEVM, FacilitatorURL: fs.URL, Network: payment.Testnet})
	request := json.RawMessage(testkit.ReadTestdata(t, "invoice-pass.json"))
	call := func(meta map[string]any) mcp.CallToolResult {
		t.Helper()
		r, err := testkit.MCPToolCall(t, t.Context(), ts.URL+"/mcp", contract.VerifySchema, request, meta, "")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := call(nil); r.IsError {
		t.Fatalf("free call isError: %+v", r.Content)
	}
	unpaid := call(nil)
	var pr payment.PaymentRequired
	testkit.DecodeStructured(t, unpaid, &pr)
	if !unpaid.IsError || len(pr.Accepts) == 0 {
		t.Fatalf("unpaid call = %+v", unpaid)
	}
	if paid := call(map[string]any{payment.MetaPayment: testkit.MCPPaymentFor(t, pr)}); paid.IsError || paid.Meta[payment.MetaPaymentResponse] == nil {
		t.Fatalf("paid call = %+v", paid)
	}
	fams := scrape(t, ts.URL)
	for _, tt := range []struct {
		name, outcome string
		want          float64
	}{
		{tools.MetricAllowance, tools.AllowanceGranted, 1},
		{tools.MetricAllowance, tools.AllowanceExhausted, 1},
		{tools.MetricPayments, tools.PaymentRequired, 1},
		{tools.MetricPayments, tools.PaymentAccepted, 1},
		{tools.MetricPayments, tools.PaymentSettled, 1},
	} {
		if got := counter(fams, tt.name, map[string]string{"outcome": tt.outcome}); got != tt.want {
			t.Errorf("%s{%s} = %v, want %v", tt.name, tt.outcome, got, tt.want)
		}
	}
	if got := counter(fams, tools.MetricVerifications, map[string]string{"result": "pass"}); got != 2 {
		t.Errorf("verifications{pass} = %v, want 2", got)
	}
}
