package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/mcpserver"
	"github.com/verifier-dev/verifier/tools/rest"
)

// Server defaults, each a flag.
const (
	defaultReadHeaderTimeout = 5 * time.Second
	defaultReadTimeout       = 30 * time.Second
	defaultWriteTimeout      = 60 * time.Second
	defaultIdleTimeout       = 120 * time.Second
	defaultShutdownTimeout   = 30 * time.Second
	defaultMaxHeaderBytes    = 64 << 10
	defaultStoreProbe        = 10 * time.Second
	storeFile                = "verifier.db"
)

// serverFlags are the flags of the server modes, read once here.
type serverFlags struct {
	httpAddr, dataDir, publicURL string
	storeURL                     string // "" for the bbolt file in dataDir
	logKeySeed                   string // VERIFIER_LOG_KEY: "" for the log key file in dataDir
	maxBody                      int64
	verifyTimeout                time.Duration
	readHeaderTimeout            time.Duration
	readTimeout, writeTimeout    time.Duration
	idleTimeout, shutdownTimeout time.Duration
	maxHeaderBytes               int
	maxConcurrent                int
	maxQueued                    int
	queueWait                    time.Duration
	storeProbe                   time.Duration
	maxMemory                    int64
	engine                       engineFlags
	payment                      paymentFlags
	metrics                      metricsFlag
	allowedHosts                 []string // --allowed-host, repeatable
}

func (f *serverFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&f.httpAddr, "http", "", "serve MCP at /mcp and the REST routes on this address (e.g. 127.0.0.1:8080); without it, MCP over stdio")
	fs.StringVar(&f.dataDir, "data-dir", defaultDataDir(getenv), "folder holding keys/ and "+storeFile)
	f.logKeySeed = getenv("VERIFIER_LOG_KEY") // a secret: an environment variable, never a flag
	fs.StringVar(&f.storeURL, "store", getenv("VERIFIER_STORE"), "where verdicts, allowances and payments are kept: empty for the bbolt file "+storeFile+" in --data-dir, or a postgres://… URL for one PostgreSQL database shared by replicas (env VERIFIER_STORE; keys stay in --data-dir or VERIFIER_SIGNING_KEY)")
	fs.StringVar(&f.publicURL, "public-url", "", "base URL that answers and documents advertise (default: derived from the listen address)")
	fs.Func("allowed-host", "`NAME` (a host name or IP address, no scheme or port) a loopback listener also answers for in the Host header, and whose pages may POST and call /mcp (Origin), beside localhost, loopback addresses and --public-url's host: for a reverse proxy or LAN name in front of 127.0.0.1 (repeatable; HTTP)", func(v string) error {
		if !validHostName(v) {
			return errors.New("want a host name or IP address without scheme, port or path, e.g. verifier.lan")
		}
		f.allowedHosts = append(f.allowedHosts, v)
		return nil
	})
	fs.Int64Var(&f.maxBody, "max-body", rest.DefaultMaxBodyBytes, "largest request body in bytes (HTTP); larger is a 413")
	fs.DurationVar(&f.verifyTimeout, "verify-timeout", rest.DefaultVerifyTimeout, "deadline of one verification, from its decoding: the free allowance's and the payment's store calls, the work and the verdict's write end by it; it also bounds a page's or log read's call to the process owning a shared bbolt file (HTTP)")
	fs.DurationVar(&f.readHeaderTimeout, "read-header-timeout", defaultReadHeaderTimeout, "time to read a request's headers (HTTP)")
	fs.DurationVar(&f.readTimeout, "read-timeout", defaultReadTimeout, "time to read a whole request (HTTP)")
	fs.DurationVar(&f.writeTimeout, "write-timeout", defaultWriteTimeout, "time to answer a request once read; must exceed --verify-timeout (HTTP)")
	fs.DurationVar(&f.idleTimeout, "idle-timeout", defaultIdleTimeout, "how long an idle keep-alive connection stays open (HTTP)")
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", defaultShutdownTimeout, "on SIGINT/SIGTERM, how long in-flight requests may take to finish (HTTP)")
	fs.IntVar(&f.maxHeaderBytes, "max-header-bytes", defaultMaxHeaderBytes, "largest request header block in bytes (HTTP)")
	fs.IntVar(&f.maxConcurrent, "max-concurrent", tools.DefaultMaxConcurrent(), "most verifications running at once; more wait in a bounded waiting room, then get 503 unavailable with Retry-After (0: no bound)")
	fs.IntVar(&f.maxQueued, "max-queued", -1, "verifications that may wait for a slot, each at most --queue-wait (-1: 8 per --max-concurrent slot; 0: no waiting)")
	fs.DurationVar(&f.queueWait, "queue-wait", tools.DefaultQueueWait, "longest a verification waits for a slot before it gets 503 unavailable")
	fs.DurationVar(&f.storeProbe, "store-probe-interval", defaultStoreProbe, "how often a small write to the store checks that it still takes writes; GET /health answers 503 while the last write failed (HTTP; 0: no probe, only verifications' writes count)")
	fs.Int64Var(&f.maxMemory, "max-memory", tools.DefaultMaxMemory, "bytes of heap the verifications running at once may be expected to need, 64 per byte of each request; more wait as for a slot. It also sets the Go memory limit to this plus 128 MiB, so the garbage collector keeps the process's memory near it (GOMEMLIMIT, when set, wins) (0: neither)")
	f.engine.register(fs)
	f.payment.register(fs)
	f.metrics.register(fs)
	f.payment.getenv = getenv
}

