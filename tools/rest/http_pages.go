package rest

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/verifier-dev/verifier/store"
	"github.com/verifier-dev/verifier/tools"
)

// The pages for people (HTTP mode): the home page a browser gets at /, the
// receipt checker at /check and an agent's record at /agents/{agent_id}.
// They are served from the binary, load nothing from elsewhere and work
// offline; their script and style are assets of /docs/{asset}.

// pagesCSP keeps the pages on this server: scripts and styles from here
// only (no inline ones), and /check may fetch only from here (the agent
// card, and a receipt's log proof and stored receipt by its
// verification_id). Nothing else a person pastes into /check is ever sent
// anywhere.
const pagesCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Route patterns of the pages.
const (
	routeCheckPage = "GET /check"
	routeAgentPage = "GET /agents/{agent_id}"
	routeFavicon   = "GET /favicon.ico"
)

// Bounds of the agent page: the recent verdicts it lists, and the verdicts
// and days its chart draws.
const (
	agentPageRecent   = 20
	chartMaxVerdicts  = 1000
	chartMaxDays      = 90
	agentPageIDLength = 60 // characters of the agent id in the page title
)

// pages are the pages' documents: two fixed ones and the templates of the
// agent page and of the pages' errors.
type pages struct {
	home, check staticDoc
	templates   *template.Template
}

// buildPages loads the pages from docsFS.
func buildPages() (pages, error) {
	var p pages
	for _, d := range []struct {
		dst  *staticDoc
		name string
	}{{&p.home, "home.html"}, {&p.check, "check.html"}} {
		body, err := docsFS.ReadFile("docs/page/" + d.name)
		if err != nil {
			return pages{}, fmt.Errorf("reading page %s: %w", d.name, err)
		}
		*d.dst = newStaticDoc(d.name, "text/html; charset=utf-8", "no-cache", body)
		d.dst.headers = pageHeaders()
	}
	t, err := template.New("pages").ParseFS(docsFS, "docs/page/agent.html.tmpl", "docs/page/notice.html.tmpl")
	if err != nil {
		return pages{}, fmt.Errorf("parsing the page templates: %w", err)
	}
	p.templates = t
	return p, nil
}

// pageHeaders are the headers every page carries.
func pageHeaders() map[string]string {
	return map[string]string{"Content-Security-Policy": pagesCSP, "Referrer-Policy": "no-referrer"}
}

// homePage answers GET / from a browser.
func (h *HTTPHandler) homePage(w http.ResponseWriter, r *http.Request) {
	h.pages.home.ServeHTTP(w, r)
}

func (h *HTTPHandler) checkPage(w http.ResponseWriter, r *http.Request) {
	h.pages.check.ServeHTTP(w, r)
}

// favicon answers GET /favicon.ico, which browsers ask for where no page
// links an icon (a JSON answer opened in a tab), with the SVG icon the pages
// link (/docs/favicon.svg), as image/svg+xml.
func (h *HTTPHandler) favicon(w http.ResponseWriter, r *http.Request) {
	h.docs["favicon.svg"].ServeHTTP(w, r)
}

// notice is a page that says why there is nothing to show. It never
// repeats what the caller sent.
type notice struct {
	Status  int
	Title   string
	Message string
}

// writePage renders the template name with data; a failure to render is
// logged and answered with the one error shape.
func (h *HTTPHandler) writePage(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	var b bytes.Buffer
	if err := h.pages.templates.ExecuteTemplate(&b, name, data); err != nil {
		h.fail(w, r, fmt.Errorf("rendering page %s: %w", name, err))
		return
	}
	hd := w.Header()
	for k, v := range pageHeaders() {
		hd.Set(k, v)
	}
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b.Bytes())
	}
}

func (h *HTTPHandler) writeNotice(w http.ResponseWriter, r *http.Request, n notice) {
	h.writePage(w, r, n.Status, "notice.html.tmpl", n)
}

