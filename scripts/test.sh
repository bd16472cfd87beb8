#!/usr/bin/env bash
# The whole test suite, on a fresh Debian or Ubuntu machine, as root:
#   sudo scripts/test.sh
# Installs what it needs (apt packages, Go modules), checks formatting and
# vet, fuzzes, starts the release archives for every controller in the
# background, runs the unit tests with the race detector while it boots the
# simulated Pi lab, runs the lab tests against it, then kills and re-ups
# the lab and checks that down leaves nothing, and last checks the release
# archives and their version. It ends with the time of each phase and the
# slowest tests.
#
#   scripts/test.sh --quick   # vet, the fuzzers (2 s each) and the unit tests, no lab, no root
set -euo pipefail
cd "$(dirname "$0")/.."

quick=false
case "${1:-}" in
  --quick) quick=true ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--quick]" >&2; exit 2 ;;
esac

log() { printf '== %s\n' "$*" >&2; }

# each phase's time, printed at the end (also when a phase fails)
phases=()
phase_name=""
phase_start=$SECONDS
phase() {
  if [ -n "$phase_name" ]; then phases+=("$(printf '%5ds  %s' $((SECONDS - phase_start)) "$phase_name")"); fi
  phase_name=$1
  phase_start=$SECONDS
  [ -z "$1" ] || log "$1"
}
report() {
  local rc=$1
  phase ""
  [ -x bin/testsum ] && [ -s "$json" ] && bin/testsum -summary -slowest 10 < "$json" >&2 || true
  { echo; echo "phases:"; printf '%s\n' "${phases[@]}"; printf '%5ds  in all\n' "$SECONDS"; } >&2
  exit $rc
}
json=$(mktemp /tmp/pidb-test.XXXXXX.json)
cleanups=()
# the script's own status, taken before the cleanups run (theirs would hide it)
cleanup() {
  local rc=$?
  for c in "${cleanups[@]}"; do eval "$c" || true; done
  report "$rc"
}
trap cleanup EXIT

# go test's events into the suite's record, and a line a package on the
# terminal, with the whole output of whatever failed
gotest() { go test -json "$@" | tee -a "$json" | bin/testsum -slowest 0; }

phase "deps"
if $quick; then
  if ! command -v go >/dev/null; then
    for d in /usr/local/go/bin /usr/lib/go/bin; do [ -x "$d/go" ] && PATH="$d:$PATH"; done
  fi
else
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
fi
go mod download
mkdir -p bin
go build -o bin/testsum ./internal/testsum

phase "gofmt, vet"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt needed on:" >&2; echo "$unformatted" >&2; exit 1
fi
go vet ./...

# every fuzz target for a short while, from its corpus in testdata/fuzz
# and its seeds, under a memory limit (4 GB of address space a process): an
# input whose cost grows out of bounds (a TOML nesting the decoder pays for
# with the square of its depth) fails the target instead of the machine; a
# failure prints the input that broke it (kept under testdata/fuzz/, where
# it becomes a test case)
$quick && : "${FUZZTIME:=2s}"
phase "fuzz: each target for ${FUZZTIME:=5s}"
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

# the race detector where the code has concurrency of its own: the
# driver and the wire clients, fleet, progress, the thermal sampler and
# simulator, job (the sampler beside the workload), remote (keepalives,
# forwards); the other packages render, parse and decide, single-threaded,
# and their tests run without it (report's charts: 33 s with it, 5 s
# without)
race_pkgs="pidb/bench/... pidb/fleet pidb/progress pidb/thermal pidb/job pidb/remote pidb/lab"
# the packages whose tests reach the lab; every other package's tests are
# unit tests, run while the lab boots
lab_pkgs="pidb/cmd/pidb pidb/provision pidb/lab pidb/remote"
pkgs() { go list "$@" | tr '\n' ' '; }
raced=$(pkgs $race_pkgs)
units_raced=$(for p in $raced; do case " $lab_pkgs " in *" $p "*) ;; *) echo "$p";; esac; done | tr '\n' ' ')
units_plain=$(for p in $(pkgs ./...); do case " $raced $lab_pkgs " in *" $p "*) ;; *) echo "$p";; esac; done | tr '\n' ' ')

if $quick; then
  # no lab: its tests skip and say why, CI or not
  phase "unit tests (go test, -race where the code has concurrency of its own)"
  PIDB_LAB= CI= gotest -race -count=1 $raced
  PIDB_LAB= CI= gotest -count=1 $units_plain pidb/cmd/pidb pidb/provision
  exit 0
fi

# the release builds for every controller, in the background from here to
# the end (after the fuzzers, which a busy machine starves), checked last
log "release builds (in the background, checked at the end)"
scripts/release.sh > /tmp/pidb-release.log 2>&1 &
release_pid=$!
cleanups+=('kill "$release_pid" 2>/dev/null')

