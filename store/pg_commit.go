package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/mod/sumdb/tlog"
)

// pgMaxBatch caps how many verdicts one PostgreSQL transaction stores.
const pgMaxBatch = 256

// pgGroupCommit stores the verdicts of concurrent PutVerdict calls of one
// process in shared transactions: one transaction, one WAL flush, one lock
// of each agent's row and one of the log's sequencer per batch, sent as two
// pipelined round trips (three when the log's hashes must be read: after
// another replica appended). A caller is answered once its batch commits.
//
// As in the bbolt group commit (commit.go), a verdict whose statement fails
// is taken out, the batch committed without it, and then it is written
// alone so that its error is its own.
type pgGroupCommit struct {
	p       *Postgres
	batches batcher[pgPendingVerdict]
	// hashes are log hashes committed by this process's last batch that
	// the next append needs (the frontier of the tree): committed hashes
	// never change, so they stay right whatever other replicas append.
	// Only the batch goroutine uses it.
	hashes map[int64]tlog.Hash
}

// pgPendingVerdict is a verdict waiting for its batch.
type pgPendingVerdict struct {
	w    verdictWrite
	done chan error
}

// newPgGroupCommit returns p's group commit.
func newPgGroupCommit(p *Postgres) *pgGroupCommit {
	g := &pgGroupCommit{p: p}
	g.batches = batcher[pgPendingVerdict]{maxSize: pgMaxBatch, run: g.commit}
	return g
}

// put stores w in the next batch and returns its outcome once the batch
// has committed or failed.
func (g *pgGroupCommit) put(w verdictWrite) error {
	v := pgPendingVerdict{w: w, done: make(chan error, 1)}
	g.batches.add(v)
	return <-v.done
}

// commit writes batch in one transaction, taking out any verdict whose
// statement fails and writing it alone afterwards.
func (g *pgGroupCommit) commit(batch []pgPendingVerdict) {
	var failed []pgPendingVerdict
	for len(batch) > 0 {
		outcomes, failIdx, err := g.try(batch)
		if failIdx >= 0 && len(batch) > 1 {
			failed = append(failed, batch[failIdx])
			batch = slices.Delete(batch, failIdx, failIdx+1)
			continue
		}
		for i, v := range batch {
			if err != nil {
				v.done <- err
			} else {
				v.done <- outcomes[i]
			}
		}
		break
	}
	for _, v := range failed {
		outcomes, _, err := g.try([]pgPendingVerdict{v})
		if err == nil {
			err = outcomes[0]
		}
		v.done <- err
	}
}

// try runs batch's transaction once. outcomes are the verdicts' own
// answers when the transaction committed (nil, or ErrDuplicate for another
// verdict under a stored id); err is the transaction's failure, and
// failIdx the verdict whose statement caused it, -1 when none did.
func (g *pgGroupCommit) try(batch []pgPendingVerdict) (outcomes []error, failIdx int, err error) {
	ctx, cancel := writeContext(context.Background())
	defer cancel()
	failIdx = -1
	conn, err := g.p.pool.Acquire(ctx)
	if err == nil {
		var known map[int64]tlog.Hash
		outcomes, known, err = storeBatch(ctx, conn, batch, &failIdx, cloneHashes(g.hashes))
		if conn.Conn().PgConn().TxStatus() != 'I' {
			// Still in the transaction (a failed write): roll it back, or
			// drop the connection if even that fails.
			if _, rerr := conn.Exec(ctx, "ROLLBACK"); rerr != nil {
				_ = conn.Conn().Close(ctx)
			}
		}
		conn.Release()
		if err == nil {
			g.hashes = known
		}
	}
	g.p.recordWrite(err)
	return outcomes, failIdx, err
}

// Statements of storeBatch besides the verdict's and the log's.
const pgReadRecord = "SELECT record FROM verdicts WHERE verification_id = $1"

