#!/usr/bin/env bash
# Runs the whole test suite (GoogleTest via ctest). Long property runs are
# behind LOOM_LONG_TESTS=1.
#
#   scripts/test.sh [CTEST_ARGS...]              build/ (what CI runs)
#   scripts/test.sh --sanitize [CTEST_ARGS...]   build-sanitize/: clang-14 with
#       AddressSanitizer + UndefinedBehaviorSanitizer and libFuzzer coverage
#       (also builds loom_fuzz for scripts/fuzz.sh). Any report fails its test.
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/loom-ccache}"
# Paths relative to the checkout, so another clone (CI) hits the same cache.
export CCACHE_BASEDIR="$PWD"
export CCACHE_NOHASHDIR=true
jobs="${LOOM_BUILD_JOBS:-$(nproc)}"

build=build
if [ "${1:-}" = "--sanitize" ]; then
  shift
  build=build-sanitize
  source scripts/sanitize_build.sh
fi
cmake --build "$build" -j "$jobs" >/dev/null
ctest --test-dir "$build" --output-on-failure -j "${LOOM_TEST_JOBS:-2}" "$@"
