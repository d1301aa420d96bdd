"""Which definitions a file runs where grad mode may be off: calls inside `with torch.no_grad():` (or
`inference_mode()`, `set_grad_enabled(<not True>)`) and in `no_grad`-decorated functions, what those run by name,
and functions handed in as callbacks that a definition calls there. `analyse_definitions` (units.py) starts such
definitions with grad mode unknown; `Workspace.no_grad_callers` asks the same of other files. Split from units.py
(size)."""

from __future__ import annotations

import ast
import bisect
from collections import OrderedDict
from typing import TYPE_CHECKING, Optional

from . import torchdb as db
from .astwalk import children, walk
from .interp_util import _class_methods
from .report import split_lines

if TYPE_CHECKING:
    from .interp import Interpreter, ModuleScope


_GRAD_OFF_WORDS = ("no_grad", "inference_mode", "set_grad_enabled")


def called_without_grad(tree: ast.Module, qual, text: str, memo: Optional[OrderedDict] = None,
                        imports: tuple = ()) -> frozenset:
    """Names of the functions and methods this file calls where grad mode may be off: inside `with
    torch.no_grad():`, `torch.inference_mode()` or `torch.set_grad_enabled(<not True>)`, or from a function
    decorated with one of them (`qual` resolves a name through the file's imports). A call is named by its
    function (`evaluate(...)`) or method (`trainer.validate(...)`, `self.evaluate(...)`).

    `analyse_definitions` analyses such a definition with grad mode unknown: its own analysis cannot know which
    caller it serves, and a finding that holds only with grad mode on (`model(x).numpy()` raises) would be a
    false alarm for a function the file runs under `no_grad` (`with torch.no_grad(): evaluate(model, loader)`).
    The calls made in grad mode still run it with grad mode on, in their own context.

    This runs on every analysis (a keystroke): it looks only at top-level statements whose lines hold one of
    the grad-mode words, descends only into such nodes, and keeps each statement's answer in `memo` (keyed by the
    statement object, which an edit elsewhere leaves shared, and the file's `imports`). A file without the words
    costs three text searches."""
    offsets = []
    for word in _GRAD_OFF_WORDS:
        at = text.find(word)
        while at != -1:
            offsets.append(at)
            at = text.find(word, at + 1)
    if not offsets:
        return frozenset()
    offsets.sort()
    marked, line, prev = [], 1, 0
    for at in offsets:
        line += text.count("\n", prev, at)
        prev = at
        marked.append(line)

    def touches(node: ast.AST) -> bool:
        lo = getattr(node, "lineno", None)
        if lo is None:
            return True
        lo = min([lo] + [d.lineno for d in getattr(node, "decorator_list", ())])
        i = bisect.bisect_left(marked, lo)
        return i < len(marked) and marked[i] <= (getattr(node, "end_lineno", None) or lo)

    def off(expr: ast.AST) -> bool:
        target = expr.func if isinstance(expr, ast.Call) else expr
        mode = db.GRAD_MODE.get(qual(target) or "")
        if mode is None:
            return False
        enabled = mode[0]
        if enabled is None and isinstance(expr, ast.Call):  # set_grad_enabled(flag)
            arg = expr.args[0] if expr.args else next((k.value for k in expr.keywords if k.arg == "mode"), None)
            return not (isinstance(arg, ast.Constant) and arg.value is True)
        return enabled is False

    def calls_in(stmt: ast.AST) -> tuple:
        switched = False
        regions: list = []  # (statement run where grad mode may be off, the definition it is in)
        todo = [(stmt, None)]
        while todo:
            node, fn = todo.pop()
            if isinstance(node, (ast.With, ast.AsyncWith)) and any(off(item.context_expr) for item in node.items):
                regions.extend((b, fn) for b in node.body)
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and off(node.value) \
                    and qual(node.value.func) and "set_grad_enabled" in qual(node.value.func) \
                    and (switches_grad_mode(fn) if fn is not None else not restored):
                # `torch.set_grad_enabled(False)` as a statement switches grad mode off for the thread from then on,
                # past the function that runs it (ABSA-PyTorch's `Inferer.__init__`, an inference script's first
                # line): any definition of the file may run after it ("*", `reached_without_grad`). Not where the
                # same function (or module-level code) switches it back on after it (timm's focal-loss weights).
                switched = True
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(off(d) for d in node.decorator_list):
                regions.extend((b, node) for b in node.body)
            inner = node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else fn
            todo.extend((c, inner) for c in children(node) if touches(c))
        names, callbacks = set(), set()
        for region, fn in regions:
            params = _params_at(fn) if fn is not None else {}
            for n in walk(region):
                if isinstance(n, ast.Call):
                    f = n.func
                    if isinstance(f, ast.Name):
                        names.add(f.id)
                        if f.id in params:  # `on_save_callback(x)`: a function the caller hands in
                            callbacks.add((fn.name, params[f.id], f.id, bool(fn.args.args) and fn.args.args[0].arg
                                           in ("self", "cls")))
                    elif isinstance(f, ast.Attribute):
                        names.add(f.attr)
                    # Constant strings handed to the call (`model(images, mode='sample')`), as "=sample": a method
                    # that dispatches on one (`getattr(self, '_' + mode)(...)`) runs `_sample` here
                    # (`reached_without_grad`).
                    for arg in (*n.args, *(k.value for k in n.keywords)):
                        if isinstance(arg, ast.Constant) and type(arg.value) is str and arg.value.isidentifier():
                            names.add("=" + arg.value)
        # A module's `forward` runs through `model(x)` calls, which this scan does not tie to it: one explicit
        # `model.forward(x)` in evaluation code says nothing about the training calls.
        names.discard("forward")
        if switched:
            names.add("*")
        return frozenset(names), frozenset(callbacks)

    # Module-level code that switches grad mode back on as a statement (`torch.set_grad_enabled(True)`).
    restored = any(_switch(st) is True for st in tree.body)
    out: set = set()
    callbacks: set = set()
    for stmt in tree.body:
        if not touches(stmt):
            continue
        hit = memo.get(id(stmt)) if memo is not None else None
        if hit is not None and hit[0] is stmt and hit[1] == imports:
            out |= hit[2][0]
            callbacks |= hit[2][1]
            continue
        found = calls_in(stmt)
        if memo is not None:
            memo[id(stmt)] = (stmt, imports, found)
            while len(memo) > 2048:
                try:
                    memo.popitem(last=False)
                except KeyError:
                    break
        out |= found[0]
        callbacks |= found[1]
    if callbacks:
        out |= _handed_callbacks(tree, text, callbacks)
    return frozenset(out)


