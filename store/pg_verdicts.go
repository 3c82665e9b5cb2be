package store

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PutVerdict stores v, and counts it for its agent, in one transaction, and
// returns once that transaction is committed (PostgreSQL's commit flushes
// its WAL, shared by concurrent commits). Verdicts of test agents
// (IsTestAgent) and of no agent are stored without counting.
func (p *Postgres) PutVerdict(ctx context.Context, v Verdict) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w, err := prepareVerdict(nil, v)
	if err != nil {
		return fmt.Errorf("storing verdict %s: %w", v.VerificationID, err)
	}
	wctx, cancel := writeContext(ctx)
	defer cancel()
	err = p.putVerdictPipelined(wctx, w)
	p.recordWrite(err)
	if err != nil {
		return fmt.Errorf("storing verdict %s: %w", v.VerificationID, err)
	}
	return nil
}

// Statements of PutVerdict's pipelined transaction: applyPg's, with the
// counters' update taking its values from Go (aggregate.add) as there.
const (
	pgInsertVerdict = `INSERT INTO verdicts (verification_id, verified_at_ns, agent_id, counted, summary, record)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (verification_id) DO NOTHING`
	pgLockAgent = `INSERT INTO agents (agent_id) VALUES ($1)
		ON CONFLICT (agent_id) DO UPDATE SET agent_id = EXCLUDED.agent_id
		RETURNING total, passed, failed, first_ns, last_ns, w_pass, w_fail`
	pgUpdateAgent = `UPDATE agents SET total = $2, passed = $3, failed = $4, first_ns = $5, last_ns = $6,
		w_pass = $7, w_fail = $8 WHERE agent_id = $1`
)

// putVerdictPipelined writes what applyPg writes in at most two round
// trips instead of five: an uncounted verdict is one autocommitted INSERT;
// a counted one sends BEGIN, the INSERT and the agent row's locking upsert
// as one pipelined batch, then the counters' UPDATE and COMMIT as another.
// It returns once COMMIT succeeded. A verdict already stored under its id
// is a no-op when it is the same, ErrDuplicate otherwise.
func (p *Postgres) putVerdictPipelined(ctx context.Context, w verdictWrite) error {
	conn, err := p.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if w.agent == "" {
		tag, err := conn.Exec(ctx, pgInsertVerdict, w.id(), w.nanos, []byte(w.agent), false, []byte(nil), w.record)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return sameOrDuplicate(ctx, conn, w)
		}
		return nil
	}
	err = putCountedVerdict(ctx, conn, w)
	if conn.Conn().PgConn().TxStatus() != 'I' {
		// Still in the transaction (a failed or refused write): roll it
		// back, or drop the connection if even that fails.
		if _, rerr := conn.Exec(ctx, "ROLLBACK"); rerr != nil {
			_ = conn.Conn().Close(ctx)
		}
	}
	return err
}

