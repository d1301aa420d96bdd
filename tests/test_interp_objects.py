"""Instances of plain (non-nn.Module) classes: `Trainer`-style objects holding a model, an optimizer and tensors.
Their methods see the attributes `__init__` set, unless a method run since (or outside code) may have changed
them; classes gradsight cannot see whole (unknown bases, decorators) stay UNKNOWN."""

import textwrap

from gradsight import analysis
from gradsight.analysis import analyze_source


def _codes(src: str, name: str):
    analysis.ENGINE.units.clear()
    result = analyze_source(textwrap.dedent(src), f"/objects/{name}.py")
    assert not result.problems, result.problems
    return [(f.code, f.line) for f in result.findings if f.severity.rank >= 2]


def test_method_sees_attributes_from_init():
    src = """\
    import torch


    class Reg:
        def __init__(self, n):
            self.w = torch.zeros(n, requires_grad=True)

        def fit(self, x):
            for _ in range(3):
                (x @ self.w).sum().backward()
                self.w -= 0.1 * self.w.grad


    Reg(3).fit(torch.randn(4, 3))
    """
    assert _codes(src, "init_attrs") == [("GS302", 11)]


def test_attribute_changed_by_another_method_is_unknown():
    # `freeze()` replaces `self.w` with a tensor that does not require grad; after it ran, `fit` must not assume
    # the `__init__` value (that would claim the in-place update raises).
    src = """\
    import torch


    class Reg:
        def __init__(self, n):
            self.w = torch.zeros(n, requires_grad=True)

        def freeze(self):
            self.w = self.w.detach()

        def fit(self, x):
            self.w += x.sum()


    r = Reg(3)
    r.freeze()
    r.fit(torch.randn(4, 3))
    """
    assert _codes(src, "changed_attr") == []


def test_attribute_assigned_from_outside_is_unknown():
    src = """\
    import torch


    class Reg:
        def __init__(self, n):
            self.w = torch.zeros(n, requires_grad=True)

        def fit(self, x):
            self.w += x.sum()


    r = Reg(3)
    r.w = torch.zeros(3)
    r.fit(torch.randn(4, 3))
    """
    assert _codes(src, "outside_assign") == []


def test_object_handed_to_other_code_is_unknown_afterwards():
    src = """\
    import torch


    class Reg:
        def __init__(self, n):
            self.w = torch.zeros(n, requires_grad=True)

        def fit(self, x):
            self.w += x.sum()


    def prepare(reg):
        reg.w = reg.w.detach()


    r = Reg(3)
    prepare(r)
    r.fit(torch.randn(4, 3))
    """
    assert _codes(src, "handed_on") == []


def test_unknown_base_class_stays_unknown():
    src = """\
    import torch
    from somewhere import Base


    class Reg(Base):
        def __init__(self, n):
            self.w = torch.zeros(n, requires_grad=True)

        def fit(self, x):
            self.w += x.sum()


    Reg(3).fit(torch.randn(4, 3))
    """
    assert _codes(src, "unknown_base") == []


def test_trainer_method_bug_found_through_module_level_driver():
    src = """\
    import torch
    import torch.nn as nn


    class GANTrainer:
        def __init__(self, G, D):
            self.G, self.D = G, D
            self.bce = nn.BCEWithLogitsLoss()

        def step(self, real):
            fake = self.G(torch.randn(4, 2))
            d_loss = self.bce(self.D(real), torch.ones(4, 1)) + self.bce(self.D(fake), torch.zeros(4, 1))
            d_loss.backward()
            g_loss = self.bce(self.D(fake), torch.ones(4, 1))
            g_loss.backward()


    t = GANTrainer(nn.Linear(2, 3), nn.Linear(3, 1))
    for real in torch.randn(2, 4, 3):
        t.step(real)
    """
    assert ("GS402", 15) in _codes(src, "gan")


def test_optimizer_owner_in_another_method_is_not_this_method_self():
    src = """\
    import torch
    import torch.nn as nn


    class Lit(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Linear(2, 2)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)


    m = Lit()
    opt = m.configure_optimizers()
    """
    assert _codes(src, "owner_frame") == []


def test_del_of_an_attribute_then_a_method_call_is_no_internal_error():
    # lucidrains' stylegan2/lightweight-gan trainers: `del self.GAN` then `self.init_GAN()` (the deleted key stayed
    # among the state's compound keys, and the method call's import of `self.*` raised KeyError).
    src = ("import torch.nn as nn\n\n\nclass Trainer:\n    def __init__(self):\n        self.GAN = None\n\n"
           "    def reset(self):\n        self.GAN = nn.Linear(2, 2)\n        del self.GAN\n        self.build()\n\n"
           "    def build(self):\n        self.GAN = nn.Linear(2, 2)\n\n\nt = Trainer()\nt.reset()\n")
    from gradsight.analysis import analyze_source

    result = analyze_source(src, "trainer.py")
    assert result.problems == [] and result.findings == []


SAC_FLAG = """\
import torch
import torch.nn as nn


class Agent(object):
    def __init__(self, auto_alpha=False):
        self.policy = nn.Linear(3, 1)
        self.alpha = 0.2
        self.auto_alpha = auto_alpha
        self.policy_optimizer = torch.optim.Adam(self.policy.parameters())
        if self.auto_alpha:
            self.log_alpha = torch.zeros(1, requires_grad=True)
            self.alpha_optimizer = torch.optim.Adam([self.log_alpha])

    def train_model(self):
        log_pi = self.policy(torch.randn(4, 3))
        policy_loss = (self.alpha * log_pi).mean()
        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()
        if self.auto_alpha:
            alpha_loss = -(self.log_alpha * log_pi.detach()).mean()
            self.alpha_optimizer.zero_grad()
            alpha_loss.backward()
            self.alpha_optimizer.step()
            self.alpha = self.log_alpha.exp()

    def run(self, steps):
        for _ in range(steps):
            self.train_model()
"""


def test_an_instance_flag_fixed_in_init_is_one_value_for_the_object(tmp_path):
    # dongminlee94's SAC: `self.alpha` is rebuilt from `log_alpha.exp()` only when `self.auto_alpha`, which only
    # `__init__` sets; joining an update that rebuilt it with one that did not gave a GS402 error before. Each
    # setting runs under torch without raising.
    import subprocess
    import sys

    from gradsight.analysis import analyze_source

    result = analyze_source(SAC_FLAG, "sac.py")
    assert result.problems == [] and [(f.code, f.line) for f in result.findings] == []
    (tmp_path / "sac.py").write_text(SAC_FLAG)
    for flag in ("True", "False"):
        proc = subprocess.run([sys.executable, "-c", f"from sac import Agent\nAgent({flag}).run(3)\n"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
