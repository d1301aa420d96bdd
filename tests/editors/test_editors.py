"""Real editors, headless: Neovim 0.7 (built-in client) and Emacs 28 + eglot 1.9 (Debian packages).

Each opens the numpy seed case, waits for gradsight's diagnostic, asks for a hover on `pred` and
prints both; the assertions are on what the editor itself received and shows. `scripts/install-editors.sh`
installs the editors (CI runs it first); without them these tests are skipped.
"""

from __future__ import annotations

import os
import pathlib
import re
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
    # Neovim shows markdown links raw: the server sends it the words, not `[line 7](file://...#L7)`.
    assert "requires grad" in hover and "GS201" in hover and "line 7" in hover and "](" not in hover
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
    # eglot without markdown-mode asks for plain text: no markup at all.
    assert "requires grad" in hover and "Fix: Use .detach().numpy() (safe fix)" in hover
    assert "`" not in hover and "**" not in hover and "](" not in hover


DOCS = HERE.parent.parent / "docs" / "editors.md"
MODELS = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, x):
        return self.fc(x).relu()


weights = torch.randn(3, requires_grad=True)
print(weights.numpy())
"""
TRAIN = """\
import numpy as np
import torch
from models import Net

net = Net()
pred = net(torch.randn(6, 3))
print(pred.numpy())
"""


def documented_neovim_snippet() -> str:
    """The Neovim 0.7+ block of docs/editors.md, as users copy it."""
    text = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"```lua\n(.*?)```", text, re.S)
    (snippet,) = [b for b in blocks if b.startswith("-- gradsight for Neovim 0.7+")]
    return snippet


@pytest.mark.skipif(shutil.which("nvim") is None, reason="Neovim is not installed (scripts/install-editors.sh)")
def test_neovim_documented_snippet_one_server_per_root(tmp_path: pathlib.Path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n", encoding="utf-8")
    (project / "models.py").write_text(MODELS, encoding="utf-8")
    (project / "train.py").write_text(TRAIN, encoding="utf-8")
    snippet = tmp_path / "gradsight_init.lua"
    snippet.write_text(documented_neovim_snippet(), encoding="utf-8")
    version = subprocess.run(["nvim", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    # The snippet runs `gradsight lsp`: the command of this environment comes first on PATH.
    env = {"PATH": f"{pathlib.Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "GS_FILE_A": str(project / "train.py"), "GS_FILE_B": str(project / "models.py"),
           "GS_LINE": "5", "GS_COL": "1"}
    out = _run(["nvim", "--headless", "--clean", "-u", str(snippet), "-c",
                f"luafile {HERE / 'gradsight_nvim_root.lua'}"], env, project)
    assert "FAIL" not in out, out
    assert "CLIENTS 1" in out and "SERVERS 1" in out, f"{version}: {out}"
    assert f"ROOT {project}" in out and "ATTACHED 2" in out
    diags = [line for line in out.splitlines() if line.startswith("DIAG")]
    assert any(line.startswith(f"DIAG {project / 'train.py'} 6:") for line in diags)
    assert any(line.startswith(f"DIAG {project / 'models.py'} 14:") for line in diags), diags
    hover = next(line for line in out.splitlines() if line.startswith("HOVER "))
    # `pred` comes from models.py line 11: named with its file, no raw markdown link.
    assert "models.py line 11" in hover and "](" not in hover, hover
