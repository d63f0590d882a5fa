#!/usr/bin/env bash
# Installs the Debian 12 packages numart needs, only those that are missing. Run as root (or
# with sudo available). Idempotent: a second run installs nothing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config g++ clang-14 libclang-rt-14-dev
  hwloc libhwloc-dev libboost-dev libjemalloc-dev libtbb-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev relacy-dev
  gnuplot-nox python3
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
