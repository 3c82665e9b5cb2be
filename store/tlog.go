package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/verifier-dev/verifier/signing"
)

// The transparency log (issue #23). Every stored verdict is appended, in
// the transaction that stores it, to an RFC 6962 Merkle log kept with
// golang.org/x/mod/sumdb/tlog. A log entry is LogEntry(receipt): the
// SHA-256 of the RFC 8785 form of the stored compact receipt, so the log
// publishes no receipt content, every entry is 32 bytes, and a receipt
// re-serialized by a client (an MCP client, a browser) still hashes to
// its entry.
var (
	// bucketLogHashes holds tlog's stored hashes, keyed by their 8-byte
	// big-endian storage index (tlog.StoredHashIndex).
	bucketLogHashes = []byte("log_hashes")
	// bucketLogIndex maps a verdict's verdicts-bucket key (verified_at,
	// then the verification id: timeKey) to its 8-byte big-endian record
	// index in the log; verdict_ids gives the key of an id. Keyed by time,
	// not by the random id, it grows at its end as the verdicts bucket
	// does, so a commit writes one or two of its leaf pages instead of one
	// per verdict (BENCHMARKS.md, "Transparency log").
	bucketLogIndex = []byte("log_index_by_time")
	// bucketLogIndexByID is the log index as files written before
	// bucketLogIndex keep it, keyed by verification id; open moves it into
	// bucketLogIndex (migrateLogIndex).
	bucketLogIndexByID = []byte("log_index")
	// bucketLogEntries maps an 8-byte big-endian record index to its
	// 32-byte entry followed by the verification id of its verdict, so
	// that a record's receipt can be served (LogReceipts). One bucket, not
	// two, so a commit writes one growing page for them (BENCHMARKS.md,
	// "Transparency log").
	bucketLogEntries = []byte("log_entries")
	// bucketLogIDs is where files written before the verification id moved
	// into bucketLogEntries keep it, by record index; open moves it
	// (migrateLogEntryIDs) and drops the bucket.
	bucketLogIDs = []byte("log_ids")

	// keyLogSize, in the meta bucket, is the number of records in the log.
	keyLogSize = []byte("log_size")
)

// LogEntry returns the log entry of a compact receipt: the SHA-256 of its
// RFC 8785 canonical form. It fails when receipt is not I-JSON.
func LogEntry(receipt []byte) ([sha256.Size]byte, error) {
	canonical, err := signing.Canonicalize(receipt)
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("canonicalizing a receipt for its log entry: %w", err)
	}
	return sha256.Sum256(canonical), nil
}

// LogTree is a state of the log: its size and root hash.
type LogTree struct {
	Size int64
	Hash tlog.Hash
}

// logSize returns the number of records in the log as of tx.
func logSize(tx *bolt.Tx) (int64, error) {
	raw := tx.Bucket(bucketMeta).Get(keyLogSize)
	if raw == nil {
		return 0, nil
	}
	if len(raw) != 8 || binary.BigEndian.Uint64(raw) > 1<<62 {
		return 0, fmt.Errorf("%w: log size of %d bytes", ErrCorrupt, len(raw))
	}
	return int64(binary.BigEndian.Uint64(raw)), nil
}

// txHashReader reads the stored hashes of tx's log bucket, including those
// written earlier in tx.
type txHashReader struct{ b *bolt.Bucket }

// ReadHashes implements tlog.HashReader.
func (r txHashReader) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, idx := range indexes {
		raw := r.b.Get(encodeUint64(uint64(idx)))
		if len(raw) != tlog.HashSize {
			return nil, fmt.Errorf("%w: log hash %d missing or of %d bytes", ErrCorrupt, idx, len(raw))
		}
		copy(out[i][:], raw)
	}
	return out, nil
}

