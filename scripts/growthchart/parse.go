package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// family is one growth benchmark: BenchmarkGrowth<Name>, its sub-benchmarks
// named <param>=<size>, in increasing size.
type family struct {
	name   string // "Document", "Rules", "SchemaChecks"
	param  string // "bytes", "rules", "checks"
	points []point
}

// point is one sub-benchmark: its size and the median of each metric over
// its runs, keyed by unit ("ns/op", "cpu-ns/op", "B/op", "peak-B", …).
type point struct {
	size    float64
	runs    int
	metrics map[string]float64
}

// slug names the family's chart: "document", "rules", "schema-checks".
func (f family) slug() string {
	var b strings.Builder
	for i, r := range f.name {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('-')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// benchName matches a growth sub-benchmark's name, with the GOMAXPROCS
// suffix go test adds when it is not 1.
var benchName = regexp.MustCompile(`^BenchmarkGrowth([A-Za-z]+)/([a-z]+)=(\d+)(?:-\d+)?$`)

// parse reads go test -bench output and returns the growth families in the
// order they first appear. Lines that are not growth results are skipped; a
// growth result it cannot read is an error.
func parse(r io.Reader) ([]family, error) {
	type key struct {
		family, param string
		size          float64
	}
	samples := map[key]map[string][]float64{}
	var order []key
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || !strings.HasPrefix(fields[0], "BenchmarkGrowth") {
			continue
		}
		m := benchName.FindStringSubmatch(fields[0])
		if m == nil || len(fields) < 4 || len(fields)%2 != 0 {
			return nil, fmt.Errorf("line %d: not a growth result: %q", line, sc.Text())
		}
		size, _ := strconv.ParseFloat(m[3], 64)
		k := key{m[1], m[2], size}
		if samples[k] == nil {
			samples[k] = map[string][]float64{}
			order = append(order, k)
		}
		// fields[1] is the iteration count; then value, unit pairs.
		for i := 2; i < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: metric %q: %w", line, fields[i+1], err)
			}
			samples[k][fields[i+1]] = append(samples[k][fields[i+1]], v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var families []family
	index := map[string]int{}
	for _, k := range order {
		i, ok := index[k.family]
		if !ok {
			i = len(families)
			index[k.family] = i
			families = append(families, family{name: k.family, param: k.param})
		}
		if families[i].param != k.param {
			return nil, fmt.Errorf("BenchmarkGrowth%s: sub-benchmarks named by both %s and %s", k.family, families[i].param, k.param)
		}
		p := point{size: k.size, metrics: map[string]float64{}}
		for unit, vs := range samples[k] {
			p.metrics[unit] = median(vs)
			p.runs = max(p.runs, len(vs))
		}
		families[i].points = append(families[i].points, p)
	}
	for _, f := range families {
		slices.SortFunc(f.points, func(a, b point) int { return cmp.Compare(a.size, b.size) })
	}
	return families, nil
}

// median returns the middle value, or the mean of the two middle ones.
func median(vs []float64) float64 {
	s := slices.Sorted(slices.Values(vs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
