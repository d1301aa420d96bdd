from __future__ import annotations

import ast

from ..engine.astwalk import walk
from ..engine.query import FileEvent
from ..findings import Severity
from ._syntax import own_nodes
from .base import Invalid, Rule, Valid

_REDUCE = frozenset({"mean", "sum"})
# Calls an input passes through on its way into the network: containers and shape changes.
_PASS = frozenset({"torch.cat", "torch.stack", "torch.concat", "torch.concatenate", "torch.hstack"})
_DETACH_CHAIN = frozenset({"detach", "clone", "float", "contiguous"})


def _detached_call_output(e: ast.AST, outputs: set) -> bool:
    """`a.detach()`, `a.clone().detach()`, `a.detach().clone()` of a name `a` bound from a call (a network's output)
    or of a call itself."""
    seen_detach = False
    while isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in _DETACH_CHAIN and not e.args:
        seen_detach = seen_detach or e.func.attr == "detach"
        e = e.func.value
    if not seen_detach:
        return False
    while isinstance(e, ast.Subscript):
        e = e.value
    # `outputs` None: any name (a first, cheap test before the function's assignments are known).
    return (isinstance(e, ast.Name) and (outputs is None or e.id in outputs)) or isinstance(e, ast.Call)


def _strip_reduction(e: ast.AST, q):
    """`x.mean()`, `x.sum(dim=-1).mean()`, `torch.mean(x)` -> `x` (None when `e` is not a mean/sum)."""
    found = False
    while True:
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in _REDUCE:
            if q.qualname(e.func) in ("torch.mean", "torch.sum"):
                if len(e.args) != 1:
                    return None
                e = e.args[0]
            else:
                e = e.func.value
            found = True
        else:
            return e if found else None


