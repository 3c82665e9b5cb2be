package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// superLinear is the log-log slope between two sizes above which a step
// counts as super-linear: linear growth with a fixed cost has slopes at or
// under 1, and the machine's noise moves them by a few hundredths.
const superLinear = 1.15

// unit is what a family's per-unit costs are counted in.
func (f family) unit() (name string, per float64) {
	switch f.param {
	case "bytes":
		return "KB", 1024
	case "checks":
		return "check", 1
	case "rules":
		return "rule", 1
	}
	return f.param, 1
}

// title is the family's heading.
func (f family) title() string {
	switch f.name {
	case "Document":
		return "Document size"
	case "SchemaChecks":
		return "Schema checks"
	}
	return f.name
}

// timeMetric is the time the table and chart use: the process's CPU time
// per verification when every sub-benchmark reports it, wall time if not
// (a one-iteration smoke run measures no CPU time).
func (f family) timeMetric() (unit, label string) {
	for _, p := range f.points {
		if p.metrics["cpu-ns/op"] <= 0 {
			return "ns/op", "wall"
		}
	}
	return "cpu-ns/op", "CPU"
}

// slope is the log-log slope of metric between points a and b: 1 for
// linear growth without a fixed cost, under 1 while a fixed cost is being
// amortized, over 1 for growth faster than linear.
// It is NaN where either value is missing.
func slope(a, b point, metric string) float64 {
	if a.metrics[metric] <= 0 || b.metrics[metric] <= 0 {
		return math.NaN()
	}
	return math.Log(b.metrics[metric]/a.metrics[metric]) / math.Log(b.size/a.size)
}

// step is the slope of one metric from one size to the next.
type step struct{ slope, from, to float64 }

// writeTable writes the family's markdown table and a line naming its
// steepest steps.
func writeTable(w io.Writer, f family) {
	unit, per := f.unit()
	tm, tl := f.timeMetric()
	fmt.Fprintf(w, "\n**%s** (%s; median of %d runs; time per unit and slope from %s time)\n\n", f.title(), f.param, f.points[0].runs, tl)
	fmt.Fprintf(w, "| %s | wall/op | CPU/op | %s per %s | %s per added %s | slope | B/op | peak heap | allocs/op |\n", f.param, tl, unit, tl, unit)
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	worst := map[string]step{}
	for i, p := range f.points {
		units := p.size / per
		added, sl := "—", "—"
		if i > 0 {
			q := f.points[i-1]
			added = formatNs((p.metrics[tm] - q.metrics[tm]) / (units - q.size/per))
			s := slope(q, p, tm)
			sl = fmt.Sprintf("%.2f", s)
			if s > superLinear {
				sl += " super-linear"
			}
			for _, m := range []string{tm, "peak-B"} {
				if s := slope(q, p, m); !math.IsNaN(s) && (worst[m] == step{} || s > worst[m].slope) {
					worst[m] = step{s, q.size, p.size}
				}
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			formatCount(p.size), formatNs(p.metrics["ns/op"]), formatNs(p.metrics["cpu-ns/op"]),
			formatNs(p.metrics[tm]/units), added, sl,
			formatBytes(p.metrics["B/op"]), formatBytes(p.metrics["peak-B"]), formatCount(p.metrics["allocs/op"]))
	}
	if len(f.points) > 1 {
		t, m := worst[tm], worst["peak-B"]
		fmt.Fprintf(w, "\nSteepest step: %s time %.2f (%s → %s %s), peak heap %.2f (%s → %s).",
			tl, t.slope, formatCount(t.from), formatCount(t.to), f.param, m.slope, formatCount(m.from), formatCount(m.to))
		if t.slope > superLinear || m.slope > superLinear {
			fmt.Fprintf(w, " A slope over %.2f is a super-linear step.\n", superLinear)
		} else {
			fmt.Fprintf(w, " No step over %.2f: no super-linear growth.\n", superLinear)
		}
	}
}

// formatNs writes a duration in nanoseconds as µs or ms; a difference
// may be negative.
func formatNs(ns float64) string {
	switch {
	case ns == 0 || math.IsNaN(ns):
		return "—"
	case ns < 0:
		return "-" + formatNs(-ns)
	case ns < 1e6:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	}
	return fmt.Sprintf("%.2f s", ns/1e9)
}

// formatBytes writes a byte count in B, KB or MB (of 1,024).
func formatBytes(b float64) string {
	switch {
	case b <= 0 || math.IsNaN(b):
		return "—"
	case b < 1<<10:
		return fmt.Sprintf("%.0f B", b)
	case b < 1<<20:
		return fmt.Sprintf("%.1f KB", b/(1<<10))
	}
	return fmt.Sprintf("%.2f MB", b/(1<<20))
}

// formatCount writes a whole number with thousands separators.
func formatCount(v float64) string {
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
