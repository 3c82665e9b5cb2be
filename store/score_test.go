package store

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"
)

// closeTo reports whether a and b agree to 1e-9, relative.
func closeTo(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b))
}

// The expected values were computed by hand from the Wilson formula (with
// Python's math module) and are not derived from the code under test.
func TestScoreHandComputed(t *testing.T) {
	halfLife := 30 * 24 * time.Hour
	tests := []struct {
		name         string
		history      []Verdict
		now          time.Time
		wPass, wFail float64
		lower, upper float64
		evaluatedAt  time.Time
	}{
		{
			name:    "single pass now",
			history: []Verdict{testVerdict("s1", "ag", true, t0)},
			now:     t0, wPass: 1, lower: 0.20654931437723745, upper: 1, evaluatedAt: t0,
		},
		{
			name: "three passes now",
			history: []Verdict{testVerdict("s1", "ag", true, t0), testVerdict("s2", "ag", true, t0),
				testVerdict("s3", "ag", true, t0)},
			now: t0, wPass: 3, lower: 0.4385029682449546, upper: 1, evaluatedAt: t0,
		},
		{
			name: "pass one half-life before a fail",
			history: []Verdict{testVerdict("s2", "ag", false, t0.Add(halfLife)),
				testVerdict("s1", "ag", true, t0)},
			now: t0.Add(halfLife), wPass: 0.5, wFail: 1,
			lower: 0.03584222409824955, upper: 0.8705503894583921, evaluatedAt: t0.Add(halfLife),
		},
		{
			name: "two passes two fails evaluated two half-lives later",
			history: []Verdict{testVerdict("s1", "ag", true, t0), testVerdict("s2", "ag", false, t0),
				testVerdict("s3", "ag", true, t0), testVerdict("s4", "ag", false, t0)},
			now: t0.Add(2 * halfLife), wPass: 0.5, wFail: 0.5,
			lower: 0.05462075552885198, upper: 0.945379244471148, evaluatedAt: t0.Add(2 * halfLife),
		},
		{
			name:    "now before last seen evaluates at last seen",
			history: []Verdict{testVerdict("s1", "ag", false, t0.Add(time.Hour))},
			now:     t0, wFail: 1, lower: 0, upper: 1 - 0.20654931437723745, evaluatedAt: t0.Add(time.Hour),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTemp(t, nil)
			put(t, s, tt.history...)
			got, err := s.Score(context.Background(), "ag", tt.now)
			if err != nil {
				t.Fatalf("Score() error = %v", err)
			}
			in := got.Inputs
			if !got.HasHistory || in.Total != len(tt.history) {
				t.Errorf("HasHistory, Total = %v, %d, want true, %d", got.HasHistory, in.Total, len(tt.history))
			}
			if !closeTo(in.WeightedPassed, tt.wPass) || !closeTo(in.WeightedFailed, tt.wFail) ||
				!closeTo(in.EffectiveN, tt.wPass+tt.wFail) {
				t.Errorf("W+, W-, n = %v, %v, %v, want %v, %v, %v", in.WeightedPassed, in.WeightedFailed,
					in.EffectiveN, tt.wPass, tt.wFail, tt.wPass+tt.wFail)
			}
			if want := tt.wPass / (tt.wPass + tt.wFail); !closeTo(in.RecencyWeightedPassRate, want) {
				t.Errorf("RecencyWeightedPassRate = %v, want %v", in.RecencyWeightedPassRate, want)
			}
			if !closeTo(got.Score, 100*tt.lower) || !closeTo(got.Interval[0], 100*tt.lower) ||
				!closeTo(got.Interval[1], 100*tt.upper) {
				t.Errorf("Score, Interval = %v, %v, want %v, [%v %v]", got.Score, got.Interval,
					100*tt.lower, 100*tt.lower, 100*tt.upper)
			}
			if !in.EvaluatedAt.Equal(tt.evaluatedAt) {
				t.Errorf("EvaluatedAt = %v, want %v", in.EvaluatedAt, tt.evaluatedAt)
			}
			if in.HalfLifeDays != 30 || in.Confidence != 0.95 || got.Formula != Formula {
				t.Errorf("HalfLifeDays, Confidence, Formula = %v, %v, %q", in.HalfLifeDays, in.Confidence, got.Formula)
			}
		})
	}
}

