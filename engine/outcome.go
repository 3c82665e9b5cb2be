package engine

import (
	"math"
	"slices"
)

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
	Pass bool
	// Findings are the failed checks, schema findings first, then bounds,
	// rules, content. An outcome of Check keeps those an answer can show
	// (each among the first ListCap findings, the first ListCap blocking
	// ones or the first ListCap integrity ones) and only counts the others,
	// so that a request failing a million times costs the memory of a few
	// dozen findings.
	Findings  []Finding
	Schema    Ratio // schema_compliance
	Integrity Ratio // integrity_checks
	Overall   Ratio

	keep int  // Findings' cap per list, for add; 0: no cap
	seen seen // every finding added so far, kept or omitted
}

// seen counts the findings added to an outcome, and names the blocking
// checks among them in the order they first failed.
type seen struct {
	all, blocking, integrity int
	checks                   []string
}

// FindingsTotal is the number of failed checks, kept or omitted.
func (o *Outcome) FindingsTotal() int { return o.seen.all }

// Warnings is the number of findings that did not block, kept or omitted:
// the failed checks the answer flags with severity "warning" (a rule, bound
// or content check whose gate is off) and the likely misspelt schema
// keywords (CheckUnknownKeyword).
func (o *Outcome) Warnings() int { return o.seen.all - o.seen.blocking }

// BlockingChecks names the checks that failed blocking, each once, in the
// order they first failed (summary.blocking_checks), omitted findings'
// among them; never nil.
func (o *Outcome) BlockingChecks() []string { return append([]string{}, o.seen.checks...) }

// wants reports whether a finding that is blocking or not, and integrity
// or not, added now would be kept: an answer can show it.
func (o *Outcome) wants(blocking, integrity bool) bool {
	return o.keep <= 0 || o.seen.all < o.keep || blocking && o.seen.blocking < o.keep ||
		integrity && o.seen.integrity < o.keep
}

// add adds a finding: kept when wanted, else counted.
func (o *Outcome) add(f Finding) {
	if o.wants(f.Blocking, f.flagged()) {
		o.Findings = append(o.Findings, f)
	}
	o.count(1, f.Blocking, f.flagged(), f.Check)
}

// count counts n findings of check, blocking or not and integrity or not;
// a caller that only counts them (they are omitted) made sure none is
// wanted (wants).
func (o *Outcome) count(n int, blocking, integrity bool, check string) {
	if n <= 0 {
		return
	}
	o.seen.all += n
	if integrity {
		o.seen.integrity += n
	}
	if !blocking {
		return
	}
	o.seen.blocking += n
	if !slices.Contains(o.seen.checks, check) {
		o.seen.checks = append(o.seen.checks, check)
	}
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

// flagged reports whether the answer lists f among its flags: a failed
// integrity check, or an advisory finding.
func (f *Finding) flagged() bool { return f.Source == SourceIntegrity || f.Advisory }

// callerField is where a finding is in the caller's words, for flags and
// errors lines: the rule's field or bound's key as written, else the
// location (SPEC §2).
func (f *Finding) callerField() string {
	if f.Field != "" {
		return f.Field
	}
	return f.Path
}
