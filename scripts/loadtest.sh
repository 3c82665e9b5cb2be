#!/usr/bin/env bash
# REST under load (BENCHMARKS.md): wrk POSTs the invoice request to a fresh
# `verifier --http` on loopback, at 32 and 256 connections for 10 s each,
# and reports throughput, p50/p99 latency, the server's CPU seconds per
# request (utime+stime of /proc/<pid>/stat across the run), its RSS (VmRSS
# after each run, of which RssAnon is the process's own memory and RssFile
# pages of the store file bbolt maps, and VmHWM the peak) and, in a separate shorter pass under strace (which
# slows the server), fsync/fdatasync calls per answered request for each
# connection count.
#
# usage: scripts/loadtest.sh
#   DURATION=10s CONNECTIONS="32 256" THREADS=2 PORT=18080
#   SERVER_FLAGS="..."                  flags for the server; the default
#       lifts the free allowance of 1,000 calls per client per day, which a
#       load test from one address would use up in a fraction of a second
#       (everything after it is a 429), and leaves every other flag at its
#       default: 4 verifications per CPU at once and 8 waiting per slot, so
#       the connections past those get 503s (counted as not 2xx)
#   BODY=testdata/invoice-pass.json     the request body
#   VERIFIER_BIN=path                   a prebuilt server (default: go build)
#   FSYNCS=0                            skip the strace pass
# wrk: apt-get install -y wrk (Debian). The load generator shares the
# machine with the server, so on a small machine it takes CPU from it.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${DURATION:-10s}
connections=${CONNECTIONS:-32 256}
threads=${THREADS:-2}
addr=127.0.0.1:${PORT:-18080}
export BODY=${BODY:-testdata/invoice-pass.json}
server_flags=${SERVER_FLAGS:---free-per-day 1000000000}
work=$(mktemp -d)
if [ -n "${VERIFIER_BIN:-}" ]; then
	cp "$VERIFIER_BIN" "$work/verifier"
else
	go build -o "$work/verifier" .
fi

pid=
stop() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		pid=
	fi
}
trap 'stop; rm -rf "$work"' EXIT

start() { # data-dir; sets pid
	# shellcheck disable=SC2086 # server_flags is a list of flags
	"$work/verifier" --http "$addr" --data-dir "$1" $server_flags 2>"$work/server.log" &
	pid=$!
	for _ in $(seq 100); do
		if curl -sf -o /dev/null "http://$addr/health"; then return; fi
		sleep 0.1
	done
	echo "server did not come up; its log:" >&2
	cat "$work/server.log" >&2
	exit 1
}

ticks() { # utime+stime of the server, in clock ticks
	local stat
	stat=$(cat "/proc/$pid/stat")
	set -- ${stat##*) }
	echo $((${12} + ${13}))
}
hz=$(getconf CLK_TCK)
status() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$pid/status"; }

start "$work/data"
wrk -t "$threads" -c 32 -d 2s -s scripts/loadtest.lua "http://$addr/verify/schema" >/dev/null # warm-up
printf '%-6s %10s %10s %9s %9s %9s %9s %14s %9s %9s %9s %9s\n' conns req/s 2xx/s p50_ms p90_ms p99_ms non2xx server_cpu_ms/req rss_MB anon_MB file_MB peak_MB
for c in $connections; do
	before=$(ticks)
	out=$(wrk -t "$threads" -c "$c" -d "$duration" -s scripts/loadtest.lua "http://$addr/verify/schema")
	after=$(ticks)
	line=$(grep '^LOADTEST' <<<"$out")
	eval "${line#LOADTEST }" # requests= duration_us= non2xx= ... p99_us= max_us=
	awk -v c="$c" -v n="$requests" -v d="$duration_us" -v p50="$p50_us" -v p90="$p90_us" -v p99="$p99_us" \
		-v bad="$non2xx" -v t=$((after - before)) -v hz="$hz" -v rss="$(status VmRSS)" -v anon="$(status RssAnon)" -v file="$(status RssFile)" -v hwm="$(status VmHWM)" \
		'BEGIN {printf "%-6d %10.0f %10.0f %9.2f %9.2f %9.2f %9d %14.3f %9.1f %9.1f %9.1f %9.1f\n", c, n / (d / 1e6), (n - bad) / (d / 1e6), p50 / 1e3, p90 / 1e3, p99 / 1e3, bad, t / hz * 1e3 / n, rss / 1024, anon / 1024, file / 1024, hwm / 1024}'
done
# The store file's size per verdict stored: the request's agent's total
# from GET /reputation (every answered request stored one verdict of it).
agent=$(grep -o '"agent_id": *"[^"]*"' "$BODY" | head -1 | sed 's/.*"\([^"]*\)"$/\1/')
verdicts=$(curl -sf "http://$addr/reputation/$agent" | grep -o '"total":[0-9]*' | head -1 | cut -d: -f2)
stop
bytes=$(stat -c %s "$work/data/verifier.db")
awk -v b="$bytes" -v n="${verdicts:-0}" -v a="$agent" \
	'BEGIN {printf "store file: %d bytes, %d verdicts of %s = %.0f bytes per verdict\n", b, n, a, n ? b / n : 0}'

# fsyncs per answered request, per connection count: a fresh server traced
# from its start (strace slows it, so its throughput is not reported).
if [ "${FSYNCS:-1}" != 0 ] && command -v strace >/dev/null; then
	for c in $connections; do
		rm -rf "$work/data2"
		# shellcheck disable=SC2086
		strace -f -c -e trace=fsync,fdatasync -o "$work/strace.txt" \
			"$work/verifier" --http "$addr" --data-dir "$work/data2" $server_flags 2>"$work/server.log" &
		tracer=$!
		for _ in $(seq 100); do curl -sf -o /dev/null "http://$addr/health" && break; sleep 0.1; done
		pid=$(pgrep -P "$tracer") # the server, strace's child: stop it, and strace writes its tally
		out=$(wrk -t "$threads" -c "$c" -d 5s -s scripts/loadtest.lua "http://$addr/verify/schema")
		stop
		wait "$tracer" 2>/dev/null || true
		line=$(grep '^LOADTEST' <<<"$out")
		eval "${line#LOADTEST }"
		syncs=$(awk '$NF == "fsync" || $NF == "fdatasync" {n += $4} END {print n + 0}' "$work/strace.txt")
		awk -v c="$c" -v s="$syncs" -v n=$((requests - non2xx)) -v bad="$non2xx" \
			'BEGIN {printf "fsync+fdatasync, %d connections (under strace): %d over %d answered requests (%d not 2xx) = %.3f per answered request\n", c, s, n, bad, s / n}'
	done
fi