func TestScoreThreeDoNotOutrankThreeThousand(t *testing.T) {
	s := openTemp(t, nil)
	var few, many []Verdict
	for i := range 3 {
		few = append(few, testVerdict(fmt.Sprintf("few-%d", i), "few", true, t0))
	}
	for i := range 3000 {
		// Three thousand passes, one a minute.
		many = append(many, testVerdict(fmt.Sprintf("many-%d", i), "many", true, t0.Add(-time.Duration(i)*time.Minute)))
	}
	putAll(t, s, append(few, many...))
	ctx := context.Background()
	a, err := s.Score(ctx, "few", t0)
	if err != nil {
		t.Fatalf("Score(few) error = %v", err)
	}
	b, err := s.Score(ctx, "many", t0)
	if err != nil {
		t.Fatalf("Score(many) error = %v", err)
	}
	if !(b.Score > a.Score) {
		t.Errorf("Score(3000 passes) = %v, not above Score(3 passes) = %v", b.Score, a.Score)
	}
	if !closeTo(a.Score, 43.85029682449546) {
		t.Errorf("Score(3 passes) = %v, want 43.85029682449546", a.Score)
	}
}

func TestScoreNoHistory(t *testing.T) {
	s := openTemp(t, nil)
	put(t, s, testVerdict("t1", "test-agent", true, t0))
	for _, agent := range []string{"unknown", "test-agent", ""} {
		t.Run(fmt.Sprintf("agent %q", agent), func(t *testing.T) {
			got, err := s.Score(context.Background(), agent, t0)
			if err != nil {
				t.Fatalf("Score() error = %v", err)
			}
			if got.HasHistory || got.Score != 0 || got.Interval != [2]float64{0, 100} || got.Inputs.Total != 0 ||
				got.Recent == nil || len(got.Recent) != 0 || got.Formula != Formula || got.AgentID != agent {
				t.Errorf("Score(%q) = %+v, want an empty record with the formula", agent, got)
			}
		})
	}
}

// referenceScore evaluates the formula directly over the whole history.
func referenceScore(vs []Verdict, now time.Time) (wPass, wFail, lower, upper float64) {
	last := vs[0].VerifiedAt
	for _, v := range vs {
		if v.VerifiedAt.After(last) {
			last = v.VerifiedAt
		}
	}
	at := now
	if last.After(at) {
		at = last
	}
	for _, v := range vs {
		w := math.Pow(2, -at.Sub(v.VerifiedAt).Hours()/(30*24))
		if v.Result == ResultPass {
			wPass += w
		} else {
			wFail += w
		}
	}
	n := wPass + wFail
	p, z := wPass/n, 1.959963984540054
	centre := (p + z*z/(2*n)) / (1 + z*z/n)
	half := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n)) / (1 + z*z/n)
	return wPass, wFail, max(0, centre-half), min(1, centre+half)
}

func TestScoreTenThousand(t *testing.T) {
	s := openTemp(t, nil)
	vs := bulkHistory("bulk", 10_000)
	// Write oldest last, so most writes arrive out of order.
	putAll(t, s, vs[5000:])
	putAll(t, s, vs[:5000])
	for _, after := range []time.Duration{0, 24 * time.Hour, 400 * 24 * time.Hour} {
		now := vs[0].VerifiedAt.Add(after)
		t.Run(fmt.Sprintf("now last+%s", after), func(t *testing.T) {
			got, err := s.Score(context.Background(), "bulk", now)
			if err != nil {
				t.Fatalf("Score() error = %v", err)
			}
			wp, wf, lo, hi := referenceScore(vs, now)
			in := got.Inputs
			if !closeTo(in.WeightedPassed, wp) || !closeTo(in.WeightedFailed, wf) {
				t.Errorf("W+, W- = %v, %v, want %v, %v", in.WeightedPassed, in.WeightedFailed, wp, wf)
			}
			if !closeTo(got.Score, 100*lo) || !closeTo(got.Interval[1], 100*hi) {
				t.Errorf("Score, Interval = %v, %v, want %v, [%v %v]", got.Score, got.Interval, 100*lo, 100*lo, 100*hi)
			}
			if in.Total != 10_000 || !in.FirstSeen.Equal(vs[len(vs)-1].VerifiedAt) || !in.LastSeen.Equal(vs[0].VerifiedAt) {
				t.Errorf("Total, FirstSeen, LastSeen = %d, %v, %v", in.Total, in.FirstSeen, in.LastSeen)
			}
			if len(got.Recent) != DefaultPageLimit || got.Recent[0].VerificationID != vs[0].VerificationID {
				t.Errorf("Recent has %d entries starting %v, want %d starting %s", len(got.Recent), got.Recent[:1],
					DefaultPageLimit, vs[0].VerificationID)
			}
		})
	}
}
