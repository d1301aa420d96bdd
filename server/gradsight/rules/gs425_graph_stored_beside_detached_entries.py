from __future__ import annotations

import ast
from typing import Iterator, Optional

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid

# Calls that take a value out of autograd: what a container stores through one of them keeps no graph.
_CUT_METHODS = frozenset({"detach", "item", "tolist", "numpy"})
_CUT_BUILTINS = frozenset({"float", "int"})
_NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                      "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode"})


def _is_cut(value: ast.AST) -> bool:
    """`t.detach()...`, `t.item()`, `float(t)`, `t.cpu().numpy()`: the stored value left autograd."""
    return bool(_cut_reads(value))


def _root(node: ast.AST) -> Optional[str]:
    """The name a chain of attributes, calls and subscripts starts from (`x` of `x.cpu().data[0]`)."""
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _cut_reads(value: ast.AST) -> set:
    """The names `value` takes out of autograd: the root of `name....detach()` / `.item()` / `.data`, and the
    names read by `float(...)`/`int(...)`. (Other names it reads, `gt.numpy()` beside `f(pred, ...)`, are not.)"""
    out = set()
    for n in ast.walk(value):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Attribute) and f.attr in _CUT_METHODS:
                root = _root(f.value)
                if root is not None:
                    out.add(root)
            elif isinstance(f, ast.Name) and f.id in _CUT_BUILTINS:
                out |= {r for a in n.args if (r := _root(a)) is not None}
        elif isinstance(n, ast.Attribute) and n.attr == "data":
            root = _root(n.value)
            if root is not None:
                out.add(root)
    return out


def _loads(node: ast.AST) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _store(node: ast.AST) -> Optional[tuple]:
    """(container name, key, value) of `c["key"] = v` (an `ast.Assign`) or `c.set("key", v)` (an `ast.Call`)."""
    if isinstance(node, ast.Assign):
        if len(node.targets) != 1:
            return None
        t = node.targets[0]
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and isinstance(t.slice, ast.Constant) \
                and isinstance(t.slice.value, str):
            return t.value.id, t.slice.value, node.value
        return None
    f = node.func
    if isinstance(f, ast.Attribute) and f.attr == "set" and isinstance(f.value, ast.Name) and len(node.args) == 2 \
            and not node.keywords and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return f.value.id, node.args[0].value, node.args[1]
    return None


def _bindings(fn: ast.AST) -> list:
    """The function's own assignments (`Assign`, `AugAssign`), nested definitions left out."""
    out, todo = [], list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(n, (ast.Assign, ast.AugAssign)):
            out.append(n)
        todo.extend(ast.iter_child_nodes(n))
    return out


def _targets(stmt: ast.stmt) -> list:
    return stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]


def _binds(stmt: ast.stmt, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for t in _targets(stmt) for n in ast.walk(t))


def _returns(fn: ast.AST, name: str) -> bool:
    """Whether the function returns the container (`return info`, `return loss, info`)."""
    todo = list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(n, ast.Return) and n.value is not None and name in _loads(n.value):
            return True
        todo.extend(ast.iter_child_nodes(n))
    return False


def _no_grad_around(node: ast.AST, fn: ast.AST, q) -> bool:
    """Whether the store runs with grad mode off: a `with torch.no_grad():` around it in the function, or the
    function decorated with `@torch.no_grad()` / `@torch.inference_mode()`."""
    for d in fn.decorator_list:
        if q.qualname(d.func if isinstance(d, ast.Call) else d) in _NO_GRAD:
            return True
    p = q.parent(node)
    while p is not None and p is not fn:
        if isinstance(p, (ast.With, ast.AsyncWith)) and any(
                isinstance(i.context_expr, ast.Call) and q.call_name(i.context_expr) in _NO_GRAD for i in p.items):
            return True
        p = q.parent(p)
    return False