// appendLog appends entry, the entry of the verdict stored under key in
// the verdicts bucket, to the log in tx and records its index.
func appendLog(tx *bolt.Tx, key []byte, entry [sha256.Size]byte) error {
	n, err := logSize(tx)
	if err != nil {
		return err
	}
	hashes := tx.Bucket(bucketLogHashes)
	stored, err := tlog.StoredHashes(n, entry[:], txHashReader{hashes})
	if err != nil {
		return fmt.Errorf("appending to the log: %w", err)
	}
	first := tlog.StoredHashIndex(0, n)
	hashes.FillPercent = 1.0 // appended in key order
	for i, h := range stored {
		if err := hashes.Put(encodeUint64(uint64(first+int64(i))), h[:]); err != nil {
			return err
		}
	}
	index := encodeUint64(uint64(n))
	byTime := tx.Bucket(bucketLogIndex)
	byTime.FillPercent = verdictsFillPercent // nearly in key order, as verdicts
	if err := byTime.Put(key, index); err != nil {
		return err
	}
	entries := tx.Bucket(bucketLogEntries)
	entries.FillPercent = 1.0
	if err := entries.Put(index, logEntryValue(entry[:], key[8:])); err != nil {
		return err
	}
	return tx.Bucket(bucketMeta).Put(keyLogSize, encodeUint64(uint64(n+1)))
}

// logEntryValue returns the log_entries value of a record: its 32-byte
// entry, then the verification id of its verdict.
func logEntryValue(entry, verificationID []byte) []byte {
	return append(append(make([]byte, 0, len(entry)+len(verificationID)), entry...), verificationID...)
}

// splitLogEntry splits the log_entries value of record index into its
// entry and the verification id of its verdict; ErrCorrupt when either
// is missing.
func splitLogEntry(index int64, value []byte) (entry, verificationID []byte, err error) {
	if len(value) <= sha256.Size || len(value) > sha256.Size+maxIDLen {
		return nil, nil, fmt.Errorf("%w: log entry %d missing or of %d bytes", ErrCorrupt, index, len(value))
	}
	return value[:sha256.Size], value[sha256.Size:], nil
}

// migrateLogEntryIDs gives every entry of a file written before
// log_entries held the verification ids (a bare 32-byte entry, the id in
// a log_ids bucket or nowhere) its verdict's id, read from the log index
// (after migrateLogIndex), and drops log_ids. It runs in the open
// transaction and does nothing on a file of the current layout: one whose
// last entry carries an id and that has no log_ids bucket (a binary of
// the old layout writing to the file would have made both).
func migrateLogEntryIDs(tx *bolt.Tx) error {
	n, err := logSize(tx)
	if err != nil {
		return err
	}
	entries := tx.Bucket(bucketLogEntries)
	_, last := entries.Cursor().Last()
	if tx.Bucket(bucketLogIDs) == nil && (n == 0 || len(last) > sha256.Size) {
		return nil
	}
	moved := int64(0)
	err = tx.Bucket(bucketLogIndex).ForEach(func(key, index []byte) error {
		if len(key) <= 8 || len(index) != 8 || binary.BigEndian.Uint64(index) >= uint64(n) {
			return fmt.Errorf("%w: log index under %x is %x in a log of %d", ErrCorrupt, key, index, n)
		}
		old := entries.Get(index)
		if len(old) < sha256.Size {
			return fmt.Errorf("%w: log entry %d missing or of %d bytes", ErrCorrupt, binary.BigEndian.Uint64(index), len(old))
		}
		moved++
		return entries.Put(bytes.Clone(index), logEntryValue(old[:sha256.Size], key[8:]))
	})
	if err == nil && moved != n {
		err = fmt.Errorf("%w: the log index names %d of the log's %d records", ErrCorrupt, moved, n)
	}
	if err == nil && tx.Bucket(bucketLogIDs) != nil {
		err = tx.DeleteBucket(bucketLogIDs)
	}
	if err != nil {
		return fmt.Errorf("moving the log's verification ids into %s: %w", bucketLogEntries, err)
	}
	return nil
}

// checkLogReceiptsRange is LogReceipts' check of its arguments, the same
// on every backend.
func checkLogReceiptsRange(first int64, count int) error {
	if first < 0 || first > 1<<56 || count < 1 || count > MaxLogReceipts {
		return fmt.Errorf("reading log receipts from %d: %w: want first ≥ 0 and 1 to %d receipts", first, ErrInvalidArgument, MaxLogReceipts)
	}
	return nil
}

