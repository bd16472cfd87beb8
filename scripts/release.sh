#!/usr/bin/env bash
# Builds pidb for every controller people use, into dist/: Linux on
# x86-64, 64-bit Arm and 32-bit Arm v7 (a Pi as the controller), macOS on
# Apple silicon and Intel, and Windows on x86-64. Each is an archive
# (tar.gz; zip for Windows) with the binary, its man page (pidb.1), the
# README and the architecture notes, and dist/SHA256SUMS has their
# checksums.
#
#   scripts/release.sh                 # version from git describe
#   VERSION=v0.15.0 scripts/release.sh
#
# The version and the commit are stamped in: `pidb --version`. Static
# binaries (no cgo). The lab commands need Linux and root, and say so when
# run elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
TARGETS=${TARGETS:-"linux/amd64 linux/arm64 linux/arm/7 darwin/arm64 darwin/amd64 windows/amd64"}

if ! command -v zip >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zip >/dev/null
  else
    echo "release.sh: needs zip (apt-get install zip)" >&2; exit 2
  fi
fi

rm -rf dist
mkdir -p dist
# the man page, from the same definitions as the help, into every archive
go run -buildvcs=auto ./cmd/pidb man > dist/pidb.1
for t in $TARGETS; do
  IFS=/ read -r os arch arm <<<"$t"
  name=pidb-$VERSION-$os-$arch${arm:+v$arm}
  ext=
  [ "$os" = windows ] && ext=.exe
  printf '== %s\n' "$name" >&2
  mkdir -p "dist/$name"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch GOARM=$arm \
    go build -trimpath -buildvcs=auto -ldflags "-s -w -X main.release=$VERSION" -o "dist/$name/pidb$ext" ./cmd/pidb
  cp README.md ARCHITECTURE.md dist/pidb.1 "dist/$name/"
  if [ "$os" = windows ]; then
    (cd dist && zip -qr "$name.zip" "$name")
  else
    tar -C dist -czf "dist/$name.tar.gz" "$name"
  fi
  rm -rf "dist/${name:?}"
done
rm dist/pidb.1
(cd dist && sha256sum ./*.tar.gz ./*.zip 2>/dev/null | sed 's| \./| |' > SHA256SUMS)
cat dist/SHA256SUMS
