#!/usr/bin/env bash
# Drop-in checks with packages nobody here wrote, all on loopback:
#  - e2e/x402-ext: the x402 Bazaar discovery extension of a running
#    `verifier --http --network testnet` (payments on, a stub facilitator
#    that only answers /supported), over REST and MCP, validated with
#    @x402/extensions' own validators (bazaar.test.mjs starts the binary);
#  - e2e/a2a: the agent card of a running verifier, loaded by @a2a-js/sdk's
#    card resolver and client factory (a2a.test.mjs starts the binary).
# Builds the verifier, installs each npm tree from its lock file (`npm ci`)
# in a temporary copy, and runs both tests. Exits non-zero on any failure;
# nothing is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="/usr/local/go/bin:$PATH"
command -v node >/dev/null || { echo "dropin-e2e: node (Node.js >= 20.19) is required and not installed" >&2; exit 1; }
command -v npm >/dev/null || { echo "dropin-e2e: npm is required and not installed" >&2; exit 1; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "== dropin-e2e: go build"
go build -o "$TMP/verifier" .

for suite in x402-ext a2a; do
  echo "== dropin-e2e: npm ci (e2e/$suite)"
  mkdir -p "$TMP/$suite"
  cp "$ROOT/e2e/$suite/package.json" "$ROOT/e2e/$suite/package-lock.json" "$ROOT/e2e/$suite/"*.mjs "$TMP/$suite/"
  (cd "$TMP/$suite" && npm ci --no-audit --no-fund --loglevel=error)
done

echo "== dropin-e2e: x402 Bazaar discovery with @x402/extensions"
(cd "$TMP/x402-ext" && VERIFIER_BIN="$TMP/verifier" VERIFIER_TESTDATA="$ROOT/testdata" \
  node --test --test-concurrency=1 bazaar.test.mjs)

echo "== dropin-e2e: the agent card with @a2a-js/sdk"
(cd "$TMP/a2a" && VERIFIER_BIN="$TMP/verifier" node --test --test-concurrency=1 a2a.test.mjs)
