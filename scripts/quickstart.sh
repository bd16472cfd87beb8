#!/usr/bin/env bash
# Quick start, on a fresh Debian or Ubuntu machine, as root: builds pidb,
# boots the simulated Pi lab (pi4, pi3, zero) and runs pidb's newest fleet
# command on it.
#   sudo scripts/quickstart.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
mkdir -p bin
go build -o bin/pidb ./cmd/pidb
INV=$(bin/pidb lab up)
echo "== the lab's inventory: $INV" >&2
bin/pidb facts -i "$INV"
