package main

import (
	"strings"
	"testing"
)

func TestWriteTableVerdict(t *testing.T) {
	rows := func(times ...float64) family {
		f := family{name: "Rules", param: "rules"}
		for i, ns := range times {
			f.points = append(f.points, point{size: float64(int(1) << (2 * i)), runs: 5, metrics: map[string]float64{
				"ns/op": ns, "cpu-ns/op": ns, "peak-B": 1000 * float64(int(1)<<(2*i)), "B/op": 1, "allocs/op": 1,
			}})
		}
		return f
	}
	for _, tc := range []struct {
		name string
		f    family
		want []string
	}{
		{
			name: "a fixed cost and linear growth",
			f:    rows(1100, 1400, 2600, 7400),
			want: []string{"| 4 | 1.4 µs | 1.4 µs | 0.3 µs | 0.1 µs | 0.17 |", "No step over 1.15"},
		},
		{
			name: "one step quadratic",
			f:    rows(1000, 4000, 64000, 256000),
			want: []string{"| 16 | 64.0 µs | 64.0 µs | 4.0 µs | 5.0 µs | 2.00 super-linear |", "CPU time 2.00 (4 → 16 rules)", "is a super-linear step"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			writeTable(&b, tc.f)
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("writeTable() =\n%s\nwant it to contain %q", b.String(), w)
				}
			}
		})
	}
}
