package store

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/tlog"
)

// The transparency log on PostgreSQL (issue #23): the bbolt store's log
// (tlog.go) in three tables (pgschema/0002_log.sql). Appends lock the
// log_head row, the sequencer, in the transaction that stores their
// verdicts: replicas append one transaction at a time, an acknowledged
// verdict has its entry, and an entry has its verdict (a foreign key).

var _ Log = (*Postgres)(nil)

// Statements of the log.
const (
	pgLockLog       = `SELECT size FROM log_head WHERE id = 1 FOR UPDATE`
	pgReadLogHead   = `SELECT size, root FROM log_head WHERE id = 1`
	pgReadLogHashes = `SELECT idx, hash FROM log_hashes WHERE idx = ANY($1)`
	pgInsertHashes  = `INSERT INTO log_hashes (idx, hash) SELECT * FROM unnest($1::bigint[], $2::bytea[])`
	pgInsertEntries = `INSERT INTO log_entries (idx, verification_id, entry)
		SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::bytea[])`
	pgSetLogHead = `UPDATE log_head SET size = $1, root = $2 WHERE id = 1`
)

// pgRows runs a query: a pool, a connection or a transaction.
type pgRows interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// pgHashReader is a tlog.HashReader over q: the hashes in known first
// (hashes once committed never change, and those appended earlier in the
// transaction are there), then one query for the rest, which it keeps.
type pgHashReader struct {
	ctx   context.Context
	q     pgRows
	known map[int64]tlog.Hash
}

// ReadHashes implements tlog.HashReader.
func (r *pgHashReader) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	var missing []int64
	for _, idx := range indexes {
		if _, ok := r.known[idx]; !ok {
			missing = append(missing, idx)
		}
	}
	if len(missing) > 0 {
		rows, err := r.q.Query(r.ctx, pgReadLogHashes, missing)
		if err != nil {
			return nil, fmt.Errorf("reading log hashes: %w", err)
		}
		var (
			idx  int64
			hash []byte
		)
		_, err = pgx.ForEachRow(rows, []any{&idx, &hash}, func() error {
			if len(hash) != tlog.HashSize {
				return fmt.Errorf("%w: log hash %d of %d bytes", ErrCorrupt, idx, len(hash))
			}
			r.known[idx] = tlog.Hash(hash)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading log hashes: %w", err)
		}
	}
	out := make([]tlog.Hash, len(indexes))
	for i, idx := range indexes {
		h, ok := r.known[idx]
		if !ok {
			return nil, fmt.Errorf("%w: log hash %d missing", ErrCorrupt, idx)
		}
		out[i] = h
	}
	return out, nil
}

// pgLogAppend is a batch of records appended to a log of size from: their
// verdicts' ids and entries, the stored hashes they add (from storage
// index tlog.StoredHashIndex(0, from) on) and the tree after them.
type pgLogAppend struct {
	from    int64
	ids     [][]byte
	entries [][]byte
	hashes  []tlog.Hash
	tree    LogTree
}

// planLogAppend computes the append of entries (of the verdicts ids) to
// the log of size from, reading the hashes it needs through r and leaving
// the new ones in r.known.
func planLogAppend(from int64, ids [][]byte, entries [][sha256.Size]byte, r *pgHashReader) (pgLogAppend, error) {
	a := pgLogAppend{from: from, ids: ids, entries: make([][]byte, len(entries))}
	next := tlog.StoredHashIndex(0, from)
	for i := range entries {
		a.entries[i] = entries[i][:]
		hashes, err := tlog.StoredHashes(from+int64(i), entries[i][:], r)
		if err != nil {
			return pgLogAppend{}, fmt.Errorf("appending to the log: %w", err)
		}
		for _, h := range hashes {
			r.known[next] = h
			next++
		}
		a.hashes = append(a.hashes, hashes...)
	}
	a.tree.Size = from + int64(len(entries))
	root, err := tlog.TreeHash(a.tree.Size, r)
	if err != nil {
		return pgLogAppend{}, fmt.Errorf("appending to the log: %w", err)
	}
	a.tree.Hash = root
	return a, nil
}

// queue adds the append's writes to b: hashes, entries, the new head.
func (a pgLogAppend) queue(b *pgx.Batch) {
	if len(a.entries) == 0 {
		return
	}
	first := tlog.StoredHashIndex(0, a.from)
	idx := make([]int64, len(a.hashes))
	hashes := make([][]byte, len(a.hashes))
	for i := range a.hashes {
		idx[i] = first + int64(i)
		hashes[i] = a.hashes[i][:]
	}
	records := make([]int64, len(a.entries))
	for i := range records {
		records[i] = a.from + int64(i)
	}
	b.Queue(pgInsertHashes, idx, hashes)
	b.Queue(pgInsertEntries, records, a.ids, a.entries)
	b.Queue(pgSetLogHead, a.tree.Size, a.tree.Hash[:])
}

