package tools_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/internal/testkit"
)

// TestIsLoggedFormOf: FullOnlyMembers is exactly what a full answer has
// beyond its stored compact receipt, and the stored receipt is the logged
// form of the full answer and of itself, but not of an answer that differs
// in a member they share, nor the other way round.
func TestIsLoggedFormOf(t *testing.T) {
	svc := testkit.NewTestService(t, true)
	res, err := svc.Verify(context.Background(), testkit.ReadTestdata(t, "invoice-fail.json"))
	if err != nil {
		t.Fatal(err)
	}
	full, stored := res.Answer, []byte(res.Verdict.Receipt)
	var f, c map[string]json.RawMessage
	if json.Unmarshal(full, &f) != nil || json.Unmarshal(stored, &c) != nil {
		t.Fatal("answers do not decode")
	}
	var extra []string
	for name := range f {
		if _, ok := c[name]; !ok {
			extra = append(extra, name)
		}
	}
	if want := slices.Sorted(slices.Values(tools.FullOnlyMembers)); !slices.Equal(slices.Sorted(slices.Values(extra)), want) {
		t.Errorf("the full answer's members beyond the compact's = %v, want FullOnlyMembers %v", slices.Sorted(slices.Values(extra)), want)
	}
	for name := range maps.Keys(c) {
		if slices.Contains(tools.FullOnlyMembers, name) {
			t.Errorf("the compact receipt has the full-only member %s", name)
		}
	}
	otherTask := resign(t, svc, full, map[string]any{"task_id": "another"})
	extraMember := resign(t, svc, stored, map[string]any{"note": "added"})
	for _, tt := range []struct {
		name            string
		stored, receipt []byte
		want            bool
	}{
		{"the full answer", stored, full, true},
		{"the compact receipt itself", stored, stored, true},
		{"a full answer of another task", stored, otherTask, false},
		{"a stored receipt with a member more", extraMember, full, false},
		{"the full answer as the stored one", full, stored, false},
		{"not JSON", []byte("{"), full, false},
	} {
		if got := tools.IsLoggedFormOf(tt.stored, tt.receipt); got != tt.want {
			t.Errorf("%s: IsLoggedFormOf = %v, want %v", tt.name, got, tt.want)
		}
	}
}
