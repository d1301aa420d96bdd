from __future__ import annotations

import ast
from typing import Iterator

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from ._syntax import own_nodes
from .base import Invalid, Rule, Valid

# Torch factories that make a preallocated buffer (`stats = torch.zeros(n, device=device)`).
_FACTORIES = frozenset({"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like"})
# Calls chained onto a factory that still give a fresh buffer.
_CHAINED = frozenset({"to", "cuda", "cpu", "float", "double", "half", "long", "int", "bool", "type", "share_memory_"})
# What takes a value out of autograd.
# (and what has no gradient: an index, a comparison, an integer or boolean cast: `(out.argmax(1) == y).float()`)
_CUTS = frozenset({"detach", "detach_", "data", "item", "tolist", "numpy", "argmax", "argmin", "long", "int", "bool",
                   "eq", "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "nonzero", "argsort"})
_CUT_CALLS = frozenset({"float", "int", "bool"})
# A statistic: the value written is a reduction of per-element values.
_REDUCTIONS = frozenset({"sum", "mean", "max", "min", "norm", "std", "var", "prod", "logsumexp", "amax", "amin",
                         "nansum", "nanmean", "median"})
_TORCH_ROOTS = frozenset({"torch", "F", "functional", "nn", "math", "np", "numpy"})
_BUILTINS = frozenset({"len", "sum", "min", "max", "abs", "float", "int", "range", "list", "tuple", "zip",
                       "enumerate", "isinstance", "getattr"})
# Torch functions that run a model handed to them.
_RUNS = frozenset({"functional_call", "checkpoint", "checkpoint_sequential"})
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _factory(q, value: ast.AST) -> bool:
    """`torch.zeros(...)`, `torch.zeros(...).to(device)`."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if value.func.attr in _FACTORIES:
            return (q.qualname(value.func) or "").startswith("torch.")
        if value.func.attr not in _CHAINED:
            return False
        value = value.func.value
    return False


def _cut(value: ast.AST) -> bool:
    for n in ast.walk(value):
        if isinstance(n, ast.Attribute) and n.attr in _CUTS or isinstance(n, ast.Compare):
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _CUT_CALLS:
            return True
    return False


def _reads(value: ast.AST) -> set:
    """The names a value's data comes from: not those only used to index (`x[inds]` reads `x`)."""
    out, todo = set(), [value]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Subscript):
            todo.append(n.value)
        elif not isinstance(n, _DEFS):
            todo.extend(ast.iter_child_nodes(n))
    return out


def _no_grad_with(q, node: ast.AST) -> bool:
    return isinstance(node, (ast.With, ast.AsyncWith)) and any(
        isinstance(i.context_expr, ast.Call)
        and q.qualname(i.context_expr.func) in ("torch.no_grad", "torch.inference_mode") for i in node.items)


def _model_call(call: ast.Call, local: set) -> bool:
    """A call that may bring a graph of its own: a model or any callable gradsight cannot see (not a torch
    function, a tensor method of a local value or a plain builtin)."""
    f = call.func
    if isinstance(f, ast.Name):
        return f.id not in _BUILTINS
    if getattr(f, "attr", None) in _RUNS:
        return True
    root = f
    while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
        root = root.func if isinstance(root, ast.Call) else root.value
    if not isinstance(root, ast.Name):
        return True
    return root.id not in _TORCH_ROOTS and root.id not in local or root.id == "self"


def _backward_loss(call: ast.Call) -> list:
    """What a backward call backwards: `loss.backward()`, `engine.backward(loss)` (DeepSpeed, Accelerate,
    Fabric), `torch.autograd.backward(loss)`, `out.backward(grad_out)` (both sides: the names of either)."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "backward"):
        return []
    out = [call.args[0]] if call.args else []
    if not (isinstance(call.func.value, ast.Name) and call.func.value.id in ("torch", "autograd")):
        out.append(call.func.value)
    return [x for x in out if not _cut(x)]


def _candidate(q, w: ast.Assign, ng: bool, loops: list) -> bool:
    """A grad-mode write of a statistic (a reduction, not cut from autograd) in a loop."""
    if ng or not loops or _cut(w.value):
        return False
    return any(isinstance(c, ast.Call) and (
        isinstance(c.func, ast.Attribute) and c.func.attr in _REDUCTIONS
        or (q.qualname(c.func) or "").rpartition(".")[2] in _REDUCTIONS
        and (q.qualname(c.func) or "").startswith("torch.")) for c in ast.walk(w.value))


def _sites(q, fn: ast.AST, writes: list) -> Iterator[tuple]:
    """(write, buffer, the loop's no_grad write, the backward) for each grad-mode write of a statistic into a
    buffer made before its loop, in a loop that backwards a loss sharing the statistic's model output and writes
    its other statistics under `torch.no_grad()`."""
    own = own_nodes(fn, with_defs=False)
    reads: dict = {}
    model_made: set = set()
    for n in own:
        if isinstance(n, ast.Assign):
            targets = [x.id for t in n.targets if not isinstance(t, ast.Subscript)
                       for x in ast.walk(t) if isinstance(x, ast.Name)]
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and n.value is not None and isinstance(n.target, ast.Name):
            targets = [n.target.id]
        else:
            continue
        got = set() if _cut(n.value) else _reads(n.value)
        for t in targets:
            reads.setdefault(t, set()).update(got)
    args = getattr(fn, "args", None)
    local = set(reads) | ({a.arg for a in args.posonlyargs + args.args + args.kwonlyargs} if args else set())
    for n in own:
        if isinstance(n, ast.Assign) and not _cut(n.value) and any(
                isinstance(c, ast.Call) and _model_call(c, local) for c in ast.walk(n.value)):
            model_made.update(x.id for t in n.targets if not isinstance(t, ast.Subscript)
                              for x in ast.walk(t) if isinstance(x, ast.Name))

    def closure(start: set) -> set:
        out, todo = set(), list(start)
        while todo:
            x = todo.pop()
            if x not in out:
                out.add(x)
                todo.extend(reads.get(x, ()))
        return out

    for w, buf, ng, loops in writes:
        if not _candidate(q, w, ng, loops):
            continue
        loop = loops[0]
        body = own_nodes(loop, with_defs=False)
        inside = set(map(id, body))
        # The buffer outlives the loop: made before it, never rebound in it.
        if any(isinstance(n, ast.Name) and n.id == buf and isinstance(n.ctx, ast.Store) for n in body):
            continue
        sibling = next((o for o, obuf, ong, _ in writes if ong and obuf != buf and id(o) in inside), None)
        if sibling is None:
            continue
        value_from = closure(_reads(w.value))
        bound_here = {x.id for n in body if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                      for x in (n,)}
        for c in body:
            if not isinstance(c, ast.Call):
                continue
            losses = _backward_loss(c)
            if not losses:
                continue
            shared = value_from & closure(set().union(*map(_reads, losses))) & bound_here & model_made
            if shared:
                yield w, buf, sibling, c
                break


class StatsBufferWrittenWithGraph(Rule):
    code = "GS455"
    name = "stats-buffer-written-with-graph"
    severity = Severity.WARNING
    summary = ("A statistic written in grad mode into a buffer made before the training loop chains every "
               "step's graph, while the loop writes its other statistics under `torch.no_grad()`.")
    events = (FileEvent,)
    what_it_does = ("Flags `stats[i] = t.sum()` (a reduction written into a `torch.zeros(...)` buffer made before "
                    "the loop) in a loop that backwards a loss and writes its other statistics buffers under "
                    "`torch.no_grad()`, when `t` and the loss come from the same model output made in the loop. "
                    "Values cut from autograd (`.detach()`, `.item()`, `float(...)`, a comparison or `argmax`) and "
                    "buffers made anew in the "
                    "loop are left alone. This is for values the analysis cannot follow (a model run by a training "
                    "engine from another package, `torch.func.functional_call`): where it sees the graph, GS404 "
                    "reports the write and this rule stays quiet.")
    why_bad = ("Writing a value with a graph into a slice of a buffer makes the whole buffer part of the graph: "
               "its `grad_fn` (`CopySlices`) holds the value's graph and the buffer's previous version, so the "
               "buffer chains the graph of every write, and every tensor those graphs saved, for as long as it "
               "lives. The loop's other statistics are written under `torch.no_grad()` for that reason "
               "(open-instruct's GRPO trainer, whose KL statistics were written outside the `no_grad` block and "
               "leaked memory).")
    example = ("for i, x in enumerate(loader):\n    out = model(x)\n    kl_stats[i] = out.pow(2).sum()\n"
               "    loss = out.mean()\n    loss.backward()\n    with torch.no_grad():\n"
               "        loss_stats[i] = loss")
    use_instead = ("for i, x in enumerate(loader):\n    out = model(x)\n    loss = out.mean()\n"
                   "    loss.backward()\n    with torch.no_grad():\n        kl_stats[i] = out.pow(2).sum()\n"
                   "        loss_stats[i] = loss")
    fix_safety = ("There is no automatic fix: move the write into the loop's `torch.no_grad()` block (after the "
                  "backward if it reads the loss) or write `.detach()` of the value.")
    references = ("https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation",)
    # The model run through `torch.func.functional_call`, which the analysis does not follow (as it does not
    # follow a training engine from another package): only the loop's own evidence says what carries a graph.
    _head = ("import torch\nimport torch.nn as nn\n\n\ndef train(model, opt, batches):\n"
             "    loss_stats = torch.zeros(len(batches))\n    norm_stats = torch.zeros(len(batches))\n"
             "    params = dict(model.named_parameters())\n    for i, x in enumerate(batches):\n"
             "        out = torch.func.functional_call(model, params, (x,))\n")
    _step = ("        loss = out.mean()\n        opt.zero_grad()\n        loss.backward()\n        opt.step()\n"
             "        with torch.no_grad():\n            loss_stats[i] = loss\n")
    _call = ("    return loss_stats, norm_stats\n\n\nnet = nn.Linear(4, 1)\n"
             "loss_stats, norm_stats = train(net, torch.optim.SGD(net.parameters(), lr=0.1), "
             "[torch.randn(8, 4) for _ in range(3)])\n")
    valid = (
        # The fix: the statistic written under the loop's no_grad.
        Valid(_head + _step + "            norm_stats[i] = out.pow(2).sum()\n" + _call
              + "assert norm_stats.grad_fn is None and loss_stats.grad_fn is None\n"),
        # The statistic detached.
        Valid(_head + "        norm_stats[i] = out.detach().pow(2).sum()\n" + _step + _call
              + "assert norm_stats.grad_fn is None\n"),
        # A statistic without a gradient (a comparison of the output's argmax).
        Valid(_head + "        norm_stats[i] = (out.argmax(1) == 0).float().mean()\n" + _step + _call
              + "assert norm_stats.grad_fn is None\n"),
        # A buffer made anew every step lives one step.
        Valid(_head + "        norm_stats = torch.zeros(2)\n        norm_stats[0] = out.pow(2).sum()\n" + _step
              + _call),
    )
    invalid = (
        Invalid(_head + "        norm_stats[i] = out.pow(2).sum()\n" + _step + _call, line=11,
                runtime="silent: norm_stats.grad_fn is not None and loss_stats.grad_fn is None"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "backward" not in q.attrs or ("no_grad" not in q.attrs and "inference_mode" not in q.attrs):
            return  # the common case, checked first (this rule runs on every keystroke)
        buffers = set()
        for a in q.assigns:
            if len(a.targets) == 1 and isinstance(a.targets[0], ast.Name) and _factory(q, a.value):
                buffers.add(a.targets[0].id)
        if not buffers:
            return
        by_fn: dict = {}
        for a in q.assigns:
            t = a.targets[0]
            if not (len(a.targets) == 1 and isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
                    and t.value.id in buffers):
                continue
            ng, loops, fn, p = False, [], q.tree, q.parent(a)
            while p is not None:
                if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
                    fn = p
                    break
                if isinstance(p, (ast.Lambda, ast.ClassDef)):
                    fn = None
                    break
                if isinstance(p, _LOOPS):
                    loops.append(p)
                ng = ng or _no_grad_with(q, p)
                p = q.parent(p)
            if fn is not None:
                by_fn.setdefault(fn, []).append((a, t.value.id, ng, loops))
        for fn, writes in by_fn.items():
            # Cheap first: a grad-mode write of a statistic whose innermost loop also holds a `no_grad` write of
            # another buffer and a backward.
            lines = report.source.lines
            if not any(any(ong and obuf != buf and loops[0] in oloops for _, obuf, ong, oloops in writes)
                       and _candidate(q, w, ng, loops)
                       and any("backward" in lines[i - 1] for i in range(loops[0].lineno, loops[0].end_lineno + 1))
                       for w, buf, ng, loops in writes if not ng and loops):
                continue
            for w, buf, sibling, bw in _sites(q, fn, writes):
                if any(k[0] == "GS404" and k[1] == w.lineno for k in report.findings):
                    continue  # the engine saw the graph: GS404 reports this write already
                report.add(self, w,
                           f"`{buf}` keeps the graph of every step's write: it is written in grad mode. This loop "
                           f"writes its other statistics under `torch.no_grad()` (line {sibling.lineno}); move this "
                           f"write there too, or write a detached value.",
                           related=[Note(bw.lineno, bw.col_offset + 1, "the loop's backward")])
