package store

import (
	"context"
	"fmt"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"
)

// HalfLife is the age at which a verdict counts half as much as a fresh one
// in the trust score.
const HalfLife = 30 * 24 * time.Hour

// Confidence is the coverage of the score interval, and Z its two-sided
// standard-normal quantile.
const (
	Confidence = 0.95
	Z          = 1.959963984540054
)

// Formula is the trust-score formula, returned with every [Score].
const Formula = "w_i = 2^(-(T - t_i) / H), H = 30 days half-life, T = max(now, last_seen), t_i = verified_at of verdict i; " +
	"W+ = sum of w_i over passed verdicts, W- = sum of w_i over failed verdicts; n = W+ + W-; p = W+ / n; z = 1.959964 (95%); " +
	"Wilson interval [L, U] = (p + z^2/(2n) -/+ z*sqrt(p(1-p)/n + z^2/(4n^2))) / (1 + z^2/n), clamped to [0, 1]; " +
	"score = 100*L; interval = [100*L, 100*U]; no history: score 0, interval [0, 100]"

// decay is the weight 2^(-d/H) of a verdict d nanoseconds older than the
// reference time.
func decay(d int64) float64 {
	return math.Exp2(-float64(d) / float64(HalfLife))
}

// wilson returns the Wilson score interval for pos successes out of n
// (weighted) trials, clamped to [0, 1]; [0, 1] when n is 0.
func wilson(pos, n float64) (lower, upper float64) {
	if n <= 0 {
		return 0, 1
	}
	p := pos / n
	z2 := Z * Z
	den := 1 + z2/n
	centre := (p + z2/(2*n)) / den
	half := Z * math.Sqrt(p*(1-p)/n+z2/(4*n*n)) / den
	return max(0, centre-half), min(1, centre+half)
}

// Score returns the agent's trust score evaluated at now: O(1) from the
// agent's decayed sums, plus its DefaultPageLimit most recent verdicts. Test
// agents and unknown agents have no history.
func (b *Bolt) Score(ctx context.Context, agentID string, now time.Time) (Score, error) {
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
	err := b.db.View(func(tx *bolt.Tx) error {
		var err error
		if tree, err = logTreeIn(tx); err != nil {
			return err
		}
		if agg, err = b.loadAggregate(tx, agentID); err != nil || agg.total == 0 {
			return err
		}
		recent, _, err = listRecent(tx, agentID, nil, DefaultPageLimit)
		return err
	})
	if err != nil {
		return Score{}, fmt.Errorf("scoring agent %q: %w", agentID, err)
	}
	s := scoreOf(agentID, agg, now, recent)
	s.Log = &tree
	return s, nil
}

// ScoreTally counts an agent's verdicts one by one with the store's own
// arithmetic, so that an auditor replaying the log (verifier log audit)
// recomputes a trust score exactly as the store did: add the agent's
// verdicts in log order, then evaluate the Score at the record's time.
type ScoreTally struct{ agg aggregate }

// Add counts one verdict verified at t, passed or not.
func (t *ScoreTally) Add(verifiedAt time.Time, pass bool) {
	t.agg.add(verifiedAt.UnixNano(), pass)
}

// Score evaluates Formula over the verdicts added, at now, as the store's
// Score does (Recent empty, Log nil).
func (t *ScoreTally) Score(agentID string, now time.Time) Score {
	return scoreOf(agentID, t.agg, now, nil)
}

// scoreOf evaluates Formula for the agent's aggregate at now.
func scoreOf(agentID string, agg aggregate, now time.Time, recent []VerdictSummary) Score {
	s := Score{
		AgentID:  agentID,
		Interval: [2]float64{0, 100},
		Formula:  Formula,
		Recent:   recent,
		Inputs: ScoreInputs{
			HalfLifeDays: HalfLife.Hours() / 24,
			Confidence:   Confidence,
			Z:            Z,
			EvaluatedAt:  now.UTC(),
		},
	}
	if s.Recent == nil {
		s.Recent = []VerdictSummary{}
	}
	if agg.total == 0 {
		return s
	}
	t := max(now.UnixNano(), agg.last)
	f := decay(t - agg.last)
	in := &s.Inputs
	in.Total, in.Passed, in.Failed = int(agg.total), int(agg.passed), int(agg.failed)
	in.PassRate = float64(agg.passed) / float64(agg.total)
	in.WeightedPassed, in.WeightedFailed = agg.wPass*f, agg.wFail*f
	in.EffectiveN = in.WeightedPassed + in.WeightedFailed
	if in.EffectiveN > 0 {
		in.RecencyWeightedPassRate = in.WeightedPassed / in.EffectiveN
	}
	in.EvaluatedAt = time.Unix(0, t).UTC()
	in.FirstSeen, in.LastSeen = timePtr(agg.first), timePtr(agg.last)
	lower, upper := wilson(in.WeightedPassed, in.EffectiveN)
	s.HasHistory = true
	s.Score = 100 * lower
	s.Interval = [2]float64{100 * lower, 100 * upper}
	return s
}

func timePtr(nanos int64) *time.Time {
	t := time.Unix(0, nanos).UTC()
	return &t
}

// DecayWeight is the weight Formula gives a verdict of the given age: 1 for
// a fresh one, 1/2 at HalfLife.
func DecayWeight(age time.Duration) float64 {
	return decay(int64(age))
}

// WilsonInterval is the interval of Formula for the weighted passes pos out
// of the weighted total n, on [0, 1]; [0, 1] when n is 0.
func WilsonInterval(pos, n float64) (lower, upper float64) {
	return wilson(pos, n)
}
