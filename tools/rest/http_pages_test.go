package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/verifier-dev/verifier/store"
)

// pagesNow is the fixed "now" of the page tests: midday, so that verdicts
// an hour apart fall on the same UTC day.
var pagesNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// pageVerdict is a verdict of agent at t.
func pageVerdict(agent string, n int, pass bool, t time.Time) store.Verdict {
	result, overall := store.ResultFail, store.Ratio{Ratio: 0.5, Passed: 1, Total: 2}
	if pass {
		result, overall = store.ResultPass, store.Ratio{Ratio: 1, Passed: 2, Total: 2}
	}
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
	return store.Verdict{VerificationID: id, TaskID: "task-" + strconv.Itoa(n), AgentID: agent, Result: result,
		OutputHash: "00", SchemaHash: "00", RulesHash: "00", RequestHash: "00",
		Overall: overall, VerifiedAt: t, KeyVersion: "k1", Receipt: json.RawMessage(`{}`)}
}

// agentHistory is a mix of passes and fails: one pass 100 days back (out
// of the chart's 90 days, in the totals), three verdicts three days back,
// none two days back, and three today.
func agentHistory(agent string) []store.Verdict {
	day := func(back int, hour int) time.Time {
		return time.Date(2026, 11, 20-back, hour, 0, 0, 0, time.UTC)
	}
	return []store.Verdict{
		pageVerdict(agent, 1, true, day(100, 9)),
		pageVerdict(agent, 2, true, day(3, 8)), pageVerdict(agent, 3, false, day(3, 9)), pageVerdict(agent, 4, true, day(3, 10)),
		pageVerdict(agent, 5, true, day(0, 8)), pageVerdict(agent, 6, false, day(0, 9)), pageVerdict(agent, 7, false, day(0, 10)),
	}
}

func putVerdicts(t *testing.T, st store.Store, vs []store.Verdict) {
	t.Helper()
	for _, v := range vs {
		if err := st.PutVerdict(context.Background(), v); err != nil {
			t.Fatal(err)
		}
	}
}

