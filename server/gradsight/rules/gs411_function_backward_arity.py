from __future__ import annotations

import ast
from typing import Iterator, Optional

from ..engine.query import FileEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


def _method(cls: ast.ClassDef, name: str) -> Optional[ast.FunctionDef]:
    return next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == name), None)


def _receivers(fn: ast.FunctionDef) -> int:
    """How many leading parameters of a `forward` / `backward` are not inputs or gradients: `ctx` of a
    `@staticmethod`, and `cls` then `ctx` of a `@classmethod` (torch calls both the same way)."""
    classmethod_ = any(isinstance(d, ast.Name) and d.id == "classmethod" for d in fn.decorator_list)
    return 2 if classmethod_ else 1


def _input_count(cls: ast.ClassDef) -> Optional[tuple]:
    """How many inputs `apply` takes, as (fewest, most): `forward`'s parameters after `ctx` (none to skip with
    `setup_context`); parameters with defaults may be left out, and torch then expects one gradient per input
    actually passed (BasicSR's `DeformConvFunction` leaves `im2col_step` to its default and returns 8)."""
    forward = _method(cls, "forward")
    if forward is None or forward.args.vararg or forward.args.kwonlyargs or forward.args.kwarg:
        return None
    params = forward.args.posonlyargs + forward.args.args
    skip = _receivers(forward) - (1 if _method(cls, "setup_context") is not None else 0)
    most = max(0, len(params) - skip)
    return max(0, most - len(forward.args.defaults)), most


def _tuple_expr(value: ast.AST) -> Optional[tuple]:
    """The non-None mask of a tuple written out in the text: a literal `(g, None)`, a concatenation of such
    `(None, None, None) + (grad,)` (open_clip's NeighbourExchange) or a repetition `(None,) * 5` (mmcv's
    MaskedConv2dFunction); None for anything else."""
    if isinstance(value, ast.Tuple):
        if any(isinstance(e, ast.Starred) for e in value.elts):
            return None
        return tuple(not (isinstance(e, ast.Constant) and e.value is None) for e in value.elts)
    if not isinstance(value, ast.BinOp):
        return None
    if isinstance(value.op, ast.Add):
        left, right = _tuple_expr(value.left), _tuple_expr(value.right)
        return None if left is None or right is None else left + right
    if isinstance(value.op, ast.Mult):
        for seq, times in ((value.left, value.right), (value.right, value.left)):
            mask = _tuple_expr(seq)
            if mask is not None and isinstance(times, ast.Constant) and type(times.value) is int and times.value >= 0:
                return mask * times.value
    return None


def _sequence_operand(value: ast.BinOp) -> bool:
    """An operator with a tuple or list on a side builds a sequence, not a tensor (`ctx.nones + (g,)`)."""
    return any(isinstance(side, (ast.Tuple, ast.List)) or (isinstance(side, ast.BinOp) and _sequence_operand(side))
               for side in (value.left, value.right))


def _returned(value: Optional[ast.AST], grad_params: set) -> Optional[tuple]:
    """(count, non-None extras mask) of what a `return` gives, or None when it cannot be told from the text."""
    if value is None:
        return None
    mask = _tuple_expr(value)
    if mask is not None:
        return mask
    if isinstance(value, ast.BinOp) and _sequence_operand(value):
        return None  # a sequence whose length the text does not tell
    if isinstance(value, (ast.BinOp, ast.UnaryOp)) or (isinstance(value, ast.Name) and value.id in grad_params):
        return (True,)  # one tensor
    return None


def _outputs_never_differentiable(q, forward: ast.FunctionDef) -> bool:
    """Every `return` of `forward` gives only tensors it passed to `ctx.mark_non_differentiable` (mmcv's `BallQuery`
    and `SortVertices`, which return index tensors). Such outputs never require grad, so autograd records no node
    and never calls `backward`, whatever it returns. A mark under a condition may happen, so it counts too: the rule
    claims that backward raises, and stays quiet where backward may never run."""
    params = forward.args.posonlyargs + forward.args.args
    if len(params) < _receivers(forward):
        return False
    ctx = params[_receivers(forward) - 1].arg
    marked: dict = {}  # name -> line of its last mark
    stored: dict = {}  # name -> line of its last binding
    returns = []
    for n in ast.walk(forward):
        if q.enclosing_function(n) is not forward:
            continue
        if isinstance(n, ast.Return):
            returns.append(n)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "mark_non_differentiable" \
                and isinstance(n.func.value, ast.Name) and n.func.value.id == ctx:
            for a in n.args:
                if isinstance(a, ast.Name):
                    marked[a.id] = max(marked.get(a.id, 0), n.lineno)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            stored[n.id] = max(stored.get(n.id, 0), n.lineno)
    # A name bound again after its mark names another tensor, which is not marked.
    marked = {name for name, line in marked.items() if stored.get(name, 0) <= line}
    if not returns or not marked:
        return False
    for ret in returns:
        values = ret.value.elts if isinstance(ret.value, ast.Tuple) else [ret.value]
        if not values or not all(isinstance(v, ast.Name) and v.id in marked for v in values):
            return False
    return True


