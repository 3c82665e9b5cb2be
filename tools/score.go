package tools

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/internal/ijson"
	"github.com/verifier-dev/verifier/signing"
	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools/contract"
)

// MaxAgentIDChars bounds an agent id, in characters (SPEC §1).
const MaxAgentIDChars = 200

// scoreDecimals is how many decimals the numbers of a trust record keep.
const scoreDecimals = 1e6

// TrustRecord is the signed trust record of one agent (SPEC §8), before its
// attestation: the answer of get_verification_record and GET /score/{agent_id}.
// Its fields are in the order they are sent.
type TrustRecord struct {
	RecordID       string              `json:"record_id"`
	AgentID        string              `json:"agent_id"`
	HasHistory     bool                `json:"has_history"`
	Score          float64             `json:"score"`
	Interval       ScoreInterval       `json:"interval"`
	Message        string              `json:"message"`
	NextActions    []engine.NextAction `json:"next_actions"`
	Inputs         RecordInputs        `json:"inputs"`
	Formula        string              `json:"formula"`
	RecentVerdicts []RecentVerdict     `json:"recent_verdicts"`
	// Log names the transparency log's checkpoint the score was computed
	// from; absent when the service serves no log.
	Log             *RecordLog         `json:"log,omitempty"`
	VerifiedAt      string             `json:"verified_at"`
	VerifierVersion string             `json:"verifier_version"`
	Verify          engine.VerifyBlock `json:"verify"`
}

// RecordLog is the state of the transparency log a trust record was
// computed from: every verdict it counts is among the first TreeSize
// records of the log Origin, whose RFC 6962 root is RootHash. `verifier
// log audit --agent` replays them.
type RecordLog struct {
	Origin   string `json:"origin"`
	TreeSize int64  `json:"tree_size"`
	RootHash string `json:"root_hash"` // standard base64, as in a checkpoint
}

// ScoreInterval is the confidence interval of a trust score, on 0–100.
type ScoreInterval struct {
	Lower      float64 `json:"lower"`
	Upper      float64 `json:"upper"`
	Confidence float64 `json:"confidence"`
}

// RecordInputs are the numbers a trust score was computed from (see
// store.Formula). Times use engine.VerifiedAtLayout; first and last seen are
// null for an agent without history.
type RecordInputs struct {
	Total                   int     `json:"total"`
	Passed                  int     `json:"passed"`
	Failed                  int     `json:"failed"`
	PassRate                float64 `json:"pass_rate"`
	RecencyWeightedPassRate float64 `json:"recency_weighted_pass_rate"`
	WeightedPassed          float64 `json:"weighted_passed"`
	WeightedFailed          float64 `json:"weighted_failed"`
	EffectiveN              float64 `json:"effective_n"`
	HalfLifeDays            float64 `json:"half_life_days"`
	Z                       float64 `json:"z"`
	FirstSeen               *string `json:"first_seen"`
	LastSeen                *string `json:"last_seen"`
	EvaluatedAt             string  `json:"evaluated_at"`
}

// RecentVerdict is one of the agent's most recent verdicts; its compact
// receipt is at GET /receipts/{verification_id}.
type RecentVerdict struct {
	VerificationID string       `json:"verification_id"`
	TaskID         string       `json:"task_id"`
	Result         string       `json:"result"`
	OutputHash     string       `json:"output_hash"`
	Overall        engine.Ratio `json:"overall"`
	VerifiedAt     string       `json:"verified_at"`
}