def _evidence(fn: ast.AST, name: str, line: int, cuts: list) -> Optional[tuple]:
    """Why `name`, stored as it is, is a tensor whose graph the code itself cuts elsewhere in the same container:
    (the cut store, what it says). `cuts` holds (statement, names read) of the container's detached stores.

    * a total it feeds: `loss += w * name` with `c["loss"] = loss.detach()...` (icefall's loss terms);
    * its own reduction: `name = reduce(name)` after the store, then `c["k"] = name.detach()` (torchrl's entropy).
    Where a detached store reads the very binding stored raw (`c["loss"] = loss; c["log"] = loss.item()`), both are
    kept on purpose: no evidence. A sibling alone (`a, b = model(x)` with `c["a"] = a.detach()`) is none either:
    it may be a count (`tot_frames`) or a loss kept for the caller's backward (`c["loss_kl"] = loss_kl` beside
    `c["kl"] = kl.detach()`)."""
    binds = [b for b in _bindings(fn) if _binds(b, name)]
    for stmt, read in cuts:
        if name in read and not any(min(line, stmt.lineno) < b.lineno < max(line, stmt.lineno) for b in binds):
            return None  # the same binding, stored both with and without its graph
    for stmt, read in cuts:
        if name in read and line < stmt.lineno and any(line < b.lineno < stmt.lineno and name in _loads(b.value)
                                                       for b in binds):
            return stmt, f"`{name}` is reduced and stored detached"
    for b in _bindings(fn):
        if len(_targets(b)) != 1 or not isinstance(_targets(b)[0], ast.Name):
            continue
        total = _targets(b)[0].id
        if total == name or not (isinstance(b, ast.AugAssign) and isinstance(b.op, (ast.Add, ast.Sub))
                                 or isinstance(b, ast.Assign)) or not _term_of(b.value, name):
            continue
        for stmt, read in cuts:
            if total in read and stmt.lineno > b.lineno:
                return stmt, f"`{total}`, which `{name}` is added into, is stored detached"
    return None


def _term_of(expr: ast.AST, name: str) -> bool:
    """Whether `name` is a term of the sum `expr` (`a + w * name`, `name * w - b`): the sum is a total of losses,
    not any value computed from `name` (`loss = crit(pred, y)` does not make `pred` a loss)."""
    if isinstance(expr, ast.Name):
        return expr.id == name
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        return _term_of(expr.left, name) or _term_of(expr.right, name)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Mult, ast.Div)):
        return isinstance(expr.left, ast.Name) and expr.left.id == name \
            or isinstance(expr.op, ast.Mult) and isinstance(expr.right, ast.Name) and expr.right.id == name
    return False


