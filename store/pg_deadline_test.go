package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/verifier-dev/verifier/internal/pgtest"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/store/storetest"
)

// TestPostgresReserveAllowanceEndsByDeadline: a free-allowance call whose
// row another transaction holds returns when its deadline passes, a 503
// (store.Unavailable), rather than when the row is let go; the call
// counted once the row is free is given back, so the client's allowance is
// as before.
func TestPostgresReserveAllowanceEndsByDeadline(t *testing.T) {
	url := pgtest.NewDatabase(t)
	st := openPostgres(t, url)
	bg := context.Background()
	const client, limit = "held-client", 5
	if _, err := st.PeekAllowance(bg, client, storetest.T0, limit); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(bg, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(bg)
	tx, err := conn.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	// An uncommitted row under the client's key: the allowance upsert
	// waits for this transaction.
	y, m, d := storetest.T0.UTC().Date()
	if _, err := tx.Exec(bg, "INSERT INTO allowance (day, client, used) VALUES ($1, $2, 0)",
		time.Date(y, m, d, 0, 0, 0, 0, time.UTC), []byte(client)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, hold, err := st.ReserveAllowance(ctx, client, storetest.T0, limit)
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) || !store.Unavailable(err) || hold != nil {
		t.Errorf("ReserveAllowance on a held row = %v, %v; want the deadline, unavailable, no hold", hold, err)
	}
	if took > 5*time.Second {
		t.Errorf("ReserveAllowance returned after %s, want soon after its 300ms deadline", took)
	}
	if err := tx.Commit(bg); err != nil {
		t.Fatal(err)
	}
	// The batch now counts the call, and it is given back.
	deadline := time.Now().Add(10 * time.Second)
	for {
		a, err := st.PeekAllowance(bg, client, storetest.T0, limit)
		if err != nil {
			t.Fatal(err)
		}
		if a.Remaining == limit {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("allowance after the abandoned call = %d left, want all %d: the call was not given back", a.Remaining, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
