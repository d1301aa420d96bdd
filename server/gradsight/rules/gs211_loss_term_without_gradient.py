from __future__ import annotations

import ast
from typing import Optional

from ..engine.report import Note
from ..engine.query import FileEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


def _keyword_true(call: ast.Call, name: str) -> bool:
    return any(kw.arg == name and not (isinstance(kw.value, ast.Constant) and not kw.value.value)
               for kw in call.keywords)


def _gradish(expr: ast.AST, outputs: frozenset = frozenset()) -> bool:
    """An expression that evidently carries gradients: parameters, a value named as a loss or penalty, or one
    read from `outputs` (names bound to what a model passed in returned: `out = model(x)`)."""
    for n in ast.walk(expr):
        if isinstance(n, ast.Name) and n.id in outputs:
            return True
        if isinstance(n, ast.Attribute) and n.attr in ("weight", "bias"):
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("parameters",
                                                                                            "named_parameters"):
            return True
        if isinstance(n, ast.Name) and any(w in n.id.lower() for w in ("loss", "penalty")):
            return True
    return False


def _cut(expr: ast.AST, q, outputs: frozenset = frozenset(), shape_only: bool = False) -> Optional[str]:
    """How `expr` leaves autograd, when it certainly does: `.item()` / `float()` of a gradient-carrying value,
    or `torch.autograd.grad(...)` without `create_graph=True`. `shape_only`: whether it has that form at all."""
    core = expr.value if isinstance(expr, ast.Subscript) else expr
    if not isinstance(core, ast.Call):
        return None
    if q.call_name(core) == "torch.autograd.grad":
        return None if _keyword_true(core, "create_graph") else "`torch.autograd.grad` without `create_graph=True`"
    if isinstance(core.func, ast.Attribute) and core.func.attr == "item" and not core.args \
            and (shape_only or _gradish(core.func.value, outputs)):
        return "`.item()`"
    if isinstance(core.func, ast.Name) and core.func.id == "float" and len(core.args) == 1 \
            and (shape_only or _gradish(core.args[0], outputs)):
        return "`float()`"
    return None


def _cut_shaped(top) -> list:
    """A top-level statement's assignments whose value (or its subscript) calls `.item()`, `.grad(...)` or a plain
    name (`float(...)`, an imported `grad`): a superset of those `_cut` can answer for, by spelling alone, as
    (assignment, whether it calls a plain name other than `float`)."""
    out = []
    for n in top.assigns:
        core = n.value.value if type(n.value) is ast.Subscript else n.value
        if type(core) is ast.Call:
            f = core.func
            if type(f) is ast.Name:
                out.append((n, f.id != "float"))
            elif type(f) is ast.Attribute and f.attr in ("item", "grad"):
                out.append((n, False))
    return out


def _model_outputs(scope) -> frozenset:
    """Names a function binds to what one of its parameters returns when called (`out = model(x)`): in a
    function that backwards the sum, the output of the model it trains."""
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return frozenset()
    params = {a.arg for a in [*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs]} - {"self", "cls"}
    out = set()
    for n in ast.walk(scope):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name) \
                and n.value.func.id in params:
            for t in n.targets:
                out |= {e.id for e in ast.walk(t) if isinstance(e, ast.Name)}
    return frozenset(out)


def _additive_terms(expr: ast.AST) -> list:
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        return _additive_terms(expr.left) + _additive_terms(expr.right)
    return [expr]


def _reads(expr: ast.AST, names, q=None) -> Optional[str]:
    """The first of `names` that `expr` reads; with `q`, not counting reads in the arguments of a call that may add
    a gradient of its own (`_adds_parameters`: `model(x_adv)` has the model's gradient, whatever `x_adv` has)."""
    todo = [expr]
    while todo:
        n = todo.pop(0)
        if isinstance(n, ast.Name) and n.id in names:
            return n.id
        if q is not None and isinstance(n, ast.Call) and _adds_parameters(n, names, q):
            todo.append(n.func)
            continue
        todo.extend(ast.iter_child_nodes(n))
    return None


_PLAIN_BUILTINS = frozenset({"float", "int", "abs", "sum", "max", "min", "len", "round", "pow"})


