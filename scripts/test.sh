#!/usr/bin/env bash
# The whole test suite, on a fresh Debian or Ubuntu machine, as root:
#   sudo scripts/test.sh
# Installs what it needs (apt packages, Go modules), checks formatting and
# vet, fuzzes, builds the release archives for every controller in the
# background while it boots the simulated Pi lab, runs every test against
# it with the race detector, then kills and re-ups the lab and checks that down
# leaves nothing, and last checks the release archives and their version.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '== %s\n' "$*" >&2; }

. scripts/deps.sh

# the report's browser test: Debian's chromium, headless; zip for the
# Windows release archive; MySQLdb for Debian's python3
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v zip >/dev/null || need+=(zip)
# the MySQL write-up's load.py (../shared/peers/quiz), run by a lab test
/usr/bin/python3 -c 'import MySQLdb' 2>/dev/null || need+=(python3-mysqldb)
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

log "go mod download"
go mod download

log "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt needed on:" >&2; echo "$unformatted" >&2; exit 1
fi

log "go vet"
go vet ./...

# every fuzz target for a short while, from its corpus in testdata/fuzz
# and its seeds; a failure prints the input that broke it (kept under
# testdata/fuzz/, where it becomes a test case)
log "fuzz: each target for ${FUZZTIME:=5s}"
# under a memory limit (4 GB of address space a process): an input whose
# cost grows out of bounds (a TOML nesting the decoder pays for with the
# square of its depth) fails the target instead of the machine
fuzz() { (ulimit -v 4000000 && go test -run '^$' -fuzz "^$1\$" -fuzztime "$FUZZTIME" "$2") >/tmp/pidb-fuzz.log 2>&1; }
for file in $(grep -rl --include='*_test.go' '^func Fuzz' .); do
  for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
    pkg=./$(dirname "$file")
    fuzz "$target" "$pkg" && continue
    # Go 1.26's fuzzing coordinator can report its own stop at the end of
    # -fuzztime as a failure, "context deadline exceeded", with no input
    # that fails (golang/go#75804, fixed in Go 1.27): fuzz that target once
    # more; a failing input is always a failure
    if grep -q 'context deadline exceeded' /tmp/pidb-fuzz.log && ! grep -q 'Failing input written' /tmp/pidb-fuzz.log; then
      log "fuzz $target: the fuzzing coordinator's own deadline (golang/go#75804), no failing input: once more"
      fuzz "$target" "$pkg" && continue
    fi
    echo "fuzz $target in $pkg failed:" >&2; cat /tmp/pidb-fuzz.log >&2; exit 1
  done
done

# the release builds for every controller, in the background while the
# lab comes up (on a fresh machine both take minutes: the cross-builds
# compile the standard library six times, the lab bootstraps its image);
# after the fuzzers, which a busy machine starves; waited for before the
# tests, which measure
log "release builds (in the background)"
scripts/release.sh > /tmp/pidb-release.log 2>&1 &
release_pid=$!
trap 'kill "$release_pid" 2>/dev/null || true' EXIT

log "build"
mkdir -p bin
go build -buildvcs=auto -o bin/pidb ./cmd/pidb

log "lab up"
PIDB_LAB=$(bin/pidb lab up)
export PIDB_LAB
trap 'kill "$release_pid" 2>/dev/null || true; bin/pidb lab down >/dev/null 2>&1 || true' EXIT

log "waiting for the release builds"
if ! wait "$release_pid"; then
  echo "release builds failed:" >&2; cat /tmp/pidb-release.log >&2; exit 1
fi

# -p 1: one package at a time, since some lab tests change the hosts
# (provisioning installs databases) and others measure them
log "go test -race -p 1 ./... (with the lab at $PIDB_LAB)"
go test -race -p 1 -count=1 -timeout 30m ./...

log "lab lifecycle: kill, up again, down leaves nothing"
PIDB_LAB_LIFECYCLE=1 go test -count=1 -run '^TestLabLifecycle$' -v ./lab
trap - EXIT

# the release builds for every controller (made above), and the version
# they carry
log "release archives"
for a in dist/pidb-*-linux-amd64.tar.gz dist/pidb-*-linux-arm64.tar.gz dist/pidb-*-linux-armv7.tar.gz \
         dist/pidb-*-darwin-arm64.tar.gz dist/pidb-*-darwin-amd64.tar.gz dist/pidb-*-windows-amd64.zip; do
  [ -s "$a" ] || { echo "release: $a missing" >&2; exit 1; }
done
rev=$(git rev-parse --short=12 HEAD 2>/dev/null || true)
tar -xzOf dist/pidb-*-linux-amd64.tar.gz --wildcards '*/pidb' > bin/pidb-release
chmod +x bin/pidb-release
if [ -n "$rev" ] && ! bin/pidb-release --version | grep -q "$rev"; then
  echo "release: pidb --version does not name the commit $rev: $(bin/pidb-release --version)" >&2; exit 1
fi
