#!/usr/bin/env bash
# A network's speed against ONNX Runtime and PyTorch as tuning goes on:
# with nothing timed, after 1 and 5 minutes of `loom tune`, and after the
# full trial count.
#
#   scripts/tuning_budget_table.sh              # MobileNet-V2 and the BERT-base layer, 1 and 2 threads
#   ROWS="resnet50:1:10000" scripts/tuning_budget_table.sh
#
# A row is MODEL:THREADS:TRIALS (a model of scripts/make_models.py). For
# each one it writes the network config OUT/NAME.json (seed 1, the
# suite-pretrained MLP, the shipped schedule database), then
#   untuned  `loom network run` without a log: every schedule chosen with
#            nothing timed (the shipped database's programs for the same
#            task where it has them; see README.md);
#   1 min    `loom tune --time-budget 1m` on a fresh log;
#   5 min    `loom tune --time-budget 4m` on the same log (5 minutes in all);
#   full     `loom tune` on the same log up to TRIALS trials;
# each followed by `loom network run --check` against PyTorch and ONNX
# Runtime in alternating rounds (medians; a ratio is Loom's speed over the
# other engine's, the median of per-round ratios). OUT/table.md collects
# the rows; the raw outputs stay beside it (NAME.STAGE.tune.txt,
# NAME.STAGE.run.txt). A stage whose run.txt exists is not run again.
#
# Environment: BUILD (default build), OUT (default build/tuning_budget),
# ROUNDS (default 10), RUNS (back-to-back runs per engine and round,
# default 5). Tuning time is wall time: run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=$(realpath "${BUILD:-build}")
OUT=$(realpath -m "${OUT:-build/tuning_budget}")
ROUNDS=${ROUNDS:-10}
RUNS=${RUNS:-5}
ROWS=${ROWS:-"mobilenet_v2:1:4000 mobilenet_v2:2:4000 bert_layer:1:2000 bert_layer:2:2000"}
MODEL_FILE=$ROOT/experiments/models/suite_mlp.model
STAGES="untuned 1m 5m full"
mkdir -p "$OUT"

# Sets model, threads, trials and name (the row's files) from a row.
parse_row() {
  IFS=: read -r model threads trials <<<"$1"
  name=${model}_${threads}t
}

# Runs the network of the row (with the log after the first stage).
run_network() {
  local stage=$1 log_args=()
  [ "$stage" = untuned ] || log_args=(--log "$OUT/$name.jsonl")
  "$BUILD/loom" network run "$OUT/$model.onnx" "${log_args[@]}" --threads "$threads" --rounds "$ROUNDS" \
    --runs "$RUNS" --check >"$OUT/$name.$stage.run.tmp" 2>&1 || { cat "$OUT/$name.$stage.run.tmp"; exit 1; }
  mv "$OUT/$name.$stage.run.tmp" "$OUT/$name.$stage.run.txt"
}

for row in $ROWS; do
  parse_row "$row"
  [ -f "$OUT/$model.onnx" ] || /usr/bin/python3 scripts/make_models.py "$OUT" --models "$model"
  cat >"$OUT/$name.json" <<EOF
{"network": "$model.onnx", "target": "cpu -threads=$threads",
 "search": {"num_trials": $trials, "seed": 1},
 "cost_model": {"kind": "mlp", "pretrained": "$MODEL_FILE", "options": {"max_train_seconds": 5}},
 "outputs": {"log": "$name.jsonl"}}
EOF
  for stage in $STAGES; do
    [ -f "$OUT/$name.$stage.run.txt" ] && { echo "tuning_budget: $name $stage done, skipped"; continue; }
    echo "tuning_budget: $name $stage ($(date -u +%H:%M))"
    case $stage in
      untuned) rm -f "$OUT/$name.jsonl" ;;
      1m) "$BUILD/loom" tune "$OUT/$name.json" --time-budget 1m >"$OUT/$name.$stage.tune.txt" 2>&1 ;;
      5m) "$BUILD/loom" tune "$OUT/$name.json" --time-budget 4m >"$OUT/$name.$stage.tune.txt" 2>&1 ;;
      full) "$BUILD/loom" tune "$OUT/$name.json" >"$OUT/$name.$stage.tune.txt" 2>&1 ;;
    esac
    run_network "$stage"
  done
done

# A stage's cell: Loom's median and its speed over ONNX Runtime's (and the
# trials measured by then, for the tuned stages).
cell() {
  local run=$OUT/$name.$1.run.txt loom ratio torch_ratio count
  [ -f "$run" ] || { echo "-"; return; }
  loom=$(sed -nE 's/^Loom median ([0-9.]+) ms.*/\1/p' "$run")
  ratio=$(sed -nE "s/.*Loom runs at ([0-9.]+)x ONNX Runtime's speed.*/\1/p" "$run")
  torch_ratio=$(sed -nE "s/.*Loom runs at ([0-9.]+)x PyTorch's speed.*/\1/p" "$run")
  count=""
  if [ "$1" != untuned ] && [ -f "$OUT/$name.$1.tune.txt" ]; then
    count=", $(grep 'weighted total latency' "$OUT/$name.$1.tune.txt" | tail -1 | sed -nE 's/.*; ([0-9]+) trials in.*/\1/p') trials"
  fi
  grep -q MISMATCH "$run" && ratio="$ratio, MISMATCH"
  echo "$loom ms: **${ratio:--}** / ${torch_ratio:--}$count"
}

{
  echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores; $ROUNDS rounds of $RUNS runs; $(date -u +%F)"
  echo
  echo "Each cell: Loom's median, then Loom's speed over ONNX Runtime's / over PyTorch's."
  echo
  echo "| model | threads | untuned | 1 min | 5 min | full | ONNX Runtime | PyTorch |"
  echo "|---|---|---|---|---|---|---|---|"
  for row in $ROWS; do
    parse_row "$row"
    last=$OUT/$name.full.run.txt
    ort=$( [ -f "$last" ] && sed -nE 's/^ONNX Runtime median ([0-9.]+) ms.*/\1/p' "$last")
    torch=$( [ -f "$last" ] && sed -nE 's/^PyTorch median ([0-9.]+) ms.*/\1/p' "$last")
    echo "| $model | $threads | $(cell untuned) | $(cell 1m) | $(cell 5m) | $(cell full) | ${ort:--} ms | ${torch:--} ms |"
  done
} >"$OUT/table.md"
cat "$OUT/table.md"
