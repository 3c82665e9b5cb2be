package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/tlog"
)

// Verify checks the whole database, as [Bolt.Verify] checks a file: every
// verdict's record is its own (id and verified_at), the log has one record
// per verdict in index order from 0 to its size, each record's entry is
// LogEntry of its verdict's receipt, the stored tree hashes recompute from
// the entries and give the head's root, each counted agent's counters match
// its verdicts, and the key records account for every receipt (see
// keyRecordCheck). Each check that fails adds its finding to the error. It
// reads the entire database in one repeatable-read snapshot (O(history)):
// for `verifier store check`, not for a health probe.
func (p *Postgres) Verify(ctx context.Context) error {
	tx, err := p.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("verifying store %s: %w", p.name, err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	var errs []error
	keys, err := pgSigningKeys(ctx, tx)
	if err != nil {
		return fmt.Errorf("verifying store %s: %w", p.name, err)
	}
	if err := pgVerifyLogIdentity(ctx, tx); err != nil {
		errs = append(errs, err)
	}
	counted, err := pgVerifyVerdicts(ctx, tx, newKeyRecordCheck(keys), &errs)
	if err != nil {
		return fmt.Errorf("verifying store %s: %w", p.name, err)
	}
	if err := pgVerifyAgents(ctx, tx, counted); err != nil {
		errs = append(errs, err)
	}
	if err := pgVerifyLog(ctx, tx); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("verifying store %s: %w", p.name, err)
	}
	return nil
}

// pgSigningKeys reads the signing keys in q's snapshot.
func pgSigningKeys(ctx context.Context, q pgRows) ([]KeyRecord, error) {
	rows, err := q.Query(ctx, "SELECT key_version, public_key FROM signing_keys ORDER BY key_version")
	if err != nil {
		return nil, fmt.Errorf("reading signing keys: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (KeyRecord, error) {
		var r KeyRecord
		err := row.Scan(&r.KeyVersion, &r.PublicKey)
		return r, err
	})
}

// pgVerifyLogIdentity checks the recorded log identity's shape.
func pgVerifyLogIdentity(ctx context.Context, q pgRows) error {
	var id LogIdentity
	err := q.QueryRow(ctx, "SELECT origin, public_key FROM log_identity WHERE id = 1").Scan(&id.Origin, &id.PublicKey)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the log's identity: %w", err)
	}
	if err := checkLogIdentity(id); err != nil {
		return fmt.Errorf("%w: log identity: %v", ErrCorrupt, err)
	}
	return nil
}

// pgVerifyVerdicts reads every verdict: its record is its own, and the key
// check takes it. It returns the counted agents' tallies; findings go to
// errs, and the error is the database's.
func pgVerifyVerdicts(ctx context.Context, q pgRows, keys *keyRecordCheck, errs *[]error) (map[string]*aggregate, error) {
	rows, err := q.Query(ctx, "SELECT verification_id, verified_at_ns, record FROM verdicts")
	if err != nil {
		return nil, fmt.Errorf("reading verdicts: %w", err)
	}
	defer rows.Close()
	counted := map[string]*aggregate{}
	bad := 0
	for rows.Next() {
		var id, record []byte
		var at int64
		if err := rows.Scan(&id, &at, &record); err != nil {
			return nil, fmt.Errorf("reading verdicts: %w", err)
		}
		v, err := decodeVerdict(record)
		if err != nil || v.VerificationID != string(id) || v.VerifiedAt.UnixNano() != at {
			if bad++; bad <= maxKeyFindings {
				*errs = append(*errs, fmt.Errorf("%w: the verdict stored under id %q is not a verdict of that id and time", ErrCorrupt, id))
			}
			continue
		}
		keys.add(v)
		if v.AgentID == "" || IsTestAgent(v.AgentID) {
			continue
		}
		a := counted[v.AgentID]
		if a == nil {
			a = &aggregate{}
			counted[v.AgentID] = a
		}
		a.add(v.VerifiedAt.UnixNano(), v.Result == ResultPass)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading verdicts: %w", err)
	}
	if bad > maxKeyFindings {
		*errs = append(*errs, fmt.Errorf("%w: %d verdicts in all are not verdicts of their id and time", ErrCorrupt, bad))
	}
	if err := keys.err(); err != nil {
		*errs = append(*errs, err)
	}
	return counted, nil
}

