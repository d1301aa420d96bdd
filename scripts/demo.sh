#!/usr/bin/env bash
# The main job on the bundled examples: install gradsight into .venv and check docs/examples.
# Exit code is gradsight's: 1, because the examples contain real autograd bugs (all but clean_training.py).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-venv.sh
.venv/bin/gradsight --version
.venv/bin/gradsight check docs/examples "$@"
