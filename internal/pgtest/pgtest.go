// Package pgtest starts a private PostgreSQL server for tests: a cluster
// made by initdb in a temporary folder, listening only on a unix socket in
// that folder, with a database per test, torn down at the end.
//
// PostgreSQL refuses to run as root, so when the tests run as root the
// cluster belongs to the "postgres" OS user (the folder is handed to it and
// initdb and the server run with its ids). A machine without PostgreSQL's
// server binaries is an error: tests that need the server fail rather than
// skip.
//
// A package whose tests need the server shares one cluster, started on first
// use and stopped by its TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		url := pgtest.NewDatabase(t) // postgres://postgres@/name?host=/tmp/pgtest-…
//		…
//	}
package pgtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// BinEnv names the environment variable that may point at the folder of
// PostgreSQL's server binaries (initdb, postgres); by default the newest
// /usr/lib/postgresql/*/bin.
const BinEnv = "VERIFIER_PG_BIN"

// RequiredEnv names the environment variable that makes PostgreSQL
// required: set to 1 (as .ci/run does), a test that needs a database fails
// when no server binaries are found; unset, it is skipped with a message
// naming how to run it, so `go test ./...` passes on a machine without
// PostgreSQL.
const RequiredEnv = "VERIFIER_PG_REQUIRED"

// superuser is the cluster's superuser role, made by initdb.
const superuser = "postgres"

// readyTimeout bounds how long a started server may take to accept
// connections (the machine may be loaded).
const readyTimeout = 60 * time.Second

// Cluster is a running private PostgreSQL server.
type Cluster struct {
	dir     string              // the temporary folder: data/, the socket, server.log
	cred    *syscall.Credential // the server's user when started by root; nil otherwise
	server  *exec.Cmd
	exited  chan struct{} // closed when the server process has exited
	waitErr error         // the server's exit status, set before exited is closed
	dbSeq   atomic.Int64
}

// Start makes a new cluster in a temporary folder and starts its server.
// Stop ends it and removes the folder.
func Start() (_ *Cluster, err error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("making the cluster folder: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	c := &Cluster{dir: dir}
	if os.Geteuid() == 0 {
		if c.cred, err = credentialOf(superuser); err != nil {
			return nil, fmt.Errorf("starting postgres as root: %w", err)
		}
		if err := os.Chown(c.dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return nil, fmt.Errorf("handing %s to the postgres user: %w", c.dir, err)
		}
	}
	if err := c.initdb(bin); err != nil {
		return nil, err
	}
	if err := c.startServer(bin); err != nil {
		return nil, err
	}
	return c, nil
}

// binDir finds the folder of initdb and postgres.
func binDir() (string, error) {
	if dir := os.Getenv(BinEnv); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err != nil {
			return "", fmt.Errorf("%s=%s: %w", BinEnv, dir, err)
		}
		return dir, nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(found) == 0 {
		return "", fmt.Errorf("PostgreSQL server binaries not found (no /usr/lib/postgresql/*/bin/postgres; set %s or install postgresql-15)", BinEnv)
	}
	newest := slices.MaxFunc(found, func(a, b string) int { return versionOf(a) - versionOf(b) })
	return filepath.Dir(newest), nil
}

// versionOf reads the major version out of /usr/lib/postgresql/N/bin/postgres.
func versionOf(postgres string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(postgres))))
	return n
}

// credentialOf returns the ids of the OS user name.
func credentialOf(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL cannot run as root and there is no %q user to run it: %w", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("reading the ids of user %q: %w", name, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// command builds a command that runs as the server's user.
func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	return cmd
}

