#!/usr/bin/env bash
# Builds the schedule database that `loom network run` offers a network
# before any of its programs is timed: tunes each model of MODELS briefly on
# this machine on one thread, and those of MODELS_2T on two as well (the
# thread count is part of a task): TRIALS_PER_TASK trials per task in rounds
# of MEASURES_PER_ROUND, the suite-pretrained cost model; then keeps every
# task's best programs (`loom records best`) in
#   experiments/schedules/database/KIND.jsonl
# where KIND names this machine's CPU (lowercase, one word per dash). The
# database only serves machines of the kind that measured it.
#
#   scripts/build_schedule_database.sh [WORK_DIR]    (default build/schedule-database)
#
# Environment: MODELS (scripts/make_zoo.py names), TRIALS_PER_TASK (48),
# MEASURES_PER_ROUND (16), MODELS_2T (also tuned on two threads),
# PER_TASK (programs kept per task, 3),
# BUILD (build). A model whose log is there already is not tuned again.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-build/schedule-database}
BUILD=${BUILD:-build}
MODELS=${MODELS:-"resnet50 mobilenet_v2 efficientnet_b0 bert_encoder squeezenet1_1 gpt_block vit_b_16 deeplabv3_mobilenet_v3_large inception_v3 googlenet fcn_resnet50 convnext_tiny densenet121"}
TRIALS_PER_TASK=${TRIALS_PER_TASK:-48}
MEASURES_PER_ROUND=${MEASURES_PER_ROUND:-16}
MODELS_2T=${MODELS_2T:-"resnet50 mobilenet_v2 efficientnet_b0 resnet18 squeezenet1_1 vit_b_16"}
PER_TASK=${PER_TASK:-3}
MODEL_FILE=$PWD/experiments/models/suite_mlp.model
export LOOM_SOURCE_DIR=$PWD

mkdir -p "$WORK"
missing=()
for m in $MODELS $MODELS_2T; do [ -f "$WORK/$m.onnx" ] || missing+=("$m"); done
if [ ${#missing[@]} -gt 0 ]; then
  /usr/bin/python3 scripts/make_zoo.py "$WORK" --models "$(IFS=,; echo "${missing[*]}")"
fi

logs=()
for run in $(for m in $MODELS; do echo "$m:1"; done; for m in $MODELS_2T; do echo "$m:2"; done); do
  m=${run%:*} threads=${run#*:}
  name=${m}_${threads}t
  logs+=("$WORK/$name.jsonl")
  [ -f "$WORK/$name.tune.txt" ] && grep -q 'weighted total latency' "$WORK/$name.tune.txt" &&
    { echo "build_schedule_database: $name tuned, skipped"; continue; }
  tasks=$("$BUILD/loom" network tasks "$WORK/$m.onnx" | sed -n "s/.* \([0-9][0-9]*\) distinct tasks.*/\1/p" | head -1)
  trials=$((tasks * TRIALS_PER_TASK))
  cat >"$WORK/$name.json" <<JSON
{"network": "$m.onnx", "batch": 1, "target": "cpu -threads=$threads",
 "search": {"num_trials": $trials, "measures_per_round": $MEASURES_PER_ROUND, "seed": 1},
 "cost_model": {"kind": "mlp", "pretrained": "$MODEL_FILE", "options": {"max_train_seconds": 5}},
 "outputs": {"log": "$name.jsonl"}}
JSON
  rm -f "$WORK/$name.jsonl"
  echo "build_schedule_database: tuning $name, $tasks tasks, $trials trials ($(date -u +%H:%M))"
  "$BUILD/loom" tune "$WORK/$name.json" >"$WORK/$name.tune.txt" 2>&1
done

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
kind=$(echo "$cpu" | tr 'A-Z' 'a-z' | sed 's/([^)]*)//g; s/[^a-z0-9]\+/-/g; s/^-//; s/-$//')
mkdir -p experiments/schedules/database
"$BUILD/loom" records best "${logs[@]}" --per-task "$PER_TASK" --out "experiments/schedules/database/$kind.jsonl"
