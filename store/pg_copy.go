package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/tlog"
)

// copyChunk is how many entries one transaction of CopyToPostgres writes.
const copyChunk = 500

// DefaultCopySample is how many receipts CopyToPostgres compares byte for
// byte after copying, besides the first and the last.
const DefaultCopySample = 100

// CopyReport is what [CopyToPostgres] copied and checked.
type CopyReport struct {
	Verdicts  int `json:"verdicts"`  // verdicts in the bbolt file, each now in the database
	Agents    int `json:"agents"`    // counted agents, each with counters at least the file's
	Payments  int `json:"payments"`  // payment ids in use, copied with their state and retention
	Allowance int `json:"allowance"` // allowance counters (client and UTC day)
	Sampled   int `json:"sampled"`   // receipts compared byte for byte
	// SigningKeys is how many recorded signing keys the file had, each now
	// recorded in the database (with the log's identity, when the file
	// records one).
	SigningKeys int `json:"signing_keys"`
	// LogIdentity is what became of the file's log origin and key:
	// LogIdentityCopied, LogIdentityKept, or "" when it records none.
	LogIdentity string `json:"log_identity,omitempty"`
	// LogSize is the database's log size after the copy; copied into an
	// empty log, the file's log is reproduced, root hash and all.
	LogSize int64 `json:"log_size"`
}

// CopyToPostgres copies the history of a bbolt store into a PostgreSQL one:
// its key records first (every signing key — a key version the database
// binds to another key is ErrKeyConflict, before anything else is copied —
// and the log's identity when the database records none), every verdict (its stored record byte for byte, counted for its agent,
// appended to the database's log in the order of the file's log), the
// payment ids in use and the allowance counters. It is idempotent: a
// verdict already in the database is left as it is (a different one under
// the same id is ErrDuplicate), a payment id already used keeps what the
// database recorded, an allowance counter keeps the larger count. Then it
// checks that every verdict of the file is in the database, that each
// agent's counters there are at least the file's, that sample receipts
// (the first, the last and up to sample more at random) are the file's
// byte for byte, and, when the database's log was empty, that its log is
// now the file's (same size and root hash).
func CopyToPostgres(ctx context.Context, from *Bolt, to *Postgres, sample int) (CopyReport, error) {
	var r CopyReport
	logBefore, err := to.LogTree(ctx)
	if err != nil {
		return r, fmt.Errorf("copying %s to %s: %w", from.path, to.name, err)
	}
	err = from.db.View(func(tx *bolt.Tx) error {
		steps := []struct {
			what string
			fn   func(context.Context, *bolt.Tx, *Postgres) (int, error)
		}{
			{"verdicts", copyVerdicts},
			{"payments", copyPayments},
			{"allowance", copyAllowance},
		}
		if err := copyKeyRecords(ctx, tx, to, &r); err != nil {
			return fmt.Errorf("copying key records: %w", err)
		}
		counts := []*int{&r.Verdicts, &r.Payments, &r.Allowance}
		for i, step := range steps {
			n, err := step.fn(ctx, tx, to)
			if err != nil {
				return fmt.Errorf("copying %s: %w", step.what, err)
			}
			*counts[i] = n
		}
		var err error
		if r.Agents, err = checkAgentsCopied(ctx, tx, to); err != nil {
			return err
		}
		if r.Sampled, err = checkReceiptsCopied(ctx, tx, to, sample); err != nil {
			return err
		}
		r.LogSize, err = checkLogCopied(ctx, tx, to, logBefore.Size == 0)
		return err
	})
	if err != nil {
		return r, fmt.Errorf("copying %s to %s: %w", from.path, to.name, err)
	}
	return r, nil
}

