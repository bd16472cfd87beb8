#!/usr/bin/env bash
# Quick start, on a fresh Debian or Ubuntu machine, as root: builds pidb,
# boots the simulated Pi lab (pi4, pi3, zero), provisions the three (the
# database, tuned settings, the desktop off, access, accounts) and validates
# them: each host's baseline workload from this machine for a minute, with
# the temperature read beside it, and a verdict per host.
#   sudo scripts/quickstart.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
mkdir -p bin
go build -o bin/pidb ./cmd/pidb
INV=$(bin/pidb lab up)
echo "== the lab's inventory: $INV" >&2
bin/pidb facts -i "$INV"
bin/pidb provision -i "$INV"
bin/pidb validate -i "$INV" --duration 1m --warmup 5s --idle-before 10s --idle-after 10s
