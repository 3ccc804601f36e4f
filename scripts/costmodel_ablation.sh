#!/usr/bin/env bash
# Does the shipped (pretrained) cost model find good programs of tasks it
# never saw in fewer trials? For each of six network tasks that are none of
# the tasks it was trained on (suite.json and shape_sweep.json), a search of
# TRIALS trials with each cost model:
#   pretrained  the shipped MLP (experiments/models/suite_mlp.model), going on
#               learning from the task's measurements (max_train_seconds 5,
#               as a network config runs it)
#   scratch     the MLP learning from the task's measurements alone
#   xgb         XGBoost learning from the task's measurements alone
# and SEEDS seeds each. Each run is then judged by the program it would
# return if stopped after t trials (t at every round boundary: of its
# confirm_top best first timings, the one with the best median once
# re-measured, as the tuner confirms), every such program re-measured in
# REMEASURE_ROUNDS interleaved rounds (scripts/remeasure_search_picks.py):
# the trials until that pick stays within 95% of the best run's final pick,
# and of the median of the runs' final picks (TRIALS + 1 when never), and
# each arm's final pick. A log's best first timing is partly luck (it
# re-measures 5-40% slower), so the same counts taken on first timings
# follow, as the ablations before re-measuring counted. OUT/table.md has
# the tables.
# Caches: FLUSH=auto (the default) times each task as a network config of
# its model does (`measure.flush_cache`: flushed where the model's weights
# exceed half this machine's last-level cache, ResNet-50 and the BERT
# layer on a 32 MB cache; warm where they fit, MobileNet-V2); FLUSH=true flushes
# before every timed run of every task (as the ablations before 2026-12-06
# did), FLUSH=false flushes none.
#
# The tasks (loom network tasks MODEL shows them all):
#   ResNet-50 10     1x1 conv 128->512 at 28x28 + residual add + ReLU
#   ResNet-50 14     3x3 conv stride 2, 256 channels, 28x28 -> 14x14, + ReLU
#   MobileNet-V2 9   depthwise 3x3 stride 2, 144 channels, 56x56 -> 28x28, + ReLU6
#   MobileNet-V2 20  1x1 conv 96->576 at 14x14 + ReLU6
#   MobileNet-V2 21  depthwise 3x3, 576 channels at 14x14, + ReLU6
#   BERT layer 7     dense 128x768x768 + bias + residual add
#
# Usage: scripts/costmodel_ablation.sh
#   env: BUILD=build OUT=$BUILD/costmodel_ablation TRIALS=1000 SEEDS="1 2"
#        THREADS=1 ARMS="pretrained scratch xgb" FLUSH=auto REMEASURE_ROUNDS=3
#   A run whose log holds TRIALS programs is not run again, nor a complete
#   round of re-measurements. About 2-3 minutes per run on 2 cores, and
#   about 2 minutes per round of re-measurements (6 tasks x 3 arms x 2
#   seeds: about 2 hours).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=$(realpath "${BUILD:-build}")
OUT=$(realpath -m "${OUT:-$BUILD/costmodel_ablation}")
TRIALS=${TRIALS:-1000}
SEEDS=${SEEDS:-"1 2"}
THREADS=${THREADS:-1}
ARMS=${ARMS:-"pretrained scratch xgb"}
FLUSH=${FLUSH:-auto}
REMEASURE_ROUNDS=${REMEASURE_ROUNDS:-3}
case $FLUSH in auto|true|false) ;; *) echo "costmodel_ablation: FLUSH must be auto, true or false, got '$FLUSH'" >&2; exit 2 ;; esac
TASKS="resnet50:10 resnet50:14 mobilenet_v2:9 mobilenet_v2:20 mobilenet_v2:21 bert_layer:7"
LOOM=$BUILD/loom
[ -x "$LOOM" ] || { echo "costmodel_ablation: $LOOM not built" >&2; exit 2; }
mkdir -p "$OUT"

# Each model's flush: FLUSH, or with auto what `loom config show` says a
# network config of the model gets.
declare -A flush_of
for m in resnet50 mobilenet_v2 bert_layer; do
  [ -f "$OUT/$m.onnx" ] || /usr/bin/python3 scripts/make_models.py "$OUT" --models "$m" > /dev/null 2>&1
  [ -f "$OUT/$m.tasks.json" ] || "$LOOM" network tasks "$OUT/$m.onnx" --json > "$OUT/$m.tasks.json"
  flush_of[$m]=$FLUSH
  if [ "$FLUSH" = auto ]; then
    echo "{\"network\": \"$OUT/$m.onnx\", \"target\": \"cpu -threads=$THREADS\"}" > "$OUT/$m.network.json"
    flush_of[$m]=$("$LOOM" config show "$OUT/$m.network.json" |
      /usr/bin/python3 -c 'import json, sys; print(str(json.load(sys.stdin)["measure"]["flush_cache"]).lower())')
  fi
done

