package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// ReserveAllowance holds one of the client's free calls for the UTC day of
// now, if fewer than limit were used, with an atomic upsert that never
// counts past limit however many replicas ask at once; a process's
// concurrent calls share one transaction (pgAllowanceBatch). The count is
// committed when ReserveAllowance returns (the hold's Commit has nothing
// left to do); Release gives the call back. Remaining is what is left after
// this call.
func (p *Postgres) ReserveAllowance(ctx context.Context, client string, now time.Time, limit int) (Allowance, AllowanceHold, error) {
	if err := ctx.Err(); err != nil {
		return Allowance{}, nil, err
	}
	if err := checkKey("client", client); err != nil {
		return Allowance{}, nil, fmt.Errorf("taking allowance: %w", err)
	}
	if limit <= 0 {
		return allowanceOf(0, limit, now), nil, nil
	}
	day := utcDay(now)
	r := p.allowance.take(ctx, pgAllowanceTake{day: day, client: []byte(client), limit: int64(limit)})
	switch {
	case r.err != nil:
		return Allowance{}, nil, fmt.Errorf("taking allowance: %w", r.err)
	case !r.granted: // all used: the update's WHERE refused
		return allowanceOf(uint64(limit), limit, now), nil, nil
	}
	a := allowanceOf(uint64(r.used-1), limit, now)
	a.Remaining--
	p.maybePurge(ctx)
	return a, &pgHold{p: p, day: day, client: []byte(client)}, nil
}

// pgTakeAllowance counts one free call of (day, client) unless limit are
// used, returning the new count; no row when all are used.
const pgTakeAllowance = `INSERT INTO allowance AS a (day, client, used) VALUES ($1, $2, 1)
	ON CONFLICT (day, client) DO UPDATE SET used = a.used + 1 WHERE a.used < $3
	RETURNING a.used`

// pgAllowanceBatch counts the free calls of a process's concurrent
// ReserveAllowance calls in shared transactions: one pipelined round trip
// (BEGIN, each call's pgTakeAllowance, COMMIT) and one WAL flush per batch,
// so a busy client's row is locked once per batch instead of once per call
// through every flush. The calls are sent in (day, client) order, so that
// replicas' batches cannot deadlock on each other's rows.
type pgAllowanceBatch struct {
	p       *Postgres
	batches batcher[pgAllowanceTake]
}

// pgAllowanceTake is one call waiting for its batch.
type pgAllowanceTake struct {
	day    time.Time
	client []byte
	limit  int64
	done   chan pgAllowanceResult
}

// pgAllowanceResult is a call's outcome: granted with the count after it,
// or not, or the batch's error.
type pgAllowanceResult struct {
	granted bool
	used    int64
	err     error
}

// newPgAllowanceBatch returns p's allowance batch.
func newPgAllowanceBatch(p *Postgres) *pgAllowanceBatch {
	a := &pgAllowanceBatch{p: p}
	a.batches = batcher[pgAllowanceTake]{maxSize: pgMaxBatch, run: a.commit}
	return a
}

// take counts t in the next batch and returns its outcome once the batch
// committed or failed, or ctx's error when ctx ends first: a call then
// counted after all is given back once its batch commits, since no caller
// holds it.
func (a *pgAllowanceBatch) take(ctx context.Context, t pgAllowanceTake) pgAllowanceResult {
	t.done = make(chan pgAllowanceResult, 1)
	a.batches.add(t)
	select {
	case r := <-t.done:
		return r
	case <-ctx.Done():
		go func() {
			if r := <-t.done; r.err == nil && r.granted {
				(&pgHold{p: a.p, day: t.day, client: t.client}).Release()
			}
		}()
		return pgAllowanceResult{err: ctx.Err()}
	}
}

// commit counts batch in one transaction. Every statement touches only
// the allowance table, so a failure is the database's: every call of the
// batch gets it.
func (a *pgAllowanceBatch) commit(batch []pgAllowanceTake) {
	slices.SortStableFunc(batch, func(x, y pgAllowanceTake) int {
		if c := x.day.Compare(y.day); c != 0 {
			return c
		}
		return bytes.Compare(x.client, y.client)
	})
	results, err := a.run(batch)
	a.p.recordWrite(err)
	for i, t := range batch {
		if err != nil {
			t.done <- pgAllowanceResult{err: err}
		} else {
			t.done <- results[i]
		}
	}
}