// initdb makes the cluster: trust authentication (the socket's folder is
// private to the test), UTF-8, C collation. Skipping
// initdb's own final sync only makes a throwaway cluster faster; the server
// keeps fsync on.
func (c *Cluster) initdb(bin string) error {
	cmd := c.command(filepath.Join(bin, "initdb"), "-D", c.dataDir(), "-U", superuser,
		"-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	return nil
}

func (c *Cluster) dataDir() string { return filepath.Join(c.dir, "data") }
func (c *Cluster) logPath() string { return filepath.Join(c.dir, "server.log") }

// startServer runs postgres on a socket in c.dir and waits until it accepts
// connections. The server gets SIGQUIT (immediate shutdown) if the test
// process dies first, so a killed test leaves no server behind.
func (c *Cluster) startServer(bin string) error {
	logFile, err := os.OpenFile(c.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening the server log: %w", err)
	}
	defer logFile.Close()
	cmd := c.command(filepath.Join(bin, "postgres"), "-D", c.dataDir(),
		"-c", "listen_addresses=", // no TCP
		"-c", "unix_socket_directories="+c.dir,
		"-c", "max_connections=300",
		"-c", "logging_collector=off")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	c.server, c.exited, c.waitErr = cmd, make(chan struct{}), nil
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	if err := c.waitReady(); err != nil {
		c.kill()
		return fmt.Errorf("starting postgres: %w\n%s", err, c.logTail())
	}
	return nil
}

// waitReady polls until the server accepts a connection, or has exited.
func (c *Cluster) waitReady() error {
	deadline := time.Now().Add(readyTimeout)
	for {
		err := c.exec("SELECT 1")
		if err == nil {
			return nil
		}
		select {
		case <-c.exited:
			return fmt.Errorf("the server exited: %v", c.waitErr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s: %w", readyTimeout, err)
		}
	}
}

// logTail returns the end of the server's log, for error messages.
func (c *Cluster) logTail() string {
	b, _ := os.ReadFile(c.logPath())
	const keep = 4 << 10
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}

// URL returns the address of database name as the superuser over the
// server's unix socket.
func (c *Cluster) URL(name string) string {
	return fmt.Sprintf("postgres://%s@/%s?host=%s", superuser, name, url.QueryEscape(c.dir))
}

// NewDatabase creates a database of its own for the test, dropped when the
// test ends, and returns its URL. It fails the test when the database
// cannot be made.
func (c *Cluster) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("t%d", c.dbSeq.Add(1)) // needs no quoting
	if err := c.exec("CREATE DATABASE " + name); err != nil {
		tb.Fatalf("creating database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		if err := c.exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			tb.Errorf("dropping database %s: %v", name, err)
		}
	})
	return c.URL(name)
}

// exec runs one statement in the maintenance database, within 30 seconds.
func (c *Cluster) exec(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// Stop shuts the server down (fast: open connections are ended) and removes
// the cluster's folder.
func (c *Cluster) Stop() error {
	var err error
	_ = c.server.Process.Signal(syscall.SIGINT) // fast shutdown
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		c.kill()
		err = errors.New("stopping postgres: no exit 30s after SIGINT; killed")
	}
	_ = os.RemoveAll(c.dir)
	return err
}

// Restart shuts the server down as Stop does (fast: open connections are
// ended), keeps it down for pause — an outage its clients see as refused
// connections —, and starts it again on the same data and socket.
func (c *Cluster) Restart(pause time.Duration) error {
	bin, err := binDir()
	if err != nil {
		return err
	}
	_ = c.server.Process.Signal(syscall.SIGINT) // fast shutdown
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		c.kill()
		return errors.New("restarting postgres: no exit 30s after SIGINT; killed")
	}
	time.Sleep(pause)
	return c.startServer(bin)
}

// kill ends the server at once.
func (c *Cluster) kill() {
	_ = c.server.Process.Kill()
	<-c.exited
}

// shared is the test binary's cluster; sharedUsed is set once Shared was called.
var (
	shared     = sync.OnceValues(Start)
	sharedUsed atomic.Bool
)

// Shared returns the test binary's cluster, starting it on first use. A
// failed start is remembered: every later call returns the same error.
func Shared() (*Cluster, error) {
	sharedUsed.Store(true)
	return shared()
}

// SkipIfMissing skips the test, naming how to run it, when PostgreSQL's
// server binaries are missing and RequiredEnv is not 1: for a test that
// starts a cluster of its own (NewDatabase does it for the others).
func SkipIfMissing(tb testing.TB) {
	tb.Helper()
	if why := skipReason(); why != "" {
		tb.Skip(why)
	}
}

// skipReason says why a test needing PostgreSQL is skipped: its server
// binaries are missing and RequiredEnv is not 1. It is empty when the test
// runs (and fails if the server cannot be started).
func skipReason() string {
	_, err := binDir()
	if err == nil || os.Getenv(RequiredEnv) == "1" {
		return ""
	}
	return fmt.Sprintf("skipped: %v; install postgresql-15 (or set %s) to run it, and set %s=1 to make it required (.ci/run does)", err, BinEnv, RequiredEnv)
}

// Main runs the tests and then stops the shared cluster, if they started
// one, returning the exit code for os.Exit: a TestMain of its own for
// packages that need no other.
func Main(m *testing.M) int {
	code := m.Run()
	if !sharedUsed.Load() {
		return code
	}
	if c, err := shared(); err == nil {
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			return cmp.Or(code, 1)
		}
	}
	return code
}

// NewDatabase creates a database for the test in the shared cluster (see
// Cluster.NewDatabase), failing the test when PostgreSQL cannot be started.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	SkipIfMissing(tb)
	c, err := Shared()
	if err != nil {
		tb.Fatalf("PostgreSQL for tests: %v", err)
	}
	return c.NewDatabase(tb)
}
