#!/usr/bin/env bash
# GPU check, for a machine with an NVIDIA GPU (H200 reference):
#   1. configure + build loom, loom_worker and test_gpu (Release, all cores),
#      or, with BUNDLE=loom-gpu.tar.xz (scripts/gpu_bundle.sh), unpack that
#      instead: for a GPU machine without Loom's build dependencies;
#   2. run the GPU tests: every suite workload's random GPU programs, cross-
#      thread reductions and a full-size matmul against the reference, and
#      the tuner's measurement path (LONG=1: their DISABLED_*Long suites too, four times the programs);
#   3. tune matmul 1024^3 and conv2d+bias+ReLU (ResNet-50 3x3 layer) for
#      TRIALS trials each (experiments/configs/gpu_*.json; the xgb cost model
#      when the build has no LibTorch), then `loom report` each against
#      cuBLAS / cuDNN;
#   4. print a summary (test result, best GFLOP/s, baseline, ratio).
# Every step has a timeout (TUNE_S for each tuning) so that the whole script
# stays under 10 minutes; a failed step is reported in the summary and the
# later steps still run.
#
# Usage: scripts/gpu_check.sh   (env: BUILD=build-gpu-check TRIALS=320 TUNE_S=210
#                                JOBS=$(nproc) BUNDLE=)
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build-gpu-check}
TRIALS=${TRIALS:-320}
TUNE_S=${TUNE_S:-210}
BUNDLE=${BUNDLE:-}
JOBS=${JOBS:-$(nproc)}
OUT=$BUILD/gpu_check
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
step() { echo; echo "== [$(elapsed)s] $*"; }
declare -A status

step "device"
if command -v nvidia-smi >/dev/null; then nvidia-smi -L || true; else echo "nvidia-smi not found"; fi

if [[ -n $BUNDLE ]]; then
  step "unpack $BUNDLE into $BUILD"
  mkdir -p "$BUILD"
  tar -C "$BUILD" -xJf "$BUNDLE" --strip-components=1
  build_dir=$(cd "$BUILD" && pwd)
  # CUDA's libraries: the toolkit's, else those of the NVIDIA Python wheels.
  libs="$build_dir/lib"
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib $(find / -xdev -path '*/site-packages/nvidia/*/lib' -type d 2>/dev/null); do
    [[ -d $d ]] && libs="$libs:$d"
  done
  export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LOOM_WORKER="$build_dir/loom_worker"
  missing=$(ldd "$BUILD/loom" "$BUILD/loom_worker" "$BUILD/tests/test_gpu" | grep 'not found' | sort -u || true)
  if [[ -n $missing ]]; then
    echo "$missing"
    echo "gpu_check: libraries missing after $(elapsed)s"; exit 1
  fi
  status[build]="ok (bundle $BUNDLE)"
else
  step "configure + build ($BUILD, -j$JOBS)"
  mkdir -p "$BUILD"
  if timeout 120 cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release > "$BUILD/cmake.log" 2>&1 &&
     timeout 300 make -C "$BUILD" -j"$JOBS" loom loom_worker test_gpu > "$BUILD/make.log" 2>&1; then
    status[build]=ok
  else
    status[build]="FAILED (see $BUILD/cmake.log, $BUILD/make.log)"
    tail -30 "$BUILD/make.log" 2>/dev/null || tail -30 "$BUILD/cmake.log"
    echo "gpu_check: build failed after $(elapsed)s"; exit 1
  fi
  grep -q "CUDA toolkit: ON" "$BUILD/cmake.log" || echo "WARNING: CMake did not find the CUDA toolkit"
fi
mkdir -p "$OUT"

step "GPU tests"
# The NVRTC compile test over every workload runs in the GPU-free test suite
# too; here the device tests matter, so only a short slice of it runs.
if timeout 150 "$BUILD/tests/test_gpu" --gtest_brief=1 \
     --gtest_filter="CudaDevice*:CudaSource*:CudaNvrtc.CompilesAHandWrittenKernel:GpuSketch.Matmul*:GpuMeasure*$([ "${LONG:-0}" = 1 ] && echo ':DISABLED_CudaDeviceLong.*')" \
     $([ "${LONG:-0}" = 1 ] && echo --gtest_also_run_disabled_tests) \
     > "$OUT/test_gpu.txt" 2>&1; then
  status[tests]=ok
else
  status[tests]="FAILED (see $OUT/test_gpu.txt)"
fi
tail -15 "$OUT/test_gpu.txt"
if grep -q "SKIPPED" "$OUT/test_gpu.txt"; then status[tests]="${status[tests]} (device tests SKIPPED: no GPU?)"; fi

for cfg in gpu_matmul_1024 gpu_conv2d_bias_relu; do
  step "tune $cfg ($TRIALS trials)"
  cp "experiments/configs/$cfg.json" "$OUT/$cfg.json"
  [[ -n $BUNDLE ]] && sed -i 's/"kind": "mlp"/"kind": "xgb"/' "$OUT/$cfg.json"
  if (cd "$OUT" && timeout "$TUNE_S" "../loom" tune "$cfg.json" --trials "$TRIALS") > "$OUT/$cfg.tune.txt" 2>&1; then
    status[$cfg]=tuned
  else
    status[$cfg]="tune FAILED or timed out (see $OUT/$cfg.tune.txt)"
  fi
  tail -5 "$OUT/$cfg.tune.txt"
  step "report $cfg"
  if (cd "$OUT" && timeout 90 "../loom" report "$cfg.json") > "$OUT/$cfg.report.txt" 2>&1; then
    status[$cfg]="${status[$cfg]}, reported"
  else
    status[$cfg]="${status[$cfg]}, report FAILED (see $OUT/$cfg.report.txt)"
  fi
  cat "$OUT/$cfg.report.txt"
done

step "summary ($(elapsed)s in all)"
echo "build: ${status[build]}"
echo "tests: ${status[tests]}"
for cfg in gpu_matmul_1024 gpu_conv2d_bias_relu; do
  echo "$cfg: ${status[$cfg]}"
  grep -A2 "Loom GF/s" "$OUT/$cfg.report.txt" 2>/dev/null | sed 's/^/  /' || true
done
echo "(ratio = baseline time / Loom time: > 1 means Loom is faster)"
