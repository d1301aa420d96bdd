"""Real editors, headless: Neovim 0.7 (built-in client) and Emacs 28 + eglot 1.9 (Debian packages).

Each opens the numpy seed case, waits for gradsight's diagnostic, asks for a hover on `pred` and
prints both; the assertions are on what the editor itself received and shows. `scripts/install-editors.sh`
installs the editors (CI runs it first); without them these tests are skipped.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent
SEED = pathlib.Path("/work/shared/seed-cases/cases/extra_numpy_on_grad_tensor.py")
CASE = """\
import numpy as np
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
batch = torch.randn(6, 3)
pred = net(batch)
histogram = np.histogram(pred.numpy(), bins=3)
print(histogram)
"""

pytestmark = pytest.mark.editor


@pytest.fixture
def case(tmp_path: pathlib.Path) -> pathlib.Path:
    target = tmp_path / "extra_numpy_on_grad_tensor.py"
    if SEED.is_file():
        shutil.copyfile(SEED, target)
    else:
        target.write_text(CASE, encoding="utf-8")
    return target


def _run(cmd: list[str], env: dict[str, str], cwd: pathlib.Path) -> str:
    proc = subprocess.run(cmd, env={**os.environ, **env}, cwd=cwd, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    return out


@pytest.mark.skipif(shutil.which("nvim") is None, reason="Neovim is not installed (scripts/install-editors.sh)")
def test_neovim(case: pathlib.Path):
    out = _run(["nvim", "--headless", "--clean", "-u", "NONE", "-c", f"luafile {HERE / 'gradsight_nvim.lua'}"],
               {"GS_PY": sys.executable, "GS_FILE": str(case), "GS_LINE": "7", "GS_COL": "26"}, case.parent)
    diag = next(line for line in out.splitlines() if line.startswith("DIAG 7:25"))
    assert "src=gradsight" in diag and "code=GS201" in diag and "sev=1" in diag and "NumPy" in diag
    hover = next(line for line in out.splitlines() if line.startswith("HOVER "))
    assert "requires grad" in hover and "GS201" in hover and f"{case.as_uri()}#L7" in hover
    actions = [line[len("ACTION "):] for line in out.splitlines() if line.startswith("ACTION ")]
    assert "Use `.detach().numpy()`" in actions and "Ignore GS201 on this line" in actions


@pytest.mark.skipif(shutil.which("emacs") is None or not pathlib.Path("/usr/share/emacs/site-lisp/elpa").exists(),
                    reason="Emacs + eglot are not installed (scripts/install-editors.sh)")
def test_emacs_eglot(case: pathlib.Path):
    out = _run(["emacs", "--batch", "-Q", "-l", str(HERE / "gradsight_eglot.el")],
               {"GS_PY": sys.executable, "GS_FILE": str(case), "GS_LINE": "8", "GS_COL": "26"}, case.parent)
    diag = next(line for line in out.splitlines() if line.startswith("DIAG line=8"))
    assert "eglot-error" in diag and "GS201" in diag and "NumPy" in diag
    hover = next(line for line in out.splitlines() if line.startswith("HOVER "))
    assert "requires grad" in hover and "Fix: Use `.detach().numpy()` (safe fix)" in hover