def _exits(stmt: ast.stmt) -> bool:
    """Does control never fall through `stmt`: a `raise` or `return`, or an `if` whose both branches never do."""
    if isinstance(stmt, (ast.Raise, ast.Return)):
        return True
    return isinstance(stmt, ast.If) and bool(stmt.orelse) and _block_exits(stmt.body) and _block_exits(stmt.orelse)


def _block_exits(block: list) -> bool:
    return any(_exits(s) for s in block)


def _reachable_returns(block: list) -> Iterator[ast.Return]:
    """The `return` statements of a function body that control can reach: statements after a `raise` or `return`
    in the same block never run (an inference-only Function whose `backward` is `raise NotImplementedError`
    followed by a leftover `return`). Nested functions and classes are not entered."""
    for stmt in block:
        if isinstance(stmt, ast.Return):
            yield stmt
        elif not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list):
                    yield from _reachable_returns(inner)
            for handler in getattr(stmt, "handlers", ()):
                yield from _reachable_returns(handler.body)
            for case in getattr(stmt, "cases", ()):
                yield from _reachable_returns(case.body)
        if _exits(stmt):
            return


def _applied_only_in_backward(q, cls: ast.ClassDef) -> bool:
    """Every `Cls.apply(...)` of the file is in the `backward` of another `autograd.Function` (StyleGAN's
    `conv2d_gradfix`: the weight gradient of a convolution as a Function of its own). That backward runs in grad
    mode only under `create_graph=True`, and even then this Function's node lies on the gradient's graph: its own
    `backward` runs only when that gradient is differentiated again, which first-order training never does."""
    applies = [c for c in q.calls() if isinstance(c.func, ast.Attribute) and c.func.attr == "apply"
               and isinstance(c.func.value, ast.Name) and c.func.value.id == cls.name]
    if not applies:
        return False
    functions = set(q.subclasses("torch.autograd.Function"))
    for call in applies:
        fn = q.enclosing_function(call)
        owner = q.parent(fn) if fn is not None else None
        if fn is None or fn.name != "backward" or owner is cls or owner not in functions:
            return False
    return True


