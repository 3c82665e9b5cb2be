// Command growthchart turns the output of the growth benchmarks of
// tools/growth_bench_test.go (go test -bench Growth, any number of runs)
// into the markdown table and the charts of BENCHMARKS.md, section Growth.
//
// It reads the benchmark output on stdin, takes the median of each metric
// per sub-benchmark, prints one table per family (document size, rules,
// schema checks) on stdout, and writes one PNG per family into -out: time
// per verification and heap per verification against the family's size,
// on log-log axes beside a line of slope 1, so that linear growth runs
// parallel to it and a super-linear step climbs more steeply.
//
//	go test -run '^$' -bench Growth -count 5 ./tools/ | go run . -out ../../docs/bench
//
// scripts/growth.sh runs both. It is a module of its own so that the
// product's go.mod carries no plotting dependency.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "growthchart:", err)
		os.Exit(1)
	}
}

// run parses args, reads benchmark output from in, writes the tables to
// out and the charts to the -out folder.
func run(args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("growthchart", flag.ContinueOnError)
	dir := fs.String("out", "docs/bench", "folder for the charts, growth-<family>.png")
	if err := fs.Parse(args); err != nil {
		return err
	}
	families, err := parse(in)
	if err != nil {
		return fmt.Errorf("reading benchmark output: %w", err)
	}
	if len(families) == 0 {
		return fmt.Errorf("no BenchmarkGrowth results in the input")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return fmt.Errorf("creating the chart folder: %w", err)
	}
	for _, f := range families {
		writeTable(out, f)
		file := filepath.Join(*dir, "growth-"+f.slug()+".png")
		if err := drawChart(f, file); err != nil {
			return fmt.Errorf("drawing %s: %w", file, err)
		}
		fmt.Fprintf(os.Stderr, "wrote %s\n", file)
	}
	return nil
}