// storeBatch stores batch in one transaction on conn, in two pipelined
// round trips: BEGIN, every verdict's INSERT, the agents' row locks (in
// id order, so that replicas' batches cannot deadlock) and the log's
// sequencer lock; then, with the counters added and the log's hashes
// computed in Go, the counters' UPDATEs, the log's writes, the stored
// records of ids that were already taken, and COMMIT. known is the hash
// cache the log append starts from; it is returned with the new tree's
// frontier. When a verdict's INSERT fails, *failIdx is its index. It
// leaves the transaction open on error, for the caller to roll back.
func storeBatch(ctx context.Context, conn *pgxpool.Conn, batch []pgPendingVerdict, failIdx *int, known map[int64]tlog.Hash) ([]error, map[int64]tlog.Hash, error) {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	var agents []string
	for _, v := range batch {
		w := v.w
		var summary []byte
		if w.agent != "" {
			summary = w.summary
			agents = append(agents, w.agent)
		}
		b.Queue(pgInsertVerdict, w.id(), w.nanos, []byte(w.agent), w.agent != "", summary, w.record)
	}
	slices.Sort(agents)
	agents = slices.Compact(agents)
	for _, a := range agents {
		b.Queue(pgLockAgent, []byte(a))
	}
	b.Queue(pgLockLog)
	inserted, aggs, size, err := readFirstRoundTrip(conn.SendBatch(ctx, b), len(batch), agents, failIdx)
	if err != nil {
		return nil, nil, err
	}

	outcomes := make([]error, len(batch))
	var (
		ids      [][]byte
		entries  [][32]byte
		changed  = map[string]bool{}
		firstOf  = map[string]int{} // verification id → the verdict of the batch that inserted it
		toRead   []int              // verdicts whose id was stored before the batch
		aggsByID = make(map[string]*aggregate, len(agents))
	)
	for i, a := range agents {
		aggsByID[a] = &aggs[i]
	}
	for i, v := range batch {
		w := v.w
		if !inserted[i] {
			if j, ok := firstOf[string(w.id())]; ok {
				outcomes[i] = sameRecord(batch[j].w.record, w.record)
			} else {
				toRead = append(toRead, i)
			}
			continue
		}
		firstOf[string(w.id())] = i
		ids, entries = append(ids, w.id()), append(entries, w.entry)
		if w.agent != "" {
			aggsByID[w.agent].add(w.nanos, w.pass)
			changed[w.agent] = true
		}
	}
	reader := &pgHashReader{ctx: ctx, q: conn, known: known}
	plan, err := planLogAppend(size, ids, entries, reader)
	if err != nil {
		return nil, nil, err
	}

	b = &pgx.Batch{}
	for _, a := range agents {
		if changed[a] {
			b.Queue(pgUpdateAgent, aggsByID[a].updateArgs(a)...)
		}
	}
	plan.queue(b)
	for _, i := range toRead {
		b.Queue(pgReadRecord, batch[i].w.id())
	}
	b.Queue("COMMIT")
	br := conn.SendBatch(ctx, b)
	for range b.Len() - len(toRead) - 1 {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return nil, nil, err
		}
	}
	for _, i := range toRead {
		var old []byte
		if err := br.QueryRow().Scan(&old); err != nil {
			_ = br.Close()
			return nil, nil, err
		}
		outcomes[i] = sameRecord(old, batch[i].w.record)
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, nil, err
	}
	if tag.String() != "COMMIT" {
		return nil, nil, pgx.ErrTxCommitRollback
	}
	return outcomes, frontierOf(plan.tree.Size, reader.known), nil
}

// readFirstRoundTrip reads storeBatch's first round trip: whether each of
// the n verdicts was inserted, the agents' counters and the log's size.
// A statement error in a verdict's INSERT sets *failIdx.
func readFirstRoundTrip(br pgx.BatchResults, n int, agents []string, failIdx *int) (inserted []bool, aggs []aggregate, size int64, err error) {
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			inserted, aggs, size, err = nil, nil, 0, cerr
		}
	}()
	if _, err := br.Exec(); err != nil { // BEGIN
		return nil, nil, 0, err
	}
	inserted = make([]bool, n)
	for i := range n {
		tag, err := br.Exec()
		if err != nil {
			if isStatementsOwnError(err) {
				*failIdx = i
			}
			return nil, nil, 0, fmt.Errorf("verdict %d of the batch: %w", i, err)
		}
		inserted[i] = tag.RowsAffected() == 1
	}
	aggs = make([]aggregate, len(agents))
	for i := range agents {
		if err := scanAggregate(br.QueryRow(), &aggs[i]); err != nil {
			return nil, nil, 0, fmt.Errorf("locking agent counters: %w", err)
		}
	}
	if err := br.QueryRow().Scan(&size); err != nil {
		return nil, nil, 0, fmt.Errorf("locking the log: %w", err)
	}
	return inserted, aggs, size, nil
}

// isStatementsOwnError reports whether err is one a statement causes with
// its own data — a data exception (SQLSTATE class 22), an integrity
// constraint (23), a trigger's refusal (P0), a deadlock or serialization
// failure (40), a program limit such as a too large row (54) — and not the
// database's state (read only, shutting down, out of connections), which
// every verdict of the batch would meet alone as well.
func isStatementsOwnError(err error) bool {
	pgErr, ok := errors.AsType[*pgconn.PgError](err)
	if !ok || len(pgErr.Code) != 5 {
		return false
	}
	switch pgErr.Code[:2] {
	case "22", "23", "P0", "40", "54":
		return true
	}
	return false
}

// sameRecord is the outcome of a verdict whose id holds old: nil when old
// is its record, ErrDuplicate otherwise.
func sameRecord(old, record []byte) error {
	if bytes.Equal(old, record) {
		return nil
	}
	return ErrDuplicate
}

// frontierOf keeps of known the hashes of the complete subtrees a tree of
// n records is made of: those that appending to it and hashing the result
// read first.
func frontierOf(n int64, known map[int64]tlog.Hash) map[int64]tlog.Hash {
	out := make(map[int64]tlog.Hash)
	var start int64
	for level := 62; level >= 0; level-- {
		if n&(1<<level) == 0 {
			continue
		}
		idx := tlog.StoredHashIndex(level, start>>level)
		if h, ok := known[idx]; ok {
			out[idx] = h
		}
		start += 1 << level
	}
	return out
}

// cloneHashes copies a hash cache for a transaction that may roll back.
func cloneHashes(m map[int64]tlog.Hash) map[int64]tlog.Hash {
	out := make(map[int64]tlog.Hash, len(m)+16)
	for k, v := range m {
		out[k] = v
	}
	return out
}
