#!/usr/bin/env bash
# Install the real editors the editor tests drive headless (tests/editors): Neovim (Debian: 0.7.2),
# Emacs without X and eglot (Debian: Emacs 28.2 + eglot 1.9). Idempotent: does nothing when all
# three are present. Needs apt (Debian/Ubuntu) and root or sudo. Used by CI before `pytest -m editor`.
set -euo pipefail

have_eglot() {
  compgen -G "/usr/share/emacs/site-lisp/elpa/eglot-*" >/dev/null 2>&1 ||
    emacs --batch -Q --eval "(progn (dolist (d (file-expand-wildcards \"/usr/share/emacs/site-lisp/elpa/*\")) (add-to-list 'load-path d)) (require 'eglot))" >/dev/null 2>&1
}

if command -v nvim >/dev/null 2>&1 && command -v emacs >/dev/null 2>&1 && have_eglot; then
  echo "install-editors: neovim, emacs and eglot are already installed"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-editors: apt-get not found; install neovim, emacs-nox and eglot by hand" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends neovim emacs-nox elpa-eglot

nvim --version | head -n 1
emacs --version | head -n 1
have_eglot && echo "install-editors: eglot available"
