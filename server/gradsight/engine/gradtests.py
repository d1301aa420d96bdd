"""Names whose grad state the function itself asks about, read from the syntax of that function.

A function that tests `t.requires_grad` (in an `if`, `while` or conditional expression) expects to be called both
with a `t` that requires grad and with one that does not (gpytorch's fantasy strategy: `if cap_mat.requires_grad or
new_root.requires_grad:` chooses a solver). When `t`'s value is unknown to gradsight (built from parameters and
library results), that test is evidence from use that the graph-carrying case happens. It is taken only where it
cannot be a guard: the op that reads `t` comes before every test of `t.requires_grad` (and no `assert` reads a
`.requires_grad`), no statement binds `t` between the op and the first test (the test reads the value the op read),
and no in-place write of the function may depend on a test of any `.requires_grad`: none stands in its branches
(`if not x.requires_grad: y.add_(1)` writes only where nothing is saved) and no branch of one leaves the block
(`if x.requires_grad: return y` before `y += 1`).
"""

from __future__ import annotations

import ast
import re
from typing import Optional

from .astwalk import walk

# Methods that write into their receiver and end in `_` but are not in-place arithmetic on its values.
_NOT_WRITES = frozenset({"requires_grad_", "retain_grad", "share_memory_", "detach_"})


def _reads_requires_grad(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "requires_grad" and isinstance(n.ctx, ast.Load)
               for n in walk(node))


def _writes_in_place(node: ast.AST) -> bool:
    for n in walk(node):
        if isinstance(n, ast.AugAssign):
            return True
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Subscript) for t in n.targets):
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr.endswith("_") \
                and not n.func.attr.endswith("__") and n.func.attr not in _NOT_WRITES:
            return True
    return False


def _diverts(stmts) -> bool:
    return any(isinstance(n, (ast.Return, ast.Raise, ast.Continue, ast.Break)) for s in stmts for n in walk(s))


def _guarded_write(fn: ast.AST) -> bool:
    """Some in-place write of `fn` may depend on a test that reads `.requires_grad`: it stands in a branch of one,
    or a branch of one leaves the block (`if t.requires_grad: return y` before `y += 1`)."""
    for n in walk(fn):
        if isinstance(n, (ast.If, ast.While)) and _reads_requires_grad(n.test):
            if any(_writes_in_place(s) for s in n.body + n.orelse) or _diverts(n.body + n.orelse):
                return True
        elif isinstance(n, ast.IfExp) and _reads_requires_grad(n.test) \
                and (_writes_in_place(n.body) or _writes_in_place(n.orelse)):
            return True
    return False


def grad_tests(fn: Optional[ast.AST], walker=walk) -> Optional[dict]:
    """For a function whose tests may give evidence: {name: (first test line, lines binding the name)} for every name
    whose `.requires_grad` an `if`, `while` or conditional expression of `fn` tests; None when none can (no such
    test, an `assert` on a `.requires_grad`, an in-place write that may depend on one). One walk per function
    (`walker(fn)`: the interpreter's shared one)."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    first: dict = {}
    for n in walker(fn):
        if isinstance(n, ast.Assert) and _reads_requires_grad(n.test):
            return None  # `assert not t.requires_grad`: the function states one grad state, not both
        if isinstance(n, (ast.If, ast.While, ast.IfExp)):
            for a in walk(n.test):
                if isinstance(a, ast.Attribute) and a.attr == "requires_grad" and isinstance(a.ctx, ast.Load) \
                        and isinstance(a.value, ast.Name):
                    first[a.value.id] = min(first.get(a.value.id, a.lineno), a.lineno)
    if not first or _guarded_write(fn):
        return None
    stores: dict = {name: [] for name in first}
    for n in walker(fn):
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            for name in n.names:
                first.pop(name, None)
        elif isinstance(n, ast.Name) and n.id in stores and isinstance(n.ctx, (ast.Store, ast.Del)):
            stores[n.id].append(n.lineno)
    return {name: (line, tuple(stores[name])) for name, line in first.items()} or None


def grad_tested(tests: Optional[dict], name: str, line: int) -> bool:
    """Whether the op at `line` reading `name` may take it as requiring grad (`tests` from `grad_tests`): every test
    of `name.requires_grad` comes after the op and no statement binds `name` from the op to the first test."""
    if not tests or name not in tests:
        return False
    first, stores = tests[name]
    return first > line and not any(line <= s <= first for s in stores)


# An in-place method's name in an `ast.dump` (`attr='sqrt_'`; not a dunder).
_INPLACE_ATTR = re.compile(r"attr='([A-Za-z][A-Za-z0-9_]*[A-Za-z0-9])_'")


def _strip_inplace(dump: str) -> str:
    """An `ast.dump` with every in-place method name turned into its out-of-place twin (`sqrt_` -> `sqrt`)."""
    return _INPLACE_ATTR.sub(r"attr='\1'", dump)


def out_of_place_twins(fn: Optional[ast.AST]) -> tuple:
    """The out-of-place branches of `fn`'s in-place/out-of-place twins: an `if` whose two branches are the same code
    except that one calls in-place methods (`m.div_(v.add_(e).sqrt_())`) where the other calls their out-of-place
    forms (`m.div(v.add(e).sqrt_())`), torchopt's `if inplace: def f(...) ... else: def f(...)`. Code that keeps an
    out-of-place copy of a computation does so for autograd (an in-place op would break the graph), so the branch
    with fewer in-place calls is the one that runs with tensors that require grad, in grad mode (evidence from use).
    The branches (statement lists) in source order; () when none. One walk per function."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ()
    out = []
    for n in walk(fn):
        if not isinstance(n, ast.If) or not n.orelse or (len(n.orelse) == 1 and isinstance(n.orelse[0], ast.If)):
            continue
        body = "".join(ast.dump(s) for s in n.body)
        other = "".join(ast.dump(s) for s in n.orelse)
        if body == other or _strip_inplace(body) != _strip_inplace(other):
            continue
        count_body, count_other = len(_INPLACE_ATTR.findall(body)), len(_INPLACE_ATTR.findall(other))
        if count_body != count_other:
            out.append(n.body if count_body < count_other else n.orelse)
    return tuple(out)


def twin_tensor_params(d: ast.AST) -> tuple:
    """The parameters of the nested `def d` (an out-of-place twin) that its body uses as tensors: the receivers of
    its method calls (`m.div(...)`, `v.add(...)`). A flag or a value only compared (`g is not None`) is not one."""
    a = d.args
    params = [p.arg for p in (*a.posonlyargs, *a.args)]
    used = {n.func.value.id for n in walk(d) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name)}
    return tuple(p in used for p in params)
