"""Cross-file shapes: a helper imported from another workspace file that backwards what it computes from its
arguments (GS416), checked on a temporary project folder; the same program run under torch raises."""

import subprocess
import sys

from gradsight.analysis import analyze_source
from gradsight.engine.workspace import Workspace

LOSSES = """import torch
import torch.nn.functional as F


def feature_loss(phi_real, phi_fake, backward=True):
    loss = F.mse_loss(phi_fake.mean(0), phi_real.mean(0))
    if backward:
        loss.backward(retain_graph=True)
    return loss.item()
"""

GAN = """import torch
import torch.nn as nn
import torch.nn.functional as F

from .losses import feature_loss


class Disc(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
        self.head = nn.Linear(8, 1)

    def forward(self, x, features=False):
        phi = self.body(x)
        return (self.head(phi), phi) if features else self.head(phi)


class BaseGAN:
    def __init__(self):
        self.netG = self.getNetG()
        self.netD = self.getNetD()

    def getNetG(self):
        raise NotImplementedError

    def getNetD(self):
        raise NotImplementedError

    def generator_step(self, z, real, gdpp):
        fake = self.netG(z)
        pred, phi_fake = self.netD(fake, True)
        loss = F.softplus(-pred).mean()
        loss.backward()
        if gdpp:
            _, phi_real = self.netD(real, True)
            feature_loss(phi_real, phi_fake, backward=GDPP)


GDPP = True
"""

RUN = """import torch
import torch.nn as nn
from gan.model import BaseGAN, Disc


class GAN(BaseGAN):
    def getNetG(self):
        return nn.Linear(4, 4)

    def getNetD(self):
        return Disc()


GAN().generator_step(torch.randn(3, 4), torch.randn(3, 4), True)
"""


def make(tmp_path, gan=GAN, losses=LOSSES):
    (tmp_path / "gan").mkdir()
    (tmp_path / "gan" / "__init__.py").write_text("")
    (tmp_path / "gan" / "losses.py").write_text(losses)
    (tmp_path / "gan" / "model.py").write_text(gan)
    (tmp_path / "run.py").write_text(RUN)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'ws'\n")
    return str(tmp_path / "gan" / "model.py")


def gs416(text, path, ws):
    return [(f.line, f.message) for f in analyze_source(text, path, workspace=ws).findings if f.code == "GS416"]


def test_imported_helper_backwards_a_freed_graph(tmp_path):
    path = make(tmp_path)
    found = gs416(GAN, path, Workspace(tmp_path))
    assert [line for line, _ in found] == [34], found
    assert "`feature_loss` (line 37)" in found[0][1]
    # Under torch the program raises where the helper backwards again.
    proc = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "backward through the graph a second time" in proc.stderr, proc.stderr[-2000:]


def test_imported_helper_quiet_when_kept_or_not_backwarding(tmp_path):
    kept = GAN.replace("        loss.backward()\n", "        loss.backward(retain_graph=True)\n")
    path = make(tmp_path, gan=kept)
    ws = Workspace(tmp_path)
    assert gs416(kept, path, ws) == []
    proc = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # A helper that only measures (no backward in it), and a call that turns its backward off.
    ws.set_overlay(str(tmp_path / "gan" / "losses.py"), LOSSES.replace("        loss.backward(retain_graph=True)\n",
                                                                        "        pass\n"))
    assert gs416(GAN, path, ws) == []
    off = GAN.replace("backward=GDPP)", "backward=False)")
    ws.set_overlay(str(tmp_path / "gan" / "losses.py"), None)
    assert gs416(off, path, ws) == []
    # Without a workspace the helper is unknown: nothing is claimed.
    assert gs416(GAN, path, None) == []


# GS109: the no_grad block in one file, the gradient step two files away (StudioGAN's evaluation through
# `generate_images_for_KNN` -> `latent_optimise` -> `calc_derv`); the middle file imports relatively.
GRADS = """import torch
from torch import autograd


def calc_derv(inputs, G, D):
    z = autograd.Variable(inputs, requires_grad=True)
    score = D(G(z))
    return autograd.grad(outputs=score.sum(), inputs=z)[0]


def latent_optimise(z, G, D, steps):
    for _ in range(steps):
        z = z + 0.1 * calc_derv(z, G, D)
    return z
"""

SAMPLE = """import torch

from .grads import latent_optimise


def generate(G, D, z, latent_op):
    if latent_op:
        z = latent_optimise(z, G, D, 2)
    with torch.no_grad():
        return G(z)
"""

