#!/usr/bin/env bash
# Growth benchmarks of BENCHMARKS.md, section Growth (issue #9): time and
# heap of one verification (tools.Service.Verify) against the request's
# size, its number of rules and its number of schema checks
# (tools/growth_bench_test.go). Runs the benchmarks in rounds, each round
# a fresh process that measures every size once, so that a burst of load
# on the machine falls on all sizes rather than on one; then
# scripts/growthchart takes the median per sub-benchmark, prints the
# markdown tables on stdout and draws docs/bench/growth-<family>.png. The
# raw benchmark output is kept beside the charts (growth.txt), so the
# charts can be redrawn from it:
#   (cd scripts/growthchart && go run . -out ../../docs/bench) < docs/bench/growth.txt
#
# usage: scripts/growth.sh [rounds] [benchtime]     (defaults: 5 1s)
#   OUT=<dir>  folder for the charts and growth.txt (default docs/bench)
#   QUICK=1    one round of one iteration each, charts to a temporary
#              folder: the CI smoke run
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
benchtime=${2:-1s}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=${OUT:-docs/bench}
if [ -n "${QUICK:-}" ]; then rounds=1 benchtime=1x out=${OUT:-$work/charts}; fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

go test -c -o "$work/tools.test" ./tools/
for round in $(seq "$rounds"); do
	echo "round $round/$rounds" >&2
	if ! (cd tools && "$work/tools.test" -test.run '^$' -test.bench '^BenchmarkGrowth' \
		-test.benchtime "$benchtime" -test.count 1) >"$work/round.txt"; then
		cat "$work/round.txt" >&2
		exit 1
	fi
	grep -E '^(goos|goarch|cpu|pkg|Benchmark)' "$work/round.txt" >>"$work/growth.txt"
done
cp "$work/growth.txt" "$out/growth.txt"
(cd scripts/growthchart && go run . -out "$out") <"$work/growth.txt"
