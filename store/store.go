package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Store is what the rest of the service depends on. [Bolt] is the embedded
// implementation; a server-grade backend can implement the same interface
// without touching its callers.
type Store interface {
	// PutVerdict stores v. The verdict is durable when PutVerdict returns nil;
	// concurrent callers share commits. Storing the same verdict twice is a
	// no-op; a different verdict under a stored verification id is
	// ErrDuplicate.
	PutVerdict(ctx context.Context, v Verdict) error
	// Receipt returns the verdict stored under verificationID, or ErrNotFound.
	Receipt(ctx context.Context, verificationID string) (Verdict, error)
	// Reputation returns the agent's counters and one page of its most recent
	// verdicts, newest first.
	Reputation(ctx context.Context, agentID string, q Page) (Reputation, error)
	// Score returns the agent's trust score evaluated at now.
	Score(ctx context.Context, agentID string, now time.Time) (Score, error)
	// ReserveAllowance holds one of the client's free calls for the UTC day
	// of now, if any is left, exactly under any concurrency; the hold (nil
	// when not granted) is then committed once the call is answered, or
	// released. Holding costs no write of its own: the count reaches the
	// file with the next commit, such as the verdict's.
	ReserveAllowance(ctx context.Context, client string, now time.Time, limit int) (Allowance, AllowanceHold, error)
	// TakeAllowance atomically uses one of the client's free calls for the
	// UTC day of now, if any is left, and returns once that is durable
	// (ReserveAllowance, then Commit).
	TakeAllowance(ctx context.Context, client string, now time.Time, limit int) (Allowance, error)
	// PeekAllowance reports the client's allowance for the UTC day of now
	// without using any of it.
	PeekAllowance(ctx context.Context, client string, now time.Time, limit int) (Allowance, error)
	// UsePayment records paymentID as used by use (pending, for one
	// request) until expires. It reports first=false when the id was
	// already recorded — a replay, or a retry of the same request — with
	// what is recorded of it.
	UsePayment(ctx context.Context, paymentID string, expires time.Time, use PaymentUse) (first bool, recorded PaymentUse, err error)
	// LookupPayment reads what is recorded of paymentID, without recording
	// anything: found is false for a payment never used.
	LookupPayment(ctx context.Context, paymentID string) (use PaymentUse, found bool, err error)
	// SettlePayment records the outcome of paymentID's settlement, with the
	// answer kept for a retry, and stores v (when not nil) in the same
	// transaction: a paid verdict counts once its answer is released.
	SettlePayment(ctx context.Context, paymentID string, use PaymentUse, v *Verdict) error
	// ReleasePayment forgets paymentID while it is still pending (its work
	// failed before any settlement), so it can be used again.
	ReleasePayment(ctx context.Context, paymentID string) error
	// Check reports whether the store can serve requests (readiness):
	// ErrWriteFailing while its last write failed.
	Check(ctx context.Context) error
	// Close releases the store.
	Close() error
}

// Errors returned by the store. Callers test them with errors.Is; the
// returned errors wrap them with the details (file name, field).
var (
	// ErrNotFound: no verdict is stored under the verification id.
	ErrNotFound = errors.New("not found")
	// ErrLocked: another process holds the store file open.
	ErrLocked = errors.New("store file is locked by another process")
	// ErrCorrupt: the file is not a readable verifier store (damaged, or some
	// other program's file).
	ErrCorrupt = errors.New("store file is corrupt or not a verifier store")
	// ErrSchemaVersion: the file was written by a newer version of the
	// service, whose layout this binary does not know.
	ErrSchemaVersion = errors.New("store file has a newer schema version")
	// ErrInvalidVerdict: PutVerdict was given a verdict that cannot be stored
	// (missing id, unknown result, receipt not JSON, …).
	ErrInvalidVerdict = errors.New("invalid verdict")
	// ErrDuplicate: a different verdict is already stored under the
	// verification id.
	ErrDuplicate = errors.New("verification id already stored with different content")
	// ErrInvalidPage: a negative page limit or a malformed cursor.
	ErrInvalidPage = errors.New("invalid page")
	// ErrInvalidArgument: an id that is empty or too long for a key.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrWriteFailing: Check found that the store's last commit — a
	// caller's write or the write probe — failed (a full or failing disk);
	// it is reported until a commit succeeds.
	ErrWriteFailing = errors.New("the last write to the store failed")
	// ErrInsecurePermissions: the store file, or the folder holding it, can
	// be written by group or other users (CheckPermissions).
	ErrInsecurePermissions = errors.New("insecure store permissions")
)

// Results a verdict can have.
const (
	ResultPass = "pass"
	ResultFail = "fail"
)

// Paging limits for [Page].
const (
	DefaultPageLimit = 20
	MaxPageLimit     = 100
)

// TestAgentPrefix marks agent ids whose verdicts are stored and receipted but
// kept out of reputation and scores.
const TestAgentPrefix = "test-"

// IsTestAgent reports whether agentID is a test agent: its verdicts are
// stored and can be looked up by verification id, but they are kept out of
// reputation and scores.
func IsTestAgent(agentID string) bool {
	return strings.HasPrefix(agentID, TestAgentPrefix)
}