// pgVerifyAgents compares the agents table with the tallies of the counted
// verdicts.
func pgVerifyAgents(ctx context.Context, q pgRows, counted map[string]*aggregate) error {
	rows, err := q.Query(ctx, "SELECT agent_id, total, passed, failed, first_ns, last_ns FROM agents")
	if err != nil {
		return fmt.Errorf("reading agents: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var agent []byte
		var total, passed, failed, first, last int64
		if err := rows.Scan(&agent, &total, &passed, &failed, &first, &last); err != nil {
			return fmt.Errorf("reading agents: %w", err)
		}
		want := counted[string(agent)]
		if want == nil {
			want = &aggregate{}
		}
		if uint64(total) != want.total || uint64(passed) != want.passed || uint64(failed) != want.failed ||
			want.total > 0 && (first != want.first || last != want.last) {
			return fmt.Errorf("%w: counters of agent %q (%d/%d/%d total/passed/failed) do not match its %d verdicts",
				ErrCorrupt, agent, total, passed, failed, want.total)
		}
		delete(counted, string(agent))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading agents: %w", err)
	}
	for agent := range counted {
		return fmt.Errorf("%w: agent %q has verdicts but no counters", ErrCorrupt, agent)
	}
	return nil
}

// pgVerifyLog checks the log: records 0 … size-1, each the entry of its
// verdict's receipt, the stored hashes those the entries give, and the
// head's root the tree's.
func pgVerifyLog(ctx context.Context, q pgRows) error {
	var size int64
	var root []byte
	if err := q.QueryRow(ctx, pgReadLogHead).Scan(&size, &root); err != nil {
		return fmt.Errorf("reading the log's head: %w", err)
	}
	stored := map[int64][]byte{}
	rows, err := q.Query(ctx, "SELECT idx, hash FROM log_hashes")
	if err != nil {
		return fmt.Errorf("reading log hashes: %w", err)
	}
	for rows.Next() {
		var idx int64
		var h []byte
		if err := rows.Scan(&idx, &h); err != nil {
			rows.Close()
			return fmt.Errorf("reading log hashes: %w", err)
		}
		stored[idx] = h
	}
	if rows.Close(); rows.Err() != nil {
		return fmt.Errorf("reading log hashes: %w", rows.Err())
	}
	var replay hashReplay
	rows, err = q.Query(ctx, `SELECT e.idx, e.entry, v.record FROM log_entries e
		LEFT JOIN verdicts v ON v.verification_id = e.verification_id ORDER BY e.idx`)
	if err != nil {
		return fmt.Errorf("reading log entries: %w", err)
	}
	defer rows.Close()
	var next int64
	for rows.Next() {
		var idx int64
		var entry, record []byte
		if err := rows.Scan(&idx, &entry, &record); err != nil {
			return fmt.Errorf("reading log entries: %w", err)
		}
		if idx != next || idx >= size {
			return fmt.Errorf("%w: log record %d where record %d of %d was due", ErrCorrupt, idx, next, size)
		}
		_, receipt, err := splitRecord(record)
		if err != nil {
			return fmt.Errorf("%w: log record %d has no readable verdict", ErrCorrupt, idx)
		}
		if want, err := LogEntry(receipt); err != nil || !bytes.Equal(want[:], entry) {
			return fmt.Errorf("%w: log record %d's entry is not the hash of its verdict's receipt", ErrCorrupt, idx)
		}
		if err := replay.add(idx, entry, func(i int64) []byte { return stored[i] }); err != nil {
			return err
		}
		next++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading log entries: %w", err)
	}
	if next != size {
		return fmt.Errorf("%w: the log has %d records, its head says %d", ErrCorrupt, next, size)
	}
	if len(stored) != len(replay.hashes) {
		return fmt.Errorf("%w: %d stored log hashes, the %d records give %d", ErrCorrupt, len(stored), size, len(replay.hashes))
	}
	got, err := tlog.TreeHash(size, &replay)
	if err != nil || !bytes.Equal(got[:], root) {
		return fmt.Errorf("%w: the log head's root is not the root of its %d records", ErrCorrupt, size)
	}
	var verdicts int64
	if err := q.QueryRow(ctx, "SELECT count(*) FROM verdicts").Scan(&verdicts); err != nil {
		return fmt.Errorf("counting verdicts: %w", err)
	}
	if verdicts != size {
		return fmt.Errorf("%w: %d verdicts stored, %d log records", ErrCorrupt, verdicts, size)
	}
	return nil
}
