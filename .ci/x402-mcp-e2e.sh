#!/usr/bin/env bash
# End-to-end test of x402 v2 payments over MCP with real clients, all on
# loopback: the MCP TypeScript SDK client paying with PaymentPayloads built
# by the real x402 client code (@x402/core, @x402/evm) in
# _meta["x402/payment"] (e2e/x402-mcp/x402-mcp.test.mjs), against a real
# `verifier --http --network testnet` process with a small free allowance,
# which checks and settles the payments with the loopback facilitator of
# e2e/x402 (the SDK's own verification, chain simulated in memory). Both npm
# trees (e2e/x402-mcp, e2e/x402) are installed with `npm ci` from their lock
# files in temporary copies. Exits non-zero on any failure; nothing is
# skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="/usr/local/go/bin:$PATH"
SRC="$ROOT/e2e/x402"
command -v node >/dev/null || { echo "x402-mcp-e2e: node (Node.js >= 20.19) is required and not installed" >&2; exit 1; }
command -v npm >/dev/null || { echo "x402-mcp-e2e: npm is required and not installed" >&2; exit 1; }

TMP=$(mktemp -d)
FAC=""
SRV=""
stop() {
  if [ -n "$1" ]; then
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
  fi
}
cleanup() {
  stop "$SRV"
  stop "$FAC"
  rm -rf "$TMP"
}
trap cleanup EXIT

free_port() {
  node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# wait_ready PID URL LOG NAME: until URL answers 2xx, failing if PID exits.
wait_ready() {
  for _ in $(seq 150); do
    if ! kill -0 "$1" 2>/dev/null; then
      cat "$3" >&2
      echo "x402-mcp-e2e: the $4 exited" >&2
      exit 1
    fi
    if node -e 'fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "$2"; then
      return 0
    fi
    sleep 0.1
  done
  cat "$3" >&2
  echo "x402-mcp-e2e: the $4 did not become ready" >&2
  exit 1
}

# The MCP SDK's HTTP server dependency (@hono/node-server) needs Node >= 20.
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
  echo "x402-mcp-e2e: need Node >= 20, got $(node --version)" >&2
  exit 1
fi
echo "node $(node --version)"

echo "== x402-mcp-e2e: npm ci (test client, facilitator)"
mkdir -p "$TMP/client" "$TMP/facilitator"
cp "$ROOT/e2e/x402-mcp/package.json" "$ROOT/e2e/x402-mcp/package-lock.json" "$ROOT/e2e/x402-mcp/"*.mjs "$TMP/client/"
cp "$SRC/package.json" "$SRC/package-lock.json" "$SRC/"*.mjs "$TMP/facilitator/"
(cd "$TMP/client" && npm ci --no-audit --no-fund --loglevel=error)
(cd "$TMP/facilitator" && npm ci --no-audit --no-fund --loglevel=error)

echo "== x402-mcp-e2e: facilitator"
FAC_PORT=$(free_port)
(cd "$TMP/facilitator" && exec node facilitator.mjs "$FAC_PORT") >"$TMP/facilitator.log" 2>&1 &
FAC=$!
wait_ready "$FAC" "http://127.0.0.1:$FAC_PORT/supported" "$TMP/facilitator.log" facilitator

echo "== x402-mcp-e2e: go build"
go build -o "$TMP/verifier" .

echo "== x402-mcp-e2e: verifier --http --network testnet"
PAY_TO=0x209693Bc6afc0C5328bA36FaF03C514EF312287C
FREE=2
PORT=$(free_port)
"$TMP/verifier" --http "127.0.0.1:$PORT" --data-dir "$TMP/data" --network testnet --pay-to-evm "$PAY_TO" \
  --facilitator "http://127.0.0.1:$FAC_PORT" --free-per-day "$FREE" 2>"$TMP/verifier.log" &
SRV=$!
wait_ready "$SRV" "http://127.0.0.1:$PORT/health" "$TMP/verifier.log" verifier

echo "== x402-mcp-e2e: TS SDK client paying over MCP"
# A fresh payer key for this run, passed in the environment only.
X402_PAYER_KEY=$(node -e 'console.log("0x"+require("crypto").randomBytes(32).toString("hex"))')
status=0
(cd "$TMP/client" && VERIFIER_URL="http://127.0.0.1:$PORT" FACILITATOR_URL="http://127.0.0.1:$FAC_PORT" \
  X402_PAYER_KEY="$X402_PAYER_KEY" VERIFIER_PAY_TO="$PAY_TO" VERIFIER_FREE_PER_DAY="$FREE" \
  VERIFIER_TESTDATA="$ROOT/testdata" node --test --test-concurrency=1 x402-mcp.test.mjs) || status=1
if [ "$status" -ne 0 ]; then
  echo "-- verifier log" >&2
  tail -n 50 "$TMP/verifier.log" >&2
  echo "-- facilitator log" >&2
  node -e 'fetch(process.argv[1]).then(r=>r.text()).then(t=>console.error(t),()=>{})' "http://127.0.0.1:$FAC_PORT/log" || true
  tail -n 20 "$TMP/facilitator.log" >&2
fi
exit "$status"