def _adds_parameters(call: ast.Call, names, q) -> bool:
    """Whether a call may bring parameters of its own into the value: anything but a torch function, a builtin, or
    a method of the cut value itself (`grad.pow(2)`, `grad.norm()`): a model or module called on it
    (`F.kl_div(F.log_softmax(model(x_adv)), ...)`, TRADES' robust loss on an input made from a gradient)."""
    qual = q.call_name(call) or ""
    if qual.startswith(("torch.", "numpy.", "math.")):
        return False
    f = call.func
    if isinstance(f, ast.Name):
        return f.id not in _PLAIN_BUILTINS
    if isinstance(f, ast.Attribute):
        return _reads(f.value, names) is None  # `self.model(...)`, `net.forward(...)`: not the cut value's method
    return True


class LossTermWithoutGradient(Rule):
    code = "GS211"
    name = "loss-term-without-gradient"
    severity = Severity.WARNING
    summary = "A loss term built from `.item()`, `float()` or a non-differentiable gradient adds value but no gradient."
    events = (FileEvent,)
    what_it_does = ("Flags a sum that is backwarded (`loss = fit + 0.5 * penalty; loss.backward()`) when one of "
                    "its terms comes from `.item()` / `float()` of a gradient-carrying value (a parameter, a loss) "
                    "or from `torch.autograd.grad(...)` called without `create_graph=True` (a gradient penalty). "
                    "A term that runs a model or any other callable that is not a torch function on such a value "
                    "(`kl_div(log_softmax(model(x_adv)), p)` with `x_adv` made from a gradient) has that callable's "
                    "gradient, and is left alone.")
    why_bad = ("A Python number, or a gradient computed without `create_graph=True`, has no autograd history. "
               "Adding it to the loss changes the printed value and nothing else: the penalty never acts on the "
               "weights. Nothing raises; the regulariser silently does nothing.")
    example = "sparsity = model.weight.abs().sum().item()\nloss = fit + 0.5 * sparsity\nloss.backward()"
    use_instead = "sparsity = model.weight.abs().sum()\nloss = fit + 0.5 * sparsity\nloss.backward()"
    references = ("https://pytorch.org/docs/stable/generated/torch.autograd.grad.html",)
    _head = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nwind = nn.Linear(6, 2)\n"
             "x, y = torch.randn(16, 6), torch.randn(16, 2)\nfit = F.mse_loss(wind(x), y)\n")
    _probe = ("silent: torch.allclose(wind.weight.grad, "
              "torch.autograd.grad(F.mse_loss(wind(x), y), wind.weight)[0])")
    valid = (
        # TRADES-style adversarial training: the input is made from a gradient without `create_graph`, but the term
        # runs the model on it, so it carries the model's gradient.
        Valid('import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\nmodel = nn.Linear(4, 3)\nx = torch.rand(2, 4)\ny = torch.tensor([0, 2])\ndelta = torch.zeros(2, 4, requires_grad=True)\nloss_kl = model(x + delta).sum()\ngrad = torch.autograd.grad(loss_kl, [delta])[0]\nx_adv = (x + grad.sign()).detach()\nlogits = model(x)\nloss = F.cross_entropy(logits, y) + F.kl_div(F.log_softmax(model(x_adv), dim=1), F.softmax(logits, dim=1),\n                                             reduction="batchmean")\nloss.backward()\nassert model.weight.grad is not None\n'),
        # The model is a parameter; the regulariser keeps its graph.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\ndef train(model, loader, optimizer):\n    for x, y in loader:\n        out = model(x)\n        loss = F.mse_loss(out, y)\n        reg = out.abs().mean()\n        total = loss + 0.1 * reg\n        optimizer.zero_grad()\n        total.backward()\n        optimizer.step()\n\n\nnet = nn.Linear(3, 1)\nbatches = [(torch.randn(4, 3), torch.randn(4, 1))]\ntrain(net, batches, torch.optim.SGD(net.parameters(), lr=0.1))\nw = net.weight.detach().clone()\nnet.zero_grad()\nF.mse_loss(net(batches[0][0]), batches[0][1]).backward()\n"),
        Valid(_head + "sparsity = wind.weight.abs().sum()\nloss = fit + 0.5 * sparsity\nloss.backward()\n"),
        Valid(_head + "shown = fit.item() + 0.5 * wind.weight.abs().sum().item()\nfit.backward()\n"),
        Valid(_head + "scale = fit.item()\nloss = fit / scale\nloss.backward()\n"),
        Valid("import torch\nx = torch.randn(4, 3, requires_grad=True)\nw = torch.randn(3, requires_grad=True)\n"
              "out = (x * w).sum()\ng = torch.autograd.grad(out, x, create_graph=True)[0]\n"
              "loss = out + (g.norm() - 1) ** 2\nloss.backward()\n"),
    )
    invalid = (
        # `.item()` of a model output (the model passed in): the regulariser adds a constant; the gradient is the
        # plain loss's.
        Invalid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\ndef train(model, loader, optimizer):\n    for x, y in loader:\n        out = model(x)\n        loss = F.mse_loss(out, y)\n        reg = out.abs().mean().item()\n        total = loss + 0.1 * reg\n        optimizer.zero_grad()\n        total.backward()\n        optimizer.step()\n\n\nnet = nn.Linear(3, 1)\nbatches = [(torch.randn(4, 3), torch.randn(4, 1))]\ntrain(net, batches, torch.optim.SGD(net.parameters(), lr=0.1))\nw = net.weight.detach().clone()\nnet.zero_grad()\nF.mse_loss(net(batches[0][0]), batches[0][1]).backward()\n", line=11,
                # The term changes nothing in the gradient: the same as the plain loss's.
                runtime="silent: (lambda x, y: torch.equal(torch.autograd.grad(F.mse_loss(net(x), y) + 0.1 * "
                        "net(x).abs().mean().item(), net.weight)[0], torch.autograd.grad(F.mse_loss(net(x), y), "
                        "net.weight)[0]))(*batches[0])"),
        Invalid(_head + "sparsity = wind.weight.abs().sum().item()\nloss = fit + 0.5 * sparsity\nloss.backward()\n",
                line=8, runtime=_probe),
        Invalid("import torch\nx = torch.randn(4, 3, requires_grad=True)\nw = torch.randn(3, requires_grad=True)\n"
                "out = (x * w).sum()\ng = torch.autograd.grad(out, x, retain_graph=True)[0]\n"
                "penalty = (g.norm() - 1) ** 2\nloss = out + penalty\nloss.backward()\n", line=7,
                runtime="silent: torch.allclose(w.grad, x.detach().sum(0))"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        # This rule runs on every keystroke: without an assignment from `.item()`, `float()` or
        # `autograd.grad` there is nothing to find, and each statement's survey of such assignments (kept while the
        # statement is unchanged) says so. A call of any other plain name is `torch.autograd.grad` only under an
        # import of it.
        grad_imported = "torch.autograd.grad" in q.imported
        cut = [n for n, other_name in q.surveyed("GS211.cut-shaped", _cut_shaped)
               if (grad_imported or not other_name) and _cut(n.value, q, shape_only=True)]
        if not cut:
            return
        # Only a scope that binds a name from a cut can find anything: the scopes of those assignments.
        homes = {id(q.enclosing(n, (ast.FunctionDef, ast.AsyncFunctionDef)) or q.tree) for n in cut}
        scopes = [q.tree] + [n for n in q.nodes() if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for scope in scopes:
            if id(scope) in homes:
                self._check_scope(scope, q, report)

    def _check_scope(self, scope, q, report) -> None:
        cuts: dict = {}  # name -> (how, line)
        outputs = _model_outputs(scope)
        assigns = sorted((n for n in ast.walk(scope) if isinstance(n, ast.Assign) and len(n.targets) == 1
                          and isinstance(n.targets[0], ast.Name) and q.enclosing_function(n) in (None, scope)
                          and (scope is q.tree) == (q.enclosing_function(n) is None)),
                         key=lambda n: n.lineno)
        for node in assigns:
            target = node.targets[0].id
            how = _cut(node.value, q, outputs)
            if how is not None:
                cuts[target] = (how, node.lineno)
                continue
            terms = _additive_terms(node.value)
            hit = [t for t in terms if _reads(t, cuts, q)]
            if len(terms) > 1 and hit and len(hit) < len(terms):
                if self._backwarded(scope, target, node.lineno):
                    name = _reads(hit[0], cuts, q)
                    how, line = cuts[name]
                    report.add(self, node, f"`{name}` has no gradient, so adding it to `{target}` changes the "
                                           f"value but not the update. It comes from {how} at line {line}.",
                               related=[Note(line, 1, f"{how} leaves autograd here")])
                cuts.pop(target, None)
            elif hit and len(hit) == len(terms):
                cuts[target] = cuts[_reads(hit[0], cuts, q)]  # derived from a cut value only: still no gradient
            else:
                cuts.pop(target, None)

    @staticmethod
    def _backwarded(scope, name: str, after: int) -> bool:
        for n in ast.walk(scope):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward" \
                    and n.lineno > after and _reads(n.func.value, {name}):
                return True
        return False
