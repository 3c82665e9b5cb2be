package engine

import (
	"fmt"
	"time"

	"github.com/verifier-dev/verifier/internal/ijson"
)

// VerifiedAtLayout is the format of verified_at: UTC, RFC 3339 with
// microseconds and a +00:00 offset.
const VerifiedAtLayout = "2006-01-02T15:04:05.000000+00:00"

// Verify block constants (SPEC §5).
const (
	Canonicalization = "RFC 8785 (JCS)"
	HashAlgorithm    = "SHA-256"
)

// AnswerMeta is what the caller supplies around an outcome: identity, time,
// hashes and where to check the receipt.
type AnswerMeta struct {
	VerificationID string
	VerifiedAt     time.Time
	Version        string
	Hashes         Hashes
	Verify         VerifyBlock
}

// VerifyBlock tells a reader how to check the receipt: where the signing
// key is published (PublicKeyURL and MCP, with a public URL) or the key
// itself (PublicKey, standard base64 of its 32 raw bytes, without one: stdio
// and the CLI, SPEC §5). Empty members are left out.
type VerifyBlock struct {
	PublicKeyURL     string `json:"public_key_url,omitempty"`
	PublicKey        string `json:"public_key,omitempty"`
	KeyVersion       string `json:"key_version"`
	Canonicalization string `json:"canonicalization"`
	HashAlgorithm    string `json:"hash_algorithm"`
	Service          string `json:"service"`
	MCP              string `json:"mcp,omitempty"`
}

// NextAction is one step the caller should take next.
type NextAction struct {
	Action string   `json:"action"`
	Using  string   `json:"using,omitempty"`
	For    string   `json:"for,omitempty"`
	Fields []string `json:"fields,omitempty"`
}

// Summary heads the answer.
type Summary struct {
	Result         string   `json:"result"`
	BlockingChecks []string `json:"blocking_checks"`
}

// ErrorDetail is one blocking failure in errors_detail.
type ErrorDetail struct {
	Check    string `json:"check"`
	Path     string `json:"path"`
	Expected string `json:"expected"`
	Found    string `json:"found"`
	Message  string `json:"message"`
}

// Flag is one failed integrity check, blocking or not.
type Flag struct {
	Check    string `json:"check"`
	Field    string `json:"field"`
	Severity string `json:"severity"`
	Detail   string `json:"detail"`
}

// Hint is one failed check, concrete enough to repair the output.
type Hint struct {
	Source   string `json:"source"`
	Check    string `json:"check"`
	Path     string `json:"path"`
	Expected string `json:"expected"`
	Found    string `json:"found"`
}

// Answer is the unsigned answer of SPEC §4, its fields in the documented
// order. Fields of the full shape only are nil in a compact answer.
type Answer struct {
	Summary            Summary       `json:"summary"`
	NextActions        []NextAction  `json:"next_actions"`
	Result             string        `json:"result"`
	VerificationID     string        `json:"verification_id"`
	TaskID             string        `json:"task_id"`
	AgentID            *string       `json:"agent_id"`
	OutputHash         string        `json:"output_hash"`
	SchemaHash         string        `json:"schema_hash"`
	RulesHash          string        `json:"rules_hash"`
	RequestHash        *string       `json:"request_hash,omitempty"`
	VerifiedAt         string        `json:"verified_at"`
	VerifierVersion    string        `json:"verifier_version"`
	EnforceRules       bool          `json:"enforce_rules"`
	StrictContentCheck bool          `json:"strict_content_check"`
	Errors             []string      `json:"errors,omitzero"`
	ErrorsTotal        *int          `json:"errors_total,omitempty"`
	ErrorsOmitted      *int          `json:"errors_omitted,omitempty"`
	ErrorsDetail       []ErrorDetail `json:"errors_detail,omitzero"`
	ErrorsDetailTotal  *int          `json:"errors_detail_total,omitempty"`
	ErrorsDetailOmit   *int          `json:"errors_detail_omitted,omitempty"`
	Flags              []Flag        `json:"flags,omitzero"`
	FlagsTotal         *int          `json:"flags_total,omitempty"`
	FlagsOmitted       *int          `json:"flags_omitted,omitempty"`
	Hints              []Hint        `json:"hints,omitzero"`
	HintsTotal         *int          `json:"hints_total,omitempty"`
	HintsOmitted       *int          `json:"hints_omitted,omitempty"`
	SchemaCompliance   *Ratio        `json:"schema_compliance,omitempty"`
	IntegrityChecks    *Ratio        `json:"integrity_checks,omitempty"`
	Overall            *Ratio        `json:"overall,omitempty"`
	Verify             VerifyBlock   `json:"verify"`
}

