"""The packaged VS Code extension (.vsix): what it holds, what it leaves out, and that its bundled
server runs on a bare interpreter. Packaging: scripts/package-vsix.sh (`npm run package`).

The .vsix is $GRADSIGHT_VSIX, or build/gradsight-<version>-linux-x64.vsix, rebuilt when older than its
sources (tests/e2e_vscode/vsix.py). Skipped where node/npm are missing, except in CI.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import struct
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
            "gradsight.trace.device", "gradsight.trace.memoryMb", "gradsight.diagnosticMode"} <= set(settings)
    assert settings["gradsight.diagnosticMode"]["enum"] == ["openFiles", "workspace"]
    assert settings["gradsight.diagnosticMode"]["default"] == "openFiles"
    # The Settings editor sorts by `order`: what people change most first, the launch plumbing last.
    ordered = sorted(settings, key=lambda key: settings[key]["order"])
    assert len({s["order"] for s in settings.values()}) == len(settings)
    assert ordered[:2] == ["gradsight.select", "gradsight.ignore"], ordered
    assert ordered[-1] == "gradsight.args", ordered
    # The server is started when a folder with Python files opens, before the first file is.
    assert "workspaceContains:**/*.py" in manifest["activationEvents"]
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


def test_icon(vsix: zipfile.ZipFile) -> None:
    manifest = json.loads(vsix.read("extension/package.json"))
    png = vsix.read(f"extension/{manifest['icon']}")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert width == height and width >= 128, (width, height)
    assert "Microsoft.VisualStudio.Services.Icons.Default" in vsix.read("extension.vsixmanifest").decode()


def test_readme_images_load(vsix: zipfile.ZipFile) -> None:
    """VS Code's extension page renders the README in a webview whose CSP allows only https: and data:
    images, and resolves nothing against the installed folder: a relative path shows a broken image
    (the e2e test checks that every image on the page loaded). So every image is an https URL of a file
    in this repository, the same bytes as the copy shipped in the .vsix."""
    readme = vsix.read("extension/readme.md").decode()
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)", readme) + re.findall(r'<img[^>]+src="([^"]+)"', readme)
    assert images
    prefix = "https://raw.githubusercontent.com/gradsight/gradsight/main/"
    for image in images:
        assert image.startswith(prefix), image
        relative = image[len(prefix):]
        assert (ROOT / relative).is_file(), relative
        assert vsix.read(f"extension/{relative}") == (ROOT / relative).read_bytes(), relative


def _interpreters() -> dict[str, str]:
    """An interpreter for each supported Python version on this machine: PATH, then pyenv (as the
    packaging script looks for them)."""
    found = {}
    for version in SUPPORTED_PYTHONS:
        dotted = f"{version[0]}.{version[1:]}"
        candidates = [shutil.which(f"python{dotted}") or ""]
        candidates += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{dotted}.*/bin/python{dotted}")))
        for candidate in filter(None, candidates):
            probe = subprocess.run([candidate, "-c", "import sys; print('%d%d' % sys.version_info[:2])"],
                                   capture_output=True, text=True)
            if probe.returncode == 0 and probe.stdout.strip() == version:
                found[version] = candidate
                break
    return found


def test_compiled_bytecode(vsix: zipfile.ZipFile, tmp_path: Path) -> None:
    """Every bundled module of the server has a pyc for each Python version available here, made by
    that version (its magic number) as an unchecked hash-based pyc (valid whatever mtimes the unpacked
    files get), and the interpreter really loads them instead of compiling."""
    interpreters = _interpreters()
    assert f"{sys.version_info[0]}{sys.version_info[1]}" in interpreters
    files = set(names(vsix))
    libs = "extension/bundled/libs/"
    sources = [n for n in files if n.startswith(libs + "gradsight/") and n.endswith(".py")]
    assert len(sources) > 20
    members = [n for n in files if n.startswith(libs)]
    vsix.extractall(tmp_path, members)
    for version, python in interpreters.items():
        magic = subprocess.run([python, "-c", "import importlib.util, sys; "
                                "sys.stdout.write(importlib.util.MAGIC_NUMBER.hex())"],
                               capture_output=True, text=True, check=True).stdout
        for source in sources:
            folder, name = source.rsplit("/", 1)
            pyc = f"{folder}/__pycache__/{name[:-3]}.cpython-{version}.pyc"
            assert pyc in files, pyc
            header = vsix.read(pyc)[:16]
            assert header[:4].hex() == magic, (pyc, header[:4].hex(), magic)
            assert struct.unpack("<I", header[4:8])[0] == 0b01, pyc  # hash-based, not checked against the source
        # The server's imports come from these pycs: `-v` says "code object from …pyc" for each, and
        # nothing needed compiling ("# wrote …" would say it did).
        libs_dir = tmp_path / "extension" / "bundled" / "libs"
        env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}
        env["PYTHONPATH"] = str(libs_dir)
        run = subprocess.run([python, "-S", "-v", "-c", "import gradsight.lsp.server"], env=env,
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-2000:]
        from_pyc = re.findall(rf"code object from '{re.escape(str(libs_dir))}/gradsight/[^']*\.cpython-{version}\.pyc'",
                              run.stderr)
        assert len(from_pyc) >= 10, (version, run.stderr[-2000:])
        assert not re.search(rf"# wrote '{re.escape(str(libs_dir))}", run.stderr), version


def test_leaves_out_development_files(vsix: zipfile.ZipFile) -> None:
    for name in names(vsix):
        assert "node_modules/" not in name, name
        if "__pycache__" in name:  # only the compiled bytecode of the bundled libraries
            assert name.startswith("extension/bundled/libs/") and re.search(r"\.cpython-3\d+\.pyc$", name), name
        assert not name.startswith(("extension/tests/", "extension/client/src/", "extension/server/",
                                    "extension/scripts/", "extension/docs/", "extension/.venv/")), name
        assert not name.endswith((".ts", ".map", ".vsix")), name


def test_bundled_server_runs_on_a_bare_interpreter(vsix: zipfile.ZipFile, tmp_path: Path) -> None:
    """With only the bundled libraries (no site-packages), the engine finds the bug the e2e test uses."""
    members = [n for n in names(vsix) if n.startswith("extension/bundled/libs/")]
    vsix.extractall(tmp_path, members)
    libs = tmp_path / "extension" / "bundled" / "libs"
    # A one-file version of the e2e workspace's bug (the CLI analyses files one at a time).
    script = tmp_path / "train.py"
    script.write_text("import numpy as np\nimport torch\nimport torch.nn as nn\n\n"
                      "net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))\n"
                      "batch = torch.randn(6, 3)\npred = net(batch)\n"
                      "histogram = np.histogram(pred.numpy(), bins=3)\n")
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}
    env["PYTHONPATH"] = str(libs)
    # Every Python found here (3.10 needs the bundled exceptiongroup and tomli backports).
    for python in _interpreters().values():
        # -S: no site-packages, so nothing but the stdlib and bundled/libs can be imported.
        probe = subprocess.run([python, "-S", "-c", "import gradsight.lsp.server, libcst.native, pygls, jedi"],
                               env=env, capture_output=True, text=True)
        assert probe.returncode == 0, (python, probe.stderr)
        check = subprocess.run([python, "-S", "-m", "gradsight", "check", str(script)], env=env,
                               capture_output=True, text=True, cwd=tmp_path)
        assert re.search(r"train\.py:8:\d+: GS2\d\d", check.stdout), (python, check.stdout + check.stderr)