class FunctionBackwardArity(Rule):
    code = "GS411"
    name = "function-backward-arity"
    severity = Severity.ERROR
    summary = "A custom `autograd.Function.backward` returns a different number of gradients than `forward` has inputs."
    events = (FileEvent,)
    what_it_does = ("Flags a `return` in the `backward` of a `torch.autograd.Function` subclass that returns fewer "
                    "values than `forward` takes inputs (after `ctx`), or more values where the extra ones are not "
                    "`None`. A `forward` whose every output is passed to `ctx.mark_non_differentiable` is left alone: "
                    "its outputs never require grad, so `backward` never runs. A `return` after a `raise` in the same block "
                    "never runs and is not counted.")
    why_bad = ("Autograd needs one gradient (or `None`) per input of `forward`. Otherwise the backward pass "
               "raises \"function <Name>Backward returned an incorrect number of gradients (expected N, got M)\". "
               "Non-tensor inputs (a limit, a flag) still need a `None` in their place.")
    example = ("class Clip(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, limit):\n"
               "        return x.clamp(-limit, limit)\n\n    @staticmethod\n    def backward(ctx, grad_out):\n"
               "        return grad_out")
    use_instead = ("class Clip(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, limit):\n"
                   "        return x.clamp(-limit, limit)\n\n    @staticmethod\n    def backward(ctx, grad_out):\n"
                   "        return grad_out, None")
    references = ("https://pytorch.org/docs/stable/notes/extending.html#extending-torch-autograd",)
    _head = ("import torch\n\n\nclass Clip(torch.autograd.Function):\n    @staticmethod\n"
             "    def forward(ctx, x, limit):\n        return x.clamp(-limit, limit)\n\n    @staticmethod\n"
             "    def backward(ctx, grad_out):\n")
    _tail = "\n\nv = torch.randn(5, requires_grad=True)\nClip.apply(v, 0.3).sum().backward()\n"
    valid = (
        Valid(_head + "        return grad_out, None" + _tail),
        # A tuple built by concatenation (open_clip's NeighbourExchange): three Nones and one gradient.
        Valid(_head + "        return (grad_out,) + (None,)" + _tail),
        Valid(_head + "        return grad_out, None, None" + _tail),
        # `@classmethod` forward and backward take `cls` before `ctx` (mean-teacher's shake-shake Function).
        Valid("import torch\nfrom torch.autograd import Function\n\n\nclass Shake(Function):\n    @classmethod\n"
              "    def forward(cls, ctx, a, b, training):\n        return a * 0.5 + b * 0.5\n\n    @classmethod\n"
              "    def backward(cls, ctx, g):\n        return g * 0.5, g * 0.5, None\n\n\n"
              "a = torch.randn(3, requires_grad=True)\nb = torch.randn(3, requires_grad=True)\n"
              "Shake.apply(a, b, True).sum().backward()\n"),
        Valid("import torch\n\n\nclass Sq(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
              "        ctx.save_for_backward(x)\n        return x * x\n\n    @staticmethod\n"
              "    def backward(ctx, grad_out):\n        x, = ctx.saved_tensors\n        return 2 * x * grad_out\n\n\n"
              "v = torch.randn(3, requires_grad=True)\nSq.apply(v).sum().backward()\n"),
        # A parameter with a default that `apply` leaves out gets no gradient slot (BasicSR's DeformConvFunction).
        Valid("import torch\n\n\nclass Scale(torch.autograd.Function):\n    @staticmethod\n"
              "    def forward(ctx, x, s=2.0, step=64):\n        ctx.s = s\n        return x * s\n\n    @staticmethod\n"
              "    def backward(ctx, grad_out):\n        return grad_out * ctx.s, None\n\n\n"
              "v = torch.randn(3, requires_grad=True)\nScale.apply(v, 3.0).sum().backward()\n"),
        # A repeated tuple counts its repetitions: `(None,) * 5` is five gradients for the five inputs `apply` gets
        # (mmcv's MaskedConv2dFunction, whose `stride` keeps its default).
        Valid("import torch\nfrom torch.autograd.function import once_differentiable\n\n\n"
              "class MaskedConv(torch.autograd.Function):\n    @staticmethod\n"
              "    def forward(ctx, features, mask, weight, bias, padding=0, stride=1):\n"
              "        return torch.nn.functional.conv2d(features, weight, bias, padding=padding) * mask\n\n"
              "    @staticmethod\n    @once_differentiable\n    def backward(ctx, grad_output):\n"
              "        return (None, ) * 5\n\n\n"
              "f = torch.randn(1, 2, 5, 5, requires_grad=True)\nw = torch.randn(3, 2, 3, 3, requires_grad=True)\n"
              "MaskedConv.apply(f, torch.ones(1, 5, 5), w, torch.zeros(3), 1).sum().backward()\n"),
        # Outputs marked non-differentiable never require grad, so autograd never calls `backward` (mmcv's BallQuery
        # returns index tensors and four Nones for five inputs; the mark sits under a version check).
        Valid("import torch\n\n\nclass BallQuery(torch.autograd.Function):\n    @staticmethod\n"
              "    def forward(ctx, min_radius, max_radius, sample_num, xyz, center_xyz, xyz_batch_cnt=None):\n"
              "        idx = torch.cdist(center_xyz, xyz).argsort(-1)[..., :sample_num].int()\n"
              "        if torch.__version__ != 'parrots':\n            ctx.mark_non_differentiable(idx)\n"
              "        return idx\n\n    @staticmethod\n    def backward(ctx, a=None):\n"
              "        return None, None, None, None\n\n\n"
              "xyz = torch.randn(2, 8, 3, requires_grad=True)\n"
              "idx = BallQuery.apply(0.0, 0.2, 5, xyz, torch.randn(2, 4, 3))\n"
              "torch.gather(xyz, 1, idx[..., :1].long().expand(2, 4, 3)).sum().backward()\n"),
        # A `backward` that raises first never reaches its leftover `return` (BigVGAN's inference-only fused kernel).
        Valid("import torch\n\n\nclass FusedAct(torch.autograd.Function):\n    @staticmethod\n"
              "    def forward(ctx, x, alpha, beta):\n        return x * alpha.exp() + beta\n\n    @staticmethod\n"
              "    def backward(ctx, grad_out):\n        raise NotImplementedError\n        return grad_out\n\n\n"
              "with torch.no_grad():\n    y = FusedAct.apply(torch.randn(2, 3), torch.zeros(3), torch.zeros(3))\n"),
    )
    invalid = (
        # A `raise` under a condition leaves the `return` after it reachable.
        Invalid("import torch\n\n\nclass Clip(torch.autograd.Function):\n    @staticmethod\n"
                "    def forward(ctx, x, limit):\n        return x.clamp(-limit, limit)\n\n    @staticmethod\n"
                "    def backward(ctx, grad_out):\n        if not ctx.needs_input_grad[0]:\n"
                "            raise NotImplementedError\n        return grad_out\n\n\n"
                "v = torch.randn(5, requires_grad=True)\nClip.apply(v, 0.3).sum().backward()\n",
                line=13, runtime="raises: returned an incorrect number of gradients (expected 2, got 1)"),
        # A `@classmethod` backward one gradient short: `cls` and `ctx` are not inputs.
        Invalid("import torch\nfrom torch.autograd import Function\n\n\nclass Shake(Function):\n    @classmethod\n"
                "    def forward(cls, ctx, a, b, training):\n        return a * 0.5 + b * 0.5\n\n    @classmethod\n"
                "    def backward(cls, ctx, g):\n        return g * 0.5, g * 0.5\n\n\n"
                "a = torch.randn(3, requires_grad=True)\nb = torch.randn(3, requires_grad=True)\n"
                "Shake.apply(a, b, True).sum().backward()\n",
                line=12, runtime="raises: returned an incorrect number of gradients (expected 3, got 2)"),
        Invalid(_head + "        return grad_out" + _tail, line=11,
                runtime="raises: returned an incorrect number of gradients (expected 2, got 1)"),
        Invalid(_head + "        return grad_out, None, grad_out" + _tail, line=11,
                runtime="raises: returned an incorrect number of gradients (expected 2, got 3)"),
        # A repetition one short: three gradients for four inputs.
        Invalid("import torch\n\n\nclass Clip4(torch.autograd.Function):\n    @staticmethod\n"
                "    def forward(ctx, x, lo, hi, eps):\n        return x.clamp(lo + eps, hi - eps)\n\n"
                "    @staticmethod\n    def backward(ctx, grad_out):\n        return (grad_out,) + (None,) * 2\n\n\n"
                "v = torch.randn(5, requires_grad=True)\nClip4.apply(v, -1.0, 1.0, 0.1).sum().backward()\n",
                line=11, runtime="raises: returned an incorrect number of gradients (expected 4, got 3)"),
        # A mark that names another output leaves the returned tensor differentiable: backward runs and raises.
        Invalid("import torch\n\n\nclass TopK(torch.autograd.Function):\n    @staticmethod\n"
                "    def forward(ctx, x, k):\n        values, idx = x.topk(k)\n"
                "        ctx.mark_non_differentiable(idx)\n        return values, idx\n\n"
                "    @staticmethod\n    def backward(ctx, grad_values, grad_idx):\n        return grad_values\n\n\n"
                "v = torch.randn(5, requires_grad=True)\nTopK.apply(v, 2)[0].sum().backward()\n",
                line=13, runtime="raises: returned an incorrect number of gradients (expected 2, got 1)"),
        # A Function applied only in another Function's `backward` (StyleGAN's `conv2d_gradfix`, the weight gradient
        # as a Function): first-order training never runs its `backward`; a second derivative does (information).
        Invalid("import torch\n\n\nclass Square(torch.autograd.Function):\n    @staticmethod\n"
                "    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x * x\n\n"
                "    @staticmethod\n    def backward(ctx, grad):\n        x, = ctx.saved_tensors\n"
                "        return GradOfSquare.apply(grad, x)\n\n\nclass GradOfSquare(torch.autograd.Function):\n"
                "    @staticmethod\n    def forward(ctx, grad, x):\n        ctx.save_for_backward(grad, x)\n"
                "        return 2 * x * grad\n\n    @staticmethod\n    def backward(ctx, gg):\n"
                "        grad, x = ctx.saved_tensors\n        return 2 * x * gg\n\n\n"
                "x = torch.randn(3, requires_grad=True)\nSquare.apply(x).sum().backward()\n"
                "g, = torch.autograd.grad(Square.apply(x).sum(), x, create_graph=True)\ng.sum().backward()\n",
                line=25, runtime="raises: returned an incorrect number of gradients (expected 2, got 1)",
                severity=Severity.INFORMATION),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        for cls in q.subclasses("torch.autograd.Function"):
            counts = _input_count(cls)
            backward = _method(cls, "backward")
            if counts is None or backward is None or backward.args.vararg \
                    or len(backward.args.args) <= _receivers(backward):
                continue
            forward = _method(cls, "forward")
            if _method(cls, "setup_context") is None and _outputs_never_differentiable(q, forward):
                continue
            fewest, expected = counts
            higher_order = _applied_only_in_backward(q, cls)
            grad_params = {a.arg for a in backward.args.args[_receivers(backward):]}
            for ret in _reachable_returns(backward.body):
                got = _returned(ret.value, grad_params)
                if got is None:
                    continue
                if len(got) < fewest or (len(got) > expected and any(got[expected:])):
                    n = fewest if len(got) < fewest else expected
                    least = "at least " if len(got) < fewest and fewest != expected else ""
                    when = "differentiating the gradient it computes raises" if higher_order else "backward raises"
                    report.add(self, ret, f"`backward` returns {len(got)} gradient{'s' * (len(got) != 1)} but "
                                          f"`forward` takes {least}{n} input{'s' * (n != 1)}; {when}.",
                               severity=Severity.INFORMATION if higher_order else None)
