#!/usr/bin/env bash
# Installs code-server 4.100.3 (= VS Code 1.100.3, the last release that runs on Node 20) for the
# real-VS-Code end-to-end test (tests/e2e_vscode). Works offline except for the npm registry and apt.
#
# Cached: it installs into $GRADSIGHT_EDITORS_DIR (default ~/.cache/gradsight-editors)/code-server-4.100.3
# and does nothing when a finished install is there, so CI reruns reuse it (cache that directory).
# Prints the path of the code-server executable on its last line.
#
# Why not plain `npm install code-server`: its postinstall refuses to run as root without
# --unsafe-perm (npm 11 no longer knows that flag), downloads ripgrep from GitHub and runs `npx
# node-gyp` (blocked by `yes=false`). So we install with --ignore-scripts and replay its postinstall.sh
# by hand (recipe and measurements: docs/vscode.md, "How the end-to-end test works").
set -euo pipefail

VERSION=4.100.3
CACHE=${GRADSIGHT_EDITORS_DIR:-$HOME/.cache/gradsight-editors}
DEST=$CACHE/code-server-$VERSION
BIN=$DEST/node_modules/.bin/code-server

if [ -f "$DEST/.installed" ] && [ -x "$BIN" ]; then
  echo "install-code-server: code-server $VERSION already installed"
  echo "$BIN"
  exit 0
fi

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" != 20 ]; then
  echo "install-code-server: code-server $VERSION needs Node 20, found $(node --version)" >&2
  exit 1
fi

# Build prerequisites: kerberos needs gssapi headers; ripgrep replaces @vscode/ripgrep's GitHub download.
missing=()
[ -e /usr/include/gssapi/gssapi.h ] || missing+=(libkrb5-dev)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then SUDO=(); elif sudo -n true 2>/dev/null; then SUDO=(sudo -n); else
    echo "install-code-server: need root or passwordless sudo to install ${missing[*]}" >&2; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=300 update -qq
  "${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}"
fi

export npm_config_yes=true             # node-pty's install script runs `npx node-gyp`
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
# Node headers for node-gyp without a download (nodesource's Node ships them under /usr/include/node).
if [ -z "${npm_config_nodedir:-}" ]; then
  nodedir=$(dirname "$(dirname "$(command -v node)")")
  [ -f "$nodedir/include/node/node_version.h" ] && export npm_config_nodedir=$nodedir
fi

mkdir -p "$CACHE"
WORK=$(mktemp -d "$CACHE/.code-server-$VERSION.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
echo '{"name":"gradsight-code-server","version":"1.0.0","private":true}' > package.json
npm install "code-server@$VERSION" --no-audit --no-fund --ignore-scripts --loglevel=error
npm rebuild argon2 --foreground-scripts --loglevel=error   # prebuilt download fails offline -> source build

cd node_modules/code-server/lib/vscode
npm install --omit=dev --no-audit --no-fund --ignore-scripts --loglevel=error
mkdir -p node_modules/@vscode/ripgrep/bin                   # an existing bin/ makes its postinstall a no-op
ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
npm rebuild --foreground-scripts --loglevel=error           # node-pty, spdlog, kerberos, watchers, ...
ln -sfn node_modules node_modules.asar
(cd bin/remote-cli && ln -sf code-linux.sh code-server)
(cd bin/helpers && ln -sf browser-linux.sh browser.sh)
(cd extensions && npm install --omit=dev --no-audit --no-fund --foreground-scripts --loglevel=error)

cd "$WORK"
# `--version` writes a config file unless told where: keep it inside the scratch dir.
XDG_CONFIG_HOME=$WORK/.xdg XDG_DATA_HOME=$WORK/.xdg node_modules/.bin/code-server --version
rm -rf "$WORK/.xdg"
touch .installed
rm -rf "$DEST"
mv "$WORK" "$DEST"
trap - EXIT
echo "$BIN"
