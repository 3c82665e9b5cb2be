package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

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
	execSQL(t, url, "DROP TABLE log_entries, log_hashes, log_head; DELETE FROM schema_version WHERE version = 2")

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
