#!/usr/bin/env bash
# Builds the VS Code extension into build/gradsight-<version>-<target>.vsix:
#   1. the TypeScript client, type-checked and bundled with esbuild into dist/extension.js;
#   2. bundled/libs: the gradsight server (this repository's Python package) and its dependencies,
#      pip-installed for every supported Python version (libcst and PyYAML have compiled modules; their
#      file names carry the Python version, e.g. native.cpython-312-x86_64-linux-gnu.so, so the copies for
#      3.10 ... 3.14 sit side by side and each interpreter imports its own);
#   3. vsce package --target <target>.
#
# Usage: scripts/package-vsix.sh [--target linux-x64]
#   targets: linux-x64 (default) linux-arm64 alpine-x64 alpine-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64
# Environment: PYTHON (interpreter whose pip builds bundled/libs; default .venv/bin/python, else python3),
#              GRADSIGHT_PY_VERSIONS (default "3.10 3.11 3.12 3.13 3.14").
# Prints the path of the .vsix on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=linux-x64
while [ $# -gt 0 ]; do
  case $1 in
    --target) TARGET=$2; shift 2 ;;
    --target=*) TARGET=${1#--target=}; shift ;;
    *) echo "usage: $0 [--target TARGET]" >&2; exit 2 ;;
  esac
done

# pip's platform tags for each VS Code target (pip expands manylinux2014 and macosx_* to the older tags).
case $TARGET in
  linux-x64)    PLATFORMS=(manylinux2014_x86_64 manylinux_2_28_x86_64) ;;
  linux-arm64)  PLATFORMS=(manylinux2014_aarch64 manylinux_2_28_aarch64) ;;
  alpine-x64)   PLATFORMS=(musllinux_1_2_x86_64 musllinux_1_1_x86_64) ;;
  alpine-arm64) PLATFORMS=(musllinux_1_2_aarch64 musllinux_1_1_aarch64) ;;
  darwin-x64)   PLATFORMS=(macosx_14_0_x86_64) ;;
  darwin-arm64) PLATFORMS=(macosx_14_0_arm64) ;;
  win32-x64)    PLATFORMS=(win_amd64) ;;
  win32-arm64)  PLATFORMS=(win_arm64) ;;
  *) echo "package-vsix: unsupported target $TARGET" >&2; exit 2 ;;
esac
PY_VERSIONS=(${GRADSIGHT_PY_VERSIONS:-3.10 3.11 3.12 3.13 3.14})
PYTHON=${PYTHON:-.venv/bin/python}
[ -x "$PYTHON" ] || PYTHON=python3
VERSION=$(node -p 'require("./package.json").version')
OUT=build/gradsight-$VERSION-$TARGET.vsix

[ -d node_modules ] || npm ci --no-audit --no-fund
npm run --silent typecheck
npm run --silent build -- --log-level=warning

SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
rm -rf bundled
mkdir -p bundled/libs build
pip_quiet=(--disable-pip-version-check --no-input --quiet)

# The server itself: pure Python, no dependencies here (they follow, per Python version).
"$PYTHON" -m pip wheel "${pip_quiet[@]}" --no-deps --wheel-dir "$SCRATCH/wheel" .
"$PYTHON" -m pip install "${pip_quiet[@]}" --no-compile --no-deps --target bundled/libs "$SCRATCH"/wheel/gradsight-*.whl

platform_args=()
for p in "${PLATFORMS[@]}"; do platform_args+=(--platform "$p"); done
for py in "${PY_VERSIONS[@]}"; do
  "$PYTHON" -m pip install "${pip_quiet[@]}" --no-compile --target "$SCRATCH/py$py" --only-binary=:all: \
    --implementation cp --python-version "$py" "${platform_args[@]}" -r client/bundled-requirements.txt
  # Pure-Python files are identical across versions; compiled ones differ by name. Never overwrite.
  cp -a -n "$SCRATCH/py$py/." bundled/libs/
done
rm -rf bundled/libs/bin
find bundled/libs -name __pycache__ -type d -prune -exec rm -rf {} +

# Compiled bytecode, so that the server's first start does not compile ~440 modules (seconds on a
# loaded machine) and works from a read-only extension folder. One __pycache__/*.cpython-3XX.pyc per
# Python version, made by that version's own interpreter (bytecode differs between versions, so no
# other interpreter can make it): each python3.X found on PATH or under pyenv. `unchecked-hash` pycs
# are used without comparing the source's mtime, which VS Code does not keep when it unpacks the .vsix.
# Tests and typeshed stubs are not compiled (never imported by the server).
compiled=()
for py in "${PY_VERSIONS[@]}"; do
  # pyenv's shims are on PATH for every version but run only the selected ones: ask each candidate.
  interp=
  for candidate in "$(command -v "python$py" 2>/dev/null || true)" \
                   ${PYENV_ROOT:-$HOME/.pyenv}/versions/"$py".*/bin/"python$py"; do
    if [ -x "$candidate" ] && [ "$("$candidate" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = "$py" ]; then
      interp=$candidate
      break
    fi
  done
  [ -n "$interp" ] || continue
  "$interp" -m compileall -q -j 0 --invalidation-mode unchecked-hash \
    -x '(/tests?/|/third_party/typeshed/|/test_[^/]*\.py$)' bundled/libs >/dev/null || true
  compiled+=("$py")
done
echo "package-vsix: bytecode for Python ${compiled[*]:-(none found)}" >&2

# --allow-package-all-secrets/--allow-package-env-file switch off vsce's secret scan: it takes ~45 ms a file,
# over 4 minutes for the ~6000 files of bundled/libs, which are pinned PyPI packages, not our code.
# README images are absolute https URLs already (VS Code's extension page loads no relative ones);
# relative links, if any, are rewritten by vsce against `repository` in package.json.
vsce_args=(--target "$TARGET" --no-dependencies --readme-path client/README.md
           --allow-package-all-secrets --allow-package-env-file --out "$OUT")
ls LICENSE* >/dev/null 2>&1 || vsce_args+=(--skip-license)
npx --no-install vsce package "${vsce_args[@]}" >&2
echo "$OUT"