// putCountedVerdict runs the counted verdict's transaction on conn; it
// leaves the transaction open (for the caller to roll back) on any error.
func putCountedVerdict(ctx context.Context, conn *pgxpool.Conn, w verdictWrite) error {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(pgInsertVerdict, w.id(), w.nanos, []byte(w.agent), true, w.summary, w.record)
	b.Queue(pgLockAgent, []byte(w.agent))
	br := conn.SendBatch(ctx, b)
	var (
		agg                   aggregate
		total, passed, failed int64
	)
	_, err := br.Exec()
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = br.Exec()
	}
	if err == nil {
		err = br.QueryRow().Scan(&total, &passed, &failed, &agg.first, &agg.last, &agg.wPass, &agg.wFail)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return sameOrDuplicate(ctx, conn, w)
	}
	agg.total, agg.passed, agg.failed = uint64(total), uint64(passed), uint64(failed)
	agg.add(w.nanos, w.pass)
	b = &pgx.Batch{}
	b.Queue(pgUpdateAgent, []byte(w.agent),
		int64(agg.total), int64(agg.passed), int64(agg.failed), agg.first, agg.last, agg.wPass, agg.wFail)
	b.Queue("COMMIT")
	br = conn.SendBatch(ctx, b)
	_, err = br.Exec()
	if err == nil {
		tag, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if tag.String() != "COMMIT" {
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// sameOrDuplicate is the outcome of a verdict whose id is already stored:
// nil when the stored record is w's, ErrDuplicate otherwise.
func sameOrDuplicate(ctx context.Context, conn *pgxpool.Conn, w verdictWrite) error {
	var old []byte
	if err := conn.QueryRow(ctx, "SELECT record FROM verdicts WHERE verification_id = $1", w.id()).Scan(&old); err != nil {
		return err
	}
	if bytes.Equal(old, w.record) {
		return nil
	}
	return ErrDuplicate
}

// applyPg inserts the verdict and, when it is counted, adds it to its
// agent's counters under the agent row's lock (so concurrent writers on any
// replica add in turn). The same verdict already stored is a no-op; another
// under its id is ErrDuplicate.
func (w verdictWrite) applyPg(ctx context.Context, tx pgx.Tx) error {
	var summary []byte
	if w.agent != "" {
		summary = w.summary
	}
	tag, err := tx.Exec(ctx, `INSERT INTO verdicts (verification_id, verified_at_ns, agent_id, counted, summary, record)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (verification_id) DO NOTHING`,
		w.id(), w.nanos, []byte(w.agent), w.agent != "", summary, w.record)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		var old []byte
		if err := tx.QueryRow(ctx, "SELECT record FROM verdicts WHERE verification_id = $1", w.id()).Scan(&old); err != nil {
			return err
		}
		if bytes.Equal(old, w.record) {
			return nil
		}
		return ErrDuplicate
	}
	if w.agent == "" {
		return nil
	}
	var (
		agg                   aggregate
		total, passed, failed int64
	)
	// The no-op update locks the agent's row, made here if new, until
	// commit.
	err = tx.QueryRow(ctx, `INSERT INTO agents (agent_id) VALUES ($1)
		ON CONFLICT (agent_id) DO UPDATE SET agent_id = EXCLUDED.agent_id
		RETURNING total, passed, failed, first_ns, last_ns, w_pass, w_fail`, []byte(w.agent)).
		Scan(&total, &passed, &failed, &agg.first, &agg.last, &agg.wPass, &agg.wFail)
	if err != nil {
		return err
	}
	agg.total, agg.passed, agg.failed = uint64(total), uint64(passed), uint64(failed)
	agg.add(w.nanos, w.pass)
	_, err = tx.Exec(ctx, `UPDATE agents SET total = $2, passed = $3, failed = $4, first_ns = $5, last_ns = $6,
		w_pass = $7, w_fail = $8 WHERE agent_id = $1`, []byte(w.agent),
		int64(agg.total), int64(agg.passed), int64(agg.failed), agg.first, agg.last, agg.wPass, agg.wFail)
	return err
}

// Receipt returns the verdict stored under verificationID, or ErrNotFound.
func (p *Postgres) Receipt(ctx context.Context, verificationID string) (Verdict, error) {
	if err := ctx.Err(); err != nil {
		return Verdict{}, err
	}
	if verificationID == "" || len(verificationID) > maxIDLen {
		return Verdict{}, fmt.Errorf("reading verdict: %w", ErrNotFound)
	}
	var record []byte
	err := p.pool.QueryRow(ctx, "SELECT record FROM verdicts WHERE verification_id = $1", []byte(verificationID)).Scan(&record)
	if errors.Is(err, pgx.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return Verdict{}, fmt.Errorf("reading verdict %s: %w", verificationID, err)
	}
	v, err := decodeVerdict(record)
	if err != nil {
		return Verdict{}, fmt.Errorf("reading verdict %s: %w", verificationID, err)
	}
	return v, nil
}

// Reputation returns the agent's counters and one page of its recent
// verdicts, newest first, read in one statement (one snapshot).
func (p *Postgres) Reputation(ctx context.Context, agentID string, q Page) (Reputation, error) {
	limit, after, err := reputationQuery(ctx, agentID, q)
	if err != nil {
		return Reputation{}, err
	}
	r := Reputation{AgentID: agentID, Recent: []VerdictSummary{}}
	agg, recent, next, err := p.agentPage(ctx, agentID, after, limit)
	if err != nil {
		return Reputation{}, fmt.Errorf("reading reputation of %q: %w", agentID, err)
	}
	if agg.total == 0 {
		return r, nil
	}
	r.Total, r.Passed, r.Failed = int(agg.total), int(agg.passed), int(agg.failed)
	r.PassRate = float64(agg.passed) / float64(agg.total)
	r.FirstSeen, r.LastSeen = timePtr(agg.first), timePtr(agg.last)
	r.Recent = recent
	if next != nil {
		r.NextCursor = base64.RawURLEncoding.EncodeToString(next)
	}
	return r, nil
}

// Score returns the agent's trust score evaluated at now (see [Formula]).
func (p *Postgres) Score(ctx context.Context, agentID string, now time.Time) (Score, error) {
	if err := ctx.Err(); err != nil {
		return Score{}, err
	}
	if len(agentID) > maxIDLen {
		return Score{}, fmt.Errorf("scoring agent: %w: agent id longer than %d bytes", ErrInvalidArgument, maxIDLen)
	}
	agg, recent, _, err := p.agentPage(ctx, agentID, nil, DefaultPageLimit)
	if err != nil {
		return Score{}, fmt.Errorf("scoring agent %q: %w", agentID, err)
	}
	return scoreOf(agentID, agg, now, recent), nil
}

// Statements of agentPage: the agent's counters with up to $2 of its
// verdicts, newest first, below the cursor ($3, $4) in the second form.
const (
	pgAgentPage = `SELECT a.total, a.passed, a.failed, a.first_ns, a.last_ns, a.w_pass, a.w_fail,
		r.verification_id, r.verified_at_ns, r.summary
	FROM agents a LEFT JOIN LATERAL (
		SELECT v.verification_id, v.verified_at_ns, v.summary FROM verdicts v
		WHERE v.counted AND v.agent_id = a.agent_id
		ORDER BY v.verified_at_ns DESC, v.verification_id DESC LIMIT $2) r ON true
	WHERE a.agent_id = $1
	ORDER BY r.verified_at_ns DESC, r.verification_id DESC`
	pgAgentPageAfter = `SELECT a.total, a.passed, a.failed, a.first_ns, a.last_ns, a.w_pass, a.w_fail,
		r.verification_id, r.verified_at_ns, r.summary
	FROM agents a LEFT JOIN LATERAL (
		SELECT v.verification_id, v.verified_at_ns, v.summary FROM verdicts v
		WHERE v.counted AND v.agent_id = a.agent_id AND (v.verified_at_ns, v.verification_id) < ($3, $4)
		ORDER BY v.verified_at_ns DESC, v.verification_id DESC LIMIT $2) r ON true
	WHERE a.agent_id = $1
	ORDER BY r.verified_at_ns DESC, r.verification_id DESC`
)

// agentPage reads the agent's counters and up to limit summaries of its
// verdicts below the time key after (nil: from the newest); next is the
// time key of the last summary when more remain. Test agents, the empty
// agent and agents never seen have the zero aggregate.
func (p *Postgres) agentPage(ctx context.Context, agentID string, after []byte, limit int) (agg aggregate, recent []VerdictSummary, next []byte, err error) {
	recent = []VerdictSummary{}
	if agentID == "" || IsTestAgent(agentID) {
		return aggregate{}, recent, nil, nil
	}
	var rows pgx.Rows
	if after == nil {
		rows, err = p.pool.Query(ctx, pgAgentPage, []byte(agentID), limit+1)
	} else {
		rows, err = p.pool.Query(ctx, pgAgentPageAfter, []byte(agentID), limit+1, readTime(after), after[8:])
	}
	if err != nil {
		return aggregate{}, nil, nil, err
	}
	defer rows.Close()
	var lastKey []byte
	for rows.Next() {
		var (
			total, passed, failed int64
			id, summary           []byte
			at                    *int64
		)
		if err := rows.Scan(&total, &passed, &failed, &agg.first, &agg.last, &agg.wPass, &agg.wFail, &id, &at, &summary); err != nil {
			return aggregate{}, nil, nil, err
		}
		agg.total, agg.passed, agg.failed = uint64(total), uint64(passed), uint64(failed)
		if at == nil { // the agent, with no verdict on this page
			continue
		}
		if len(recent) == limit {
			next = lastKey
			continue
		}
		key := timeKey(*at, string(id))
		s, err := decodeSummary(key, summary)
		if err != nil {
			return aggregate{}, nil, nil, err
		}
		recent = append(recent, s)
		lastKey = key
	}
	if err := rows.Err(); err != nil {
		return aggregate{}, nil, nil, err
	}
	return agg, recent, next, nil
}