// agentPage serves GET /agents/{agent_id}: the agent's free reputation, its
// trust score when scores are free, its recent verdicts and a chart of its
// verdicts per day.
func (h *HTTPHandler) agentPage(w http.ResponseWriter, r *http.Request) {
	agentID := r.PathValue("agent_id")
	if p := tools.AgentIDProblem(agentID); p != nil {
		h.writeNotice(w, r, notice{Status: http.StatusUnprocessableEntity, Title: "Not an agent id",
			Message: "An agent id is 1 to 200 characters of UTF-8, exactly as verification requests send it in agent_id. This one is not."})
		return
	}
	page, err := h.agentRecord(r, agentID)
	if err != nil {
		h.log.Error("reading an agent's record", "correlation_id", w.Header().Get(CorrelationHeader), "err", err)
		h.writeNotice(w, r, notice{Status: http.StatusServiceUnavailable, Title: "The record could not be read",
			Message: "The service could not read its store just now. Try again shortly."})
		return
	}
	if page == nil {
		h.writeNotice(w, r, notice{Status: http.StatusNotFound, Title: "No record for this agent",
			Message: "This service has recorded no verdict for this agent id. An agent appears here after a verification names it in agent_id; ids starting with test- are never recorded."})
		return
	}
	h.writePage(w, r, http.StatusOK, "agent.html.tmpl", page)
}

// agentView is what the agent page shows.
type agentView struct {
	AgentID, ShortID      string
	Total, Passed, Failed int
	PassRate              string
	FirstSeen, LastSeen   string
	// PaymentOn says the trust score is paid: the page shows how to get it
	// instead of the score, and the chart has no score line.
	PaymentOn           bool
	PriceScore, Asset   string
	Score               *agentScore
	Recent              []agentVerdict
	MoreVerdicts        int // verdicts beyond those listed
	Chart               chart
	ScoreURL, ReputeURL string
}

// agentScore is the trust score as the page shows it.
type agentScore struct {
	Score, Lower, Upper, Confidence string
	Inputs                          tools.RecordInputs
	Formula                         string
}

// agentVerdict is one line of the recent verdicts.
type agentVerdict struct {
	VerificationID, TaskID, Result, VerifiedAt, Overall string
}

// agentRecord reads what the agent page shows; nil when the agent has no
// recorded verdict.
func (h *HTTPHandler) agentRecord(r *http.Request, agentID string) (*agentView, error) {
	ctx := r.Context()
	rep, err := h.svc.Store.Reputation(ctx, agentID, store.Page{Limit: agentPageRecent})
	if err != nil {
		return nil, fmt.Errorf("reading reputation: %w", err)
	}
	if rep.Total == 0 {
		return nil, nil
	}
	v := &agentView{
		AgentID: agentID, ShortID: shorten(agentID, agentPageIDLength),
		Total: rep.Total, Passed: rep.Passed, Failed: rep.Failed,
		PassRate:     percent(rep.PassRate),
		MoreVerdicts: rep.Total - len(rep.Recent),
		ScoreURL:     "/score/" + url.PathEscape(agentID),
		ReputeURL:    "/reputation/" + url.PathEscape(agentID),
	}
	if rep.FirstSeen != nil && rep.LastSeen != nil {
		v.FirstSeen, v.LastSeen = pageTime(*rep.FirstSeen), pageTime(*rep.LastSeen)
	}
	for _, s := range rep.Recent {
		v.Recent = append(v.Recent, agentVerdict{
			VerificationID: s.VerificationID, TaskID: s.TaskID, Result: s.Result,
			VerifiedAt: pageTime(s.VerifiedAt), Overall: fmt.Sprintf("%d of %d checks", s.Overall.Passed, s.Overall.Total),
		})
	}
	if h.opts.Pricing != nil {
		if p := h.opts.Pricing(r); p.PaymentEnabled {
			v.PaymentOn, v.PriceScore, v.Asset = true, p.PriceScore, p.Asset
		}
	}
	verdicts, complete, err := h.chartVerdicts(ctx, agentID)
	if err != nil {
		return nil, err
	}
	var sc *store.Score
	if !v.PaymentOn {
		s, err := h.svc.Store.Score(ctx, agentID, h.svc.CurrentTime().UTC())
		if err != nil {
			return nil, fmt.Errorf("reading the trust score: %w", err)
		}
		sc = &s
		rec := tools.NewTrustRecord(s, s.Inputs.EvaluatedAt)
		v.Score = &agentScore{
			Score: oneDecimal(rec.Score), Lower: oneDecimal(rec.Interval.Lower), Upper: oneDecimal(rec.Interval.Upper),
			Confidence: percent(rec.Interval.Confidence), Inputs: rec.Inputs, Formula: rec.Formula,
		}
	}
	v.Chart = drawChart(dailyCounts(verdicts, sc), complete)
	return v, nil
}