EVAL = """import torch
import torch.nn as nn

from gen.sample import generate


def evaluate(G, D, latent_op):
    with torch.no_grad():
        images = generate(G, D, torch.randn(2, 4), latent_op)
    return images


if __name__ == "__main__":
    evaluate(nn.Linear(4, 4), nn.Linear(4, 1), True)
"""


def make_gen(tmp_path, grads=GRADS):
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "__init__.py").write_text("")
    (tmp_path / "gen" / "grads.py").write_text(grads)
    (tmp_path / "gen" / "sample.py").write_text(SAMPLE)
    (tmp_path / "evaluate.py").write_text(EVAL)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'ws'\n")
    return str(tmp_path / "evaluate.py")


def gs109(text, path, ws):
    return [f for f in analyze_source(text, path, workspace=ws).findings if f.code == "GS109"]


def test_no_grad_block_around_a_gradient_step_two_files_away(tmp_path):
    path = make_gen(tmp_path)
    found = gs109(EVAL, path, Workspace(tmp_path))
    assert [f.line for f in found] == [8], found
    assert "`latent_optimise` -> `calc_derv`" in found[0].message
    assert any(r.path.endswith("grads.py") and r.line == 8 for r in found[0].related)
    proc = subprocess.run([sys.executable, "evaluate.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "does not require grad" in proc.stderr, proc.stderr[-2000:]


def test_no_grad_block_quiet_when_the_step_enables_grad(tmp_path):
    grads = GRADS.replace("    z = autograd.Variable(inputs, requires_grad=True)\n    score = D(G(z))\n"
                          "    return autograd.grad(outputs=score.sum(), inputs=z)[0]\n",
                          "    with torch.enable_grad():\n        z = autograd.Variable(inputs, requires_grad=True)\n"
                          "        score = D(G(z))\n        return autograd.grad(outputs=score.sum(), inputs=z)[0]\n")
    path = make_gen(tmp_path, grads)
    assert gs109(EVAL, path, Workspace(tmp_path)) == []
    proc = subprocess.run([sys.executable, "evaluate.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # Called with the option off, the step never runs; without a workspace nothing is known.
    assert gs109(EVAL.replace("torch.randn(2, 4), latent_op)", "torch.randn(2, 4), False)"), path,
                 Workspace(tmp_path)) == []
    assert gs109(EVAL, path, None) == []


def test_gs109_gives_way_to_gs401_naming_its_block():
    # In one file the interpreter runs the callee under the block: GS401 names the `with` line in a related note,
    # and the front ends (`drop_restated`) show that finding alone.
    from gradsight.findings import drop_restated
    from gradsight.rules.gs401_backward_without_grad import BackwardWithoutGrad

    # The first INVALID example whose `with` block the interpreter runs the callee under (found by content: the
    # examples' order changes as rules gain examples).
    code = next(ex.code for ex in BackwardWithoutGrad.invalid if "def run_epoch(" in ex.code)
    found = analyze_source(code, "example.py").findings
    assert {"GS401", "GS109"} <= {f.code for f in found}
    assert [f.code for f in drop_restated(list(found)) if f.code in ("GS401", "GS109")] == ["GS401"]


def test_gs109_quiet_on_guards_it_cannot_match_or_that_are_off():
    # AutoDL's `train_or_test_epoch(loader, **shared_kwards)` with `is_train: False` in the dict, and its
    # `if is_train and optimizer is not None:` guard: nothing is claimed for unpacked arguments or a false operand.
    code = ("import torch\n\n\ndef epoch(model, x, loss_fn, is_train, optimizer):\n    loss = loss_fn(model(x))\n"
            "    if is_train and optimizer is not None:\n        loss.backward()\n        optimizer.step()\n"
            "    return loss.item()\n\n\ndef test(model, x, loss_fn):\n    with torch.no_grad():\n"
            "        kw = {\"model\": model, \"loss_fn\": loss_fn, \"is_train\": False, \"optimizer\": None}\n"
            "        epoch(x=x, **kw)\n        epoch(model, x, loss_fn, True, None)\n")
    assert "GS109" not in {f.code for f in analyze_source(code, "example.py").findings}
    flagged = code.replace("epoch(model, x, loss_fn, True, None)", "epoch(model, x, loss_fn, True, object())")
    assert [f.line for f in analyze_source(flagged, "example.py").findings if f.code == "GS109"] == [13]
