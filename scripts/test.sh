#!/usr/bin/env bash
# Runs the whole test suite (GoogleTest via ctest). Long property runs are
# behind LOOM_LONG_TESTS=1.
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/loom-ccache}"
# Paths relative to the checkout, so another clone (CI) hits the same cache.
export CCACHE_BASEDIR="$PWD"
export CCACHE_NOHASHDIR=true
cmake --build build -j "${LOOM_BUILD_JOBS:-$(nproc)}" >/dev/null
ctest --test-dir build --output-on-failure -j "${LOOM_TEST_JOBS:-2}" "$@"