func (f *serverFlags) check() error {
	switch {
	case f.maxBody <= 0:
		return errors.New("--max-body must be positive")
	case f.verifyTimeout <= 0 || f.readHeaderTimeout <= 0 || f.readTimeout <= 0 || f.idleTimeout <= 0 || f.shutdownTimeout <= 0:
		return errors.New("every timeout must be positive")
	case f.writeTimeout <= f.verifyTimeout:
		return fmt.Errorf("--write-timeout (%s) must exceed --verify-timeout (%s)", f.writeTimeout, f.verifyTimeout)
	case f.maxHeaderBytes <= 0:
		return errors.New("--max-header-bytes must be positive")
	case f.maxConcurrent < 0:
		return errors.New("--max-concurrent must be 0 (no bound) or more")
	case f.queueWait < 0:
		return errors.New("--queue-wait must not be negative")
	case f.storeProbe < 0:
		return errors.New("--store-probe-interval must not be negative")
	case f.maxMemory < 0:
		return errors.New("--max-memory must be 0 (not accounted) or more")
	case f.storeURL != "" && !store.IsPostgresURL(f.storeURL):
		// Not echoed: the URL may carry a password.
		return errors.New("--store (or VERIFIER_STORE) must be a postgres:// or postgresql:// URL, or empty for the bbolt file in --data-dir")
	}
	if f.publicURL != "" {
		u, err := url.Parse(f.publicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("--public-url %q is not an absolute http(s) URL without query or fragment", f.publicURL)
		}
		f.publicURL = strings.TrimRight(f.publicURL, "/")
	}
	return nil
}

// serverFlagSet is the program's own flag set: the server's flags and
// --version.
func serverFlagSet(stderr io.Writer, getenv func(string) string, f *serverFlags, showVersion *bool) *flag.FlagSet {
	fs := newFlagSet("verifier", stderr)
	f.register(fs, getenv)
	fs.BoolVar(showVersion, "version", false, "print the version, commit, Go release and platform, and exit")
	return fs
}

// memoryLimitBase is what the Go memory limit allows beside --max-memory:
// the process's own needs (the schema cache's 32 MiB, buffers, the
// store's pages), which the admission does not count.
const memoryLimitBase = 128 << 20