// copyVerdicts copies the verdicts in the order of the file's log, a
// chunk per transaction, each appending the verdicts it stores to the
// database's log.
func copyVerdicts(ctx context.Context, tx *bolt.Tx, to *Postgres) (int, error) {
	keys, err := verdictKeysInLogOrder(tx)
	if err != nil {
		return 0, err
	}
	verdicts := tx.Bucket(bucketVerdicts)
	for start := 0; start < len(keys); start += copyChunk {
		chunk := make([]verdictWrite, 0, copyChunk)
		for _, key := range keys[start:min(start+copyChunk, len(keys))] {
			w, err := storedVerdictWrite(key, verdicts.Get(key))
			if err != nil {
				return 0, err
			}
			chunk = append(chunk, w)
		}
		err := to.write(ctx, func(ctx context.Context, ptx pgx.Tx) error { return applyPgLogged(ctx, ptx, chunk) })
		if err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// verdictKeysInLogOrder returns the verdicts bucket's keys ordered by
// their log index; every verdict of an open file has one.
func verdictKeysInLogOrder(tx *bolt.Tx) ([][]byte, error) {
	type logged struct {
		index uint64
		key   []byte
	}
	var all []logged
	err := tx.Bucket(bucketVerdicts).ForEach(func(key, _ []byte) error {
		if len(key) <= 8 {
			return fmt.Errorf("%w: malformed verdict key %x", ErrCorrupt, key)
		}
		raw, err := logIndexIn(tx, string(key[8:]))
		if err != nil {
			return fmt.Errorf("verdict %s: log index: %w", key[8:], err)
		}
		all = append(all, logged{binary.BigEndian.Uint64(raw), key})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(a, b logged) int { return cmp.Compare(a.index, b.index) })
	keys := make([][]byte, len(all))
	for i, l := range all {
		keys[i] = l.key
	}
	return keys, nil
}

// checkLogCopied returns the database's log size; when wasEmpty, the
// database's log must now be the file's: same size, same root hash.
func checkLogCopied(ctx context.Context, tx *bolt.Tx, to *Postgres, wasEmpty bool) (int64, error) {
	got, err := to.LogTree(ctx)
	if err != nil || !wasEmpty {
		return got.Size, err
	}
	want := LogTree{}
	if want.Size, err = logSize(tx); err != nil {
		return 0, err
	}
	if want.Hash, err = tlog.TreeHash(want.Size, txHashReader{tx.Bucket(bucketLogHashes)}); err != nil {
		return 0, err
	}
	if got != want {
		return 0, fmt.Errorf("checking the copy: the database's log is %d records with root %s, the file's %d with root %s",
			got.Size, got.Hash, want.Size, want.Hash)
	}
	return got.Size, nil
}

// storedVerdictWrite is the write of a stored verdict that keeps its record
// as it is in the file.
func storedVerdictWrite(key, record []byte) (verdictWrite, error) {
	if len(key) <= 8 {
		return verdictWrite{}, fmt.Errorf("%w: malformed verdict key %x", ErrCorrupt, key)
	}
	v, err := decodeVerdict(record)
	if err != nil {
		return verdictWrite{}, fmt.Errorf("verdict %s: %w", key[8:], err)
	}
	w, err := prepareVerdict(nil, v)
	if err != nil {
		return verdictWrite{}, fmt.Errorf("verdict %s: %w", key[8:], err)
	}
	w.key, w.record = bytes.Clone(key), bytes.Clone(record)
	return w, nil
}

// copyPayments copies the payment ids in use; one already in the database
// keeps what is recorded there.
func copyPayments(ctx context.Context, tx *bolt.Tx, to *Postgres) (int, error) {
	type payment struct {
		id, tail []byte
		deadline int64
		state    PaymentState
	}
	var all []payment
	err := tx.Bucket(bucketPayments).ForEach(func(id, v []byte) error {
		use, err := decodePaymentUse(v)
		if err != nil {
			return fmt.Errorf("payment %q: %w", id, err)
		}
		all = append(all, payment{id: bytes.Clone(id), tail: bytes.Clone(v[8:]), deadline: readTime(v), state: use.State})
		return nil
	})
	if err != nil {
		return 0, err
	}
	for start := 0; start < len(all); start += copyChunk {
		chunk := all[start:min(start+copyChunk, len(all))]
		err := to.write(ctx, func(ctx context.Context, ptx pgx.Tx) error {
			for _, p := range chunk {
				_, err := ptx.Exec(ctx, `INSERT INTO payments (payment_id, deadline_ns, state, record) VALUES ($1, $2, $3, $4)
					ON CONFLICT (payment_id) DO NOTHING`, p.id, p.deadline, int16(p.state), p.tail)
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return len(all), nil
}

// copyAllowance copies the allowance counters, keeping the larger count
// where the database has one.
func copyAllowance(ctx context.Context, tx *bolt.Tx, to *Postgres) (int, error) {
	n := 0
	err := to.write(ctx, func(ctx context.Context, ptx pgx.Tx) error {
		n = 0
		return tx.Bucket(bucketAllowance).ForEach(func(k, v []byte) error {
			used, err := decodeCount(v)
			if err != nil {
				return err
			}
			if len(k) < len(dayLayout) {
				return fmt.Errorf("%w: allowance key %q", ErrCorrupt, k)
			}
			day, err := parseDay(string(k[:len(dayLayout)]))
			if err != nil {
				return fmt.Errorf("%w: allowance key %q: %v", ErrCorrupt, k, err)
			}
			_, err = ptx.Exec(ctx, `INSERT INTO allowance AS a (day, client, used) VALUES ($1, $2, $3)
				ON CONFLICT (day, client) DO UPDATE SET used = greatest(a.used, EXCLUDED.used)`,
				day, bytes.Clone(k[len(dayLayout):]), int64(used))
			n++
			return err
		})
	})
	return n, err
}

// checkAgentsCopied checks that each agent's counters in the database are
// at least the file's (more when replicas wrote for it already).
func checkAgentsCopied(ctx context.Context, tx *bolt.Tx, to *Postgres) (int, error) {
	n := 0
	err := tx.Bucket(bucketAgents).ForEach(func(agent, v []byte) error {
		want, err := decodeAggregate(v)
		if err != nil {
			return fmt.Errorf("agent %q: %w", agent, err)
		}
		var total, passed, failed int64
		err = to.pool.QueryRow(ctx, "SELECT total, passed, failed FROM agents WHERE agent_id = $1", agent).Scan(&total, &passed, &failed)
		if errors.Is(err, pgx.ErrNoRows) || err == nil && (uint64(total) < want.total || uint64(passed) < want.passed || uint64(failed) < want.failed) {
			return fmt.Errorf("checking the copy: agent %q has %d/%d/%d verdicts (total/passed/failed) in the database, %d/%d/%d in the file",
				agent, total, passed, failed, want.total, want.passed, want.failed)
		}
		if err != nil {
			return fmt.Errorf("checking the copy: %w", err)
		}
		n++
		return nil
	})
	return n, err
}

// checkReceiptsCopied compares the first, the last and up to sample
// verdicts at random, record and receipt, byte for byte.
func checkReceiptsCopied(ctx context.Context, tx *bolt.Tx, to *Postgres, sample int) (int, error) {
	verdicts := tx.Bucket(bucketVerdicts)
	total := verdicts.Stats().KeyN
	if total == 0 {
		return 0, nil
	}
	picked := map[int]bool{0: true, total - 1: true}
	for range min(sample, total) {
		picked[rand.IntN(total)] = true
	}
	checked, i := 0, 0
	err := verdicts.ForEach(func(key, record []byte) error {
		defer func() { i++ }()
		if !picked[i] {
			return nil
		}
		id := string(key[8:])
		got, err := to.Receipt(ctx, id)
		if err != nil {
			return fmt.Errorf("checking the copy: %w", err)
		}
		var stored []byte
		if err := to.pool.QueryRow(ctx, "SELECT record FROM verdicts WHERE verification_id = $1", key[8:]).Scan(&stored); err != nil {
			return fmt.Errorf("checking the copy: verdict %s: %w", id, err)
		}
		_, receipt, err := splitRecord(record)
		if err != nil {
			return err
		}
		if !bytes.Equal(stored, record) || !bytes.Equal(got.Receipt, receipt) {
			return fmt.Errorf("checking the copy: verdict %s differs from the file's", id)
		}
		checked++
		return nil
	})
	return checked, err
}

// parseDay reads an allowance key's UTC date.
func parseDay(s string) (time.Time, error) {
	return time.ParseInLocation(dayLayout, s, time.UTC)
}
