"""The packaged VS Code extension (.vsix): what it holds, what it leaves out, and that its bundled
server runs on a bare interpreter. Packaging: scripts/package-vsix.sh (`npm run package`).

The .vsix is $GRADSIGHT_VSIX, or build/gradsight-<version>-linux-x64.vsix, rebuilt when older than its
sources (tests/e2e_vscode/vsix.py). Skipped where node/npm are missing, except in CI.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from e2e_vscode.vsix import ROOT, packaged_vsix

SUPPORTED_PYTHONS = ("310", "311", "312", "313", "314")


@pytest.fixture(scope="module")
def vsix() -> zipfile.ZipFile:
    if shutil.which("npm") is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("npm is missing (CI=true)")
        pytest.skip("npm is not installed")
    with zipfile.ZipFile(packaged_vsix()) as archive:
        yield archive


def names(vsix: zipfile.ZipFile) -> list[str]:
    return vsix.namelist()


def test_manifest(vsix: zipfile.ZipFile) -> None:
    manifest = json.loads(vsix.read("extension/package.json"))
    source = json.loads((ROOT / "package.json").read_text())
    assert (manifest["name"], manifest["publisher"]) == ("gradsight", "gradsight")
    assert manifest["displayName"] == "gradsight — autograd hints for PyTorch"
    assert manifest["main"] == "./dist/extension.js"
    assert manifest["contributes"] == source["contributes"]
    commands = {c["command"] for c in manifest["contributes"]["commands"]}
    assert commands == {"gradsight.restart", "gradsight.showOutput", "gradsight.runTraceForFile", "gradsight.fixAllSafe"}
    settings = manifest["contributes"]["configuration"]["properties"]
    assert {"gradsight.interpreter", "gradsight.importStrategy", "gradsight.path", "gradsight.args",
            "gradsight.logLevel", "gradsight.showNotifications", "gradsight.select", "gradsight.ignore",
            "gradsight.severity", "gradsight.inlayHints", "gradsight.trace.timeout", "gradsight.trace.maxSteps",
            "gradsight.trace.device", "gradsight.trace.memoryMb"} <= set(settings)
    trust = manifest["capabilities"]["untrustedWorkspaces"]
    assert trust["supported"] == "limited"
    assert set(trust["restrictedConfigurations"]) == {"gradsight.interpreter", "gradsight.path",
                                                      "gradsight.importStrategy", "gradsight.args"}
    xml = vsix.read("extension.vsixmanifest").decode()
    assert 'TargetPlatform="linux-x64"' in xml


def test_client_bundle(vsix: zipfile.ZipFile) -> None:
    bundle = vsix.read("extension/dist/extension.js").decode()
    # esbuild inlined the dependencies: only `vscode` (and Node built-ins) are required at run time.
    assert not re.search(r'require\("vscode-languageclient', bundle)
    assert "gradsight.runTrace" in bundle and "gradsight.fixAll" in bundle


def test_bundled_server_libraries(vsix: zipfile.ZipFile) -> None:
    files = set(names(vsix))
    libs = "extension/bundled/libs/"
    for module in ("gradsight/__init__.py", "gradsight/lsp/server.py", "pygls/__init__.py", "lsprotocol/types.py",
                   "cattrs/__init__.py", "jedi/__init__.py", "libcst/__init__.py"):
        assert libs + module in files, module
    # libcst's compiled parser for every supported Python version, side by side.
    natives = {m.group(1) for n in files if (m := re.match(rf"{libs}libcst/native\.cpython-(\d+)-x86_64-linux-gnu\.so$", n))}
    assert natives >= set(SUPPORTED_PYTHONS)
    # The bundled gradsight is this checkout's.
    for rel in ("gradsight/lsp/server.py", "gradsight/config.py"):
        assert vsix.read(libs + rel) == (ROOT / "server" / rel).read_bytes(), rel


def test_readme_and_screenshot(vsix: zipfile.ZipFile) -> None:
    readme = vsix.read("extension/readme.md").decode()
    assert readme == (ROOT / "client" / "README.md").read_text()
    for image in re.findall(r"!\[[^\]]*\]\(([^)\s]+)", readme):
        assert f"extension/{image}" in names(vsix), image


def test_leaves_out_development_files(vsix: zipfile.ZipFile) -> None:
    for name in names(vsix):
        assert "node_modules/" not in name, name
        assert "__pycache__" not in name, name
        assert not name.startswith(("extension/tests/", "extension/client/src/", "extension/server/",
                                    "extension/scripts/", "extension/docs/", "extension/.venv/")), name
        assert not name.endswith((".ts", ".map", ".vsix")), name


def test_bundled_server_runs_on_a_bare_interpreter(vsix: zipfile.ZipFile, tmp_path: Path) -> None:
    """With only the bundled libraries (no site-packages), the engine finds the bug the e2e test uses."""
    members = [n for n in names(vsix) if n.startswith("extension/bundled/libs/")]
    vsix.extractall(tmp_path, members)
    libs = tmp_path / "extension" / "bundled" / "libs"
    script = ROOT / "tests" / "e2e_vscode" / "workspace" / "train.py"
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}
    env["PYTHONPATH"] = str(libs)
    # -S: no site-packages, so nothing but the stdlib and bundled/libs can be imported.
    probe = subprocess.run([sys.executable, "-S", "-c", "import gradsight.lsp.server, libcst.native, pygls, jedi"],
                           env=env, capture_output=True, text=True)
    assert probe.returncode == 0, probe.stderr
    check = subprocess.run([sys.executable, "-S", "-m", "gradsight", "check", str(script)], env=env,
                           capture_output=True, text=True, cwd=tmp_path)
    assert re.search(r"train\.py:8:\d+: GS2\d\d", check.stdout), check.stdout + check.stderr