// chartVerdicts reads the agent's verdicts the chart draws, newest first:
// those of the chartMaxDays days up to its newest, at most chartMaxVerdicts.
// complete is false when the cap cut the oldest day drawn short.
func (h *HTTPHandler) chartVerdicts(ctx context.Context, agentID string) (verdicts []store.VerdictSummary, complete bool, err error) {
	page := store.Page{Limit: store.MaxPageLimit}
	var since time.Time
	for len(verdicts) < chartMaxVerdicts {
		rep, err := h.svc.Store.Reputation(ctx, agentID, page)
		if err != nil {
			return nil, false, fmt.Errorf("reading verdicts for the chart: %w", err)
		}
		for _, s := range rep.Recent {
			if since.IsZero() {
				since = utcDay(s.VerifiedAt).AddDate(0, 0, 1-chartMaxDays)
			}
			switch {
			case s.VerifiedAt.Before(since):
				return verdicts, true, nil
			case len(verdicts) == chartMaxVerdicts:
				return verdicts, false, nil
			}
			verdicts = append(verdicts, s)
		}
		if rep.NextCursor == "" {
			return verdicts, true, nil
		}
		page.Cursor = rep.NextCursor
	}
	return verdicts, false, nil
}

// chartDay is one UTC day of the chart.
type chartDay struct {
	Day            time.Time
	Passed, Failed int
	// Lower is the score's lower bound (0–100) at the end of the day, by the
	// trust-score formula over the verdicts up to then; NaN when not shown.
	Lower float64
}

// dailyCounts groups verdicts (newest first) by UTC day, oldest day first.
// With sc (the score now) each day also gets the score's lower bound at its
// end: the formula's weighted sums are sc's less the weights of the
// verdicts after that moment, decayed to it — exact for every day drawn,
// since every verdict after it was read.
func dailyCounts(verdicts []store.VerdictSummary, sc *store.Score) []chartDay {
	var days []chartDay
	for i := len(verdicts) - 1; i >= 0; i-- {
		s := verdicts[i]
		day := utcDay(s.VerifiedAt)
		if len(days) == 0 || !days[len(days)-1].Day.Equal(day) {
			days = append(days, chartDay{Day: day, Lower: math.NaN()})
		}
		if s.Result == store.ResultPass {
			days[len(days)-1].Passed++
		} else {
			days[len(days)-1].Failed++
		}
	}
	if sc == nil || !sc.HasHistory {
		return days
	}
	ref := sc.Inputs.EvaluatedAt
	for i := range days {
		end := days[i].Day.AddDate(0, 0, 1)
		if end.After(ref) {
			end = ref
		}
		wp, wf := sc.Inputs.WeightedPassed, sc.Inputs.WeightedFailed
		for _, s := range verdicts {
			if s.VerifiedAt.Before(end) {
				break // newest first: the rest are older still
			}
			w := store.DecayWeight(ref.Sub(s.VerifiedAt))
			if s.Result == store.ResultPass {
				wp -= w
			} else {
				wf -= w
			}
		}
		scale := store.DecayWeight(ref.Sub(end))
		wp, wf = max(wp, 0)/scale, max(wf, 0)/scale
		lower, _ := store.WilsonInterval(wp, wp+wf)
		days[i].Lower = 100 * lower
	}
	return days
}

