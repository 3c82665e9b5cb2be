package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// scriptedHistory is a small history over several agents, listed newest
// first per agent as Reputation must return it (ties in time by
// verification id, descending).
func scriptedHistory() (byAgent map[string][]Verdict, all []Verdict) {
	h := time.Hour
	byAgent = map[string][]Verdict{
		"seller-a": {
			testVerdict("tie-b", "seller-a", true, t0.Add(3*h)),
			testVerdict("tie-a", "seller-a", false, t0.Add(3*h)),
			testVerdict("a-3", "seller-a", true, t0.Add(2*h)),
			testVerdict("a-2", "seller-a", false, t0.Add(h)),
			testVerdict("a-1", "seller-a", true, t0),
		},
		"seller-b": {
			testVerdict("b-1", "seller-b", false, t0.Add(90*time.Minute)),
		},
		// An agent whose id extends another's must not see its verdicts.
		"seller-a2": {
			testVerdict("a2-1", "seller-a2", true, t0.Add(5*h)),
		},
		"test-bot":  {testVerdict("t-1", "test-bot", true, t0), testVerdict("t-2", "test-bot", false, t0.Add(h))},
		"":          {testVerdict("anon-1", "", true, t0)},
		"test-":     {testVerdict("t-3", "test-", false, t0)},
		"Test-case": {testVerdict("tc-1", "Test-case", true, t0)},
	}
	for _, vs := range byAgent {
		all = append(all, vs...)
	}
	// Store out of order: the result must not depend on write order.
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return byAgent, all
}

func TestReputationScripted(t *testing.T) {
	s := openTemp(t, nil)
	ctx := context.Background()
	byAgent, all := scriptedHistory()
	put(t, s, all...)

	ptr := func(t time.Time) *time.Time { return &t }
	tests := []struct {
		agent string
		want  Reputation
	}{
		{"seller-a", Reputation{AgentID: "seller-a", Total: 5, Passed: 3, Failed: 2, PassRate: 0.6,
			FirstSeen: ptr(t0), LastSeen: ptr(t0.Add(3 * time.Hour)), Recent: summaries(byAgent["seller-a"])}},
		{"seller-b", Reputation{AgentID: "seller-b", Total: 1, Passed: 0, Failed: 1, PassRate: 0,
			FirstSeen: ptr(t0.Add(90 * time.Minute)), LastSeen: ptr(t0.Add(90 * time.Minute)), Recent: summaries(byAgent["seller-b"])}},
		{"seller-a2", Reputation{AgentID: "seller-a2", Total: 1, Passed: 1, PassRate: 1,
			FirstSeen: ptr(t0.Add(5 * time.Hour)), LastSeen: ptr(t0.Add(5 * time.Hour)), Recent: summaries(byAgent["seller-a2"])}},
		{"Test-case", Reputation{AgentID: "Test-case", Total: 1, Passed: 1, PassRate: 1,
			FirstSeen: ptr(t0), LastSeen: ptr(t0), Recent: summaries(byAgent["Test-case"])}},
		{"test-bot", Reputation{AgentID: "test-bot", Recent: []VerdictSummary{}}},
		{"test-", Reputation{AgentID: "test-", Recent: []VerdictSummary{}}},
		{"", Reputation{AgentID: "", Recent: []VerdictSummary{}}},
		{"never-seen", Reputation{AgentID: "never-seen", Recent: []VerdictSummary{}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("agent %q", tt.agent), func(t *testing.T) {
			got, err := s.Reputation(ctx, tt.agent, Page{})
			if err != nil {
				t.Fatalf("Reputation() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Reputation(%q) mismatch (-want +got):\n%s", tt.agent, diff)
			}
		})
	}
	// Test agents and anonymous verdicts are still receipted.
	for _, id := range []string{"t-1", "t-2", "t-3", "anon-1"} {
		if _, err := s.Receipt(ctx, id); err != nil {
			t.Errorf("Receipt(%s) error = %v", id, err)
		}
	}
	if err := s.Verify(ctx); err != nil {
		t.Errorf("Verify() = %v", err)
	}
}

// pageThrough reads every page of the agent's recent verdicts.
func pageThrough(t *testing.T, s Store, agent string, limit int) (ids []string, pages int) {
	t.Helper()
	q := Page{Limit: limit}
	for {
		rep, err := s.Reputation(context.Background(), agent, q)
		if err != nil {
			t.Fatalf("Reputation(page %d) error = %v", pages, err)
		}
		pages++
		if len(rep.Recent) > max(limit, DefaultPageLimit) {
			t.Fatalf("page %d has %d entries, limit %d", pages, len(rep.Recent), limit)
		}
		for _, r := range rep.Recent {
			ids = append(ids, r.VerificationID)
		}
		if rep.NextCursor == "" {
			return ids, pages
		}
		q.Cursor = rep.NextCursor
	}
}

func TestReputationPaging(t *testing.T) {
	s := openTemp(t, nil)
	byAgent, all := scriptedHistory()
	put(t, s, all...)
	var want []string
	for _, v := range byAgent["seller-a"] {
		want = append(want, v.VerificationID)
	}
	for _, limit := range []int{1, 2, 4, 5, 6} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			got, pages := pageThrough(t, s, "seller-a", limit)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("paged ids mismatch (-want +got):\n%s", diff)
			}
			if wantPages := (len(want) + limit - 1) / limit; pages != wantPages {
				t.Errorf("pages = %d, want %d", pages, wantPages)
			}
		})
	}
}

