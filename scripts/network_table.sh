#!/usr/bin/env bash
# Tunes Loom's benchmark networks from scratch and times each against
# PyTorch and ONNX Runtime: the README's network table.
#
#   scripts/network_table.sh                 # every row, about 80 minutes on 2 Zen 5 cores
#   ROWS="resnet50:1:10000" scripts/network_table.sh
#
# A row is MODEL:THREADS:TRIALS[:BATCH]. For each one it writes the network
# config OUT/NAME.json (seed 1, the suite-pretrained MLP), tunes it with a
# fresh log (`loom tune`), then runs the tuned network against the frozen
# TorchScript of the same module and ONNX Runtime on the same ONNX file in
# alternating rounds (`loom network run --check`: medians, outputs compared
# with both). OUT/table.md collects the rows; the
# raw outputs stay beside it (NAME.tune.txt, NAME.run.txt). A row whose
# NAME.run.txt exists is not run again (delete it to redo the row).
#
# Environment: BUILD (default build), OUT (default build/network_table),
# ROUNDS (default 10; batch-16 rows run ROUNDS/3), RUNS (each engine's
# back-to-back runs per round, default 5), FLUSH (true or false:
# the configs' measure.flush_cache; default: the network config's own,
# flushed where the model's weights exceed half the last-level cache). Run on a
# quiet machine: every figure is a ratio measured in one run, but tuning
# time is wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=$(realpath "${BUILD:-build}")
OUT=$(realpath -m "${OUT:-build/network_table}")
ROUNDS=${ROUNDS:-10}
RUNS=${RUNS:-5}
FLUSH=${FLUSH:-}
case $FLUSH in ""|true|false) ;; *) echo "network_table: FLUSH must be true or false" >&2; exit 2 ;; esac
MEASURE=
[ -z "$FLUSH" ] || MEASURE="\"measure\": {\"flush_cache\": $FLUSH},"
ROWS=${ROWS:-"resnet50:1:10000 resnet50:2:5000 mobilenet_v2:1:4000 mobilenet_v2:2:4000 bert_layer:1:2000 bert_layer:2:2000 resnet50:2:2000:16"}
MODEL_FILE=$ROOT/experiments/models/suite_mlp.model
mkdir -p "$OUT"

# Sets model, threads, trials, batch, stem (the model files) and name (the
# row's files) from a row.
parse_row() {
  IFS=: read -r model threads trials batch <<<"$1"
  batch=${batch:-1}
  stem=$model
  [ "$batch" = 1 ] || stem=${model}_b$batch
  name=${stem}_${threads}t_${trials}
}

for row in $ROWS; do
  parse_row "$row"
  if [ ! -f "$OUT/$stem.onnx" ]; then
    args=(--models "$model")
    [ "$batch" = 1 ] || args+=(--batch "$batch")
    /usr/bin/python3 scripts/make_models.py "$OUT" "${args[@]}"
  fi
  [ -f "$OUT/$name.run.txt" ] && { echo "network_table: $name done, skipped"; continue; }
  cat >"$OUT/$name.json" <<EOF
{"network": "$stem.onnx", "batch": $batch, "target": "cpu -threads=$threads",
 "search": {"num_trials": $trials, "seed": 1},
 "cost_model": {"kind": "mlp", "pretrained": "$MODEL_FILE", "options": {"max_train_seconds": 5}}, $MEASURE
 "outputs": {"log": "$name.jsonl"}}
EOF
  rm -f "$OUT/$name.jsonl"
  echo "network_table: tuning $name ($(date -u +%H:%M))"
  "$BUILD/loom" tune "$OUT/$name.json" >"$OUT/$name.tune.txt" 2>&1
  rounds=$ROUNDS
  [ "$batch" = 1 ] || rounds=$(( (ROUNDS + 2) / 3 ))
  echo "network_table: running $name ($(date -u +%H:%M))"
  "$BUILD/loom" network run "$OUT/$stem.onnx" --log "$OUT/$name.jsonl" --threads "$threads" --rounds "$rounds" --runs "$RUNS" \
    --check >"$OUT/$name.run.tmp" 2>&1 || { cat "$OUT/$name.run.tmp"; exit 1; }
  mv "$OUT/$name.run.tmp" "$OUT/$name.run.txt"
done

# The table: one line per row that has run.
{
  echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores; $(date -u +%F)"
  echo
  echo "| model | batch | threads | trials | tuning time | estimate | Loom | PyTorch | Loom's speed / PyTorch's | ONNX Runtime | Loom's speed / ONNX Runtime's | max error (output scale) |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  for row in $ROWS; do
    parse_row "$row"
    [ -f "$OUT/$name.run.txt" ] || continue
    total=$(grep 'weighted total latency' "$OUT/$name.tune.txt" | tail -1)
    estimate=$(sed -E 's/.*latency: ([0-9.]+) ms.*/\1/' <<<"$total")
    seconds=$(sed -E 's/.* trials in ([0-9.]+) s.*/\1/' <<<"$total")
    loom=$(sed -nE 's/^Loom +median ([0-9.]+) ms.*/\1/p' "$OUT/$name.run.txt")
    torch=$(sed -nE 's/^PyTorch median ([0-9.]+) ms.*/\1/p' "$OUT/$name.run.txt")
    ratio=$(sed -nE "s/.*Loom runs at ([0-9.]+)x PyTorch's speed.*/\1/p" "$OUT/$name.run.txt")
    ort=$(sed -nE 's/^ONNX Runtime median ([0-9.]+) ms.*/\1/p' "$OUT/$name.run.txt")
    ort_ratio=$(sed -nE "s/.*Loom runs at ([0-9.]+)x ONNX Runtime's speed.*/\1/p" "$OUT/$name.run.txt")
    err=$(sed -nE 's/.*max \|error\| ([^,]+), output scale ([^,]+),.*/\1 (\2)/p' "$OUT/$name.run.txt" | head -1)
    minutes=$(awk -v s="$seconds" 'BEGIN { printf "%.1f min", s / 60 }')
    echo "| $model | $batch | $threads | $trials | $minutes | $estimate ms | $loom ms | $torch ms | **$ratio** | ${ort:--} ms | **${ort_ratio:--}** | $err |"
  done
} >"$OUT/table.md"
cat "$OUT/table.md"
