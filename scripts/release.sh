#!/usr/bin/env bash
# Builds lcp's release binaries: static (cgo off) for Linux, macOS and
# Windows on amd64 and arm64, each checked (platform, cgo off, version),
# with their SHA-256 checksums in SHA256SUMS.
#
#   scripts/release.sh [VERSION [OUTDIR]]
#
# VERSION defaults to `git describe --tags --always --dirty` (dev outside
# git); it is what `lcp version` and the MCP serverInfo print. OUTDIR
# defaults to dist/ and is emptied first. LCP_RELEASE_TARGETS (space-separated
# GOOS/GOARCH pairs) builds fewer targets, as CI does. Needs only Go (and
# sha256sum or shasum).
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
out=${2:-dist}
targets=${LCP_RELEASE_TARGETS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"}

case $version in
  *[!A-Za-z0-9._+-]*|"") echo "release: bad version '$version'" >&2; exit 2 ;;
esac
if command -v sha256sum >/dev/null; then sha=(sha256sum); else sha=(shasum -a 256); fi

rm -rf "$out"
mkdir -p "$out"
for t in $targets; do
  goos=${t%/*} goarch=${t#*/}
  ext=""
  [ "$goos" = windows ] && ext=.exe
  bin="lcp_${version}_${goos}_${goarch}${ext}"
  echo "== $bin"
  CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=auto \
    -ldflags "-s -w -X github.com/lcptools/lcp/internal/buildinfo.version=$version" \
    -o "$out/$bin" ./cmd/lcp
  # What was built is what was asked: the build settings Go records
  # (-trimpath leaves -ldflags out of them), and the version inside.
  info=$(go version -m "$out/$bin")
  for want in "GOOS=$goos" "GOARCH=$goarch" "CGO_ENABLED=0"; do
    if ! grep -q -- "$want" <<<"$info"; then
      echo "release: $bin was not built with $want" >&2
      exit 1
    fi
  done
  if ! grep -q -a -F -- "$version" "$out/$bin"; then
    echo "release: $bin does not carry the version $version" >&2
    exit 1
  fi
  if [ "$goos/$goarch" = "$(go env GOHOSTOS)/$(go env GOHOSTARCH)" ]; then
    got=$("$out/$bin" version | head -1)
    if [ "$got" != "lcp version $version" ]; then
      echo "release: $bin says '$got'" >&2
      exit 1
    fi
  fi
done
(cd "$out" && "${sha[@]}" lcp_* > SHA256SUMS && "${sha[@]}" -c --quiet SHA256SUMS)
echo "== $out/SHA256SUMS"
cat "$out/SHA256SUMS"
