from __future__ import annotations

import ast
from typing import Iterator, Optional

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from ._syntax import own_nodes
from .base import Invalid, Rule, Valid


def _truthy(node: Optional[ast.AST]) -> bool:
    return node is not None and not (isinstance(node, ast.Constant) and node.value in (False, None))


def _grad_output(q, call: ast.Call) -> Optional[str]:
    """`y` of `torch.autograd.grad(y, xs)` that neither keeps nor builds on the graph (no `retain_graph`,
    `create_graph`)."""
    if q.qualname(call.func) != "torch.autograd.grad":
        return None
    kw = {k.arg: k.value for k in call.keywords}
    if _truthy(kw.get("retain_graph")) or _truthy(kw.get("create_graph")) or len(call.args) > 3:
        return None
    out = call.args[0] if call.args else kw.get("outputs")
    return out.id if isinstance(out, ast.Name) else None


def _toggle(node: ast.AST) -> Optional[tuple]:
    """(name, on) for `x.requires_grad_(on)` / `x.requires_grad = on` with a literal `on`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_" \
            and isinstance(node.func.value, ast.Name):
        arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "requires_grad"),
                                                  ast.Constant(True))
        if isinstance(arg, ast.Constant) and isinstance(arg.value, bool):
            return node.func.value.id, arg.value
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute) \
            and node.targets[0].attr == "requires_grad" and isinstance(node.targets[0].value, ast.Name) \
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, bool):
        return node.targets[0].value.id, node.value.value
    return None


def _cut(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in ("detach", "data", "item", "tolist", "numpy")
               for n in ast.walk(node))


def _sites(q, fn: ast.AST) -> Iterator[tuple]:
    """(return, `y`, the grad call) in a function that turns grad on for its inputs, takes
    `torch.autograd.grad(y, inputs)`, turns grad off for them again, and returns `y` itself."""
    own = own_nodes(fn, with_defs=False)
    toggles = [(n, t) for n in own if (t := _toggle(n)) is not None]
    if not any(on for _, (_, on) in toggles) or all(on for _, (_, on) in toggles):
        return
    for call in own:
        if not isinstance(call, ast.Call):
            continue
        y = _grad_output(q, call)
        if y is None:
            continue
        line = call.lineno
        # The inputs were made to require grad for this gradient only: switched on before it, off after it.
        if not (any(on and n.lineno < line for n, (_, on) in toggles)
                and any(not on and n.lineno > line for n, (_, on) in toggles)):
            continue
        if any(isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and n.lineno > line
               and any(isinstance(x, ast.Name) and x.id == y and isinstance(x.ctx, ast.Store) for x in ast.walk(n))
               for n in own):
            continue  # rebound after the gradient (`y = y.detach()`)
        for ret in own:
            if not (isinstance(ret, ast.Return) and ret.value is not None and ret.lineno > line) or _cut(ret.value):
                continue
            items = ret.value.elts if isinstance(ret.value, ast.Tuple) else [ret.value]
            if any(isinstance(i, ast.Name) and i.id == y for i in items):
                yield ret, y, call


class GradientOracleReturnsGraph(Rule):
    code = "GS456"
    name = "gradient-oracle-returns-graph"
    severity = Severity.WARNING
    summary = ("A helper that makes its inputs require grad only to take `torch.autograd.grad` of a value returns "
               "that value with its graph: every caller that keeps it keeps the graph.")
    events = (FileEvent,)
    what_it_does = ("Flags `return grads, y` in a function that switches `requires_grad` on for its inputs, takes "
                    "`torch.autograd.grad(y, inputs)` (no `retain_graph`, no `create_graph`) and switches "
                    "`requires_grad` off again, when `y` itself is returned (not `.detach()`ed, not rebound).")
    why_bad = ("Switching `requires_grad` off again says the inputs are plain data outside the helper, but the "
               "returned `y` still has a `grad_fn`: its graph holds the inputs of every call. A sampler or "
               "integrator that keeps the values it gets (Pyro's NUTS keeps each leapfrog step's potential "
               "energy in its trajectory tree) keeps every step's graph, so memory grows with the steps; and "
               "since `grad` freed the graph's buffers, a backward through a kept value raises.")
    example = ("def potential_grad(potential_fn, z):\n    z.requires_grad_(True)\n    energy = potential_fn(z)\n"
               "    (grad,) = torch.autograd.grad(energy, z)\n    z.requires_grad_(False)\n    return grad, energy")
    use_instead = ("def potential_grad(potential_fn, z):\n    z.requires_grad_(True)\n    energy = potential_fn(z)\n"
                   "    (grad,) = torch.autograd.grad(energy, z)\n    z.requires_grad_(False)\n"
                   "    return grad, energy.detach()")
    fix_safety = "There is no automatic fix: return `y.detach()` (the same value, without the graph)."
    references = ("https://pytorch.org/docs/stable/generated/torch.autograd.grad.html",)
    _head = ("import torch\n\n\ndef potential_grad(potential_fn, z):\n    z.requires_grad_(True)\n"
             "    energy = potential_fn(z)\n    (grad,) = torch.autograd.grad(energy, z)\n"
             "    z.requires_grad_(False)\n")
    _tail = ("\n\ndef potential(z):\n    return 0.5 * (z ** 2).sum()\n\n\nz = torch.randn(5)\nenergies = []\n"
             "for _ in range(10):\n    g, e = potential_grad(potential, z)\n    z = z - 0.1 * g.detach()\n"
             "    energies.append(e)\n")
    valid = (
        # The fix: the value detached.
        Valid(_head + "    return grad, energy.detach()\n" + _tail
              + "assert all(e.grad_fn is None for e in energies)\n"),
        # A helper whose caller backwards the value again builds it with `create_graph`.
        Valid(_head.replace("(grad,) = torch.autograd.grad(energy, z)",
                            "(grad,) = torch.autograd.grad(energy, z, create_graph=True)")
              + "    return grad, energy\n" + _tail),
    )
    invalid = (
        Invalid(_head + "    return grad, energy\n" + _tail, line=9,
                runtime="silent: all(e.grad_fn is not None for e in energies)"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "requires_grad_" not in q.attrs and "requires_grad" not in q.attr_stores:
            return  # the common case, checked first (this rule runs on every keystroke)
        for fn in q.functions:
            for ret, y, call in _sites(q, fn):
                report.add(self, ret,
                           f"`{y}` is returned with its graph: every caller that keeps it keeps the graph alive. "
                           f"Return `{y}.detach()`; the inputs' `requires_grad` is switched off again, so only the "
                           f"gradient at line {call.lineno} needed the graph.",
                           related=[Note(call.lineno, call.col_offset + 1, "the only use of the graph")])
