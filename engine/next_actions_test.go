package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestNextActionsOnWarnings: a pass that carries warnings (a rule, bound or
// content check whose gate is off, a misspelt schema keyword) asks the buyer
// to review them before paying, in both shapes; a clean pass and a fail do
// not.
func TestNextActionsOnWarnings(t *testing.T) {
	const schema = `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"},"s":{"type":"string"}}}`
	clean := []NextAction{{Action: "attach_receipt", For: "seller"}, {Action: "proceed_to_payment", For: "buyer"}}
	review := []NextAction{{Action: "attach_receipt", For: "seller"}, {Action: "review_warnings", For: "buyer"},
		{Action: "proceed_to_payment", For: "buyer"}}
	repair := []NextAction{{Action: "repair_and_reverify", Using: "hints"}}
	tests := []struct {
		name, schema, output, extra string
		wantWarnings                int
		want                        []NextAction
	}{
		{name: "clean pass", output: `{"a":1,"b":2,"s":"ok"}`, extra: `"rules":[{"type":"lte","field":"a","other_field":"b"}]`, want: clean},
		{name: "rule violation not enforced", output: `{"a":2,"b":1,"s":"ok"}`, extra: `"rules":[{"type":"lte","field":"a","other_field":"b"}]`,
			wantWarnings: 1, want: review},
		{name: "two rule violations", output: `{"a":2,"b":1,"s":"ok"}`,
			extra:        `"rules":[{"type":"lte","field":"a","other_field":"b"},{"type":"gte","field":"b","value":5}]`,
			wantWarnings: 2, want: review},
		{name: "misspelt keyword", schema: `{"type":"object","requried":["a"]}`, output: `{"a":1}`, wantWarnings: 1, want: review},
		{name: "placeholder not strict", output: `{"a":1,"s":"TODO"}`, wantWarnings: 1, want: review},
		{name: "enforced rule fails", output: `{"a":2,"b":1,"s":"ok"}`,
			extra: `"rules":[{"type":"lte","field":"a","other_field":"b"}],"enforce_rules":true`, want: repair},
		{name: "fail with a warning besides", output: `{"a":"x","b":1}`, extra: `"rules":[{"type":"gte","field":"b","value":2}]`,
			wantWarnings: 1, want: repair},
	}
	v := New(nil)
	for _, tt := range tests {
		for _, detail := range []string{"full", "compact"} {
			t.Run(tt.name+" "+detail, func(t *testing.T) {
				s := tt.schema
				if s == "" {
					s = schema
				}
				body := fmt.Sprintf(`{"task_id":"t","detail":%q,"expected_schema":%s,"submitted_output":%s`, detail, s, tt.output)
				if tt.extra != "" {
					body += "," + tt.extra
				}
				req, out := checkBody(t, v, body+"}")
				if got := out.Warnings(); got != tt.wantWarnings {
					t.Errorf("Warnings() = %d, want %d (findings %+v)", got, tt.wantWarnings, out.Findings)
				}
				a := v.NewAnswer(req, out, AnswerMeta{VerifiedAt: time.Unix(0, 0)})
				if diff := cmp.Diff(tt.want, a.NextActions); diff != "" {
					t.Errorf("next_actions (-want +got):\n%s", diff)
				}
			})
		}
	}
}
