#!/usr/bin/env bash
# Vendors the Swagger UI that the /docs page serves into tools/docs/swagger-ui,
# from the swagger-ui-dist version pinned in e2e/browser/package-lock.json
# (npm ci, no install scripts), so the binary embeds it and the page works
# with the network off.
#
#   scripts/vendor-docs.sh            refresh tools/docs/swagger-ui
#   scripts/vendor-docs.sh --check    fail when the committed files differ
#
# To upgrade: bump swagger-ui-dist in e2e/browser/package.json, run npm
# install --ignore-scripts there, then this script, and commit all three.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/tools/docs/swagger-ui"
check=false
[[ "${1:-}" == "--check" ]] && check=true

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$root/e2e/browser/package.json" "$root/e2e/browser/package-lock.json" "$work/"
(cd "$work" && npm ci --ignore-scripts --no-audit --no-fund --omit=optional >/dev/null)
dist="$work/node_modules/swagger-ui-dist"
version="$(node -p "require('$dist/package.json').version")"

out="$work/out"
mkdir -p "$out"
cp "$dist/swagger-ui-bundle.js" "$out/"
# The source map is not vendored: drop the comment that points at it.
sed '/^\/\*# sourceMappingURL=.*\*\/$/d' "$dist/swagger-ui.css" >"$out/swagger-ui.css"
cat "$dist/LICENSE" >"$out/LICENSE"
{
  printf '\n\n---- NOTICE\n\n'
  cat "$dist/NOTICE"
  printf '\n\n---- Third-party notices of swagger-ui-bundle.js\n\n'
  cat "$dist/swagger-ui-bundle.js.LICENSE.txt"
} >>"$out/LICENSE"
printf 'swagger-ui-dist %s\n' "$version" >"$out/VERSION"
(cd "$out" && sha256sum LICENSE VERSION swagger-ui-bundle.js swagger-ui.css >SHA256SUMS)

if $check; then
  if ! diff -r "$out" "$dest" >/dev/null; then
    echo "tools/docs/swagger-ui differs from swagger-ui-dist $version of the lock file; run scripts/vendor-docs.sh" >&2
    diff -rq "$out" "$dest" >&2 || true
    exit 1
  fi
  echo "tools/docs/swagger-ui matches swagger-ui-dist $version"
  exit 0
fi
rm -rf "$dest"
mkdir -p "$dest"
cp "$out"/* "$dest/"
echo "vendored swagger-ui-dist $version into tools/docs/swagger-ui"