// appendLogPg appends the entries of the verdicts ids, already inserted in
// tx, to the log in tx, holding the sequencer (the log_head row) until tx
// ends.
func appendLogPg(ctx context.Context, tx pgx.Tx, ids [][]byte, entries [][sha256.Size]byte) error {
	if len(ids) == 0 {
		return nil
	}
	var size int64
	if err := tx.QueryRow(ctx, pgLockLog).Scan(&size); err != nil {
		return fmt.Errorf("locking the log: %w", err)
	}
	a, err := planLogAppend(size, ids, entries, &pgHashReader{ctx: ctx, q: tx, known: map[int64]tlog.Hash{}})
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	a.queue(b)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("appending to the log: %w", err)
	}
	return nil
}

// pgMigrationHooks are the Go parts of migrations, run in the step's
// transaction after its SQL.
var pgMigrationHooks = map[int]func(context.Context, pgx.Tx) error{
	2: startLogPg,
}

// startLogPg makes the log's head and logs the verdicts stored before the
// log existed, in stored order (verified_at, then verification id, as the
// bbolt store does), so that every stored verdict has a log index.
func startLogPg(ctx context.Context, tx pgx.Tx) error {
	empty, err := tlog.TreeHash(0, nil)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "INSERT INTO log_head (id, size, root) VALUES (1, 0, $1)", empty[:]); err != nil {
		return fmt.Errorf("making the log's head: %w", err)
	}
	rows, err := tx.Query(ctx, "SELECT verification_id, record FROM verdicts ORDER BY verified_at_ns, verification_id")
	if err != nil {
		return fmt.Errorf("logging stored verdicts: %w", err)
	}
	var (
		ids     [][]byte
		entries [][sha256.Size]byte
		id, rec []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &rec}, func() error {
		_, receipt, err := splitRecord(rec)
		if err != nil {
			return fmt.Errorf("verdict %s: %w", id, err)
		}
		entry, err := LogEntry(receipt)
		if err != nil {
			return fmt.Errorf("verdict %s: %w", id, err)
		}
		ids, entries = append(ids, append([]byte(nil), id...)), append(entries, entry)
		return nil
	})
	if err != nil {
		return fmt.Errorf("logging stored verdicts: %w", err)
	}
	if err := appendLogPg(ctx, tx, ids, entries); err != nil {
		return fmt.Errorf("logging stored verdicts: %w", err)
	}
	return nil
}

// readLogHead reads the log's size and root hash.
func readLogHead(ctx context.Context, q pgRows) (LogTree, error) {
	var (
		t    LogTree
		root []byte
	)
	if err := q.QueryRow(ctx, pgReadLogHead).Scan(&t.Size, &root); err != nil {
		return LogTree{}, err
	}
	if len(root) != tlog.HashSize || t.Size < 0 {
		return LogTree{}, fmt.Errorf("%w: log head of size %d, root of %d bytes", ErrCorrupt, t.Size, len(root))
	}
	t.Hash = tlog.Hash(root)
	return t, nil
}

// LogTree returns the log's current size and root hash.
func (p *Postgres) LogTree(ctx context.Context) (LogTree, error) {
	if err := ctx.Err(); err != nil {
		return LogTree{}, err
	}
	t, err := readLogHead(ctx, p.pool)
	if err != nil {
		return LogTree{}, fmt.Errorf("reading the log's tree: %w", err)
	}
	return t, nil
}

// LogIndex returns the log index of the verdict verificationID, one index
// read; ErrNotFound for a verification id with no log entry.
func (p *Postgres) LogIndex(ctx context.Context, verificationID string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if verificationID == "" || len(verificationID) > maxIDLen {
		return 0, fmt.Errorf("reading log index: %w", ErrNotFound)
	}
	var index int64
	err := p.pool.QueryRow(ctx, "SELECT idx FROM log_entries WHERE verification_id = $1", []byte(verificationID)).Scan(&index)
	if errors.Is(err, pgx.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("reading log index of %s: %w", verificationID, err)
	}
	return index, nil
}

// readOnlySnapshot is the transaction of a read that must see one
// snapshot across statements.
var readOnlySnapshot = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

