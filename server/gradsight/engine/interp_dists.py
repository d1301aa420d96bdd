"""`torch.distributions` objects in the abstract interpreter.

RL and variational code computes its losses through distributions: `dist = Categorical(logits=actor(s))`,
`logp = dist.log_prob(a)`, `a = Normal(mu, std).rsample()`. Without them every such value was UNKNOWN, and every
rule silent on it. A distribution is a `DistVal`: its class and the values of the tensors it was built from
(wrapped distributions' tensors included: `Independent(Normal(mu, std), 1)`). What torch 2.13 does, checked for
Normal, Categorical, Bernoulli, Beta, Independent and TransformedDistribution (`tests/test_distributions.py`):

* `sample()` / `sample_n()` run under `torch.no_grad()` (or draw integers): the result never requires grad,
  whatever the parameters. Certain.
* `log_prob(x)`, `rsample()`, `cdf(x)`, `icdf(x)` are differentiable functions of every parameter (and of `x`):
  the result requires grad when one of them does, in grad mode (a `tensor_op` over them).
* `entropy()` and the properties (`mean`, `stddev`, `variance`, `mode`, `probs`, `logits`, ...) may depend on
  some parameters only (`Normal(mu, s).entropy()` depends on `s` alone): they require grad for certain only when
  every parameter does; otherwise "maybe".
* A distribution built with grad mode off may already hold tensors without history (`Categorical` normalises its
  logits at construction): its parameters are then unknown.

Nothing here is a guess about user code: the class must resolve to a `torch.distributions` qualified name.
"""

from __future__ import annotations

import ast

from typing import Optional

from .events import AdvantageGraphEvent
from .state import State
from .values import UNKNOWN, DistVal, Fact, ParentOf, PyVal, TensorVal, Tri, Value

# Names under `torch.distributions` that are not distributions (transforms, constraints, registries, helpers).
_NOT_DISTRIBUTIONS = frozenset({"Distribution", "ExponentialFamily", "Transform", "ComposeTransform",
                                "constraints", "constraint_registry", "transforms", "kl", "utils"})
# Differentiable functions of every parameter (and of the value given).
_ALL_PARAMS = frozenset({"log_prob", "rsample", "cdf", "icdf", "rsample_n"})
# Functions or properties of some of the parameters.
_SOME_PARAMS = frozenset({"entropy", "mean", "stddev", "variance", "mode", "probs", "logits", "loc", "scale",
                          "concentration", "concentration0", "concentration1", "rate", "covariance_matrix",
                          "scale_tril", "precision_matrix", "perplexity"})
_SAMPLE = frozenset({"sample", "sample_n", "enumerate_support"})
# Methods that return the same distribution, reshaped or moved.
_SAME = frozenset({"expand", "to"})
# Ops that keep a log-probability or an advantage what it is when it is their only input with a graph: shape ops,
# casts, reductions, negation, `exp` (a probability ratio), clamping, and arithmetic with values without gradient.
_PG_KEEPS = frozenset({"view", "view_as", "reshape", "squeeze", "unsqueeze", "flatten", "expand", "expand_as", "float",
                       "double", "half", "to", "type", "type_as", "contiguous", "__getitem__", "gather", "sum", "mean",
                       "__neg__", "neg", "exp", "clamp", "clip", "__mul__", "__rmul__", "mul", "__truediv__", "div",
                       "__add__", "__radd__", "add", "__sub__", "__rsub__", "sub", "squeeze_", "unsqueeze_"})
_MUL = frozenset({"__mul__", "__rmul__", "mul", "multiply"})
_SUB = frozenset({"__sub__", "__rsub__", "sub", "subtract"})
KL_FUNCS = frozenset({"torch.distributions.kl_divergence", "torch.distributions.kl.kl_divergence"})


def is_distribution(qual: str) -> bool:
    """`torch.distributions.Normal`, `torch.distributions.normal.Normal`: a distribution class of torch."""
    if not qual.startswith("torch.distributions."):
        return False
    parts = qual.split(".")
    last = parts[-1]
    return last[:1].isupper() and last not in _NOT_DISTRIBUTIONS and not last.endswith("Transform") \
        and "transforms" not in parts and "constraints" not in parts


