"""GS445: an override in one workspace file returns a trained module's output with its graph where the base class
and its other subclasses, in another file, stop the gradient (d3rlpy's IQL shape: `DDPGBaseImpl.update_critic`
backwards a TD loss built from `self.compute_target(batch)`, DDPG's computes it under `torch.no_grad()`), checked
on a temporary project folder; under torch the caller's backward reaches the value function."""

import subprocess
import sys

from gradsight.analysis import analyze_source
from gradsight.engine.workspace import Workspace

BASE = """from abc import abstractmethod

import torch
import torch.nn as nn
import torch.nn.functional as F


class DDPGBaseImpl:
    def __init__(self):
        self._q_func = nn.Linear(4, 1)
        self._targ_q_func = nn.Linear(4, 1)
        self._build_critic_optim()

    def _build_critic_optim(self):
        self._critic_optim = torch.optim.SGD(self._q_func.parameters(), lr=0.1)

    @abstractmethod
    def compute_target(self, batch):
        pass

    def compute_critic_loss(self, batch, q_tpn):
        return F.mse_loss(self._q_func(batch["obs"]), batch["rew"] + 0.99 * q_tpn)

    def update_critic(self, batch):
        self._critic_optim.zero_grad()
        q_tpn = self.compute_target(batch)
        loss = self.compute_critic_loss(batch, q_tpn)
        loss.backward()
        self._critic_optim.step()
        return loss.item()


class DDPGImpl(DDPGBaseImpl):
    def compute_target(self, batch):
        with torch.no_grad():
            return self._targ_q_func(batch["next_obs"])


class TD3Impl(DDPGImpl):
    def compute_target(self, batch):
        with torch.no_grad():
            return self._targ_q_func(batch["next_obs"]).clamp(-10.0, 10.0)
"""

IQL = """import torch
import torch.nn as nn

from .ddpg_impl import DDPGBaseImpl


class IQLImpl(DDPGBaseImpl):
    def _build_critic_optim(self):
        self._value_func = nn.Linear(4, 1)
        q_func_params = list(self._q_func.parameters())
        v_func_params = list(self._value_func.parameters())
        self._critic_optim = torch.optim.SGD(q_func_params + v_func_params, lr=0.1)

    def compute_target(self, batch):
        BODY
"""

RUN = """import torch

from algos.iql_impl import IQLImpl

impl = IQLImpl()
impl.update_critic({"obs": torch.randn(8, 4), "rew": torch.randn(8, 1), "next_obs": torch.randn(8, 4)})
print("TRAINED" if impl._value_func.weight.grad is not None else "CONSTANT")
"""

GRAPH = "return self._value_func(batch[\"next_obs\"])"
NO_GRAD = "with torch.no_grad():\n            return self._value_func(batch[\"next_obs\"])"


def make(tmp_path, body: str):
    iql = IQL.replace("BODY", body)
    (tmp_path / "algos").mkdir()
    (tmp_path / "algos" / "__init__.py").write_text("")
    (tmp_path / "algos" / "ddpg_impl.py").write_text(BASE)
    (tmp_path / "algos" / "iql_impl.py").write_text(iql)
    (tmp_path / "run.py").write_text(RUN)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'ws'\n")
    return iql, str(tmp_path / "algos" / "iql_impl.py")


def gs445(text, path, ws):
    return [(f.line, f.message) for f in analyze_source(text, path, workspace=ws).findings if f.code == "GS445"]


def run(tmp_path):
    proc = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    return proc.stdout + proc.stderr


def test_override_in_another_file_keeps_the_graph(tmp_path):
    text, path = make(tmp_path, GRAPH)
    found = gs445(text, path, Workspace(tmp_path))
    assert [line for line, _ in found] == [15], found
    assert found[0][1].startswith("`compute_target()` returns `self._value_func`'s output with its graph")
    assert "both other implementations, e.g. at ddpg_impl.py line 34, compute it" in found[0][1]
    assert len(found[0][1].split(". ")[0]) <= 110
    assert "TRAINED" in run(tmp_path)


def test_override_under_no_grad_is_quiet(tmp_path):
    text, path = make(tmp_path, NO_GRAD)
    assert gs445(text, path, Workspace(tmp_path)) == []
    assert "CONSTANT" in run(tmp_path)


def test_base_file_is_quiet(tmp_path):
    make(tmp_path, GRAPH)
    path = tmp_path / "algos" / "ddpg_impl.py"
    assert gs445(path.read_text(), str(path), Workspace(tmp_path)) == []
