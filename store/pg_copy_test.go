package store_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"

	"github.com/verifier-dev/verifier/internal/pgtest"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/store/storetest"
)

// TestCopyToPostgres copies a bbolt file with history into Postgres, twice
// (idempotent), and checks that the database then serves the same
// receipts, reputation pages, scores, payments and allowance.
func TestCopyToPostgres(t *testing.T) {
	ctx := context.Background()
	from, err := store.OpenBolt(filepath.Join(t.TempDir(), "verifier.db"), &store.Options{Now: fixedNow, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer from.Close()
	agents := []string{"seller-1", "seller-2", "seller-3", "test-bot", ""}
	var ids []string
	for i := range 1203 { // more than two of the copy's chunks
		v := storetest.Verdict(fmt.Sprintf("v%04d", i), agents[i%len(agents)], i%4 != 0, storetest.T0.Add(time.Duration(i%300)*time.Minute))
		storetest.Put(t, from, v)
		ids = append(ids, v.VerificationID)
	}
	expires := storetest.T0.Add(time.Hour)
	pending := store.PaymentUse{State: store.PaymentPending, RequestKey: "r1", Since: storetest.T0}
	settled := store.PaymentUse{State: store.PaymentSettled, RequestKey: "r2", Since: storetest.T0, Settlement: []byte(`{"ok":1}`), Answer: []byte("answer")}
	from.UsePayment(ctx, "pay-pending", expires, pending)
	from.UsePayment(ctx, "pay-settled", expires, pending)
	if err := from.SettlePayment(ctx, "pay-settled", settled, nil); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		from.TakeAllowance(ctx, "client-a", storetest.T0, 5)
	}

	to := openPostgres(t, pgtest.NewDatabase(t))
	want := store.CopyReport{Verdicts: 1203, Agents: 3, Payments: 2, Allowance: 1, LogSize: 1203}
	for round := 1; round <= 2; round++ {
		r, err := store.CopyToPostgres(ctx, from, to, 50)
		if err != nil {
			t.Fatalf("copy %d: error = %v", round, err)
		}
		if r.Sampled < 2 {
			t.Errorf("copy %d: %d receipts compared, want at least the first and the last", round, r.Sampled)
		}
		r.Sampled = 0
		if r != want {
			t.Errorf("copy %d: report %+v, want %+v", round, r, want)
		}
	}

	for _, id := range ids {
		a, errA := from.Receipt(ctx, id)
		b, errB := to.Receipt(ctx, id)
		if errA != nil || errB != nil || !cmp.Equal(a, b) || string(a.Receipt) != string(b.Receipt) {
			t.Fatalf("Receipt(%s): file %v, database %v; want the same", id, errA, errB)
		}
	}
	for _, agent := range agents {
		page := store.Page{Limit: 37}
		for {
			a, errA := from.Reputation(ctx, agent, page)
			b, errB := to.Reputation(ctx, agent, page)
			if errA != nil || errB != nil {
				t.Fatalf("Reputation(%q): %v, %v", agent, errA, errB)
			}
			if diff := cmp.Diff(a, b); diff != "" {
				t.Fatalf("Reputation(%q, %+v) file vs database (-file +database):\n%s", agent, page, diff)
			}
			if a.NextCursor == "" {
				break
			}
			page.Cursor = a.NextCursor
		}
		a, _ := from.Score(ctx, agent, storetest.T0.Add(400*time.Minute))
		b, _ := to.Score(ctx, agent, storetest.T0.Add(400*time.Minute))
		// The sums were added in another order: equal up to rounding. The
		// logs are compared below.
		near := cmpopts.EquateApprox(1e-12, 1e-9)
		if diff := cmp.Diff(a, b, near, cmpopts.IgnoreFields(store.Score{}, "Log")); diff != "" {
			t.Errorf("Score(%q) file vs database (-file +database):\n%s", agent, diff)
		}
		if math.IsNaN(b.Score) {
			t.Errorf("Score(%q) is NaN", agent)
		}
	}
	// The file's log is reproduced: the same records in the same order.
	fromLog, errA := from.LogTree(ctx)
	toLog, errB := to.LogTree(ctx)
	if errA != nil || errB != nil || fromLog != toLog || toLog.Size != 1203 {
		t.Errorf("log after the copy: file %+v (%v), database %+v (%v); want the same tree of 1203", fromLog, errA, toLog, errB)
	}
	var all []store.Verdict
	for _, id := range ids {
		v, _ := from.Receipt(ctx, id)
		all = append(all, v)
	}
	storetest.CheckLogged(t, to, all)
	for _, id := range []string{"pay-pending", "pay-settled"} {
		a, _, _ := from.LookupPayment(ctx, id)
		b, found, err := to.LookupPayment(ctx, id)
		if err != nil || !found || !cmp.Equal(a, b, cmpopts.EquateEmpty()) {
			t.Errorf("LookupPayment(%s): file %+v, database %+v (%v, %v)", id, a, b, found, err)
		}
	}
	if first, _, _ := to.UsePayment(ctx, "pay-settled", expires, pending); first {
		t.Errorf("a payment used before the copy is not a replay after it")
	}
	if a, _ := to.PeekAllowance(ctx, "client-a", storetest.T0, 5); a.Remaining != 2 {
		t.Errorf("allowance after the copy: %d left, want 2", a.Remaining)
	}
}

// TestCopyToPostgresRefusesConflicts checks that a database holding another
// verdict under one of the file's ids stops the copy with ErrDuplicate.
func TestCopyToPostgresRefusesConflicts(t *testing.T) {
	ctx := context.Background()
	from, err := store.OpenBolt(filepath.Join(t.TempDir(), "verifier.db"), &store.Options{Now: fixedNow, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer from.Close()
	storetest.Put(t, from, storetest.Verdict("same-id", "seller", true, storetest.T0))
	to := openPostgres(t, pgtest.NewDatabase(t))
	storetest.Put(t, to, storetest.Verdict("same-id", "seller", false, storetest.T0))
	if _, err := store.CopyToPostgres(ctx, from, to, 10); !errors.Is(err, store.ErrDuplicate) {
		t.Errorf("CopyToPostgres(conflicting id) error = %v, want ErrDuplicate", err)
	}
}

// TestCopyToPostgresLocksAgentsInOrder copies, while another transaction
// holds agent "a"'s counters, a chunk whose log order meets "b" before
// "a"; the other transaction then locks "b", as a replica's batch locking
// agents in id order would. The copy must wait for "a" without holding
// "b", so both finish; locking in chunk order deadlocks and PostgreSQL
// aborts one of them.
func TestCopyToPostgresLocksAgentsInOrder(t *testing.T) {
	ctx := context.Background()
	from, err := store.OpenBolt(filepath.Join(t.TempDir(), "verifier.db"), &store.Options{Now: fixedNow, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer from.Close()
	storetest.Put(t, from, storetest.Verdict("v1", "b", true, storetest.T0))
	storetest.Put(t, from, storetest.Verdict("v2", "a", true, storetest.T0.Add(time.Minute)))
	url := pgtest.NewDatabase(t)
	to := openPostgres(t, url)

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	const lockAgent = `INSERT INTO agents (agent_id) VALUES ($1) ON CONFLICT (agent_id) DO UPDATE SET agent_id = EXCLUDED.agent_id`
	if _, err := tx.Exec(ctx, lockAgent, []byte("a")); err != nil {
		t.Fatal(err)
	}

	copied := make(chan error, 1)
	go func() {
		_, err := store.CopyToPostgres(ctx, from, to, 10)
		copied <- err
	}()
	// Wait until the copy waits for a row lock.
	for deadline := time.Now().Add(30 * time.Second); ; {
		if n := queryInts(t, url, "SELECT count(*)::int FROM pg_stat_activity WHERE wait_event_type = 'Lock'"); n[0] > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the copy never waited for agent a's lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := tx.Exec(ctx, lockAgent, []byte("b")); err != nil {
		t.Fatalf("locking agent b while the copy waits for a: %v (the copy held b: agents locked out of order)", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-copied; err != nil {
		t.Fatalf("CopyToPostgres() error = %v", err)
	}
}
