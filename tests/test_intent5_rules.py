"""GS585 (a backward whose gradients every later-stepping optimizer clears), GS515's optimizers stored under
computed names, and GS185 (a momentum branch running the trained modules) on the shapes of the real bugs they
were made for (rlkit's PEARL `_take_step`, audiolm's multi-scale discriminator optimizers, lightly's DenseCL),
and on near variants that must stay quiet."""

from gradsight.analysis import analyze_source

PEARL = """import torch


class Trainer:
    def _take_step(self, obs, enc_data):
        r_pred, q_pred, v_pred, log_pi, target_v = self.policy(obs, enc_data)
        if self.use_information_bottleneck:
            kl_div = self.policy.compute_kl_div()
            kl_loss = self.kl_lambda * kl_div
            kl_loss.backward(retain_graph=True)

        rf_loss = self.rf_criterion(r_pred, obs)
        self.rf_optimizer.zero_grad()
        self.context_optimizer.zero_grad()
        rf_loss.backward(retain_graph=True)
        self.rf_optimizer.step()

        self.qf_optimizer.zero_grad()
        qf_loss = torch.mean((q_pred - target_v) ** 2)
        qf_loss.backward()
        self.qf_optimizer.step()
        self.context_optimizer.step()

        self.policy_optimizer.zero_grad()
        policy_loss = (log_pi - q_pred).mean()
        policy_loss.backward()
        self.policy_optimizer.step()
"""


def _codes(text: str, code: str) -> list:
    return [(f.line, f.message) for f in analyze_source(text, "train.py").findings if f.code == code]


def test_pearl_kl_backward_cleared_is_flagged_on_the_accumulating_optimizer():
    found = _codes(PEARL, "GS585")
    assert [line for line, _ in found] == [14]  # `self.context_optimizer.zero_grad()`, which gathers two backwards
    assert "line 10" in found[0][1]


def test_pearl_fixed_is_quiet():
    fixed = PEARL.replace("        self.context_optimizer.zero_grad()\n        rf_loss", "        rf_loss") \
        .replace("        r_pred, q_pred", "        self.context_optimizer.zero_grad()\n        r_pred, q_pred")
    assert _codes(fixed, "GS585") == []


def test_gradient_read_between_is_quiet():
    # The first backward's gradients are read (a gradient norm, FGSM's input gradient): it is not wasted.
    text = PEARL.replace("        rf_loss = self.rf_criterion", "        norm = self.encoder.weight.grad.norm()\n"
                                                             "        rf_loss = self.rf_criterion")
    assert _codes(text, "GS585") == []


def test_optimizer_stepped_in_a_branch_is_quiet():
    # What steps after the backward is not certain: the rule stays quiet.
    text = PEARL.replace("        self.context_optimizer.step()\n",
                         "        if self.train_encoder:\n            self.context_optimizer.step()\n")
    assert _codes(text, "GS585") == []


MULTI = """import torch


class Trainer:
    def __init__(self, codec, lr):
        self.codec = codec
        self.optim = torch.optim.Adam(codec.enc.parameters(), lr=lr)
        for key, discr in self.discr_iter():
            opt = torch.optim.Adam(discr.parameters(), lr=lr)
            setattr(self, key, opt)

    @property
    def unwrapped_codec(self):
        return self.accelerator.unwrap_model(self.codec)

    def discr_iter(self):
        for ind, discr in enumerate(self.unwrapped_codec.discriminators):
            yield f"multiscale_discr_optimizer_{ind}", discr

    def train_step(self, wave):
        loss = self.codec(wave)
        loss.backward()
        self.optim.step()
        self.optim.zero_grad()

        discr_loss = self.codec(wave, return_discr_loss=True)
        discr_loss.backward()
        for ind in range(len(self.codec.discriminators)):
            discr_optimizer = getattr(self, f"multiscale_discr_optimizer_{ind}")
            discr_optimizer.step()
            discr_optimizer.zero_grad()
"""


def test_optimizers_under_computed_names_are_followed():
    found = _codes(MULTI, "GS515")
    assert [line for line, _ in found] == [31]


def test_optimizers_under_computed_names_of_unrelated_modules_are_quiet():
    # The optimizers train modules the generator's loss never calls.
    text = MULTI.replace("self.unwrapped_codec.discriminators", "self.critics")
    assert _codes(text, "GS515") == []


DENSECL = """import copy

import torch
from torch import nn


class DenseCL(nn.Module):
    def __init__(self, backbone, head):
        super().__init__()
        self.backbone = backbone
        self.head = head
        self.backbone_momentum = copy.deepcopy(self.backbone)
        self.head_momentum = copy.deepcopy(self.head)

    def forward(self, x):
        return self.head(self.backbone(x))

    def forward_momentum(self, x):
        return self.head(self.backbone(x))


def step(model, x_q, x_k, criterion):
    return criterion(model(x_q), model.forward_momentum(x_k))
"""


def test_momentum_branch_running_the_trained_modules_is_flagged():
    assert [line for line, _ in _codes(DENSECL, "GS185")] == [18]


def test_momentum_branch_under_no_grad_or_on_copies_is_quiet():
    assert _codes(DENSECL.replace("    def forward_momentum", "    @torch.no_grad()\n    def forward_momentum"),
                  "GS185") == []
    assert _codes(DENSECL.replace("return self.head(self.backbone(x))\n\n\ndef",
                                  "return self.head_momentum(self.backbone_momentum(x))\n\n\ndef"), "GS185") == []
