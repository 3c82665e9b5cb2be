#!/usr/bin/env bash
# Packs the Claude Desktop bundle verifier-VERSION.mcpb into OUTDIR from
# mcpb/manifest.json (stamped with VERSION) and three prebuilt binaries:
#
#   scripts/mcpb-pack.sh VERSION OUTDIR LINUX_BIN DARWIN_BIN WINDOWS_EXE
#
# The bundle holds server/verifier (Linux), server/verifier-darwin (one
# universal binary: an .mcpb names one command per OS) and server/verifier.exe;
# the manifest's platform_overrides pick one. `mcpb validate` and `mcpb pack`
# are @anthropic-ai/mcpb's, pinned in e2e/release/package-lock.json (installed
# with npm ci when missing). The release workflow runs this on goreleaser's
# binaries; .ci/release.sh runs it too and drives the unpacked bundle.
set -euo pipefail
if [[ $# -ne 5 ]]; then
  echo "usage: $0 VERSION OUTDIR LINUX_BIN DARWIN_BIN WINDOWS_EXE" >&2
  exit 2
fi
version=$1 out=$2 linux=$3 darwin=$4 windows=$5
root="$(cd "$(dirname "$0")/.." && pwd)"
for f in "$linux" "$darwin" "$windows"; do
  [[ -f "$f" ]] || { echo "mcpb-pack: no binary $f" >&2; exit 1; }
done

mcpb="$root/e2e/release/node_modules/.bin/mcpb"
if [[ ! -x "$mcpb" ]]; then
  (cd "$root/e2e/release" && npm ci --no-audit --no-fund --loglevel=error)
fi

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/server" "$out"
(cd "$root" && go run ./internal/release/stamp -version "$version" mcpb/manifest.json) > "$stage/manifest.json"
install -m 0755 "$linux" "$stage/server/verifier"
install -m 0755 "$darwin" "$stage/server/verifier-darwin"
install -m 0755 "$windows" "$stage/server/verifier.exe"
for f in LICENSE README.md; do
  if [[ -f "$root/$f" ]]; then cp "$root/$f" "$stage/"; fi
done

"$mcpb" validate "$stage/manifest.json"
bundle="$(cd "$out" && pwd)/verifier-$version.mcpb"
"$mcpb" pack "$stage" "$bundle"
echo "mcpb-pack: $bundle"
