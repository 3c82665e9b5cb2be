package main

import (
	"bytes"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestMetricsFlagEnabled: --metrics decides where it is given; left out,
// metrics are served on a loopback address only.
func TestMetricsFlagEnabled(t *testing.T) {
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	loopback6 := &net.TCPAddr{IP: net.IPv6loopback, Port: 8080}
	wildcard := &net.TCPAddr{IP: net.IPv4zero, Port: 8080}
	wildcard6 := &net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}
	public := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 10), Port: 8080}
	for _, tt := range []struct {
		args []string
		addr net.Addr
		want bool
	}{
		{nil, loopback, true},
		{nil, loopback6, true},
		{nil, wildcard, false},
		{nil, wildcard6, false},
		{nil, public, false},
		{[]string{"--metrics"}, public, true},
		{[]string{"--metrics"}, wildcard, true},
		{[]string{"--metrics=true"}, wildcard6, true},
		{[]string{"--metrics=false"}, loopback, false},
		{[]string{"--metrics=false"}, public, false},
	} {
		fs := newFlagSet("verifier", &bytes.Buffer{})
		var f metricsFlag
		f.register(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatalf("Parse(%v): %v", tt.args, err)
		}
		if got := f.enabled(tt.addr); got != tt.want {
			t.Errorf("%v on %s: enabled = %v, want %v", tt.args, tt.addr, got, tt.want)
		}
	}
	fs := newFlagSet("verifier", &bytes.Buffer{})
	var f metricsFlag
	f.register(fs)
	if err := fs.Parse([]string{"--metrics=maybe"}); err == nil {
		t.Error("--metrics=maybe was accepted")
	}
}

// TestServeHTTPMetrics: on a wildcard (public) address /metrics is a 404
// unless --metrics is given; with it, and on loopback by default, it is
// served in the Prometheus text format and counts what was served,
// including the store's operations under backend "bbolt".
func TestServeHTTPMetrics(t *testing.T) {
	body := mustRead(t, filepath.Join("testdata", "invoice-pass.json"))
	for _, tt := range []struct {
		name string
		args []string
		want int
	}{
		{"public without --metrics", []string{"--http", "0.0.0.0:0"}, http.StatusNotFound},
		{"public with --metrics", []string{"--http", "0.0.0.0:0", "--metrics"}, http.StatusOK},
		{"loopback by default", nil, http.StatusOK},
		{"loopback with --metrics=false", []string{"--metrics=false"}, http.StatusNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := startHTTP(t, tt.args...)
			// A wildcard listener is reached on loopback: no traffic leaves
			// this machine.
			srv.base = strings.Replace(srv.base, "0.0.0.0", "127.0.0.1", 1)
			if resp, answer := srv.post(t, "/verify/schema", body); resp.StatusCode != http.StatusOK {
				t.Fatalf("verify = %d %s", resp.StatusCode, answer)
			}
			resp, text := srv.get(t, "/metrics")
			if resp.StatusCode != tt.want {
				t.Fatalf("GET /metrics = %d, want %d:\n%.300s", resp.StatusCode, tt.want, text)
			}
			_, doc := srv.get(t, "/openapi.json")
			if documented := bytes.Contains(doc, []byte(`"/metrics"`)); documented != (tt.want == http.StatusOK) {
				t.Errorf("/openapi.json documents /metrics: %v, want %v", documented, tt.want == http.StatusOK)
			}
			if tt.want != http.StatusOK {
				if !bytes.Contains(text, []byte(`"code":"not_found"`)) {
					t.Errorf("GET /metrics when off is not the JSON 404: %s", text)
				}
				return
			}
			parser := expfmt.NewTextParser(model.LegacyValidation)
			fams, err := parser.TextToMetricFamilies(bytes.NewReader(text))
			if err != nil {
				t.Fatalf("parsing /metrics: %v", err)
			}
			found := func(name string, labels map[string]string) float64 {
				f := fams[name]
				if f == nil {
					return -1
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
					switch {
					case m.GetCounter() != nil:
						return m.GetCounter().GetValue()
					case m.GetHistogram() != nil:
						return float64(m.GetHistogram().GetSampleCount())
					case m.GetGauge() != nil:
						return m.GetGauge().GetValue()
					}
				}
				return -1
			}
			for _, c := range []struct {
				name   string
				labels map[string]string
				want   float64
			}{
				{"verifier_http_requests_total", map[string]string{"route": "POST /verify/schema", "status": "200"}, 1},
				{"verifier_verifications_total", map[string]string{"result": "pass"}, 1},
				{"verifier_verification_duration_seconds", nil, 1},
				{"verifier_store_operation_duration_seconds", map[string]string{"backend": "bbolt", "op": "put_verdict"}, 1},
				{"verifier_free_allowance_total", map[string]string{"outcome": "granted"}, 1},
				{"verifier_signing_key_info", nil, 1},
			} {
				if got := found(c.name, c.labels); got != c.want {
					t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
				}
			}
		})
	}
}