cost_model() {
  case $1 in
    pretrained) echo "{\"kind\": \"mlp\", \"pretrained\": \"$ROOT/experiments/models/suite_mlp.model\", \"options\": {\"max_train_seconds\": 5}}" ;;
    scratch) echo '{"kind": "mlp"}' ;;
    xgb) echo '{"kind": "xgb"}' ;;
    *) echo "costmodel_ablation: unknown arm $1" >&2; exit 2 ;;
  esac
}

for task in $TASKS; do
  IFS=: read -r model index <<<"$task"
  for seed in $SEEDS; do
    for arm in $ARMS; do
      name=${model}_${index}.${arm}.s$seed
      log=$OUT/$name.jsonl
      if [ -f "$log" ] && [ "$(grep -c . "$log")" -ge "$TRIALS" ]; then continue; fi
      /usr/bin/python3 - "$OUT/$model.tasks.json" "$index" "$THREADS" "$TRIALS" "$seed" "$(cost_model "$arm")" \
        "$name.jsonl" "${flush_of[$model]}" > "$OUT/$name.json" <<'EOF'
import json, sys
tasks, index, threads, trials, seed, cost_model, log, flush = sys.argv[1:]
task = json.load(open(tasks))[int(index)]
print(json.dumps({"target": "cpu -threads=%s" % threads,
                  "tasks": [{"workload": task["workload"], "params": task["params"]}],
                  "search": {"num_trials": int(trials), "seed": int(seed)},
                  "cost_model": json.loads(cost_model),
                  "measure": {"flush_cache": flush == "true"},
                  "baselines": [], "outputs": {"log": log}}, indent=1))
EOF
      echo "costmodel_ablation: $name ($(date -u +%H:%M))"
      "$LOOM" tune "$OUT/$name.json" > "$OUT/$name.tune.txt" 2>&1 || { tail -3 "$OUT/$name.tune.txt"; exit 1; }
    done
  done
done

/usr/bin/python3 scripts/remeasure_search_picks.py --loom "$LOOM" --out "$OUT" --trials "$TRIALS" --tasks "$TASKS" \
  --arms "$ARMS" --seeds "$SEEDS" --rounds "$REMEASURE_ROUNDS" > "$OUT/table.md"
/usr/bin/python3 - "$OUT" "$TRIALS" "$TASKS" "$ARMS" "$SEEDS" >> "$OUT/table.md" <<'EOF'
import os, statistics, sys
sys.path.insert(0, "scripts")
from tuning_curve_table import best_costs
out, trials, tasks, arms, seeds = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split(), sys.argv[5].split()

def curve(path):
    return best_costs(path)[:trials]

def reach(c, target):  # trials until the best so far is within 95% of target
    return next((i + 1 for i, v in enumerate(c) if v <= target / 0.95), trials + 1)

# On first timings, as the ablations before re-measuring counted. Two
# targets per task: the best any run found (one lucky timing can set it),
# and the median of the runs' final bests (what a search typically ends at).
print("\n## The same counts on first timings\n")
curves = {}
for task in tasks:
    name = task.replace(":", "_")
    curves[task] = {(a, s): curve(os.path.join(out, "%s.%s.s%s.jsonl" % (name, a, s))) for a in arms for s in seeds}
best = {task: min(c[-1] for c in cs.values()) for task, cs in curves.items()}
median = {task: statistics.median(c[-1] for c in cs.values()) for task, cs in curves.items()}
for label, targets in (("the best of all runs", best), ("the median of all runs' final bests", median)):
    print("Trials to 95%% of %s (%d trials per run; %d+1 = never):\n" % (label, trials, trials))
    print("| task | target (ms) | " + " | ".join("%s (each seed)" % a for a in arms) + " |")
    print("|---|---|" + "---|" * len(arms))
    means = {a: [] for a in arms}
    for task in tasks:
        cs = curves[task]
        target = targets[task]
        row = []
        for a in arms:
            r = [reach(cs[(a, s)], target) for s in seeds]
            means[a].append(statistics.mean(r))
            row.append("%.0f (%s)" % (statistics.mean(r), ", ".join(map(str, r))))
        print("| %s | %.4f | %s |" % (task, target * 1e3, " | ".join(row)))
    print("| **mean** | | " + " | ".join("**%.0f**" % statistics.mean(means[a]) for a in arms) + " |\n")
print("Final best after %d trials, as a fraction of the best of all runs' speed (mean over seeds):\n" % trials)
print("| task | " + " | ".join(arms) + " |")
print("|---|" + "---|" * len(arms))
geo = {a: [] for a in arms}
for task in tasks:
    cs = curves[task]
    row = []
    for a in arms:
        f = statistics.mean(best[task] / cs[(a, s)][-1] for s in seeds)
        geo[a].append(f)
        row.append("%.2f" % f)
    print("| %s | %s |" % (task, " | ".join(row)))
print("| **geometric mean** | " + " | ".join("**%.2f**" % statistics.geometric_mean(geo[a]) for a in arms) + " |")
EOF
cat "$OUT/table.md"
