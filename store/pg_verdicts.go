package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// PutVerdict stores v, counts it for its agent and appends it to the log,
// in one transaction shared with the process's concurrent PutVerdict calls
// (pgGroupCommit), and returns once that transaction is committed
// (PostgreSQL's commit flushes its WAL). Verdicts of test agents
// (IsTestAgent) and of no agent are stored and logged without counting.
func (p *Postgres) PutVerdict(ctx context.Context, v Verdict) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w, err := prepareVerdict(nil, v)
	if err != nil {
		return fmt.Errorf("storing verdict %s: %w", v.VerificationID, err)
	}
	if err = p.group.put(w); err != nil {
		return fmt.Errorf("storing verdict %s: %w", v.VerificationID, err)
	}
	return nil
}

// Statements of a verdict's write: the insert, the agent row's locking
// upsert (made here if new; the no-op update locks it until commit) and
// the counters' update, whose values come from Go (aggregate.add).
const (
	pgInsertVerdict = `INSERT INTO verdicts (verification_id, verified_at_ns, agent_id, counted, summary, record)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (verification_id) DO NOTHING`
	pgLockAgent = `INSERT INTO agents (agent_id) VALUES ($1)
		ON CONFLICT (agent_id) DO UPDATE SET agent_id = EXCLUDED.agent_id
		RETURNING total, passed, failed, first_ns, last_ns, w_pass, w_fail`
	pgUpdateAgent = `UPDATE agents SET total = $2, passed = $3, failed = $4, first_ns = $5, last_ns = $6,
		w_pass = $7, w_fail = $8 WHERE agent_id = $1`
)

// applyPgLogged applies ws in tx, in order, then appends those it inserted
// (not the replays of stored verdicts) to the log in tx. It first locks
// the agents' rows in id order, as every batch does (storeBatch), so that
// a chunk of `store copy` and a live replica's batch cannot deadlock.
func applyPgLogged(ctx context.Context, tx pgx.Tx, ws []verdictWrite) error {
	var (
		ids     [][]byte
		entries [][32]byte
		agents  []string
	)
	for _, w := range ws {
		if w.agent != "" {
			agents = append(agents, w.agent)
		}
	}
	slices.Sort(agents)
	for _, a := range slices.Compact(agents) {
		if _, err := tx.Exec(ctx, pgLockAgent, []byte(a)); err != nil {
			return fmt.Errorf("locking agent counters: %w", err)
		}
	}
	for _, w := range ws {
		inserted, err := w.applyPg(ctx, tx)
		if err != nil {
			return fmt.Errorf("verdict %s: %w", w.id(), err)
		}
		if inserted {
			ids, entries = append(ids, w.id()), append(entries, w.entry)
		}
	}
	return appendLogPg(ctx, tx, ids, entries)
}

// applyPg inserts the verdict and, when it is counted, adds it to its
// agent's counters under the agent row's lock (so concurrent writers on any
// replica add in turn); inserted says whether it was new. The same verdict
// already stored is a no-op; another under its id is ErrDuplicate.
func (w verdictWrite) applyPg(ctx context.Context, tx pgx.Tx) (inserted bool, err error) {
	var summary []byte
	if w.agent != "" {
		summary = w.summary
	}
	tag, err := tx.Exec(ctx, pgInsertVerdict, w.id(), w.nanos, []byte(w.agent), w.agent != "", summary, w.record)
	if err != nil {
		return false, err
	}
	if tag.RowsAffected() == 0 {
		var old []byte
		if err := tx.QueryRow(ctx, pgReadRecord, w.id()).Scan(&old); err != nil {
			return false, err
		}
		return false, sameRecord(old, w.record)
	}
	if w.agent == "" {
		return true, nil
	}
	var agg aggregate
	if err := scanAggregate(tx.QueryRow(ctx, pgLockAgent, []byte(w.agent)), &agg); err != nil {
		return false, err
	}
	agg.add(w.nanos, w.pass)
	_, err = tx.Exec(ctx, pgUpdateAgent, agg.updateArgs(w.agent)...)
	return err == nil, err
}

// scanAggregate reads an agents row's counters (pgLockAgent's columns).
func scanAggregate(row pgx.Row, agg *aggregate) error {
	var total, passed, failed int64
	if err := row.Scan(&total, &passed, &failed, &agg.first, &agg.last, &agg.wPass, &agg.wFail); err != nil {
		return err
	}
	agg.total, agg.passed, agg.failed = uint64(total), uint64(passed), uint64(failed)
	return nil
}

// updateArgs are pgUpdateAgent's arguments for agent's counters a.
func (a aggregate) updateArgs(agent string) []any {
	return []any{[]byte(agent), int64(a.total), int64(a.passed), int64(a.failed), a.first, a.last, a.wPass, a.wFail}
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
	agg, recent, next, err := agentPage(ctx, p.pool, agentID, after, limit)
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
	var (
		agg    aggregate
		recent []VerdictSummary
		tree   LogTree
	)
	// One snapshot: every verdict counted in agg is among tree's records.
	err := pgx.BeginTxFunc(ctx, p.pool, readOnlySnapshot, func(tx pgx.Tx) error {
		var err error
		if agg, recent, _, err = agentPage(ctx, tx, agentID, nil, DefaultPageLimit); err != nil {
			return err
		}
		tree, err = readLogHead(ctx, tx)
		return err
	})
	if err != nil {
		return Score{}, fmt.Errorf("scoring agent %q: %w", agentID, err)
	}
	s := scoreOf(agentID, agg, now, recent)
	s.Log = &tree
	return s, nil
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

// agentPage reads, with q, the agent's counters and up to limit summaries of its
// verdicts below the time key after (nil: from the newest); next is the
// time key of the last summary when more remain. Test agents, the empty
// agent and agents never seen have the zero aggregate.
func agentPage(ctx context.Context, q pgRows, agentID string, after []byte, limit int) (agg aggregate, recent []VerdictSummary, next []byte, err error) {
	recent = []VerdictSummary{}
	if agentID == "" || IsTestAgent(agentID) {
		return aggregate{}, recent, nil, nil
	}
	var rows pgx.Rows
	if after == nil {
		rows, err = q.Query(ctx, pgAgentPage, []byte(agentID), limit+1)
	} else {
		rows, err = q.Query(ctx, pgAgentPageAfter, []byte(agentID), limit+1, readTime(after), after[8:])
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
