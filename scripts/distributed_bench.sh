#!/usr/bin/env bash
# Measurement throughput of `loom tune --distributed` with 1, 2 and 4
# measurement nodes (mpirun --oversubscribe on this machine), as candidates
# per second of measuring and as a ratio to one node.
#
# The nodes share this machine's cores, so their devices are simulated: every
# candidate is built and checked against the reference for real, and its
# timing takes 1 s (the test fault "slow_device": a device whose timed runs
# dominate, as a measurement farm's do). Each node times one candidate at a
# time, as on real hardware; rank 0 searches with the random cost model.
#
#   scripts/distributed_bench.sh [TRIALS] [NODES...]   (64 trials; 1 2 4 nodes; ~3 minutes)
set -euo pipefail
TRIALS=${1:-64}
shift || true
NODES=("$@")
[ ${#NODES[@]} -gt 0 ] || NODES=(1 2 4)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LOOM="$ROOT/build/loom"
[ -x "$LOOM" ] || { echo "distributed_bench: $LOOM not built (scripts/setup.sh)" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "distributed_bench: no mpirun (Debian: openmpi-bin)" >&2; exit 2; }
WORK=$(mktemp -d /tmp/loom_distributed_bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export LOOM_TEST_FAULT='*:slow_device'
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $TRIALS trials per run"
echo "| nodes | candidates | measuring (s) | candidates/s | vs 1 node |"
echo "|---|---|---|---|---|"
base=""
for n in "${NODES[@]}"; do
  cat > "$WORK/bench$n.json" <<JSON
{"name": "bench$n", "target": "cpu -threads=1",
 "tasks": [{"workload": "matmul", "params": {"M": 64, "N": 64, "K": 64}}],
 "search": {"num_trials": $TRIALS, "measures_per_round": 16, "population": 256, "generations": 2, "confirm_top": 0},
 "cost_model": {"kind": "random"},
 "outputs": {"log": "$WORK/bench$n.jsonl"}}
JSON
  mpirun --oversubscribe --enable-recovery -n $((n + 1)) -x LOOM_TEST_FAULT \
    "$LOOM" tune "$WORK/bench$n.json" --distributed > "$WORK/bench$n.log" 2>&1 ||
    { echo "distributed_bench: the run with $n node(s) failed:" >&2; tail -5 "$WORK/bench$n.log" >&2; exit 1; }
  # The measuring time of every round ("measure 6.3 s") and the candidates measured.
  read -r cands secs < <(sed -n 's/.*| \([0-9]*\) measured,.* measure \([0-9.]*\) s,.*/\1 \2/p' "$WORK/bench$n.log" |
                         awk '{c += $1; s += $2} END {print c, s}')
  rate=$(awk -v c="$cands" -v s="$secs" 'BEGIN {printf "%.2f", c / s}')
  [ -n "$base" ] || base=$rate
  echo "| $n | $cands | $secs | $rate | $(awk -v r="$rate" -v b="$base" 'BEGIN {printf "%.2f", r / b}') |"
done
