package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"strconv"

	"github.com/verifier-dev/verifier/tools"
)

// storeBackend names the store's backend in the store metrics' backend
// label: "postgres" with --store, else "bbolt".
func (f *serverFlags) storeBackend() string {
	if f.storeURL != "" {
		return "postgres"
	}
	return "bbolt"
}

// metricsFlag is --metrics. Left unset, GET /metrics is served when the
// server listens on a loopback address only; set, it is served (true) or
// not (false) wherever the server listens.
type metricsFlag struct {
	set, on bool
}

func (m *metricsFlag) register(fs *flag.FlagSet) {
	fs.Var(m, "metrics", "serve Prometheus metrics at GET /metrics (HTTP; default: on when listening on a loopback address, off on any other)")
}

// String implements flag.Value.
func (m *metricsFlag) String() string {
	if m == nil || !m.set {
		return "auto"
	}
	return strconv.FormatBool(m.on)
}

// Set implements flag.Value.
func (m *metricsFlag) Set(s string) error {
	on, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("--metrics is true or false, not %q", s)
	}
	m.set, m.on = true, on
	return nil
}

// IsBoolFlag lets --metrics stand alone for --metrics=true.
func (m *metricsFlag) IsBoolFlag() bool { return true }

// enabled reports whether metrics are served on a listener bound to addr:
// as --metrics says, else only on a loopback address (a wildcard address
// such as 0.0.0.0 is public).
func (m *metricsFlag) enabled(addr net.Addr) bool {
	if m.set {
		return m.on
	}
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// setup builds the metrics when they are enabled on addr (nil when not)
// and instruments svc's store, of the named backend, with them; the caller then builds the
// payment layer on that store and serves the metrics (Service.WithMetrics).
func (m *metricsFlag) setup(addr net.Addr, backend string, svc *tools.Service, log *slog.Logger) (*tools.Metrics, error) {
	if !m.enabled(addr) {
		return nil, nil
	}
	metrics, err := tools.NewMetrics(svc.Keys)
	if err != nil {
		return nil, fmt.Errorf("building metrics: %w", err)
	}
	svc.Store = metrics.InstrumentStore(svc.Store, backend)
	log.Info("serving Prometheus metrics at /metrics", "store_backend", backend)
	return metrics, nil
}
