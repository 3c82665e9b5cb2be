package engine

import "math"

// Sources of a finding, as reported in hints.
const (
	SourceSchema    = "schema"
	SourceIntegrity = "integrity"
)

// Gates say why a failed check blocks the result or only warns (SPEC §3.2);
// they lead each line of the answer's errors list.
const (
	GateSchema  = "schema"
	GateBounds  = "bounds"
	GateRules   = "enforce_rules"
	GateContent = "strict_content_check"
)

// Check names of the integrity checks (SPEC §3).
const (
	CheckBounds      = "bounds:range"
	CheckPlaceholder = "content:placeholder"
	CheckUndeclared  = "content:undeclared_field"
)

// Finding is one failed check.
type Finding struct {
	Source   string // SourceSchema or SourceIntegrity
	Check    string // e.g. "schema:required", "consistency:sum_equals"
	Path     string // where in submitted_output, "$.…"
	Field    string // the rule's field or bound's key as the caller wrote it; "" for other checks
	Expected string
	Found    string // quotes the output briefly (≤ 80 characters)
	Message  string
	Gate     string
	Blocking bool
	// Advisory marks a finding that is no check (CheckUnknownKeyword): it
	// never blocks, counts in no ratio, and is flagged as a warning.
	Advisory bool
}

// Ratio is a share of checks that held, rounded to 6 decimals; 1 when no
// check ran.
type Ratio struct {
	Ratio  float64 `json:"ratio"`
	Passed int     `json:"passed"`
	Total  int     `json:"total"`
}

// NewRatio computes passed/total rounded to 6 decimals.
func NewRatio(passed, total int) Ratio {
	r := 1.0
	if total > 0 {
		r = math.Round(float64(passed)/float64(total)*1e6) / 1e6
	}
	return Ratio{Ratio: r, Passed: passed, Total: total}
}

// Outcome is the verdict on one request, before hashes and signature.
type Outcome struct {
	Pass      bool
	Findings  []Finding // schema findings first, then bounds, rules, content
	Schema    Ratio     // schema_compliance
	Integrity Ratio     // integrity_checks
	Overall   Ratio
}

// Result is "pass" or "fail".
func (o *Outcome) Result() string {
	if o.Pass {
		return "pass"
	}
	return "fail"
}

// tally counts checks of one family while findings are collected.
type tally struct{ passed, total int }

func (t *tally) record(ok bool) {
	t.total++
	if ok {
		t.passed++
	}
}

// callerField is where a finding is in the caller's words, for flags and
// errors lines: the rule's field or bound's key as written, else the
// location (SPEC §2).
func (f *Finding) callerField() string {
	if f.Field != "" {
		return f.Field
	}
	return f.Path
}
