#!/usr/bin/env bash
# The release, rehearsed without publishing (.github/workflows/release.yml):
#   1. tools: goreleaser and actionlint (Go modules, pinned below, built once
#      into a cache folder), and as root with apt-get when missing: podman,
#      runc, shellcheck (actionlint checks the workflow's run: scripts with
#      it), jq, unzip;
#   2. `goreleaser check`, and actionlint on .github/workflows;
#   3. `goreleaser release --snapshot` from .goreleaser.yaml without the
#      image (podman builds it below): the six targets cross-compiled with the
#      release flags (each binary's build info is checked for them), the
#      darwin universal binary, the archives and checksums.txt (checked with
#      sha256sum -c);
#   4. the Claude Desktop bundle from those binaries (scripts/mcpb-pack.sh:
#      `mcpb validate` and `mcpb pack`), unpacked with `mcpb unpack` and its
#      Linux binary driven over stdio with initialize and tools/list, the
#      command resolved from the manifest by @anthropic-ai/mcpb itself
#      (e2e/release/stdio-tools.mjs), with the user's data folder;
#   5. server.json stamped for the snapshot and that bundle, as the workflow
#      does (internal/release/stamp);
#   6. the image: `podman build --pull=never` of the Containerfile from a
#      context laid out as goreleaser's (linux/amd64/verifier, container/data),
#      then `podman image inspect` (entrypoint, command, user, volume, port,
#      labels), and the image run: `version`, MCP over stdio (tools/list), and
#      its default command, the HTTP server on 0.0.0.0:8080, answering
#      /health inside a network namespace of its own.
# Needs Go, Node.js and npm (.ci/run checks them) and, for step 6, root.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="/usr/local/go/bin:$PATH"

GORELEASER_VERSION=v2.17.0
ACTIONLINT_VERSION=v1.7.12

TMP=$(mktemp -d)
NETNS=""
VOLUME=""
CONTAINER=""
IMAGE=""
cleanup() {
  if [[ -n "$CONTAINER" ]]; then podman rm -f -v "$CONTAINER" >/dev/null 2>&1 || true; fi
  if [[ -n "$VOLUME" ]]; then podman volume rm -f "$VOLUME" >/dev/null 2>&1 || true; fi
  if [[ -n "$IMAGE" ]]; then podman rmi -f "$IMAGE" >/dev/null 2>&1 || true; fi
  if [[ -n "$NETNS" ]]; then ip netns del "$NETNS" 2>/dev/null || true; fi
  rm -rf "$TMP" "$ROOT/dist" "$ROOT/container"
}
trap cleanup EXIT