// LogInclusion returns the log index of the verdict verificationID and a
// proof of its inclusion in the current tree, read in one snapshot; it
// returns ErrNotFound for a verification id with no log entry.
func (p *Postgres) LogInclusion(ctx context.Context, verificationID string) (LogInclusion, error) {
	if err := ctx.Err(); err != nil {
		return LogInclusion{}, err
	}
	if verificationID == "" || len(verificationID) > maxIDLen {
		return LogInclusion{}, fmt.Errorf("reading log inclusion: %w", ErrNotFound)
	}
	var inc LogInclusion
	err := pgx.BeginTxFunc(ctx, p.pool, readOnlySnapshot, func(tx pgx.Tx) error {
		var entry []byte
		err := tx.QueryRow(ctx, "SELECT idx, entry FROM log_entries WHERE verification_id = $1",
			[]byte(verificationID)).Scan(&inc.Index, &entry)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if len(entry) != sha256.Size {
			return fmt.Errorf("%w: log entry %d of %d bytes", ErrCorrupt, inc.Index, len(entry))
		}
		inc.Entry = [sha256.Size]byte(entry)
		if inc.Tree, err = readLogHead(ctx, tx); err != nil {
			return err
		}
		if inc.Index >= inc.Tree.Size {
			return fmt.Errorf("%w: log index %d beyond log size %d", ErrCorrupt, inc.Index, inc.Tree.Size)
		}
		inc.Proof, err = tlog.ProveRecord(inc.Tree.Size, inc.Index, &pgHashReader{ctx: ctx, q: tx, known: map[int64]tlog.Hash{}})
		return err
	})
	if err != nil {
		return LogInclusion{}, fmt.Errorf("reading log inclusion of %s: %w", verificationID, err)
	}
	return inc, nil
}

// LogTile returns the hashes of tile t (height TileHeight, level ≥ 0) of
// the current tree, ErrNotFound when the tree does not cover it yet.
// Stored hashes never change once committed, so the size and the hashes
// need not be read in one snapshot.
func (p *Postgres) LogTile(ctx context.Context, t tlog.Tile) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	leaves, ok := tileLeaves(t)
	if !ok {
		return nil, fmt.Errorf("reading log tile %s: %w", t.Path(), ErrNotFound)
	}
	tree, err := readLogHead(ctx, p.pool)
	if err == nil && leaves > tree.Size {
		err = ErrNotFound
	}
	var data []byte
	if err == nil {
		data, err = tlog.ReadTileData(t, &pgHashReader{ctx: ctx, q: p.pool, known: map[int64]tlog.Hash{}})
	}
	if err != nil {
		return nil, fmt.Errorf("reading log tile %s: %w", t.Path(), err)
	}
	return data, nil
}

// LogEntries returns the C2SP tlog-tiles entry bundle of entries
// n·256 … n·256+width-1: each entry as a 2-byte big-endian length and its
// bytes; ErrNotFound when the log does not hold them all yet.
func (p *Postgres) LogEntries(ctx context.Context, n int64, width int) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !entryBundleInRange(n, width) {
		return nil, fmt.Errorf("reading log entries %d: %w", n, ErrNotFound)
	}
	first := n << TileHeight
	bundle := make([]byte, 0, width*(2+sha256.Size))
	rows, err := p.pool.Query(ctx, "SELECT idx, entry FROM log_entries WHERE idx >= $1 AND idx < $2 ORDER BY idx",
		first, first+int64(width))
	if err != nil {
		return nil, fmt.Errorf("reading log entries %d: %w", n, err)
	}
	var (
		idx   int64
		entry []byte
	)
	want := first
	_, err = pgx.ForEachRow(rows, []any{&idx, &entry}, func() error {
		if idx != want || len(entry) != sha256.Size {
			return fmt.Errorf("%w: log entry %d of %d bytes where %d was due", ErrCorrupt, idx, len(entry), want)
		}
		want++
		bundle = appendBundleEntry(bundle, entry)
		return nil
	})
	if err == nil && want != first+int64(width) {
		err = ErrNotFound // entries are committed in index order with the head: the log is shorter
	}
	if err != nil {
		return nil, fmt.Errorf("reading log entries %d: %w", n, err)
	}
	return bundle, nil
}

// LogReceipts returns the stored compact receipts of records
// first … first+count-1, in log order; ErrNotFound when the log does not
// hold them all, ErrInvalidArgument unless first ≥ 0 and count is 1 to
// MaxLogReceipts.
func (p *Postgres) LogReceipts(ctx context.Context, first int64, count int) ([]json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkLogReceiptsRange(first, count); err != nil {
		return nil, err
	}
	rows, err := p.pool.Query(ctx, `SELECT e.idx, v.record FROM log_entries e JOIN verdicts v USING (verification_id)
		WHERE e.idx >= $1 AND e.idx < $2 ORDER BY e.idx`, first, first+int64(count))
	if err != nil {
		return nil, fmt.Errorf("reading log receipts %d+%d: %w", first, count, err)
	}
	out := make([]json.RawMessage, 0, count)
	var (
		idx    int64
		record []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&idx, &record}, func() error {
		if idx != first+int64(len(out)) {
			return fmt.Errorf("%w: log record %d where %d was due", ErrCorrupt, idx, first+int64(len(out)))
		}
		_, receipt, err := splitRecord(record)
		if err != nil {
			return err
		}
		out = append(out, json.RawMessage(append([]byte(nil), receipt...)))
		return nil
	})
	if err == nil && len(out) != count {
		err = ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading log receipts %d+%d: %w", first, count, err)
	}
	return out, nil
}
