#!/bin/sh
# Replays the records of tests/data/tuned_records.jsonl (the best programs of
# tuned suite operators and network subgraphs) with this build and compares
# their loop nests with tests/data/tuned_records.nests.txt, written by an
# earlier build: a change that should not alter lowering (a refactor) must
# leave every nest byte-identical. `--update` rewrites the committed nests.
#   scripts/replay_nests.sh [--update] [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
update=0
if [ "${1:-}" = "--update" ]; then update=1; shift; fi
build=${1:-build}
records=tests/data/tuned_records.jsonl
expected=tests/data/tuned_records.nests.txt
if [ $update = 1 ]; then
  "$build/loom_replay_nests" "$records" > "$expected"
  echo "replay_nests: wrote $expected ($(grep -c '^== ' "$expected") programs)"
  exit 0
fi
actual=$(mktemp)
trap 'rm -f "$actual"' EXIT
"$build/loom_replay_nests" "$records" > "$actual"
if cmp -s "$expected" "$actual"; then
  echo "replay_nests: $(grep -c '^== ' "$actual") programs lower to the committed loop nests"
else
  echo "replay_nests: loop nests differ from $expected (first difference below)"
  diff "$expected" "$actual" | head -20
  exit 1
fi
