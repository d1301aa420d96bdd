"""A backward whose gradients no optimizer ever applies: read from the syntax of one function (GS585). Not a rule:
rules are the `gsNNN_*` modules.

The shape: `a.backward()`, then, before any optimizer steps, `opt.zero_grad()` of every optimizer the function
steps afterwards (each zeroed before its own step). Whatever parameters `a` reaches, the gradient it left there is
cleared before a step could use it."""

from __future__ import annotations

import ast
import bisect
import operator

from .base import dotted_name

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
# Objects whose `.backward(loss)` backwards `loss` (Accelerate, Fabric, DeepSpeed).
_BACKWARD_OWNERS = frozenset({"accelerator", "fabric", "engine", "model_engine", "booster"})
# Calls about the grad mode, not the gradients.
_MODE = frozenset({"zero_grad", "no_grad", "enable_grad", "set_grad_enabled", "requires_grad_", "inference_mode"})
# Words in a call's name that may read, move or apply gradients (`clip_grad_norm_`, `optimizer_step`,
# `sam.first_step`, `apply_updates`, `all_reduce`): such a call between the backward and the zeroing may use them.
_USES = ("grad", "step", "optim", "update", "reduce", "sync", "hook", "accumulate", "apply")


def _name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _calls(node: ast.AST) -> list:
    """The calls of `node`, nested blocks included, nested scopes not."""
    out, todo = [], [node]
    while todo:
        n = todo.pop()
        if n is not node and isinstance(n, _SCOPES):
            continue
        if isinstance(n, ast.Call):
            out.append(n)
        todo.extend(ast.iter_child_nodes(n))
    return out


def _is_backward(call: ast.Call) -> bool:
    f = call.func
    if not isinstance(f, ast.Attribute):
        return False
    if f.attr == "manual_backward":
        return True
    if f.attr != "backward" or any(k.arg == "inputs" for k in call.keywords):
        return False
    owner = (dotted_name(f.value) or "").rsplit(".", 1)[-1]
    # `x.backward()` (no argument, or a gradient / retain_graph), or `accelerator.backward(loss)`.
    return owner in _BACKWARD_OWNERS or not call.args or len(call.args) == 1 and owner not in ("", "torch")


def _step_receiver(call: ast.Call):
    """`opt.step()` -> "opt"; `scaler.step(opt)` -> "opt"; "?" for a step whose optimizer is unclear
    (`opt.step(closure)`, `env.step(action)` is not a step: None)."""
    f = call.func
    if not (isinstance(f, ast.Attribute) and f.attr == "step"):
        return None
    owner = dotted_name(f.value) or ""
    last = owner.rsplit(".", 1)[-1].lower()
    if "scaler" in last:
        return (dotted_name(call.args[0]) or "?") if len(call.args) == 1 else "?"
    if "opt" in last:
        return owner if not call.args and not call.keywords else "?"
    if call.args or call.keywords or "sched" in last or "env" in last:
        return None
    return owner or "?"


def _zero_receiver(call: ast.Call):
    f = call.func
    if isinstance(f, ast.Attribute) and f.attr == "zero_grad":
        return dotted_name(f.value) or "?"
    return None


def _blocks(body: list):
    """Every statement list of a function (its body, loop, `if`, `with`, `try` bodies), nested scopes excluded,
    with whether it is a loop's body."""
    todo = [(body, False)]
    while todo:
        stmts, loop = todo.pop()
        yield stmts, loop
        for s in stmts:
            if isinstance(s, _SCOPES):
                continue
            if isinstance(s, _LOOPS):
                todo.append((s.body, True))
                todo.append((s.orelse, False))
            elif isinstance(s, (ast.If,)):
                todo.append((s.body, False))
                todo.append((s.orelse, False))
            elif isinstance(s, (ast.With, ast.AsyncWith)):
                todo.append((s.body, False))
            elif isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
                todo.append((s.body, False))
                todo.append((s.orelse, False))
                todo.append((s.finalbody, False))
                todo.extend((h.body, False) for h in s.handlers)


def _pos(node: ast.AST) -> tuple:
    return node.lineno, node.col_offset


_POS = operator.attrgetter("lineno", "col_offset")  # `_pos` as a sort key without a Python call per node
# The method names `_is_backward`, `_step_receiver` and `_zero_receiver` can accept.
_MARKS = frozenset({"backward", "manual_backward", "step", "zero_grad"})


def _within(node: ast.AST, stmt: ast.AST) -> bool:
    return _pos(stmt) <= _pos(node) and (node.end_lineno, node.end_col_offset) <= (stmt.end_lineno, stmt.end_col_offset)


class _Calls:
    """A function's calls (sorted by position) and the marks among them: backwards, steps, zeroings. Spans
    answer "which calls does this statement hold?" without walking it again."""

    def __init__(self, calls: list):
        self.calls = sorted(calls, key=_POS)
        # Only calls of a method named like a mark are classified (this runs on every keystroke).
        attribute = ast.Attribute
        marks = [c for c in self.calls if type(c.func) is attribute and c.func.attr in _MARKS]
        self.backs = [c for c in marks if _is_backward(c)]
        self.steps = [c for c in marks if _step_receiver(c) is not None]
        self.zeros = [c for c in marks if _zero_receiver(c) is not None]

    def marked(self, stmt: ast.AST) -> bool:
        return any(_within(c, stmt) for group in (self.backs, self.steps, self.zeros) for c in group)

    def between(self, first: ast.AST, last: ast.AST) -> list:
        lo, hi = _pos(first), (last.end_lineno, last.end_col_offset)
        return [c for c in self.calls if lo <= _pos(c) and (c.end_lineno, c.end_col_offset) <= hi]