echo "== release: tools"
have() { command -v "$1" >/dev/null 2>&1; }
missing=()
have podman || missing+=(podman)
have runc || missing+=(runc)
have shellcheck || missing+=(shellcheck)
have jq || missing+=(jq)
have unzip || missing+=(unzip)
have ip || missing+=(iproute2)
if ((${#missing[@]})); then
  if [[ "$(id -u)" = 0 ]] && have apt-get; then
    echo "installing ${missing[*]} (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "release: missing ${missing[*]}: install them (Debian: apt-get install ${missing[*]}), or run as root" >&2
    exit 1
  fi
fi
# Go tools, built from the module proxy outside this module (they do not
# enter go.mod), once per version.
TOOLS="${VERIFIER_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/verifier-tools}"
gotool() { # NAME PACKAGE VERSION: the path of the tool, built when missing
  local bin="$TOOLS/$1-$3"
  if [[ ! -x "$bin" ]]; then
    echo "building $2@$3" >&2
    mkdir -p "$TOOLS/gobin-$1-$3"
    GOFLAGS='' GOBIN="$TOOLS/gobin-$1-$3" go install "$2@$3" >&2
    mv "$TOOLS/gobin-$1-$3/$1" "$bin"
    rmdir "$TOOLS/gobin-$1-$3"
  fi
  echo "$bin"
}
GORELEASER=$(gotool goreleaser github.com/goreleaser/goreleaser/v2 "$GORELEASER_VERSION")
ACTIONLINT=$(gotool actionlint github.com/rhysd/actionlint/cmd/actionlint "$ACTIONLINT_VERSION")
echo "$("$GORELEASER" --version 2>&1 | grep -m1 -i gitversion | tr -s ' ') actionlint $("$ACTIONLINT" -version | head -1); $(podman --version); $(shellcheck --version | sed -n 2p)"

echo "== release: goreleaser check, actionlint"
"$GORELEASER" check
# With shellcheck on PATH, actionlint checks the run: scripts as well.
"$ACTIONLINT" -no-color .github/workflows/*.yml

echo "== release: goreleaser snapshot (six targets, archives, checksums)"
"$GORELEASER" release --snapshot --clean --skip=docker,publish,announce,sign,sbom --parallelism 2
VERSION=$(jq -r .version dist/metadata.json)
echo "snapshot version $VERSION"
# bin OS ARCH: goreleaser's binary for a platform, from its artifact list
# (the workflow finds them the same way).
bin() {
  jq -er --arg os "$1" --arg arch "$2" \
    'first(.[] | select(.type == "Binary" and .goos == $os and .goarch == $arch) | .path)' dist/artifacts.json
}
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
  os=${target%/*} arch=${target#*/}
  b=$(bin "$os" "$arch")
  info=$(go version -m "$b")
  for want in "GOOS=$os" "GOARCH=$arch" "CGO_ENABLED=0" "-trimpath=true"; do
    grep -qF -- "$want" <<<"$info" || { echo "release: $b lacks $want in its build info:" >&2; echo "$info" >&2; exit 1; }
  done
  # -s -w: no symbol table in the ELF binaries (the build info omits -ldflags
  # under -trimpath; Mach-O keeps the dynamic symbols macOS needs, whatever -s).
  nm_out=$(go tool nm "$b" 2>&1 || true) # it fails on a stripped binary, saying so
  if [[ $os = linux ]] && ! grep -q 'no symbols' <<<"$nm_out"; then
    echo "release: $b has a symbol table: not linked with -s -w" >&2
    exit 1
  fi
  ext=tar.gz
  [[ $os = windows ]] && ext=zip
  archive="dist/verifier_${VERSION}_${os}_${arch}.${ext}"
  [[ -f "$archive" ]] || { echo "release: no archive $archive" >&2; ls dist >&2; exit 1; }
  echo "$target: $b, $archive"
done
n=$(find dist -maxdepth 1 \( -name 'verifier_*.tar.gz' -o -name 'verifier_*.zip' \) | wc -l)
[[ "$n" = 6 ]] || { echo "release: $n archives, want 6" >&2; exit 1; }
(cd dist && sha256sum -c checksums.txt)
[[ $(wc -l < dist/checksums.txt) = 6 ]] || { echo "release: checksums.txt should list the six archives" >&2; exit 1; }
tar -tzf "dist/verifier_${VERSION}_linux_amd64.tar.gz" | grep -qx verifier
unzip -l "dist/verifier_${VERSION}_windows_amd64.zip" | grep -q ' verifier.exe$'
# The version stamped by -X main.version, once main.version is the string
# variable the release flags set (go doc names its declaration).
"$(bin linux amd64)" version | tee "$TMP/version.txt"
if [[ "$(go doc -u . version 2>/dev/null | head -1)" == var* ]]; then
  grep -qF -- "$VERSION" "$TMP/version.txt" || { echo "release: verifier version does not report $VERSION" >&2; exit 1; }
else
  echo "(main.version is not a variable in this tree: -X main.version sets nothing, the version is not checked)"
fi
# The universal macOS binary is one Mach-O file with both architectures.
file_magic=$(od -An -tx1 -N4 "$(bin darwin all)" | tr -d ' ')
[[ "$file_magic" = cafebabe ]] || { echo "release: the darwin universal binary is not a fat Mach-O ($file_magic)" >&2; exit 1; }

echo "== release: Claude Desktop bundle"
scripts/mcpb-pack.sh "$VERSION" dist "$(bin linux amd64)" "$(bin darwin all)" "$(bin windows amd64)"
BUNDLE="dist/verifier-$VERSION.mcpb"
unzip -l "$BUNDLE" | grep -E 'manifest.json|server/verifier' >/dev/null
MCPB="$ROOT/e2e/release/node_modules/.bin/mcpb"
"$MCPB" info "$BUNDLE"
"$MCPB" unpack "$BUNDLE" "$TMP/bundle"
jq -e --arg v "$VERSION" '.version == $v' "$TMP/bundle/manifest.json" >/dev/null
(cd e2e/release && node stdio-tools.mjs --bundle "$TMP/bundle" --data-dir "$TMP/bundle-data")

echo "== release: server.json stamped"
go run ./internal/release/stamp -version "$VERSION" -bundle "$BUNDLE" server.json > "$TMP/server.json"
sum=$(sha256sum "$BUNDLE" | cut -d' ' -f1)
jq -e --arg v "$VERSION" --arg sum "$sum" \
  '.version == $v and ([.packages[] | select(.registryType == "mcpb") | .fileSha256] == [$sum])' \
  "$TMP/server.json" >/dev/null
echo "server.json: version $VERSION, bundle sha256 $sum"

echo "== release: image (podman)"
if [[ "$(id -u)" != 0 ]]; then
  echo "release: the image steps need root (rootful podman, a network namespace)" >&2
  exit 1
fi
ctx="$TMP/image-context"
mkdir -p "$ctx/linux/amd64" "$ctx/container/data"
cp "$(bin linux amd64)" "$ctx/linux/amd64/verifier"
IMAGE="localhost/verifier-release-test:$VERSION"
podman build --pull=never --platform linux/amd64 -f Containerfile -t "$IMAGE" "$ctx"
name=$(jq -r .name server.json)
podman image inspect "$IMAGE" --format '{{json .Config}}' > "$TMP/config.json"
jq -e --arg name "$name" '
  .Entrypoint == ["/verifier"] and
  .Cmd == ["--http", "0.0.0.0:8080", "--data-dir", "/data"] and
  .User == "65532:65532" and
  (.Volumes | has("/data")) and
  (.ExposedPorts | has("8080/tcp")) and
  (.Env | index("VERIFIER_DATA_DIR=/data") != null) and
  .Labels["io.modelcontextprotocol.server.name"] == $name and
  .Labels["org.opencontainers.image.source"] == "https://github.com/verifier-dev/verifier" and
  .Labels["org.opencontainers.image.licenses"] == "Apache-2.0"
' "$TMP/config.json" >/dev/null || { echo "release: the image's configuration:" >&2; cat "$TMP/config.json" >&2; exit 1; }
echo "image $IMAGE: entrypoint, command, user, volume, port and labels as expected"

# Running containers on this kind of machine: crun, podman's default runtime,
# refuses the host's hybrid cgroup layout (v1 controllers plus a cgroup2 tree
# that holds hugetlb: "cgroups in hybrid mode not supported"), so runc runs
# them; and the sandbox lets no process raise an rlimit to podman's defaults
# (nofile 1048576), so the containers get modest ones explicitly.
RUN=(podman --runtime runc run --ulimit nofile=4096:4096 --ulimit nproc=4096:4096)
"${RUN[@]}" --rm --network none "$IMAGE" version
# MCP over stdio as server.json's oci package runs it: a named volume at
# /data (made from the image's /data, so owned by its user), the default
# command replaced by --data-dir /data.
VOLUME="verifier-release-test-$$"
podman volume create "$VOLUME" >/dev/null
(cd e2e/release && node stdio-tools.mjs --manifest "$ROOT/mcpb/manifest.json" -- \
  "${RUN[@]}" -i --rm --network none -v "$VOLUME:/data" "$IMAGE" --data-dir /data)
data=$(podman volume inspect "$VOLUME" --format '{{.Mountpoint}}')
[[ -n "$(ls -A "$data/keys")" ]] || { echo "release: the stdio container left no key in its /data" >&2; exit 1; }
[[ "$(stat -c %u "$data/keys")" = 65532 ]] || { echo "release: the key store is not the image user's" >&2; exit 1; }

# The default command: the HTTP server on 0.0.0.0:8080, as non-root, state in
# the volume. It runs in a network namespace made for it, so nothing listens
# on the host's interfaces; /health is asked from inside that namespace.
NETNS="verifier-release-$$"
ip netns add "$NETNS"
ip -n "$NETNS" link set lo up
CONTAINER=$("${RUN[@]}" -d --network "ns:/run/netns/$NETNS" "$IMAGE")
health=""
for _ in $(seq 60); do
  if health=$(ip netns exec "$NETNS" curl -fsS --max-time 2 http://127.0.0.1:8080/health 2>/dev/null); then break; fi
  if [[ "$(podman inspect -f '{{.State.Running}}' "$CONTAINER")" != true ]]; then
    podman logs "$CONTAINER" >&2
    echo "release: the image's HTTP server exited" >&2
    exit 1
  fi
  sleep 1
done
jq -e '.status == "ok" and .store == "ok"' <<<"$health" >/dev/null || { echo "release: /health answered: $health" >&2; podman logs "$CONTAINER" >&2; exit 1; }
podman logs "$CONTAINER" 2>&1 | grep -q 'serving HTTP' || { podman logs "$CONTAINER" >&2; exit 1; }
echo "image default command: /health $health"
podman stop -t 10 "$CONTAINER" >/dev/null
[[ "$(podman inspect -f '{{.State.ExitCode}}' "$CONTAINER")" = 0 ]] || { echo "release: the server did not stop cleanly on SIGTERM" >&2; podman logs "$CONTAINER" >&2; exit 1; }
echo "== release: ok"
