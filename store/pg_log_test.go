package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/verifier-dev/verifier/internal/pgtest"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/store/storetest"
)

// TestPostgresLogBackfilledByMigration: a database whose verdicts were
// stored before the log existed (schema version 1) has them logged by the
// migration to version 2, in verified_at order, each with a verifiable
// proof; later verdicts are appended after them.
func TestPostgresLogBackfilledByMigration(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := openPostgres(t, url)
	var vs []store.Verdict
	for i := range 9 {
		// Stored out of time order: the backfill's order is verified_at's.
		at := storetest.T0.Add(time.Duration((i*5)%9) * time.Second)
		vs = append(vs, storetest.Verdict(fmt.Sprintf("old-%d", i), []string{"seller", "", "test-bot"}[i%3], i%2 == 0, at))
	}
	storetest.Put(t, s, vs...)
	_ = s.Close()
	// Make the database one written before the log: schema version 1.
	execSQL(t, url, "DROP TABLE log_entries, log_hashes, log_head; DROP FUNCTION verdict_is_logged() CASCADE; DROP TABLE signing_keys, log_identity; DELETE FROM schema_version WHERE version >= 2")

	s = openPostgres(t, url)
	slices.SortFunc(vs, func(a, b store.Verdict) int { return a.VerifiedAt.Compare(b.VerifiedAt) })
	storetest.CheckLogged(t, s, vs)
	bundle, err := s.LogEntries(context.Background(), 0, len(vs))
	if err != nil {
		t.Fatalf("LogEntries() error = %v", err)
	}
	for i, v := range vs {
		want := storetest.WantLogEntry(t, v.Receipt)
		if got := bundle[i*34+2 : (i+1)*34]; string(got) != string(want[:]) {
			t.Errorf("backfilled record %d is not %s, the %d-th in verified_at order", i, v.VerificationID, i)
		}
	}
	more := storetest.Verdict("new-1", "seller", true, storetest.T0.Add(-time.Hour))
	storetest.Put(t, s, more)
	storetest.CheckLogged(t, s, append(vs, more))
}

// TestPostgresScoreNamesItsLogTree: a score carries the log tree of its
// snapshot — the current tree when nothing is written meanwhile — and
// that tree holds every verdict the score counted.
func TestPostgresScoreNamesItsLogTree(t *testing.T) {
	s := openPostgres(t, pgtest.NewDatabase(t))
	ctx := context.Background()
	for i := range 4 {
		storetest.Put(t, s, storetest.Verdict(fmt.Sprintf("s-%d", i), "seller", i != 2, storetest.T0.Add(time.Duration(i)*time.Second)))
	}
	score, err := s.Score(ctx, "seller", storetest.T0.Add(time.Hour))
	if err != nil {
		t.Fatalf("Score() error = %v", err)
	}
	tree, err := s.LogTree(ctx)
	if err != nil {
		t.Fatalf("LogTree() error = %v", err)
	}
	if score.Log == nil || *score.Log != tree || tree.Size != 4 || score.Inputs.Total != 4 {
		t.Errorf("Score().Log = %+v counting %d verdicts, want the log's tree %+v of 4", score.Log, score.Inputs.Total, tree)
	}
	unknown, err := s.Score(ctx, "nobody", storetest.T0)
	if err != nil || unknown.Log == nil || *unknown.Log != tree {
		t.Errorf("Score(unknown agent).Log = %+v, %v; want the log's tree %+v", unknown.Log, err, tree)
	}
}