// Record returns the agent's signed trust record (SPEC §8): a 0–100 score
// with its 95% interval, the inputs and formula it came from and the recent
// verdicts, signed under signing.ContextTrustScore. An agent with no
// history (never seen, or a test- agent) gets a signed record that says so.
// Errors are *Error values: 422 for an invalid agent id, 503 when the
// service has no store or the store fails.
func (s *Service) Record(ctx context.Context, agentID string) ([]byte, error) {
	if problem := AgentIDProblem(agentID); problem != nil {
		return nil, InvalidRequest([]engine.FieldProblem{*problem})
	}
	if s.Store == nil {
		if s.StoreErr != nil {
			return nil, NewError(CodeUnavailable, http.StatusServiceUnavailable,
				"This verifier has no reputation store, so it keeps no trust records: "+s.StoreErr.Error()+" Nothing was charged.")
		}
		return nil, NewError(CodeUnavailable, http.StatusServiceUnavailable,
			"This verifier runs without a reputation store, so it keeps no trust records. Nothing was charged.")
	}
	now := s.CurrentTime().UTC()
	sc, err := s.Store.Score(ctx, agentID, now)
	if err != nil {
		s.Logger().Error("reading trust score", "err", err)
		return nil, NewError(CodeUnavailable, http.StatusServiceUnavailable,
			"The trust record could not be read. Nothing was charged; send the request again.").WithRetryAfter(1)
	}
	signer := s.Keys.Current()
	rec := NewTrustRecord(sc, now)
	rec.RecordID = uuid.NewString()
	rec.VerifierVersion = s.Version
	rec.Verify = s.verifyBlock(signer)
	if s.LogKey != nil && sc.Log != nil {
		rec.Log = &RecordLog{Origin: s.LogKey.Name(), TreeSize: sc.Log.Size, RootHash: base64.StdEncoding.EncodeToString(sc.Log.Hash[:])}
	}
	body, err := ijson.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("encoding trust record: %w", err)
	}
	signed, err := signer.Sign(signing.ContextTrustScore, body, rec.VerifiedAt)
	if err != nil {
		return nil, fmt.Errorf("signing trust record: %w", err)
	}
	return signed, nil
}

// AgentIDProblem returns the problem with an agent id, or nil.
func AgentIDProblem(agentID string) *engine.FieldProblem {
	n := utf8.RuneCountInString(agentID)
	switch {
	case !utf8.ValidString(agentID):
		return &engine.FieldProblem{Field: "agent_id", Problem: "is not valid UTF-8",
			Fix: "Send agent_id as the same UTF-8 string the verification requests used."}
	case n == 0 || n > MaxAgentIDChars:
		return &engine.FieldProblem{Field: "agent_id", Problem: "must be 1 to 200 characters long",
			Fix: "Send the agent_id that verification requests named, 1 to 200 characters."}
	}
	return nil
}

// NewTrustRecord lays out a score evaluated at now; the caller fills in the
// identity, version and verify block.
func NewTrustRecord(sc store.Score, now time.Time) *TrustRecord {
	in := sc.Inputs
	rec := &TrustRecord{
		AgentID:    sc.AgentID,
		HasHistory: sc.HasHistory,
		Score:      RoundScore(sc.Score),
		Interval:   ScoreInterval{Lower: RoundScore(sc.Interval[0]), Upper: RoundScore(sc.Interval[1]), Confidence: in.Confidence},
		NextActions: []engine.NextAction{
			{Action: "verify_before_paying", Using: contract.VerifySchema},
			{Action: "check_receipts", Using: contract.VerifyReceipt},
		},
		Inputs: RecordInputs{
			Total:                   in.Total,
			Passed:                  in.Passed,
			Failed:                  in.Failed,
			PassRate:                RoundScore(in.PassRate),
			RecencyWeightedPassRate: RoundScore(in.RecencyWeightedPassRate),
			WeightedPassed:          RoundScore(in.WeightedPassed),
			WeightedFailed:          RoundScore(in.WeightedFailed),
			EffectiveN:              RoundScore(in.EffectiveN),
			HalfLifeDays:            in.HalfLifeDays,
			Z:                       in.Z,
			FirstSeen:               formatTime(in.FirstSeen),
			LastSeen:                formatTime(in.LastSeen),
			EvaluatedAt:             in.EvaluatedAt.UTC().Format(engine.VerifiedAtLayout),
		},
		Formula:        sc.Formula,
		RecentVerdicts: make([]RecentVerdict, 0, len(sc.Recent)),
		VerifiedAt:     now.Format(engine.VerifiedAtLayout),
	}
	for _, v := range sc.Recent {
		rec.RecentVerdicts = append(rec.RecentVerdicts, RecentVerdict{
			VerificationID: v.VerificationID,
			TaskID:         v.TaskID,
			Result:         v.Result,
			OutputHash:     v.OutputHash,
			Overall:        engine.Ratio{Ratio: v.Overall.Ratio, Passed: v.Overall.Passed, Total: v.Overall.Total},
			VerifiedAt:     v.VerifiedAt.UTC().Format(engine.VerifiedAtLayout),
		})
	}
	switch {
	case store.IsTestAgent(sc.AgentID):
		rec.Message = "Agent ids starting with 'test-' are verified and receipted but kept out of reputation, so this agent has no trust score."
	case !sc.HasHistory:
		rec.Message = "No verdicts are recorded for this agent yet, so there is no trust score: treat it as unknown and verify its output before paying."
	default:
		rec.Message = fmt.Sprintf("Trust score %.1f of 100 (95%% interval %.1f–%.1f) from %d verdict(s), %d passed; recent verdicts weigh more (30-day half-life).",
			rec.Score, rec.Interval.Lower, rec.Interval.Upper, in.Total, in.Passed)
	}
	return rec
}

