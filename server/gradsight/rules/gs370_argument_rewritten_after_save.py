from __future__ import annotations

import ast
import re
from typing import Callable, Optional

from ..engine import torchdb as db
from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from ._syntax import imports_torch
from .base import Invalid, Rule, Valid
from .gs350_inplace_on_detached_argument import _helper_resolver, _inplace_writes, _params, _statements

# Reductions that pick values (`x.max(dim)` saves the indices, not `x`): the op table keeps one entry per name, so
# its "saves the input" is not certain for them.
_PICKS = frozenset({"max", "min", "amax", "amin", "median", "nanmedian", "kthvalue", "mode", "topk", "sort", "msort",
                    "cummax", "cummin", "argmax", "argmin", "argsort"})
# Results that leave autograd at once: a save inside them dies with the temporary graph.
_CUTS = frozenset({"item", "tolist", "detach", "numpy", "float", "int", "bool", "len"})
_GRAD_OFF = frozenset({"no_grad", "inference_mode"})


def _saves_input(q, call: ast.Call, name: str) -> Optional[str]:
    """The op's name when `call` reads the tensor `name` as its first input and saves it for backward whatever its
    other arguments are (`torch.norm(x)`, `x.norm()`, `x.pow(2)`, `x.std(0)`, `x.abs()`), from the generated table."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == name:
        qual, short, rest = f"torch.Tensor.{func.attr}", func.attr, call.args
    elif call.args and isinstance(call.args[0], ast.Name) and call.args[0].id == name:
        qual = q.qualname(func) or ""
        short, rest = qual.rsplit(".", 1)[-1], call.args[1:]
        if not qual.startswith("torch."):
            return None
    else:
        return None
    if short in _PICKS or short.startswith("_"):
        return None
    entry = db.op_entry(qual, [True] + [False if isinstance(a, ast.Constant) else None for a in rest])
    if entry is None or (entry.get("saves_inputs") or {}).get("0") != []:
        return None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == name:
        return f"{name}.{short}()"
    return ast.unparse(func)


def _may_save(short: str) -> bool:
    """Some op of that name saves its first input (a cheap test before anything else)."""
    for qual in (f"torch.Tensor.{short}", f"torch.{short}", f"torch.nn.functional.{short}"):
        entry = db.op_entry(qual)
        if entry is not None and (entry.get("saves_inputs") or {}).get("0") == []:
            return True
    return False


# Names of ops that save their first input whatever the other arguments are (checked against the generated table
# at import): the cheap "does the file even mention one?" test, and the test of each call before anything else.
_SAVER_ATTRS = frozenset(n for n in (
    "norm", "std", "var", "pow", "abs", "log", "log1p", "log2", "log10", "sin", "cos", "asin", "acos", "atan", "sinh",
    "cosh", "acosh", "asinh", "atanh", "square", "prod", "cumprod", "logsumexp", "clamp", "clip", "atan2", "cdist",
    "erf", "erfinv", "softplus", "normalize", "logit", "nan_to_num", "std_mean", "var_mean") if _may_save(n))


def writes_in_text(lines: list, fn, names) -> bool:
    """Whether the text of `fn` may write one of `names` in place (`x /= ...`, `x[i] = ...`, `x.div_(...)`): a regular
    expression over its lines before any walk of its tree (this runs on every keystroke)."""
    text = "\n".join(lines[fn.lineno - 1:fn.end_lineno or fn.lineno])
    alt = "|".join(re.escape(n) for n in names)
    return re.search(rf"\b(?:{alt})\s*(?:[-+*/%@&|^]|\*\*|//|<<|>>)=|\b(?:{alt})\s*\[[^\n]*\]\s*(?:[-+*/%@&|^]|\*\*|//)?="
                     rf"(?!=)|\b(?:{alt})\.[a-z]\w*[a-z0-9]_\(", text) is not None


def _kept_saves(q, expr: ast.AST, name: str) -> Optional[str]:
    """A save of `name` inside `expr` whose result the expression keeps (not only through `.item()`, `.detach()`,
    `float(...)` or a comparison, whose graph dies at once)."""
    todo = [expr]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Compare) or isinstance(n, (ast.Lambda, ast.FunctionDef, ast.ClassDef)):
            continue
        if isinstance(n, ast.Call):
            f = n.func
            if (isinstance(f, ast.Attribute) and f.attr in _CUTS) or (isinstance(f, ast.Name) and f.id in _CUTS):
                continue
            op = _saves_input(q, n, name)
            if op is not None:
                return op
        todo.extend(ast.iter_child_nodes(n))
    return None


def _loads(node: ast.AST) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _written_values(st: ast.stmt) -> list:
    """The expressions whose values an in-place write puts into its target: `v` of `x op= v` and `x[i] = v`, the
    arguments of `x.op_(...)` (not the index: a mask computed from the saved value chooses where, not what)."""
    if isinstance(st, (ast.AugAssign, ast.Assign)):
        return [st.value]
    if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
        return list(st.value.args) + [k.value for k in st.value.keywords]
    return []


def _bound(st: ast.stmt) -> set:
    if isinstance(st, ast.Assign):
        targets = st.targets
    elif isinstance(st, (ast.AnnAssign, ast.For, ast.AsyncFor)):
        targets = [st.target]
    elif isinstance(st, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in st.items if i.optional_vars is not None]
    else:
        return set()
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _handed_back(st: ast.stmt, name: str, helper: Callable[[ast.Call], Optional[ast.AST]]) -> Optional[ast.Call]:
    """The call of `x, y = check(x, y)`: the argument rebound to what a helper hands back in its own position (a
    validating helper returns the caller's tensors). A helper gradsight can read must return that parameter by name."""
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Tuple)
            and isinstance(st.value, ast.Call) and not st.value.keywords):
        return None
    names = [getattr(e, "id", None) for e in st.targets[0].elts]
    args = [getattr(a, "id", None) for a in st.value.args]
    if names != args or name not in names:
        return None
    fn = helper(st.value)
    if fn is None:
        return st.value
    i = names.index(name)
    params = [p.arg for p in (*fn.args.posonlyargs, *fn.args.args)]
    if params and params[0] in ("self", "cls") and isinstance(st.value.func, ast.Attribute):
        params = params[1:]
    if i >= len(params):
        return None
    rets = [n.value for n in ast.walk(fn) if isinstance(n, ast.Return)]
    ok = rets and all(isinstance(r, ast.Tuple) and len(r.elts) > i and isinstance(r.elts[i], ast.Name)
                      and r.elts[i].id == params[i] for r in rets)
    return st.value if ok else None


