#!/usr/bin/env bash
# The demo, on a fresh Debian or Ubuntu machine, as root (no Pi needed):
#   scripts/demo.sh [pidb demo's flags, e.g. --keep]
# Installs what the lab needs, builds bin/pidb and runs `pidb demo`: three
# simulated Pis up, provisioned and validated; the Pi 4 in a case (FAIL)
# and with a fan (PASS), compared; the report written to pidb-demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
mkdir -p bin
go build -buildvcs=auto -o bin/pidb ./cmd/pidb
exec bin/pidb demo "$@"
