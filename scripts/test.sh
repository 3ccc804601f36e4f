#!/usr/bin/env bash
# Runs the test suite (GoogleTest and script checks via ctest). Tests carry
# one ctest label: fast, slow, gpu (skip without CUDA / a device) or long
# (exhaustive property runs). Without a -L/-LE of the caller's, every test
# but the long ones runs; `scripts/test.sh -L long` runs those.
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
labels=(-LE long)
for a in "$@"; do
  case "$a" in -L | -LE | --label-regex | --label-exclude) labels=() ;; esac
done
ctest --test-dir "$build" --output-on-failure -j "${LOOM_TEST_JOBS:-2}" "${labels[@]}" "$@"