// MaxLogReceipts is the most receipts one LogReceipts call returns: a
// tile's width, as one GET /log/receipts bundle holds.
const MaxLogReceipts = 1 << TileHeight

// LogReceipts returns the stored compact receipts of log records first …
// first+count-1, in log order, byte for byte as stored (record i's entry
// is LogEntry of receipt i). count must be 1 to MaxLogReceipts
// (ErrInvalidArgument otherwise); ErrNotFound when the log does not hold
// them all yet.
func (b *Bolt) LogReceipts(ctx context.Context, first int64, count int) ([]json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkLogReceiptsRange(first, count); err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, 0, count)
	err := b.db.View(func(tx *bolt.Tx) error {
		size, err := logSize(tx)
		if err != nil {
			return err
		}
		if first+int64(count) > size {
			return ErrNotFound
		}
		entries, verdictIDs, verdicts := tx.Bucket(bucketLogEntries), tx.Bucket(bucketVerdictIDs), tx.Bucket(bucketVerdicts)
		for i := first; i < first+int64(count); i++ {
			_, id, err := splitLogEntry(i, entries.Get(encodeUint64(uint64(i))))
			if err != nil {
				return err
			}
			record, err := storedRecord(verdicts, verdictIDs.Get(id), id)
			if err != nil {
				return fmt.Errorf("log record %d: %w", i, err)
			}
			_, receipt, err := splitRecord(record)
			if err != nil {
				return fmt.Errorf("log record %d: %w", i, err)
			}
			out = append(out, bytes.Clone(receipt))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading log receipts from %d: %w", first, err)
	}
	return out, nil
}

// LogTree returns the log's current size and root hash.
func (b *Bolt) LogTree(ctx context.Context) (LogTree, error) {
	if err := ctx.Err(); err != nil {
		return LogTree{}, err
	}
	var t LogTree
	err := b.db.View(func(tx *bolt.Tx) (err error) {
		t, err = logTreeIn(tx)
		return err
	})
	if err != nil {
		return LogTree{}, fmt.Errorf("reading the log's tree: %w", err)
	}
	return t, nil
}

// logTreeIn returns the log's size and root hash as of tx.
func logTreeIn(tx *bolt.Tx) (LogTree, error) {
	size, err := logSize(tx)
	if err != nil {
		return LogTree{}, err
	}
	hash, err := tlog.TreeHash(size, txHashReader{tx.Bucket(bucketLogHashes)})
	if err != nil {
		return LogTree{}, err
	}
	return LogTree{Size: size, Hash: hash}, nil
}

// LogInclusion is a verdict's place in the log and its proof of inclusion
// in Tree.
type LogInclusion struct {
	Index int64
	Entry [sha256.Size]byte
	Tree  LogTree
	Proof tlog.RecordProof
}

// logIndexIn reads the 8-byte log index key of verificationID as of tx:
// ErrNotFound when no such verdict is stored or it has no entry.
func logIndexIn(tx *bolt.Tx, verificationID string) ([]byte, error) {
	id := []byte(verificationID)
	at := tx.Bucket(bucketVerdictIDs).Get(id)
	if at == nil {
		return nil, ErrNotFound
	}
	if len(at) != 8 {
		return nil, fmt.Errorf("%w: id entry of %d bytes", ErrCorrupt, len(at))
	}
	var key [8 + maxIDLen]byte
	raw := tx.Bucket(bucketLogIndex).Get(append(append(key[:0], at...), id...))
	if raw == nil {
		return nil, ErrNotFound
	}
	if len(raw) != 8 {
		return nil, fmt.Errorf("%w: log index of %d bytes", ErrCorrupt, len(raw))
	}
	return raw, nil
}

// LogIndex returns the log index of the verdict verificationID — one key
// read, for an answer's Log-Index; ErrNotFound for a verification id with
// no log entry.
func (b *Bolt) LogIndex(ctx context.Context, verificationID string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if verificationID == "" || len(verificationID) > maxIDLen {
		return 0, fmt.Errorf("reading log index: %w", ErrNotFound)
	}
	var index int64
	err := b.db.View(func(tx *bolt.Tx) error {
		raw, err := logIndexIn(tx, verificationID)
		if err == nil {
			index = int64(binary.BigEndian.Uint64(raw))
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("reading log index of %s: %w", verificationID, err)
	}
	return index, nil
}

// LogInclusion returns the log index of the verdict verificationID and a
// proof of its inclusion in the current tree, read in one transaction; it
// returns ErrNotFound for a verification id with no log entry.
func (b *Bolt) LogInclusion(ctx context.Context, verificationID string) (LogInclusion, error) {
	if err := ctx.Err(); err != nil {
		return LogInclusion{}, err
	}
	if verificationID == "" || len(verificationID) > maxIDLen {
		return LogInclusion{}, fmt.Errorf("reading log inclusion: %w", ErrNotFound)
	}
	var inc LogInclusion
	err := b.db.View(func(tx *bolt.Tx) error {
		raw, err := logIndexIn(tx, verificationID)
		if err != nil {
			return err
		}
		inc.Index = int64(binary.BigEndian.Uint64(raw))
		entry, _, err := splitLogEntry(inc.Index, tx.Bucket(bucketLogEntries).Get(raw))
		if err != nil {
			return err
		}
		copy(inc.Entry[:], entry)
		if inc.Tree.Size, err = logSize(tx); err != nil {
			return err
		}
		if inc.Index >= inc.Tree.Size {
			return fmt.Errorf("%w: log index %d beyond log size %d", ErrCorrupt, inc.Index, inc.Tree.Size)
		}
		r := txHashReader{tx.Bucket(bucketLogHashes)}
		if inc.Tree.Hash, err = tlog.TreeHash(inc.Tree.Size, r); err != nil {
			return err
		}
		inc.Proof, err = tlog.ProveRecord(inc.Tree.Size, inc.Index, r)
		return err
	})
	if err != nil {
		return LogInclusion{}, fmt.Errorf("reading log inclusion of %s: %w", verificationID, err)
	}
	return inc, nil
}

// checkLogEmpty refuses Options.NoLog on a file whose log holds an entry.
func checkLogEmpty(tx *bolt.Tx) error {
	n, err := logSize(tx)
	if err == nil && n > 0 {
		err = fmt.Errorf("%w: NoLog on a file whose transparency log holds %d entries: "+
			"verdicts stored without the log would be missing from it", ErrInvalidArgument, n)
	}
	return err
}

// migrateLogIndex moves the log index of a file that keeps it by
// verification id (bucketLogIndexByID) into bucketLogIndex, keyed by each
// verdict's verdicts-bucket key, and drops the old bucket. It runs in the
// open transaction, after the buckets are created.
func migrateLogIndex(tx *bolt.Tx) error {
	old := tx.Bucket(bucketLogIndexByID)
	if old == nil {
		return nil
	}
	ids, byTime := tx.Bucket(bucketVerdictIDs), tx.Bucket(bucketLogIndex)
	byTime.FillPercent = verdictsFillPercent
	err := old.ForEach(func(id, index []byte) error {
		at := ids.Get(id)
		if len(at) != 8 || len(index) != 8 {
			return fmt.Errorf("%w: log index of %q: no stored verdict, or of %d bytes", ErrCorrupt, id, len(index))
		}
		return byTime.Put(append(bytes.Clone(at), id...), index)
	})
	if err != nil {
		return fmt.Errorf("moving the log index to %s: %w", bucketLogIndex, err)
	}
	return tx.DeleteBucket(bucketLogIndexByID)
}

// logStoredVerdicts appends to an empty log, in stored (verified_at)
// order, the verdicts of a file written before the log existed, so that
// every stored verdict has a log index. It runs in the open transaction.
func logStoredVerdicts(tx *bolt.Tx) error {
	n, err := logSize(tx)
	if err != nil || n > 0 {
		return err
	}
	c := tx.Bucket(bucketVerdicts).Cursor()
	for k, record := c.First(); k != nil; k, record = c.Next() {
		if len(k) <= 8 {
			return fmt.Errorf("%w: malformed verdict key %x", ErrCorrupt, k)
		}
		v, err := decodeVerdict(record)
		if err != nil {
			return fmt.Errorf("logging stored verdict %s: %w", k[8:], err)
		}
		entry, err := LogEntry(v.Receipt)
		if err == nil {
			err = appendLog(tx, k, entry)
		}
		if err != nil {
			return fmt.Errorf("logging stored verdict %s: %w", k[8:], err)
		}
	}
	return nil
}

// TileHeight is the log's tile height: 2^8 hashes per full tile, as C2SP
// tlog-tiles and the Go checksum database use.
const TileHeight = 8

// Log is what a store with a transparency log serves: bbolt, PostgreSQL
// and the shared store all keep one; see [LogOf].
type Log interface {
	LogTree(ctx context.Context) (LogTree, error)
	LogInclusion(ctx context.Context, verificationID string) (LogInclusion, error)
	LogIndex(ctx context.Context, verificationID string) (int64, error)
	LogTile(ctx context.Context, t tlog.Tile) ([]byte, error)
	LogEntries(ctx context.Context, n int64, width int) ([]byte, error)
	// LogReceipts returns the stored compact receipts of records first …
	// first+count-1 in log order; ErrNotFound when the log does not hold
	// them all.
	LogReceipts(ctx context.Context, first int64, count int) ([]json.RawMessage, error)
}

// The stores that keep a log: a missing method would make LogOf answer
// "no log" silently.
var (
	_ Log = (*Bolt)(nil)
	_ Log = (*Shared)(nil)
	_ Log = (*rpcClient)(nil)
	_ Log = (*Postgres)(nil)
)

// ErrNoLog is the answer of a log read on a store that keeps no log.
var ErrNoLog = errors.New("the store keeps no transparency log")

// LogOf returns st's transparency log, seeing through [Instrumented]; ok
// is false for a store without one.
func LogOf(st Store) (l Log, ok bool) {
	if in, wrapped := st.(*instrumented); wrapped {
		st = in.st
	}
	l, ok = st.(Log)
	return l, ok
}

// LogTile returns the hashes of tile t (height TileHeight, level ≥ 0) of
// the current tree, ErrNotFound when the tree does not cover it yet.
func (b *Bolt) LogTile(ctx context.Context, t tlog.Tile) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	leaves, ok := tileLeaves(t)
	if !ok {
		return nil, fmt.Errorf("reading log tile %s: %w", t.Path(), ErrNotFound)
	}
	var data []byte
	err := b.db.View(func(tx *bolt.Tx) error {
		size, err := logSize(tx)
		if err != nil {
			return err
		}
		if leaves > size {
			return ErrNotFound
		}
		data, err = tlog.ReadTileData(t, txHashReader{tx.Bucket(bucketLogHashes)})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading log tile %s: %w", t.Path(), err)
	}
	return data, nil
}

// LogEntries returns the C2SP tlog-tiles entry bundle of entries
// n·256 … n·256+width-1: each entry as a 2-byte big-endian length and its
// bytes; ErrNotFound when the log does not hold them all yet.
func (b *Bolt) LogEntries(ctx context.Context, n int64, width int) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !entryBundleInRange(n, width) {
		return nil, fmt.Errorf("reading log entries %d: %w", n, ErrNotFound)
	}
	first := n << TileHeight
	bundle := make([]byte, 0, width*(2+sha256.Size))
	err := b.db.View(func(tx *bolt.Tx) error {
		size, err := logSize(tx)
		if err != nil {
			return err
		}
		if first+int64(width) > size {
			return ErrNotFound
		}
		entries := tx.Bucket(bucketLogEntries)
		for i := first; i < first+int64(width); i++ {
			e, _, err := splitLogEntry(i, entries.Get(encodeUint64(uint64(i))))
			if err != nil {
				return err
			}
			bundle = appendBundleEntry(bundle, e)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading log entries %d: %w", n, err)
	}
	return bundle, nil
}