// run sends batch's transaction as one pipelined round trip.
func (a *pgAllowanceBatch) run(batch []pgAllowanceTake) ([]pgAllowanceResult, error) {
	ctx, cancel := writeContext(context.Background())
	defer cancel()
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	for _, t := range batch {
		b.Queue(pgTakeAllowance, t.day, t.client, t.limit)
	}
	b.Queue("COMMIT")
	conn, err := a.p.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	results, err := readAllowanceBatch(conn.SendBatch(ctx, b), len(batch))
	if conn.Conn().PgConn().TxStatus() != 'I' {
		if _, rerr := conn.Exec(ctx, "ROLLBACK"); rerr != nil {
			_ = conn.Conn().Close(ctx)
		}
	}
	return results, err
}

// readAllowanceBatch reads the results of BEGIN, n pgTakeAllowance and
// COMMIT.
func readAllowanceBatch(br pgx.BatchResults, n int) (results []pgAllowanceResult, err error) {
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			results, err = nil, cerr
		}
	}()
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	results = make([]pgAllowanceResult, n)
	for i := range results {
		err := br.QueryRow().Scan(&results[i].used)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return nil, err
		default:
			results[i].granted = true
		}
	}
	tag, err := br.Exec()
	if err != nil {
		return nil, err
	}
	if tag.String() != "COMMIT" {
		return nil, pgx.ErrTxCommitRollback
	}
	return results, nil
}

// TakeAllowance uses one of the client's free calls for the UTC day of now,
// if fewer than limit were used; durable when it returns.
func (p *Postgres) TakeAllowance(ctx context.Context, client string, now time.Time, limit int) (Allowance, error) {
	a, h, err := p.ReserveAllowance(ctx, client, now, limit)
	if err != nil || h == nil {
		return a, err
	}
	if err := h.Commit(); err != nil {
		return Allowance{}, fmt.Errorf("taking allowance: %w", err)
	}
	return a, nil
}

// PeekAllowance reports the client's allowance for the UTC day of now
// without using any of it.
func (p *Postgres) PeekAllowance(ctx context.Context, client string, now time.Time, limit int) (Allowance, error) {
	if err := ctx.Err(); err != nil {
		return Allowance{}, err
	}
	if err := checkKey("client", client); err != nil {
		return Allowance{}, fmt.Errorf("reading allowance: %w", err)
	}
	var used int64
	err := p.pool.QueryRow(ctx, "SELECT used FROM allowance WHERE day = $1 AND client = $2", utcDay(now), []byte(client)).Scan(&used)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return Allowance{}, fmt.Errorf("reading allowance: %w", err)
	}
	return allowanceOf(uint64(used), limit, now), nil
}

// pgHold is a free call counted in the database.
type pgHold struct {
	p      *Postgres
	day    time.Time
	client []byte
	mu     sync.Mutex
	state  holdState
}

// Commit returns at once: the count was committed by ReserveAllowance.
func (h *pgHold) Commit() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == holdReleased {
		return fmt.Errorf("committing free call: %w", errHoldReleased)
	}
	h.state = holdCommitted
	return nil
}

// Release gives the call back; a no-op after Commit or a first Release. If
// the database cannot be written the call stays used, which only ever errs
// against the client.
func (h *pgHold) Release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state != holdHeld {
		return
	}
	h.state = holdReleased
	_ = h.p.write(context.Background(), func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE allowance SET used = used - 1 WHERE day = $1 AND client = $2 AND used > 0", h.day, h.client)
		return err
	})
}

