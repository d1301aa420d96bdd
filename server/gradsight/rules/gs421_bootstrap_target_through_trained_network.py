from __future__ import annotations

from ..engine.events import BootstrapTargetEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid, add_at_origin

_HEAD = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"
         "q = nn.Linear(4, 2)\nopt = torch.optim.SGD(q.parameters(), lr=0.1)\n"
         "s, a, r, s2 = torch.randn(8, 4), torch.randint(0, 2, (8, 1)), torch.randn(8, 1), torch.randn(8, 4)\n"
         "done = torch.zeros(8, 1)\n")
# The semi-gradient the TD update is meant to follow: the same loss with the target as a constant.
_SEMI = "semi = torch.autograd.grad(F.mse_loss(q(s).gather(1, a), target.detach()), q.weight)[0]\n"
_STEP = "loss = F.mse_loss(q(s).gather(1, a), target)\nopt.zero_grad()\nloss.backward()\n"

_AGENT = ("import copy\n\nimport torch\nimport torch.nn as nn\n\n\n"
          "class Agent:\n    def __init__(self):\n        self.q = nn.Linear(4, 2)\n"
          "        self.q_target = copy.deepcopy(self.q)\n"
          "        self.opt = torch.optim.Adam(self.q.parameters(), lr=1e-3)\n"
          "        self.criterion = nn.MSELoss()\n        self.gamma = 0.99\n\n"
          "    def learn(self, s, a, r, s2, done):\n"
          "        q_idx = self.q_target(s2).argmax(1, keepdim=True)\n")
_AGENT_TAIL = ("        y = r + self.gamma * q_next * (1 - done)\n"
               "        loss = self.criterion(self.q(s).gather(1, a), y)\n"
               "        self.opt.zero_grad()\n        loss.backward()\n        self.grad = self.q.weight.grad.clone()\n"
               "        self.semi = torch.autograd.grad(self.criterion(self.q(s).gather(1, a), y.detach()), "
               "self.q.weight)[0]\n        self.opt.step()\n\n\nagent = Agent()\n"
               "agent.learn(torch.randn(8, 4), torch.randint(0, 2, (8, 1)), torch.randn(8, 1), torch.randn(8, 4), "
               "torch.zeros(8, 1))\n")

# A plain agent class (AgileRL/AgileRL@8ea3aabf): the online network is built in one of `__init__`'s branches and
# rebuilt when a checkpoint is loaded, `clone` builds another agent with `type(self)(...)`, and only the double-DQN
# path evaluates the next state with the online network; the other path detaches the target network's value.
_PLAIN = ("import copy\n\nimport torch\nimport torch.nn as nn\n\n\n"
          "class DQN:\n    def __init__(self, double=True, arch=\"mlp\"):\n        self.double = double\n"
          "        if arch == \"mlp\":\n            self.actor = nn.Linear(4, 2)\n"
          "        else:\n            self.actor = nn.Sequential(nn.Linear(4, 2))\n"
          "        self.actor_target = copy.deepcopy(self.actor)\n"
          "        self.optimizer = torch.optim.Adam(self.actor.parameters(), lr=1e-3)\n"
          "        self.criterion = nn.MSELoss()\n\n"
          "    def learn(self, s, a, r, s2, done):\n        if self.double:\n"
          "            q_idx = self.actor_target(s2).argmax(dim=1).unsqueeze(1)\n")
_PLAIN_TAIL = ("        else:\n            q_target = self.actor_target(s2).detach().max(axis=1)[0].unsqueeze(1)\n"
               "        y = r + 0.99 * q_target * (1 - done)\n"
               "        loss = self.criterion(self.actor(s).gather(1, a), y)\n"
               "        self.optimizer.zero_grad()\n        loss.backward()\n"
               "        self.grad = self.actor.weight.grad.clone()\n"
               "        self.semi = torch.autograd.grad(self.criterion(self.actor(s).gather(1, a), y.detach()), "
               "self.actor.weight)[0]\n        self.optimizer.step()\n\n"
               "    def load(self, path):\n        self.actor = nn.Linear(4, 2)\n"
               "        self.actor.load_state_dict(torch.load(path))\n\n"
               "    def clone(self):\n        other = type(self)(double=self.double)\n"
               "        other.actor = copy.deepcopy(self.actor)\n"
               "        other.optimizer = torch.optim.Adam(other.actor.parameters(), lr=1e-3)\n        return other\n\n\n"
               "agent = DQN()\n"
               "agent.learn(torch.randn(8, 4), torch.randint(0, 2, (8, 1)), torch.randn(8, 1), torch.randn(8, 4), "
               "torch.zeros(8, 1))\n")