def _flat_ok(stmts: list, calls: "_Calls") -> bool:
    """Do the statements run unconditionally as far as steps, zeroings and backwards go? `with` bodies are
    entered; a compound statement (`if`, loop, `try`) that steps, zeroes or backwards makes it uncertain."""
    for s in stmts:
        if isinstance(s, _SCOPES):
            continue
        if isinstance(s, (ast.With, ast.AsyncWith)):
            if not _flat_ok(s.body, calls):
                return False
            continue
        if isinstance(s, (ast.If, ast.Try, *_LOOPS)) or type(s).__name__ in ("TryStar", "Match"):
            if calls.marked(s):
                return False
    return True


def _reads_grad(fn: ast.AST) -> bool:
    """The function reads or writes `.grad`, registers hooks, or asks `torch.autograd.grad`: the backward may be
    there for its gradients themselves (FGSM's `x.grad`, saliency, gradient statistics)."""
    for n in ast.walk(fn):
        if isinstance(n, ast.Attribute) and n.attr in ("grad", "register_hook", "main_grad"):
            return True
    return False


class DeadBackward:
    """One finding: `backward` (the call) whose gradients `zero` (the zero_grad statement) clears, with
    `zeros` the other zeroings that clear the rest before each optimizer's step."""

    __slots__ = ("backward", "zero", "receiver", "zeros")

    def __init__(self, backward, zero, receiver, zeros):
        self.backward, self.zero, self.receiver, self.zeros = backward, zero, receiver, zeros


def dead_backwards(fn: ast.AST, calls: list | None = None) -> list:
    """The backwards of function `fn` whose gradients are all cleared before any step uses them. `calls`: the
    function's own calls (not of nested scopes) when the caller has them indexed; else they are walked."""
    found = _Calls(_calls(fn) if calls is None else calls)
    if not found.backs or not found.zeros or not found.steps:
        return []
    out = []
    back_lines = [c.lineno for c in found.backs]  # sorted: `found.calls` is
    for stmts, loop in _blocks(fn.body):
        for i, top in enumerate(stmts):
            if isinstance(top, _SCOPES) or isinstance(top, _LOOPS):
                continue
            k = bisect.bisect_left(back_lines, top.lineno)
            if k == len(back_lines) or back_lines[k] > top.end_lineno:
                continue  # no backward on the statement's lines (most statements)
            backs = [c for c in found.backs if _within(c, top)]
            if len(backs) != 1 or any(_within(c, top) for c in found.steps) \
                    or any(_within(c, top) for c in found.zeros):
                continue
            dead = _check_rest(stmts, i, loop, backs[0], found)
            if dead is not None:
                out.append(dead)
    # The function may want the gradients themselves (FGSM's `x.grad`, saliency, statistics): walked only once a
    # candidate stands, since this runs on every keystroke.
    if out and _reads_grad(fn):
        return []
    return out


def _check_rest(stmts: list, i: int, loop: bool, back: ast.Call, found: "_Calls"):
    rest = stmts[i + 1:]
    if not rest or not _flat_ok(rest, found):
        return None
    rest_calls = found.between(rest[0], rest[-1])
    rest_ids = {id(c) for c in rest_calls}
    at = _pos(back)
    # Every step after the backward (or, in a loop, anywhere in the loop) must be one of `rest`'s own.
    for c in found.steps:
        if id(c) in rest_ids:
            continue
        if _pos(c) > at or loop and _inside(c, stmts):
            return None
    zeroed: dict = {}  # receiver -> the zero_grad call, before its first step
    stepped: dict = {}  # receiver -> its first step call
    order = []  # ("z"/"s"/"b", receiver, call)
    for c in rest_calls:
        z = _zero_receiver(c)
        if z is not None:
            order.append(("z", z, c))
            if z not in stepped:
                zeroed.setdefault(z, c)
            continue
        s = _step_receiver(c)
        if s is not None:
            if s == "?":
                return None
            order.append(("s", s, c))
            if s not in stepped:
                if s not in zeroed:
                    return None  # this optimizer steps with the backward's gradient still on it
                stepped[s] = c
            continue
        if _is_backward(c):
            order.append(("b", None, c))
            continue
        name = _name(c).lower()
        if name not in _MODE and not stepped and any(w in name for w in _USES):
            return None  # something between the backward and the steps may read or apply the gradients
    if not stepped:
        return None
    first_step = min((c.lineno, c.col_offset) for c in stepped.values())
    if not any(kind == "b" and (c.lineno, c.col_offset) < first_step for kind, _, c in order):
        return None  # zeroed right before the step with no backward since: GS507's `zero_grad` before `step`
    # Report on the zeroing of the optimizer that gathers the most backwards between its zeroing and its step
    # (the one that accumulates several losses: its zeroing was meant to open the accumulation); ties: the
    # first zeroing after the backward.
    best, best_count = None, -1
    for r, s in stepped.items():
        z = zeroed[r]
        zp, sp = (z.lineno, z.col_offset), (s.lineno, s.col_offset)
        count = sum(1 for kind, _, c in order if kind == "b" and zp < (c.lineno, c.col_offset) < sp)
        if count > best_count or count == best_count and zp < (best[1].lineno, best[1].col_offset):
            best, best_count = (r, z), count
    others = [zeroed[r] for r in stepped if r != best[0]]
    return DeadBackward(back, best[1], best[0], others)


def _inside(node: ast.AST, stmts: list) -> bool:
    return any(s.lineno <= node.lineno <= s.end_lineno for s in stmts)
