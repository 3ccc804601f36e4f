#!/usr/bin/env bash
# Kill-and-resume check of `loom tune`: runs a tuning job once uninterrupted,
# then again killed with SIGKILL K times at random moments (while searching,
# measuring, confirming, starting up), resuming each time, and checks that
#   - every record complete in the log at a kill is in the final log, as it was;
#   - the final log holds the uninterrupted run's records, in its order, each
#     once: nothing lost, nothing duplicated, nothing measured again;
#   - the final best program is the uninterrupted run's.
# Both runs time programs with the test fault "simulated_time" (each program
# is built and checked against the reference; its cost is a function of its
# steps) and score them with the random cost model, so that the two runs may
# be compared record by record.
#
#   scripts/kill_resume.sh [K] [SEED]        (K = 50 kills; about 10 minutes)
set -euo pipefail
K=${1:-50}
SEED=${2:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LOOM="$ROOT/build/loom"
[ -x "$LOOM" ] || { echo "kill_resume: $LOOM not built (scripts/setup.sh)" >&2; exit 2; }
WORK=$(mktemp -d /tmp/loom_kill_resume.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export LOOM_TEST_FAULT='*:simulated_time'

config() {  # config NAME: an odd-sized GEMM and a softmax, round robin, 3,072 trials
  cat > "$WORK/$1.json" <<EOF
{"name": "$1",
 "target": "cpu -threads=1",
 "tasks": [{"workload": "matmul", "params": {"M": 61, "N": 67, "K": 59}},
           {"workload": "softmax", "params": {"M": 37, "N": 101}}],
 "search": {"num_trials": 3072, "measures_per_round": 16, "population": 256, "generations": 2,
            "task_scheduler": "round_robin", "seed": $SEED, "confirm_top": 8, "confirm_rounds": 12},
 "cost_model": {"kind": "random"},
 "measure": {"repeat": 1, "min_repeat_ms": 0},
 "outputs": {"log": "$WORK/$1.jsonl"}}
EOF
}

config reference
config killed
start=$(date +%s.%N)
"$LOOM" tune "$WORK/reference.json" > "$WORK/reference.out" 2>&1
reference_s=$(echo "$(date +%s.%N) - $start" | bc)
echo "uninterrupted run: $(wc -l < "$WORK/reference.jsonl") records in ${reference_s} s"

# Kill moments: the first K - 5 uniform over a span that spreads them over
# the uninterrupted run's length (each resumed run first reloads the log), at
# least 0.2 s after a start; the last 5 once the trial budget is spent, inside
# the confirmation. (A log append is one write(2): a SIGKILL lands before or
# after it, never inside.)
kills=0
declare -A phase_count
mkdir -p "$WORK/snapshots"
RANDOM=$SEED
max_ms=$(echo "$reference_s * 1000 / $K + 300" | bc | cut -d. -f1)
while [ "$kills" -lt "$K" ]; do
  "$LOOM" tune "$WORK/killed.json" > "$WORK/killed.out" 2>&1 &
  pid=$!
  if [ "$kills" -lt $((K - 5)) ]; then
    delay_ms=$((200 + RANDOM % max_ms))
  else
    until [ "$(wc -l < "$WORK/killed.jsonl")" -ge 3072 ] || ! kill -0 "$pid" 2>/dev/null; do sleep 0.02; done
    delay_ms=$((RANDOM % 1500))
  fi
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  if ! kill -0 "$pid" 2>/dev/null; then
    wait "$pid" || true
    echo "kill_resume: the run finished after $kills kills (of $K): lengthen it" >&2
    exit 1
  fi
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null || true
  kills=$((kills + 1))
  if ! grep -qE '^(round |resumed from|confirm: )' "$WORK/killed.out"; then phase="starting up"
  elif [ "$(wc -l < "$WORK/killed.jsonl")" -ge 3072 ]; then phase="confirming"
  else phase="searching or measuring"; fi
  phase_count[$phase]=$(( ${phase_count[$phase]:-0} + 1 ))
  cp "$WORK/killed.jsonl" "$WORK/snapshots/$kills.jsonl" 2>/dev/null || : > "$WORK/snapshots/$kills.jsonl"
done
"$LOOM" tune "$WORK/killed.json" > "$WORK/killed.out" 2>&1

for p in "${!phase_count[@]}"; do echo "kills while $p: ${phase_count[$p]}"; done
python3 - "$WORK" "$kills" <<'EOF'
import json, sys, glob, os
work, kills = sys.argv[1], int(sys.argv[2])
def lines(path):
    text = open(path).read()
    complete = text.split("\n")[:-1] if not text.endswith("\n") else text.split("\n")[:-1]
    return text, complete
def ident(line):  # what a record says about the program and its cost, not when it was built
    r = json.loads(line)
    return (json.dumps(r["task"], sort_keys=True), json.dumps(r["steps"]), r["result"]["error"], tuple(r["result"]["costs_s"]))
final_text, final = lines(f"{work}/killed.jsonl")
_, reference = lines(f"{work}/reference.jsonl")
lost = 0
for snap in glob.glob(f"{work}/snapshots/*.jsonl"):
    text = open(snap).read()
    complete = text[: text.rfind("\n") + 1]
    if not final_text.startswith(complete):
        lost += 1
        print(f"kill_resume: records complete at kill {os.path.basename(snap)} are not kept as they were")
bad = [l for l in final if l.strip()]
parsed = []
for l in bad:
    try:
        parsed.append(ident(l))
    except Exception:
        pass  # a line cut by a kill: one bad line, skipped by every reader
cut = len(bad) - len(parsed)
ref = [ident(l) for l in reference if l.strip()]
same = parsed == ref
dups = len(parsed) - len(set(parsed))
ref_dups = len(ref) - len(set(ref))
def best(recs):
    by = {}
    for task, steps, err, costs in recs:
        if err == "none": by.setdefault((task, steps), []).extend(costs)
    out = {}
    for (task, steps), c in by.items():
        c = sorted(c); m = c[len(c) // 2]
        if task not in out or m < out[task][0]: out[task] = (m, steps)
    return out
print(f"kills survived: {kills}; records: {len(parsed)} (uninterrupted: {len(ref)}), lines cut by a kill: {cut}")
print(f"records lost: {lost and 'some' or 0}; measured again beyond the uninterrupted run: {max(0, dups - ref_dups)}; "
      f"same records in the same order: {'yes' if same else 'NO'}; same best: {'yes' if best(parsed) == best(ref) else 'NO'}")
if lost or not same or best(parsed) != best(ref):
    if not same:
        for i, (a, b) in enumerate(zip(parsed, ref)):
            if a != b:
                print(f"first difference at record {i}"); break
    sys.exit(1)
EOF