// memoryLimit is the Go runtime's memory limit for --max-memory maxMemory:
// the admission counts the heap the running verifications are expected to
// need, but the garbage collector, left to GOGC alone, lets the heap grow
// to about twice what is live before collecting, so the process's memory
// ran near twice the budget. A limit of maxMemory plus memoryLimitBase makes
// it collect sooner instead. ok is false when maxMemory is 0 (no budget) or
// the operator set GOMEMLIMIT, which the runtime already applies.
func memoryLimit(maxMemory int64, getenv func(string) string) (limit int64, ok bool) {
	if maxMemory <= 0 || getenv("GOMEMLIMIT") != "" {
		return 0, false
	}
	if maxMemory > math.MaxInt64-memoryLimitBase {
		return math.MaxInt64, true
	}
	return maxMemory + memoryLimitBase, true
}

// runServer serves MCP over stdio, or HTTP with --http.
func runServer(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	var f serverFlags
	var showVersion bool
	fs := serverFlagSet(stderr, getenv, &f, &showVersion)
	if err := parseFlags(fs, args, rootHelp(), stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "verifier: unknown command %q\n", fs.Arg(0))
		return usageError(stderr, rootHelp())
	}
	if showVersion {
		return thisBuild().write(stdout)
	}
	if err := f.check(); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	v, err := f.engine.verifier()
	if err != nil {
		return err
	}
	if err := prepareDataDir(f.dataDir); err != nil {
		return err
	}
	keys, err := openKeys(f.dataDir, getenv)
	if err != nil {
		return err
	}
	svc := service(v, keys, f.publicURL)
	svc.Log = log
	queued := f.maxQueued
	if queued < 0 {
		queued = tools.DefaultMaxQueued(f.maxConcurrent)
	}
	svc.Limiter = tools.NewQueuedLimiter(f.maxConcurrent, queued, f.queueWait, log).WithMemory(f.maxMemory)
	if limit, ok := memoryLimit(f.maxMemory, getenv); ok {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(limit))
		log.Info("Go memory limit set from --max-memory", "bytes", limit)
	}
	var probe time.Duration // only GET /health, in HTTP mode, reads the probe's outcome
	if f.httpAddr != "" {
		probe = f.storeProbe
	}
	st, err := openStore(ctx, &f, probe, log)
	if f.httpAddr == "" {
		// Over stdio the store is had as long as any process can have it
		// (store.Shared); when none can — a foreign lock that never clears,
		// a read-only or damaged file — the server still verifies, and
		// every answer that needs the store says why it has none and what
		// to do. Unsafe permissions still refuse to start.
		switch {
		case errors.Is(err, store.ErrInsecurePermissions):
			return err
		case err != nil:
			svc.StoreErr = storeUnavailable(err, f.dataDir)
			log.Warn("serving without reputation or trust records", "err", svc.StoreErr)
		}
		if st != nil {
			svc.Store = st
			defer closeStore(st, log)
			if err := recordSigningKeys(ctx, st, keys); errors.Is(err, store.ErrKeyConflict) {
				return err
			} else if err != nil {
				log.Warn("this process's signing keys are not recorded in the store", "err", err)
			}
			if err := checkRecentRecords(ctx, st); err != nil {
				log.Warn("the store's last log records do not check out: run `verifier store check` to list what is wrong", "err", err)
			}
		}
		log.Info("serving MCP over stdio", "version", svc.Version, "data_dir", f.dataDir, "key_version", keys.Current().KeyVersion())
		if file, ok := stdin.(*os.File); ok {
			in, restore := mcpserver.PollableInput(file)
			defer restore()
			stdin = in
		}
		return mcpserver.ServeStdio(ctx, svc, stdin, stdout)
	}
	if err != nil {
		return err
	}
	svc.Store = st
	defer closeStore(st, log)
	if err := recordSigningKeys(ctx, st, keys); err != nil {
		return err
	}
	if err := checkRecentRecords(ctx, st); err != nil {
		return fmt.Errorf("checking the store's last log records: %w. Fix: run `verifier store check` (with this --data-dir or --store) to list what is wrong, "+
			"then restore the store from a backup", err)
	}
	return serveHTTP(ctx, &f, svc, log)
}

