"""The VS Code extension in a real VS Code: code-server 4.100.3 in headless Chromium, driven by drive.js.

The test installs the packaged .vsix into a fresh code-server, opens `workspace/train.py` (a
training script whose `pred.numpy()` raises because `pred` requires grad) and checks what a person
sees: the squiggle, the hover, the Problems panel, the autograd trace (run from the command palette
after switching `gradsight.interpreter`, which restarts the server), the quick fix, the status bar
item. Screenshots go to test-artifacts/vscode/.

The server is the real one, `python -m gradsight lsp` from the extension's bundled libraries, started
with the default interpreter (`python3`, with this test's virtual environment taken off PATH), since
code-server has no Python extension: the same fallback a user without it gets.

Editors come from scripts/install-chromium.sh and scripts/install-code-server.sh (idempotent and
cached; .ci/run runs them first). Where they cannot run (no root, no network) the test is skipped,
except in CI (`CI=true`), where that is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from e2e_vscode.vsix import packaged_vsix

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
ARTIFACTS = ROOT / "test-artifacts" / "vscode"
IN_CI = os.environ.get("CI", "").lower() == "true"

pytestmark = [pytest.mark.editor, pytest.mark.slow]


def _unavailable(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: the editors must be installable here)")
    pytest.skip(reason)


def _run_install(script: str) -> str:
    proc = subprocess.run(["bash", str(ROOT / "scripts" / script)], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)
    if proc.returncode != 0:
        _unavailable(f"scripts/{script} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""


@pytest.fixture(scope="module")
def code_server() -> Path:
    if shutil.which("node") is None:
        _unavailable("node is not installed")
    _run_install("install-chromium.sh")
    path = Path(_run_install("install-code-server.sh"))
    if not path.exists():
        _unavailable(f"install-code-server.sh printed no executable ({path})")
    return path


@pytest.fixture(scope="module")
def vsix() -> Path:
    return packaged_vsix()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _user_env(home: Path) -> dict[str, str]:
    """An environment like a user's: nothing of this test's virtualenv, every config dir private."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
    venv_bin = str(Path(sys.prefix) / "bin")
    if sys.prefix != sys.base_prefix:
        env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        env[name] = str(home / name.lower())
    return env


def _torch_python() -> str:
    """This interpreter if it has torch (the trace needs it), else '' (the trace step is skipped)."""
    probe = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True)
    return sys.executable if probe.returncode == 0 else ""


BASE_SETTINGS = {
    "workbench.startupEditor": "none",
    "telemetry.telemetryLevel": "off",
    "extensions.autoUpdate": False,
    "extensions.autoCheckUpdates": False,
    "update.mode": "none",
    "workbench.tips.enabled": False,
    "workbench.enableExperiments": False,
    "editor.hover.delay": 100,
    "files.autoSave": "off",  # desktop VS Code's default (VS Code in a browser saves after a delay)
    "editor.inlayHints.enabled": "on",
    "gradsight.logLevel": "debug",
}


def test_vscode_end_to_end(code_server: Path, vsix: Path, tmp_path: Path) -> None:
    """First squiggle (timed), Problems panel, hover link into another file, interpreter switch + trace
    with its notification and a confirmed finding, quick fix, output channel, extension page."""
    run_scenario("main", code_server, vsix, tmp_path, trusted=True)
    for name in ("01-diagnostic", "02-problems", "03-hover-other-file", "08-quick-fix-menu", "09-fixed",
                 "10-output", "11-extension-page"):
        assert (ARTIFACTS / f"main-{name}.png").stat().st_size > 10_000, name


def test_vscode_restricted_mode(code_server: Path, vsix: Path, tmp_path: Path) -> None:
    """An untrusted workspace: its own interpreter setting is ignored, the bundled server still analyses,
    and the trace command is not offered."""
    run_scenario("restricted", code_server, vsix, tmp_path, trusted=False,
                 workspace_settings={"gradsight.interpreter": ["/nonexistent/python"]})
    assert (ARTIFACTS / "restricted-01-diagnostic.png").stat().st_size > 10_000


