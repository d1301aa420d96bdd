from __future__ import annotations

from ..engine.events import AdvantageGraphEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid

_HEAD = ("import torch\nimport torch.nn as nn\nfrom torch.distributions import Categorical\n\n"
         "torch.manual_seed(0)\nactor = nn.Linear(4, 2)\ncritic = nn.Linear(4, 1)\n"
         "opt = torch.optim.Adam(list(actor.parameters()) + list(critic.parameters()), lr=1e-3)\n"
         "s, returns = torch.randn(8, 4), torch.randn(8)\n"
         "dist = Categorical(logits=actor(s))\na = dist.sample()\nvalues = critic(s).squeeze(-1)\n")
# What the critic's gradient should be: the value loss's alone (the policy term treats the advantage as a constant).
_CHECK = ("critic_grad = torch.autograd.grad(0.5 * (returns - critic(s).squeeze(-1)).pow(2).mean(), critic.weight)[0]\n"
          "opt.zero_grad()\nloss.backward()\n")


_TRAINER = ("import torch\nimport torch.nn as nn\n\n\nclass Agent(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.pi = nn.Linear(4, 3)\n        self.v = nn.Linear(4, 1)\n\n"
            "    def forward(self, x, a):\n"
            "        log_probs = torch.log_softmax(self.pi(x), -1).gather(1, a.unsqueeze(1)).squeeze(1)\n"
            "        return self.v(x).squeeze(1), log_probs\n\n\nclass Trainer:\n    def __init__(self, agent):\n"
            "        self.agent = agent\n        self.optim = torch.optim.Adam(params=self.agent.parameters(), lr=1e-3)\n\n"
            "    def train_step(self, x, a, reward):\n        critique, log_probs = self.agent(x, a)\n")
_TRAINER_TAIL = ("        loss2 = ((reward - critique) ** 2).mean()\n"
                 "        self.critic_grad = torch.autograd.grad(loss2, self.agent.v.weight, retain_graph=True)[0]\n"
                 "        self.optim.zero_grad()\n        (loss1 + loss2).backward()\n        self.optim.step()\n\n\n"
                 "agent = Agent()\ntrainer = Trainer(agent)\n"
                 "trainer.train_step(torch.randn(8, 4), torch.randint(0, 3, (8,)), torch.randn(8))\n")


# An actor-critic network with a shared body, run by a worker whose gradients go to another copy: no optimizer here.
_SHARED = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
           "class ActorCritic(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
           "        self.body = nn.Linear(4, 16)\n        self.pi = nn.Linear(16, 2)\n        self.v = nn.Linear(16, 1)\n\n"
           "    def forward(self, x):\n        h = torch.relu(self.body(x))\n"
           "        return F.softmax(self.pi(h), dim=1), self.v(h)\n\n\n"
           "model = ActorCritic()\ns, a, ret = torch.randn(8, 4), torch.randint(0, 2, (8, 1)), torch.randn(8, 1)\n"
           "policy, value = model(s)\nlog_prob = policy.gather(1, a).log()\n")
# The value head's gradient from the value loss alone: what it should get.
_SHARED_CHECK = ("critic_grad = torch.autograd.grad(0.5 * (ret - value).pow(2).mean(), model.v.weight, "
                 "retain_graph=True)[0]\nloss.backward()\n")