def _cut_bound(fn: ast.AST, name: str) -> bool:
    """`name = t.item()` (or `.detach()`, `.data`) in the function, or a method of such a value
    (`probs, labels = out.cpu().data.max(1)` then `probs`): it may be a plain number or a tensor without history."""
    cut: set = set()
    binds = [b for b in _bindings(fn) if isinstance(b, ast.Assign)]
    for _ in range(3):  # a few hops: `d = out.data`, `p, l = d.max(1)`
        for b in binds:
            if _cut_reads(b.value) or _root(b.value) in cut:
                cut |= {n.id for t in b.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return name in cut


_BUILTINS = frozenset({"max", "min", "abs", "round", "len", "sum", "pow", "getattr", "float", "int", "bool"})


def _computed_by_call(fn: ast.AST, name: str) -> bool:
    """Every binding of `name` in the function is a call's result, not a builtin's (`a, b = model(x)`, `e =
    self._get_entropy(dist)`, `e = reduce(e)`): a tensor a model or a loss made, not a coefficient computed from
    settings (`lambd = self.lambd * max(...)`) nor a parameter of the function."""
    binds = [b for b in _bindings(fn) if _binds(b, name)]
    if not binds:
        return False
    for b in binds:
        call = b.value
        if not isinstance(b, ast.Assign) or not isinstance(call, ast.Call):
            return False
        if isinstance(call.func, ast.Name) and call.func.id in _BUILTINS:
            return False
    return True


def _sites(q) -> Iterator[tuple]:
    """(function, container, raw store statement, name, key, cut store, why) for each finding."""
    groups: dict = {}
    for node in q.assigns:
        st = _store(node)
        if st is not None:
            groups.setdefault(st[0], []).append((node, st))
    for call in q.calls():
        if isinstance(call.func, ast.Attribute) and call.func.attr == "set":
            st = _store(call)
            if st is not None:
                groups.setdefault(st[0], []).append((call, st))
    for container, stores in groups.items():
        if len(stores) < 2 or not any(isinstance(v, ast.Name) for _, (_, _, v) in stores):
            continue
        by_fn: dict = {}
        for node, st in stores:
            fn = q.enclosing_function(node)
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                by_fn.setdefault(fn, []).append((node, st))
        for fn, items in by_fn.items():
            cuts = [(q.statement(node), reads) for node, (_, _, v) in items if (reads := _cut_reads(v))]
            raws = [(node, k, v) for node, (_, k, v) in items if isinstance(v, ast.Name)]
            if not cuts or not raws or not _returns(fn, container):
                continue
            for node, key, value in raws:
                stmt = q.statement(node)
                if stmt is None or _cut_bound(fn, value.id) or not _computed_by_call(fn, value.id) \
                        or _no_grad_around(stmt, fn, q):
                    continue
                why = _evidence(fn, value.id, stmt.lineno, cuts)
                if why is not None:
                    yield fn, container, stmt, value.id, key, why[0], why[1]


class GraphStoredBesideDetachedEntries(Rule):
    code = "GS425"
    name = "graph-stored-beside-detached-entries"
    severity = Severity.WARNING
    summary = ("A tensor stored with its graph in a returned metrics container whose other entries the code "
               "detaches keeps every step's graph alive.")
    events = (FileEvent,)
    what_it_does = ("Flags `stats[\"key\"] = t` (or `stats.set(\"key\", t)`) in a function that returns `stats`, "
                    "where the same function stores values made with `t` detached into the same container "
                    "(`.detach()`, `.item()`, `float(...)`): a total `t` is added into "
                    "(`loss += w * t` and `stats[\"loss\"] = loss.item()`), or `t` itself once reduced. Stores "
                    "under `torch.no_grad()` and a binding stored both with and without its graph are left alone.")
    why_bad = ("The code detaches what it logs because those values carry the model's graph; the one entry stored "
               "as it is carries that graph too. A metrics object or loss output that the training loop keeps, "
               "sums into a running total or logs holds every step's graph (its autograd nodes and the tensors "
               "they reference), so memory grows with the number of steps (icefall's `info[\"recon_loss\"]` "
               "folded into `tot_loss * (1 - 1 / reset_interval) + info`, torchrl's `composite_entropy`).")
    example = ("simple_loss, recon_loss = model(x)\nloss = simple_loss + 0.1 * recon_loss\ninfo = {}\n"
               "info[\"loss\"] = loss.detach().item()\ninfo[\"simple_loss\"] = simple_loss.detach().item()\n"
               "info[\"recon_loss\"] = recon_loss        # keeps the graph\nreturn loss, info")
    use_instead = "info[\"recon_loss\"] = recon_loss.detach().item()"
    fix_safety = ("There is no automatic fix: whether the entry should be a number (`.item()`) or a detached "
                  "tensor is the author's choice.")
    references = ("https://pytorch.org/docs/stable/notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory",)
    _head = ("import torch\n\nmodel = torch.nn.Linear(4, 2)\n\n\ndef losses(x):\n    out = model(x)\n"
             "    return out[:, 0].mean(), out[:, 1].mean()\n\n\n"
             "def compute_loss(x):\n    simple_loss, recon_loss = losses(x)\n"
             "    loss = simple_loss + 0.1 * recon_loss\n    info = {}\n"
             "    info[\"loss\"] = loss.detach().item()\n    info[\"simple_loss\"] = simple_loss.detach().item()\n")
    _tail = ("    return loss, info\n\n\ntotal = {}\nfor _ in range(3):\n"
             "    loss, info = compute_loss(torch.randn(3, 4))\n    loss.backward()\n"
             "    for k, v in info.items():\n        total[k] = total.get(k, 0) + v\n")
    _entropy = ("import torch\n\npolicy = torch.nn.Linear(4, 3)\n\n\n"
                "def ppo_loss(obs, adv):\n    dist = torch.distributions.Categorical(logits=policy(obs))\n"
                "    out = {}\n    out[\"loss_objective\"] = -(dist.log_prob(dist.sample()) * adv).mean()\n"
                "    entropy = dist.entropy()\n")
    _entropy_tail = ("    entropy = entropy.mean()\n    out[\"entropy\"] = entropy.detach()\n"
                     "    out[\"loss_entropy\"] = -0.01 * entropy\n    return out\n\n\n"
                     "logs = []\nfor _ in range(3):\n    out = ppo_loss(torch.randn(5, 4), torch.randn(5))\n"
                     "    (out[\"loss_objective\"] + out[\"loss_entropy\"]).backward()\n    logs.append(out)\n")
    valid = (
        # The fix: a number, like the entries beside it.
        Valid(_head + "    info[\"recon_loss\"] = recon_loss.detach().item()\n" + _tail
              + "assert not torch.is_tensor(total[\"recon_loss\"])\n"),
        # The same binding stored both ways on purpose: the loss to backward and its logged copy.
        Valid("import torch\n\nmodel = torch.nn.Linear(4, 1)\n\n\ndef training_step(x):\n"
              "    loss = model(x).pow(2).mean()\n    out = {}\n    out[\"loss\"] = loss\n"
              "    out[\"log_loss\"] = loss.detach().item()\n    return out\n\n\n"
              "out = training_step(torch.randn(3, 4))\nout[\"loss\"].backward()\n"),
        # Under no_grad nothing has a graph.
        Valid("import torch\n\nmodel = torch.nn.Linear(4, 2)\n\n\n@torch.no_grad()\ndef evaluate(x):\n"
              "    out = model(x)\n    a, b = out[:, 0].mean(), out[:, 1].mean()\n    info = {}\n"
              "    info[\"a\"] = a.item()\n    info[\"b\"] = b\n    return info\n\n\n"
              "assert evaluate(torch.randn(3, 4))[\"b\"].grad_fn is None\n"),
        # A container that dies with the function.
        Valid("import torch\n\nmodel = torch.nn.Linear(4, 2)\n\n\ndef step(x):\n"
              "    out = model(x)\n    a, b = out[:, 0].mean(), out[:, 1].mean()\n    info = {}\n"
              "    info[\"a\"] = a.item()\n    info[\"b\"] = b\n    print(info)\n    return a + b\n\n\n"
              "step(torch.randn(3, 4)).backward()\n"),
    )
    invalid = (
        Invalid(_head + "    info[\"recon_loss\"] = recon_loss\n" + _tail, line=17,
                runtime="silent: total[\"recon_loss\"].grad_fn is not None"),
        Invalid(_entropy + "    out[\"composite_entropy\"] = entropy\n" + _entropy_tail, line=11,
                runtime="silent: all(o[\"composite_entropy\"].grad_fn is not None for o in logs)"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        attrs = q.attrs
        if "detach" not in attrs and "item" not in attrs and "numpy" not in attrs and "tolist" not in attrs:
            return  # the common case, checked first (this rule runs on every keystroke)
        for fn, container, stmt, name, key, cut, why in _sites(q):
            report.add(self, stmt,
                       f"`{container}[\"{key}\"]` keeps the graph of `{name}`; the entries beside it are detached. "
                       f"The returned `{container}` outlives the step, so every step's graph it reaches stays alive.",
                       related=[Note(cut.lineno, cut.col_offset + 1, why)])
