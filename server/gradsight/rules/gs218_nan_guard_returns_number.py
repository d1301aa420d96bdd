from __future__ import annotations

import ast

from ..engine.astwalk import walk
from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from ._syntax import own_nodes
from .base import Invalid, Rule, Valid

# `torch.isnan(x)` / `x.isnan()` (true on the bad value) and `torch.isfinite(x)` (false on it).
_BAD_WHEN_TRUE = frozenset({"isnan", "isinf", "isposinf", "isneginf"})
_BAD_WHEN_FALSE = frozenset({"isfinite"})
_TESTS = _BAD_WHEN_TRUE | _BAD_WHEN_FALSE
# Reductions around the test that keep its meaning: `torch.isnan(x).any()`, `bool(...)`, `.item()`.
_REDUCTIONS = frozenset({"any", "all", "item"})
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Statuses of a local name: a guarded value (a tensor, or a Python number on the bad input), a plain number.
_GUARDED, _NUMBER = "guarded", "number"


def _number(node: ast.AST) -> bool:
    """A numeric literal: `0`, `0.0`, `-1`."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _guarded_tensor(q, test: ast.AST):
    """`(x, bad_when_true)` for a test of a tensor `x` for NaN/inf (`torch.isnan(x)`, `not x.isfinite().all()`),
    else None. `torch.isnan` needs a tensor (a Python number raises TypeError), so `x` is one."""
    flip = False
    while True:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            flip, test = not flip, test.operand
        elif (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "bool"
              and len(test.args) == 1 and not test.keywords):
            test = test.args[0]
        elif (isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr in _REDUCTIONS
              and not test.args and not test.keywords):
            test = test.func.value
        else:
            break
    if not isinstance(test, ast.Call) or not isinstance(test.func, ast.Attribute) or test.keywords:
        return None
    op = test.func.attr
    if op not in _TESTS:
        return None
    name = q.qualname(test.func) or ""
    if name == f"torch.{op}" and len(test.args) == 1:
        x = test.args[0]
    elif not test.args and not name.startswith(("torch.", "numpy.", "math.", "np.")):
        x = test.func.value          # `x.isnan()`: a tensor method (NumPy arrays and floats have none)
    else:
        return None
    return x, (op in _BAD_WHEN_TRUE) != flip


def _nan_guard(q, node: ast.IfExp):
    """The literal of `0 if torch.isnan(x) else x` (either order, any NaN/inf test of `x`), else None."""
    found = _guarded_tensor(q, node.test)
    if found is None:
        return None
    x, bad_when_true = found
    bad, good = (node.body, node.orelse) if bad_when_true else (node.orelse, node.body)
    if not _number(bad) or ast.dump(good) != ast.dump(x):
        return None
    return bad


def _numeric_params(fn: ast.AST) -> set:
    """Parameters annotated `float`/`int` or defaulting to a number (a weight such as `pl_weight: float = 0.5`)."""
    args = fn.args
    pos = args.posonlyargs + args.args
    out = {a.arg for a in pos + args.kwonlyargs
           if isinstance(a.annotation, ast.Name) and a.annotation.id in ("float", "int")}
    out |= {a.arg for a, d in zip(pos[len(pos) - len(args.defaults):], args.defaults) if _number(d)}
    out |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None and _number(d)}
    return out


def _calls_to(call: ast.Call, callee: ast.AST) -> bool:
    """`h(...)` of a function `h`, `self.h(...)` of a method."""
    f = call.func
    if isinstance(f, ast.Name):
        return f.id == callee.name
    return (isinstance(f, ast.Attribute) and f.attr == callee.name and isinstance(f.value, ast.Name)
            and f.value.id in ("self", "cls"))


class NanGuardReturnsNumber(Rule):
    code = "GS218"
    name = "nan-guard-returns-number"
    severity = Severity.WARNING
    summary = ("`0 if torch.isnan(loss) else loss` replaces a NaN loss by a Python number with no graph: the "
               "`backward()` of a loss made only of such terms raises.")
    events = (FileEvent,)
    what_it_does = ("Flags a conditional expression that tests a tensor for NaN or infinity (`torch.isnan(x)`, "
                    "`x.isinf().any()`, `not torch.isfinite(x)`) and gives a number literal on the bad value and `x` "
                    "itself otherwise, when its result reaches a `backward()` with nothing but numbers beside it: "
                    "directly (`loss = 0 if torch.isnan(loss) else loss`, then `loss.backward()`), or through a "
                    "helper returning it whose results are weighted and summed into the loss that a method returns "
                    "and its caller backwards.")
    why_bad = ("On a NaN (or infinite) value the expression is the Python number `0`, not a tensor. A loss made only "
               "of such terms is then a plain `int` or `float`, and `loss.backward()` raises \"'int' object has no "
               "attribute 'backward'\" on the first batch where it happens (with a `GradScaler`, \"element 0 of "
               "tensors does not require grad\"). Where other terms keep a tensor, the batch trains on them alone, "
               "which is what the guard meant.")
    example = ("def deal_nan(x):\n    return 0 if torch.isnan(x) else x\n\n"
               "loss = w * deal_nan(gold_loss) + (1 - w) * deal_nan(pseudo_loss)\nloss.backward()")
    use_instead = ("def deal_nan(x):\n    return torch.nan_to_num(x, nan=0.0)  # a tensor, with its graph\n\n"
                   "loss = w * deal_nan(gold_loss) + (1 - w) * deal_nan(pseudo_loss)\nloss.backward()")
    fix_safety = ("There is no automatic fix: keep a tensor on the bad path (`torch.nan_to_num(x)`, "
                  "`torch.where(torch.isnan(x), x.new_zeros(()), x)`, `x.sum() * 0`), or skip the batch before "
                  "the backward.")
    references = ("https://pytorch.org/docs/stable/generated/torch.nan_to_num.html",
                  "https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html")
    valid = (
        # The guard is only logged: no backward of it.
        Valid("import torch\n\nw = torch.nn.Parameter(torch.ones(3))\nfor _ in range(2):\n"
              "    loss = (w * float('nan')).sum()\n    shown = 0.0 if torch.isnan(loss) else loss.item()\n"
              "    print(shown)\n"),
        # A term kept as a tensor beside the guarded one: the loss is a tensor on every path.
        Valid("import torch\n\n\ndef deal_nan(x):\n    return 0 if torch.isnan(x) else x\n\n\n"
              "w = torch.nn.Parameter(torch.ones(3))\nce = (w ** 2).sum()\naux = (w * float('nan')).sum()\n"
              "loss = ce + deal_nan(aux)\nloss.backward()\n"),
        # The guard keeps a tensor (the fix).
        Valid("import torch\n\n\ndef deal_nan(x):\n    return torch.nan_to_num(x, nan=0.0)\n\n\n"
              "w = torch.nn.Parameter(torch.ones(3))\nloss = 0.5 * deal_nan((w * float('nan')).sum())\n"
              "loss = loss + 0.5 * deal_nan((w ** 2).sum())\nloss.backward()\n"),
        # The batch is skipped before the backward.
        Valid("import torch\n\nw = torch.nn.Parameter(torch.ones(3))\nfor x in (float('nan'), 1.0):\n"
              "    loss = (w * x).sum()\n    if torch.isnan(loss):\n        continue\n    loss.backward()\n"),
        # A NaN guard on a Python float (`math.isnan`) of a logged value.
        Valid("import math\nimport torch\n\nw = torch.nn.Parameter(torch.ones(3))\nloss = (w ** 2).sum()\n"
              "v = loss.item()\nv = 0.0 if math.isnan(v) else v\nloss.backward()\n"),
    )
    invalid = (
        # pytorch_geometric's GLEM before its fix: both weighted terms pass through the helper, the method returns
        # their sum and the training loop backwards it.
        Invalid("import torch\nimport torch.nn.functional as F\n\n\nclass EM:\n"
                "    def loss(self, logits, labels, is_gold, pl_weight: float = 0.5):\n"
                "        def deal_nan(x):\n            return 0 if torch.isnan(x) else x\n\n"
                "        mle_loss = deal_nan(F.cross_entropy(logits[is_gold], labels[is_gold]))\n"
                "        pseudo_loss = deal_nan(F.cross_entropy(logits[~is_gold], labels[~is_gold]))\n"
                "        loss = pl_weight * pseudo_loss + (1 - pl_weight) * mle_loss\n        return loss\n\n"
                "    def train_step(self, w, x, labels, is_gold):\n"
                "        loss = self.loss(x @ w, labels, is_gold)\n        loss.backward()\n\n\n"
                "w = torch.nn.Parameter(torch.randn(3, 2))\nx = torch.full((4, 3), float('nan'))\n"
                "EM().train_step(w, x, torch.tensor([0, 1, 0, 1]), torch.tensor([True, False, True, False]))\n",
                line=8, runtime="raises: object has no attribute 'backward'"),
        # The loss itself replaced in the loop.
        Invalid("import torch\n\nw = torch.nn.Parameter(torch.ones(3))\nopt = torch.optim.SGD([w], lr=0.1)\n"
                "for x in (1.0, float('nan')):\n    opt.zero_grad()\n    loss = (w * x).sum()\n"
                "    loss = 0.0 if torch.isnan(loss) else loss\n    loss.backward()\n    opt.step()\n",
                line=8, runtime="raises: object has no attribute 'backward'"),
        # A sum of guarded terms started from `0`.
        Invalid("import torch\n\n\ndef safe(t):\n    return t if torch.isfinite(t).all() else 0\n\n\n"
                "w = torch.nn.Parameter(torch.ones(3))\ntotal = 0\n"
                "for t in ((w * float('inf')).sum(), (w * float('nan')).sum()):\n    total += safe(t)\n"
                "total.backward()\n",
                line=5, runtime="raises: object has no attribute 'backward'"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        # A cheap test of what the file mentions first: this runs on every keystroke.
        attrs = q.attrs
        if "backward" not in attrs or not (_TESTS & attrs):
            return
        done: set = set()
        for call in q.calls():
            f = call.func
            if not (isinstance(f, ast.Attribute) and f.attr in _TESTS):
                continue
            node = q.parent(call)
            while node is not None and not isinstance(node, (ast.IfExp, ast.stmt)):
                node = q.parent(node)
            if not isinstance(node, ast.IfExp) or id(node) in done or not self._test_holds(call, node):
                continue
            done.add(id(node))
            literal = _nan_guard(q, node)
            if literal is None:
                continue
            sink = self._sink(q, node)
            if sink is None:
                continue
            line, col = sink
            report.add(self, node,
                       f"On a NaN/inf value this gives the Python number {ast.unparse(literal)}, not a tensor: the "
                       f"backward at line {line} raises. Keep a tensor (`torch.nan_to_num(x)`) or skip the batch.",
                       related=[Note(line, col, "raises here when every term is the number")])

    @staticmethod
    def _test_holds(call: ast.Call, node: ast.IfExp) -> bool:
        return any(n is call for n in walk(node.test))

    def _sink(self, q, node: ast.IfExp):
        """The backward the guarded value reaches with only numbers beside it: `(line, col, text)`, else None."""
        holder = q.parent(node)
        fn = q.enclosing_function(node)
        if not isinstance(fn, _FUNCS) and fn is not None:
            return None
        if isinstance(holder, ast.Return) and isinstance(fn, _FUNCS):
            todo, seen = [(fn, None)], set()
        elif isinstance(holder, ast.Assign) and holder.value is node:
            todo, seen = [(None, (fn, holder))], set()
        else:
            return None
        scopes = [(f, None) for f in q.functions] + [(None, None)]
        for _ in range(3):
            nxt = []
            for callee, direct in todo:
                if direct is not None:
                    where, seed = direct
                    hit = self._follow(q, where, None, seed)
                    if isinstance(hit, tuple):
                        return hit
                    if hit == "returned" and where is not None:
                        nxt.append((where, None))
                    continue
                if id(callee) in seen:
                    continue
                seen.add(id(callee))
                for scope, _ in scopes:
                    hit = self._follow(q, scope, callee, None)
                    if isinstance(hit, tuple):
                        return hit
                    if hit == "returned" and scope is not None:
                        nxt.append((scope, None))
            todo = nxt
            if not todo:
                break
        return None

    def _follow(self, q, scope, callee, seed):
        """Track, in statement order through `scope` (None: the module's own statements), which names hold a
        guarded value (a call of `callee`, or `seed`'s assignment) with nothing but numbers beside it. Returns the
        backward it reaches, "returned" when `scope` returns it, else None."""
        body = scope if scope is not None else q.tree
        if callee is not None and not any(isinstance(n, ast.Call) and _calls_to(n, callee) for n in own_nodes(body)):
            return None
        params = _numeric_params(scope) if scope is not None else set()
        status: dict = {}

        def kind(e):
            if callee is not None and isinstance(e, ast.Call) and _calls_to(e, callee):
                return _GUARDED
            if seed is not None and e is seed.value:
                return _GUARDED
            if _number(e):
                return _NUMBER
            if isinstance(e, ast.Name):
                return status.get(e.id) or (_NUMBER if e.id in params else None)
            if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
                return kind(e.operand)
            if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
                a, b = kind(e.left), kind(e.right)
                if a is None or b is None:
                    return None
                return _GUARDED if _GUARDED in (a, b) else _NUMBER
            return None

        out: list = []

        def join(a: dict, b: dict) -> dict:
            # A name may hold the guarded value when one branch leaves it so (the other path is fine, this one
            # raises).
            joined = {}
            for k in a.keys() | b.keys():
                x, y = a.get(k), b.get(k)
                joined[k] = _GUARDED if _GUARDED in (x, y) else _NUMBER if x == y == _NUMBER else None
            return joined

        def run(stmts: list, st_in: dict) -> dict:
            nonlocal status
            status = dict(st_in)
            for st in stmts:
                if out:
                    break
                if isinstance(st, ast.Assign):
                    if len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                        status[st.targets[0].id] = kind(st.value)
                elif isinstance(st, ast.AugAssign):
                    if isinstance(st.target, ast.Name):
                        before, add = status.get(st.target.id), kind(st.value)
                        status[st.target.id] = (None if before is None or add is None
                                                else _GUARDED if _GUARDED in (before, add) else _NUMBER)
                elif isinstance(st, ast.Return):
                    if st.value is not None and scope is not None and kind(st.value) == _GUARDED:
                        out.append("returned")
                elif isinstance(st, ast.Expr):
                    hit = self._backward(st.value, kind)
                    if hit is not None:
                        out.append(hit)
                elif isinstance(st, ast.If):
                    here = dict(status)
                    first = run(st.body, here)
                    status = join(first, run(st.orelse, here))
                elif isinstance(st, (ast.For, ast.AsyncFor, ast.While)):
                    here = dict(status)
                    once = run(st.body, here)
                    twice = run(st.body, join(here, once))     # a value carried round the loop (`total += ...`)
                    status = run(st.orelse, join(here, twice))
                elif isinstance(st, (ast.With, ast.AsyncWith)):
                    status = run(st.body, status)
                elif isinstance(st, ast.Try):
                    here = dict(status)
                    done = run(st.body + st.orelse, here)
                    for h in st.handlers:
                        done = join(done, run(h.body, here))
                    status = run(st.finalbody, done)
            return status

        status: dict = {}
        run(body.body, {})
        return out[0] if out else None

    @staticmethod
    def _backward(expr: ast.AST, kind):
        """`v.backward()`, `scaler.scale(v).backward()` or `accelerator.backward(v)` of a guarded `v`."""
        if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "backward"):
            return None
        recv = expr.func.value
        cands = [recv]
        if isinstance(recv, ast.Call) and len(recv.args) == 1 and isinstance(recv.func, ast.Attribute) \
                and recv.func.attr == "scale":
            cands.append(recv.args[0])          # `scaler.scale(loss).backward()`
        elif len(expr.args) == 1 and kind(recv) is None:
            cands.append(expr.args[0])          # `accelerator.backward(loss)`
        if not any(kind(c) == _GUARDED for c in cands):
            return None
        return expr.lineno, expr.col_offset + 1
