#!/usr/bin/env bash
# Installs Loom's dependencies from Debian packages (only what is missing),
# then configures and builds everything into build/. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ccache pkg-config libjemalloc-dev
  nlohmann-json3-dev libgtest-dev libbenchmark-dev
  llvm-14-dev zlib1g-dev libzstd-dev libtinfo-dev libxml2-dev libedit-dev libffi-dev
  libdnnl-dev ocl-icd-opencl-dev libopenblas-dev
  libtorch-dev libxgboost-dev
  libonnx-dev libonnx-testdata python3-onnx python3-torch python3-torchvision
  python3-matplotlib
  clang-14 libclang-rt-14-dev  # scripts/test.sh --sanitize, scripts/fuzz.sh
  jq                           # scripts/property_run.sh
  openmpi-bin libopenmpi-dev   # loom tune --distributed (built without MPI, it is a one-line error)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ONNX Runtime, the network baseline: npm's onnxruntime-node (its CPU
# library ships in the package; the optional GPU download is skipped) under
# Debian's nodejs, pinned, in build/onnxruntime-node. A machine that has node
# and npm from elsewhere keeps them. Without the npm registry the baseline is
# skipped (a warning here, one line in each network run), not the setup.
ORT_VERSION=1.30.0
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "setup: installing nodejs npm"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm
fi
ort_dir=build/onnxruntime-node
if [ "$(node -p "require('./$ort_dir/node_modules/onnxruntime-node/package.json').version" 2>/dev/null)" != "$ORT_VERSION" ]; then
  echo "setup: installing onnxruntime-node $ORT_VERSION into $ort_dir"
  mkdir -p "$ort_dir"
  if ! ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$ort_dir" --no-audit --no-fund --no-save --ignore-scripts \
      --loglevel=error "onnxruntime-node@$ORT_VERSION" >"$ort_dir/npm.log" 2>&1; then
    echo "setup: warning: npm could not install onnxruntime-node $ORT_VERSION ($(grep -m1 -i 'err' "$ort_dir/npm.log" || true));" \
         "the ONNX Runtime baseline will be skipped (log: $ort_dir/npm.log)"
  fi
fi

# ccache keeps rebuilds (and CI on the same machine) fast.
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/loom-ccache}"
# Paths relative to the checkout, so another clone (CI) hits the same cache.
export CCACHE_BASEDIR="$PWD"
export CCACHE_NOHASHDIR=true
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"

jobs="${LOOM_BUILD_JOBS:-$(nproc)}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs"
echo "setup: build complete (build/)"