def returned_names(fn) -> set:
    """Names some `return` of `fn` hands back as is (alone or in a tuple): the function writes them in place on
    purpose."""
    out = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Return) and n.value is not None:
            elts = n.value.elts if isinstance(n.value, (ast.Tuple, ast.List)) else [n.value]
            out.update(e.id for e in elts if isinstance(e, ast.Name))
    return out


def grad_off_statements(q, fn) -> set:
    """ids of `fn`'s own statements that run under `with torch.no_grad():` (or `inference_mode`), from its syntax alone
    (no parent links: this runs on every keystroke)."""
    out: set = set()
    todo = [(st, False) for st in fn.body]
    while todo:
        st, off = todo.pop()
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if off:
            out.add(id(st))
        if isinstance(st, (ast.With, ast.AsyncWith)) and not off:
            for item in st.items:
                c = item.context_expr
                qual = q.qualname(c.func if isinstance(c, ast.Call) else c) or ""
                if qual.startswith("torch") and qual.rsplit(".", 1)[-1] in _GRAD_OFF:
                    off = True
        for field in ("body", "orelse", "finalbody", "handlers"):
            todo.extend((s, off) for s in getattr(st, field, None) or [])
    return out


def block_paths(fn) -> dict:
    """id of each of `fn`'s own statements -> the blocks that hold it, outermost first ((id(statement), field) pairs):
    a statement whose path is a prefix of another's runs before it on every path through that block."""
    out: dict = {}
    todo = [(st, ()) for st in fn.body]
    while todo:
        st, path = todo.pop()
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        out[id(st)] = path
        for field in ("body", "orelse", "finalbody", "handlers"):
            todo.extend((s, path + ((id(st), field),)) for s in getattr(st, field, None) or [])
    return out


def dominates(paths: dict, first: ast.stmt, later: ast.stmt) -> bool:
    """`first` runs before `later` whenever `later` runs (same block or an enclosing one, and earlier)."""
    a, b = paths.get(id(first)), paths.get(id(later))
    return a is not None and b is not None and b[:len(a)] == a and (first.lineno, first.col_offset) < \
        (later.lineno, later.col_offset)


def tensor_params(fn) -> list:
    """The parameters (`self` left out) not annotated as something other than a tensor (`src: List[str]`)."""
    a = fn.args
    out = []
    for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs):
        if arg.annotation is not None and "Tensor" not in ast.unparse(arg.annotation):
            continue
        out.append(arg.arg)
    return [n for n in out if n in _params(fn)]