// UsePayment records paymentID as used by use, kept until expires plus
// PaymentRetention; the primary key makes the first use across every
// replica the only one. first is false when the id was already recorded,
// and recorded is then what the database holds for it.
func (p *Postgres) UsePayment(ctx context.Context, paymentID string, expires time.Time, use PaymentUse) (first bool, recorded PaymentUse, err error) {
	if err := ctx.Err(); err != nil {
		return false, PaymentUse{}, err
	}
	if err := checkKey("payment id", paymentID); err != nil {
		return false, PaymentUse{}, fmt.Errorf("recording payment: %w", err)
	}
	if expires.Before(minVerifiedAt) || !expires.Before(maxVerifiedAt) {
		return false, PaymentUse{}, fmt.Errorf("recording payment: %w: expiry %s out of range", ErrInvalidArgument, expires.Format(time.RFC3339))
	}
	id := []byte(paymentID)
	deadline := expires.Add(PaymentRetention).UnixNano()
	wctx, cancel := writeContext(ctx)
	defer cancel()
	// A use seen by the insert may be released before the read: then the
	// id is free again and the insert is tried anew.
	for range 3 {
		tag, err := p.pool.Exec(wctx, `INSERT INTO payments (payment_id, deadline_ns, state, record)
			VALUES ($1, $2, $3, $4) ON CONFLICT (payment_id) DO NOTHING`,
			id, deadline, int16(use.State), appendPaymentUse(nil, use))
		p.recordWrite(err)
		if err != nil {
			return false, PaymentUse{}, fmt.Errorf("recording payment: %w", err)
		}
		if tag.RowsAffected() == 1 {
			p.maybePurge(ctx)
			return true, use, nil
		}
		recorded, found, err := p.LookupPayment(wctx, paymentID)
		if err != nil {
			return false, PaymentUse{}, fmt.Errorf("recording payment: %w", err)
		}
		if found {
			return false, recorded, nil
		}
	}
	return false, PaymentUse{}, fmt.Errorf("recording payment: the id was used and released again three times meanwhile")
}

// LookupPayment reads what is recorded of paymentID; found is false when
// it was never used (or its retention ended and it was purged).
func (p *Postgres) LookupPayment(ctx context.Context, paymentID string) (use PaymentUse, found bool, err error) {
	if err := ctx.Err(); err != nil {
		return PaymentUse{}, false, err
	}
	if err := checkKey("payment id", paymentID); err != nil {
		return PaymentUse{}, false, fmt.Errorf("reading payment: %w", err)
	}
	var (
		deadline int64
		record   []byte
	)
	err = p.pool.QueryRow(ctx, "SELECT deadline_ns, record FROM payments WHERE payment_id = $1", []byte(paymentID)).Scan(&deadline, &record)
	if errors.Is(err, pgx.ErrNoRows) {
		return PaymentUse{}, false, nil
	}
	if err != nil {
		return PaymentUse{}, false, fmt.Errorf("reading payment: %w", err)
	}
	use, err = decodePaymentUse(append(appendTime(nil, deadline), record...))
	if err != nil {
		return PaymentUse{}, false, fmt.Errorf("reading payment: %w", err)
	}
	return use, true, nil
}

// SettlePayment records the outcome of paymentID's settlement (the
// retention is unchanged) and, when v is not nil, stores the verdict in the
// same transaction.
func (p *Postgres) SettlePayment(ctx context.Context, paymentID string, use PaymentUse, v *Verdict) error {
	w, err := prepareSettlement(paymentID, v)
	if err != nil {
		return err
	}
	err = p.write(ctx, func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "UPDATE payments SET state = $2, record = $3 WHERE payment_id = $1",
			[]byte(paymentID), int16(use.State), appendPaymentUse(nil, use))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: payment not recorded as used", ErrNotFound)
		}
		if v == nil {
			return nil
		}
		return applyPgLogged(ctx, tx, []verdictWrite{w})
	})
	if err != nil {
		return fmt.Errorf("recording settlement: %w", err)
	}
	return nil
}

// ReleasePayment forgets paymentID if it is still pending, so the payer
// may use it again; any other state is left as it is.
func (p *Postgres) ReleasePayment(ctx context.Context, paymentID string) error {
	if err := checkKey("payment id", paymentID); err != nil {
		return fmt.Errorf("releasing payment: %w", err)
	}
	err := p.write(ctx, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "DELETE FROM payments WHERE payment_id = $1 AND state = $2", []byte(paymentID), int16(PaymentPending))
		return err
	})
	if err != nil {
		return fmt.Errorf("releasing payment: %w", err)
	}
	return nil
}
