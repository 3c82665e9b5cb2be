package engine

import (
	"github.com/verifier-dev/verifier/engine/schema"
)

// CheckUnknownKeyword names the finding of a likely misspelt keyword in
// expected_schema (schema.KeywordTypo). It is no check: it never blocks and
// counts in no ratio, but it is flagged (a warning) and hinted, because a
// misspelt keyword is ignored and so silently weakens the schema.
const CheckUnknownKeyword = "schema:unknown_keyword"

// addKeywordTypos adds to out a finding per likely misspelt keyword.
func addKeywordTypos(out *Outcome, typos []schema.KeywordTypo) {
	for _, t := range typos {
		where := "expected_schema#" + t.Pointer
		suggestion := "did you mean `" + t.Suggestion + "`?"
		out.add(Finding{
			Source: SourceSchema, Check: CheckUnknownKeyword, Path: where, Field: where,
			Expected: suggestion, Found: "unknown keyword `" + t.Keyword + "`",
			Message: "`" + t.Keyword + "` at " + where + " is not a keyword of the schema's draft, so it checks nothing; " + suggestion,
			Gate:    GateSchema, Advisory: true,
		})
	}
}