def _params(values) -> tuple:
    out = []
    for v in values:
        if isinstance(v, DistVal):
            out.extend(v.params)
        elif isinstance(v, TensorVal) or v is UNKNOWN:
            out.append(v)
    return tuple(out)


class DistsMixin:
    def make_distribution(self, qual: str, args, kwargs, node: ast.Call, state: State) -> Value:
        values = [v for _, v in args] + [v for k, (_, v) in kwargs.items() if k != "validate_args"]
        params = _params(values)
        if state.grad is not Tri.YES:
            # Built with grad mode off or unknown: some classes compute their parameters at construction.
            params = tuple(p if isinstance(p, TensorVal) and p.rg is Tri.NO else UNKNOWN for p in params)
        short = qual.rsplit(".", 1)[-1]
        return DistVal(short, params, self.expr_fact(node, "distribution"))

    def distribution_kl(self, args, node: ast.Call, state: State) -> Value:
        """`kl_divergence(p, q)`: a differentiable function of both distributions' parameters."""
        params = _params(v for _, v in args)
        if not params or not all(isinstance(v, DistVal) for _, v in args[:2]) or len(args) < 2:
            return UNKNOWN
        return self._over_params("kl_divergence", params, args[0][0], node, state, every=False)

    def distribution_method(self, dist: DistVal, func: ast.Attribute, node: ast.Call, state: State) -> Value:
        args, kwargs = self.eval_args(node, state)
        name = func.attr
        if name in _SAMPLE:
            return TensorVal(rg=Tri.NO, leaf=Tri.YES, origin=self.expr_fact(node, "from"),
                             nograd=self.fact(node, "sampled", expr=self.seg(node)), storage=self.site(node))
        if name in _SAME:
            return dist
        if name in _ALL_PARAMS or name in _SOME_PARAMS:
            extra = tuple(v for _, v in list(args) + list(kwargs.values()) if isinstance(v, TensorVal) or v is UNKNOWN)
            if name in ("rsample", "rsample_n", "entropy", "perplexity"):
                extra = ()  # their arguments are shapes
            val = self._over_params(name, dist.params + extra, func.value, node, state, every=name in _ALL_PARAMS)
            if name == "log_prob" and isinstance(val, TensorVal) and val.rg is Tri.YES:
                val = val.with_(logp=self.expr_fact(node, "log-prob"))
            return val
        return UNKNOWN

    def distribution_property(self, dist: DistVal, node: ast.Attribute, state: State) -> Value:
        if node.attr in _SOME_PARAMS:
            return self._over_params(node.attr, dist.params, node.value, node, state, every=False)
        if node.attr in ("batch_shape", "event_shape", "support", "has_rsample", "arg_constraints"):
            return PyVal()
        return UNKNOWN

    def _over_params(self, name: str, params: tuple, recv: ast.AST, node: ast.AST, state: State,
                     every: bool) -> Value:
        if not params:
            return UNKNOWN
        result = self.tensor_op(f"torch.distributions.Distribution.{name}", [(recv, p) for p in params], node, state)
        if not every and isinstance(result, TensorVal) and result.rg is Tri.YES \
                and not all(isinstance(p, TensorVal) and p.rg is Tri.YES for p in params):
            # It may depend only on the parameters without history (`Normal(mu, s).entropy()` on `s`).
            result = result.with_(rg=Tri.MAYBE, leaf=Tri.MAYBE)
        return result

    def pg_markers(self, short: str, args, node: ast.AST, state: State) -> tuple[Optional[Fact], Optional[Fact]]:
        """The `logp` and `adv` markers of an op's result that requires grad (see `TensorVal.logp`/`.adv`), and the
        policy-gradient check: a product of a log-probability and an advantage whose graph runs through a module an
        optimizer trains (`AdvantageGraphEvent`, GS422). A log-probability is a distribution's `log_prob`, or (the
        code's own word for it) a name such as `log_probs`, `logp` or `log_pi` bound to a tensor that requires grad."""
        grad = [(n, v) for n, v in args if isinstance(v, TensorVal) and v.rg is not Tri.NO]
        if not grad:
            return None, None
        logps = [(n, v) for n, v in grad if v.logp is not None or (v.rg is Tri.YES and _logp_name(n))]
        advs = [v for n, v in grad if v.adv is not None and v.logp is None and not _logp_name(n)]
        if short in _MUL and len(grad) == 2 and len(logps) == 1 and len(advs) == 1:
            if self.reporting and state.grad is Tri.YES:
                self._check_pg_term(node, logps[0], advs[0])
            return None, None
        if short in _MUL and len(grad) == 2 and len(logps) == 1 and not advs:
            # A weighted log-probability (`rho * log_prob`, an importance weight with a graph) is still the
            # policy-gradient term's log-probability: the advantage that multiplies it next is checked the same way.
            n, v = logps[0]
            return v.logp or self.expr_fact(n, "log-prob"), None
        if len(grad) == 1:
            n, v = grad[0]
            if short in _SUB and v.logp is None and v.adv is None and not _logp_name(n):
                if self._trained_graph(v):
                    return None, self.expr_fact(node, "advantage")  # `returns - values`
                if self._module_graph(v):
                    return None, self.expr_fact(node, "advantage-of-network")
            if short in _PG_KEEPS:
                return v.logp, v.adv
            return None, None
        if short in _SUB and not logps and any(self._trained_graph(v) for _, v in grad):
            # `r + gamma * v(s2) - v(s)`, `adv - adv.mean()`: a difference through a trained module.
            return None, advs[0].adv if advs else self.expr_fact(node, "advantage")
        if short in _SUB and not logps and any(self._module_graph(v) for _, v in grad):
            # The same through a module no optimizer in view trains (a worker's copy of a shared model): only a
            # log-probability through the same module is evidence enough (`_check_pg_term`).
            return None, advs[0].adv if advs else self.expr_fact(node, "advantage-of-network")
        if short in ("__truediv__", "div") and advs and not logps:
            return None, advs[0].adv  # a normalised advantage, `(adv - adv.mean()) / (adv.std() + 1e-8)`
        return None, None

    def _check_pg_term(self, node: ast.AST, logp_arg, adv: TensorVal) -> None:
        """GS422's event for `log_prob * advantage` in grad mode. An advantage through a module an optimizer trains
        (`advantage`) is reported as it is; one through modules no optimizer in view trains (`advantage-of-network`)
        only when the log-probability's graph runs through one of the same modules (an actor-critic network with a
        shared body): the term is there to train that module, so its backward also runs through the advantage."""
        n, v = logp_arg
        # The outermost modules first (a sub-module's site has a `ParentOf` entry for its parent).
        outer = sorted(adv.psrc, key=lambda s: (any(ParentOf(s, o) in self.optimized_modules
                                                    for o in adv.psrc), repr(s)))
        if adv.adv.kind == "advantage":
            shared = tuple((site, self.module_name(site)) for site in outer if self.is_trained(site))
            if not (shared or adv.psrc_partial):
                return
        else:
            shared = tuple((site, self.module_name(site)) for site in outer if site in v.psrc)
            if not shared:
                return
        self.emit(AdvantageGraphEvent(node, adv.adv, v.logp or self.expr_fact(n, "log-prob"), shared))

    def _module_graph(self, v: TensorVal) -> bool:
        """A graph through modules the analysis knows (`psrc`), trained in view or not."""
        return v.rg is Tri.YES and v.leaf is Tri.NO and bool(v.psrc)

    def _trained_graph(self, v: TensorVal) -> bool:
        """A graph through a module an optimizer in view trains, or the output of an object whose parameters an
        optimizer takes (`runs-trained-model`, evidence of use)."""
        if v.rg is not Tri.YES or v.leaf is not Tri.NO:
            return False
        if v.psrc and any(self.is_trained(s) for s in v.psrc):
            return True
        return v.psrc_partial and v.origin is not None and v.origin.kind == "runs-trained-model"


_LOGP_WORDS = frozenset({"log_prob", "log_probs", "logprob", "logprobs", "logp", "logps", "log_p", "log_pi", "logpi",
                         "log_pis", "log_prob_a", "action_log_probs", "action_log_prob", "log_probs_a",
                         "act_log_probs", "log_likelihood", "log_likelihoods"})


def _logp_name(node) -> bool:
    """The code calls it a log-probability: `log_probs`, `self.log_pi`, `action_log_probs`."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return name is not None and name.lower() in _LOGP_WORDS
