#!/usr/bin/env bash
# Property run of Loom's code generation: N random programs (sketch + random
# annotation) of the small odd- and prime-extent shapes of every registry
# workload (experiments/configs/property_run_shapes.json), with 1 and 2
# threads, each compiled with LLVM as the tuner compiles it and checked
# against the reference interpreter on random inputs (`loom sample`, in
# batches, JOBS batches at a time). Prints and writes to OUT the programs
# tried, correct, wrong (a result differs from the reference), errors (lowering
# or compiling threw) and crashes (a batch's process died, exceeded its time
# limit or exited without its summary) per workload and in total, then every
# failure with the command that reproduces it. Exits 1 on any failure, 2 when
# a registry workload has no shape. "distinct" counts the different programs
# among those tried (batches of one shape may draw the same program).
#
#   scripts/property_run.sh [-s SEED] [-b BATCH] [-j JOBS] [-o OUT] N
#
# SEED: the base seed (default: from the clock; printed, so a run repeats).
# BATCH: programs per `loom sample` (default N / (2 x shapes), from 20 to 250).
# JOBS: batches in parallel (default 2). OUT: default ./property_run.out.
# About 35 programs/s on 2 otherwise idle cores (batches of 250; a check is
# mostly its LLVM compile): N=100000 in ~50 minutes, N=2000 in ~2 minutes;
# slower while other jobs load the machine.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHAPES=experiments/configs/property_run_shapes.json  # relative to ROOT
usage() { grep -m1 '^#   scripts/property_run.sh' "$0" >&2; exit 2; }
seed=$(( $(date +%s) % 1000000 )); batch=0; jobs=2; out=property_run.out
while getopts s:b:j:o: opt; do
  case $opt in s) seed=$OPTARG ;; b) batch=$OPTARG ;; j) jobs=$OPTARG ;; o) out=$OPTARG ;; *) usage ;; esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] && [ "$1" -gt 0 ] 2>/dev/null || usage
total=$1
case $out in /*) ;; *) out="$PWD/$out" ;; esac
cd "$ROOT"
[ -x build/loom ] || { echo "property_run: build/loom not built (scripts/setup.sh)" >&2; exit 2; }
missing=$(comm -23 <(build/loom workloads | awk '/^[a-z]/ {print $1}' | sort -u) \
                   <(jq -r '.tasks[].workload' "$SHAPES" | sort -u))
[ -z "$missing" ] || { echo "property_run: no shape in $SHAPES for:" $missing >&2; exit 2; }
ntasks=$(jq '.tasks | length' "$SHAPES")
(( batch > 0 )) || batch=$(( (total + 2 * ntasks - 1) / (2 * ntasks) ))
(( batch = batch < 20 ? 20 : batch > 250 ? 250 : batch ))
WORK=$(mktemp -d /tmp/loom_property.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
echo "property run: N=$total, seed $seed, batches of $batch, $jobs jobs, $ntasks shapes x 1, 2 threads"

run_batch() {  # run_batch ID TASK THREADS N SEED: $WORK/ID.res (counts), $WORK/ID.fail (failures)
  local cmd="build/loom sample $SHAPES --task $2 --threads $3 -n $4 --seed $5"
  local log="$WORK/$1.log" rc=0 t0=$SECONDS wl c w e done
  wl=$(jq -r ".tasks[$2].workload" "$SHAPES")
  timeout $(( 120 + 2 * $4 )) nice -n 10 $cmd --no-ir > "$log" 2>&1 || rc=$?
  read -r c w e done < <(awk '/^check: correct/ {c++} /^check: wrong/ {w++} /^check: error/ {e++}
    /^[0-9]+ programs: / {d = 1} END {print c + 0, w + 0, e + 0, d + 0}' "$log")
  echo "$wl $(( c + w + e + 1 - done )) $c $w $e $(( 1 - done ))" > "$WORK/$1.res"
  awk -v k="$wl $2 $3" '/^== program/ {sub(/^== program [0-9]+: /, ""); print k, $0}' "$log" > "$WORK/$1.steps"
  echo "  $wl (task $2, $3 threads, seed $5): $c correct, $w wrong, $e errors$( (( done )) || echo ", CRASHED (exit $rc)") ($(( SECONDS - t0 )) s)"
  (( w + e + 1 - done )) || { rm -f "$log"; return 0; }
  {
    echo "== $wl (task $2, $3 threads): reproduce with: $cmd --quiet"
    awk -v task="$(jq -c ".tasks[$2] | del(.comment, .weight) + {target: \"cpu -threads=$3\"}" "$SHAPES")" -v rc=$rc '
      function show(verdict) {print h; print verdict; print "   schedule (loom run FILE.json): " task_steps}
      /^== program/ {h = $0; s = $0; sub(/^== program [0-9]+: /, "", s); task_steps = substr(task, 1, length(task) - 1) ", \"steps\": " s "}"; open = 1}
      /^check: / {open = 0; if (!/^check: correct/) show($0)}
      /^[0-9]+ programs: / {done = 1}
      END {if (!done) {if (open) show("crashed (exit " rc ") in this program"); else print "crashed (exit " rc ") after the last program"}}' "$log"
    (( done )) || grep -v '^== program\|^check: \|^task: \|^$' "$log" | tail -n 3 || true
  } > "$WORK/$1.fail"
  rm -f "$log"
}

id=0; tried=0; start=$SECONDS
while (( tried < total )); do  # rounds: sample() may return fewer distinct programs than asked
  planned=0
  while (( tried + planned < total )); do
    n=$(( total - tried - planned < batch ? total - tried - planned : batch ))
    while (( $(jobs -rp | wc -l) >= jobs )); do wait -n || true; done
    run_batch $id $(( id / 2 % ntasks )) $(( id % 2 + 1 )) $n $(( seed + id )) &
    (( planned += n, id += 1 ))
  done
  wait
  tried=$(cat "$WORK"/*.res | awk '{s += $2} END {print s + 0}')
done

elapsed=$(( SECONDS - start ))
{
  echo "property run: N=$total, seed $seed, batches of $batch ($id batches), $jobs jobs, ${elapsed} s" \
       "($(awk -v t="$tried" -v s="$elapsed" 'BEGIN {printf "%.1f", t / (s > 0 ? s : 1)}') programs/s)"
  echo "reproduce: scripts/property_run.sh -s $seed -b $batch $total"
  f="%-18s %8s %8s %8s %6s %6s %7s\n"
  printf "$f" workload tried distinct correct wrong errors crashes
  sort -u "$WORK"/*.steps | awk '{print $1}' | uniq -c > "$WORK/distinct"
  awk 'NR == FNR {d[$2] = $1; next} {for (i = 2; i <= 6; ++i) s[$1, i] += $i; seen[$1] = 1}
    END {for (w in seen) print w, s[w, 2], d[w] + 0, s[w, 3], s[w, 4], s[w, 5], s[w, 6]}' \
    "$WORK/distinct" "$WORK"/*.res | sort > "$WORK/table"
  xargs printf "$f" < "$WORK/table"
  awk '{for (i = 2; i <= 7; ++i) t[i] += $i} END {print "total", t[2], t[3], t[4], t[5], t[6], t[7]}' "$WORK/table" |
    xargs printf "$f"
  cat "$WORK"/*.fail 2>/dev/null || true
} | tee "$out"
if compgen -G "$WORK/*.fail" > /dev/null; then exit 1; fi
