#!/usr/bin/env bash
# Installs Debian's Chromium, which the real-VS-Code end-to-end test drives through playwright-core
# (tests/e2e_vscode). Idempotent: does nothing when /usr/bin/chromium is already there.
# Needs root or passwordless sudo (apt-get). Never runs `playwright install`: the browser comes from Debian.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  echo "install-chromium: $(/usr/bin/chromium --version 2>/dev/null | tail -n 1) already installed"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
else
  echo "install-chromium: need root or passwordless sudo to apt-get install chromium" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-chromium: apt-get not found (this script supports Debian/Ubuntu only)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=300 update -qq
# fonts-dejavu-core: without any font the editor text renders as boxes in the screenshots.
"${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends chromium fonts-dejavu-core
/usr/bin/chromium --version 2>/dev/null | tail -n 1
