#!/usr/bin/env bash
# Downloads, on a Debian development machine, the Debian packages that the GPU machine
# (Ubuntu 24.04, where nothing can be installed) lacks, into .deb/ (ignored by git).
# scripts/device-build.sh unpacks .deb/*.deb into a private prefix and points CMake at it,
# so the device call must carry .deb. Idempotent: a package already in .deb/ is kept.
# Usage: scripts/fetch-device-debs.sh            (then carry .deb to the device call)
set -euo pipefail
cd "$(dirname "$0")/.."

# One group per component that needs them; a library package beside its -dev package,
# whose libfoo.so symlink points into it.
packages=(
  # The tuning database (src/db): sqlite3.h and libsqlite3.so.
  libsqlite3-dev libsqlite3-0
  # The search's cost model (src/search/cost_model): XGBoost's C API, and libdmlc, which
  # libxgboost needs and Ubuntu 24.04 does not have (libgomp it has).
  libxgboost-dev libxgboost0 libdmlc0
  # The data set's shards (src/data): zstd.h, in case the image lacks it (its libzstd.so.1
  # is there; this pair brings a matching header and library into the private prefix).
  libzstd-dev libzstd1
  # Every program's allocator (cmake/dragon_allocator.cmake): libjemalloc.so and its library.
  libjemalloc-dev libjemalloc2
)

mkdir -p .deb
cd .deb
fetched=()
for package in "${packages[@]}"; do
  if compgen -G "${package}_*.deb" >/dev/null; then
    continue
  fi
  if ! apt-get download -qq "$package" >/dev/null 2>download.err; then
    echo "fetch-device-debs: apt-get download $package failed:" >&2
    cat download.err >&2
    echo "(run 'apt-get update' once, then again)" >&2
    rm -f download.err
    exit 1
  fi
  fetched+=("$package")
done
rm -f download.err
if [ ${#fetched[@]} -gt 0 ]; then
  echo "fetch-device-debs: downloaded ${fetched[*]}"
fi
echo "fetch-device-debs: .deb/ holds $(ls ./*.deb | wc -l) packages, $(du -sh . | cut -f1)"
