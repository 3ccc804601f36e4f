#!/usr/bin/env bash
# Tunes the single-operator suite from scratch, one log per thread count, and
# reports each log several times: the README's suite table.
#
#   scripts/suite_table.sh                   # about 2 hours on 2 Zen 5 cores
#   CONFIGS=experiments/configs/suite_2threads.json REPORTS=3 scripts/suite_table.sh
#
# For each config it writes a copy OUT/NAME.json whose log and report land in
# OUT (the pretrained model's path made absolute), tunes it with a fresh log
# (`loom tune`), then runs `loom report --rounds ROUNDS` REPORTS times,
# keeping each report's CSV as OUT/NAME.reportK.csv. OUT/table.md collects
# every report: per task Loom / the fastest oneDNN or OpenBLAS variant
# measured in that report (u: the load changed under the task's rounds),
# then the geometric mean, the lowest ratio and the tasks below 0.9. A
# config whose last report exists is not run again (delete it to redo).
#
# Environment: BUILD (default build), OUT (default build/suite_table),
# CONFIGS (default the one- and two-thread suite configs), REPORTS (default
# 2), ROUNDS (default 9). Run on a quiet machine: the ratios are measured
# interleaved in one run, but a busy machine slows Loom's kernels, which
# move more data through the caches, more than oneDNN's.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=$(realpath "${BUILD:-build}")
OUT=$(realpath -m "${OUT:-build/suite_table}")
CONFIGS=${CONFIGS:-"experiments/configs/suite.json experiments/configs/suite_2threads.json"}
REPORTS=${REPORTS:-2}
ROUNDS=${ROUNDS:-9}
for v in REPORTS ROUNDS; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "suite_table: $v must be a positive integer, not '${!v}'" >&2; exit 2; }
done
mkdir -p "$OUT"

csvs=()
for config in $CONFIGS; do
  [ -f "$config" ] || { echo "suite_table: no config $config" >&2; exit 2; }
  name=$(basename "$config" .json)
  last="$OUT/$name.report$REPORTS.csv"
  for k in $(seq 1 "$REPORTS"); do csvs+=("$OUT/$name.report$k.csv"); done
  [ -f "$last" ] && { echo "suite_table: $name done, skipped"; continue; }
  /usr/bin/python3 - "$config" "$OUT/$name.json" "$name" <<'EOF'
import json, os, sys
src, dst, name = sys.argv[1:]
c = json.load(open(src))
model = c.get("cost_model", {}).get("pretrained")
if model and not os.path.isabs(model):
    c["cost_model"]["pretrained"] = os.path.abspath(os.path.join(os.path.dirname(src), model))
c["outputs"] = {"log": name + ".jsonl", "report": name + "_report", "export": name + "_export"}
json.dump(c, open(dst, "w"), indent=1)
EOF
  rm -f "$OUT/$name.jsonl"
  echo "suite_table: tuning $name"
  "$BUILD/loom" tune "$OUT/$name.json" >"$OUT/$name.tune.txt"
  for k in $(seq 1 "$REPORTS"); do
    echo "suite_table: $name report $k of $REPORTS"
    "$BUILD/loom" report "$OUT/$name.json" --rounds "$ROUNDS" >"$OUT/$name.report$k.txt"
    cp "$OUT/${name}_report/report.csv" "$OUT/$name.report$k.csv"
  done
done

/usr/bin/python3 - "$OUT/table.md" "${csvs[@]}" <<'EOF'
import csv, os, statistics, sys
out, paths = sys.argv[1], sys.argv[2:]
reports = [(os.path.basename(p)[:-4], list(csv.DictReader(open(p)))) for p in paths]
tasks = []
for _, rows in reports:
    for r in rows:
        if r["task"] not in tasks:
            tasks.append(r["task"])
lines = ["| task | " + " | ".join(n for n, _ in reports) + " |", "|---" * (len(reports) + 1) + "|"]
for t in tasks:
    cells = []
    for _, rows in reports:
        r = next((r for r in rows if r["task"] == t), None)
        if r is None or not r["ratio"]:
            cells.append("")
            continue
        unsteady = r["unsteady"] not in ("", "0", "false")
        cells.append("%.3f%s" % (float(r["ratio"]), " u" if unsteady else ""))
    lines.append("| " + t + " | " + " | ".join(cells) + " |")
summary = {"geometric mean": [], "lowest": [], "below 0.9": []}
for _, rows in reports:
    ratios = [float(r["ratio"]) for r in rows if r["ratio"]]
    summary["geometric mean"].append("**%.3f**" % statistics.geometric_mean(ratios) if ratios else "")
    summary["lowest"].append("%.3f" % min(ratios) if ratios else "")
    summary["below 0.9"].append(str(sum(x < 0.9 for x in ratios)))
for k, cells in summary.items():
    lines.append("| " + k + " | " + " | ".join(cells) + " |")
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
echo "suite_table: $OUT/table.md"
