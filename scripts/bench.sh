#!/usr/bin/env bash
# Pipeline benchmarks of BENCHMARKS.md, all in one session: BenchmarkVerify
# (decode, hashes, evaluation, answer, signature) for the 1 KB invoice, an
# 8 KB 50-item invoice and a 1 MB document beside one bare Ed25519
# signature, the per-stage split, and the Python peer pipeline
# (scripts/peer-pipeline.py) on the same three requests.
# Prints the medians and the ratios at the end.
#
# usage: scripts/bench.sh [rounds] [benchtime] [peer-seconds]
#   BASE=<commit>  also runs BenchmarkVerify of that commit, round by round
#                  beside this tree's, for before/after figures
#   QUICK=1        one short round and no peer: the CI smoke run
#   CPU=<n>        pin each benchmark run to core n with one thread
#                  (taskset, -test.cpu 1): steadier ratios to the floor on a
#                  shared host, and no collector work on a second core
# needs: go, python3; for the peer, python3 with jsonschema and cryptography
# (installed from Debian, python3-jsonschema and python3-cryptography, when
# missing and run as root with apt-get).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
benchtime=${2:-2s}
peer_seconds=${3:-5}
if [ -n "${QUICK:-}" ]; then rounds=1 benchtime=20x; fi
for tool in go python3; do
	command -v "$tool" >/dev/null || { echo "bench: $tool is required and not installed" >&2; exit 1; }
done

# peer_python prints a Python that can run the peer pipeline: the python3 on
# PATH, or Debian's, where apt-get installs the modules.
peer_python() {
	local py
	for py in python3 /usr/bin/python3; do
		if command -v "$py" >/dev/null && "$py" -c 'import jsonschema, cryptography' 2>/dev/null; then
			echo "$py"
			return 0
		fi
	done
	return 1
}
peer_py=""
if [ -z "${QUICK:-}" ] && ! peer_py=$(peer_python); then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "bench: installing python3-jsonschema and python3-cryptography (apt-get)" >&2
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-jsonschema python3-cryptography >/dev/null
	fi
	peer_py=$(peer_python) || {
		echo "bench: the peer pipeline needs python3 with the jsonschema and cryptography modules" >&2
		echo "bench: (Debian: apt-get install python3-jsonschema python3-cryptography)" >&2
		exit 1
	}
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go test -c -o "$work/after.test" ./tools/
if [ -n "${BASE:-}" ]; then
	mkdir "$work/base"
	git archive "$BASE" | tar -x -C "$work/base"
	# The base tree gets today's BenchmarkVerify (it only calls
	# Service.Verify), without the per-stage benchmark
	# (verify_stages_bench_test.go), which needs today's API. A commit from before the split of tools/ has its own in
	# verify_test.go (renamed out of the way) and no test kit
	# (tools/internal/testkit, copied).
	if [ ! -f "$work/base/tools/verify_bench_test.go" ]; then
		sed -i 's/^func BenchmarkVerify(/func benchmarkVerifyReplaced(/' "$work/base/tools/verify_test.go"
	fi
	if [ ! -d "$work/base/tools/internal/testkit" ]; then
		mkdir -p "$work/base/tools/internal"
		cp -r tools/internal/testkit "$work/base/tools/internal/"
	fi
	cp tools/verify_bench_test.go "$work/base/tools/verify_bench_test.go"
	(cd "$work/base" && go test -c -o "$work/before.test" ./tools/)
fi

pin=()
if [ -n "${CPU:-}" ]; then pin=(taskset -c "$CPU"); fi
run() { # binary label pattern
	(cd tools && "${pin[@]}" "$1" -test.run '^$' -test.bench "$3" -test.benchtime "$benchtime" -test.count 1 \
		${CPU:+-test.cpu 1}) | sed -n "s/^Benchmark/$2 Benchmark/p"
}
for round in $(seq "$rounds"); do
	echo "round $round/$rounds" >&2
	if [ -n "${BASE:-}" ]; then run "$work/before.test" before 'BenchmarkVerify$'; fi
	run "$work/after.test" after 'BenchmarkVerify$|BenchmarkVerifyStages'
done | tee "$work/go.txt"

if [ -z "${QUICK:-}" ]; then
	# The peer's requests: the invoice, and the 8 KB and 1 MB invoices built
	# as BenchmarkVerify builds them (invoiceWithItems).
	python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
invoice = json.load(open("testdata/invoice-pass.json"))
for name, n in (("invoice-8KB", 50), ("document-1MB", 8200)):
    req = json.loads(json.dumps(invoice))
    items, total = [], 0.0
    for i in range(n):
        qty, price = 1 + i % 7, 2.5 + i % 4
        total += qty * price
        items.append({"description": "Line item %05d: data labelling, batch %s, reviewed twice" % (i, chr(65 + i % 26)),
                      "quantity": qty, "unit_price": price, "line_total": qty * price})
    req["submitted_output"]["line_items"], req["submitted_output"]["total"] = items, total
    open("%s/%s.json" % (work, name), "w").write(json.dumps(req, separators=(",", ":")))
PY
	cp testdata/invoice-pass.json "$work/invoice-1KB.json"
	for round in $(seq "$rounds"); do
		for size in invoice-1KB invoice-8KB document-1MB; do
			secs=$peer_seconds
			if [ "$size" = document-1MB ]; then secs=$((peer_seconds * 4)); fi
			printf 'peer %s %s\n' "$size" "$("$peer_py" scripts/peer-pipeline.py "$work/$size.json" "$secs")"
		done
	done | tee "$work/peer.txt"
else
	: >"$work/peer.txt"
fi

python3 - "$work/go.txt" "$work/peer.txt" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    label, name = f[0], re.sub(r"-\d+$", "", f[1])
    metrics = {f[i + 1]: float(f[i]) for i in range(3, len(f) - 1) if re.fullmatch(r"[\d.]+", f[i])}
    for unit, v in metrics.items():
        rows.setdefault((label, name), {}).setdefault(unit, []).append(v)
peer = {}
for line in open(sys.argv[2]):
    m = re.match(r"peer (\S+) (\d+) verifications per CPU-second \((\d+) us each\)", line)
    if m:
        peer.setdefault(m.group(1), []).append(float(m.group(3)))
med = lambda xs: statistics.median(xs) if xs else float("nan")
print("\n%-8s %-42s %12s %12s %9s %10s %8s" % ("", "benchmark (medians)", "wall ns/op", "cpu ns/op", "x-floor", "B/op", "allocs"))
for (label, name), m in sorted(rows.items()):
    print("%-8s %-42s %12.0f %12.0f %9.2f %10.0f %8.0f" % (label, name, med(m.get("ns/op", [])), med(m.get("cpu-ns/op", [])),
          med(m.get("x-floor", [])), med(m.get("B/op", [])), med(m.get("allocs/op", []))))
if peer:
    print("\npeer pipeline (Python), CPU µs per verification, median of %d; ours = this tree's cpu-ns/op" % len(next(iter(peer.values()))))
    for size, us in peer.items():
        ours = rows.get(("after", "BenchmarkVerify/" + size + ("/full" if size == "invoice-1KB" else "")), {}).get("cpu-ns/op", [])
        ratio = med(us) / (med(ours) / 1000) if ours else float("nan")
        print("  %-14s peer %10.0f µs   ours %10.1f µs   ours is %.1fx faster" % (size, med(us), med(ours) / 1000, ratio))
PY
