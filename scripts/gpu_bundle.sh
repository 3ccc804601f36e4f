#!/usr/bin/env bash
# Packs Loom for a GPU machine that has the NVIDIA driver and the CUDA
# libraries but none of the Debian packages Loom is built from (no LLVM 14,
# oneDNN, XGBoost, Open MPI...), so that scripts/gpu_check.sh can run there
# without building:
#   1. builds loom, loom_worker and test_gpu in $BUILD without LibTorch
#      (-DLOOM_WITH_TORCH=OFF: LibTorch's Debian package pulls in 1 GB of
#      shared libraries; such a build offers the xgb and random cost models);
#   2. copies them (stripped) and every shared library they load, except the
#      C/C++ runtime and CUDA's own, into loom-gpu/ and packs that as
#      $BUILD/loom-gpu.tar.xz (about 50 MB).
# On the GPU machine: BUNDLE=path/to/loom-gpu.tar.xz scripts/gpu_check.sh
#
# Usage: scripts/gpu_bundle.sh   (env: BUILD=build-gpu JOBS=$(nproc))
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build-gpu}
JOBS=${JOBS:-$(nproc)}

mkdir -p "$BUILD"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DLOOM_WITH_TORCH=OFF > "$BUILD/cmake.log" 2>&1 ||
  { tail -20 "$BUILD/cmake.log"; exit 1; }
grep -q "CUDA toolkit: ON" "$BUILD/cmake.log" || { echo "gpu_bundle: CMake did not find the CUDA toolkit"; exit 1; }
make -C "$BUILD" -j"$JOBS" loom loom_worker test_gpu

STAGE="$BUILD/loom-gpu"
rm -rf "$STAGE" && mkdir -p "$STAGE/tests" "$STAGE/lib"
install -s "$BUILD/loom" "$BUILD/loom_worker" "$STAGE/"
install -s "$BUILD/tests/test_gpu" "$STAGE/tests/"
# The C and C++ runtimes are the GPU machine's own (newer ones run these
# binaries); CUDA's libraries must come from its CUDA installation, which
# matches its driver.
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libpthread|libdl\.|librt\.|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcudnn|libnvrtc|libnvJitLink)'
for bin in "$STAGE/loom" "$STAGE/loom_worker" "$STAGE/tests/test_gpu"; do
  ldd "$bin" | awk '$3 ~ /^\// {print $1, $3}' | while read -r name path; do
    if [[ ! $name =~ $skip ]]; then cp -nL "$path" "$STAGE/lib/$name"; fi
  done
done
tar -C "$BUILD" -cJf "$BUILD/loom-gpu.tar.xz" loom-gpu
echo "gpu_bundle: $BUILD/loom-gpu.tar.xz ($(du -h "$BUILD/loom-gpu.tar.xz" | cut -f1)), $(ls "$STAGE/lib" | wc -l) libraries"