# the lab, and its three provisioned once by this run's pidb, with a
# snapshot of each taken (labtest-pi4, -pi3, -zero, replacing an older
# run's; refused while a host's disk lies over it): the shared fleet the
# tests that only read use, and the disks labtest.Clone boots the tests'
# own provisioned Pis from (a test that finds no snapshot takes it itself)
phase "build, lab up, its three provisioned (beside the unit tests)"
go build -buildvcs=auto -o bin/pidb ./cmd/pidb
labup() {
  # the tests check what pidb does, at this machine's full speed (the
  # hosts they boot themselves too: labtest); board speed rates one of
  # this machine's cores with 7-Zip's benchmark once (kept in the lab's
  # folder): here, beside the unit tests, rather than in the lab test that
  # first asks for it
  # every release's image first (cached: built on a fresh machine only),
  # so no lab test holds the lab's lock for minutes building one
  bin/pidb lab images || return 1
  bin/pidb lab up --cpu full > /tmp/pidb-lab-path || return 1
  bin/pidb lab up --cpu board >/dev/null && bin/pidb lab up --cpu full >/dev/null || return 1
  local dir state rc=0
  dir=$(dirname "$(cat /tmp/pidb-lab-path)")
  state=$(mktemp -d) # its passwords: each test provisions with its own
  XDG_STATE_HOME=$state bin/pidb provision -i "$(cat /tmp/pidb-lab-path)" || rc=1
  rm -rf "$state"
  [ $rc = 0 ] || return 1
  for h in pi4 pi3 zero; do bin/pidb lab snapshot --dir "$dir" "$h" "labtest-$h" || return 1; done
}
labup 2>/tmp/pidb-lab-up.log >&2 &
labup_pid=$!
cleanups+=('bin/pidb lab down >/dev/null 2>&1')

phase "unit tests (every package without lab tests; -race where the code has concurrency of its own)"
gotest -race -count=1 $units_raced
gotest -count=1 $units_plain

phase "lab up (what was left of it)"
if ! wait "$labup_pid"; then
  echo "lab up failed:" >&2; cat /tmp/pidb-lab-up.log >&2; exit 1
fi
PIDB_LAB=$(cat /tmp/pidb-lab-path)
export PIDB_LAB

# the lab tests of the four packages at once, and within each package at
# once (t.Parallel): each test leases the hosts it uses (labtest.Lease),
# so one never breaks another's; the tests that break a host or need a
# fresh one boot numbered hosts of their own (labtest.Clone: from a
# snapshot of a provisioned host, taken by the first clone of each board
# in this run; labtest.Fresh). -parallel: a test waiting for a lease
# holds a slot, so there are slots for all. The race detector where the
# package has concurrency of its own (the thermal simulator, remote's
# keepalive and forwards): the others wait on SSH and the servers, and
# their concurrency is fleet's, bench's and progress's, which the unit
# tests run with it.
phase "lab tests (with the lab at $PIDB_LAB; LAB_PARALLEL=${LAB_PARALLEL:=8}, and the longest 8 at once)"
PIDB_BIN=$PWD/bin/pidb
export PIDB_BIN
# LAB_PARALLEL runs the packages and their tests at once, that many tests
# of a package at a time: 12 by default. At 32 (a slot for each of
# cmd/pidb's lab tests, so the longest began at once) a two-core machine
# ran at a load of 30-55, its CPU wanted 84% of the time: hosts starved
# so long that servers took a minute to restart and SSH commands seconds,
# and a run took 28 minutes with a dozen tests failing on waits. The CPU
# is the bound, so fewer at once costs little time (at 16, one test once
# waited 150 s for a slot);
# LAB_PARALLEL=1 runs one test at a time, to tell a test's own failure
# from one that only shows beside others
# The longest lab tests (each many minutes beside the others: fresh
# installs, clusters, ten hosts, a release's matrix) run in a go test of
# their own, all of them from the first second: within one go test the
# order in which parallel tests get their slots is the scheduler's, and
# one of them that got its slot minutes late ended the suite minutes
# after the rest. LAB_PARALLEL is then the slots of the others.
long='^(TestProvisionTheLab|TestUpgradedHostOnTheLab|TestMySQLClusterOnTheLab|TestPostgresClusterOnTheLab|TestMariaDBClusterOnTheLab|TestFleetOfTen|TestReleaseBookwormOnTheLab|TestReleaseUbuntuOnTheLab)$'
if [ "$LAB_PARALLEL" -gt 1 ]; then
  go test -count=1 -run '^$' ./provision ./cmd/pidb >/dev/null # built once, for both go tests
  lab_json=$(mktemp /tmp/pidb-test-lab.XXXXXX.json)
  long_json=$(mktemp /tmp/pidb-test-long.XXXXXX.json)
  cleanups+=('rm -f "$lab_json" "$long_json"')
  go test -json -race -p 2 -parallel "$LAB_PARALLEL" -count=1 -timeout 45m ./lab ./remote > "$lab_json" 2>&1 &
  raced_pid=$!
  cleanups+=('kill "$raced_pid" 2>/dev/null')
  go test -json -parallel 8 -count=1 -timeout 45m -run "$long" ./cmd/pidb > "$long_json" 2>&1 &
  long_pid=$!
  cleanups+=('kill "$long_pid" 2>/dev/null')
  lab_ok=true
  gotest -p 2 -parallel "$LAB_PARALLEL" -count=1 -timeout 45m -skip "$long" ./provision ./cmd/pidb || lab_ok=false
  wait "$long_pid" || lab_ok=false
  cat "$long_json" >> "$json"
  bin/testsum -slowest 0 < "$long_json" || lab_ok=false
  wait "$raced_pid" || lab_ok=false
  cat "$lab_json" >> "$json"
  bin/testsum -slowest 0 < "$lab_json" || lab_ok=false
  $lab_ok || exit 1
else
  gotest -race -p 1 -parallel 1 -count=1 -timeout 30m ./lab ./remote
  gotest -p 1 -parallel 1 -count=1 -timeout 40m ./provision ./cmd/pidb
fi

phase "lab lifecycle: kill, up again, down leaves nothing"
PIDB_LAB_LIFECYCLE=1 gotest -count=1 -run '^TestLabLifecycle$' ./lab

# the release builds for every controller (made in the background), and
# the version they carry
phase "release archives (waited for, checked)"
if ! wait "$release_pid"; then
  echo "release builds failed:" >&2; cat /tmp/pidb-release.log >&2; exit 1
fi
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
