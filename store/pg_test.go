package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/verifier-dev/verifier/internal/pgtest"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/store/storetest"
)

// TestPostgresReplicasShareOneStore opens two stores on one database, as
// two replicas do, and races them: the free allowance and a payment id are
// exact across both, and what one writes the other reads.
func TestPostgresReplicasShareOneStore(t *testing.T) {
	url := pgtest.NewDatabase(t)
	replicas := []store.Store{openPostgres(t, url), openPostgres(t, url)}
	ctx := context.Background()

	const callers, limit = 50, 5
	var granted, firsts atomic.Int32
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			s := replicas[i%2]
			a, err := s.TakeAllowance(ctx, "one-client", storetest.T0, limit)
			if err != nil {
				t.Errorf("TakeAllowance error = %v", err)
			}
			if a.Granted {
				granted.Add(1)
			}
			use := store.PaymentUse{State: store.PaymentPending, RequestKey: fmt.Sprintf("r%d", i), Since: storetest.T0}
			first, _, err := s.UsePayment(ctx, "one-payment", storetest.T0.Add(time.Hour), use)
			if err != nil {
				t.Errorf("UsePayment error = %v", err)
			}
			if first {
				firsts.Add(1)
			}
		})
	}
	wg.Wait()
	if n := granted.Load(); n != limit {
		t.Errorf("%d callers on two replicas were granted %d free calls, want exactly %d", callers, n, limit)
	}
	if n := firsts.Load(); n != 1 {
		t.Errorf("%d uses of one payment id on two replicas: %d first, want exactly 1", callers, n)
	}

	v := storetest.Verdict("from-a", "seller", true, storetest.T0)
	storetest.Put(t, replicas[0], v)
	got, err := replicas[1].Receipt(ctx, "from-a")
	if err != nil || string(got.Receipt) != string(v.Receipt) {
		t.Errorf("replica B's Receipt(from-a) = %s, %v; want replica A's receipt", got.Receipt, err)
	}
	ra, errA := replicas[0].Reputation(ctx, "seller", store.Page{})
	rb, errB := replicas[1].Reputation(ctx, "seller", store.Page{})
	if errA != nil || errB != nil || ra.Total != 1 || fmt.Sprint(ra) != fmt.Sprint(rb) {
		t.Errorf("reputation on A = %+v (%v), on B = %+v (%v); want the same, one verdict", ra, errA, rb, errB)
	}
}

// TestPostgresMigrationsConcurrent starts several stores at once on a new
// database: one migrates, the others wait for the lock and find the schema
// current, and every step is recorded once.
func TestPostgresMigrationsConcurrent(t *testing.T) {
	url := pgtest.NewDatabase(t)
	const starters = 4
	var wg sync.WaitGroup
	for range starters {
		wg.Go(func() {
			s, err := store.OpenPostgres(context.Background(), url, nil)
			if err != nil {
				t.Errorf("OpenPostgres() error = %v", err)
				return
			}
			s.Close()
		})
	}
	wg.Wait()
	rows := queryInts(t, url, "SELECT version FROM schema_version ORDER BY version")
	want := make([]int, store.PostgresSchemaVersion())
	for i := range want {
		want[i] = i + 1
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) || len(want) == 0 {
		t.Errorf("schema_version rows = %v, want %v", rows, want)
	}
}

// TestPostgresNewerSchemaRefused checks that a database migrated by a newer
// binary is refused at open, and reported by Check of a store opened
// before.
func TestPostgresNewerSchemaRefused(t *testing.T) {
	url := pgtest.NewDatabase(t)
	open := openPostgres(t, url)
	newer := store.PostgresSchemaVersion() + 1
	execSQL(t, url, fmt.Sprintf("INSERT INTO schema_version (version) VALUES (%d)", newer))
	_, err := store.OpenPostgres(context.Background(), url, nil)
	if !errors.Is(err, store.ErrSchemaVersion) {
		t.Fatalf("OpenPostgres(newer schema) error = %v, want ErrSchemaVersion", err)
	}
	if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("schema version %d", newer)) || !strings.Contains(msg, "newer verifier") {
		t.Errorf("error %q does not say the database's version and what to do", msg)
	}
	if err := open.Check(context.Background()); !errors.Is(err, store.ErrSchemaVersion) {
		t.Errorf("Check() after a newer binary migrated error = %v, want ErrSchemaVersion", err)
	}
}