// TestPostgresGroupCommit: concurrent PutVerdict calls of one process share
// transactions (fewer inserting transactions than verdicts, seen in the
// rows' xmin); a verdict whose statement fails (a trigger refuses its id)
// fails alone while its batch-mates are stored, counted and logged; a
// duplicate id in a batch is ErrDuplicate for that caller only.
func TestPostgresGroupCommit(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := openPostgres(t, url)
	execSQL(t, url, `CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.verification_id = 'poison'::bytea THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$;
		CREATE TRIGGER refuse_poison BEFORE INSERT ON verdicts FOR EACH ROW EXECUTE FUNCTION refuse_poison()`)
	ctx := context.Background()
	stored := storetest.Verdict("stored-before", "seller", true, storetest.T0)
	storetest.Put(t, s, stored)

	const writers = 64
	vs := make([]store.Verdict, writers)
	errs := make([]error, writers)
	for i := range vs {
		vs[i] = storetest.Verdict(fmt.Sprintf("g-%02d", i), []string{"seller", "buyer", "", "test-bot"}[i%4], i%3 != 0, storetest.T0.Add(time.Duration(i)*time.Millisecond))
	}
	vs[7] = storetest.Verdict("poison", "seller", true, storetest.T0)
	vs[20] = storetest.Verdict("stored-before", "seller", false, storetest.T0) // another verdict under a stored id
	vs[30] = vs[31]                                                            // the same verdict twice at once
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range vs {
		wg.Go(func() {
			<-start
			errs[i] = s.PutVerdict(ctx, vs[i])
		})
	}
	close(start)
	wg.Wait()
	want := []store.Verdict{stored}
	counted := 1
	for i, err := range errs {
		switch {
		case i == 7:
			if err == nil || !strings.Contains(err.Error(), "refused by the test") {
				t.Errorf("PutVerdict(poison) error = %v, want the trigger's refusal", err)
			}
		case i == 20:
			if !errors.Is(err, store.ErrDuplicate) {
				t.Errorf("PutVerdict(other verdict under a stored id) error = %v, want ErrDuplicate", err)
			}
		case err != nil:
			t.Errorf("PutVerdict(%s) error = %v, want nil (a batch-mate's failure is not its own)", vs[i].VerificationID, err)
		case i != 30:
			want = append(want, vs[i])
			if vs[i].AgentID == "seller" {
				counted++
			}
		}
	}
	storetest.CheckLogged(t, s, want)
	if r, err := s.Reputation(ctx, "seller", store.Page{}); err != nil || r.Total != counted {
		t.Errorf("seller's total = %d (%v), want %d", r.Total, err, counted)
	}
	txns := queryInts(t, url, "SELECT count(DISTINCT xmin::text)::int FROM verdicts WHERE verification_id <> 'stored-before'::bytea")
	t.Logf("%d verdicts stored by %d transactions", len(want)-1, txns[0])
	if txns[0] > (len(want)-1)/2 {
		t.Errorf("%d concurrent verdicts stored by %d transactions, want them batched (at most half as many)", len(want)-1, txns[0])
	}
}

// TestPostgresLogTwoWriters: two stores on one database (two replicas)
// appending at once keep one log: each store's cached log hashes stay
// right when the other appended in between.
func TestPostgresLogTwoWriters(t *testing.T) {
	url := pgtest.NewDatabase(t)
	replicas := []*store.Postgres{openPostgres(t, url), openPostgres(t, url)}
	ctx := context.Background()
	var (
		vs   []store.Verdict
		wg   sync.WaitGroup
		errs = make([]error, 120)
	)
	for i := range 120 {
		v := storetest.Verdict(fmt.Sprintf("two-%03d", i), "seller", i%2 == 0, storetest.T0.Add(time.Duration(i)*time.Second))
		vs = append(vs, v)
		wg.Go(func() { errs[i] = replicas[i%2].PutVerdict(ctx, v) })
		if i%10 == 9 {
			wg.Wait() // rounds, so that each replica's cache goes stale
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("PutVerdict error = %v", err)
	}
	for _, r := range replicas {
		storetest.CheckLogged(t, r, vs)
	}
}

// TestPostgresVerdictWithoutEntryRefused: a verdict inserted without its
// log entry, as a verifier older than the log would, is refused at commit.
func TestPostgresVerdictWithoutEntryRefused(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := openPostgres(t, url)
	storetest.Put(t, s, storetest.Verdict("logged", "seller", true, storetest.T0))
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), `INSERT INTO verdicts (verification_id, verified_at_ns, agent_id, counted, record)
		VALUES ('unlogged'::bytea, 1, ''::bytea, false, '\x01'::bytea)`)
	if err == nil || !strings.Contains(err.Error(), "without its transparency log entry") {
		t.Errorf("inserting a verdict without its entry: error = %v, want the log's refusal", err)
	}
	storetest.CheckLogged(t, s, []store.Verdict{storetest.Verdict("logged", "seller", true, storetest.T0)})
}
