#!/bin/bash
# Interleaved speed comparison of this tree against an older commit (docs/performance.md, "Fifth session").
#   bench/compare_trees.sh REV OUTDIR [ROUNDS]
# Extracts REV's server/ and bench/ into a temporary folder, then runs, alternating old and new ROUNDS times
# (default 2): bench_break_dict.py, bench_typing.py, bench_long_script.py --rounds 2, and
# `gradsight check --no-cache --jobs 1` on the first 60 timm model files (CPU from /usr/bin/time, twice).
# Prints nothing itself: read OUTDIR/{break,typing,long,timm}.txt. Run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
REV=$1; O=$2; ROUNDS=${3:-2}
mkdir -p "$O"
OLD=$(mktemp -d)
trap 'rm -rf "$OLD"' EXIT
git archive "$REV" server bench | tar -x -C "$OLD"
ln -sfn "$PWD/bench/.corpus" "$OLD/bench/.corpus"
FILES=$(cd bench/.corpus/timm/timm/models && ls *.py | head -60 | sed 's#^#bench/.corpus/timm/timm/models/#')
for round in $(seq "$ROUNDS"); do
  for which in old new; do
    if [ "$which" = old ]; then B=$OLD; else B=$PWD; fi
    for bench in break typing long timm; do echo "== $which round $round" >> "$O/$bench.txt"; done
    PYTHONPATH=$B/server .venv/bin/python "$B/bench/bench_break_dict.py" >> "$O/break.txt" 2>&1
    PYTHONPATH=$B/server .venv/bin/python "$B/bench/bench_typing.py" >> "$O/typing.txt" 2>&1
    PYTHONPATH=$B/server .venv/bin/python "$B/bench/bench_long_script.py" --rounds 2 >> "$O/long.txt" 2>&1
    for k in 1 2; do
      # shellcheck disable=SC2086
      /usr/bin/time -f "%U %S %e" env PYTHONPATH=$B/server .venv/bin/python -m gradsight check --no-cache --jobs 1 \
        --exit-zero $FILES > /dev/null 2>> "$O/timm.txt"
    done
  done
done
