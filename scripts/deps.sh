#!/usr/bin/env bash
# Installs what pidb's lab and tests need on Debian or Ubuntu (as root), and
# puts Go on PATH when it is in a usual place. Sourced by the other scripts.
if [ "$(id -u)" != 0 ]; then
  echo "${0##*/}: the lab needs root: run it with sudo" >&2
  exit 2
fi
if ! command -v go >/dev/null; then
  for d in /usr/local/go/bin /usr/lib/go/bin; do [ -x "$d/go" ] && PATH="$d:$PATH"; done
fi
command -v go >/dev/null || { echo "${0##*/}: needs Go 1.26 (see go.mod and the README's Quick start)" >&2; exit 2; }

# the lab: nspawn, debootstrap, nft, its package cache, 7-Zip (its benchmark
# rates this machine's cores for board speed); and the ssh client
need=()
for pair in systemd-nspawn:systemd-container debootstrap:debootstrap nft:nftables \
            ip:iproute2 ssh:openssh-client apt-cacher-ng:apt-cacher-ng nsenter:util-linux 7zz:7zip; do
  command -v "${pair%%:*}" >/dev/null || need+=("${pair#*:}")
done
# debootstrap checks Debian's releases with Debian's keys (an Ubuntu
# machine has them as a package too)
[ -f /usr/share/keyrings/debian-archive-keyring.gpg ] || need+=(debian-archive-keyring)
if [ ${#need[@]} -gt 0 ]; then
  echo "== installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi
