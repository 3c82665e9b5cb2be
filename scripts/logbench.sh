#!/usr/bin/env bash
# The transparency log's cost on the stored REST path (BENCHMARKS.md,
# "Transparency log"): BenchmarkRESTLogCost in ./tools/rest/, round by round —
# log on, log off (store.Options.NoLog) and a compact answer (one
# signature) — each a fresh server process with fsync on under 32
# keep-alive connections, its CPU per request read from /proc. Prints each
# round, then the medians of the server CPU per request and of the ratios
# taken inside each round, with their interquartile ranges.
#
# usage: scripts/logbench.sh [rounds] [requests-per-run]
#   defaults: 11 rounds of 4000 requests per configuration
#   TOOLS_REST_CHILD_CPUPROFILE=dir   the servers' CPU profiles, one per
#       configuration (the last round's), for go tool pprof -diff_base
#   QUICK=1   one round of 100 requests: the CI smoke run
#   BASE=<commit>   also runs that commit's log-on/full in each round
#       (before/after); the commit must have BenchmarkRESTLogCost
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-11}
requests=${2:-4000}
if [ -n "${QUICK:-}" ]; then rounds=1 requests=100; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/tools.test" ./tools/rest/
configs=(log-on/full log-off/full log-on/compact)
if [ -n "${BASE:-}" ]; then
	mkdir "$work/base"
	git archive "$BASE" | tar -x -C "$work/base"
	# A commit from before the split of tools/ has the benchmark in ./tools/.
	base_pkg=tools/rest
	[ -d "$work/base/tools/rest" ] || base_pkg=tools
	(cd "$work/base" && go test -c -o "$work/base.test" "./$base_pkg/")
	configs+=(base:log-on/full)
fi
n=${#configs[@]}
for round in $(seq "$rounds"); do
	echo "round $round/$rounds" >&2
	# Each configuration in a run of its own, the order rotated round by
	# round, so that none is always the first after a pause.
	for k in $(seq 0 $((n - 1))); do
		config=${configs[$(((round + k) % n))]}
		bin=$work/tools.test prefix= dir=tools/rest
		if [ "${config#base:}" != "$config" ]; then
			bin=$work/base.test prefix=base: config=${config#base:} dir=$base_pkg
		fi
		(cd "$dir" && "$bin" -test.run '^$' -test.bench "^BenchmarkRESTLogCost\$/^${config%/*}\$/^${config#*/}\$" \
			-test.benchtime "${requests}x" -test.count 1) |
			awk -v r="$round" -v p="$prefix" '/^BenchmarkRESTLogCost\// {
				for (i = 1; i < NF; i++) if ($(i + 1) == "server-cpu-µs/op") cpu = $i
				name = $1; sub(/^BenchmarkRESTLogCost\//, "", name); sub(/-[0-9]+$/, "", name)
				print r, p name, cpu }'
	done
done | tee "$work/rounds.txt"
python3 - "$work/rounds.txt" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    r, name, cpu = line.split()
    runs.setdefault(int(r), {})[name] = float(cpu)
def summary(xs):
    xs = sorted(xs)
    if len(xs) < 4:
        return f"{statistics.median(xs):.3f} (rounds: {', '.join(f'{x:.3f}' for x in xs)})"
    q = statistics.quantiles(xs, n=4)
    return f"{statistics.median(xs):.3f} (IQR {q[0]:.3f}–{q[2]:.3f})"
names = ["log-on/full", "log-off/full", "log-on/compact"]
base = all("base:log-on/full" in r for r in runs.values())
if base:
    names.append("base:log-on/full")
print(f"\n{len(runs)} rounds; server CPU per request, µs (median):")
for n in names:
    print(f"  {n:16} {statistics.median(r[n] for r in runs.values()):8.1f}")
on_off = [r["log-on/full"] / r["log-off/full"] for r in runs.values()]
full_compact = [r["log-on/full"] / r["log-on/compact"] for r in runs.values()]
added = [r["log-on/full"] - r["log-off/full"] for r in runs.values()]
saved = [r["log-on/full"] - r["log-on/compact"] for r in runs.values()]
print("per-round ratios, median (IQR):")
print(f"  log on ÷ log off          {summary(on_off)}")
print(f"  full ÷ compact            {summary(full_compact)}")
print(f"  log on − log off, µs      {summary(added)}")
print(f"  full − compact, µs        {summary(saved)}")
if base:
    print(f"  log on ÷ base log on      {summary([r['log-on/full'] / r['base:log-on/full'] for r in runs.values()])}")
    print(f"  base log on ÷ log off     {summary([r['base:log-on/full'] / r['log-off/full'] for r in runs.values()])}")
PY
