#!/usr/bin/env bash
# Runs every command of README.md's ```sh blocks as written, one after the
# other, on the current build, and prints PASS or FAIL per command; exits 1
# when any fails.
#
#   scripts/check_readme.sh
#
# The commands run from the root of a scratch copy of this checkout (its
# tracked and untracked, not ignored, files: the working tree as it is),
# whose build/ holds links to the build's programs; what they write stays
# in the copy, which is removed at the end. Long commands get a small
# budget: `loom tune` lines get --trials $TRIALS, `loom report` and `loom
# network run` lines --rounds $ROUNDS (the last flag wins). Lines running
# scripts/setup.sh or scripts/test.sh are skipped: CI runs them. Comment
# lines are skipped, lines ending in a backslash continue on the next one.
#
# Environment:
#   LOOM_BUILD_DIR   the build whose programs the commands use (default:
#                    build/); its loom_worker becomes LOOM_WORKER unless set
#   TRIALS, ROUNDS   the budget (default 32 and 1)
#   TIMEOUT_S        limit per command in seconds (default 1800)
#   KEEP=1           keep the scratch copy (its path is printed)
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

build=$(realpath "${LOOM_BUILD_DIR:-build}" 2>/dev/null) || build=""
if [ -z "$build" ] || [ ! -x "$build/loom" ]; then
  echo "check_readme: no loom program in ${LOOM_BUILD_DIR:-build}/ (build it, or set LOOM_BUILD_DIR)" >&2
  exit 2
fi
if [ -z "${LOOM_WORKER:-}" ] && [ -x "$build/loom_worker" ]; then export LOOM_WORKER="$build/loom_worker"; fi
trials=${TRIALS:-32}
rounds=${ROUNDS:-1}
timeout_s=${TIMEOUT_S:-1800}

# The commands: one per line, continuation lines joined, comments and blank
# lines dropped.
mapfile -t commands < <(awk '
  /^```sh[[:space:]]*$/ { in_block = 1; next }
  in_block && /^```/    { in_block = 0; if (joined != "") print joined; joined = ""; next }
  !in_block             { next }
  joined == "" && /^[[:space:]]*(#.*)?$/ { next }
  {
    line = $0
    if (line ~ /\\[[:space:]]*$/) { sub(/\\[[:space:]]*$/, "", line); joined = joined line; next }
    print joined line; joined = ""
  }' README.md)
if [ ${#commands[@]} -eq 0 ]; then
  echo "check_readme: README.md has no commands in \`\`\`sh blocks" >&2
  exit 2
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/loom_check_readme.XXXXXX")
if [ "${KEEP:-}" = 1 ]; then
  echo "scratch copy: $scratch (kept)"
else
  trap 'rm -rf "$scratch"' EXIT
fi
git ls-files -z --cached --others --exclude-standard |
  tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -C "$scratch" -xf -
# build/: links to the build's programs and the folders they read
# (onnxruntime-node, tests); what the commands write there stays in the copy.
mkdir -p "$scratch/build"
for entry in "$build"/*; do
  name=$(basename "$entry")
  if { [ -f "$entry" ] && [ -x "$entry" ]; } || [ "$name" = onnxruntime-node ] || [ "$name" = tests ]; then
    ln -s "$entry" "$scratch/build/$name"
  fi
done
echo "README.md: ${#commands[@]} commands, run in a copy of $repo with the programs of $build" \
     "(budget: --trials $trials, --rounds $rounds)"

# The command with the budget flags added to each of its `&&` parts.
with_budget() {
  local rest=$1 out="" part
  while :; do
    part=${rest%%&&*}
    part=${part%"${part##*[![:space:]]}"}  # trailing blanks
    if [[ $part =~ (^|[[:space:]/])loom[[:space:]]+tune([[:space:]]|$) ]]; then
      part+=" --trials $trials"
    elif [[ $part =~ (^|[[:space:]/])loom[[:space:]]+(report|network[[:space:]]+run)([[:space:]]|$) ]]; then
      part+=" --rounds $rounds"
    fi
    out+=$part
    [[ $rest == *"&&"* ]] || break
    rest=${rest#*&&}
    out+=" &&"
  done
  printf '%s' "$out"
}

failed=0 passed=0 skipped=0 n=0
for written in "${commands[@]}"; do
  n=$((n + 1))
  shown=$(echo "$written" | tr -s ' ')
  if [[ $written =~ scripts/(setup|test)\.sh ]]; then
    echo "SKIP  $shown  (scripts/setup.sh and scripts/test.sh: CI runs them)"
    skipped=$((skipped + 1))
    continue
  fi
  code=${written%%[[:space:]]#*}  # a trailing comment
  run=$(with_budget "$code")
  log="$scratch/.check_readme_$n.log"
  start=$SECONDS
  (cd "$scratch" && timeout "$timeout_s" bash -c "$run") </dev/null >"$log" 2>&1
  status=$?
  took=$((SECONDS - start))
  note=""
  [ "$run" != "$(echo "$code" | sed 's/[[:space:]]*$//')" ] && note=" [ran: $(echo "$run" | tr -s ' ')]"
  # `loom export --check` exits 1 on a build slower than the tuner's kernel
  # as well as on a wrong one: a time on a shared machine, after a small
  # budget, says nothing of whether the command runs as written, so a run
  # whose only complaints ("!! ...") are speed verdicts passes, noted.
  if [ $status -eq 1 ] && grep -q '^!! ' "$log" && ! grep '^!! ' "$log" | grep -vq 'slower by more than'; then
    note+=" [speed verdict only: $(grep -c '^!! ' "$log") build(s) slower than the tuner's kernel]"
    status=0
  fi
  if [ $status -eq 0 ]; then
    echo "PASS  $shown  (${took} s)$note"
    passed=$((passed + 1))
  else
    echo "FAIL  $shown  (exit $status after ${took} s)$note"
    tail -n 15 "$log" | sed 's/^/      | /'
    failed=$((failed + 1))
  fi
done
echo "check_readme: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
