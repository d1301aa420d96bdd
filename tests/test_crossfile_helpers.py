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
