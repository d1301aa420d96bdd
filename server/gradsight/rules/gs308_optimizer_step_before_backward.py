from __future__ import annotations

from ..engine.report import Note, text as msg
from ..engine.events import BackwardEvent
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid, at

_MSG = "\"one of the variables needed for gradient computation has been modified by an inplace operation\""


class OptimizerStepBeforeBackward(Rule):
    code = "GS308"
    name = "optimizer-step-before-backward"
    severity = Severity.WARNING
    summary = ("`optimizer.step()` updates parameters in place while a graph that saved them is still waiting "
               "for its backward; that backward will raise.")
    events = (BackwardEvent,)
    what_it_does = ("Flags an optimizer step that runs between a forward and the backward of a graph that saved "
                    "the parameters it updates: a `Linear` or `Conv` layer saves its weight when its input requires "
                    "grad (a `Conv` always does), and an optimizer built from that module's `parameters()` called "
                    "`step()` after the forward and before the backward. The finding stands on the step, the "
                    "statement to move, and on the backward, which raises (the other fix moves it before the "
                    "step). The typical case is a GAN "
                    "or actor-critic update: `d_loss.backward(retain_graph=True)`, `opt_d.step()`, then "
                    "`g_loss.backward()` through the same discriminator forward.")
    why_bad = ("Every `torch.optim` optimizer updates parameters in place (`param.add_(...)`), which bumps their "
               "version counters. The pending graph saved those parameters at their old version, so its backward "
               f"raises {_MSG}. Before PyTorch 1.5 this silently computed gradients with the updated weights.")
    example = ("d_loss = bce(D(real), ones) + bce(D(fake), zeros)\ng_loss = bce(D(fake), ones)\n"
               "d_loss.backward(retain_graph=True)\nopt_d.step()      # updates D's weights in place\n"
               "g_loss.backward()  # g_loss's graph saved D's old weights: raises")
    use_instead = ("d_loss = bce(D(real), ones) + bce(D(fake), zeros)\ng_loss = bce(D(fake), ones)\n"
                   "d_loss.backward(retain_graph=True)\ng_loss.backward()\nopt_d.step()\n"
                   "# or: recompute D(fake) after opt_d.step() and backward that")
    fix_safety = ("No automatic fix: either run every backward before the steps (the gradients are then computed "
                  "with the old weights), or recompute the forward after the step (gradients with the new "
                  "weights). Which one is right depends on the algorithm.")
    references = ("https://github.com/pytorch/pytorch/issues/39141",
                  "https://pytorch.org/docs/stable/notes/autograd.html#in-place-correctness-checks")
    valid = (
        Valid("import torch\nimport torch.nn as nn\nm = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))\n"
              "opt = torch.optim.SGD(m.parameters(), lr=0.1)\nfor _ in range(3):\n"
              "    loss = m(torch.randn(2, 4)).pow(2).mean()\n    opt.zero_grad()\n    loss.backward()\n"
              "    opt.step()\n"),
        Valid("import torch\nimport torch.nn as nn\nm = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))\n"
              "opt = torch.optim.SGD(m.parameters(), lr=0.1)\nout = m(torch.randn(2, 4))\n"
              "a = out.pow(2).mean()\nb = out.abs().mean()\na.backward(retain_graph=True)\nb.backward()\n"
              "opt.step()\n"),
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(4, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
              "loss = m(torch.randn(2, 4)).pow(2).mean()\nloss.backward(retain_graph=True)\nopt.step()\n"
              "loss.backward()\n"),
        Valid("import torch\nimport torch.nn as nn\nm = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))\n"
              "other = nn.Linear(4, 1)\nopt = torch.optim.SGD(other.parameters(), lr=0.1)\n"
              "other(torch.randn(2, 4)).sum().backward()\nloss = m(torch.randn(2, 4)).pow(2).mean()\n"
              "loss.backward(retain_graph=True)\nopt.step()\nloss.backward()\n"),
        # The same trainer with the actor's update first (rlkit's fix).
        Valid("import torch\nimport torch.nn as nn\nimport torch.optim as optim\n\n\nclass Base:\n    pass\n\n\n"
                "class Trainer(Base):\n    def __init__(self, policy, qf1, lr=1e-3, optimizer_class=optim.Adam):\n"
                "        self.policy = policy\n        self.qf1 = qf1\n"
                "        self.policy_optimizer = optimizer_class(self.policy.parameters(), lr=lr)\n"
                "        self.qf1_optimizer = optimizer_class(self.qf1.parameters(), lr=lr)\n\n"
                "    def train(self, obs, actions, q_target):\n        new_actions = self.policy(obs)\n"
                "        policy_loss = -self.qf1(torch.cat([obs, new_actions], 1)).mean()\n"
                "        qf1_loss = ((self.qf1(torch.cat([obs, actions], 1)) - q_target) ** 2).mean()\n"
                "        self.policy_optimizer.zero_grad()\n        policy_loss.backward()\n        self.policy_optimizer.step()" "\n"
                "        self.qf1_optimizer.zero_grad()\n        qf1_loss.backward()\n        self.qf1_optimizer.step()"
                "\n\nt = Trainer(nn.Linear(3, 2), nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1)))\n"
                "t.train(torch.randn(4, 3), torch.randn(4, 2), torch.randn(4, 1))\n"),
        # The actor's loss built again after the critic's step (TD3, DDPG): its graph saved the new weights.
        Valid("import torch\nimport torch.nn as nn\nimport torch.optim as optim\n\n\nclass Base:\n    pass\n\n\n"
                "class Trainer(Base):\n    def __init__(self, policy, qf1, lr=1e-3, optimizer_class=optim.Adam):\n"
                "        self.policy = policy\n        self.qf1 = qf1\n"
                "        self.policy_optimizer = optimizer_class(self.policy.parameters(), lr=lr)\n"
                "        self.qf1_optimizer = optimizer_class(self.qf1.parameters(), lr=lr)\n\n"
                "    def train(self, obs, actions, q_target):\n        new_actions = self.policy(obs)\n"
                "        policy_loss = -self.qf1(torch.cat([obs, new_actions], 1)).mean()\n"
                "        qf1_loss = ((self.qf1(torch.cat([obs, actions], 1)) - q_target) ** 2).mean()\n"
                "        self.qf1_optimizer.zero_grad()\n        qf1_loss.backward()\n        self.qf1_optimizer.step()\n"
                "        policy_loss = -self.qf1(torch.cat([obs, self.policy(obs)], 1)).mean()\n"
                "        self.policy_optimizer.zero_grad()\n        policy_loss.backward()\n        self.policy_optimizer.step()"
                "\n\nt = Trainer(nn.Linear(3, 2), nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1)))\n"
                "t.train(torch.randn(4, 3), torch.randn(4, 2), torch.randn(4, 1))\n"),
        # Two networks made by two calls of one factory function, each with its own optimizer (co-teaching's
        # `clf1`, `clf2`; bench/fresh34-false/05): a step of one changes nothing the other's graph saved.
        Valid('import torch\nfrom torch import nn\nimport torch.nn.functional as F\n\n\nclass Net(nn.Module):\n    def __init__(self, num_classes=3):\n        super().__init__()\n        self.fc = nn.Conv2d(3, num_classes, 3)\n\n    def forward(self, x):\n        return self.fc(x)\n\n\ndef make_net(num_classes=3):\n    return Net(num_classes=num_classes)\n\n\ndef train(loader, model1, optimizer1, model2, optimizer2):\n    for data, labels in loader:\n        logits1 = model1(data)\n        logits2 = model2(data)\n        loss_1 = F.cross_entropy(logits1, labels)\n        loss_2 = F.cross_entropy(logits2, labels)\n        optimizer1.zero_grad()\n        loss_1.backward()\n        optimizer1.step()\n        optimizer2.zero_grad()\n        loss_2.backward()\n        optimizer2.step()\n\n\ndef main(loader):\n    clf1 = make_net(num_classes=3)\n    optimizer1 = torch.optim.Adam(clf1.parameters(), lr=0.001)\n    clf2 = make_net(num_classes=3)\n    optimizer2 = torch.optim.Adam(clf2.parameters(), lr=0.001)\n    train(loader, clf1, optimizer1, clf2, optimizer2)\n\n\n\nif __name__ == "__main__":\n    torch.manual_seed(0)\n    main([(torch.randn(2, 3, 5, 5), torch.randint(0, 3, (2, 3, 3))) for _ in range(3)])\n'),
    )
    invalid = (
        # The look-alike: both names hold one network, so the first step changes what the second loss saved.
        Invalid('import torch\nfrom torch import nn\nimport torch.nn.functional as F\n\n\nclass Net(nn.Module):\n    def __init__(self, num_classes=3):\n        super().__init__()\n        self.fc = nn.Conv2d(3, num_classes, 3)\n\n    def forward(self, x):\n        return self.fc(x)\n\n\ndef make_net(num_classes=3):\n    return Net(num_classes=num_classes)\n\n\ndef train(loader, model1, optimizer1, model2, optimizer2):\n    for data, labels in loader:\n        logits1 = model1(data)\n        logits2 = model2(data)\n        loss_1 = F.cross_entropy(logits1, labels)\n        loss_2 = F.cross_entropy(logits2, labels)\n        optimizer1.zero_grad()\n        loss_1.backward()\n        optimizer1.step()\n        optimizer2.zero_grad()\n        loss_2.backward()\n        optimizer2.step()\n\n\ndef main(loader):\n    clf1 = make_net(num_classes=3)\n    optimizer1 = torch.optim.Adam(clf1.parameters(), lr=0.001)\n    clf2 = clf1\n    optimizer2 = torch.optim.Adam(clf2.parameters(), lr=0.001)\n    train(loader, clf1, optimizer1, clf2, optimizer2)\n\n\n\nif __name__ == "__main__":\n    torch.manual_seed(0)\n    main([(torch.randn(2, 3, 5, 5), torch.randint(0, 3, (2, 3, 3))) for _ in range(3)])\n', line=27,
                runtime="raises: modified by an inplace operation", also=(29,)),
        Invalid("import torch\nimport torch.nn as nn\nm = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))\n"
                "opt = torch.optim.SGD(m.parameters(), lr=0.1)\nout = m(torch.randn(2, 4))\n"
                "a = out.pow(2).mean()\nb = out.abs().mean()\na.backward(retain_graph=True)\nopt.step()\n"
                "b.backward()\n", line=9, runtime="raises: modified by an inplace operation"),
        Invalid("import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.conv = nn.Conv1d(2, 2, 3)\n\n    def forward(self, x):\n"
                "        return self.conv(x).relu().mean()\n\nnet = Net()\nopt = torch.optim.Adam(net.parameters())\n"
                "loss = net(torch.randn(1, 2, 8))\nloss.backward(retain_graph=True)\nopt.step()\nloss.backward()\n",
                line=15, runtime="raises: modified by an inplace operation"),
        # A trainer whose `__init__` builds the optimizers over the models it was handed, with the optimizer class
        # a parameter (rlkit's SAC): the critic's step runs before the backward of the actor's loss through it.
        Invalid("import torch\nimport torch.nn as nn\nimport torch.optim as optim\n\n\nclass Base:\n    pass\n\n\n"
                "class Trainer(Base):\n    def __init__(self, policy, qf1, lr=1e-3, optimizer_class=optim.Adam):\n"
                "        self.policy = policy\n        self.qf1 = qf1\n"
                "        self.policy_optimizer = optimizer_class(self.policy.parameters(), lr=lr)\n"
                "        self.qf1_optimizer = optimizer_class(self.qf1.parameters(), lr=lr)\n\n"
                "    def train(self, obs, actions, q_target):\n        new_actions = self.policy(obs)\n"
                "        policy_loss = -self.qf1(torch.cat([obs, new_actions], 1)).mean()\n"
                "        qf1_loss = ((self.qf1(torch.cat([obs, actions], 1)) - q_target) ** 2).mean()\n"
                "        self.qf1_optimizer.zero_grad()\n        qf1_loss.backward()\n        self.qf1_optimizer.step()\n"
                "        self.policy_optimizer.zero_grad()\n        policy_loss.backward()\n        self.policy_optimizer.step()"
                "\n\nt = Trainer(nn.Linear(3, 2), nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1)))\n"
                "t.train(torch.randn(4, 3), torch.randn(4, 2), torch.randn(4, 1))\n",
                line=23, runtime="raises: modified by an inplace operation"),
    )

    def check(self, event: BackwardEvent, report) -> None:
        step = event.target.stepped
        if step is None or event.target.rg is not Tri.YES or event.grad_mode is Tri.NO:
            return
        line, col, _, _ = report.source.span(event.node)
        if step.path is None and isinstance(step.line, int) and step.line != line \
                and 1 <= step.line <= len(report.source.lines):
            # The finding goes where the fix goes (issue 13 item 1): the step that bumped the versions, which has
            # to move after this backward (or the forward be recomputed after it); the backward raises.
            text = report.source.line_text(step.line)
            start = len(text) - len(text.lstrip()) + 1
            report.add(self, event.node,
                       msg("This step changes parameters in place that a pending graph saved, so the backward at line ",
                           line, f" raises. Step after that backward, or recompute the forward after the step; "
                           f"PyTorch says {_MSG}."),
                       related=[Note(line, col, "the backward raises here")],
                       span=(step.line, start, step.line, len(text.rstrip()) + 1))
            # The other fix moves this backward (with its loss's update) before the step (rlkit's SAC, MorvanZhou's
            # GAN): the backward, where torch raises, is a line to change too.
            report.add(self, event.node,
                       msg("This backward raises: the step at line ", step.line, " changed parameters its graph saved. "
                           "Run this backward before that step, or recompute the forward after it; "
                           f"PyTorch says {_MSG}."),
                       related=[Note(step.line, start, "the step that changed them")])
            return
        report.add(self, event.node,
                   msg("An optimizer step changed parameters this graph saved, so this backward raises. "
                       f"The step: {step.text} (", at(step), f"), after the graph was built; PyTorch says {_MSG}."),
                   related=[step])
