#!/usr/bin/env bash
# Create .venv (if missing) and install gradsight into it. Usage: scripts/setup-venv.sh [EXTRA]
#   EXTRA: "" (just gradsight) or "test" (gradsight plus everything the Python tests need, incl. torch==2.13.0).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
if [ -n "${1:-}" ]; then
  .venv/bin/python -m pip install --quiet -e ".[$1]"
else
  .venv/bin/python -m pip install --quiet -e .
fi