class MaximizedOutputOnDetachedInput(Rule):
    code = "GS220"
    name = "maximized-output-on-detached-input"
    severity = Severity.WARNING
    summary = ("A loss `-Q(s, a.detach()).mean()` maximises a network's output on a detached output of another "
               "network: the network that made `a` gets no gradient, and the scoring network is pushed up instead.")
    events = (FileEvent,)
    what_it_does = ("Flags `a_d = a.detach()` (or `a.clone().detach()`) of a network's output `a` when the same "
                    "function feeds `a_d` (directly, in a dict, list or `torch.cat`) to another call, and backwards "
                    "a loss that is only the negated mean or sum of that call's output: the actor loss of DDPG/TD3/"
                    "P-DQN, or a generator loss `-D(G(z)).mean()`, with the action or sample detached.")
    why_bad = ("Maximising `Q(s, a)` trains the network that produced `a` through the gradient `dQ/da`. With `a` "
               "detached that path is cut: the producing network's parameters get no gradient (their optimizer "
               "steps on `None` gradients and leaves them unchanged), while the backward fills the scoring "
               "network's gradients with the direction that increases its own output.")
    example = ("action_args = model(obs, mode='actor')\naction_args_cp = action_args.clone().detach()\n"
               "q = model({'state': obs, 'action_args': action_args_cp}, mode='critic')\n"
               "actor_loss = -q.mean()\nactor_loss.backward()\nactor_optimizer.step()")
    use_instead = ("action_args = model(obs, mode='actor')\n"
                   "q = model({'state': obs, 'action_args': action_args}, mode='critic')\n"
                   "actor_loss = -q.mean()\nactor_loss.backward()\nactor_optimizer.step()")
    fix_safety = "There is no automatic fix: feed the undetached action (or sample) to the scoring network."
    references = ("https://arxiv.org/abs/1509.02971",
                  "https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html")

    _HEAD = ("import torch\nimport torch.nn as nn\n\ntorch.manual_seed(0)\nactor = nn.Linear(4, 2)\n"
             "critic = nn.Linear(6, 1)\nactor_opt = torch.optim.Adam(actor.parameters())\nobs = torch.randn(8, 4)\n\n\n")
    valid = (
        # DDPG's actor loss: the action keeps its graph.
        Valid(_HEAD + "def update():\n    action = actor(obs)\n    q = critic(torch.cat([obs, action], 1))\n"
              "    actor_loss = -q.mean()\n    actor_opt.zero_grad()\n    actor_loss.backward()\n    actor_opt.step()\n\n\n"
              "update()\nassert actor.weight.grad is not None\n"),
        # The critic's loss on a detached action (a regression, not a maximisation).
        Valid(_HEAD + "critic_opt = torch.optim.Adam(critic.parameters())\n\n\n"
              "def update(target):\n    action = actor(obs).detach()\n    q = critic(torch.cat([obs, action], 1))\n"
              "    critic_loss = (q - target).pow(2).mean()\n    critic_opt.zero_grad()\n    critic_loss.backward()\n"
              "    critic_opt.step()\n\n\nupdate(torch.randn(8, 1))\nactor(obs).pow(2).mean().backward()\n"),
        # A WGAN critic: the fake term (detached) is added, the real one negated.
        Valid(_HEAD + "critic_opt = torch.optim.Adam(critic.parameters())\n\n\n"
              "def update(real):\n    fake = actor(obs)\n    fake_d = fake.detach()\n"
              "    loss = -critic(real).mean() + critic(torch.cat([obs, fake_d], 1)).mean()\n"
              "    critic_opt.zero_grad()\n    loss.backward()\n    critic_opt.step()\n\n\nupdate(torch.randn(8, 6))\n"
              "actor(obs).pow(2).mean().backward()\n"),
        # AutoGAN's hinge GAN step: the score name holds the detached fakes' score for the discriminator loss, then
        # is rebound to the live fakes' score, which the generator loss maximises.
        Valid(_HEAD + "critic_opt = torch.optim.Adam(critic.parameters())\n\n\n"
              "def update(real):\n    critic_opt.zero_grad()\n    fake = actor(obs).detach()\n"
              "    fake_validity = critic(torch.cat([obs, fake], 1))\n"
              "    d_loss = torch.relu(1.0 - critic(real)).mean() + torch.relu(1.0 + fake_validity).mean()\n"
              "    d_loss.backward()\n    critic_opt.step()\n    actor_opt.zero_grad()\n    live = actor(obs)\n"
              "    fake_validity = critic(torch.cat([obs, live], 1))\n    g_loss = -torch.mean(fake_validity)\n"
              "    g_loss.backward()\n    actor_opt.step()\n\n\nupdate(torch.randn(8, 6))\n"
              "assert actor.weight.grad is not None\n"),
    )
    invalid = (
        # DI-engine's P-DQN before its fix: the continuous head's action detached before the Q network.
        Invalid(_HEAD + "def update():\n    action_args = actor(obs)\n    action_args_cp = action_args.clone().detach()\n"
                "    inputs = {'state': obs, 'action_args': action_args_cp}\n"
                "    q_value = critic(torch.cat([inputs['state'], inputs['action_args']], 1))\n"
                "    cont_loss = -q_value.sum(dim=-1).mean()\n    actor_opt.zero_grad()\n    cont_loss.backward()\n"
                "    actor_opt.step()\n\n\nupdate()\n",
                line=13, runtime="silent: actor.weight.grad is None", also=(13,)),
        # The same loss written in one expression.
        Invalid(_HEAD + "def update():\n    action = actor(obs)\n    a = action.detach()\n"
                "    loss = -torch.mean(critic(torch.cat([obs, a], 1)))\n    actor_opt.zero_grad()\n"
                "    loss.backward()\n    actor_opt.step()\n\n\nupdate()\n",
                line=13, runtime="silent: actor.weight.grad is None and critic.weight.grad is not None", also=(13,)),
        # The same GAN step without the rebinding: the generator loss maximises the detached fakes' score.
        Invalid(_HEAD + "critic_opt = torch.optim.Adam(critic.parameters())\n\n\n"
                "def update(real):\n    critic_opt.zero_grad()\n    fake = actor(obs).detach()\n"
                "    fake_validity = critic(torch.cat([obs, fake], 1))\n"
                "    d_loss = torch.relu(1.0 - critic(real)).mean() + torch.relu(1.0 + fake_validity).mean()\n"
                "    d_loss.backward()\n    critic_opt.step()\n    actor_opt.zero_grad()\n"
                "    fake_validity = critic(torch.cat([obs, fake], 1))\n    g_loss = -torch.mean(fake_validity)\n"
                "    g_loss.backward()\n    actor_opt.step()\n\n\nupdate(torch.randn(8, 6))\n",
                line=16, runtime="silent: actor.weight.grad is None"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        # A cheap test of what the file mentions first: this runs on every keystroke.
        attrs = q.attrs
        if "detach" not in attrs or "backward" not in attrs or not (_REDUCE & attrs):
            return
        # Only the functions holding `x = y.detach()` (of a name or a call) and a backward are walked.
        walked: dict = {}
        lines = report.source.lines
        for cand in q.assigns:
            if not (len(cand.targets) == 1 and isinstance(cand.targets[0], ast.Name)
                    and _detached_call_output(cand.value, None)):
                continue
            fn = q.enclosing_function(cand)
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or id(fn) in walked:
                continue
            text = "\n".join(lines[fn.lineno - 1:fn.end_lineno or fn.lineno])
            if "backward" not in text or "-" not in text:
                walked[id(fn)] = None
                continue
            nodes = walked[id(fn)] = own_nodes(fn)
            assigns = [n for n in nodes if isinstance(n, ast.Assign) and len(n.targets) == 1
                       and isinstance(n.targets[0], ast.Name)]
            outputs = {a.targets[0].id for a in assigns if isinstance(a.value, (ast.Call, ast.Subscript))}
            for st in sorted(assigns, key=lambda a: a.lineno):
                if not _detached_call_output(st.value, outputs):
                    continue
                name = st.targets[0].id
                if sum(1 for a in assigns if a.targets[0].id == name) != 1:
                    continue
                if self._maximised(q, nodes, assigns, name, st.lineno):
                    report.add(self, st,
                               f"`{name}` is detached, so the loss maximising the score of it gives its producer no "
                               f"gradient. Feed the undetached output to the scoring network.")

    @staticmethod
    def _maximised(q, nodes: list, assigns: list, name: str, line: int) -> bool:
        """A loss `L = -X.mean()` with `X` the output of a (non-torch) call that takes `name` (through dicts, lists,
        `torch.cat` and names bound to them), and `L.backward()`.

        A name read by a statement stands for the nearest assignment to it above that statement (its reaching
        definition in straight-line code): a score name rebound between the detached call and the loss (a GAN's
        `fake_validity = D(fake.detach())` for the discriminator, then `fake_validity = D(G(z))` for the
        generator) is the later value, and the loss maximises that one."""
        ordered = sorted(assigns, key=lambda a: (a.lineno, a.col_offset))
        pos = {id(a): (a.lineno, a.col_offset) for a in ordered}

        def reaching(var: str, at: tuple):
            last = None
            for a in ordered:
                if pos[id(a)] >= at:
                    break
                if a.targets[0].id == var:
                    last = a
            return last

        start = next(a for a in ordered if a.lineno == line and a.targets[0].id == name)
        carriers = {id(start)}

        def carried(e: ast.AST, at: tuple) -> bool:
            # A name in `e` whose reaching assignment is the detached name's or one carrying it.
            for m in walk(e):
                bound = reaching(m.id, at) if isinstance(m, ast.Name) else None
                if bound is not None and id(bound) in carriers:
                    return True
            return False

        for a in ordered:                                       # `inputs = {'a': name}`, `x = torch.cat([s, name])`
            if a.lineno > line and isinstance(a.value, (ast.Dict, ast.List, ast.Tuple, ast.Call)) \
                    and not (isinstance(a.value, ast.Call) and not (q.qualname(a.value.func) or "") in _PASS) \
                    and carried(a.value, pos[id(a)]):
                carriers.add(id(a))

        def scored(call: ast.AST, at: tuple) -> bool:
            if not isinstance(call, ast.Call) or (q.qualname(call.func) or "").startswith("torch."):
                return False
            return any(carried(e, at) for e in list(call.args) + [k.value for k in call.keywords])

        def output(e: ast.AST, at: tuple, depth: int = 0) -> bool:
            # `critic(...)`, `model(...)['logit']`, or a name bound to one.
            while isinstance(e, ast.Subscript):
                e = e.value
            if scored(e, at):
                return True
            if not (isinstance(e, ast.Name) and depth < 2):
                return False
            bound = reaching(e.id, at)
            return bound is not None and bound.lineno > line and output(bound.value, pos[id(bound)], depth + 1)

        losses = set()
        for a in ordered:
            v = a.value
            if a.lineno <= line or not (isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.USub)):
                continue
            inner = _strip_reduction(v.operand, q)
            if inner is not None and output(inner, pos[id(a)]):
                losses.add(a.targets[0].id)
        if not losses:
            return False
        return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward"
                   and isinstance(n.func.value, ast.Name) and n.func.value.id in losses for n in nodes)
