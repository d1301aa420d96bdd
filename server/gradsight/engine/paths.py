"""Path questions on the syntax of a block: which `if` tests recur in it (`split_tail`), which tell a loop's last
iteration from the others (`split_last`), and whether a stale optimizer is rebuilt before any use (GS504).
Pure functions of the syntax; the interpreter memoises them per analysis (`Interpreter.syntax`)."""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import sub_blocks, walk
from .interp_util import _name_binds, key_of


def _test_key(test: ast.AST) -> Optional[tuple]:
    """An `if` test's syntax without a leading `not`, and whether there was one: the key under which
    `split_tail` assumes it. Only tests made of names, attribute chains, constants, comparisons and boolean
    operators (what `_invariant_test` can judge); None for anything else."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    inner = test.operand if negated else test
    for n in walk(inner):
        if not isinstance(n, (ast.Name, ast.Attribute, ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Tuple,
                              ast.List, ast.Set, ast.Load, ast.cmpop, ast.boolop, ast.unaryop)):
            return None
    return ast.dump(inner), negated


def _assumed_key(test: ast.AST) -> tuple:
    """The key under which a test's truth is assumed (`split_tail`, `split_last`): its syntax without a leading
    `not`, and whether there was one; `_test_key`'s for the tests that one accepts."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    return ast.dump(test.operand if negated else test), negated


def _block_tests(stmts: list) -> dict:
    """Key of each `if` test under a block's statements (`_test_key`; statements only, never expressions, so a
    2,000-line dict literal costs nothing) -> the index of the last statement of the block that holds one."""
    last: dict = {}
    for i, top in enumerate(stmts):
        stack = [top]
        while stack:
            stmt = stack.pop()
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(stmt, ast.If):
                key = _test_key(stmt.test)
                if key is not None:
                    last[key[0]] = i
            blocks = sub_blocks(stmt)
            for block in blocks:
                stack.extend(c for c in block if isinstance(c, ast.stmt))
    return last



def _block_path(body: list, target: ast.stmt) -> Optional[list]:
    """The blocks from `body` down to the one holding `target`: [(block, index, owner)], outermost first, where
    `block[index]` is or holds `target` and `owner` is the statement whose block it is (None for `body`)."""
    for i, stmt in enumerate(body):
        if stmt is target:
            return [(body, i, None)]
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        blocks = sub_blocks(stmt)
        for block in blocks:
            inner = _block_path(block, target)
            if inner is not None:
                return [(body, i, None)] + [(b, j, owner if owner is not None else stmt) for b, j, owner in inner]
    return None


def _mentions(node: ast.AST, key: str) -> bool:
    """Whether `node` may read or rebind the object `key` names: the name itself (`opt`), or for an attribute
    (`self.opt`) the attribute or any call that is handed or called on its base object (`self.train_epoch()`)."""
    base = key.split(".", 1)[0].split("[", 1)[0]
    for n in walk(node):
        if isinstance(n, ast.Name) and n.id == (key if base == key else base) and (
                base == key or isinstance(n.ctx, ast.Store)):
            return True
        if base != key and isinstance(n, (ast.Attribute, ast.Subscript)):
            k = key_of(n)
            if k is not None and (k == key or k.startswith((key + ".", key + "["))):
                return True
        if base != key and isinstance(n, ast.Call) and any(isinstance(m, ast.Name) and m.id == base for m in walk(n)):
            return True
    return False


def _escapes(stmt: ast.stmt, in_loop: bool) -> bool:
    """Whether `stmt` may leave the statements around it other than by falling through: a `return`, or a
    `break` / `continue` that is not inside a loop of its own."""
    stack = [(stmt, in_loop)]
    while stack:
        node, looped = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Return) or (isinstance(node, (ast.Break, ast.Continue)) and not looped):
            return True
        inner = looped or isinstance(node, (ast.For, ast.AsyncFor, ast.While))
        stack.extend((c, inner) for c in ast.iter_child_nodes(node))
    return False


def _first_touch(stmts: list, key: str, rebuilds, in_loop: bool = False) -> set:
    """How the paths through `stmts` first meet the object `key` names: "rebuilt" (a statement `rebuilds` accepts
    binds it anew without reading it), "used" (anything else that reads or rebinds it, or a jump out that is not
    followed), "through" (the end is reached without meeting it)."""
    out = {"through"}
    for stmt in stmts:
        if "through" not in out:
            break
        out.discard("through")
        out |= _stmt_touch(stmt, key, rebuilds, in_loop)
    return out


