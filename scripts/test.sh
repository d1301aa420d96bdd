#!/usr/bin/env bash
# Install everything the tests need and run every test:
#   - Python: .venv with gradsight + test extras (torch==2.13.0 CPU, pytest-lsp, hypothesis, ...)
#   - Real editors: Neovim and Emacs/eglot (Debian), code-server 4.100.3 + Debian chromium + playwright-core
#   - The VS Code extension (.vsix), built from this checkout
# Set GRADSIGHT_SKIP_EDITORS=1 to skip the editor installs (those tests then skip, except in CI).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-venv.sh test
if [ "${GRADSIGHT_SKIP_EDITORS:-0}" != 1 ]; then
  [ -x scripts/install-editors.sh ] && scripts/install-editors.sh
  [ -x scripts/install-chromium.sh ] && scripts/install-chromium.sh
  [ -x scripts/install-code-server.sh ] && scripts/install-code-server.sh
  if [ -f package.json ]; then
    npm ci --no-audit --no-fund >/dev/null 2>&1 || npm install --no-audit --no-fund >/dev/null
    npm run package
  fi
fi
PATH="$PWD/.venv/bin:$PATH" .venv/bin/python -m pytest -q "$@"