class AdvantageThroughTrainedNetwork(Rule):
    code = "GS422"
    name = "advantage-through-trained-network"
    severity = Severity.WARNING
    summary = ("A policy-gradient term `log_prob * advantage` whose advantage keeps a graph through the critic: "
               "backward also trains the critic with the policy loss.")
    events = (AdvantageGraphEvent,)
    what_it_does = ("Flags the advantage (a difference such as `returns - values`, `r + gamma * v(s2) - v(s)`, and what "
                    "is normalised from it) when it multiplies, in grad mode, a log-probability from a "
                    "`torch.distributions` object (`dist.log_prob(a)`, or the ratio `exp(log_prob - old_log_prob)` "
                    "of PPO) and its graph runs through a module an optimizer trains: the value network of an "
                    "actor-critic, A2C or PPO update without `.detach()` on the advantage. Where no optimizer in view "
                    "trains the network (a worker whose gradients go to a shared copy, as in A3C and ACER), an "
                    "advantage through the same module the log-probability runs through (an actor-critic with one "
                    "body for both heads) is flagged too: the term is there to train that module. The finding stands "
                    "on the policy-gradient term, where `.detach()` goes. Advantages computed under "
                    "`torch.no_grad()`, detached, or from networks no optimizer trains and the policy does not run "
                    "through are left alone, and so "
                    "are products that are not a log-probability times such a difference (the entropy term, SAC's "
                    "`alpha * log_prob`).")
    why_bad = ("In the policy-gradient estimator `-(log_prob * A).mean()` the advantage `A` is a weight, a constant: the "
               "gradient belongs to the policy. With its graph, backward also differentiates `A` and sends "
               "`-log_prob * dA/dtheta` into the critic, added to the value loss's gradient: the critic is trained "
               "towards whatever makes the policy loss small (in A2C, raising `V(s)` where `log_prob` is large). No "
               "error is raised; the critic simply learns something else. Every reference implementation detaches "
               "the advantage or computes it under `torch.no_grad()`.")
    example = ("adv = returns - critic(s).squeeze(-1)\n"
               "loss = -(dist.log_prob(a) * adv).mean() + 0.5 * adv.pow(2).mean()")
    use_instead = ("adv = returns - critic(s).squeeze(-1)\n"
                   "loss = -(dist.log_prob(a) * adv.detach()).mean() + 0.5 * adv.pow(2).mean()")
    fix_safety = ("No automatic fix: `.detach()` belongs on the advantage in the policy term only (the value loss "
                  "still needs the graph), which is for the author to place; it changes the gradients, which is "
                  "the point.")
    references = ("https://pytorch.org/docs/stable/distributions.html#score-function",
                  "http://incompleteideas.net/book/RLbook2020.pdf#page=353")
    valid = (
        # The same trainer with the baseline detached in the policy term.
        Valid(_TRAINER + "        loss1 = ((reward - critique.detach()) * log_probs).mean()\n" + _TRAINER_TAIL),
        # The advantage detached in the policy term; the value loss keeps its graph.
        Valid(_HEAD + "adv = returns - values\nloss = -(dist.log_prob(a) * adv.detach()).mean() + "
              "0.5 * adv.pow(2).mean()\nopt.zero_grad()\nloss.backward()\nopt.step()\n"),
        # The advantage computed without gradient (PPO's GAE under no_grad), the ratio of log-probabilities.
        Valid(_HEAD + "old_logp = dist.log_prob(a).detach()\nwith torch.no_grad():\n    adv = returns - values\n"
              "ratio = torch.exp(dist.log_prob(a) - old_logp)\n"
              "loss = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean()\n"
              "opt.zero_grad()\nloss.backward()\nopt.step()\n"),
        # REINFORCE: returns from data, no critic.
        Valid(_HEAD + "loss = -(dist.log_prob(a) * (returns - returns.mean())).mean()\n"
              "opt.zero_grad()\nloss.backward()\nopt.step()\n"),
        # SAC-style `alpha * log_prob`: a temperature, not an advantage.
        Valid(_HEAD + "log_alpha = torch.zeros(1, requires_grad=True)\n"
              "alpha_opt = torch.optim.Adam([log_alpha], lr=1e-3)\n"
              "loss = (log_alpha.exp() * dist.log_prob(a) - values).mean()\n"
              "opt.zero_grad()\nloss.backward()\nopt.step()\n"),
        # The shared actor-critic network below with the advantage detached, or computed without gradient.
        Valid(_SHARED + "adv = (ret - value).detach()\n"
              "loss = -(log_prob * adv).mean() + 0.5 * (ret - value).pow(2).mean()\n" + _SHARED_CHECK),
        Valid(_SHARED + "with torch.no_grad():\n    adv = ret - model(s)[1]\n"
              "loss = -(log_prob * adv).mean() + 0.5 * (ret - value).pow(2).mean()\n" + _SHARED_CHECK),
        # The critic is a frozen network no optimizer trains (a fixed baseline).
        Valid("import torch\nimport torch.nn as nn\nfrom torch.distributions import Normal\n\n"
              "actor = nn.Linear(4, 2)\nbaseline = nn.Linear(4, 1)\n"
              "opt = torch.optim.Adam(actor.parameters(), lr=1e-3)\n"
              "s, returns = torch.randn(8, 4), torch.randn(8, 1)\ndist = Normal(actor(s), 1.0)\n"
              "a = dist.sample()\nadv = returns - baseline(s)\n"
              "loss = -(dist.log_prob(a) * adv).mean()\nopt.zero_grad()\nloss.backward()\nopt.step()\n"),
    )
    invalid = (
        # REINFORCE with a critic baseline from one agent network handed to a trainer (the log-probabilities are
        # the code's `log_probs`; encode-attend-navigate-pytorch's trainer).
        Invalid(_TRAINER + "        loss1 = ((reward - critique) * log_probs).mean()\n" + _TRAINER_TAIL,
                line=23, runtime="silent: not torch.allclose(agent.v.weight.grad, trainer.critic_grad)"),
        # A2C with one optimizer over actor and critic: the policy term trains the critic too.
        Invalid(_HEAD + "adv = returns - values\nloss = -(dist.log_prob(a) * adv).mean() + 0.5 * adv.pow(2).mean()\n"
                + _CHECK + "opt.step()\n",
                line=14, runtime="silent: not torch.allclose(critic.weight.grad, critic_grad)"),
        # PPO's clipped objective with the advantage from the live critic (the ratio keeps the log-probability).
        Invalid(_HEAD + "old_logp = dist.log_prob(a).detach()\nadv = returns - values\n"
                "ratio = torch.exp(dist.log_prob(a) - old_logp)\n"
                "loss = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean() + 0.5 * adv.pow(2).mean()\n"
                + _CHECK + "opt.step()\n",
                line=16, runtime="silent: not torch.allclose(critic.weight.grad, critic_grad)"),
        # In a class: the critic's value of the next state in a TD advantage, all with one optimizer.
        Invalid("import torch\nimport torch.nn as nn\nfrom torch.distributions import Normal\n\n\n"
                "class Agent:\n    def __init__(self):\n        self.actor = nn.Linear(4, 1)\n"
                "        self.critic = nn.Linear(4, 1)\n"
                "        self.opt = torch.optim.Adam([*self.actor.parameters(), *self.critic.parameters()], lr=1e-3)\n\n"
                "    def learn(self, s, a, r, s2):\n        dist = Normal(self.actor(s), 1.0)\n"
                "        delta = r + 0.99 * self.critic(s2) - self.critic(s)\n"
                "        loss = -(dist.log_prob(a) * delta).mean() + delta.pow(2).mean()\n"
                "        self.critic_grad = torch.autograd.grad(delta.pow(2).mean(), self.critic.weight, "
                "retain_graph=True)[0]\n"
                "        self.opt.zero_grad()\n        loss.backward()\n        self.opt.step()\n\n\n"
                "agent = Agent()\ncritic_weight = agent.critic.weight\n"
                "agent.learn(torch.randn(8, 4), torch.randn(8, 1), torch.randn(8, 1), torch.randn(8, 4))\n"
                "grad = critic_weight.grad\n",
                line=15, runtime="silent: not torch.allclose(grad, agent.critic_grad)"),
        # A worker's actor-critic with one body for both heads (ACER, Kaixhin/ACER@3ddbb8a3): no optimizer in view
        # trains it (the gradients go to a shared copy), but the log-probability runs through the same network.
        Invalid(_SHARED + "adv = ret - value\nloss = -(log_prob * adv).mean() + 0.5 * (ret - value).pow(2).mean()\n"
                + _SHARED_CHECK,
                line=23, runtime="silent: not torch.allclose(model.v.weight.grad, critic_grad)"),
    )

    def check(self, event: AdvantageGraphEvent, report) -> None:
        names = [name for _, name in event.shared if name]
        who = "this module" if names[:1] == ["self"] else f"`{names[0]}`" if names else "a trained network"
        message = (f"This advantage keeps a graph through {who}, so the policy-gradient term trains it too. Detach "
                   f"the advantage where it weights `log_prob`.")
        # The finding goes on the policy-gradient term, where `.detach()` goes: the advantage itself often feeds the
        # value loss too (`0.5 * adv.pow(2)`), which needs its graph. Where it was made is in `related`.
        made = event.advantage
        related = []
        if made.path is None and isinstance(made.line, int) and made.line != report.source.span(event.node)[0]:
            related.append(Note(made.line, made.column, "the advantage, made here with the network's graph"))
        report.add(self, event.node, message, related=related)
