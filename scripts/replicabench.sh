#!/usr/bin/env bash
# Replicas on PostgreSQL (BENCHMARKS.md): REST under load for three setups,
# in one run on this machine, interleaved round by round so each round's
# ratios compare setups under the same background load:
#   bbolt  one `verifier --http` on its own --data-dir
#   pg1    one `verifier --http --store postgres://…`
#   pg2    two such servers on two ports sharing the one database, wrk's
#          connections split between them (two wrk processes at half the
#          connections each, started together)
# All servers share one VERIFIER_SIGNING_KEY and lift the free allowance as
# scripts/loadtest.sh does. The script starts its own PostgreSQL cluster
# (initdb into a temporary folder as the postgres user when run as root and
# a unix socket in that folder, as internal/pgtest does, and a free loopback
# port) and removes servers, cluster and folders on exit.
#
# Per setup and round it prints throughput, p50/p99 latency (for pg2 the
# p50 is the mean of the two wrk processes' and the p99 the larger of the
# two), the verifier servers' CPU per request (utime+stime from
# /proc/<pid>/stat, summed over the servers) and the PostgreSQL processes'
# CPU per request (the postmaster and its children, summed), and the ratio
# of server CPU per request to bbolt's in the same round.
#
# usage: scripts/replicabench.sh
#   DURATION=8s ROUNDS=3 CONNECTIONS=32 THREADS=2 PORT=18090 (uses PORT..PORT+2)
#   BODY=testdata/invoice-pass.json  VERIFIER_BIN=path (default: go build)
#   VERIFIER_PG_BIN=dir              PostgreSQL's server binaries
#   PG_SETTINGS="-c synchronous_commit=off"   more server settings (experiments)
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${DURATION:-8s}
rounds=${ROUNDS:-3}
conns=${CONNECTIONS:-32}
threads=${THREADS:-2}
port=${PORT:-18090}
export BODY=${BODY:-testdata/invoice-pass.json}
server_flags="--free-per-day 1000000000"
pgbin=${VERIFIER_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
VERIFIER_SIGNING_KEY=$(head -c 32 /dev/urandom | base64)
export VERIFIER_SIGNING_KEY

work=$(mktemp -d)
pgdir=$(mktemp -d)
pids=()
as_pg() { # runs a command as the postgres user when root (initdb refuses root)
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ -f "$pgdir/data/postmaster.pid" ]; then
		as_pg "$pgbin/pg_ctl" -D "$pgdir/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$work" "$pgdir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM # so a stopped run cleans up too (pg_ctl's server outlives the script otherwise)

if [ -n "${VERIFIER_BIN:-}" ]; then
	cp "$VERIFIER_BIN" "$work/verifier"
else
	go build -o "$work/verifier" .
fi

# The private cluster: trust authentication on a private socket folder and
# loopback, fsync on (the durability promise is part of what is measured).
[ "$(id -u)" = 0 ] && chown postgres: "$pgdir"
as_pg "$pgbin/initdb" -D "$pgdir/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$work/initdb.log" 2>&1 ||
	{ cat "$work/initdb.log" >&2; exit 1; }
pgport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_pg "$pgbin/pg_ctl" -D "$pgdir/data" -l "$pgdir/server.log" -w -o \
	"-c listen_addresses=127.0.0.1 -c port=$pgport -c unix_socket_directories=$pgdir -c max_connections=300 ${PG_SETTINGS:-}" start >/dev/null ||
	{ cat "$pgdir/server.log" >&2; exit 1; }
as_pg "$pgbin/createdb" -h "$pgdir" -p "$pgport" -U postgres bench
postmaster=$(head -1 "$pgdir/data/postmaster.pid")
store="postgres://postgres@127.0.0.1:$pgport/bench"

start() { # port store-flag...; appends the pid to pids
	local p=$1
	shift
	# shellcheck disable=SC2086 # server_flags is a list of flags
	"$work/verifier" --http "127.0.0.1:$p" "$@" $server_flags 2>"$work/server-$p.log" &
	pids+=($!)
	for _ in $(seq 100); do
		if curl -sf -o /dev/null "http://127.0.0.1:$p/health"; then return; fi
		sleep 0.1
	done
	echo "server on port $p did not come up; its log:" >&2
	cat "$work/server-$p.log" >&2
	exit 1
}
ticks() { # utime+stime of the given pids, in clock ticks
	local total=0 stat p
	for p in "$@"; do
		stat=$(cat "/proc/$p/stat" 2>/dev/null) || continue
		set -- ${stat##*) }
		total=$((total + ${12} + ${13}))
	done
	echo "$total"
}
pg_ticks() { # the postmaster and its children (backends, writers, WAL)
	# shellcheck disable=SC2046
	ticks "$postmaster" $(pgrep -P "$postmaster")
}
hz=$(getconf CLK_TCK)

start "$port" --data-dir "$work/bbolt"
bbolt_pid=${pids[-1]}
start $((port + 1)) --store "$store"
pg_a=${pids[-1]}
start $((port + 2)) --store "$store"
pg_b=${pids[-1]}

load() { # connections port...; runs one wrk per port at once, prints their LOADTEST lines
	local c=$1
	shift
	local n=$#
	for p in "$@"; do
		wrk -t "$threads" -c $((c / n)) -d "$duration" -s scripts/loadtest.lua "http://127.0.0.1:$p/verify/schema" >"$work/wrk-$p.out" &
	done
	wait # only the wrk processes: load runs in a command substitution's subshell, whose children they are
	for p in "$@"; do grep '^LOADTEST' "$work/wrk-$p.out"; done
}

for p in "$port" $((port + 1)) $((port + 2)); do # warm-up: connections, pool, caches
	wrk -t "$threads" -c "$conns" -d 2s -s scripts/loadtest.lua "http://127.0.0.1:$p/verify/schema" >/dev/null
done

printf '%-5s %-6s %9s %8s %8s %8s %15s %13s %10s\n' round setup req/s p50_ms p99_ms non2xx server_cpu_ms/req pg_cpu_ms/req cpu_vs_bbolt
for r in $(seq "$rounds"); do
	bbolt_cpu=
	for setup in bbolt pg1 pg2; do
		case $setup in
		bbolt) servers=("$bbolt_pid") ports=("$port") ;;
		pg1) servers=("$pg_a") ports=($((port + 1))) ;;
		pg2) servers=("$pg_a" "$pg_b") ports=($((port + 1)) $((port + 2))) ;;
		esac
		s0=$(ticks "${servers[@]}")
		g0=$(pg_ticks)
		lines=$(load "$conns" "${ports[@]}")
		s1=$(ticks "${servers[@]}")
		g1=$(pg_ticks)
		# sum the requests; duration the longest; p50 the mean; p99 the max
		read -r n d bad p50 p99 < <(awk '{for (i = 2; i <= NF; i++) {split($i, kv, "="); v[kv[1]] = kv[2]}
			n += v["requests"]; bad += v["non2xx"] + v["socket_errors"]; if (v["duration_us"] > d) d = v["duration_us"]
			p50 += v["p50_us"]; if (v["p99_us"] > p99) p99 = v["p99_us"]; k++}
			END {print n, d, bad, p50 / k, p99}' <<<"$lines")
		cpu=$(awk -v t=$((s1 - s0)) -v hz="$hz" -v n="$n" 'BEGIN {printf "%.4f", t / hz * 1e3 / n}')
		[ "$setup" = bbolt ] && bbolt_cpu=$cpu
		awk -v r="$r" -v s="$setup" -v n="$n" -v d="$d" -v p50="$p50" -v p99="$p99" -v bad="$bad" -v cpu="$cpu" \
			-v g=$((g1 - g0)) -v hz="$hz" -v base="$bbolt_cpu" \
			'BEGIN {printf "%-5d %-6s %9.0f %8.2f %8.2f %8d %15.3f %13.3f %9.2fx\n", r, s, n / (d / 1e6), p50 / 1e3, p99 / 1e3, bad, cpu, g / hz * 1e3 / n, cpu / base}'
	done
done