class BootstrapTargetThroughTrainedNetwork(Rule):
    code = "GS421"
    name = "bootstrap-target-through-trained-network"
    severity = Severity.WARNING
    summary = ("A TD target `r + gamma * v` keeps a graph through the network the loss trains: backward also moves "
               "the bootstrap value, not only the prediction.")
    events = (BootstrapTargetEvent,)
    what_it_does = ("Flags the value `v` of a bootstrapped target `r + gamma * v` (also `r + gamma * (1 - done) * v`, "
                    "a sum of a term without gradient and a scaled term with a graph) when the target goes into a "
                    "loss with a target (`F.mse_loss`, `F.smooth_l1_loss`, their `nn` modules, ...) in grad mode and "
                    "`v`'s graph runs through a module that an optimizer trains and that the prediction runs "
                    "through too: DQN, SARSA or double DQN taking the next state's value from the online network "
                    "without `torch.no_grad()` or `.detach()`, also where only one path of an `if` keeps the graph "
                    "(the double-DQN branch) and in an agent class whose `__init__` hands the model's parameters to "
                    "the optimizer. Targets that are a network's plain output (invariance "
                    "and consistency terms) and targets through networks no optimizer trains (GS418) are left "
                    "alone.")
    why_bad = ("Temporal-difference learning is a semi-gradient method: the target `r + gamma * Q(s')` is a "
               "constant the prediction `Q(s)` moves towards. With its graph, `loss.backward()` also differentiates "
               "`Q(s')` and the optimizer steps the network with the sum of both gradients (the residual-gradient "
               "update, which pulls `Q(s')` towards `Q(s)` and learns differently): no error, only different "
               "training. Every DQN, SARSA and actor-critic critic update computes the target under "
               "`torch.no_grad()` or detaches it.")
    example = ("q_next = q(s2).max(1, keepdim=True)[0]\ntarget = r + gamma * (1 - done) * q_next\n"
               "loss = F.mse_loss(q(s).gather(1, a), target)")
    use_instead = ("with torch.no_grad():\n    q_next = q(s2).max(1, keepdim=True)[0]\n"
                   "target = r + gamma * (1 - done) * q_next\nloss = F.mse_loss(q(s).gather(1, a), target)")
    fix_safety = ("No automatic fix: where the next state's value should stop its gradient (`torch.no_grad()` "
                  "around its forward or `.detach()`) is for the author to choose; either changes the gradients "
                  "the optimizer steps, which is the point.")
    references = ("https://pytorch.org/tutorials/intermediate/reinforcement_q_learning.html",
                  "http://incompleteideas.net/book/RLbook2020.pdf#page=224")
    valid = (
        # The next state's value computed under no_grad (the usual DQN), or the target detached at the loss.
        Valid(_HEAD + "with torch.no_grad():\n    q_next = q(s2).max(1, keepdim=True)[0]\n"
              "target = r + 0.99 * (1 - done) * q_next\n" + _STEP + "opt.step()\n"),
        Valid(_HEAD + "q_next = q(s2).max(1, keepdim=True)[0]\ntarget = r + 0.99 * (1 - done) * q_next\n"
              "loss = F.mse_loss(q(s).gather(1, a), target.detach())\nopt.zero_grad()\nloss.backward()\nopt.step()\n"),
        # A consistency term whose target is the same network's plain output: the gradient through both is meant.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nnet = nn.Linear(4, 3)\n"
              "opt = torch.optim.SGD(net.parameters(), lr=0.1)\nx = torch.randn(8, 4)\n"
              "loss = F.mse_loss(net(x + 0.1 * torch.randn(8, 4)), net(x))\nloss.backward()\nopt.step()\n"),
        # Soft bootstrapping (Reed et al.): a mixture of the labels and the model's own prediction, differentiated
        # through both on purpose.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nnet = nn.Linear(4, 3)\n"
              "opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
              "x, y = torch.randn(8, 4), F.one_hot(torch.randint(0, 3, (8,)), 3).float()\nlogits = net(x)\n"
              "target = 0.95 * y + 0.05 * F.softmax(logits, dim=1)\nloss = F.cross_entropy(logits, target)\n"
              "loss.backward()\nopt.step()\n"),
        # IQL-style: the bootstrap value comes from a value network with its own optimizer, which zeroes its
        # gradients before its own loss; the critic's update is the semi-gradient one.
        Valid(_HEAD + "v = nn.Linear(4, 1)\nv_opt = torch.optim.SGD(v.parameters(), lr=0.1)\n"
              "target = r + 0.99 * (1 - done) * v(s2)\n" + _STEP + "opt.step()\n"
              "v_opt.zero_grad()\nF.mse_loss(v(s), q(s).gather(1, a).detach()).backward()\nv_opt.step()\n"),
        # The plain agent below with the double-DQN path's value computed under `torch.no_grad()`.
        Valid(_PLAIN + "            with torch.no_grad():\n"
              "                q_target = self.actor(s2).gather(dim=1, index=q_idx)\n" + _PLAIN_TAIL),
    )
    invalid = (
        # The next state's value from the online network, with its graph: the step is not the semi-gradient one.
        Invalid(_HEAD + "q_next = q(s2).max(1, keepdim=True)[0]\ntarget = r + 0.99 * (1 - done) * q_next\n"
                + _STEP + _SEMI + "opt.step()\n",
                line=9, runtime="silent: not torch.allclose(q.weight.grad, semi)"),
        # SARSA with the target on one line: the next action's value from the network being trained.
        Invalid(_HEAD + "a2 = torch.randint(0, 2, (8, 1))\ntarget = r + 0.99 * q(s2).gather(1, a2)\n"
                + _STEP + _SEMI + "opt.step()\n",
                line=10, runtime="silent: not torch.allclose(q.weight.grad, semi)"),
        # SARSA (kengz/SLM-Lab@e64f8d97): the next state's values from the trained network, then the next action's
        # picked from them; `torch.no_grad()` belongs around the forward, the finding goes there.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Sarsa:\n    def __init__(self):\n"
                "        self.net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))\n"
                "        self.optim = torch.optim.Adam(self.net.parameters(), lr=1e-3)\n"
                "        self.loss_fn = nn.SmoothL1Loss()\n\n"
                "    def train(self, s, a, r, s2, a2, done):\n        q_preds = self.net(s)\n"
                "        next_q_preds = self.net(s2)\n        act_q_preds = q_preds.gather(-1, a)\n"
                "        act_next_q_preds = next_q_preds.gather(-1, a2)\n"
                "        targets = r + 0.99 * (1 - done) * act_next_q_preds\n"
                "        loss = self.loss_fn(act_q_preds, targets)\n        self.optim.zero_grad()\n"
                "        loss.backward()\n        self.grad = self.net[0].weight.grad.clone()\n"
                "        self.semi = torch.autograd.grad(self.loss_fn(self.net(s).gather(-1, a), targets.detach()), "
                "self.net[0].weight)[0]\n        self.optim.step()\n\n\nagent = Sarsa()\n"
                "agent.train(torch.randn(8, 4), torch.randint(0, 2, (8, 1)), torch.randn(8, 1), torch.randn(8, 4), "
                "torch.randint(0, 2, (8, 1)), torch.zeros(8, 1))\n",
                line=13, runtime="silent: not torch.allclose(agent.grad, agent.semi)"),
        # Double DQN (AgileRL/AgileRL@8ea3aabf): the target network picks the action, the online network, which
        # the optimizer trains, evaluates it with its graph; the loss through an `nn.MSELoss` module.
        Invalid(_AGENT + "        q_next = self.q(s2).gather(1, q_idx)\n" + _AGENT_TAIL,
                line=17, runtime="silent: not torch.allclose(agent.grad, agent.semi)"),
        # A plain agent class whose methods run with `self` known only from `__init__`: the model `__init__` hands
        # to the optimizer is the one trained; on the double-DQN path the next state's value keeps its graph.
        Invalid(_PLAIN + "            q_target = self.actor(s2).gather(dim=1, index=q_idx)\n" + _PLAIN_TAIL,
                line=21, runtime="silent: not torch.allclose(agent.grad, agent.semi)"),
    )

    def check(self, event: BootstrapTargetEvent, report) -> None:
        names = [name for _, name in event.shared if name]
        who = "this module" if names[:1] == ["self"] else f"`{names[0]}`" if names else "the network"
        message = (f"This bootstrap value keeps a graph through {who}, which the loss trains, so backward moves it "
                   f"too. A TD target is a constant: compute it under `torch.no_grad()` or detach it.")
        loss_line, loss_col, _, _ = report.source.span(event.node)
        loss = Note(loss_line, loss_col, "the loss whose backward runs through the target into the network it trains")
        # The finding goes where the fix goes: the statement that computes the next state's value, which should run
        # under `torch.no_grad()` (or detach it); the loss is in `related`.
        add_at_origin(self, report, event.node, event.value_origin, message, [loss])
