#!/usr/bin/env bash
# End-to-end checks of the HTTP mode, run by .ci/run: installs what they need
# (Debian's chromium; the npm packages pinned in e2e/browser/package-lock.json,
# in a temporary copy), then
#   - checks that the vendored Swagger UI and canonicalizer match the lock file,
#   - builds the binary and runs the browser tests of /docs and of the pages
#     for people (/, /check, /agents/{agent_id}) against it, with screenshots
#     under $HTTP_E2E_SCREENSHOTS (default /tmp/verifier-http-e2e-screenshots),
#   - lints the OpenAPI document the binary serves, and the embedded one.
# Any failure exits non-zero; nothing is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
export PATH="/usr/local/go/bin:$PATH"
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_UPDATE_NOTIFIER=1

echo "== http-e2e: tools"
if [[ ! -x /usr/bin/chromium ]]; then
  if [[ "$(id -u)" = 0 ]] && command -v apt-get >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "http-e2e: chromium is required at /usr/bin/chromium (Debian: apt-get install chromium) and not installed" >&2
    exit 1
  fi
fi
/usr/bin/chromium --version
command -v curl >/dev/null || { echo "http-e2e: curl is required and not installed" >&2; exit 1; }
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "http-e2e: node and npm (Node.js >= 20.19) are required" >&2
  exit 1
fi
node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<20||(a===20&&b<19)) { console.error("http-e2e: Node.js >= 20.19 is required, found "+process.versions.node); process.exit(1) }'
node --version

work="$(mktemp -d)"
pid=""
cleanup() {
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then kill "$pid"; wait "$pid" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
cp e2e/browser/package.json e2e/browser/package-lock.json e2e/browser/harness.mjs e2e/browser/docs.test.mjs \
  e2e/browser/pages.test.mjs e2e/browser/redocly.yaml "$work/"
(cd "$work" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)

echo "== http-e2e: vendored docs assets"
scripts/vendor-docs.sh --check

echo "== http-e2e: build"
go build -o "$work/verifier" .

echo "== http-e2e: browser test of /docs"
(cd "$work" && VERIFIER_BIN="$work/verifier" CHROMIUM_PATH=/usr/bin/chromium node --test docs.test.mjs)

echo "== http-e2e: browser test of /, /check and /agents/{agent_id}"
shots="${HTTP_E2E_SCREENSHOTS:-/tmp/verifier-http-e2e-screenshots}"
mkdir -p "$shots"
rm -f "$shots"/*.png
(cd "$work" && VERIFIER_BIN="$work/verifier" CHROMIUM_PATH=/usr/bin/chromium SCREENSHOT_DIR="$shots" \
  HOSTED_CARD="$root/testdata/hosted-agent-card.json" LOG_VECTOR="$root/tools/rest/testdata/log-inclusion-vector.json" node --test pages.test.mjs)
echo "http-e2e: screenshots of the pages at desktop and phone width are in $shots:"
ls "$shots"

echo "== http-e2e: OpenAPI lint"
"$work/verifier" --http 127.0.0.1:0 --data-dir "$work/data" 2>"$work/server.log" &
pid=$!
addr=""
for _ in $(seq 1 100); do
  addr="$(sed -n 's/.*msg="serving HTTP" addr=\([^ ]*\).*/\1/p' "$work/server.log" | head -n1)"
  [[ -n "$addr" ]] && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/server.log" >&2; echo "http-e2e: the server exited" >&2; exit 1; }
  sleep 0.1
done
[[ -n "$addr" ]] || { cat "$work/server.log" >&2; echo "http-e2e: the server did not start" >&2; exit 1; }
curl -fsS "http://$addr/openapi.json" -o "$work/served-openapi.json"
kill "$pid"
wait "$pid"
pid=""
(cd "$work" && npx --no-install redocly lint --config redocly.yaml served-openapi.json "$root/tools/rest/docs/openapi.json")
echo "== http-e2e: ok"