// TestPostgresCheckReportsFailingWrites makes the database refuse writes (a
// read-only database, as after a failover to a standby): Check reports
// ErrWriteFailing after a failed write, and nil again after one succeeds.
func TestPostgresCheckReportsFailingWrites(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := openPostgres(t, url)
	ctx := context.Background()
	dbName := queryString(t, url, "SELECT current_database()")
	cluster, err := pgtest.Shared()
	if err != nil {
		t.Fatal(err)
	}
	admin := cluster.URL("postgres") // the maintenance database stays writable
	setReadOnly := func(on bool) {
		execSQL(t, admin, fmt.Sprintf("ALTER DATABASE %s SET default_transaction_read_only = %v", dbName, on))
		// Connections read the setting when they start: end the store's.
		execSQL(t, admin, fmt.Sprintf("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '%s'", dbName))
	}
	setReadOnly(true)
	if err := s.PutVerdict(ctx, storetest.Verdict("ro", "a", true, storetest.T0)); err == nil {
		t.Fatal("PutVerdict on a read-only database error = nil")
	}
	if err := s.Check(ctx); !errors.Is(err, store.ErrWriteFailing) {
		t.Errorf("Check() after a failed write error = %v, want ErrWriteFailing", err)
	}
	setReadOnly(false)
	// The pool may hand out a connection ended above: the first write can
	// fail on it; a retry gets a fresh one.
	for range 3 {
		if err = s.PutVerdict(ctx, storetest.Verdict("rw", "a", true, storetest.T0)); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("PutVerdict after writes came back error = %v", err)
	}
	if err := s.Check(ctx); err != nil {
		t.Errorf("Check() after a successful write error = %v, want nil", err)
	}
}

// TestPostgresDurableOnAcknowledge checks that a verdict acknowledged by
// PutVerdict is committed: another connection sees it at once.
func TestPostgresDurableOnAcknowledge(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := openPostgres(t, url)
	storetest.Put(t, s, storetest.Verdict("d1", "a", true, storetest.T0))
	if n := queryInts(t, url, "SELECT count(*)::int FROM verdicts WHERE verification_id = 'd1'::bytea"); len(n) != 1 || n[0] != 1 {
		t.Errorf("committed rows of d1 seen by another connection = %v, want [1]", n)
	}
	if got := queryString(t, url, "SHOW synchronous_commit"); got != "on" {
		t.Errorf("synchronous_commit = %q, want on (a commit is flushed before it is acknowledged)", got)
	}
}

func execSQL(t *testing.T, url, sql string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func queryInts(t *testing.T, url, sql string) []int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), sql)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	ints := make([]int, len(out))
	for i, v := range out {
		ints[i] = int(v)
	}
	return ints
}

func queryString(t *testing.T, url, sql string) string {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var s string
	if err := conn.QueryRow(context.Background(), sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

// TestOpenPostgresErrorsHideThePassword opens databases that cannot be
// reached or parsed: the errors name the database, never the password.
func TestOpenPostgresErrorsHideThePassword(t *testing.T) {
	for _, url := range []string{
		"postgres://verifier:s3cret@127.0.0.1:1/verifier?connect_timeout=2",
		"postgres://verifier:s3cret@127.0.0.1:notaport/verifier",
	} {
		s, err := store.OpenPostgres(context.Background(), url, nil)
		if err == nil {
			s.Close()
			t.Fatalf("OpenPostgres(%q) error = nil", url)
		}
		t.Logf("%v", err)
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("OpenPostgres error shows the password: %v", err)
		}
	}
}
