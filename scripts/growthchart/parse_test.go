package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		input   string
		want    []family
		wantErr string
	}{
		{
			name: "one run, with the GOMAXPROCS suffix and other output around it",
			input: `goos: linux
cpu: Intel(R) Xeon(R) Processor
time=2026-12-01T10:00:00Z level=INFO msg="key created"
BenchmarkVerify/invoice-8KB-2   	    2000	    492000 ns/op
BenchmarkGrowthRules/rules=4-2  	    1200	    900000 ns/op	    880000 cpu-ns/op	    225000 ns/rule	    190000 peak-B	  240112 B/op	    2368 allocs/op
PASS
ok  	github.com/verifier-dev/verifier/tools	12.3s
`,
			want: []family{{name: "Rules", param: "rules", points: []point{{size: 4, runs: 1, metrics: map[string]float64{
				"ns/op": 900000, "cpu-ns/op": 880000, "ns/rule": 225000, "peak-B": 190000, "B/op": 240112, "allocs/op": 2368,
			}}}}},
		},
		{
			name: "medians over runs, sizes sorted, families in order of appearance",
			input: `BenchmarkGrowthSchemaChecks/checks=161-2 	 10 	 300 ns/op 	 161.0 checks
BenchmarkGrowthSchemaChecks/checks=11-2 	 10 	 100 ns/op 	 11.00 checks
BenchmarkGrowthDocument/bytes=4096-8 	 10 	 7 ns/op
BenchmarkGrowthSchemaChecks/checks=161-2 	 10 	 500 ns/op 	 161.0 checks
BenchmarkGrowthSchemaChecks/checks=161-2 	 10 	 200 ns/op 	 161.0 checks
BenchmarkGrowthSchemaChecks/checks=11-2 	 10 	 120 ns/op 	 11.00 checks
`,
			want: []family{
				{name: "SchemaChecks", param: "checks", points: []point{
					{size: 11, runs: 2, metrics: map[string]float64{"ns/op": 110, "checks": 11}},
					{size: 161, runs: 3, metrics: map[string]float64{"ns/op": 300, "checks": 161}},
				}},
				{name: "Document", param: "bytes", points: []point{{size: 4096, runs: 1, metrics: map[string]float64{"ns/op": 7}}}},
			},
		},
		{
			name:  "GOMAXPROCS=1: no suffix",
			input: "BenchmarkGrowthDocument/bytes=1192 \t 5 \t 200000 ns/op\n",
			want:  []family{{name: "Document", param: "bytes", points: []point{{size: 1192, runs: 1, metrics: map[string]float64{"ns/op": 200000}}}}},
		},
		{
			name:  "no growth results",
			input: "PASS\nok  \tgithub.com/verifier-dev/verifier/tools\t1.0s\n",
		},
		{
			name:    "a metric that is not a number",
			input:   "BenchmarkGrowthRules/rules=4-2 \t 10 \t fast ns/op\n",
			wantErr: `line 1: metric "ns/op"`,
		},
		{
			name:    "a value without its unit",
			input:   "BenchmarkGrowthRules/rules=4-2 \t 10 \t 900 ns/op \t 12\n",
			wantErr: "line 1: not a growth result",
		},
		{
			name:    "a growth benchmark without a size",
			input:   "BenchmarkGrowthRules-2 \t 10 \t 900 ns/op\n",
			wantErr: "line 1: not a growth result",
		},
		{
			name:    "one family named by two parameters",
			input:   "BenchmarkGrowthRules/rules=4-2 \t 10 \t 900 ns/op\nBenchmarkGrowthRules/bounds=4-2 \t 10 \t 900 ns/op\n",
			wantErr: "sub-benchmarks named by both rules and bounds",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parse(strings.NewReader(tc.input))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parse() error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parse() error = %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("parse() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"Document", "document"},
		{"Rules", "rules"},
		{"SchemaChecks", "schema-checks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (family{name: tc.name}).slug(); got != tc.want {
				t.Errorf("slug(%q) = %q, want %q", tc.name, got, tc.want)
			}
		})
	}
}
