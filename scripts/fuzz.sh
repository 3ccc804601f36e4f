#!/usr/bin/env bash
# Fuzzes every parser of outside input (tests/fuzz/targets/) with libFuzzer
# under ASan + UBSan, two targets at a time (one per core).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]    (default 300 s, every target)
#
# Each target starts from its committed corpus (tests/fuzz/corpus/<target>/;
# the ONNX target also from Debian's libonnx-testdata models) and grows a
# working corpus in build-sanitize/fuzz/<target>/. An input that crashes,
# hangs (-timeout 10 s), exhausts memory (-rss_limit_mb 2048) or throws
# anything but LoomError is written to build-sanitize/fuzz/crashes/; once
# the bug is fixed, copy it into the target's corpus folder, where
# test_fuzz runs it in every build. Reproduce one with
#   LOOM_FUZZ_TARGET=<target> build-sanitize/tests/loom_fuzz <file>
# First run: builds build-sanitize/ (about 25 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-300}"
shift || true
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/loom-ccache}" CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
source scripts/sanitize_build.sh
cmake --build "$sanitize_build" -j "${LOOM_BUILD_JOBS:-$(nproc)}" --target loom_fuzz >/dev/null
fuzzer="$PWD/$sanitize_build/tests/loom_fuzz"

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for d in tests/fuzz/corpus/*/; do targets+=("$(basename "$d")"); done
fi
out="$sanitize_build/fuzz"
mkdir -p "$out/crashes" "$out/logs"

fuzz_one() {  # target
  local t="$1" extra=()
  mkdir -p "$out/$t"
  if [ "$t" = onnx_model ] && [ -d /usr/share/libonnx-testdata/data/node ]; then
    mkdir -p "$out/onnx_testdata"
    find /usr/share/libonnx-testdata/data/node -name model.onnx | while read -r m; do
      cp "$m" "$out/onnx_testdata/$(basename "$(dirname "$m")").onnx"
    done
    extra=("$out/onnx_testdata")
  fi
  LOOM_FUZZ_TARGET="$t" "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$out/crashes/$t-" "$out/$t" "tests/fuzz/corpus/$t" "${extra[@]}" \
    >"$out/logs/$t.log" 2>&1 || true
  local execs
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/logs/$t.log" | grep -o '[0-9]*$' | tail -n 1 || echo "?")
  printf '%-18s %6s s  %10s inputs run  %3s found\n' "$t" "$seconds" "$execs" \
    "$(find "$out/crashes" -name "$t-*" | wc -l)"
}
export -f fuzz_one
export out seconds fuzzer

echo "fuzzing ${#targets[@]} targets for $seconds s each, 2 at a time (log: $out/logs/)"
printf '%s\n' "${targets[@]}" | xargs -P 2 -I{} bash -c 'fuzz_one {}'
found=$(find "$out/crashes" -type f | wc -l)
echo "CPU time: $(( seconds * ${#targets[@]} )) s; inputs in $out/crashes: $found"
[ "$found" -eq 0 ]