// attr finds the value of the attribute name in each element of the page
// that matches tag.
func attrs(page, tag, name string) []string {
	var out []string
	for _, el := range regexp.MustCompile(tag).FindAllString(page, -1) {
		if m := regexp.MustCompile(` ` + name + `="([^"]*)"`).FindStringSubmatch(el); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

func TestHTTPAgentPage(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	f.svc.Now = func() time.Time { return pagesNow }
	const agent = "seller-chart"
	history := agentHistory(agent)
	putVerdicts(t, f.svc.Store, history)

	resp, body := f.do(t, http.MethodGet, "/agents/"+agent, nil, nil)
	page := string(body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /agents/%s = %d %q:\n%s", agent, resp.StatusCode, resp.Header.Get("Content-Type"), page)
	}
	checkPageCSP(t, resp)
	for _, want := range []string{
		`<dd id="total">7</dd>`, `<dd id="passed">4</dd>`, `<dd id="failed">3</dd>`, `<dd id="pass-rate">57.1%</dd>`,
		`href="/receipts/00000000-0000-4000-8000-000000000007"`, `<code>task-7</code>`, `href="/score/seller-chart"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	// One mark per day with verdicts in the last 90 days, oldest first.
	days := attrs(page, `<g class="day"[^>]*>`, "data-day")
	if want := []string{"2026-11-17", "2026-11-20"}; strings.Join(days, ",") != strings.Join(want, ",") {
		t.Errorf("chart days %v, want %v", days, want)
	}
	passed, failed := attrs(page, `<g class="day"[^>]*>`, "data-passed"), attrs(page, `<g class="day"[^>]*>`, "data-failed")
	if strings.Join(passed, ",") != "2,1" || strings.Join(failed, ",") != "1,2" {
		t.Errorf("chart passes %v and fails %v, want [2 1] and [1 2]", passed, failed)
	}
	if n := strings.Count(page, `<circle class="lower-point"`); n != 2 {
		t.Errorf("%d lower-bound points, want 2", n)
	}

	// Each day's point is the score a store holding only the verdicts up
	// to the end of that day gives then; today's is the score now.
	lowers := regexp.MustCompile(`score lower bound ([0-9.]+)</title>`).FindAllStringSubmatch(page, -1)
	if len(lowers) != 2 {
		t.Fatalf("lower bounds %v, want 2", lowers)
	}
	for i, c := range []struct {
		upTo int
		at   time.Time
	}{{4, time.Date(2026, 11, 18, 0, 0, 0, 0, time.UTC)}, {7, pagesNow}} {
		st, err := store.OpenBolt(filepath.Join(t.TempDir(), "only.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		putVerdicts(t, st, history[:c.upTo])
		sc, err := st.Score(context.Background(), agent, c.at)
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := strconv.ParseFloat(lowers[i][1], 64)
		if math.Abs(got-sc.Interval[0]) > 1e-5 {
			t.Errorf("day %d: lower bound %v, want %v", i, got, sc.Interval[0])
		}
		if i == 1 && !strings.Contains(page, `<span id="score">`+strconv.FormatFloat(sc.Score, 'f', 1, 64)+`</span>`) {
			t.Errorf("the page does not show the score %.1f", sc.Score)
		}
	}
}

func TestHTTPAgentPagePaid(t *testing.T) {
	pricing := func(*http.Request) Pricing {
		return Pricing{Limited: true, FreePerDay: 5, PaymentEnabled: true, PriceVerify: "0.02", PriceScore: "0.01", Asset: "USDC"}
	}
	f := newHTTPFixture(t, &HTTPOptions{Pricing: pricing}, nil)
	f.svc.Now = func() time.Time { return pagesNow }
	putVerdicts(t, f.svc.Store, agentHistory("seller-paid"))
	resp, body := f.do(t, http.MethodGet, "/agents/seller-paid", nil, nil)
	page := string(body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET = %d", resp.StatusCode)
	}
	if !strings.Contains(page, `id="score-paid"`) || !strings.Contains(page, "0.01 USDC") {
		t.Errorf("the page does not say the score is paid")
	}
	for _, leak := range []string{`id="score"`, `class="lower-point"`, `class="lower-line"`, "score lower bound"} {
		if strings.Contains(page, leak) {
			t.Errorf("a paid score leaks into the page: %s", leak)
		}
	}
	if n := strings.Count(page, `<g class="day"`); n != 2 {
		t.Errorf("%d day marks, want 2: the free reputation is still charted", n)
	}
}

func TestHTTPAgentPageHostile(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	f.svc.Now = func() time.Time { return pagesNow }
	hostile := `<script>alert("x")</script><img src=x onerror=alert(1)>'&`
	putVerdicts(t, f.svc.Store, []store.Verdict{pageVerdict(hostile, 1, true, pagesNow.Add(-time.Hour))})

	resp, body := f.do(t, http.MethodGet, "/agents/"+url.PathEscape(hostile), nil, nil)
	page := string(body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET hostile agent = %d:\n%s", resp.StatusCode, page)
	}
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "<img src=x") {
		t.Errorf("the agent id reached the page unescaped:\n%s", page)
	}
	if !strings.Contains(page, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;") {
		t.Errorf("the page does not show the agent id escaped")
	}
	if !strings.Contains(page, `href="/score/`+url.PathEscape(hostile)) && !strings.Contains(page, `href="/score/%3Cscript%3E`) {
		t.Errorf("the score link does not carry the escaped agent id")
	}

	for _, tt := range []struct {
		name, path string
		status     int
		title      string
	}{
		{"unknown agent", "/agents/" + url.PathEscape(`nobody<b>here</b>`), http.StatusNotFound, "No record for this agent"},
		{"test agent", "/agents/test-seller", http.StatusNotFound, "No record for this agent"},
		{"too long", "/agents/" + strings.Repeat("<i>", 70), http.StatusUnprocessableEntity, "Not an agent id"},
		{"not UTF-8", "/agents/%FF%FE<b>", http.StatusUnprocessableEntity, "Not an agent id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.do(t, http.MethodGet, tt.path, nil, nil)
			page := string(body)
			if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Fatalf("GET %s = %d %q, want %d and a page", tt.path, resp.StatusCode, resp.Header.Get("Content-Type"), tt.status)
			}
			checkPageCSP(t, resp)
			if !strings.Contains(page, "<h1>"+tt.title+"</h1>") || !strings.Contains(page, `href="/"`) {
				t.Errorf("not the friendly page %q:\n%s", tt.title, page)
			}
			for _, echo := range []string{"<b>", "&lt;b&gt;", "<i>", "&lt;i&gt;", "nobody", "test-seller"} {
				if strings.Contains(page, echo) {
					t.Errorf("the page echoes the request: %s", echo)
				}
			}
		})
	}
}