// serveLog serves the store's transparency log, its checkpoints signed by
// the log key: envSeed (VERIFIER_LOG_KEY) when set, else the key file in
// dataDir (made on first start). Replicas on one PostgreSQL database serve
// one log: give them the same VERIFIER_LOG_KEY, or the same key file.
func serveLog(svc *tools.Service, opts *rest.HTTPOptions, dataDir, envSeed string, log *slog.Logger) error {
	if _, ok := store.LogOf(svc.Store); !ok {
		log.Info("this store keeps no transparency log: /log/ is not served")
		return nil
	}
	base := svc.PublicURL
	if base == "" {
		base = tools.DefaultPublicURL
	}
	var key *signing.LogKey
	var err error
	if envSeed != "" {
		key, err = signing.LogKeyFromSeed(envSeed, rest.LogOrigin(base))
		if err != nil {
			return fmt.Errorf("VERIFIER_LOG_KEY: %w", err)
		}
	} else if key, err = signing.OpenLogKey(filepath.Join(dataDir, signing.LogKeyFile), rest.LogOrigin(base)); err != nil {
		return err
	}
	if key, err = bindLogKey(context.Background(), svc.Store, key, envSeed != "", dataDir, log); err != nil {
		return err
	}
	rest.WithLog(svc, opts, key)
	return nil
}

// prepareDataDir creates the data folder (mode 0700) when it is missing,
// and refuses one — or a store file in it — that group or others may write,
// before anything (a first key) is created in it.
func prepareDataDir(dataDir string) error {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("creating data dir: %w", err)
	}
	if err := store.CheckPermissions(filepath.Join(dataDir, storeFile)); err != nil {
		return fmt.Errorf("opening store: %w", err)
	}
	return nil
}

// openStore opens the PostgreSQL store of --store, or else the bbolt file
// in --data-dir (prepared by prepareDataDir), with a write probe every
// probe (0: none) while this process owns the file. Any number of verifier
// processes share the bbolt file (store.Shared): the first owns it and
// serves it to the others on a socket in the data dir.
func openStore(ctx context.Context, f *serverFlags, probe time.Duration, log *slog.Logger) (store.Store, error) {
	if f.storeURL != "" {
		st, err := store.OpenPostgres(ctx, f.storeURL, &store.PostgresOptions{ProbeInterval: probe})
		if err != nil {
			return nil, err // names the database, never the password
		}
		return st, nil
	}
	// A call to the owning process is bounded by its request's deadline,
	// and one without (a page, a log read) by --verify-timeout: a stopped
	// owner is a 503, not a wait without end.
	st, err := store.OpenShared(filepath.Join(f.dataDir, storeFile), &store.SharedOptions{
		Bolt: store.Options{ProbeInterval: probe}, Log: log, CallTimeout: f.verifyTimeout,
	})
	if err != nil {
		return nil, err // it names the file
	}
	switch owner, serveErr := st.Owner(); {
	case owner && serveErr != nil:
		log.Warn("this process owns the store but cannot serve it to other verifier processes on this data dir: they will run without it until it exits", "err", serveErr)
	case owner:
		log.Info("store opened: this process owns it and serves it to other verifier processes", "socket", filepath.Join(f.dataDir, store.SocketName))
	default:
		log.Info("store opened: another verifier process owns it and serves it", "socket", filepath.Join(f.dataDir, store.SocketName))
	}
	return st, nil
}

// storeUnavailable is why a server runs without the store in dataDir: the
// error that kept it from opening, and its fix.
func storeUnavailable(err error, dataDir string) error {
	file := filepath.Join(dataDir, storeFile)
	fix := "make " + dataDir + " and " + file + " writable by this user, or start this verifier with --data-dir on a writable folder."
	switch {
	case errors.Is(err, store.ErrLocked):
		fix = "stop the program holding " + file + ", or start this verifier with --data-dir on another folder."
	case errors.Is(err, store.ErrSchemaVersion):
		fix = "run the newer verifier that wrote " + file + ", or start this one with --data-dir on another folder."
	case errors.Is(err, store.ErrCorrupt):
		fix = "move " + file + " aside (keep it to inspect), or start this verifier with --data-dir on another folder."
	}
	return fmt.Errorf("%w. Fix: %s", err, fix)
}

