package rest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/payment"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// restChildEnv, set to a data folder, makes this test binary a REST
// server on that folder (restChild); restChildNoLogEnv, set to anything,
// opens its store with store.Options.NoLog and serves no log.
// restChildProfileEnv, set to a folder, makes BenchmarkRESTLogCost's
// servers write CPU profiles there, one per configuration (the last run of
// each), for `go tool pprof -diff_base`.
const (
	restChildEnv        = "TOOLS_REST_CHILD_DIR"
	restChildNoLogEnv   = "TOOLS_REST_CHILD_NOLOG"
	restChildProfileEnv = "TOOLS_REST_CHILD_CPUPROFILE"
)

// TestMain runs this test binary as restChild's server when
// BenchmarkRESTLogCost starts it so.
func TestMain(m *testing.M) {
	if dir := os.Getenv(restChildEnv); dir != "" {
		os.Exit(restChild(dir))
	}
	os.Exit(m.Run())
}

// restChild serves REST as the server does in HTTP mode on the bbolt
// store in dir (fsync on): the payment gate with the free allowance lifted,
// the request log formatted as slog text (to io.Discard) and, unless
// restChildNoLogEnv is set, the transparency log. It writes its address
// on a line of stdout and serves until stdin closes.
func restChild(dir string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	noLog := os.Getenv(restChildNoLogEnv) != ""
	fail := func(what string, err error) int {
		log.Error(what, "err", err)
		return 1
	}
	keys, err := signing.OpenKeyStore(filepath.Join(dir, "keys"), nil)
	if err != nil {
		return fail("opening keys", err)
	}
	st, err := store.OpenBolt(filepath.Join(dir, "verifier.db"), &store.Options{NoLog: noLog})
	if err != nil {
		return fail("opening store", err)
	}
	defer st.Close()
	svc := &tools.Service{Engine: engine.New(nil), Keys: keys, Store: st, Version: "test", PublicURL: testPublicURL, Log: log}
	g, err := payment.NewGate(payment.Config{FreePerDay: 1 << 30}, st, nil, nil)
	if err != nil {
		return fail("payment gate", err)
	}
	opts := HTTPOptions{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), ClientAddr: g.ClientID}
	WithPayment(svc, &opts, g)
	if !noLog {
		key, err := signing.OpenLogKey(filepath.Join(dir, signing.LogKeyFile), LogOrigin(testPublicURL))
		if err != nil {
			return fail("log key", err)
		}
		WithLog(svc, &opts, key)
	}
	h, err := NewHTTPHandler(svc, withMCP(svc, &opts))
	if err != nil {
		return fail("handler", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail("listening", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	if path := os.Getenv(restChildProfileEnv); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			return fail("CPU profile", err)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	fmt.Println(ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = srv.Close()
	return 0
}

// restChildProc is a running restChild.
type restChildProc struct {
	pid  int
	addr string
}

// startRESTChild starts this test binary as a REST server on a new data
// folder, with the transparency log unless noLog; it stops when b ends.
// With restChildProfileEnv set, it profiles to a file of that folder named
// after b.
func startRESTChild(b *testing.B, noLog bool) restChildProc {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), restChildEnv+"="+b.TempDir(), restChildProfileEnv+"=")
	if dir := os.Getenv(restChildProfileEnv); dir != "" {
		name := strings.NewReplacer("/", "_", "=", "_").Replace(b.Name()) + ".cpu"
		cmd.Env = append(cmd.Env, restChildProfileEnv+"="+filepath.Join(dir, name))
	}
	if noLog {
		cmd.Env = append(cmd.Env, restChildNoLogEnv+"=1")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan struct{})
	b.Cleanup(func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	go func() { _ = cmd.Wait(); close(exited) }()
	if err != nil {
		b.Fatalf("the REST child did not start: %v\n%s", err, stderr.String())
	}
	return restChildProc{pid: cmd.Process.Pid, addr: strings.TrimSpace(line)}
}

// restBenchConnections is the load of BenchmarkRESTLogCost, as in
// scripts/loadtest.sh's first run.
const restBenchConnections = 32

// BenchmarkRESTLogCost measures the stored REST path's server CPU per
// request with the transparency log on and off, and with and without the
// second signature, in one run: each sub-benchmark starts this test binary
// as a server (restChild: a fresh bbolt store with fsync on, the payment
// gate and request log as in HTTP mode) and posts the 1 KB invoice over 32
// keep-alive connections at once, so that commits group as under load. The
// server is another process, so server-cpu-µs/op (its threads' CPU time
// from /proc, per request) holds none of the client's work.
//
//   - log-on/full: the server as it runs; detail "full", so the compact
//     receipt the store keeps is signed too (two signatures);
//   - log-off/full: the store opened with store.Options.NoLog and no log
//     served: no log entry computed or appended, no Log-Index read;
//   - log-on/compact: detail "compact": the answer is the stored receipt,
//     signed once.
//
// Run with -count to interleave them; scripts/logbench.sh does, and takes
// the ratios round by round (BENCHMARKS.md, "Transparency log").
func BenchmarkRESTLogCost(b *testing.B) {
	if testkit.ProcCPU(os.Getpid()) < 0 {
		b.Skip("needs Linux's /proc/PID/task/*/schedstat")
	}
	full := testkit.ReadTestdata(b, "invoice-pass.json") // detail defaults to full
	for _, c := range []struct {
		name  string
		noLog bool
		body  []byte
	}{
		{"log-on/full", false, full},
		{"log-off/full", true, full},
		{"log-on/compact", false, testkit.WithDetail(b, full, "compact")},
	} {
		b.Run(c.name, func(b *testing.B) {
			child := startRESTChild(b, c.noLog)
			// Every answer carries a Log-Index exactly when the log is on.
			good := func(resp *http.Response, answer []byte) bool {
				return bytes.Contains(answer, []byte(`"verification_id"`)) && (resp.Header.Get(LogIndexHeader) == "") == c.noLog
			}
			clients := make([]*testkit.RawPostClient, restBenchConnections)
			for i := range clients {
				clients[i] = testkit.DialRawPostClient(b, child.addr, "/verify/schema", "", c.body, good)
				clients[i].Call(b) // warm-up: connections, caches
			}
			since := testkit.ProcCPU(child.pid)
			b.ResetTimer()
			err := postConcurrently(clients, b.N)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(testkit.ProcCPU(child.pid)-since)/1e3/float64(b.N), "server-cpu-µs/op")
		})
	}
}

// postConcurrently makes n round trips in all over clients, each client
// on its own goroutine, and returns the first failure.
func postConcurrently(clients []*testkit.RawPostClient, n int) error {
	var left atomic.Int64
	left.Store(int64(n))
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if _, errs[i] = c.Post(); errs[i] != nil {
					left.Store(0)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
