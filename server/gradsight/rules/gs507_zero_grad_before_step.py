from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import ZeroGradEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


class ZeroGradBeforeStep(Rule):
    code = "GS507"
    name = "zero-grad-before-step"
    severity = Severity.WARNING
    summary = "`zero_grad()` between `backward()` and `step()` clears the gradients before the optimizer uses them."
    events = (ZeroGradEvent,)
    what_it_does = ("Flags `optimizer.zero_grad()` (or `model.zero_grad()` when the optimizer was built from "
                    "`model.parameters()`) placed after `loss.backward()` and before `optimizer.step()` in the same "
                    "block, with no other backward in between; the body of a `with` block counts as part of the block "
                    "it stands in (`with autocast(): loss.backward()`, then the zero_grad). Clearing another optimizer's or network's gradients "
                    "(a GAN's discriminator before the generator's step) is not flagged. Code that "
                    "writes gradients back after zeroing them (`p.grad = ...`, a helper with `grad` in its name, as "
                    "in gradient surgery) is not flagged; `clip_grad_norm_` in between does not change anything.")
    why_bad = ("Nothing raises. Since PyTorch 2.0 `zero_grad()` sets `.grad` to None, and the optimizer skips "
               "parameters without a gradient, so `step()` changes nothing and the model never trains (with "
               "`set_to_none=False` the step sees zeros: only momentum or weight decay move the weights).")
    example = "loss.backward()\noptimizer.zero_grad()\noptimizer.step()"
    use_instead = "optimizer.zero_grad()\nloss.backward()\noptimizer.step()"
    references = ("https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html",
                  "https://pytorch.org/tutorials/beginner/basics/optimization_tutorial.html")
    valid = (
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
              "for _ in range(2):\n    opt.zero_grad()\n    m(torch.randn(3, 2)).pow(2).mean().backward()\n    opt.step()\n"),
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
              "loss = m(torch.randn(3, 2)).pow(2).mean()\nloss.backward()\nopt.step()\nopt.zero_grad()\n"),
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
              "m(torch.randn(3, 2)).pow(2).mean().backward()\ngrads = [p.grad.clone() for p in m.parameters()]\n"
              "opt.zero_grad()\nfor p, g in zip(m.parameters(), grads):\n    p.grad = g * 0.5\nopt.step()\n"),
        # A GAN's generator step: clearing the discriminator's gradients (which the generator loss also
        # filled) before stepping the generator's optimizer is deliberate and harmless.
        Valid("import torch\nimport torch.nn as nn\nG = nn.Linear(4, 4)\nD = nn.Linear(4, 1)\n"
              "opt_g = torch.optim.Adam(G.parameters())\nopt_d = torch.optim.Adam(D.parameters())\n"
              "for _ in range(2):\n    g_loss = -D(G(torch.randn(8, 4))).mean()\n    g_loss.backward()\n"
              "    opt_d.zero_grad()\n    D.zero_grad()\n    opt_g.step()\n    opt_g.zero_grad()\n"),
        # The backward inside an autocast block, the step and then the zero_grad after it: the right order.
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
              "for _ in range(2):\n    with torch.autocast(\"cpu\", enabled=False):\n"
              "        loss = m(torch.randn(3, 2)).pow(2).mean()\n        loss.backward()\n"
              "    opt.step()\n    opt.zero_grad()\n"),
        # Two phases, each a `with` block holding its backward, zeroed between them after the first step.
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
              "for _ in range(2):\n    with torch.autocast(\"cpu\", enabled=False):\n"
              "        m(torch.randn(3, 2)).pow(2).mean().backward()\n    opt.step()\n    opt.zero_grad()\n"
              "    with torch.autocast(\"cpu\", enabled=False):\n        m(torch.randn(3, 2)).abs().mean().backward()\n"
              "    opt.step()\n    opt.zero_grad()\n"),
    )
    invalid = (
        Invalid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nw0 = m.weight.detach().clone()\n"
                "opt = torch.optim.SGD(m.parameters(), lr=0.1)\nfor _ in range(3):\n"
                "    loss = m(torch.randn(3, 2)).pow(2).mean()\n    loss.backward()\n    opt.zero_grad()\n"
                "    opt.step()\n", line=9, runtime="silent: torch.equal(m.weight, w0)"),
        Invalid("import torch\nimport torch.nn as nn\n\n\ndef train_step(model, x):\n"
                "    optimizer = torch.optim.Adam(model.parameters())\n"
                "    loss = model(x).pow(2).mean()\n    loss.backward()\n    model.zero_grad()\n"
                "    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n    optimizer.step()\n\n\n"
                "net = nn.Linear(2, 1)\nb0 = net.bias.detach().clone()\n"
                "train_step(net, torch.randn(4, 2))\n", line=9,
                runtime="silent: torch.equal(net.bias, b0)"),
        # The backward inside a `with` block (autocast, a launcher's `accelerator.backward(loss)`), the zero_grad
        # and the step after it (byol-pytorch's trainer).
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Accelerator:\n    def backward(self, loss):\n"
                "        loss.backward()\n\n\nclass Trainer(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.net = nn.Linear(3, 3)\n        self.accelerator = Accelerator()\n"
                "        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=0.1)\n\n"
                "    def forward(self, steps):\n        for _ in range(steps):\n"
                "            with torch.autocast(\"cpu\", enabled=False):\n"
                "                loss = self.net(torch.randn(4, 3)).pow(2).mean()\n"
                "                self.accelerator.backward(loss)\n            self.optimizer.zero_grad()\n"
                "            self.optimizer.step()\n\n\ntrainer = Trainer()\nw0 = trainer.net.weight.detach().clone()\n"
                "trainer(3)\n", line=22, runtime="silent: torch.equal(trainer.net.weight, w0)"),
    )

    def check(self, event: ZeroGradEvent, report) -> None:
        report.add(self, event.node,
                   msg("This clears the gradients the backward (line ", event.backward.line, ") just computed, so the "
                       f"step applies nothing. Call `zero_grad()` before the backward (or after {event.step.text}, line ",
                       event.step.line, ")."),
                   related=[event.backward, event.step])
