#!/usr/bin/env bash
# Imports, checks and times every model of the zoo (scripts/make_zoo.py),
# untuned: each runs from schedules chosen with nothing timed (the shipped
# schedule database and cost model) against PyTorch (frozen TorchScript) and
# ONNX Runtime on the same ONNX file, in alternating rounds, with its outputs
# compared with both (`loom network run --check`).
#
#   scripts/zoo_table.sh                       # the full zoo, 1 thread
#   MODELS="resnet18,vit_b_16" THREADS=2 scripts/zoo_table.sh
#   SMALL=1 scripts/zoo_table.sh               # the toy-size zoo (what CI checks)
#   SCHEDULES=default scripts/zoo_table.sh     # the plain default schedules
#   DATABASE=none scripts/zoo_table.sh         # the cost model alone, no database
#                                              # (or DATABASE=LOG: that one)
#
# Environment: BUILD (default build), OUT (default build/zoo, or
# build/zoo_small with SMALL=1), ROUNDS (default 3), RUNS (each engine's
# back-to-back runs per round, default 5), THREADS (default 1),
# MODELS (comma-separated; default every model). Models are generated once
# into OUT (the full zoo takes about 4 minutes and 4.5 GB); a model whose
# NAME.THREADSt.run.txt exists is not run again (delete it to redo it).
# OUT/table.md collects the rows; the raw outputs stay beside it.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=$(realpath "${BUILD:-build}")
SMALL=${SMALL:-}
OUT=$(realpath -m "${OUT:-build/zoo${SMALL:+_small}}")
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-5}
THREADS=${THREADS:-1}
SCHEDULES=${SCHEDULES:-untimed}
DATABASE=${DATABASE:-}
variant=${THREADS}t.$SCHEDULES${DATABASE:+.$(basename "$DATABASE" .jsonl)}
run_args=()
case $SCHEDULES in
  untimed) [ -z "$DATABASE" ] || run_args=(--database "$DATABASE") ;;
  default) run_args=(--default-schedules) ;;
  *) echo "zoo_table: SCHEDULES is untimed or default, not '$SCHEDULES'" >&2; exit 2 ;;
esac
list_args=()
[ -z "$SMALL" ] || list_args=(--small)
MODELS=${MODELS:-$(/usr/bin/python3 scripts/make_zoo.py --list "${list_args[@]}" | awk '{print $1}' | paste -sd, -)}
mkdir -p "$OUT"

missing=()
for m in ${MODELS//,/ }; do [ -f "$OUT/$m.onnx" ] || missing+=("$m"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "zoo_table: generating ${missing[*]}"
  /usr/bin/python3 scripts/make_zoo.py "$OUT" --models "$(IFS=,; echo "${missing[*]}")" >"$OUT/make_zoo.log" 2>&1 ||
    echo "zoo_table: make_zoo.py reported failures (see $OUT/make_zoo.log)"
fi

for m in ${MODELS//,/ }; do
  run="$OUT/$m.$variant.run.txt"
  [ -f "$run" ] && continue
  [ -f "$OUT/$m.onnx" ] || { echo "export failed" >"$run"; continue; }
  echo "zoo_table: $m ($(date -u +%H:%M))"
  "$BUILD/loom" network run "$OUT/$m.onnx" --threads "$THREADS" --rounds "$ROUNDS" --runs "$RUNS" --check "${run_args[@]}" >"$run.tmp" 2>&1
  echo "exit $?" >>"$run.tmp"
  grep -v '^W[0-9]\{8\} ' "$run.tmp" >"$run"  # PyTorch's own resize warnings
  rm -f "$run.tmp"
done

{
  echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores; $THREADS thread(s); $ROUNDS alternating rounds of $RUNS runs; $SCHEDULES schedules${DATABASE:+ (database: $DATABASE)}; $(date -u +%F)"
  echo
  echo "| model | ONNX nodes (op types) | tasks | check (PyTorch / ONNX Runtime) | Loom untuned | PyTorch | ONNX Runtime | Loom / ONNX Runtime speed | time to choose schedules |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for m in ${MODELS//,/ }; do
    run="$OUT/$m.$variant.run.txt"
    [ -f "$run" ] || continue
    ops=$(/usr/bin/python3 -c "import onnx,sys; g=onnx.load(sys.argv[1], load_external_data=False).graph; print(f'{len(g.node)} ({len(set(n.op_type for n in g.node))})')" "$OUT/$m.onnx" 2>/dev/null || echo "-")
    tasks=$(sed -nE 's/.* ([0-9]+) tasks \(.*/\1/p' "$run" | head -1)
    torch_check=$(sed -nE 's/^check .* against PyTorch \(the frozen module\): ([A-Z]*[a-z]*).*/\1/p' "$run" | sort -u | paste -sd/ -)
    ort_check=$(sed -nE 's/^check .* against ONNX Runtime: ([A-Z]*[a-z]*).*/\1/p' "$run" | sort -u | paste -sd/ -)
    loom=$(sed -nE 's/^Loom median ([0-9.]+) ms.*/\1/p' "$run")
    torch=$(sed -nE 's/^PyTorch median ([0-9.]+) ms.*/\1/p' "$run")
    ort=$(sed -nE 's/^ONNX Runtime median ([0-9.]+) ms.*/\1/p' "$run")
    ratio=$(sed -nE "s/.*Loom runs at ([0-9.]+)x ONNX Runtime's speed.*/\1/p" "$run")
    err=$(grep -m1 'error:' "$run" | sed 's/|/\\|/g')
    predicted=$(sed -nE 's/^chose [0-9]+ schedules in ([0-9.]+) s.*/\1 s/p' "$run")
    if [ -n "$err" ]; then
      echo "| $m | $ops | - | refused: ${err#*error: } | - | - | - | - | - |"
    else
      echo "| $m | $ops | ${tasks:--} | ${torch_check:--} / ${ort_check:--} | ${loom:--} ms | ${torch:--} ms | ${ort:--} ms | ${ratio:--} | ${predicted:--} |"
    fi
  done
} >"$OUT/table.$variant.md"
cat "$OUT/table.$variant.md"
