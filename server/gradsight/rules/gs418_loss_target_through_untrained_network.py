from __future__ import annotations

import ast

from ..engine.events import LossTargetEvent
from ..engine.report import insert_after, make_fix
from ..findings import Applicability, Severity
from .base import Invalid, Rule, Valid

_DQN = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
        "class QNet(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(4, 2)\n\n    def forward(self, x):\n        return self.fc(x)\n\n\n"
        "q, q_target = QNet(), QNet()\nq_target.load_state_dict(q.state_dict())\n"
        "opt = torch.optim.SGD(q.parameters(), lr=0.1)\n"
        "s, a, r, s2 = torch.randn(8, 4), torch.randint(0, 2, (8, 1)), torch.randn(8, 1), torch.randn(8, 4)\n"
        "for _ in range(2):\n    q_a = q(s).gather(1, a)\n")


class LossTargetThroughUntrainedNetwork(Rule):
    code = "GS418"
    name = "loss-target-through-untrained-network"
    severity = Severity.WARNING
    summary = ("A loss's target carries a graph through a network no optimizer trains (a target network, a "
               "teacher): backward runs into it for nothing.")
    events = (LossTargetEvent,)
    what_it_does = ("Flags a loss that compares a prediction with a target (`F.mse_loss`, `F.smooth_l1_loss`, "
                    "`F.kl_div`, `F.cross_entropy` with soft targets, their `nn` modules, ...) in grad mode, when "
                    "the prediction comes from a module an optimizer trains and the target's graph runs through a "
                    "module that no optimizer in view trains and the prediction does not run through: the TD "
                    "target of DQN built from `q_target(s_next)`, a distillation target from a teacher. Both "
                    "graphs must be certain: losses whose prediction and target come from the same network "
                    "(VICReg-style invariance terms) or from networks that are all trained (two-tower models) "
                    "are left alone.")
    why_bad = ("The target is meant to be a fixed number, but it still carries the graph of the network that "
               "computed it, so `loss.backward()` also runs backward through that network: its parameters get "
               "`.grad` that nothing steps or zeroes, and the graph, its saved activations and the extra backward "
               "cost memory and time every step. Where that network shares modules with a trained one, the "
               "gradients change what is trained. DQN and its descendants use the semi-gradient: the target is "
               "detached.")
    example = "target = r + gamma * q_target(s_next).max(1)[0]\nloss = F.smooth_l1_loss(q(s).gather(1, a), target)"
    use_instead = ("target = r + gamma * q_target(s_next).max(1)[0]\n"
                   "loss = F.smooth_l1_loss(q(s).gather(1, a), target.detach())\n"
                   "# or compute the target under `with torch.no_grad():`")
    fix_safety = ("Unsafe: `.detach()` keeps every value (the loss and the trained network's gradients are the "
                  "same), but the untrained network no longer gets gradients, which code that read them would "
                  "notice.")
    references = ("https://pytorch.org/tutorials/intermediate/reinforcement_q_learning.html",)
    valid = (
        # The target computed under no_grad (the usual DQN) or detached: nothing flows into the target network.
        Valid(_DQN + "    with torch.no_grad():\n        target = r + 0.99 * q_target(s2).max(1)[0].unsqueeze(1)\n"
              "    loss = F.smooth_l1_loss(q_a, target)\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
              "assert q_target.fc.weight.grad is None\n"),
        Valid(_DQN + "    target = r + 0.99 * q_target(s2).max(1)[0].unsqueeze(1)\n"
              "    loss = F.smooth_l1_loss(q_a, target.detach())\n    opt.zero_grad()\n    loss.backward()\n"
              "    opt.step()\nassert q_target.fc.weight.grad is None\n"),
        # Both sides from the same trained network (an invariance term): the gradient through both is intended.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nnet = nn.Linear(4, 3)\n"
              "opt = torch.optim.SGD(net.parameters(), lr=0.1)\nx = torch.randn(8, 4)\n"
              "loss = F.mse_loss(net(x + 0.1 * torch.randn(8, 4)), net(x))\nloss.backward()\nopt.step()\n"),
        # Two networks trained together (a two-tower model): both are meant to get gradients.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
              "img, txt = nn.Linear(4, 3), nn.Linear(5, 3)\n"
              "opt = torch.optim.SGD(list(img.parameters()) + list(txt.parameters()), lr=0.1)\n"
              "loss = F.mse_loss(img(torch.randn(8, 4)), txt(torch.randn(8, 5)))\nloss.backward()\nopt.step()\n"),
        # A mean teacher whose parameters were detached in place (InfoGraph's mean_teacher.py): they no longer
        # require grad, so its output has no graph (bench/fresh12-false/02).
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
              "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))\n"
              "teacher_model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))\n"
              "for param in teacher_model.parameters():\n    param.detach_()\n"
              "optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)\nfor step in range(3):\n"
              "    x = torch.randn(16, 4)\n    optimizer.zero_grad()\n    teacher_pred = teacher_model(x)\n"
              "    loss = F.mse_loss(model(x), teacher_pred)\n    loss.backward()\n    optimizer.step()\n"
              "assert not teacher_pred.requires_grad and teacher_model[0].weight.grad is None\n"),
        # A frozen Sequential teacher (`requires_grad_(False)`): its children's parameters are frozen with it.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
              "student = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))\n"
              "teacher = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))\nteacher.requires_grad_(False)\n"
              "opt = torch.optim.SGD(student.parameters(), lr=0.1)\nx = torch.randn(16, 4)\nt = teacher(x)\n"
              "loss = F.mse_loss(student(x), t)\nloss.backward()\nopt.step()\nassert not t.requires_grad\n"),
    )
    invalid = (
        # minimalRL's DQN (seungeunrho/minimalRL@fa8a05bb): the TD target from the target network, not detached.
        Invalid(_DQN + "    target = r + 0.99 * q_target(s2).max(1)[0].unsqueeze(1)\n"
                "    loss = F.smooth_l1_loss(q_a, target)\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n",
                line=22, runtime="silent: q_target.fc.weight.grad is not None",
                fixed=_DQN + "    target = r + 0.99 * q_target(s2).max(1)[0].unsqueeze(1)\n"
                "    loss = F.smooth_l1_loss(q_a, target.detach())\n    opt.zero_grad()\n    loss.backward()\n"
                "    opt.step()\n"),
        # An agent class whose target network is `copy.deepcopy` of the online one (a module of its own).
        Invalid("import copy\n\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
                "class Agent:\n    def __init__(self):\n        self.q = nn.Linear(4, 2)\n"
                "        self.q_target = copy.deepcopy(self.q)\n"
                "        self.opt = torch.optim.Adam(self.q.parameters(), lr=1e-3)\n\n"
                "    def learn(self, s, a, r, s2):\n        q_sa = self.q(s).gather(1, a)\n"
                "        target = r + 0.99 * self.q_target(s2).max(1, keepdim=True)[0]\n"
                "        loss = F.mse_loss(q_sa, target)\n        self.opt.zero_grad()\n        loss.backward()\n"
                "        self.opt.step()\n\n\nagent = Agent()\n"
                "agent.learn(torch.randn(8, 4), torch.randint(0, 2, (8, 1)), torch.randn(8, 1), torch.randn(8, 4))\n",
                line=17, runtime="silent: agent.q_target.weight.grad is not None"),
        # Distillation from a teacher no optimizer trains, through an `nn` loss module.
        Invalid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
                "teacher, student = nn.Linear(4, 3), nn.Linear(4, 3)\n"
                "opt = torch.optim.SGD(student.parameters(), lr=0.1)\nkl = nn.KLDivLoss(reduction='batchmean')\n"
                "x = torch.randn(8, 4)\n"
                "loss = kl(F.log_softmax(student(x), -1), F.softmax(teacher(x), -1))\nloss.backward()\nopt.step()\n",
                line=8, runtime="silent: teacher.weight.grad is not None"),
    )

    def check(self, event: LossTargetEvent, report) -> None:
        names = [name for _, name in event.untrained if name]
        who = f"`{names[0]}`" if names else "a network"
        fix = None
        if isinstance(event.target_node, (ast.Name, ast.Attribute, ast.Subscript)):
            fix = make_fix("Detach the target", Applicability.UNSAFE,
                           insert_after(report.source, event.target_node, ".detach()"))
        origin = event.target_origin
        line = report.source.span(event.node)[0]
        report.add(self, event.node,
                   f"The target `{event.target_expr}` carries a graph through {who}, which no optimizer here trains. "
                   f"Backward also runs into it for nothing (its `.grad` fills up, the graph costs memory); detach "
                   f"the target.",
                   related=[origin] if origin is not None and origin.line != line else [], fix=fix)