func closeStore(st store.Store, log *slog.Logger) {
	if err := st.Close(); err != nil {
		log.Error("closing store", "err", err)
		return
	}
	log.Info("store closed")
}

// serveHTTP serves until ctx is done, then lets in-flight requests finish
// (up to --shutdown-timeout) before returning; the caller closes the store.
func serveHTTP(ctx context.Context, f *serverFlags, svc *tools.Service, log *slog.Logger) error {
	ln, err := net.Listen("tcp", f.httpAddr)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	if svc.PublicURL == "" {
		svc.PublicURL = derivePublicURL(ln.Addr())
		if tcp, ok := ln.Addr().(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
			log.Warn("listening on every interface without --public-url: answers advertise "+svc.PublicURL+"; set --public-url to the address clients use", "addr", ln.Addr().String())
		}
	}
	metrics, err := f.metrics.setup(ln.Addr(), f.storeBackend(), svc, log)
	if err != nil {
		ln.Close()
		return err
	}
	gate, err := f.payment.gate(svc.Store, f.maxBody, log)
	if err == nil {
		err = f.payment.checkFacilitator(ctx, gate, log)
	}
	if err != nil {
		ln.Close()
		return err
	}
	// MCP over HTTP is composed here: rest mounts the MCP adapter's
	// handler at /mcp without importing it.
	opts := &rest.HTTPOptions{MaxBodyBytes: f.maxBody, VerifyTimeout: f.verifyTimeout, Log: log, ClientAddr: gate.ClientID,
		AllowedHosts: f.allowedHosts, MCP: mcpserver.NewMCPHandler(svc)}
	rest.WithPayment(svc, opts, gate)
	rest.WithMetrics(svc, opts, metrics)
	if err := serveLog(svc, opts, f.dataDir, f.logKeySeed, log); err != nil {
		ln.Close()
		return err
	}
	h, err := rest.NewHTTPHandler(svc, opts)
	if err != nil {
		ln.Close()
		return fmt.Errorf("building HTTP handler: %w", err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: f.readHeaderTimeout,
		ReadTimeout:       f.readTimeout,
		WriteTimeout:      f.writeTimeout,
		IdleTimeout:       f.idleTimeout,
		MaxHeaderBytes:    f.maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	// The URLs a person opens first, at the address actually bound (a port
	// of 0 is the chosen one): the MCP endpoint, the docs, llms.txt.
	local := derivePublicURL(ln.Addr())
	log.Info("serving HTTP", "addr", ln.Addr().String(), "public_url", svc.PublicURL, "version", svc.Version,
		"data_dir", f.dataDir, "key_version", svc.Keys.Current().KeyVersion(),
		"mcp", local+"/mcp", "docs", local+"/docs", "llms_txt", local+"/llms.txt")
	select {
	case err := <-served:
		return fmt.Errorf("serving HTTP: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests", "timeout", f.shutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), f.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("in-flight requests did not finish in time: closing their connections", "err", err)
		_ = srv.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving HTTP: %w", err)
	}
	log.Info("HTTP server stopped")
	return nil
}

// validHostName reports whether s is a host name (letters, digits,
// hyphens and dots, as DNS labels of at most 63 characters) or an IP
// address (IPv6 with or without brackets): what --allowed-host takes.
func validHostName(s string) bool {
	if ip := strings.Trim(s, "[]"); net.ParseIP(ip) != nil {
		return true
	}
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(strings.TrimSuffix(s, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// derivePublicURL is the base URL of a listener: its address, with a
// loopback host for a wildcard one.
func derivePublicURL(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return "http://" + addr.String()
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(tcp.Port))
}
