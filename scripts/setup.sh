#!/usr/bin/env bash
# Installs what Little Dragon needs on Debian 12 (or a derivative), idempotently.
# Quiet when everything is present; run as root or with sudo available.
set -euo pipefail

# Core build and test dependencies (clang and its runtime for the libFuzzer targets), and
# Debian's libtorch (CPU): the eager baselines of dragon bench are checked against the
# interpreter with it, and the model trains on it. OpenBLAS replaces Debian's reference BLAS
# (libblas.so.3, through the alternatives system) under libtorch: the reference BLAS made a
# CPU training step of even a tiny model take most of a second. The CUDA toolkit is detected by
# CMake at configure time and not installed here. XGBoost (C API) is the search's cost model;
# SQLite holds the tuning database (src/db); zstd compresses the data set's shards (src/data);
# jemalloc is every program's allocator (cmake/dragon_allocator.cmake).
# --with-chromium adds headless Chromium, which scripts/report-screenshot.sh uses to check
# and capture an HTML report (not needed to build or test).
packages=(
  build-essential cmake ninja-build pkg-config git
  libgtest-dev libgmock-dev libbenchmark-dev
  libfmt-dev nlohmann-json3-dev libcli11-dev
  libsqlite3-dev libzstd-dev
  clang libclang-rt-14-dev
  libtorch-dev libopenblas0-pthread
  libxgboost-dev
  libjemalloc-dev
)
if [ "${1:-}" = "--with-chromium" ]; then
  packages+=(chromium)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