func TestReputationInvalidPage(t *testing.T) {
	s := openTemp(t, nil)
	put(t, s, testVerdict("p-1", "seller", true, t0))
	tests := []struct {
		name string
		q    Page
	}{
		{"negative limit", Page{Limit: -1}},
		{"cursor not base64url", Page{Cursor: "!!"}},
		{"cursor too short", Page{Cursor: "AAAA"}},
		{"cursor too long", Page{Cursor: strings.Repeat("A", 2000)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Reputation(context.Background(), "seller", tt.q)
			if !errors.Is(err, ErrInvalidPage) {
				t.Errorf("Reputation(%+v) error = %v, want ErrInvalidPage", tt.q, err)
			}
		})
	}
}

// bulkHistory is n verdicts of one agent, 97 s apart with every tenth
// sharing its predecessor's time, about 70% passes; newest first.
func bulkHistory(agent string, n int) []Verdict {
	vs := make([]Verdict, n)
	at := t0
	for i := range n {
		if i%10 != 9 {
			at = at.Add(97 * time.Second)
		}
		vs[n-1-i] = testVerdict(fmt.Sprintf("%s-%06d", agent, i), agent, i*7%10 < 7, at)
	}
	return vs
}

func TestReputationTenThousand(t *testing.T) {
	s := openTemp(t, nil)
	vs := bulkHistory("bulk", 10_000)
	putAll(t, s, vs)
	// Plus verdicts of a neighbouring agent and a test agent, interleaved.
	put(t, s, testVerdict("other", "bulk2", false, t0.Add(time.Hour)), testVerdict("tb", "test-bulk", false, t0))

	rep, err := s.Reputation(context.Background(), "bulk", Page{Limit: 1000})
	if err != nil {
		t.Fatalf("Reputation() error = %v", err)
	}
	passed := 0
	for _, v := range vs {
		if v.Result == ResultPass {
			passed++
		}
	}
	if rep.Total != 10_000 || rep.Passed != passed || rep.Failed != 10_000-passed {
		t.Errorf("Reputation() Total, Passed, Failed = %d, %d, %d, want 10000, %d, %d",
			rep.Total, rep.Passed, rep.Failed, passed, 10_000-passed)
	}
	if want := float64(passed) / 10_000; rep.PassRate != want {
		t.Errorf("PassRate = %v, want %v", rep.PassRate, want)
	}
	if !rep.FirstSeen.Equal(vs[len(vs)-1].VerifiedAt) || !rep.LastSeen.Equal(vs[0].VerifiedAt) {
		t.Errorf("FirstSeen, LastSeen = %v, %v, want %v, %v", rep.FirstSeen, rep.LastSeen,
			vs[len(vs)-1].VerifiedAt, vs[0].VerifiedAt)
	}
	if len(rep.Recent) != MaxPageLimit {
		t.Errorf("len(Recent) with Limit 1000 = %d, want %d", len(rep.Recent), MaxPageLimit)
	}

	// Ties are ordered by id descending; bulkHistory's ids grow with time,
	// so sorting them descending gives the expected order.
	want := make([]string, len(vs))
	for i, v := range vs {
		want[i] = v.VerificationID
	}
	slices.SortFunc(want, func(a, b string) int { return strings.Compare(b, a) })
	got, pages := pageThrough(t, s, "bulk", MaxPageLimit)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paged ids mismatch (-want +got):\n%s", diff)
	}
	if pages != 100 {
		t.Errorf("pages = %d, want 100", pages)
	}
	if err := s.Verify(context.Background()); err != nil {
		t.Errorf("Verify() = %v", err)
	}
}
