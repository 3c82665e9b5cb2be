#!/usr/bin/env bash
# End-to-end test of package payment with the real x402 v2 client
# (@x402/fetch, e2e/x402/pay.mjs) and the real facilitator logic (@x402/core
# and @x402/evm, e2e/x402/facilitator.mjs, the chain simulated in memory), all
# on loopback. Installs e2e/x402's npm packages from its lock file (`npm ci`)
# in a temporary copy, starts the facilitator, builds the verifier and runs
# the Go tests built with -tags x402e2e: payment's (a small handler around
# the Gate), tools' (the real HTTP layer with payments on) and main's (a real
# `verifier --http --network testnet` process), one package at a time: they
# read the facilitator's log.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
repo="$PWD"
src="$repo/e2e/x402"
command -v node >/dev/null || { echo "x402-e2e: node (Node.js >= 20.19) is required and not installed" >&2; exit 1; }
command -v npm >/dev/null || { echo "x402-e2e: npm is required and not installed" >&2; exit 1; }
command -v curl >/dev/null || { echo "x402-e2e: curl is required and not installed" >&2; exit 1; }

work="$(mktemp -d)"
fac_pid=""
cleanup() {
  if [ -n "$fac_pid" ]; then kill "$fac_pid" 2>/dev/null || true; wait "$fac_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

cp "$src/package.json" "$src/package-lock.json" "$src/"*.mjs "$work/"
echo "== x402-e2e: npm ci (e2e/x402)"
(cd "$work" && npm ci --no-audit --no-fund --loglevel=error)

port="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
(cd "$work" && exec node facilitator.mjs "$port") >"$work/facilitator.log" 2>&1 &
fac_pid=$!
for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:$port/supported" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$fac_pid" 2>/dev/null; then cat "$work/facilitator.log" >&2; echo "x402-e2e: the facilitator died" >&2; exit 1; fi
  sleep 0.1
done
curl -fsS "http://127.0.0.1:$port/supported" >/dev/null

echo "== x402-e2e: go build"
go build -o "$work/verifier" .

echo "== x402-e2e: go test -tags x402e2e ./payment/ ./tools/rest/ ."
X402_E2E=1 X402_TOOLS="$work" X402_FACILITATOR="http://127.0.0.1:$port" X402_VERIFIER_BIN="$work/verifier" \
  go test -tags x402e2e -count=1 -p 1 -run 'TestE2E' -v ./payment/ ./tools/rest/ .