def _params_at(fn: ast.AST) -> dict:
    """A definition's parameters -> their position among the positional ones (None for keyword-only)."""
    a = fn.args
    out = {p.arg: i for i, p in enumerate([*a.posonlyargs, *a.args])}
    out.update((p.arg, None) for p in a.kwonlyargs)
    return out


def _handed_callbacks(tree: ast.Module, text: str, callbacks: set) -> set:
    """What the file hands to a parameter that a definition calls where grad mode may be off (`simple_fit(net, opt,
    data, plot_model)` where `simple_fit` runs `on_save_callback(...)` inside `torch.no_grad()`): the name handed in,
    and, for a function defined inside the caller or a lambda, the names its body calls by name (`plot(...)` in
    n-beats' `plot_model`), which then run where grad mode may be off too. Only statements whose text names one of
    those definitions are read (this runs on every analysis where such a callback exists)."""
    by_name: dict = {}
    for fname, index, pname, method in callbacks:
        by_name.setdefault(fname, []).append((index, pname, method))
    lines = split_lines(text)
    found: set = set()
    for stmt in tree.body:
        start, end = stmt.lineno, getattr(stmt, "end_lineno", None) or stmt.lineno
        segment = "\n".join(lines[start - 1:end])
        if not any(f + "(" in segment for f in by_name):
            continue
        nested = {n.name: n for n in walk(stmt) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for call in walk(stmt):
            if not isinstance(call, ast.Call):
                continue
            f = call.func
            fname = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            for index, pname, method in by_name.get(fname, ()):
                if index is not None and method and isinstance(f, ast.Attribute):
                    index -= 1  # `trainer.fit(...)`: `self` is not among the arguments
                handed = [k.value for k in call.keywords if k.arg == pname]
                if index is not None and 0 <= index < len(call.args) \
                        and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
                    handed.append(call.args[index])
                for arg in handed:
                    if isinstance(arg, ast.Name):
                        found.add(arg.id)
                        if arg.id in nested:
                            found |= _calls_by_name(nested[arg.id])
                    elif isinstance(arg, ast.Lambda):
                        found |= _calls_by_name(arg)
    found.discard("forward")
    return found


def reached_without_grad(interp: Interpreter, scope: ModuleScope, names: frozenset) -> frozenset:
    """`names` (definitions called where grad mode may be off, `called_without_grad`) and the definitions of this file
    that those run by name, transitively: `self.act(obs)` or `act(obs)` in a method that every caller runs under
    `torch.no_grad()` (world-models' `rollout` -> `get_action_and_transition`) is a call where grad mode may be off
    too, so that definition also starts with grad mode unknown. Calls made in grad mode still run it with grad mode
    on, in their own context. Only the bodies of definitions already in the set are read (memoised per node)."""
    if not names:
        return names
    defs: dict = {}
    for name, func in scope.functions.items():
        defs.setdefault(name, []).append(func.node)
    for info in scope.classes.values():
        for name, meth in info.methods.items():
            defs.setdefault(name, []).append(meth.node)
    if "*" in names:
        # A statement switched grad mode off for the thread (`torch.set_grad_enabled(False)` outside a `with`):
        # every definition may run after it.
        return frozenset(names) | frozenset(defs)
    out = set(names)
    todo = [n for n in names if n in defs]
    strings = [n[1:] for n in names if n[:1] == "="]
    if strings:
        # Dispatch by name in a module's `forward` (`dispatch_prefixes`): `model(fc, att, mode='sample')` under
        # `no_grad` runs `_sample`.
        for prefix in dispatch_prefixes(interp, scope):
            for s in strings:
                callee = prefix + s
                if callee in defs and callee not in out:
                    out.add(callee)
                    todo.append(callee)
    while todo:
        for node in defs[todo.pop()]:
            for callee in interp.durable("calls_by_name", node, _calls_by_name):
                if callee in defs and callee not in out:
                    out.add(callee)
                    todo.append(callee)
    return frozenset(out)


def dispatch_prefixes(interp: Interpreter, scope: ModuleScope) -> frozenset:
    """The constant prefixes with which the `forward` of a class of the file, its own or inherited from another file,
    picks a method of `self` by a string (`_dispatch_prefixes`): ImageCaptioning.pytorch's and R2Gen's
    `CaptionModel.forward` runs `getattr(self, '_' + mode)(*args, **kwargs)`, so `model(x, mode='sample')` runs
    `_sample` of the subclass. Asked by the engine and by `reached_without_grad`: once per analysis."""
    return interp.syntax("file_dispatch_prefixes", scope.tree, lambda tree: _file_dispatch_prefixes(interp, scope))


def _file_dispatch_prefixes(interp: Interpreter, scope: ModuleScope) -> frozenset:
    found: set = set()
    for info in scope.classes.values():
        fwd = info.methods.get("forward")
        if fwd is None and info.bases:
            fwd = _class_methods(info, interp.class_bases).get("forward")
        node = getattr(fwd, "node", None)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found |= interp.durable("dispatch_prefixes", node, _dispatch_prefixes)
    return frozenset(found)


def _dispatch_prefixes(func: ast.AST) -> frozenset:
    """The constant prefixes of the names `func` looks up on `self` with `getattr` (nested definitions apart):
    `getattr(self, '_' + mode)` and `getattr(self, f'_{mode}')` give "_", `getattr(self, mode)` gives ""."""
    found = set()
    for node in _own_calls(func):
        if isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2 \
                and isinstance(node.args[0], ast.Name) and node.args[0].id == "self":
            key = node.args[1]
            if isinstance(key, ast.BinOp) and isinstance(key.op, ast.Add) and isinstance(key.left, ast.Constant) \
                    and type(key.left.value) is str:
                found.add(key.left.value)
            elif isinstance(key, ast.JoinedStr) and len(key.values) == 2 and isinstance(key.values[0], ast.Constant) \
                    and isinstance(key.values[1], ast.FormattedValue):
                found.add(key.values[0].value)
            elif isinstance(key, ast.Name):
                found.add("")
    return frozenset(found)


def _own_calls(func: ast.AST) -> list:
    """The calls in `func` (its children down), nested definitions, lambdas and classes left out."""
    out = []
    todo = list(children(func))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Call):
            out.append(node)
        todo.extend(children(node))
    return out


