from __future__ import annotations

import ast

from ..engine.astwalk import walk
from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid

_OFF = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                  "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode"})
_STACK = frozenset({"torch.stack", "torch.cat", "torch.concat", "torch.tensor", "torch.as_tensor"})


def _off(q, node: ast.AST) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return (q.qualname(target) or "") in _OFF


def _self_attr(node: ast.AST):
    """`self.x` -> "x"."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _has_log_prob(e: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "log_prob"
               for n in walk(e))


def _times(e: ast.AST, name: str) -> bool:
    """`name * a`, `-name * a`, `a * name` somewhere in `e`: the policy-gradient term."""
    def is_name(x):
        if isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.USub):
            x = x.operand
        return isinstance(x, ast.Name) and x.id == name
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) and (is_name(n.left) or is_name(n.right))
               for n in walk(e))


class LogProbStoredWithoutGrad(Rule):
    code = "GS110"
    name = "log-prob-stored-without-grad"
    severity = Severity.WARNING
    summary = ("An action's `log_prob` is stored for a policy-gradient loss under `torch.no_grad()`: the loss "
               "`-log_prob * advantage` built from it has no gradient.")
    events = (FileEvent,)
    what_it_does = ("Flags `self.log_probs.append(dist.log_prob(action))` (also with `.numpy()`/`.item()`/"
                    "`.detach()`) inside `with torch.no_grad():` or a `@torch.no_grad()` method, when another method "
                    "of the class builds a loss by multiplying the stored values (`for log_prob, a in "
                    "zip(self.log_probs, adv): loss += -log_prob * a`, `-torch.stack(self.log_probs) * returns`): the "
                    "REINFORCE / actor-critic update. Storing old log-probabilities for a PPO ratio is a different "
                    "use and is left alone.")
    why_bad = ("The policy-gradient estimator differentiates `log pi(a|s)` with respect to the policy's "
               "parameters; the value stored under `torch.no_grad()` has no graph back to them. A loss made of such "
               "terms raises \"element 0 of tensors does not require grad\" on `backward()`; beside other terms "
               "it silently gives the policy no gradient from the returns.")
    example = ("def act(self, state):\n    with torch.no_grad():\n        dist = self.policy(state)\n"
               "        action = dist.sample()\n        self.log_probs.append(dist.log_prob(action))\n"
               "    return action\n\n"
               "def loss(self, returns):\n    return sum(-lp * r for lp, r in zip(self.log_probs, returns))")
    use_instead = ("def act(self, state):\n    dist = self.policy(state)       # grad mode on: the log-prob keeps its graph\n"
                   "    action = dist.sample()\n    self.log_probs.append(dist.log_prob(action))\n"
                   "    return action.detach()")
    fix_safety = ("There is no automatic fix: compute the stored log-probability with grad mode on (sampling the "
                  "action needs no graph; `dist.sample()` has none), or recompute it from the stored states and "
                  "actions when the loss is built.")
    references = ("https://pytorch.org/docs/stable/distributions.html#score-function",
                  "https://pytorch.org/docs/stable/generated/torch.no_grad.html")

    _CLASS = ("import torch\nfrom torch.distributions import Categorical\n\n\nclass Agent:\n"
              "    def __init__(self):\n        self.policy = torch.nn.Linear(4, 2)\n        self.log_probs = []\n\n")
    _LOOP = ("\n    def loss(self, returns):\n        loss = torch.tensor(0.0)\n"
             "        for log_prob, r in zip(self.log_probs, returns):\n            loss += -log_prob * r\n"
             "        return loss\n\n\nagent = Agent()\nfor _ in range(3):\n    agent.act(torch.randn(4))\n")
    valid = (
        # The fix: the log-prob computed with grad mode on, only the sampled action without a graph.
        Valid(_CLASS + "    def act(self, state):\n        dist = Categorical(logits=self.policy(state))\n"
              "        action = dist.sample()\n        self.log_probs.append(dist.log_prob(action))\n"
              "        return action.item()\n" + _LOOP + "agent.loss([1.0, 0.5, 0.2]).backward()\n"),
        # PPO: old log-probs stored without grad, used in the ratio's denominator.
        Valid(_CLASS + "    def act(self, state):\n        with torch.no_grad():\n"
              "            dist = Categorical(logits=self.policy(state))\n            action = dist.sample()\n"
              "            self.log_probs.append(dist.log_prob(action))\n        self.states.append(state)\n"
              "        self.actions.append(action)\n        return action.item()\n\n"
              "    def loss(self, adv):\n        old = torch.stack(self.log_probs)\n"
              "        new = Categorical(logits=self.policy(torch.stack(self.states))).log_prob(torch.stack(self.actions))\n"
              "        ratio = torch.exp(new - old)\n"
              "        return -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean()\n\n\n"
              "agent = Agent()\nagent.states, agent.actions = [], []\nfor _ in range(3):\n    agent.act(torch.randn(4))\n"
              "agent.loss(torch.randn(3)).backward()\n"),
    )
    invalid = (
        # SLM-Lab's REINFORCE before its fix: acting under `no_grad` and storing the log-prob as NumPy.
        Invalid(_CLASS + "    def act(self, state):\n        with torch.no_grad():\n"
                "            dist = Categorical(logits=self.policy(state))\n            action = dist.sample()\n"
                "            self.log_probs.append(dist.log_prob(action).numpy())\n        return action.item()\n"
                + _LOOP + "agent.loss([1.0, 0.5, 0.2]).backward()\n",
                line=14, runtime="raises: does not require grad", also=(27,)),
        # A `@torch.no_grad()` method, the loss stacked.
        Invalid(_CLASS + "    @torch.no_grad()\n    def act(self, state):\n"
                "        dist = Categorical(logits=self.policy(state))\n        action = dist.sample()\n"
                "        self.log_probs.append(dist.log_prob(action))\n        return action.item()\n\n"
                "    def loss(self, returns):\n        return (-torch.stack(self.log_probs) * returns).sum()\n\n\n"
                "agent = Agent()\nfor _ in range(3):\n    agent.act(torch.randn(4))\n"
                "agent.loss(torch.tensor([1.0, 0.5, 0.2])).backward()\n",
                line=14, runtime="raises: does not require grad", also=(14,)),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        # A cheap test of what the file mentions first: this runs on every keystroke.
        attrs = q.attrs
        if "log_prob" not in attrs or "append" not in attrs or not ({"no_grad", "inference_mode"} & attrs):
            return
        # Only `self.x.append(...log_prob(...)...)` calls are candidates; the rest of the class is read after one.
        for store in q.calls():
            f = store.func
            if not (isinstance(f, ast.Attribute) and f.attr == "append" and len(store.args) == 1
                    and _self_attr(f.value) and _has_log_prob(store.args[0])):
                continue
            region, node = None, q.parent(store)
            while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                                             ast.ClassDef)):
                if isinstance(node, (ast.With, ast.AsyncWith)) and any(_off(q, i.context_expr) for i in node.items):
                    region = node
                node = q.parent(node)
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            region = region or next((d for d in node.decorator_list if _off(q, d)), None)
            cls = q.parent(node)
            if region is None or not isinstance(cls, ast.ClassDef):
                continue
            methods = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
            attr = _self_attr(f.value)
            use = self._pg_use(q, methods, attr)
            if use is None:
                continue
            report.add(self, store,
                       "This log-prob is stored without grad: the policy-gradient loss built from it has no "
                       f"gradient. Compute what goes into `self.{attr}` with grad mode on.",
                       related=[Note(region.lineno, region.col_offset + 1, "grad mode is off here"),
                                Note(use.lineno, use.col_offset + 1, "the loss uses it here")])

    @staticmethod
    def _pg_use(q, methods: list, attr: str):
        """Where another method multiplies the stored values into a loss: a loop over `self.<attr>` (or a zip
        with it) whose body multiplies the loop's name, or `torch.stack(self.<attr>)` times something. None when a
        method also takes `exp(... - ...)` of them (a PPO ratio)."""
        found = None
        for fn in methods:
            for n in walk(fn):
                if isinstance(n, (ast.For, ast.comprehension)):
                    it = n.iter
                    seqs = it.args if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) \
                        and it.func.id == "zip" else [it]
                    if not any(_self_attr(s) == attr for s in seqs):
                        continue
                    i = next(k for k, s in enumerate(seqs) if _self_attr(s) == attr)
                    tgt = n.target
                    if isinstance(tgt, ast.Tuple) and len(seqs) > 1 and i < len(tgt.elts):
                        tgt = tgt.elts[i]
                    if not isinstance(tgt, ast.Name):
                        continue
                    body = n.body if isinstance(n, ast.For) else []
                    if isinstance(n, ast.comprehension):
                        parent = next((p for p in walk(fn) if isinstance(p, (ast.GeneratorExp, ast.ListComp))
                                       and n in p.generators), None)
                        body = [parent.elt] if parent is not None else []
                    if any(_times(b, tgt.id) for b in body):
                        found = found or n
                elif isinstance(n, ast.Call) and (q.qualname(n.func) or "") in _STACK and n.args \
                        and _self_attr(n.args[0]) == attr:
                    if n.lineno and found is None:
                        found = n if _times_call(fn, n) else found
                elif isinstance(n, ast.Call) and (q.qualname(n.func) or "") == "torch.exp" and n.args \
                        and isinstance(n.args[0], ast.BinOp) and isinstance(n.args[0].op, ast.Sub):
                    names = {m.attr for m in walk(n.args[0]) if isinstance(m, ast.Attribute)}
                    if attr in names:
                        return None
        return found


def _times_call(fn: ast.AST, call: ast.Call) -> bool:
    """`torch.stack(self.x) * r` or `-torch.stack(self.x) * r` (or a name bound to the stack, multiplied)."""
    for n in walk(fn):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
            for side in (n.left, n.right):
                if isinstance(side, ast.UnaryOp) and isinstance(side.op, ast.USub):
                    side = side.operand
                if side is call:
                    return True
        if isinstance(n, ast.Assign) and n.value is call and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            if _times(fn, n.targets[0].id):
                return True
    return False