// NewAnswer builds the answer for a request's outcome, in the shape the
// request's detail asks for.
func (v *Verifier) NewAnswer(req *Request, out *Outcome, meta AnswerMeta) *Answer {
	a := &Answer{
		Summary:            Summary{Result: out.Result(), BlockingChecks: out.BlockingChecks()},
		Result:             out.Result(),
		VerificationID:     meta.VerificationID,
		TaskID:             req.TaskID,
		AgentID:            req.AgentID,
		OutputHash:         meta.Hashes.Output,
		SchemaHash:         meta.Hashes.Schema,
		RulesHash:          meta.Hashes.Rules,
		VerifiedAt:         meta.VerifiedAt.UTC().Format(VerifiedAtLayout),
		VerifierVersion:    meta.Version,
		EnforceRules:       req.EnforceRules,
		StrictContentCheck: req.StrictContentCheck,
		Verify:             meta.Verify,
	}
	a.Verify.Canonicalization = Canonicalization
	a.Verify.HashAlgorithm = HashAlgorithm
	switch {
	case out.Pass && out.Warnings() > 0:
		// The buyer pays for an output whose warnings (flags of severity
		// "warning") it has read: a rule checked but not enforced, or a
		// misspelt keyword that checked nothing.
		a.NextActions = []NextAction{{Action: "attach_receipt", For: "seller"}, {Action: "review_warnings", For: "buyer"},
			{Action: "proceed_to_payment", For: "buyer"}}
	case out.Pass:
		a.NextActions = []NextAction{{Action: "attach_receipt", For: "seller"}, {Action: "proceed_to_payment", For: "buyer"}}
	default:
		a.NextActions = []NextAction{{Action: "repair_and_reverify", Using: "hints"}}
	}
	if req.Detail == DetailCompact {
		return a // the lists below are full detail's
	}
	var errs []string
	var details []ErrorDetail
	var flags []Flag
	hints := []Hint{}
	for _, f := range out.Findings {
		if f.Blocking {
			line := fmt.Sprintf("%s: %s at '%s': %s", f.Gate, f.Check, f.callerField(), f.Message)
			errs = append(errs, line)
			details = append(details, ErrorDetail{Check: f.Check, Path: f.Path, Expected: f.Expected, Found: f.Found, Message: line})
		}
		if f.flagged() {
			severity := "warning"
			if f.Blocking {
				severity = "error"
			}
			flags = append(flags, Flag{Check: f.Check, Field: f.callerField(), Severity: severity, Detail: f.Message})
		}
		hints = append(hints, Hint{Source: f.Source, Check: f.Check, Path: f.Path, Expected: f.Expected, Found: f.Found})
	}
	a.RequestHash = &meta.Hashes.Request
	limit := v.opts.listCap()
	// The totals count the findings the outcome omitted too.
	a.Errors, a.ErrorsTotal, a.ErrorsOmitted = capList(errs, out.seen.blocking, limit)
	a.ErrorsDetail, a.ErrorsDetailTotal, a.ErrorsDetailOmit = capList(details, out.seen.blocking, limit)
	a.Flags, a.FlagsTotal, a.FlagsOmitted = capList(flags, out.seen.integrity, limit)
	a.Hints, a.HintsTotal, a.HintsOmitted = capList(hints, out.seen.all, limit)
	a.SchemaCompliance, a.IntegrityChecks, a.Overall = &out.Schema, &out.Integrity, &out.Overall
	return a
}

// capList keeps the first limit items (never nil, so an empty list is sent
// as []) and reports the total, the items and those counted without being
// listed, and how many were left out.
func capList[T any](items []T, total, limit int) ([]T, *int, *int) {
	if len(items) > limit {
		items = items[:limit]
	}
	if items == nil {
		items = []T{}
	}
	omitted := total - len(items)
	return items, &total, &omitted
}

// Marshal encodes the unsigned answer as its struct tags direct, without
// HTML escaping (ijson.Marshal): the answer's wire form, and the response a
// receipt's signature covers once signing canonicalizes it.
func (a *Answer) Marshal() ([]byte, error) {
	b, err := ijson.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("encoding answer: %w", err)
	}
	return b, nil
}
