#!/usr/bin/env bash
# Schema evaluation beside its peers (BENCHMARKS.md, "Schema evaluation"):
# engine/schema's BenchmarkEvaluateInvoice against ajv 8 (allErrors) and
# santhosh-tekuri v6 on the 8 KB invoice of engine/schema/testdata/peer-invoice
# (valid, one bad item, fifty), interleaved round by round on one pinned core,
# because this machine moves single runs by a third within minutes. Prints
# each contender's median per document (CPU time per validation; santhosh's
# harness reports wall time) and the median and interquartile range of the
# ratios taken within each round, which is what the targets of issue #2 are
# about.
#
# usage: scripts/schemabench.sh [ROUNDS=15] [SECONDS_PER_RUN=0.5]
#   BASE=<commit>   also run that commit's benchmark (built in a git worktree;
#                   a commit that reads testdata/peer-invoice)
#   CPU=1           the core to pin to (taskset, when installed)
#   QUICK=1         CI smoke: one round of 0.05 s
# The peers live in scripts/schemapeers: santhosh-tekuri/jsonschema v6.0.3 is
# a Go module of its own (fetched from the Go module proxy), ajv@8.20.0 and
# ajv-formats@3.0.1 are pinned in its package-lock.json and installed with
# `npm ci` into a temporary folder. needs: go, node and npm, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-15}
secs=${2:-0.5}
if [ -n "${QUICK:-}" ]; then rounds=1 secs=0.05; fi
peers=scripts/schemapeers
for tool in go node npm python3; do
	command -v "$tool" >/dev/null || { echo "schemabench: $tool is required and not installed" >&2; exit 1; }
done

work=$(mktemp -d)
cleanup() {
	if [ -d "$work/base" ]; then git worktree remove --force "$work/base" >/dev/null 2>&1 || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

# The peers: santhosh built from its module, ajv installed outside the tree.
(cd "$peers" && go test -c -o "$work/santhosh.test" . >/dev/null)
mkdir "$work/npm"
cp "$peers/package.json" "$peers/package-lock.json" "$work/npm/"
(cd "$work/npm" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
go test -c -o "$work/after.test" ./engine/schema
contenders="after"
if [ -n "${BASE:-}" ]; then
	git worktree add --detach "$work/base" "$BASE" >/dev/null 2>&1
	(cd "$work/base" && go test -c -o "$work/before.test" ./engine/schema)
	contenders="before after"
fi

pin() {
	if command -v taskset >/dev/null; then taskset -c "${CPU:-1}" "$@"; else "$@"; fi
}

out=$work/rounds.txt
for r in $(seq "$rounds"); do
	for t in $contenders; do
		(cd engine/schema && pin "$work/$t.test" -test.run '^$' -test.bench EvaluateInvoice \
			-test.benchtime "${secs}s" -test.cpu 1) |
			awk -v r="$r" -v t="$t" '/^BenchmarkEvaluateInvoice\// { split($1, n, "/"); print r, t, n[2], $5 }' >>"$out"
	done
	NODE_PATH="$work/npm/node_modules" pin node "$peers/bench_ajv.js" "$secs" |
		awk -v r="$r" '{ print r, "ajv", $1, $2 }' >>"$out"
	(cd "$peers" && pin "$work/santhosh.test" -test.run '^$' -test.bench Santhosh \
		-test.benchtime "${secs}s" -test.cpu 1) |
		awk -v r="$r" '/^BenchmarkSanthosh/ { d = tolower(substr($1, 18)); print r, "santhosh", d, $3 }' >>"$out"
done

python3 - "$out" "$contenders" <<'EOF'
import collections, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
ours = sys.argv[2].split()
ns = collections.defaultdict(dict)  # round -> (who, doc) -> ns per validation
for r, who, doc, v in rows:
    ns[r][(who, doc)] = float(v)
docs = ["valid", "invalid", "invalid50"]
names = {"valid": "valid", "invalid": "1 bad item", "invalid50": "50 bad items"}
def spread(xs):
    if len(xs) < 2:
        return "%.2f" % xs[0]
    q = statistics.quantiles(xs, n=4)
    return "%.2f (IQR %.2f-%.2f)" % (statistics.median(xs), q[0], q[2])
print("rounds: %d" % len(ns))
print("%-12s" % "", *("%14s" % w for w in ours + ["ajv", "santhosh"]))
for doc in docs:
    med = [statistics.median(d[(w, doc)] for d in ns.values()) / 1000 for w in ours + ["ajv", "santhosh"]]
    print("%-12s" % names[doc], *("%11.1f us" % m for m in med))
for w in ours:
    for doc in docs:
        ajv = [d[("ajv", doc)] / d[(w, doc)] for d in ns.values()]
        san = [d[("santhosh", doc)] / d[(w, doc)] for d in ns.values()]
        print("%-6s %-12s ajv/ours %-26s santhosh/ours %s" % (w, names[doc], spread(ajv), spread(san)))
EOF