// Ratio is one of the three ratios of an answer: the share of checks passed.
type Ratio struct {
	Ratio  float64 `json:"ratio"`
	Passed int     `json:"passed"`
	Total  int     `json:"total"`
}

// Verdict is what the store keeps of one verification: ids, result, hashes,
// ratios and the compact signed receipt — never the submitted output or the
// schema.
type Verdict struct {
	VerificationID   string    `json:"verification_id"`
	TaskID           string    `json:"task_id"`
	AgentID          string    `json:"agent_id"` // "" when the request named no agent
	Result           string    `json:"result"`   // ResultPass or ResultFail
	OutputHash       string    `json:"output_hash"`
	SchemaHash       string    `json:"schema_hash"`
	RulesHash        string    `json:"rules_hash"`
	RequestHash      string    `json:"request_hash"`
	SchemaCompliance Ratio     `json:"schema_compliance"`
	IntegrityChecks  Ratio     `json:"integrity_checks"`
	Overall          Ratio     `json:"overall"`
	VerifiedAt       time.Time `json:"verified_at"` // returned in UTC
	KeyVersion       string    `json:"key_version"`
	// Receipt is the compact signed receipt, stored and returned byte for byte.
	Receipt json.RawMessage `json:"receipt"`
}

// VerdictSummary is one line of an agent's recent verdicts.
type VerdictSummary struct {
	VerificationID string    `json:"verification_id"`
	TaskID         string    `json:"task_id"`
	Result         string    `json:"result"`
	OutputHash     string    `json:"output_hash"`
	Overall        Ratio     `json:"overall"`
	VerifiedAt     time.Time `json:"verified_at"`
}

// Page asks for one page of recent verdicts. Limit 0 means DefaultPageLimit;
// larger than MaxPageLimit is cut to MaxPageLimit. Cursor is "" for the first
// page, then the NextCursor of the previous page.
type Page struct {
	Limit  int
	Cursor string
}

// Reputation is an agent's record: counters over every verdict ever stored
// for it, and one page of its recent verdicts, newest first (ties in
// verified_at by verification id, descending).
type Reputation struct {
	AgentID    string           `json:"agent_id"`
	Total      int              `json:"total"`
	Passed     int              `json:"passed"`
	Failed     int              `json:"failed"`
	PassRate   float64          `json:"pass_rate"` // Passed/Total, 0 when Total is 0
	FirstSeen  *time.Time       `json:"first_seen"`
	LastSeen   *time.Time       `json:"last_seen"`
	Recent     []VerdictSummary `json:"recent"`
	NextCursor string           `json:"next_cursor,omitempty"` // "" on the last page
}

// Score is an agent's trust score: 0–100 with its 95% interval, the inputs
// it came from and the formula (see [Formula]).
type Score struct {
	AgentID    string           `json:"agent_id"`
	HasHistory bool             `json:"has_history"`
	Score      float64          `json:"score"`    // 100 × Wilson lower bound
	Interval   [2]float64       `json:"interval"` // 100 × [lower, upper]
	Inputs     ScoreInputs      `json:"inputs"`
	Formula    string           `json:"formula"`
	Recent     []VerdictSummary `json:"recent"` // the DefaultPageLimit most recent verdicts
	// Log is the transparency log's tree in the snapshot the score was
	// computed from (every verdict counted is among its records); nil when
	// the store keeps no log.
	Log *LogTree `json:"log,omitempty"`
}

// ScoreInputs are the numbers a [Score] was computed from.
type ScoreInputs struct {
	Total                   int        `json:"total"`
	Passed                  int        `json:"passed"`
	Failed                  int        `json:"failed"`
	PassRate                float64    `json:"pass_rate"`
	WeightedPassed          float64    `json:"weighted_passed"` // W+
	WeightedFailed          float64    `json:"weighted_failed"` // W-
	EffectiveN              float64    `json:"effective_n"`     // n = W+ + W-
	RecencyWeightedPassRate float64    `json:"recency_weighted_pass_rate"`
	HalfLifeDays            float64    `json:"half_life_days"`
	Confidence              float64    `json:"confidence"`
	Z                       float64    `json:"z"`
	EvaluatedAt             time.Time  `json:"evaluated_at"` // T = max(now, last_seen)
	FirstSeen               *time.Time `json:"first_seen"`
	LastSeen                *time.Time `json:"last_seen"`
}

// AllowanceHold is a free call held by [Store.ReserveAllowance]: counted as
// used (exactly, in this process), not yet durable. Exactly one of Commit and
// Release should follow; a hold left alone is written with the next commit,
// as used.
type AllowanceHold interface {
	// Commit returns once the call is durably counted as used. It costs no
	// commit of its own when one since the reservation — the verdict's —
	// already wrote it. Commit after Release is an error.
	Commit() error
	// Release gives the call back (the call was not answered); a no-op after
	// Commit. The lower count is written with the next commit.
	Release()
}

// Allowance is a client's free allowance for one UTC day.
type Allowance struct {
	Granted   bool      `json:"granted"`   // this call may be served free
	Remaining int       `json:"remaining"` // free calls left today (after this one, for TakeAllowance)
	Limit     int       `json:"limit"`
	Resets    time.Time `json:"resets"` // the next UTC midnight
}