// Geometry of the chart, in SVG user units.
const (
	chartWidth  = 720
	chartHeight = 260
	chartLeft   = 44
	chartRight  = 48
	chartTop    = 16
	chartBottom = 40
)

// chart is the SVG chart of the agent page.
type chart struct {
	Width, Height            int
	Left, Right, Top, Bottom int // the plot area's edges
	Days                     []chartMark
	MaxCount                 int
	MidCountY                float64
	MidCount                 int
	FirstDay, LastDay        string
	Span                     int // days from the first to the last, inclusive
	LowerLine                string
	ShowLower                bool
	Complete                 bool
	Verdicts                 int
}

// chartMark is one day's mark: a bar of passes under a bar of fails, and
// the score's lower bound as a point.
type chartMark struct {
	Date                                    string
	Passed, Failed                          int
	X, BarWidth, PassY, PassH, FailY, FailH string
	ShowLower                               bool
	Lower, LowerX, LowerY                   string
}

// drawChart lays out days (oldest first) on a time axis from the first day
// to the last.
func drawChart(days []chartDay, complete bool) chart {
	c := chart{
		Width: chartWidth, Height: chartHeight,
		Left: chartLeft, Right: chartWidth - chartRight, Top: chartTop, Bottom: chartHeight - chartBottom,
		Complete: complete,
	}
	if len(days) == 0 {
		return c
	}
	first, last := days[0].Day, days[len(days)-1].Day
	c.FirstDay, c.LastDay = first.Format(time.DateOnly), last.Format(time.DateOnly)
	c.Span = int(last.Sub(first).Hours()/24) + 1
	c.MaxCount = 1
	for _, d := range days {
		c.MaxCount = max(c.MaxCount, d.Passed+d.Failed)
		c.Verdicts += d.Passed + d.Failed
	}
	c.MidCount = (c.MaxCount + 1) / 2
	plotW, plotH := float64(c.Right-c.Left), float64(c.Bottom-c.Top)
	c.MidCountY = float64(c.Bottom) - plotH*float64(c.MidCount)/float64(c.MaxCount)
	slot := plotW / float64(c.Span)
	barW := min(slot*0.7, 28)
	unit := plotH / float64(c.MaxCount)
	var line []string
	for _, d := range days {
		i := int(d.Day.Sub(first).Hours() / 24)
		centre := float64(c.Left) + slot*(float64(i)+0.5)
		passH, failH := unit*float64(d.Passed), unit*float64(d.Failed)
		m := chartMark{
			Date: d.Day.Format(time.DateOnly), Passed: d.Passed, Failed: d.Failed,
			X: coord(centre - barW/2), BarWidth: coord(barW),
			PassY: coord(float64(c.Bottom) - passH), PassH: coord(passH),
			FailY: coord(float64(c.Bottom) - passH - failH), FailH: coord(failH),
		}
		if !math.IsNaN(d.Lower) {
			y := float64(c.Bottom) - plotH*d.Lower/100
			m.ShowLower, m.Lower, m.LowerX, m.LowerY = true, number(tools.RoundScore(d.Lower)), coord(centre), coord(y)
			line = append(line, coord(centre)+","+coord(y))
		}
		c.Days = append(c.Days, m)
	}
	if len(line) > 0 {
		c.ShowLower, c.LowerLine = true, strings.Join(line, " ")
	}
	return c
}

// utcDay is the start of t's UTC day.
func utcDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// pageTime writes a time for people: UTC to the second.
func pageTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// percent writes a fraction in [0, 1] as a percentage with one decimal.
func percent(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

// oneDecimal writes a score for reading: one decimal.
func oneDecimal(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

// number writes a number as the shortest decimal that reads back.
func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// coord writes an SVG coordinate to two decimals.
func coord(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

// shorten cuts s to n characters, marking the cut with an ellipsis.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