def test_vscode_workspace_diagnostics(code_server: Path, vsix: Path, tmp_path: Path) -> None:
    """`gradsight.diagnosticMode: workspace`: problems of files nobody opened reach the Problems panel."""
    run_scenario("workspace", code_server, vsix, tmp_path, trusted=True,
                 workspace_settings={"gradsight.diagnosticMode": "workspace"})
    assert (ARTIFACTS / "workspace-01-problems.png").stat().st_size > 10_000


def run_scenario(scenario: str, code_server: Path, vsix: Path, tmp_path: Path, *, trusted: bool,
                 workspace_settings: dict | None = None) -> None:
    timings: dict[str, float] = {}
    env = _user_env(tmp_path / "home")
    user_data, extensions = tmp_path / "user-data", tmp_path / "extensions"
    workspace = tmp_path / "workspace"
    shutil.copytree(HERE / "workspace", workspace)
    if workspace_settings:
        (workspace / ".vscode").mkdir()
        (workspace / ".vscode" / "settings.json").write_text(json.dumps(workspace_settings))
    (user_data / "User").mkdir(parents=True)
    # Untrusted: trust on, and no prompt, so the folder opens in restricted mode.
    trust = ({"security.workspace.trust.enabled": False} if trusted else
             {"security.workspace.trust.enabled": True, "security.workspace.trust.startupPrompt": "never"})
    (user_data / "User" / "settings.json").write_text(json.dumps({**BASE_SETTINGS, **trust}, indent=2))
    port = _free_port()
    config = tmp_path / "code-server.yaml"
    config.write_text(f"bind-addr: 127.0.0.1:{port}\nauth: none\ncert: false\n")
    dirs = ["--user-data-dir", str(user_data), "--extensions-dir", str(extensions)]

    t0 = time.monotonic()
    install = subprocess.run([str(code_server), "--config", str(config), *dirs, "--install-extension", str(vsix)],
                             env=env, capture_output=True, text=True, timeout=120)
    timings["install extension"] = time.monotonic() - t0
    assert "successfully installed" in install.stdout, install.stdout + install.stderr

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob(f"{scenario}-*"):
        old.unlink()
    flags = ["--disable-telemetry", "--disable-update-check", "--disable-getting-started-override"]
    if trusted:
        flags.append("--disable-workspace-trust")
    server = subprocess.Popen([str(code_server), "--config", str(config), *dirs, *flags, str(workspace)],
                              env=env, stdout=(tmp_path / "code-server.log").open("w"), stderr=subprocess.STDOUT,
                              start_new_session=True)
    try:
        t0 = time.monotonic()
        _wait_healthy(port, server)
        timings["code-server ready"] = time.monotonic() - t0
        t0 = time.monotonic()
        drive = subprocess.run(
            ["node", str(HERE / "drive.js")], cwd=ROOT, capture_output=True, text=True, timeout=420,
            env={**env, "SCENARIO": scenario, "CS_URL": f"http://127.0.0.1:{port}", "WORKSPACE": str(workspace),
                 "OUT_DIR": str(ARTIFACTS), "USER_DATA_DIR": str(user_data),
                 "PROFILE_DIR": str(tmp_path / "chromium-profile"),
                 "TRACE_PYTHON": _torch_python() if trusted else ""})
        timings["scenario"] = time.monotonic() - t0
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        _keep_logs(scenario, tmp_path, user_data)
    print(drive.stdout)
    print("timings:", {k: round(v, 1) for k, v in timings.items()})
    assert drive.returncode == 0, f"{drive.stdout}\n{drive.stderr}\nscreenshots and logs: {ARTIFACTS}"


def _wait_healthy(port: int, server: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.poll() is None, "code-server exited; see test-artifacts/vscode/code-server.log"
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise AssertionError("code-server did not answer /healthz within a minute")


def _keep_logs(scenario: str, tmp_path: Path, user_data: Path) -> None:
    """Keeps code-server's log and the extension host's logs (gradsight's output channel among them)."""
    shutil.copy(tmp_path / "code-server.log", ARTIFACTS / f"{scenario}-code-server.log")
    for log in (user_data / "logs").rglob("*.log"):
        if any(part.startswith("exthost") for part in log.parts):
            shutil.copy(log, ARTIFACTS / f"{scenario}-{log.parent.name}-{log.name}")
