#!/usr/bin/env bash
# Every speed benchmark in one command (issue #6): installs gradsight into .venv, downloads and verifies
# the pinned corpus, then prints the CLI table (gradsight cold / cache fill / warm beside ruff, TorchFix,
# torch-preflight and the ast.parse floor, plus per-file latency percentiles), the language-server table
# (start, didOpen, didChange, hover, inlay hints, RSS with the whole corpus open) and the typing replay.
# Pass --quick for a smoke run (50 files, fewer repetitions). Nothing here asserts on a time.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-venv.sh
quick=()
if [[ "${1:-}" == "--quick" ]]; then quick=(--quick); fi
.venv/bin/python bench/corpus.py
.venv/bin/python bench/bench_check.py "${quick[@]}"
.venv/bin/python bench/bench_lsp.py "${quick[@]}"
.venv/bin/python bench/bench_typing.py
