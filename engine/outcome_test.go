package engine

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"testing"
	"time"
)

// TestOutcomeKeepsWhatAnswersShow checks that an outcome that keeps only
// the findings an answer can show gives the same answer, byte for byte, as
// one that keeps every finding: totals, omitted counts, blocking checks in
// order of first failure, and every list, for caps on either side of each
// group of findings (schema, bounds, rules not enforced, placeholders and
// undeclared keys, blocking or not).
func TestOutcomeKeepsWhatAnswersShow(t *testing.T) {
	items := joinItems(120, func(i int) string {
		switch {
		case i%40 == 39:
			return `"not an object"`
		case i%7 == 3:
			return `{"a":1,"b":2,"c":3,"z":"todo","y":"TBD"}`
		}
		return `{"n":` + fmt.Sprint(i) + `}`
	})
	rules := joinItems(70, func(i int) string { return fmt.Sprintf(`{"type":"gte","field":"items[%d].n","value":1000}`, i) })
	bodies := map[string]string{
		"schema, rules, content": `{"task_id":"t","expected_schema":{"properties":{"items":{"items":{"type":"object","required":["a","b","c"],"properties":{"a":{},"b":{},"c":{},"n":{"maximum":50}}}}}},` +
			`"submitted_output":{"items":[` + items + `]},"rules":[` + rules + `],"bounds":{"items[].n":{"max":100}}`,
		"content only": `{"task_id":"t","expected_schema":{"properties":{"items":{"items":{"properties":{"a":{}}}}}},` +
			`"submitted_output":{"items":[` + items + `]}`,
	}
	for name, body := range bodies {
		for _, strict := range []bool{false, true} {
			for _, enforce := range []bool{false, true} {
				for _, listCap := range []int{1, 3, 30, 50, 70, 500} {
					full := fmt.Sprintf(`%s,"strict_content_check":%v,"enforce_rules":%v}`, body, strict, enforce)
					t.Run(fmt.Sprintf("%s/strict %v/enforce %v/cap %d", name, strict, enforce, listCap), func(t *testing.T) {
						compareKeptAnswers(t, New(&Options{ListCap: listCap}), full)
					})
				}
			}
		}
	}
}

// compareKeptAnswers checks the answers of body from an outcome that keeps
// what answers show and one that keeps everything, in both shapes.
func compareKeptAnswers(t *testing.T, v *Verifier, body string) {
	t.Helper()
	req, err := v.DecodeRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	kept, err := v.CheckContext(context.Background(), req, "")
	if err != nil {
		t.Fatal(err)
	}
	every := v.opts
	every.ListCap = math.MaxInt // an outcome that keeps every finding
	all, err := New(&every).CheckContext(context.Background(), req, "")
	if err != nil {
		t.Fatal(err)
	}
	if all.FindingsTotal() != len(all.Findings) || kept.FindingsTotal() != len(all.Findings) {
		t.Fatalf("kept %d of %d findings, all %d of %d", len(kept.Findings), kept.FindingsTotal(), len(all.Findings), all.FindingsTotal())
	}
	if len(kept.Findings) == kept.FindingsTotal() && len(all.Findings) > 3*v.opts.listCap() {
		t.Errorf("nothing omitted of %d findings with a cap of %d", len(all.Findings), v.opts.listCap())
	}
	for _, detail := range []string{DetailFull, DetailCompact} {
		r := *req
		r.Detail = detail
		meta := AnswerMeta{VerificationID: "v", VerifiedAt: time.Unix(0, 0)}
		got, err := v.NewAnswer(&r, kept, meta).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		want, err := v.NewAnswer(&r, all, meta).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s answer from the kept findings differs:\n got %.1500s\nwant %.1500s", detail, got, want)
		}
	}
}