def _calls_by_name(func: ast.AST) -> frozenset:
    """Names the body of `func` calls as `name(...)` or `self.name(...)` (nested definitions apart; `forward` apart,
    as in `called_without_grad`)."""
    found = set()
    for node in _own_calls(func):
        f = node.func
        if isinstance(f, ast.Name):
            found.add(f.id)
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
            found.add(f.attr)
    found.discard("forward")
    return frozenset(found)


def _switch(node: ast.AST):
    """For a statement `set_grad_enabled(flag)` (any spelling: `torch.`, `torch.autograd.`, `torch._C.`): True or False
    for a constant flag, None for another; "" for any other node."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return ""
    call = node.value
    f = call.func
    if (f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else "") != "set_grad_enabled":
        return ""
    arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "mode"), None)
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, bool) else None


def switches_grad_mode(fn: ast.AST) -> bool:
    """Whether `fn`'s own body (not nested definitions) may leave grad mode changed for what runs after the call
    returns: it holds `set_grad_enabled(...)` as a statement (outside a `with`), and the last such statement, in
    source order, does not switch it back on (timm's focal loss switches it off and on around its weights)."""
    found = []
    todo = list(getattr(fn, "body", ()))
    while todo:  # statements only (a switch is a statement): the blocks of compound statements, not expressions
        node = todo.pop()
        t = type(node)
        if t is ast.Expr:
            flag = _switch(node)
            if flag != "":
                found.append((node.lineno, node.col_offset, flag))
            continue
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef:
            continue
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if block:
                todo.extend(block)
        if t is ast.Try or t is getattr(ast, "TryStar", None):
            for h in node.handlers:
                todo.extend(h.body)
        elif t is getattr(ast, "Match", None):
            for c in node.cases:
                todo.extend(c.body)
    return bool(found) and max(found)[2] is not True


_BLOCKS = ("body", "orelse", "finalbody")
