"""The pre-commit hook (.pre-commit-hooks.yaml) and the GitHub Action (action.yml), run for real:
the hook through `pre-commit try-repo` on a temporary git repository, the action's step commands in bash."""

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = pathlib.Path(sys.executable).parent
BUG = "import torch\nx = torch.randn(3, requires_grad=True)\ng = torch.sigmoid(x)\ng *= 2.0\ng.sum().backward()\n"
CLEAN = "import torch\nx = torch.randn(3, requires_grad=True)\n(x * 2).sum().backward()\n"


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


def _git_repo(path: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    path.mkdir()
    for name, text in files.items():
        (path / name).write_text(text)
    for cmd in (["init", "-q"], ["add", "."]):
        subprocess.run(["git", *cmd], cwd=path, check=True, capture_output=True)
    return path


def _pre_commit() -> str:
    exe = shutil.which("pre-commit", path=str(BIN)) or shutil.which("pre-commit")
    if exe is None:
        pytest.skip("pre-commit is not installed (it is in the test extras)")
    if not (ROOT / ".git").exists():
        pytest.skip("pre-commit try-repo needs this checkout to be a git repository")
    return exe


def test_hook_manifest_is_valid_and_runs_gradsight_check():
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert hooks["gradsight"]["entry"].startswith("gradsight check")
    assert hooks["gradsight"]["language"] == "python"
    assert hooks["gradsight-system"]["language"] == "system"
    exe = shutil.which("pre-commit", path=str(BIN)) or shutil.which("pre-commit")
    if exe:
        proc = subprocess.run([exe, "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")], capture_output=True,
                              text=True, env=_env())
        assert proc.returncode == 0, proc.stdout + proc.stderr


def _try_repo(hook: str, tmp_path: pathlib.Path, files: dict[str, str], home: pathlib.Path):
    repo = _git_repo(tmp_path / f"proj-{hook}-{len(files)}", files)
    return subprocess.run([_pre_commit(), "try-repo", str(ROOT), hook, "--all-files"], cwd=repo, capture_output=True,
                          text=True, env=_env(PRE_COMMIT_HOME=str(home)), timeout=900)


def test_system_hook_fails_a_commit_with_findings_and_passes_a_clean_one(tmp_path):
    proc = _try_repo("gradsight-system", tmp_path, {"bug.py": BUG, "notes.txt": "x"}, tmp_path / "home")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "bug.py:4:1: GS301" in proc.stdout and "Failed" in proc.stdout
    proc = _try_repo("gradsight-system", tmp_path, {"clean.py": CLEAN}, tmp_path / "home")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Passed" in proc.stdout


@pytest.mark.slow
def test_python_hook_builds_its_own_environment(tmp_path):
    # language: python makes pre-commit pip-install this repository into a fresh virtualenv; on this machine that
    # works offline because pip is configured with a local index (see docs/cli.md).
    proc = _try_repo("gradsight", tmp_path, {"bug.py": BUG}, tmp_path / "home")
    if "Could not find a version" in proc.stdout + proc.stderr or "ConnectionError" in proc.stdout + proc.stderr:
        pytest.skip("no package index reachable to build the hook's virtualenv")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "bug.py:4:1: GS301" in proc.stdout


# ---------------------------------------------------------------- the GitHub Action
def _action():
    return yaml.safe_load((ROOT / "action.yml").read_text())


def _resolve(value: str, inputs: dict[str, str], action_path: str) -> str:
    def sub(m):
        expr = m.group(1).strip()
        if expr.startswith("inputs."):
            return inputs[expr[len("inputs."):]]
        if expr == "github.action_path":
            return action_path
        raise AssertionError(f"unexpected expression {expr}")
    return re.sub(r"\$\{\{(.*?)\}\}", sub, str(value))


def _run_step(name: str, inputs: dict[str, str], cwd: pathlib.Path, path_prefix: str = ""):
    action = _action()
    defaults = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    step = next(s for s in action["runs"]["steps"] if s.get("name") == name)
    assert step["shell"] == "bash"
    env = _env(**{k: _resolve(v, {**defaults, **inputs}, str(ROOT)) for k, v in step.get("env", {}).items()})
    if path_prefix:
        env["PATH"] = f"{path_prefix}{os.pathsep}{env['PATH']}"
    return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=300)


def test_action_is_a_composite_with_the_documented_inputs():
    action = _action()
    assert action["runs"]["using"] == "composite"
    assert {"args", "version", "path", "python-version"} <= set(action["inputs"])
    run_step = next(s for s in action["runs"]["steps"] if s.get("name") == "Run gradsight")
    assert run_step["run"].startswith("gradsight check --output-format github")


def test_action_run_step_reports_annotations_and_fails_on_findings(tmp_path):
    (tmp_path / "bug.py").write_text(BUG)
    (tmp_path / "clean.py").write_text(CLEAN)
    proc = _run_step("Run gradsight", {"args": "--no-cache ."}, tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("::warning title=gradsight GS301,file=bug.py,line=4,col=1,")
    proc = _run_step("Run gradsight", {"args": "--no-cache clean.py"}, tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""


def test_action_install_step_chooses_version_path_or_checkout(tmp_path):
    # A stand-in python3 records the pip command line instead of installing anything.
    stub = tmp_path / "stub"
    stub.mkdir()
    log = tmp_path / "pip.log"
    (stub / "python3").write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    (stub / "python3").chmod(0o755)
    assert _run_step("Install gradsight", {"version": "0.1.0"}, tmp_path, str(stub)).returncode == 0
    assert _run_step("Install gradsight", {"path": "/src/gradsight"}, tmp_path, str(stub)).returncode == 0
    assert _run_step("Install gradsight", {}, tmp_path, str(stub)).returncode == 0
    lines = log.read_text().splitlines()
    assert lines[0].endswith("install --disable-pip-version-check gradsight==0.1.0")
    assert lines[1].endswith("install --disable-pip-version-check /src/gradsight")
    assert lines[2].endswith(f"install --disable-pip-version-check {ROOT}")
    # "none" uses the gradsight on PATH and installs nothing.
    proc = _run_step("Install gradsight", {"path": "none"}, tmp_path, str(stub))
    assert proc.returncode == 0 and proc.stdout.strip().endswith("gradsight")
    assert len(log.read_text().splitlines()) == 3
