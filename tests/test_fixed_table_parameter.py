"""GS522: a trainable `nn.Parameter` filled with a sin/cos table made in another workspace file (MONAI's and MAE's
shape: `pos_embed_utils.build_sincos_position_embedding`, numpy helpers three calls deep), checked on a temporary
project folder; under torch the optimizer moves the table."""

import subprocess
import sys

from gradsight.analysis import analyze_source
from gradsight.engine.workspace import Workspace

UTILS = """import numpy as np


def get_1d_sincos(dim, pos):
    omega = 1.0 / 10000 ** (np.arange(dim // 2, dtype=np.float64) / (dim / 2.0))
    out = np.einsum("m,d->md", pos.reshape(-1), omega)
    return np.concatenate([np.sin(out), np.cos(out)], axis=1)


def get_2d_sincos_from_grid(dim, grid):
    return np.concatenate([get_1d_sincos(dim // 2, grid[0]), get_1d_sincos(dim // 2, grid[1])], axis=1)


def get_2d_sincos(dim, size):
    grid = np.stack(np.meshgrid(np.arange(size, dtype=np.float32), np.arange(size, dtype=np.float32)), axis=0)
    return get_2d_sincos_from_grid(dim, grid.reshape(2, 1, size, size))


def load_vectors(n, dim):
    return np.ones((n, dim))
"""

MODEL = """import torch
import torch.nn as nn

from .pos_utils import get_2d_sincos, load_vectors


class PatchEmbed(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.pos_embed = nn.Parameter(torch.zeros(1, 16, 8))
        self.initialize_weights()

    def initialize_weights(self):
        pos_embed = get_2d_sincos(self.pos_embed.shape[-1], 4)
        self.pos_embed.data.copy_(torch.from_numpy(pos_embed).float().unsqueeze(0))
        FREEZE

    def forward(self, x):
        return self.proj(x + self.pos_embed)


class WordEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Parameter(torch.zeros(10, 8))
        self.emb.data.copy_(torch.from_numpy(load_vectors(10, 8)).float())

    def forward(self, i):
        return self.emb[i]
"""

RUN = """import torch

from pkg.model import PatchEmbed
from pkg.pos_utils import get_2d_sincos

m = PatchEmbed()
opt = torch.optim.SGD(m.parameters(), lr=0.1)
m(torch.randn(2, 16, 8)).pow(2).sum().backward()
opt.step()
table = torch.from_numpy(get_2d_sincos(8, 4)).float().unsqueeze(0)
print("MOVED" if not torch.equal(m.pos_embed.data, table) else "KEPT")
"""


def make(tmp_path, freeze: bool):
    model = MODEL.replace("FREEZE", "self.pos_embed.requires_grad = False" if freeze else "pass")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "pos_utils.py").write_text(UTILS)
    (tmp_path / "pkg" / "model.py").write_text(model)
    (tmp_path / "run.py").write_text(RUN)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'ws'\n")
    return model, str(tmp_path / "pkg" / "model.py")


def gs522(text, path, ws):
    return [(f.line, f.message) for f in analyze_source(text, path, workspace=ws).findings if f.code == "GS522"]


def run(tmp_path):
    proc = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    return proc.stdout + proc.stderr


def test_table_made_in_another_file_is_trained(tmp_path):
    text, path = make(tmp_path, freeze=False)
    found = gs522(text, path, Workspace(tmp_path))
    assert [line for line, _ in found] == [16], found
    assert "`self.pos_embed` is filled with a fixed sin/cos table" in found[0][1]
    assert "MOVED" in run(tmp_path)


def test_frozen_table_and_loaded_vectors_are_quiet(tmp_path):
    text, path = make(tmp_path, freeze=True)
    assert gs522(text, path, Workspace(tmp_path)) == []
    assert "KEPT" in run(tmp_path)