def enclosing_defs(q, nodes) -> list:
    """The innermost function definition around each node (None outside functions), by line ranges over
    `q.functions` (no parent links)."""
    fns = [f for f in q.functions if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    out = []
    for node in nodes:
        best = None
        for f in fns:
            if f.lineno <= node.lineno <= (f.end_lineno or f.lineno) and (best is None or f.lineno >= best.lineno):
                best = f
        out.append(best)
    return out


def find(q, fn, names=None) -> list:
    """(write node, parameter, op, the statement that saved it, the call that handed it back or None) for every
    in-place write into an argument of `fn` whose new values come from an op that saved that argument."""
    if (fn.name.endswith("_") and not fn.name.endswith("__")) or _params(fn)[:1] == ["ctx"]:
        return []
    for d in fn.decorator_list:
        qual = q.qualname(d.func if isinstance(d, ast.Call) else d) or ""
        if qual.rsplit(".", 1)[-1] in _GRAD_OFF:
            return []
    # Built only when a call rebinds an argument (the resolver asks for the enclosing class through parent links).
    helper = lambda call: _helper_resolver(q, fn)(call)  # noqa: E731
    out = []
    stmts = _statements(fn)
    off = grad_off_statements(q, fn)
    paths = block_paths(fn)
    returned = returned_names(fn)
    for p in tensor_params(fn):
        if p in returned or (names is not None and p not in names):
            continue
        via = None
        saved = None  # (op, statement, names carrying its result)
        for st in stmts:
            writes = [(node, how) for name, node, how in _inplace_writes(st) if name == p]
            if writes and id(st) not in off:
                values = _written_values(st)
                inline = next((op for op in (_kept_saves(q, v, p) for v in values) if op is not None), None) \
                    if saved is None else None
                if inline is not None:
                    out.append((writes[0][0], p, inline, st, via))
                    break
                if saved is not None and any(_loads(v) & saved[2] for v in values) and dominates(paths, saved[1], st):
                    out.append((writes[0][0], p, saved[0], saved[1], via))
                    break
            bound = _bound(st)
            if p in bound:
                call = _handed_back(st, p, helper)
                if call is None or saved is not None:
                    break
                via = call
            if saved is not None:
                if bound and _loads(st) & saved[2]:
                    saved[2].update(bound)
                elif bound:
                    saved[2].difference_update(bound)
            elif isinstance(st, ast.Assign) and id(st) not in off:
                op = _kept_saves(q, st.value, p)
                if op is not None and bound and p not in bound:
                    saved = (op, st, set(bound))
    return out


def _saver_calls(top) -> list:
    """A top-level statement's calls of an op that may save its input, on a name or with a name first:
    (call, those names)."""
    calls = []
    for c in top.calls:
        func = c.func
        if func.__class__ is not ast.Attribute or func.attr not in _SAVER_ATTRS:
            continue
        names = [n.id for n in (func.value, c.args[0] if c.args else None) if isinstance(n, ast.Name)]
        if names:
            calls.append((c, names))
    return calls


class ArgumentRewrittenAfterSave(Rule):
    code = "GS370"
    name = "argument-rewritten-after-save"
    severity = Severity.WARNING
    summary = ("A function rewrites its tensor argument in place with a value computed from it (`x /= x.norm()`): "
               "backward raises if `x` requires grad, and otherwise the caller's tensor changes.")
    events = (FileEvent,)
    what_it_does = ("Flags `x op= v`, `x[i] = v` and `x.op_(v)` on an argument `x` of the function where `v` comes "
                    "from an op that saved `x` for backward (`norm`, `std`, `pow`, `abs`, `log`, ... as the "
                    "generated op table says: `norm = torch.norm(x, dim=1)` then `x /= norm.unsqueeze(1)`), also "
                    "where the argument went through a validating helper that hands it back "
                    "(`x, y = _check_input(x, y)`). The value must come from the saved read (a mask computed from it only "
                    "chooses where to write) on every path to the write. Functions that return the argument itself (an "
                    "in-place contract), whose name ends in `_`, that run under `torch.no_grad()`, a custom Function's "
                    "`forward(ctx, ...)`, arguments annotated as something other than a tensor, and files that import "
                    "nothing of torch are not reported.")
    why_bad = ("Whatever the caller passes, this is wrong: if `x` requires grad, the op that read it saved it and "
               "backward raises \"one of the variables needed for gradient computation has been modified by an "
               "inplace operation\" (a leaf that requires grad raises at once); if it does not, the caller's tensor "
               "is silently changed under it, which the function's result does not announce. The function computes "
               "a new value from its argument (evidence from use: it never hands the argument back).")
    example = ("def pairwise_cosine(x, y):\n    norm = torch.norm(x, p=2, dim=1)\n"
               "    x /= norm.unsqueeze(1)          # rewrites the caller's x, which norm saved\n    return x @ y.T")
    use_instead = ("def pairwise_cosine(x, y):\n    norm = torch.norm(x, p=2, dim=1)\n"
                   "    x = x / norm.unsqueeze(1)\n    return x @ y.T")
    fix_safety = ("No automatic fix: write the operation out of place (`x = x / norm`) or clone the argument first; "
                  "whether later code of the caller expects the change cannot be seen here.")
    references = ("https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd",)
    valid = (
        # Out of place: the caller's tensor is left alone.
        Valid("import torch\n\n\ndef pairwise_cosine(x, y):\n    norm = torch.norm(x, p=2, dim=1)\n"
              "    x = x / norm.unsqueeze(1)\n    return x @ y.T\n\n\nw = torch.randn(3, 4, requires_grad=True)\n"
              "pairwise_cosine(w * 2, torch.randn(2, 4)).sum().backward()\n"),
        # A copy is written (the caller's data never requires grad here).
        Valid("import torch\n\n\ndef pairwise_cosine(x, y):\n    x = x.clone()\n    x /= x.norm(dim=1, keepdim=True)\n"
              "    return x @ y.T\n\n\na = torch.randn(3, 4)\nb = a.clone()\npairwise_cosine(a, torch.randn(2, 4))\n"
              "assert torch.equal(a, b)\n"),
        # The function hands its argument back: an in-place normaliser by contract.
        Valid("import torch\n\n\ndef normalize(x):\n    x /= x.norm(dim=1, keepdim=True)\n    return x\n\n\n"
              "print(normalize(torch.randn(3, 4)))\n"),
        # Under no_grad nothing is saved (weight normalisation of parameters).
        Valid("import torch\n\n\ndef renorm(weight, max_norm):\n    with torch.no_grad():\n"
              "        norm = weight.norm(dim=1, keepdim=True)\n        weight.mul_(max_norm / norm.clamp(min=max_norm))\n"
              "    return norm.max().item()\n\n\nw = torch.nn.Parameter(torch.randn(3, 4))\nrenorm(w, 1.0)\n"),
        # The write does not depend on what the op read (the saved value only feeds the result).
        Valid("import torch\n\n\ndef masked_energy(x, mask):\n    energy = x.pow(2).sum()\n    x[mask] = 0\n"
              "    return energy\n\n\nmasked_energy(torch.randn(4), torch.tensor([True, False, True, False]))\n"),
    )
    invalid = (
        Invalid("import torch\n\n\ndef pairwise_cosine(x, y):\n    norm = torch.norm(x, p=2, dim=1)\n"
                "    x /= norm.unsqueeze(1)\n    return x @ y.T\n\n\nw = torch.randn(3, 4, requires_grad=True)\n"
                "pairwise_cosine(w * 2, torch.randn(2, 4)).sum().backward()\n",
                line=6, runtime="raises: modified by an inplace operation", also=(6,)),
        # Through a validating helper that hands the arguments back, and the norm written inline.
        Invalid("import torch\n\n\ndef _check(x, y):\n    if x.ndim != 2:\n        raise ValueError(\"2-d input\")\n"
                "    return x, y\n\n\ndef similarity(x, y):\n    x, y = _check(x, y)\n"
                "    x.div_(x.norm(dim=1, keepdim=True))\n    return x @ y.T\n\n\n"
                "w = torch.randn(3, 4, requires_grad=True)\nsimilarity(w * 2, torch.randn(2, 4)).sum().backward()\n",
                line=12, runtime="raises: modified by an inplace operation", also=(12,)),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if not imports_torch(q):
            return  # not a file that uses torch (NumPy code writes its arrays the same way)
        # Only functions with a call that saves one of their own arguments: no walk over the file.
        if _SAVER_ATTRS.isdisjoint(q.attrs):
            return
        calls = q.surveyed("GS370.saver-calls", _saver_calls)
        cands: dict = {}  # id(function) -> (function, the arguments an op there saves)
        for (c, names), fn in zip(calls, enclosing_defs(q, [c for c, _ in calls])) if calls else ():
            if fn is None:
                continue
            params = _params(fn)
            read = {n for n in names if n in params and _saves_input(q, c, n) is not None}
            if read:
                cands.setdefault(id(fn), (fn, set()))[1].update(read)
        lines = report.source.lines
        for fn, names in cands.values():
            if not writes_in_text(lines, fn, names):
                continue
            for node, param, op, saved_at, via in find(q, fn, names):
                line, col, _, _ = report.source.span(saved_at)
                related = [Note(line, col, f"`{op}` saves `{param}` for backward here")]
                if via is not None:
                    vline, vcol, _, _ = report.source.span(via)
                    related.append(Note(vline, vcol, f"`{param}` is the caller's tensor, handed back here"))
                report.add(self, node,
                           f"This in-place write changes the caller's `{param}` after `{op}` saved it; backward raises "
                           f"if it requires grad. Write it out of place (or clone `{param}` first); otherwise the "
                           "caller's tensor changes under it.",
                           related=related)