def _stmt_touch(stmt: ast.stmt, key: str, rebuilds, in_loop: bool) -> set:
    if rebuilds(stmt):
        return {"rebuilt"}
    if not _mentions(stmt, key):
        return {"used"} if _escapes(stmt, in_loop) else {"through"}
    if isinstance(stmt, ast.If) and not _mentions(stmt.test, key):
        return _first_touch(stmt.body, key, rebuilds, in_loop) | _first_touch(stmt.orelse, key, rebuilds, in_loop)
    if isinstance(stmt, (ast.With, ast.AsyncWith)) and not any(_mentions(i, key) for i in stmt.items):
        return _first_touch(stmt.body, key, rebuilds, in_loop)
    if isinstance(stmt, (ast.For, ast.AsyncFor)) and not _mentions(stmt.iter, key) and not _mentions(stmt.target, key) \
            and not stmt.orelse:
        return _first_touch(stmt.body, key, rebuilds, True) | {"through"}
    return {"used"}


def _rebuilt_before_use(path: list, key: str, rebuilds, local: bool) -> bool:
    """Whether, after the statement at the end of `path` (`_block_path`), every path meets a statement that binds
    `key` anew (`rebuilds`) before anything reads it: the rest of each enclosing block, innermost first; at the end
    of a loop body, the next iteration's whole body too; at the end of the function, nothing more where `key` is a
    local (`local`) and some path did rebind it (with no rebinding at all, the code as shown is unfinished, and the
    object is what a later use will find). An optimizer rebuilt after the layer swap in the same iteration is not
    the stale one."""
    rebuilt = False
    for depth in range(len(path) - 1, -1, -1):
        block, index, owner = path[depth]
        in_loop = any(isinstance(o, (ast.For, ast.AsyncFor, ast.While)) for _, _, o in path[1:depth + 1])
        out = _first_touch(block[index + 1:], key, rebuilds, in_loop)
        if isinstance(owner, (ast.For, ast.AsyncFor, ast.While)) and block is owner.body and "through" in out:
            out |= _first_touch(owner.body, key, rebuilds, True)
        if "used" in out:
            return False
        if "through" not in out:
            return True
        rebuilt = rebuilt or "rebuilt" in out
        if owner is not None and isinstance(owner, ast.Try) and block is not owner.finalbody:
            return False  # a handler or `finally` may still read it
    return local and rebuilt