// checkPageCSP checks the headers every page carries.
func checkPageCSP(t *testing.T, resp *http.Response) {
	t.Helper()
	if got := resp.Header.Get("Content-Security-Policy"); got != pagesCSP {
		t.Errorf("Content-Security-Policy = %q, want %q", got, pagesCSP)
	}
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'"} {
		if !strings.Contains(resp.Header.Get("Content-Security-Policy"), want) {
			t.Errorf("the CSP lacks %s", want)
		}
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("nosniff %q, Referrer-Policy %q", resp.Header.Get("X-Content-Type-Options"), resp.Header.Get("Referrer-Policy"))
	}
}

func TestHTTPCheckPage(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	resp, body := f.do(t, http.MethodGet, "/check", nil, nil)
	page := string(body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /check = %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	checkPageCSP(t, resp)
	for _, want := range []string{`<label for="receipt">`, `<label for="request">`, `<label for="log-proof">`, `<script type="module" src="/docs/check.js">`} {
		if !strings.Contains(page, want) {
			t.Errorf("/check lacks %s", want)
		}
	}
	// Its script, its canonicalizer (with the licence) and its style are
	// served from the binary.
	for asset, typ := range map[string]string{
		"check.js": "text/javascript; charset=utf-8", "logcheck.js": "text/javascript; charset=utf-8", "canonicalize.js": "text/javascript; charset=utf-8",
		"pages.css": "text/css; charset=utf-8", "canonicalize.LICENSE": "text/plain; charset=utf-8",
	} {
		resp, body := f.do(t, http.MethodGet, "/docs/"+asset, nil, nil)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != typ || len(body) == 0 {
			t.Errorf("GET /docs/%s = %d %q", asset, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	_, js := f.do(t, http.MethodGet, "/docs/check.js", nil, nil)
	if !strings.Contains(string(js), "from '/docs/canonicalize.js'") || !strings.Contains(string(js), "from '/docs/logcheck.js'") {
		t.Errorf("check.js does not import the vendored canonicalizer and the log check")
	}
	_, licence := f.do(t, http.MethodGet, "/docs/canonicalize.LICENSE", nil, nil)
	if !strings.Contains(string(licence), "Apache License") {
		t.Errorf("the canonicalizer's licence is not served")
	}
}

// TestHTTPAgentPageChartCap: the chart reads at most chartMaxVerdicts
// verdicts; when that cuts its first day short, the page says so.
func TestHTTPAgentPageChartCap(t *testing.T) {
	f := newHTTPFixture(t, nil, nil)
	f.svc.Now = func() time.Time { return pagesNow }
	const agent = "seller-busy"
	older, newer := chartMaxVerdicts-400+1, 400 // one verdict more than the chart reads
	var vs []store.Verdict
	for i := range older + newer {
		day := pagesNow.Add(-24 * time.Hour)
		if i >= older {
			day = pagesNow
		}
		vs = append(vs, pageVerdict(agent, i+1, i%3 != 0, day.Add(-time.Duration(i)*time.Second)))
	}
	errs := make(chan error, len(vs))
	for _, v := range vs {
		go func() { errs <- f.svc.Store.PutVerdict(context.Background(), v) }()
	}
	for range vs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	_, body := f.do(t, http.MethodGet, "/agents/"+agent, nil, nil)
	page := string(body)
	if !strings.Contains(page, `<dd id="total">1001</dd>`) {
		t.Errorf("the totals count every verdict")
	}
	passed, failed := attrs(page, `<g class="day"[^>]*>`, "data-passed"), attrs(page, `<g class="day"[^>]*>`, "data-failed")
	sum := 0
	for _, list := range [][]string{passed, failed} {
		for _, n := range list {
			k, _ := strconv.Atoi(n)
			sum += k
		}
	}
	if len(passed) != 2 || sum != chartMaxVerdicts {
		t.Errorf("chart marks %v %v count %d verdicts, want 2 days and %d", passed, failed, sum, chartMaxVerdicts)
	}
	if !strings.Contains(page, "its first day may lack older ones") {
		t.Errorf("the page does not say the chart's first day is cut short")
	}
}
