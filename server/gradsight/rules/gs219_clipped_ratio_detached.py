from __future__ import annotations

import ast

from ..engine.astwalk import walk
from ..engine.query import FileEvent
from ..findings import Severity
from ._syntax import own_nodes
from .base import Invalid, Rule, Valid

_CLAMPS = frozenset({"clamp", "clip"})
_MIN_MAX = frozenset({"torch.min", "torch.max", "torch.minimum", "torch.maximum", "torch.fmin", "torch.fmax"})


def _exp_of_difference(q, node: ast.AST) -> bool:
    """`torch.exp(a - b)` or `(a - b).exp()`: a probability ratio from two log-probabilities."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or node.func.attr != "exp":
        return False
    if node.args:
        return (q.qualname(node.func) == "torch.exp" and len(node.args) == 1
                and isinstance(node.args[0], ast.BinOp) and isinstance(node.args[0].op, ast.Sub))
    return isinstance(node.func.value, ast.BinOp) and isinstance(node.func.value.op, ast.Sub)


def _one_plus_minus(node: ast.AST, op) -> bool:
    """`1 - eps` (op Sub) or `1.0 + eps` (op Add)."""
    return (isinstance(node, ast.BinOp) and isinstance(node.op, op) and isinstance(node.left, ast.Constant)
            and node.left.value in (1, 1.0) and type(node.left.value) is not bool)


def _clipped(q, call: ast.Call, ratio: str) -> bool:
    """`torch.clamp(ratio, 1 - eps, 1 + eps)` or `ratio.clamp(1 - eps, 1 + eps)` (bounds positional or keywords)."""
    f = call.func
    if not isinstance(f, ast.Attribute) or f.attr not in _CLAMPS:
        return False
    args = list(call.args)
    if q.qualname(f) in ("torch.clamp", "torch.clip"):
        if not args:
            return False
        first = args.pop(0)
    else:
        first = f.value
    if not (isinstance(first, ast.Name) and first.id == ratio):
        return False
    kw = {k.arg: k.value for k in call.keywords}
    lo = args[0] if args else kw.get("min")
    hi = args[1] if len(args) > 1 else kw.get("max")
    return lo is not None and hi is not None and _one_plus_minus(lo, ast.Sub) and _one_plus_minus(hi, ast.Add)


class ClippedRatioDetached(Rule):
    code = "GS219"
    name = "clipped-ratio-detached"
    severity = Severity.WARNING
    summary = ("The probability ratio of a PPO clipped surrogate is detached (`torch.exp(logp - old_logp).detach()`): "
               "the surrogate has no gradient and the policy does not learn from it.")
    events = (FileEvent,)
    what_it_does = ("Flags `ratio = torch.exp(a - b).detach()` (or `(a - b).exp().detach()`) in a function that "
                    "clips that ratio to `[1 - eps, 1 + eps]` (`torch.clamp(ratio, 1 - eps, 1 + eps)`) and takes "
                    "the `torch.min`/`torch.max` of the clipped and unclipped terms: the PPO clipped surrogate "
                    "objective.")
    why_bad = ("The surrogate `min(ratio * A, clip(ratio, 1 - eps, 1 + eps) * A)` trains the policy only through "
               "`ratio = exp(log_prob - old_log_prob)`. Detached, the ratio is a constant, so the surrogate's "
               "gradient is zero: `backward()` raises \"element 0 of tensors does not require grad\" when it is the "
               "whole loss, and otherwise the policy is trained by the other terms alone (an entropy bonus), "
               "silently. What must be detached is the old log-probability (the denominator), not the ratio.")
    example = ("ratio = torch.exp(log_probs - old_log_probs).detach()\n"
               "surr = torch.min(ratio * adv, torch.clamp(ratio, 1 - eps, 1 + eps) * adv)\n"
               "loss = -surr.mean() - 0.01 * entropy")
    use_instead = ("ratio = torch.exp(log_probs - old_log_probs.detach())\n"
                   "surr = torch.min(ratio * adv, torch.clamp(ratio, 1 - eps, 1 + eps) * adv)\n"
                   "loss = -surr.mean() - 0.01 * entropy")
    fix_safety = ("There is no automatic fix: detach the old log-probabilities (or compute them under "
                  "`torch.no_grad()`) and keep the ratio's graph.")
    references = ("https://arxiv.org/abs/1707.06347",
                  "https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html")

    _HEAD = ("import torch\nfrom torch.distributions import Categorical\n\ntorch.manual_seed(0)\n"
             "policy, old_policy = torch.nn.Linear(4, 3), torch.nn.Linear(4, 3)\n"
             "obs, actions, advs = torch.randn(8, 4), torch.randint(0, 3, (8,)), torch.randn(8)\n\n\n")
    _ENTROPY_ONLY = ("torch.allclose(policy.weight.grad, torch.autograd.grad("
                     "-0.01 * Categorical(logits=policy(obs)).entropy().mean(), policy.weight)[0])")
    valid = (
        # The fix: the old log-probabilities are detached, the ratio keeps its graph.
        Valid(_HEAD + "def policy_loss(clip_eps=0.2):\n    dist = Categorical(logits=policy(obs))\n"
              "    log_probs = dist.log_prob(actions)\n"
              "    old_log_probs = Categorical(logits=old_policy(obs)).log_prob(actions).detach()\n"
              "    ratios = torch.exp(log_probs - old_log_probs)\n    sur_1 = ratios * advs\n"
              "    sur_2 = torch.clamp(ratios, 1.0 - clip_eps, 1.0 + clip_eps) * advs\n"
              "    return -torch.min(sur_1, sur_2).mean() - 0.01 * dist.entropy().mean()\n\n\n"
              "policy_loss().backward()\nassert not " + _ENTROPY_ONLY + "\n"),
        # A detached ratio for a statistic (the clip fraction), the surrogate on the ratio with its graph.
        Valid(_HEAD + "def policy_loss(clip_eps=0.2):\n    log_probs = Categorical(logits=policy(obs)).log_prob(actions)\n"
              "    with torch.no_grad():\n        old = Categorical(logits=old_policy(obs)).log_prob(actions)\n"
              "    ratio = (log_probs - old).exp()\n    seen = torch.exp(log_probs - old).detach()\n"
              "    clipfrac = ((seen - 1).abs() > clip_eps).float().mean()\n"
              "    surr = torch.min(ratio * advs, ratio.clamp(1 - clip_eps, 1 + clip_eps) * advs)\n"
              "    return -surr.mean(), clipfrac\n\n\nloss, _ = policy_loss()\nloss.backward()\n"),
        # A detached, clipped importance weight on the log-probability (no min of the two terms): the gradient
        # flows through `log_probs`.
        Valid(_HEAD + "def policy_loss(clip_eps=0.2):\n    log_probs = Categorical(logits=policy(obs)).log_prob(actions)\n"
              "    with torch.no_grad():\n        old = Categorical(logits=old_policy(obs)).log_prob(actions)\n"
              "    weight = torch.exp(log_probs - old).detach()\n"
              "    weight = torch.clamp(weight, 1 - clip_eps, 1 + clip_eps)\n"
              "    return -(weight * advs * log_probs).mean()\n\n\npolicy_loss().backward()\n"),
        # A detached factor of the other agents (HAPPO) multiplies the surrogate of a ratio with its graph.
        Valid(_HEAD + "def policy_loss(other_logp, other_old, clip_eps=0.2):\n"
              "    log_probs = Categorical(logits=policy(obs)).log_prob(actions)\n"
              "    with torch.no_grad():\n        old = Categorical(logits=old_policy(obs)).log_prob(actions)\n"
              "    factor = torch.exp(other_logp - other_old).detach()\n    ratio = torch.exp(log_probs - old)\n"
              "    surr = torch.min(factor * ratio * advs, factor * torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advs)\n"
              "    return -surr.mean()\n\n\npolicy_loss(torch.zeros(8), torch.zeros(8)).backward()\n"),
    )
    invalid = (
        # SLM-Lab's PPO before its fix: the ratio detached, an entropy bonus beside the surrogate.
        Invalid(_HEAD + "def policy_loss(clip_eps=0.2):\n    dist = Categorical(logits=policy(obs))\n"
                "    log_probs = dist.log_prob(actions)\n"
                "    old_log_probs = Categorical(logits=old_policy(obs)).log_prob(actions)\n"
                "    ratios = torch.exp(log_probs - old_log_probs).detach()\n    sur_1 = -ratios * advs\n"
                "    sur_2 = -torch.clamp(ratios, 1.0 - clip_eps, 1.0 + clip_eps) * advs\n"
                "    clip_loss = torch.mean(torch.max(sur_1, sur_2))\n"
                "    return clip_loss - 0.01 * dist.entropy().mean()\n\n\npolicy_loss().backward()\n",
                line=13, runtime="silent: " + _ENTROPY_ONLY),
        # The surrogate alone, the ratio written `(a - b).exp()`: the backward raises.
        Invalid(_HEAD + "def policy_loss(clip_eps=0.2):\n    log_probs = Categorical(logits=policy(obs)).log_prob(actions)\n"
                "    with torch.no_grad():\n        old = Categorical(logits=old_policy(obs)).log_prob(actions)\n"
                "    ratio = (log_probs - old).exp().detach()\n"
                "    surr = torch.min(ratio * advs, ratio.clamp(1 - clip_eps, 1 + clip_eps) * advs)\n"
                "    return -surr.mean()\n\n\npolicy_loss().backward()\n",
                line=13, runtime="raises: does not require grad", also=(18,)),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        # A cheap test of what the file mentions first: this runs on every keystroke.
        attrs = q.attrs
        if "detach" not in attrs or "exp" not in attrs or not (_CLAMPS & attrs):
            return
        # Only the functions holding a `ratio = torch.exp(a - b).detach()` are walked.
        walked: dict = {}
        for st in q.assigns:
            v = st.value
            if not (len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) and isinstance(v, ast.Call)
                    and isinstance(v.func, ast.Attribute) and v.func.attr == "detach" and not v.args
                    and _exp_of_difference(q, v.func.value)):
                continue
            fn = q.enclosing_function(st)
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            nodes = walked.setdefault(id(fn), own_nodes(fn))
            ratio = st.targets[0].id
            if self._surrogate(q, nodes, ratio, st):
                report.add(self, st,
                           "This ratio is detached, so the clipped surrogate built from it has no gradient and "
                           f"trains nothing. Keep `{ratio}`'s graph and detach the old log-probabilities instead.")

    @staticmethod
    def _surrogate(q, nodes: list, ratio: str, bound: ast.Assign) -> bool:
        """The function clips `ratio` to `[1 - eps, 1 + eps]` and takes the min/max of two terms that use it (and
        binds `ratio` only once)."""
        if sum(1 for n in nodes if isinstance(n, ast.Name) and n.id == ratio and isinstance(n.ctx, ast.Store)) != 1:
            return False
        clip = [n for n in nodes if isinstance(n, ast.Call) and n.lineno >= bound.lineno and _clipped(q, n, ratio)]
        if not clip:
            return False
        # One level of names: `sur_2 = -torch.clamp(ratio, ...) * adv`, then `torch.max(sur_1, sur_2)`.
        defs: dict = {}
        for n in nodes:
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                defs.setdefault(n.targets[0].id, []).append(n.value)

        def uses(e: ast.AST, want) -> bool:
            for m in walk(e):
                if want(m):
                    return True
                if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Load) and m.id != ratio:
                    if any(want(k) for d in defs.get(m.id, ()) for k in walk(d)):
                        return True
            return False

        def is_ratio(m) -> bool:
            return isinstance(m, ast.Name) and m.id == ratio

        def is_clip(m) -> bool:
            return any(m is c for c in clip)

        for n in nodes:
            if not (isinstance(n, ast.Call) and len(n.args) == 2 and (q.qualname(n.func) or "") in _MIN_MAX):
                continue
            a, b = n.args
            if (uses(a, is_clip) and uses(b, is_ratio)) or (uses(b, is_clip) and uses(a, is_ratio)):
                return True
        return False