def _last_iteration_test(loop: ast.AST, test: ast.AST) -> Optional[bool]:
    """`if i < n - 1:` / `if i == len(xs) - 1:` / `if i + 1 == n:` in the body of `for i in range(n)` (or `range(a, n)`,
    or `for i, x in enumerate(xs)` with `len(xs)`): a test that tells the loop's last iteration from the others. The
    truth of the test (a leading `not` dropped, as `_test_key`) on the last iteration, or None for any other test.
    Only where the body never rebinds `i`, nor binds or mutates through a method call any name the bound reads."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)) or loop.orelse or not isinstance(loop.iter, ast.Call) \
            or not isinstance(loop.iter.func, ast.Name) or loop.iter.keywords:
        return None
    it, target = loop.iter, loop.target
    if it.func.id == "range" and len(it.args) in (1, 2) and isinstance(target, ast.Name):
        var, bound = target.id, it.args[-1]
        if len(it.args) == 2 and not isinstance(it.args[0], ast.Constant):
            return None
    elif it.func.id == "enumerate" and len(it.args) == 1 and isinstance(target, ast.Tuple) and len(target.elts) == 2 \
            and isinstance(target.elts[0], ast.Name):
        var = target.elts[0].id
        bound = ast.Call(func=ast.Name(id="len", ctx=ast.Load()), args=[it.args[0]], keywords=[])
    else:
        return None
    inner = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
    if not (isinstance(inner, ast.Compare) and len(inner.ops) == 1):
        return None
    left, op, right = inner.left, inner.ops[0], inner.comparators[0]

    def minus_one(n: ast.AST, base: ast.AST) -> bool:
        return isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub) and isinstance(n.right, ast.Constant) \
            and n.right.value == 1 and ast.dump(n.left) == ast.dump(base)

    def plus_one(n: ast.AST) -> bool:
        return isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add) and isinstance(n.left, ast.Name) \
            and n.left.id == var and isinstance(n.right, ast.Constant) and n.right.value == 1

    if not ((isinstance(left, ast.Name) and left.id == var and minus_one(right, bound))
            or (plus_one(left) and ast.dump(right) == ast.dump(bound))):
        return None
    # `i == last`, `i >= last`: true on the last iteration only; `i != last`, `i < last`: on every other one.
    last = {ast.Eq: True, ast.GtE: True, ast.NotEq: False, ast.Lt: False}.get(type(op))
    if last is None:
        return None
    body = ast.Module(body=loop.body, type_ignores=[])
    binds = _name_binds(body)
    # The objects the body mutates through method calls and item stores (`xs.append(...)`), reading the size
    # (`y.size(1)`, the bound itself) aside.
    reads = {ast.dump(n) for n in walk(bound) if isinstance(n, ast.Call)}
    receivers = set()
    for n in walk(body):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr not in ("size", "dim", "numel") \
                and ast.dump(n) not in reads:
            receivers.add(key_of(n.func.value))
        elif isinstance(n, ast.Subscript) and isinstance(n.ctx, (ast.Store, ast.Del)):
            receivers.add(key_of(n.value))
    names = {n.id for n in walk(bound) if isinstance(n, ast.Name)} - {"len"}
    keys = {key_of(n) for n in walk(bound) if isinstance(n, (ast.Name, ast.Attribute, ast.Subscript))} - {None}
    if var in binds or names & set(binds) or keys & receivers:
        return None
    return last



def _first_iteration_test(loop: ast.AST, test: ast.AST) -> Optional[bool]:
    """`if epoch > 0:` / `if i == 0:` / `if step:` in the body of `for epoch in range(n)` (or `range(0, n)`, or
    `for i, x in enumerate(xs)`): a test that tells the loop's first iteration from the others. The truth of the
    test (a leading `not` dropped, as `_test_key`) on the first iteration, or None for any other test. Only where the
    body never rebinds the counter."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)) or not isinstance(loop.iter, ast.Call) \
            or not isinstance(loop.iter.func, ast.Name) or loop.iter.keywords:
        return None
    it, target = loop.iter, loop.target
    if it.func.id == "range" and len(it.args) in (1, 2) and isinstance(target, ast.Name) and (
            len(it.args) == 1 or isinstance(it.args[0], ast.Constant) and it.args[0].value == 0):
        var = target.id
    elif it.func.id == "enumerate" and len(it.args) == 1 and isinstance(target, ast.Tuple) and len(target.elts) == 2 \
            and isinstance(target.elts[0], ast.Name):
        var = target.elts[0].id
    else:
        return None
    inner = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
    if isinstance(inner, ast.Name) and inner.id == var:
        first = False  # `if step:`: 0 on the first iteration
    elif isinstance(inner, ast.Compare) and len(inner.ops) == 1 and isinstance(inner.left, ast.Name) \
            and inner.left.id == var and isinstance(inner.comparators[0], ast.Constant) \
            and type(inner.comparators[0].value) is int and inner.comparators[0].value in (0, 1):
        # The test's value with the counter at 0, where it differs from every later iteration's.
        bound = inner.comparators[0].value
        first = {(ast.Eq, 0): True, (ast.NotEq, 0): False, (ast.Gt, 0): False, (ast.GtE, 1): False,
                 (ast.Lt, 1): True, (ast.LtE, 0): True}.get((type(inner.ops[0]), bound))
        if first is None:
            return None
    else:
        return None
    if var in _name_binds(ast.Module(body=loop.body, type_ignores=[])):
        return None
    return first

def gates_update(stmt: ast.If) -> bool:
    """An `if` with an optimizer-style `.step(...)` call in its branches (nested functions and classes left out):
    a test that gates the whole update (`if mode == "train": optimizer.zero_grad(); loss.backward();
    optimizer.step()`), which is how code shared by training and evaluation keeps the update out of evaluation.
    Not a test of a module's `.training` flag (`if model.training:`): a module is in training mode unless put in
    eval mode, which the analysis tracks (`ModuleVal.eval_sure`)."""
    test = stmt.test.operand if isinstance(stmt.test, ast.UnaryOp) and isinstance(stmt.test.op, ast.Not) \
        else stmt.test
    if isinstance(test, ast.Attribute) and test.attr == "training":
        return False
    stack = list(stmt.body) + list(stmt.orelse)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "step":
            return True
        stack.extend(ast.iter_child_nodes(node))
    return False
