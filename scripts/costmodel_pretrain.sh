#!/usr/bin/env bash
# The cost model's pretraining data, collected on this machine, and the
# model trained from it:
#   1. random programs: for every task of the CONFIGS (their workloads,
#      shapes and constant weights), ROUNDS rounds of N_RANDOM programs drawn
#      by the sketch sampler (round r of task t: seed 1000 t + r) and
#      measured (`loom costmodel collect`) into
#      OUT/random/<config>.<task>.<round>.jsonl; complete logs are kept, so a
#      rerun (or one with more ROUNDS) collects only what is missing; the
#      rounds go over all tasks in turn, so a budget cut leaves every task
#      with as many rounds as the others, or one fewer;
#   2. search-chosen programs: SEARCH_TRIALS trials per task of a search of
#      each config (`loom tune`, the MLP learning from scratch, the config's
#      measurement settings), logged to OUT/search/<config>.jsonl (a rerun
#      resumes it);
#   3. collection stops starting new work once BUDGET_S seconds have passed
#      (what is collected is kept; rerun to go on). Every record names this
#      machine (result.machine);
#   4. trains the MLP on everything collected (max_train_seconds
#      TRAIN_S) into OUT/pretrained.model (its header lists the machines its
#      programs were timed on), and reports how well models rank programs of
#      tasks they never saw: `loom costmodel transfer`, each task shape held
#      out once (FOLDS folds), ranking its random and its search-chosen
#      programs (each fold's model trains on all programs of the other
#      tasks, as the shipped model does), into OUT/transfer_{random,search}.md,
#      and on held-out records of seen tasks (OUT/seen.txt).
#
# Usage: scripts/costmodel_pretrain.sh [CONFIG...]
#   Default configs: experiments/configs/suite.json and shape_sweep.json
#   (46 task shapes), then the fused tasks of each network of NETWORKS
#   (`loom network tasks`: ResNet-50 28, MobileNet-V2 33, the BERT layer
#   11), from models written into OUT/networks with random weights
#   (scripts/make_models.py) and their task configs beside them, then the
#   BREADTH configs (experiments/configs/costmodel_shapes.json: 101 shapes
#   of other networks), whose tasks get BREADTH_ROUNDS rounds of random
#   programs and BREADTH_TRIALS search trials each: for ranking unseen
#   tasks, more distinct tasks are worth more than more programs per task.
#   env: BUILD=build OUT=$BUILD/costmodel_pretrain N_RANDOM=64 ROUNDS=8
#   SEARCH_TRIALS=128 BREADTH_ROUNDS=2 BREADTH_TRIALS=64 BUDGET_S=11000
#   TRAIN_S=1500 FOLDS=10 MODEL=mlp
#   NETWORKS="resnet50 mobilenet_v2 bert_layer"
#   BREADTH=experiments/configs/costmodel_shapes.json; SEARCH_TRIALS=0
#   skips the searches, TRAIN_S=0 the training and the evaluation,
#   NETWORKS= the networks, BREADTH= the breadth configs.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/costmodel_pretrain}
N_RANDOM=${N_RANDOM:-64}
ROUNDS=${ROUNDS:-8}
SEARCH_TRIALS=${SEARCH_TRIALS:-128}
BREADTH_ROUNDS=${BREADTH_ROUNDS:-2}
BREADTH_TRIALS=${BREADTH_TRIALS:-64}
BUDGET_S=${BUDGET_S:-11000}
TRAIN_S=${TRAIN_S:-1500}
FOLDS=${FOLDS:-10}
MODEL=${MODEL:-mlp}
NETWORKS=${NETWORKS-resnet50 mobilenet_v2 bert_layer}
BREADTH=${BREADTH-experiments/configs/costmodel_shapes.json}
LOOM=$BUILD/loom
[ -x "$LOOM" ] || { echo "costmodel_pretrain: $LOOM not built" >&2; exit 2; }
command -v jq > /dev/null || { echo "costmodel_pretrain: needs jq" >&2; exit 2; }
configs=("$@")
mkdir -p "$OUT/random" "$OUT/search"
if [ ${#configs[@]} -eq 0 ]; then
  configs=(experiments/configs/suite.json experiments/configs/shape_sweep.json)
  missing=()
  for net in $NETWORKS; do [ -f "$OUT/networks/$net.onnx" ] || missing+=("$net"); done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "== writing the models ${missing[*]} (random weights) into $OUT/networks"
    mkdir -p "$OUT/networks"
    if ! /usr/bin/python3 scripts/make_models.py "$OUT/networks" --models "$(IFS=,; echo "${missing[*]}")" \
        > "$OUT/networks/make_models.log" 2>&1; then
      echo "costmodel_pretrain: scripts/make_models.py failed:" >&2; tail -3 "$OUT/networks/make_models.log" >&2; exit 1
    fi
  fi
  for net in $NETWORKS; do
    [ -f "$OUT/networks/$net.json" ] ||
      "$LOOM" network tasks "$OUT/networks/$net.onnx" --config "$OUT/networks/$net.json" | tail -1
    configs+=("$OUT/networks/$net.json")
  done
  breadth=($BREADTH)
  configs+=("${breadth[@]}")
fi
# Rounds of random programs and search trials per task of a config.
is_breadth() { local b; for b in $BREADTH; do [ "$1" = "$b" ] && return 0; done; return 1; }
rounds_of() { if is_breadth "$1"; then echo "$BREADTH_ROUNDS"; else echo "$ROUNDS"; fi; }
trials_of() { if is_breadth "$1"; then echo "$BREADTH_TRIALS"; else echo "$SEARCH_TRIALS"; fi; }
start=$(date +%s)
over_budget() { [ $(( $(date +%s) - start )) -ge "$BUDGET_S" ]; }
lines() { [ -f "$1" ] && grep -c . "$1" || echo 0; }

# 1. Random programs.
max_rounds=$ROUNDS
[ -n "$BREADTH" ] && [ "$BREADTH_ROUNDS" -gt "$max_rounds" ] && max_rounds=$BREADTH_ROUNDS
for ((round = 1; round <= max_rounds; ++round)); do
  t=0
  for cfg in "${configs[@]}"; do
    name=$(basename "$cfg" .json)
    target=$(jq -r '.target // "cpu -threads=1"' "$cfg")
    count=$(jq '.tasks | length' "$cfg")
    if [ "$round" -gt "$(rounds_of "$cfg")" ]; then t=$((t + count)); continue; fi
    for ((i = 0; i < count; ++i, ++t)); do
      log="$OUT/random/$name.$i.$round.jsonl"
      [ "$(lines "$log")" -ge "$N_RANDOM" ] && continue
      if over_budget; then echo "== budget of $BUDGET_S s spent: stopping collection"; break 3; fi
      rm -f "$log"
      workload=$(jq -r ".tasks[$i].workload" "$cfg")
      params=$(jq -c ".tasks[$i].params // {}" "$cfg")
      constants=$(jq -r "(.tasks[$i].constants // []) | join(\",\")" "$cfg")
      echo "== round $round, $name task $i: $N_RANDOM random programs of $workload $params"
      "$LOOM" costmodel collect "$workload" --params "$params" ${constants:+--constants "$constants"} \
        --target "$target" --n "$N_RANDOM" --log "$log" --seed $((1000 * t + round)) | tail -1
    done
  done
done

# 2. Search-chosen programs.
if [ "$SEARCH_TRIALS" -gt 0 ]; then
  for cfg in "${configs[@]}"; do
    trials=$(trials_of "$cfg")
    [ "$trials" -gt 0 ] || continue
    if over_budget; then echo "== budget of $BUDGET_S s spent: no search of $cfg"; break; fi
    name=$(basename "$cfg" .json)
    count=$(jq '.tasks | length' "$cfg")
    search_cfg="$OUT/search/$name.json"
    # Absolute task paths are not needed: tasks are inline. The log goes to OUT.
    jq --arg log "$(realpath "$OUT")/search/$name.jsonl" --argjson trials $((trials * count)) \
      '.outputs = {"log": $log} | .search.num_trials = $trials | .search.task_scheduler = "round_robin"
       | .cost_model = {"kind": "mlp"}' "$cfg" > "$search_cfg"
    echo "== search: $trials trials per task of $cfg"
    "$LOOM" tune "$search_cfg" | grep -E '^(round|resumed|log)' | tail -3 || true
  done
fi
echo "== collection: $(( $(date +%s) - start )) s on $(nproc) cores; $(cat "$OUT"/random/*.jsonl 2>/dev/null | grep -c .) random and $(cat "$OUT"/search/*.jsonl 2>/dev/null | grep -c .) search-chosen records"

[ "$TRAIN_S" -gt 0 ] || exit 0
random_logs=("$OUT"/random/*.jsonl)
search_logs=()
for f in "$OUT"/search/*.jsonl; do [ -f "$f" ] && search_logs+=("$f"); done
settings="{\"max_train_seconds\":$TRAIN_S}"

# 4. The model, then how it transfers.
echo "== training $MODEL on every collected program"
"$LOOM" costmodel train "${random_logs[@]}" "${search_logs[@]}" --model "$MODEL" --settings "$settings" \
  --out "$OUT/pretrained.model" --split none | grep -E '^(records|train|trained|saved)'
echo "== seen tasks: held-out records (20%)"
"$LOOM" costmodel train "${random_logs[@]}" "${search_logs[@]}" --model "$MODEL" --settings "$settings" \
  --out "$OUT/seen.model" --split record --test-fraction 0.2 > "$OUT/seen.txt"
grep -A1 'held-out records' "$OUT/seen.txt" | tail -1
fold_settings="{\"max_train_seconds\":$(( TRAIN_S / FOLDS > 60 ? TRAIN_S / FOLDS : 60 ))}"
also_search=()
[ ${#search_logs[@]} -gt 0 ] && also_search=(--train-only "${search_logs[@]}")
echo "== unseen tasks, random programs: $FOLDS folds"
"$LOOM" costmodel transfer "${random_logs[@]}" "${also_search[@]}" --model "$MODEL" --settings "$fold_settings" \
  --folds "$FOLDS" --table "$OUT/transfer_random.md" | grep -E '^(overall|  per task)'
if [ ${#search_logs[@]} -gt 0 ]; then
  echo "== unseen tasks, search-chosen programs: $FOLDS folds"
  "$LOOM" costmodel transfer "${search_logs[@]}" --train-only "${random_logs[@]}" --model "$MODEL" \
    --settings "$fold_settings" --folds "$FOLDS" --table "$OUT/transfer_search.md" | grep -E '^(overall|  per task)'
fi
echo "model: $OUT/pretrained.model"