// RoundScore keeps six decimals, like the ratios of answers, so records read
// cleanly.
func RoundScore(x float64) float64 {
	return math.Round(x*scoreDecimals) / scoreDecimals
}

func formatTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(engine.VerifiedAtLayout)
	return &s
}

// Reputation is an agent's record as GET /reputation/{agent_id} answers it:
// counters over every verdict, and one page of recent verdicts, newest
// first. Times use the layout of verified_at.
type Reputation struct {
	AgentID  string  `json:"agent_id"`
	Total    int     `json:"total"`
	Passed   int     `json:"passed"`
	Failed   int     `json:"failed"`
	PassRate float64 `json:"pass_rate"` // rounded to 6 decimals; 0 without history
	// FirstSeen and LastSeen are null for an agent without history.
	FirstSeen *string         `json:"first_seen"`
	LastSeen  *string         `json:"last_seen"`
	Recent    []RecentVerdict `json:"recent"`
	// NextCursor fetches the next page (?cursor=); null on the last page.
	NextCursor *string `json:"next_cursor"`
}

// Reputation reads one page of an agent's record. Agents whose id starts
// with "test-" are kept out of reputation and have none. The store's
// errors come back wrapped: store.ErrInvalidPage for a bad cursor.
func (s *Service) Reputation(ctx context.Context, agentID string, page store.Page) (*Reputation, error) {
	rep, err := s.Store.Reputation(ctx, agentID, page)
	if err != nil {
		return nil, fmt.Errorf("reading reputation: %w", err)
	}
	stamp := func(t *time.Time) *string {
		if t == nil {
			return nil
		}
		s := t.UTC().Format(engine.VerifiedAtLayout)
		return &s
	}
	out := &Reputation{
		AgentID: agentID, Total: rep.Total, Passed: rep.Passed, Failed: rep.Failed,
		PassRate:  math.Round(rep.PassRate*1e6) / 1e6,
		FirstSeen: stamp(rep.FirstSeen), LastSeen: stamp(rep.LastSeen),
		Recent: make([]RecentVerdict, 0, len(rep.Recent)),
	}
	for _, v := range rep.Recent {
		out.Recent = append(out.Recent, RecentVerdict{
			VerificationID: v.VerificationID, TaskID: v.TaskID, Result: v.Result, OutputHash: v.OutputHash,
			Overall:    engine.Ratio{Ratio: v.Overall.Ratio, Passed: v.Overall.Passed, Total: v.Overall.Total},
			VerifiedAt: *stamp(&v.VerifiedAt),
		})
	}
	if rep.NextCursor != "" {
		out.NextCursor = &rep.NextCursor
	}
	return out, nil
}
