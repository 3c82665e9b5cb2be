#!/usr/bin/env bash
# Vendors the Swagger UI that the /docs page serves into tools/rest/docs/swagger-ui,
# and the RFC 8785 canonicalizer that the /check page runs into
# tools/rest/docs/canonicalize, from the swagger-ui-dist and canonicalize versions
# pinned in e2e/browser/package-lock.json (npm ci, no install scripts), so the
# binary embeds them and the pages work with the network off.
#
#   scripts/vendor-docs.sh            refresh tools/rest/docs/swagger-ui and tools/rest/docs/canonicalize
#   scripts/vendor-docs.sh --check    fail when the committed files differ
#
# To upgrade: bump the package in e2e/browser/package.json, run npm
# install --ignore-scripts there, then this script, and commit all three.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/tools/rest/docs/swagger-ui"
canon_dest="$root/tools/rest/docs/canonicalize"
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

# canonicalize ships one dependency-free ES module: vendored as it is.
canon="$work/node_modules/canonicalize"
canon_version="$(node -p "require('$canon/package.json').version")"
canon_out="$work/canon-out"
mkdir -p "$canon_out"
cp "$canon/lib/canonicalize.js" "$canon/LICENSE" "$canon_out/"
printf 'canonicalize %s\n' "$canon_version" >"$canon_out/VERSION"
cat >"$canon_out/SOURCE" <<NOTE
lib/canonicalize.js and LICENSE (Apache-2.0) of the npm package canonicalize
$canon_version (https://github.com/erdtman/canonicalize), pinned with its
integrity hash in e2e/browser/package-lock.json, copied unchanged by
scripts/vendor-docs.sh. It is one ES module without dependencies; the /check
page imports it from /docs/canonicalize.js. Refresh or check with
scripts/vendor-docs.sh [--check].
NOTE
(cd "$canon_out" && sha256sum LICENSE SOURCE VERSION canonicalize.js >SHA256SUMS)

if $check; then
  if ! diff -r "$out" "$dest" >/dev/null; then
    echo "tools/rest/docs/swagger-ui differs from swagger-ui-dist $version of the lock file; run scripts/vendor-docs.sh" >&2
    diff -rq "$out" "$dest" >&2 || true
    exit 1
  fi
  echo "tools/rest/docs/swagger-ui matches swagger-ui-dist $version"
  if ! diff -r "$canon_out" "$canon_dest" >/dev/null; then
    echo "tools/rest/docs/canonicalize differs from canonicalize $canon_version of the lock file; run scripts/vendor-docs.sh" >&2
    diff -rq "$canon_out" "$canon_dest" >&2 || true
    exit 1
  fi
  echo "tools/rest/docs/canonicalize matches canonicalize $canon_version"
  exit 0
fi
rm -rf "$dest" "$canon_dest"
mkdir -p "$dest" "$canon_dest"
cp "$out"/* "$dest/"
cp "$canon_out"/* "$canon_dest/"
echo "vendored swagger-ui-dist $version into tools/rest/docs/swagger-ui and canonicalize $canon_version into tools/rest/docs/canonicalize"
