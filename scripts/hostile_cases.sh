#!/usr/bin/env bash
# Hostile candidates and environments against `loom tune`, one line each:
# what was done and what Loom did. A candidate's fault is injected with the
# test hook LOOM_TEST_FAULT (candidate index 1 of every batch); each run
# tunes a small GEMM for 32 trials with the random cost model.
#
#   scripts/hostile_cases.sh        (about 2 minutes; the file-system cases mount a tmpfs: root)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LOOM="$ROOT/build/loom"
[ -x "$LOOM" ] || { echo "hostile_cases: $LOOM not built (scripts/setup.sh)" >&2; exit 2; }
WORK=$(mktemp -d /tmp/loom_hostile.XXXXXX)
cleanup() { umount "$WORK/fs" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
failures=0

config() {  # config FILE LOG
  cat > "$1" <<EOF
{"target": "cpu -threads=1", "tasks": [{"workload": "matmul", "params": {"M": 48, "N": 40, "K": 56}}],
 "search": {"num_trials": 32, "measures_per_round": 8, "population": 128, "confirm_top": 0, "seed": 1},
 "cost_model": {"kind": "random"}, "measure": {"repeat": 1, "min_repeat_ms": 1, "run_timeout_s": 2, "build_timeout_s": 3},
 "outputs": {"log": "$2"}}
EOF
}
records() { python3 -c "
import json, sys
n = 0
for l in open(sys.argv[1]):
    try: json.loads(l); n += 1
    except Exception: pass
print(n)" "$1" 2>/dev/null || echo 0; }
errors_of() { python3 -c "
import json, sys, collections
c = collections.Counter()
for l in open(sys.argv[1]):
    try: r = json.loads(l)
    except Exception: continue
    if r['result']['error'] != 'none': c[r['result']['error'] + ': ' + r['result'].get('error_msg', '')[:60]] += 1
print('; '.join(f'{n} x {k}' for k, n in c.items()) or 'none')" "$1"; }
report() { printf '%-44s %s\n' "$1" "$2"; }
fail() { report "$1" "FAILED: $2"; failures=$((failures + 1)); }

# Candidates: each costs its own candidate (an error kind in the log), the
# tuner measures the rest of its 32 trials.
for fault in oom fork spin_threads write_outside segfault spin abort wrong_result build_spin; do
  config "$WORK/$fault.json" "$WORK/$fault.jsonl"
  if LOOM_TEST_FAULT="1:$fault" timeout 600 "$LOOM" tune "$WORK/$fault.json" > "$WORK/$fault.out" 2>&1; then
    n=$(records "$WORK/$fault.jsonl")
    if [ "$n" -eq 32 ]; then report "candidate: $fault" "$n of 32 trials logged; errors: $(errors_of "$WORK/$fault.jsonl")"
    else fail "candidate: $fault" "$n of 32 trials logged"; fi
  else
    fail "candidate: $fault" "loom tune exited $?: $(tail -1 "$WORK/$fault.out")"
  fi
done
for p in /proc/[0-9]*; do
  [ "$(cat "$p/comm" 2>/dev/null)" = loom_fork_test ] && { fail "candidate: fork" "its process is still running"; kill -9 "${p#/proc/}"; }
done

# Environments: a clear one-line error, exit code 2, nothing lost.
expect_error() {  # expect_error NAME OUT_FILE RC
  local line; line=$(tail -1 "$2")
  if [ "$3" -eq 2 ] && [[ "$line" == "loom tune: error: "* ]]; then report "$1" "exit 2: ${line#loom tune: error: }"
  else fail "$1" "exit $3: $line"; fi
}
config "$WORK/env.json" "$WORK/env.jsonl"
LOOM_WORKER=/nonexistent/loom_worker "$LOOM" tune "$WORK/env.json" > "$WORK/env.out" 2>&1
expect_error "worker binary missing" "$WORK/env.out" $?
touch "$WORK/not_executable"; chmod 644 "$WORK/not_executable"
LOOM_WORKER="$WORK/not_executable" "$LOOM" tune "$WORK/env.json" > "$WORK/env.out" 2>&1
expect_error "worker binary not executable" "$WORK/env.out" $?
config "$WORK/dev.json" /dev/full
"$LOOM" tune "$WORK/dev.json" > "$WORK/env.out" 2>&1
expect_error "a device as the log (/dev/full)" "$WORK/env.out" $?

mkdir -p "$WORK/fs"
if mount -t tmpfs -o size=8k tmpfs "$WORK/fs" 2>/dev/null; then
  # Full disk: the log fills an 8 KiB file system during the run.
  config "$WORK/full.json" "$WORK/fs/full.jsonl"
  "$LOOM" tune "$WORK/full.json" > "$WORK/full.out" 2>&1
  rc=$?
  expect_error "disk full while appending the log" "$WORK/full.out" $rc
  kept=$(records "$WORK/fs/full.jsonl")
  # Resumed elsewhere from what was kept: only the rest is measured.
  cp "$WORK/fs/full.jsonl" "$WORK/full_moved.jsonl"
  config "$WORK/full2.json" "$WORK/full_moved.jsonl"
  "$LOOM" tune "$WORK/full2.json" > "$WORK/full2.out" 2>&1
  total=$(records "$WORK/full_moved.jsonl")
  distinct=$(python3 -c "
import json, sys
s = set()
for l in open(sys.argv[1]):
    try: s.add(json.dumps(json.loads(l)['steps']))
    except Exception: pass
print(len(s))" "$WORK/full_moved.jsonl")
  if [ "$total" -eq 32 ] && [ "$distinct" -eq 32 ]; then
    report "  ... resumed on a larger disk" "$kept records kept, $((32 - kept)) measured after, none twice"
  else fail "  ... resumed on a larger disk" "$total records, $distinct distinct (want 32)"; fi
  # Read-only log folder: the log is kept as it was.
  before=$(md5sum < "$WORK/fs/full.jsonl")
  mount -o remount,ro "$WORK/fs"
  config "$WORK/ro.json" "$WORK/fs/full.jsonl"
  "$LOOM" tune "$WORK/ro.json" > "$WORK/ro.out" 2>&1
  expect_error "read-only log folder" "$WORK/ro.out" $?
  [ "$(md5sum < "$WORK/fs/full.jsonl")" = "$before" ] || fail "read-only log folder" "the log changed"
  umount "$WORK/fs"
else
  report "disk full / read-only folder" "skipped: mounting a tmpfs needs root"
fi

echo "hostile cases failed: $failures"
[ "$failures" -eq 0 ]
