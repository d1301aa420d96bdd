"""The abstract interpreter: one transfer function per statement and expression kind.

Control flow is interpreted structurally over the stdlib `ast`: statements in order, both branches of
an `if` joined, loops iterated to a fixpoint (at most `MAX_LOOP_ITERS` rounds, then widened to
UNKNOWN), `try` handlers entered from the join of the states before and after the body, `with`
blocks bracketing grad-mode changes. Loops nested more than `MAX_LOOP_NESTING` deep in one function (real code
nests three) are not iterated: each runs once from a state where everything it could change is UNKNOWN, so
the work stays linear in the nesting instead of growing with a power of it. Rules see events only from the *reporting pass*, which runs
once per program point with the fixpoint state.

Calls to functions and methods defined in the analysed code (and in workspace files) are analysed
in the caller's context: the callee's body runs with the abstract arguments, memoised by
(function, arguments, grad mode). That memo table is the function summary cache; a call
that cannot be resolved returns UNKNOWN, never a guess.

Blind spots (kept deliberately; each would cost precision elsewhere):
- Aliasing: `a = b; a.mul_(2)` updates only `a`'s abstract value. A view (`v = x[0]`) modified in
  place is not traced back to `x`. gradsight stays quiet rather than guess.
- Containers: tensors stored in dicts or lists of unknown shape are UNKNOWN when read back.
- Library models (`torchvision.models.resnet18()`) are UNKNOWN: their results may or may not require grad.
  A loss that a loop calls `.backward()` on is taken to require grad when accumulated (`total += loss`), since
  the backward would raise otherwise.
- Plain (non-`nn.Module`) classes such as a `Trainer` are modelled (`ObjectVal`) only when all their bases are
  plain classes of the file and they have no decorators: methods see what `__init__` set, except attributes
  that a method run since (followed through `self.other()` calls), or an assignment from outside, may have
  changed; an instance handed to other code, or to a method that hands on `self`, is UNKNOWN afterwards. The
  instance's state is not carried from one method call into the next (a `self.hidden` carried across
  `train_step` calls is not seen), and an alias (`t2 = t; t2.step()`) is not followed.
- Some checks read the syntax around a statement instead of the state: what follows a rebinding
  `w = w - lr * w.grad` (the rest of the enclosing loop body, then its start: the next `w.grad` read, backward,
  or `w.requires_grad_()`), and `backward()` / `zero_grad()` / `step()` order within one block of statements.
- `for t in [a, b]:` re-reads `a` and `b` each round (a backward in the body frees their graphs); any other
  iterable is evaluated once. `nn.Sequential(*layers)` sees `layers` only when it is a list literal not changed
  since (an `append` makes a list UNKNOWN).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

from . import torchdb as db
from .api import StateFact
from .events import (AccumulateEvent, BackwardEvent, CarryEvent, CheckpointEvent, Event, FactoryEvent, FuncGradEvent,
                     GradModeEvent, GradReadEvent, GraphCutEvent, InferenceSaveEvent, InplaceEvent, LoopEvent,
                     ModuleCallEvent, NumpyEvent, OptimizerEvent, OutArgEvent, ReassignEvent, ViewInplaceEvent,
                     ZeroGradEvent)
from .report import Source
from .state import State
from .values import (UNKNOWN, BoundMethod, ClassInfo, ClassVal, Fact, FuncVal, GradModeCtx, ModuleRef,
                     ModuleVal, ObjectVal, OptimizerVal, ParamCut, ParamReach, ParamsVal, PyVal, SeqVal, TensorVal, Tri,
                     Value, join_values)

MAX_LOOP_ITERS = 4
MAX_LOOP_NESTING = 4  # loops nested deeper than this run once, from a widened state (see `Interpreter.loop`)
MAX_CALL_DEPTH = 6
MAX_FACTS = 20000
MAX_PCUT = 16


@dataclass
class LoopCtx:
    node: ast.AST
    entry_keys: frozenset
    has_backward: Optional[int]
    breaks: list = field(default_factory=list)
    continues: list = field(default_factory=list)


@dataclass
class ModuleScope:
    """One analysed file: its imports, top-level functions and classes."""

    path: str
    tree: ast.Module
    source: Source
    imports: dict = field(default_factory=dict)  # local name -> qualified name
    functions: dict = field(default_factory=dict)  # name -> FuncVal
    classes: dict = field(default_factory=dict)  # name -> ClassInfo
    env: dict = field(default_factory=dict)  # module-level values (as last seen)
    import_records: tuple = ()  # ("import" | "from", module, level, names) per import statement
    package: str = ""


def _has_backward(node: ast.AST) -> Optional[int]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            f = sub.func
            if isinstance(f, ast.Attribute) and f.attr in ("backward", "grad") and not (
                    isinstance(f.value, ast.Name) and f.attr == "grad" and f.value.id not in ("autograd",)):
                return sub.lineno
    return None


def _const_key(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)) and not isinstance(node.value, bool):
        return repr(node.value)
    return None


def key_of(node: ast.AST) -> Optional[str]:
    """Reference key for a Name / Attribute chain / constant subscript, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = key_of(node.value)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Subscript):
        base = key_of(node.value)
        k = _const_key(node.slice)
        return f"{base}[{k}]" if base and k else None
    return None


def kwarg(call: ast.Call, name: str) -> Optional[ast.expr]:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def const_bool(node: Optional[ast.AST]) -> Optional[bool]:
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return node.value
    return None


class Interpreter:
    def __init__(self, scope: ModuleScope, emit: Callable[[Event], None], resolve_module=None):
        self.scope = scope
        self.src = scope.source
        self.emit_cb = emit
        self.resolve_module = resolve_module  # (module name, level, package) -> ModuleScope | None
        self.reporting = True
        self.depth = 0
        self.stack: list = []
        self.loops: list[LoopCtx] = []
        self.returns: list[list[Value]] = []
        self.memo: dict = {}
        self.facts: dict[tuple, StateFact] = {}
        # Whole-file bookkeeping for "requires_grad that never flows" (GS202).
        self.grad_leaves: dict[tuple, tuple[str, Fact]] = {}
        self.cut_sources: dict[tuple, Fact] = {}
        self.reached_sources: set = set()
        self.backward_seen = False
        self.init_cache: dict = {}
        self.optimized_modules: dict[str, Fact] = {}  # module key -> where an optimizer took its parameters()
        # Module-level state while module-level code calls a function: globals as of the call.
        self.globals_state: Optional[State] = None
        self.globals_scope: Optional[ModuleScope] = None
        # Facts about the syntax under a node (does it call backward, which keys' `.grad` it reads), computed once
        # per analysis: (kind, id(node)) -> (node, result). The node is kept so a reused id can never match; nothing
        # is stored on the nodes themselves (trees are shared between versions of a file).
        self.syntax_memo: dict = {}
        # Per call frame: reference key of a module -> where an optimizer in that frame took its parameters()
        # (module-level code's entries are in `optimized_modules`).
        self.frame_optimized: list[dict] = []
        self.frame_caller_grad: list[Tri] = []  # per call frame: the caller's grad mode
        self.deep_loops = 0  # loops run once from a widened state because they nest too deeply (for tests)
        # Object state across method calls (see `call_function`): per frame, the `self.` prefix whose entries a
        # `return` hands back (None: not tracked), the entries at each return, and the last call's exports.
        self.return_exports: list = []
        self.self_names: list = []  # per frame: the name of the instance parameter (`self`), or None
        self.return_states: list = []
        self.last_exports: tuple = ()
        self.memo_exports: dict = {}
        # id(ast.Starred) -> (node, value of the starred sequence), for callees that unpack it.
        self.starred_values: dict = {}

    # ------------------------------------------------------------------ utilities
    def syntax(self, kind: str, node: ast.AST, compute: Callable[[ast.AST], object]):
        """`compute(node)` memoised per analysis: a pure function of the syntax under `node`."""
        key = (kind, id(node))
        hit = self.syntax_memo.get(key)
        if hit is not None and hit[0] is node:
            return hit[1]
        value = compute(node)
        self.syntax_memo[key] = (node, value)
        return value

    def sets_grads(self, stmt: ast.AST) -> bool:
        """Whether `_sets_grads` holds anywhere under `stmt`; nested statements' answers are memoised and reused,
        so each node is looked at once per analysis however deep the blocks nest."""
        key = ("sets_grads", id(stmt))
        hit = self.syntax_memo.get(key)
        if hit is not None and hit[0] is stmt:
            return hit[1]
        found = False
        todo = list(ast.iter_child_nodes(stmt))
        while todo and not found:
            n = todo.pop()
            if isinstance(n, ast.stmt):
                found = self.sets_grads(n)
            elif _sets_grads(n):
                found = True
            else:
                todo.extend(ast.iter_child_nodes(n))
        found = found or _sets_grads(stmt)
        self.syntax_memo[key] = (stmt, found)
        return found

    def emit(self, event: Event) -> None:
        # Events inside another workspace file belong to that file's own analysis; here they only shape values.
        if self.reporting and self.scope.path == self.root_path:
            self.emit_cb(event)

    def fact(self, node: ast.AST, text: str, parent: Optional[Fact] = None) -> Fact:
        line, col, _, _ = self.src.span(node)
        return Fact(line, col, text, parent, None if self.scope.path == self.root_path else self.scope.path)

    root_path: str = ""

    # Which modules an optimizer trains, which module ran which, and their names are kept in
    # `optimized_modules` under keys no reference can have: the driver scopes that table per analysed unit
    # (module-level code, then each function with module-level code's entries) and caches it with them.
    def note_trained(self, sites) -> None:
        for site in sites:
            self.optimized_modules.setdefault(f"\0trained\0{site!r}", None)

    def note_parent(self, sub, parent) -> None:
        self.optimized_modules.setdefault(f"\0parent\0{sub!r}\0{parent!r}", parent)

    def module_name(self, site) -> Optional[str]:
        return self.optimized_modules.get(f"\0name\0{site!r}")

    def is_trained(self, site) -> bool:
        seen, todo = set(), [site]
        while todo and len(seen) < 64:
            s = todo.pop()
            if f"\0trained\0{s!r}" in self.optimized_modules:
                return True
            if s in seen:
                continue
            seen.add(s)
            prefix = f"\0parent\0{s!r}\0"
            todo.extend(v for k, v in self.optimized_modules.items() if k.startswith(prefix))
        return False

    def cut_params(self, val: TensorVal, node: ast.AST, text: str) -> frozenset:
        """The `pcut` of what a cut (`.detach()`, `.data`, `.numpy()`, ...) of `val` returns."""
        out = val.pcut
        if val.rg is not Tri.NO and val.psrc and len(out) < MAX_PCUT:
            fact = self.fact(node, text)
            out = out | {(s, self.site(node), fact) for s in val.psrc}
        return _cap(out)

    def seg(self, node: ast.AST) -> str:
        s = self.src.segment(node)
        return s if len(s) <= 60 else s[:57] + "..."

    def site(self, node: ast.AST) -> tuple:
        return (self.scope.path, getattr(node, "lineno", 0), getattr(node, "col_offset", 0))

    def record(self, node: ast.AST, value: Value, transition: bool = False, summary: Optional[str] = None,
               label: Optional[str] = None) -> None:
        """Remember what is known about `node` for hovers and inlay hints. A *transition* (an inlay hint in the
        default mode) is marked only on a statement's whole value (`pred = net(batch)`, `loss.backward()`),
        never on a sub-expression or an assignment target, so one statement gets at most one hint."""
        if not self.reporting or not isinstance(value, TensorVal) or len(self.facts) >= MAX_FACTS:
            return
        if self.scope.path != self.root_path:
            return
        span = self.src.span(node)
        old = self.facts.get(span)
        if old is not None and not (value.rg is not Tri.MAYBE and "maybe" in old.label):
            return
        auto_summary, auto_label, chain = describe(value)
        self.facts[span] = StateFact(*span, name=self.seg(node), summary=summary or auto_summary,
                                     label=label or auto_label,
                                     chain=tuple((f.line, f.text) for f in chain),
                                     transition=transition or (
                                         getattr(getattr(self, "current_stmt", None), "value", None) is node
                                         and self._is_transition(value, span[0])))

    @staticmethod
    def _is_transition(value: TensorVal, line: int) -> bool:
        if value.gained and value.origin is not None and value.origin.line == line:
            return True
        for f in (value.nograd, value.saved, value.freed):
            if f is None or f.line != line or f.path is not None:
                continue
            if "was created without" in f.text or f.text.startswith("computed only from"):
                continue
            return True
        return value.rg is Tri.YES and value.leaf is Tri.YES and value.origin is not None and value.origin.line == line

    # ------------------------------------------------------------------ statements
    def exec_block(self, stmts: list[ast.stmt], state: State) -> State:
        pending = self.check_step_order(stmts) if self.reporting and len(stmts) >= 3 else ()
        for stmt in stmts:
            if state.dead:
                break
            state = self.exec_stmt(stmt, state)
        for zero, backward, step in pending:
            # Resolved after the block ran, so optimizers built inside it are known.
            if self.clears_stepped_grads(zero.value, step.value, state):
                self.emit(ZeroGradEvent(zero.value, self.fact(backward.value, f"`{self.seg(backward.value)}`"),
                                        self.fact(step.value, f"`{self.seg(step.value)}`")))
        return state

    def check_step_order(self, stmts: list[ast.stmt]) -> list:
        """`loss.backward()`, then `x.zero_grad()`, then `opt.step()` in one block, with no backward between the
        last two: candidates (zero, backward, step); `clears_stepped_grads` decides whether `x` is `opt` or the
        module it trains."""
        backward = zero = None
        found = []
        for stmt in stmts:
            name = _stmt_method(stmt)
            if name == "backward":
                backward, zero = stmt, None
            elif name == "zero_grad" and backward is not None:
                zero = zero or stmt
            elif name == "step" and zero is not None and "sched" not in self.seg(stmt.value.func.value).lower():
                found.append((zero, backward, stmt))
                backward = zero = None
            elif name is None and backward is not None and self.sets_grads(stmt):
                # A nested block with its own backward/step, or code that writes gradients back (gradient
                # surgery: `p.grad = ...`, `set_grads(...)`): stay quiet.
                backward = zero = None
        return found

    def clears_stepped_grads(self, zero: ast.Call, step: ast.Call, state: State) -> bool:
        """Whether `zero` (`x.zero_grad()`) clears gradients that `step` (`opt.step()`, `scaler.step(opt)`) would
        apply: the same optimizer, or the module the optimizer was built from. Anything else (a GAN's other
        optimizer or network, values gradsight does not know) stays quiet."""
        zr = zero.func.value
        opt_node = step.func.value
        for arg in step.args:
            key = key_of(arg)
            if key is not None and isinstance(state.get(key), OptimizerVal):
                opt_node = arg  # `scaler.step(opt)`
        if self.seg(zr) == self.seg(opt_node):
            return True
        zkey, okey = key_of(zr), key_of(opt_node)
        zval = state.get(zkey) if zkey else None
        oval = state.get(okey) if okey else None
        if isinstance(zval, OptimizerVal):
            return isinstance(oval, OptimizerVal) and zval == oval
        return isinstance(oval, OptimizerVal) and oval.owner is not None and oval.owner == zkey

    def exec_stmt(self, stmt: ast.stmt, state: State) -> State:
        self.current_stmt = stmt
        method = getattr(self, "stmt_" + type(stmt).__name__, None)
        if method is None:
            return state
        return method(stmt, state)

    def stmt_Expr(self, stmt: ast.Expr, state: State) -> State:
        val = self.eval(stmt.value, state)
        if isinstance(val, GradModeCtx) and "set_grad_enabled" in val.label:
            # `torch.set_grad_enabled(False)` as a statement changes the mode from here on.
            state.grad = val.enabled
            state.grad_why = self.fact(stmt.value, f"grad mode set by `{val.label}`")
        return state

    def stmt_Assign(self, stmt: ast.Assign, state: State) -> State:
        value = self.eval(stmt.value, state)
        if len(stmt.targets) == 1 and self.loops and (isinstance(value, TensorVal) or value is UNKNOWN):
            # `total = total + loss`, `stats[k] = stats.get(k, 0) + loss`: an accumulation spelled as a rebinding.
            added = _accumulated_operand(stmt.targets[0], stmt.value)
            if added is not None:
                self.check_accumulate(stmt, stmt.targets[0], value, added, state, "+=")
        for target in stmt.targets:
            self.assign(target, value, state, stmt)
        return state

    def stmt_AnnAssign(self, stmt: ast.AnnAssign, state: State) -> State:
        if stmt.value is not None:
            self.assign(stmt.target, self.eval(stmt.value, state), state, stmt)
        return state

    def stmt_AugAssign(self, stmt: ast.AugAssign, state: State) -> State:
        rhs = self.eval(stmt.value, state)
        target = stmt.target
        if isinstance(target, ast.Subscript):
            base = self.eval(target.value, state)
            if isinstance(base, TensorVal):
                self.inplace(target.value, base, "__setitem__", state, stmt, rhs=[rhs])
                return state
            if key_of(target) is None:
                # `stats[name] += loss` into a dict (or list) kept across iterations.
                self.eval(target.slice, state)
                self.check_accumulate(stmt, target, rhs, stmt.value, state, "+=")
                return state
        cur = self.eval(target, state) if key_of(target) else UNKNOWN
        opname = type(stmt.op).__name__
        if isinstance(cur, TensorVal):
            dunder = db.INPLACE_DUNDER.get(opname, "__iadd__")
            if isinstance(rhs, TensorVal) and opname == "Add":
                # From the second iteration on, `total += loss` adds in place into the tensor the first one made.
                self.check_accumulate(stmt, target, rhs, stmt.value, state, "+=")
            self.inplace(target, cur, dunder, state, stmt, rhs=[rhs])
        elif isinstance(rhs, TensorVal):
            result = self.tensor_op(f"torch.Tensor.__r{db.BINOP_DUNDER.get(opname, '__add__')[2:]}",
                                    [(stmt.value, rhs)], stmt, state)
            self.check_accumulate(stmt, target, rhs, stmt.value, state, "+=")
            self.assign(target, result, state, stmt)
        elif isinstance(cur, PyVal) or isinstance(rhs, PyVal):
            if rhs is UNKNOWN and opname == "Add":
                self.check_accumulate(stmt, target, rhs, stmt.value, state, "+=")
            self.assign(target, PyVal(cut=(cur.cut if isinstance(cur, PyVal) else None)
                                       or (rhs.cut if isinstance(rhs, PyVal) else None),
                                      pcut=_pcut_of((cur, rhs))), state, stmt)
        else:
            if rhs is UNKNOWN and opname == "Add":
                self.check_accumulate(stmt, target, rhs, stmt.value, state, "+=")
            self.assign(target, UNKNOWN, state, stmt)
        return state

    def check_accumulate(self, stmt, target, value: Value, value_node, state: State, how: str) -> None:
        if how == "append" and not isinstance(value, TensorVal) and isinstance(value_node, ast.Name):
            # `history.append(stats)` where `stats["loss"] = loss`: the container holds the graph.
            prefix_sub, prefix_dot = value_node.id + "[", value_node.id + "."
            held = next((v for k, v in state.env.items() if k.startswith((prefix_sub, prefix_dot))
                         and isinstance(v, TensorVal) and v.rg is Tri.YES and v.leaf is not Tri.YES), None)
            if held is not None:
                value = held
        if not self.loops:
            self.check_accumulate_on_self(stmt, target, value, value_node, how)
            return
        loop = self.loops[-1]
        value = self.surely_grad_loss(value, value_node, loop.node)
        if value is None:
            return
        key = key_of(target)
        root = _root_name(target)
        # The accumulator outlives the iteration: bound before the loop, or an item or attribute of a
        # container bound before it (`stats["loss"]`, `history[k]`, `self.losses`).
        if not ((key is not None and key in loop.entry_keys)
                or (not isinstance(target, ast.Name) and root is not None and root in loop.entry_keys)):
            return
        if key is not None and self.syntax("loop_stores", loop.node, _loop_store_counts).get(key, 0) > 1:
            # Rebound elsewhere in the loop too (`x = x + step; ...; x = x.detach()`): not a running total.
            return
        self.emit(AccumulateEvent(stmt, self.seg(target), value, value_node, loop.has_backward, how))

    def check_accumulating_method(self, node: ast.Call, func: ast.Attribute, recv: ObjectVal, meth: BoundMethod,
                                  state: State) -> None:
        """`meter.update(loss, n)` in a loop that calls backward, on an object bound before the loop whose method
        adds that argument into one of its attributes (`self.sum += val * n`, `self.values.append(val)`): the
        object keeps every iteration's graph."""
        loop = self.loops[-1]
        key = key_of(func.value)
        if key is None or key not in loop.entry_keys or any(isinstance(a, ast.Starred) for a in node.args):
            return
        fn = meth.func.node
        params = [p.arg for p in fn.args.posonlyargs + fn.args.args][1:]
        kept = self.syntax("keeps_args", fn, _params_accumulated_into_self)
        for i, arg in enumerate(node.args):
            if i >= len(params) or params[i] not in kept:
                continue
            arg_key = key_of(arg)  # only references: evaluating an expression twice could report twice
            if arg_key is None or state.get(arg_key) is None:
                continue
            value = self.surely_grad_loss(state.get(arg_key), arg, loop.node)
            if value is not None:
                self.emit(AccumulateEvent(node, f"{self.seg(func.value)}.{func.attr}()", value, arg,
                                          loop.has_backward, "keeps"))
                return

    def surely_grad_loss(self, value: Value, value_node, region: ast.AST) -> Optional[TensorVal]:
        """`value` if it surely requires grad. A loss that `region` calls backward on surely does, even when
        gradsight cannot see why (a model passed in as an argument): `loss.backward()` would raise otherwise."""
        if isinstance(value, TensorVal) and value.rg is Tri.YES:
            return value
        if (value is UNKNOWN or isinstance(value, TensorVal) and value.rg is Tri.MAYBE) and isinstance(
                value_node, ast.Name) and value_node.id in self.syntax("backward_on", region, _backward_names):
            return value.with_(rg=Tri.YES) if isinstance(value, TensorVal) else TensorVal(rg=Tri.YES)
        return None

    def check_accumulate_on_self(self, stmt, target, value: Value, value_node, how: str) -> None:
        """Outside loops: a method that calls backward and adds its loss into an attribute of `self`
        (`self.running_loss += loss`, `self.losses.append(loss)`). The object outlives the call, so each call of
        the training step leaves its graph there."""
        fn = self.stack[-1] if self.stack else None
        if fn is None or fn.name == "__init__" or isinstance(target, ast.Name) or _is_static(fn):
            return
        params = fn.args.posonlyargs + fn.args.args
        if not params or _root_name(target) != params[0].arg:
            return
        backward = self.syntax("has_backward", fn, _has_backward)
        value = self.surely_grad_loss(value, value_node, fn)
        if backward is None or value is None:
            return
        self.emit(AccumulateEvent(stmt, self.seg(target), value, value_node, backward, how, per_call=True))

    def stmt_If(self, stmt: ast.If, state: State) -> State:
        self.eval(stmt.test, state)
        known = self.static_truth(stmt.test, state)
        if known is True:
            return self.exec_block(stmt.body, state)
        if known is False:
            return self.exec_block(stmt.orelse, state)
        then = self.exec_block(stmt.body, state.copy())
        other = self.exec_block(stmt.orelse, state.copy())
        return then.join(other)

    def static_truth(self, test: ast.AST, state: State) -> Optional[bool]:
        """`x is None` / `x is not None` where `x` is surely None or surely an object (a tensor, a module): the
        branch taken is known (a cache filled on the first call: `if self.cached is None:`). Else None."""
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot))
                and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None):
            return None
        key = key_of(test.left)
        val = state.get(key) if key is not None else None
        if val is None and isinstance(test.left, ast.Attribute):
            base_key = key_of(test.left.value)
            base = state.get(base_key) if base_key is not None else None
            if isinstance(base, (ModuleVal, ObjectVal)):
                val = base.attr(test.left.attr)
        if isinstance(val, PyVal) and val.is_none:
            is_none = True
        elif isinstance(val, (TensorVal, ModuleVal, ObjectVal, OptimizerVal, ParamsVal)):
            is_none = False
        else:
            return None
        return is_none if isinstance(test.ops[0], ast.Is) else not is_none

    def stmt_For(self, stmt: ast.For, state: State) -> State:
        it = self.eval(stmt.iter, state)
        elem = self.element_of(it)
        # `for loss in [loss_a, loss_b]:` iterates over references whose values the body changes (a backward
        # frees their graphs): read them again on each round instead of once before the loop.
        reread = isinstance(stmt.iter, (ast.List, ast.Tuple)) and isinstance(it, SeqVal) \
            and len(it.items) == len(stmt.iter.elts) and all(key_of(e) is not None for e in stmt.iter.elts)

        def bind(s: State) -> None:
            cur = elem
            if reread:
                cur = self.element_of(SeqVal(tuple(s.env.get(key_of(e), v) for e, v in zip(stmt.iter.elts, it.items))))
            self.assign(stmt.target, cur, s, stmt)

        return self.loop(stmt, state, bind, stmt.body, stmt.orelse)

    stmt_AsyncFor = stmt_For

    def stmt_While(self, stmt: ast.While, state: State) -> State:
        self.eval(stmt.test, state)
        return self.loop(stmt, state, lambda s: self.eval(stmt.test, s), stmt.body, stmt.orelse)

    def loop(self, node, state: State, bind, body, orelse) -> State:
        entry = state.copy()
        ctx = LoopCtx(node, frozenset(state.env), self.syntax("has_backward", node, _has_backward))
        if len(self.loops) >= MAX_LOOP_NESTING:
            return self.deep_loop(node, ctx, entry, bind, body, orelse)
        was_reporting = self.reporting
        self.reporting = False
        head = entry
        self.loops.append(ctx)
        try:
            for _ in range(MAX_LOOP_ITERS):
                ctx.breaks.clear()
                ctx.continues.clear()
                s = head.copy()
                bind(s)
                s = self.exec_block(body, s)
                for c in ctx.continues:
                    s = s.join(c)
                new_head = entry.join(s)
                if new_head.same(head):
                    break
                head = new_head
            else:
                head = widen(entry, head)
            self.reporting = was_reporting
            ctx.breaks.clear()
            ctx.continues.clear()
            self.loop_pass(node, head, bind, body)
        finally:
            self.reporting = was_reporting
            self.loops.pop()
        return self.loop_exit(head, ctx, orelse)

    def loop_pass(self, node, head: State, bind, body) -> None:
        """The reporting pass over a loop body, from its fixpoint `head` (nothing to do off the reporting pass)."""
        if self.reporting:
            self.emit(LoopEvent(node, self.stack[-1] if self.stack else None))
            s = head.copy()
            bind(s)
            self.exec_block(body, s)

    def loop_exit(self, head: State, ctx: LoopCtx, orelse) -> State:
        """The state after a loop: its head (the test failed) joined with every `break`, then the `else` block."""
        out = head.copy()
        out.dead = False
        for b in ctx.breaks:
            out = out.join(b)
        if orelse:
            out = self.exec_block(orelse, out)
        return out

    def deep_loop(self, node, ctx: LoopCtx, entry: State, bind, body, orelse) -> State:
        """A loop nested more than `MAX_LOOP_NESTING` deep: no fixpoint iteration (each round would re-run every
        loop inside it, so the cost would grow with a power of the depth). The body runs once, in the current
        mode, from a state where everything an iteration could change is UNKNOWN: every name the loop mentions
        that has a value or is bound in it, every key the loop stores to, every value holding a tensor (a backward
        or `step()` anywhere changes those), and the grad mode if the loop sets it. That state is already a
        fixpoint, so one pass is sound, and the cost is linear in the nesting."""
        names, stores, sets_mode = self.syntax("loop_effects", node, _loop_effects)
        head = entry.copy()
        for key, val in entry.env.items():
            root = key.split(".", 1)[0].split("[", 1)[0]
            if root in names or _holds_tensor(val):
                head.env[key] = UNKNOWN
        for key in stores:
            head.set(key, UNKNOWN)
        if sets_mode:
            head.grad = head.grad.join(Tri.MAYBE) if head.grad is not Tri.MAYBE else head.grad
        self.deep_loops += 1
        self.loops.append(ctx)
        try:
            if self.reporting:
                self.loop_pass(node, head, bind, body)
            else:
                s = head.copy()
                bind(s)
                self.exec_block(body, s)
        finally:
            self.loops.pop()
        return self.loop_exit(head, ctx, orelse)

    def stmt_Break(self, stmt, state: State) -> State:
        if self.loops:
            self.loops[-1].breaks.append(state.copy())
        state.dead = True
        return state

    def stmt_Continue(self, stmt, state: State) -> State:
        if self.loops:
            self.loops[-1].continues.append(state.copy())
        state.dead = True
        return state

    def stmt_Return(self, stmt: ast.Return, state: State) -> State:
        value = self.eval(stmt.value, state) if stmt.value is not None else PyVal(is_none=stmt.value is None)
        if self.returns:
            self.returns[-1].append(value)
        if self.return_exports and self.return_exports[-1] is not None:
            prefix = self.return_exports[-1]
            self.return_states[-1].append({k: v for k, v in state.env.items() if k.startswith(prefix)})
        state.dead = True
        return state

    def stmt_Raise(self, stmt, state: State) -> State:
        if stmt.exc is not None:
            self.eval(stmt.exc, state)
        state.dead = True
        return state

    def stmt_Try(self, stmt: ast.Try, state: State) -> State:
        body = self.exec_block(stmt.body, state.copy())
        handler_in = state.join(body) if not body.dead else state.copy()
        outs = [self.exec_block(stmt.orelse, body.copy()) if stmt.orelse else body]
        for handler in stmt.handlers:
            h = handler_in.copy()
            h.dead = False
            if handler.name:
                h.set(handler.name, UNKNOWN)
            outs.append(self.exec_block(handler.body, h))
        out = outs[0]
        for o in outs[1:]:
            out = out.join(o)
        if stmt.finalbody:
            was_dead = out.dead
            out.dead = False
            out = self.exec_block(stmt.finalbody, out)
            out.dead = out.dead or was_dead
        return out

    stmt_TryStar = stmt_Try

    def stmt_With(self, stmt: ast.With, state: State) -> State:
        saved = (state.grad, state.grad_why, state.inference)
        for item in stmt.items:
            ctx = self.eval(item.context_expr, state)
            if isinstance(ctx, GradModeCtx):
                if ctx.enabled is Tri.NO and state.grad is Tri.NO and not ctx.inference and not (
                        self.frame_caller_grad and self.frame_caller_grad[-1] is not Tri.YES):
                    # (Inside a function called with grad off, the `with` is redundant for this caller only.)
                    self.emit(GradModeEvent(item.context_expr, ctx.label, state.grad_why))
                state.grad = ctx.enabled
                state.grad_why = self.fact(item.context_expr, f"grad mode {'enabled' if ctx.enabled is Tri.YES else 'disabled'} by `{ctx.label}`")
                state.inference = ctx.inference
            if item.optional_vars is not None:
                self.assign(item.optional_vars, UNKNOWN, state, stmt)
        state = self.exec_block(stmt.body, state)
        state.grad, state.grad_why, state.inference = saved
        return state

    stmt_AsyncWith = stmt_With

    def stmt_Match(self, stmt, state: State) -> State:
        self.eval(stmt.subject, state)
        out: Optional[State] = None
        for case in stmt.cases:
            s = self.exec_block(case.body, state.copy())
            out = s if out is None else out.join(s)
        return state.join(out) if out is not None else state

    def stmt_FunctionDef(self, stmt, state: State) -> State:
        state.set(stmt.name, FuncVal(stmt, None, self.scope, stmt.name))
        return state

    stmt_AsyncFunctionDef = stmt_FunctionDef

    def stmt_ClassDef(self, stmt, state: State) -> State:
        info = self.scope.classes.get(stmt.name)
        if info is not None and info.node is stmt:
            state.set(stmt.name, ClassVal(info))
        return state

    def stmt_Delete(self, stmt, state: State) -> State:
        for t in stmt.targets:
            k = key_of(t)
            if k:
                state.env.pop(k, None)
        return state

    def stmt_Assert(self, stmt, state: State) -> State:
        self.eval(stmt.test, state)
        return state

    # ------------------------------------------------------------------ assignment
    def assign(self, target: ast.AST, value: Value, state: State, stmt: ast.AST) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            items: list[Value]
            n = len(target.elts)
            if isinstance(value, SeqVal) and not value.homog and len(value.items) == n and not any(isinstance(e, ast.Starred) for e in target.elts):
                items = list(value.items)
            else:
                items = [self.element_of(value)] * n
            for elt, val in zip(target.elts, items):
                self.assign(elt, val, state, stmt)
            return
        if isinstance(target, ast.Starred):
            self.assign(target.value, UNKNOWN, state, stmt)
            return
        if isinstance(target, ast.Subscript):
            base = self.eval(target.value, state)
            self.eval(target.slice, state)
            if isinstance(base, TensorVal):
                self.inplace(target.value, base, "__setitem__", state, stmt, rhs=[value])
                return
            if isinstance(base, SeqVal) and base.homog and key_of(target.value):
                state.set(key_of(target.value), UNKNOWN)
                return
            key = key_of(target)
            if key:
                if isinstance(base, ModuleVal):
                    self.check_reassign(key, state.get(key), value, state, stmt)
                state.set(key, value)
            return
        if isinstance(target, ast.Attribute) and target.attr in REQUIRES_GRAD_SPELLINGS:
            base = self.eval(target.value, state)
            if isinstance(base, TensorVal):
                self.set_requires_grad_attr(target, base, value, state, stmt)
                return
        key = key_of(target)
        if key is None:
            if isinstance(target, ast.Attribute):
                self.eval(target.value, state)
            return
        old = state.get(key)
        if old is not None or "." in key:
            self.check_reassign(key, old, value, state, stmt)
        if isinstance(target, ast.Attribute):
            base_key = key_of(target.value)
            obj = state.get(base_key) if base_key is not None else None
            if isinstance(obj, ObjectVal) and target.attr not in obj.changed:
                # Its methods read the attribute from the object, no longer from what `__init__` set.
                state.env[base_key] = replace(obj, changed=obj.changed | {target.attr})
        self.fresh_storage(value, state, stmt)
        if isinstance(target, ast.Attribute) and self.self_names and self.self_names[-1] is not None \
                and key.startswith(self.self_names[-1] + ".") and isinstance(value, TensorVal) \
                and value.rg is not Tri.NO and value.leaf is not Tri.YES and value.stored is None:
            # A graph kept on the object outlives this call: a later call's backward can reach it.
            value = value.with_(stored=self.fact(stmt, f"`{self.seg(target)}` keeps this graph on the object"))
        state.set(key, value)
        self.record(target, value)

    def set_requires_grad_attr(self, target: ast.Attribute, base: TensorVal, value: Value, state: State, stmt) -> None:
        flag = const_bool(getattr(stmt, "value", None)) if isinstance(stmt, ast.Assign) else None
        flag_t = Tri.of(flag)
        self.emit(FactoryEvent(stmt, base, f"attr:{target.attr}", flag_t, state.grad, state.inference))
        key = key_of(target.value)
        if target.attr != "requires_grad" or key is None or base.leaf is not Tri.YES:
            return
        site = self.site(stmt)
        new = base.with_(rg=flag_t, nograd=None if flag_t is not Tri.NO else self.fact(stmt, "`requires_grad = False`"),
                         sources=base.sources | ({site} if flag_t is Tri.YES and not base.param else set()))
        if flag_t is Tri.YES and not base.param:
            self.grad_leaves.setdefault(site, ("requires_grad = True", self.fact(stmt, "`requires_grad = True`")))
        state.set(key, new)

    def check_reassign(self, key: str, old: Optional[Value], new: Value, state: State, stmt) -> None:
        value_node = getattr(stmt, "value", None)
        reads_grad = value_node is not None and key in self.syntax("grad_reads", value_node, _grad_read_keys)
        frame = self.frame_optimized[-1] if self.frame_optimized else {}
        owner = next((k for k in frame if key.startswith((k + ".", k + "["))), None)
        where = frame.get(owner) if owner is not None else None
        if owner is None:
            owner = next((k for k in self.optimized_modules if key.startswith((k + ".", k + "["))), None)
            where = self.optimized_modules.get(owner) if owner is not None else None
        if reads_grad or (owner is not None and isinstance(new, ModuleVal)):
            next_use = self.next_use_after(key, stmt) if reads_grad and self.reporting else None
            self.emit(ReassignEvent(stmt, key, old, new, reads_grad, where, next_use, state.grad))

    def next_use_after(self, key: str, stmt: ast.AST) -> Optional[tuple]:
        """What happens next to `key` after the rebinding `stmt`, in execution order: the rest of the
        enclosing loop body, then (next iteration) its start up to and including `stmt`; outside a loop, the rest
        of the enclosing function or module. ("grad", Fact) for a read of `key.grad`, ("backward", Fact) for a
        backward call, ("reset", Fact) for a statement that rebinds `key` or makes it require grad again."""
        in_loop = bool(self.loops)
        region = self.loops[-1].node if in_loop else (self.stack[-1] if self.stack else self.scope.tree)
        found = []
        for node in ast.walk(region):
            kind = _use_kind(node, key)
            if kind is not None and hasattr(node, "lineno"):
                found.append(((node.lineno, node.col_offset), kind, node))
        if isinstance(region, (ast.For, ast.AsyncFor, ast.While)):
            # The loop header (iterable, test) is not part of an iteration's body.
            head = {id(n) for n in ast.walk(region.iter if not isinstance(region, ast.While) else region.test)}
            found = [f for f in found if id(f[2]) not in head]
            if not isinstance(region, ast.While) and any(key_of(n) == key for n in ast.walk(region.target)):
                # Rebinding the loop's own variable: the update is lost unless the new value is read afterwards.
                end_pos = (getattr(stmt, "end_lineno", stmt.lineno), getattr(stmt, "end_col_offset", 0))
                for n in ast.walk(region):
                    if isinstance(n, (ast.Name, ast.Attribute, ast.Subscript)) and isinstance(n.ctx, ast.Load) \
                            and key_of(n) == key and (n.lineno, n.col_offset) >= end_pos:
                        return "reset", self.fact(n, f"`{self.seg(n)}`")
                return "loopvar", self.fact(region.target, f"`{self.seg(region.target)}`")
        start = (stmt.lineno, stmt.col_offset)
        end = (getattr(stmt, "end_lineno", stmt.lineno), getattr(stmt, "end_col_offset", 0))
        after = sorted((f for f in found if f[0] >= end), key=lambda f: f[0])
        before = sorted((f for f in found if f[0] < end and f[2] is not stmt), key=lambda f: f[0]) if in_loop else []
        for _, kind, node in after + before:
            if node is stmt or (kind == "reset" and start <= (node.lineno, node.col_offset) < end):
                continue
            text = self.seg(node)
            return kind, self.fact(node, f"`{text}`")
        return None

    def element_of(self, value: Value) -> Value:
        if isinstance(value, ParamsVal):
            return TensorVal(rg=Tri.YES, leaf=Tri.YES, param=True, origin=value.origin, is_int=Tri.NO,
                             psrc=value.module_sites)
        if isinstance(value, SeqVal) and value.items:
            out = value.items[0]
            for v in value.items[1:]:
                out = out.join(v)
            return out
        if isinstance(value, PyVal):
            return PyVal(cut=value.cut, pcut=value.pcut, scalar=value.scalar_items)
        if isinstance(value, TensorVal):
            return self_view(value)
        if isinstance(value, ModuleVal) and value.layers:
            out = value.layers[0]
            for v in value.layers[1:]:
                out = out.join(v)
            return out
        return UNKNOWN

    # ------------------------------------------------------------------ expressions
    def eval(self, node: Optional[ast.AST], state: State) -> Value:
        if node is None:
            return UNKNOWN
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.eval(child, state)
            return UNKNOWN
        return method(node, state)

    def expr_Constant(self, node, state) -> Value:
        return PyVal(scalar=isinstance(node.value, (int, float)) and not isinstance(node.value, bool),
                     is_none=node.value is None)

    def expr_JoinedStr(self, node, state) -> Value:
        for v in node.values:
            self.eval(v, state)
        return PyVal()

    def expr_FormattedValue(self, node, state) -> Value:
        self.eval(node.value, state)
        return PyVal()

    def expr_Name(self, node: ast.Name, state: State) -> Value:
        val = self.lookup(node.id, state)
        self.record(node, val)
        return val

    def lookup(self, name: str, state: State) -> Value:
        val = state.get(name)
        if val is not None:
            return val
        scope = self.scope
        if self.globals_state is not None and scope is self.globals_scope:
            val = self.globals_state.get(name)
            if val is not None:
                return val
        if name in scope.env:
            return scope.env[name]
        if name in scope.functions:
            return scope.functions[name]
        if name in scope.classes:
            return ClassVal(scope.classes[name])
        if name in scope.imports:
            return self.import_value(scope.imports[name])
        if name in BUILTINS:
            return ModuleRef("builtins." + name)
        return UNKNOWN

    def import_value(self, qual: str) -> Value:
        if qual.startswith("."):
            return self.workspace_value(qual)
        if self.resolve_module is not None and not qual.startswith(("torch", "numpy")):
            val = self.workspace_value(qual)
            if val is not UNKNOWN:
                return val
        return ModuleRef(qual)

    def workspace_value(self, qual: str) -> Value:
        if self.resolve_module is None:
            return UNKNOWN
        mod, _, name = qual.rpartition(".")
        level = len(qual) - len(qual.lstrip("."))
        other = self.resolve_module(mod.lstrip("."), level, self.scope)
        if other is None:
            return UNKNOWN
        if name in other.functions:
            return other.functions[name]
        if name in other.classes:
            return ClassVal(other.classes[name])
        return UNKNOWN

    def expr_Attribute(self, node: ast.Attribute, state: State) -> Value:
        key = key_of(node)
        if key is not None and key in state.env:
            val = state.env[key]
            self.record(node, val)
            return val
        base = self.eval(node.value, state)
        val = self.attribute(base, node, state)
        self.record(node, val)
        return val

    def attribute(self, base: Value, node: ast.Attribute, state: State) -> Value:
        attr = node.attr
        if isinstance(base, ModuleRef):
            return ModuleRef(f"{base.qual}.{attr}")
        if isinstance(base, TensorVal):
            if attr == "data":
                return TensorVal(rg=Tri.NO, leaf=Tri.YES, shape=base.shape, is_int=base.is_int,
                                 nograd=self.fact(node, "`.data` returns the values without autograd history"),
                                 origin=base.origin, saved=base.saved, is_data=True,
                                 pcut=self.cut_params(base, node, f"`{self.seg(node)}`"))
            if attr == "grad":
                if isinstance(getattr(self, "current_stmt", None), ast.Assign) is False or not any(
                        t is node for t in getattr(self.current_stmt, "targets", ())):
                    self.emit(GradReadEvent(node, base, self.seg(node.value)))
                return TensorVal(rg=Tri.NO, leaf=Tri.YES, shape=base.shape, origin=self.fact(node, "a `.grad`"))
            if attr in ("T", "mT", "H", "mH", "real", "imag"):
                return self.tensor_op(f"torch.Tensor.{attr}", [(node.value, base)], node, state)
            if attr in ("shape", "dtype", "device", "requires_grad", "is_leaf", "grad_fn", "ndim", "is_cuda"):
                return PyVal()
            return UNKNOWN
        if isinstance(base, ModuleVal):
            sub = base.attr(attr)
            if sub is not None:
                return sub
            if base.cls is None and attr in ("weight", "bias") and base.has_params is not Tri.NO:
                return TensorVal(rg=base.has_params, leaf=Tri.YES, param=True, is_int=Tri.NO,
                                 origin=self.fact(node, f"parameter `{self.seg(node)}`"),
                                 psrc=frozenset({_msite(base)}) if _msite(base) else frozenset())
            if base.cls is not None:
                meth = self.find_method(base.cls, attr)
                if meth is not None:
                    return BoundMethod(meth, base)
            return ModuleRef(f"<module-attr>.{attr}") if attr in MODULE_METHODS else UNKNOWN
        if isinstance(base, ObjectVal):
            sub = base.attr(attr)
            if sub is not None:
                return sub
            meth = self.find_method(base.cls, attr)
            if meth is not None and not _is_static(meth.node):
                return BoundMethod(meth, base)
            return UNKNOWN
        if isinstance(base, (OptimizerVal,)):
            return UNKNOWN
        return UNKNOWN

    def find_method(self, info: ClassInfo, name: str) -> Optional[FuncVal]:
        seen = 0
        while info is not None and seen < 10:
            if name in info.methods:
                return info.methods[name]
            parent = None
            for b in info.bases:
                if isinstance(b, ClassInfo):
                    parent = b
                    break
            info = parent
            seen += 1
        return None

    def expr_Subscript(self, node: ast.Subscript, state: State) -> Value:
        key = key_of(node)
        if key is not None and key in state.env:
            self.eval(node.value, state)
            return state.env[key]
        base = self.eval(node.value, state)
        index = self.eval(node.slice, state)
        if isinstance(base, TensorVal):
            val = self.tensor_op("torch.Tensor.__getitem__", [(node.value, base)], node, state)
            if isinstance(val, TensorVal) and val.view is None and _int_index(node.slice, index):
                # `x[k]` with a Python int `k` (a loop variable over `range`) is basic indexing: a view.
                val = val.with_(view=self.fact(node, f"a view made by `{self.seg(node)}`"), storage=base.storage)
            if isinstance(val, TensorVal):
                # An item of split()/unbind()'s result is one of those views (we model the tuple as one value).
                val = val.with_(shape=None, multiview=base.multiview or val.multiview,
                                view=base.view if base.multiview else val.view)
            return val
        if isinstance(base, SeqVal):
            k = node.slice
            if isinstance(k, ast.Slice):
                return base if base.homog else UNKNOWN
            if base.homog:
                return self.element_of(base)
            if isinstance(k, ast.Constant) and isinstance(k.value, int) and -len(base.items) <= k.value < len(base.items):
                return base.items[k.value]
            return self.element_of(base)
        if isinstance(base, ModuleVal) and base.layers:
            k = node.slice
            if isinstance(k, ast.Constant) and isinstance(k.value, int) and -len(base.layers) <= k.value < len(base.layers):
                return base.layers[k.value]
            return UNKNOWN
        if isinstance(base, PyVal):
            return PyVal(cut=base.cut, pcut=base.pcut)
        return UNKNOWN

    def expr_Tuple(self, node, state) -> Value:
        return SeqVal(tuple(self.eval(e, state) for e in node.elts))

    expr_List = expr_Tuple

    def expr_Set(self, node, state) -> Value:
        for e in node.elts:
            self.eval(e, state)
        return UNKNOWN

    def expr_Dict(self, node, state) -> Value:
        for k in node.keys:
            if k is not None:
                self.eval(k, state)
        for v in node.values:
            self.eval(v, state)
        return UNKNOWN

    def expr_BinOp(self, node: ast.BinOp, state: State) -> Value:
        left = self.eval(node.left, state)
        right = self.eval(node.right, state)
        opname = type(node.op).__name__
        dunder = db.BINOP_DUNDER.get(opname, "__add__")
        if isinstance(left, TensorVal):
            return self.tensor_op(f"torch.Tensor.{dunder}", [(node.left, left), (node.right, right)], node, state)
        if isinstance(right, TensorVal):
            rdunder = "__r" + dunder[2:]
            return self.tensor_op(f"torch.Tensor.{rdunder}", [(node.right, right), (node.left, left)], node, state)
        if isinstance(left, ParamsVal) and isinstance(right, ParamsVal) and opname == "Add":
            return ParamsVal(origin=left.origin, module_sites=left.module_sites | right.module_sites)
        if isinstance(left, PyVal) and isinstance(right, PyVal):
            return PyVal(cut=left.cut or right.cut, pcut=_pcut_of((left, right)), scalar=left.scalar and right.scalar)
        if isinstance(left, PyVal) and left.cut:
            return PyVal(cut=left.cut, pcut=left.pcut) if not isinstance(right, (TensorVal,)) and right is not UNKNOWN \
                else UNKNOWN
        return UNKNOWN

    def expr_UnaryOp(self, node: ast.UnaryOp, state: State) -> Value:
        val = self.eval(node.operand, state)
        if isinstance(val, TensorVal):
            if isinstance(node.op, ast.Not):
                return PyVal()
            name = {"USub": "__neg__", "UAdd": "__pos__", "Invert": "__invert__"}[type(node.op).__name__]
            return self.tensor_op(f"torch.Tensor.{name}", [(node.operand, val)], node, state)
        if isinstance(val, PyVal):
            return val
        return UNKNOWN

    def expr_Compare(self, node: ast.Compare, state: State) -> Value:
        vals = [self.eval(node.left, state)] + [self.eval(c, state) for c in node.comparators]
        if any(isinstance(v, TensorVal) for v in vals):
            return TensorVal(rg=Tri.NO, leaf=Tri.YES, is_int=Tri.YES,
                             nograd=self.fact(node, "a comparison gives a boolean tensor with no gradient"))
        return PyVal()

    def expr_BoolOp(self, node, state) -> Value:
        vals = [self.eval(v, state) for v in node.values]
        out = vals[0]
        for v in vals[1:]:
            out = out.join(v)
        return out

    def expr_IfExp(self, node, state) -> Value:
        self.eval(node.test, state)
        return self.eval(node.body, state).join(self.eval(node.orelse, state))

    def expr_NamedExpr(self, node, state) -> Value:
        val = self.eval(node.value, state)
        self.assign(node.target, val, state, node)
        return val

    def expr_Lambda(self, node, state) -> Value:
        return UNKNOWN

    def expr_Starred(self, node, state) -> Value:
        # The starred sequence is kept aside for the callee that can use it (`nn.Sequential(*layers)`).
        self.starred_values[id(node)] = (node, self.eval(node.value, state))
        return UNKNOWN

    def expr_Await(self, node, state) -> Value:
        return self.eval(node.value, state)

    def _comprehension(self, node, elts: list[ast.AST], state: State) -> Value:
        s = state.copy()
        for gen in node.generators:
            it = self.eval(gen.iter, s)
            self.assign(gen.target, self.element_of(it), s, node)
            for cond in gen.ifs:
                self.eval(cond, s)
        vals = [self.eval(e, s) for e in elts]
        if all(isinstance(v, PyVal) for v in vals):
            cut = next((v.cut for v in vals if v.cut), None)
            return PyVal(cut=cut, pcut=_pcut_of(vals))
        if not isinstance(node, ast.DictComp) and isinstance(vals[0], (TensorVal, ModuleVal, ObjectVal, SeqVal)):
            return SeqVal((vals[0],), homog=True)
        return UNKNOWN

    def expr_ListComp(self, node, state) -> Value:
        return self._comprehension(node, [node.elt], state)

    expr_SetComp = expr_ListComp
    expr_GeneratorExp = expr_ListComp

    def expr_DictComp(self, node, state) -> Value:
        return self._comprehension(node, [node.key, node.value], state)

    # ------------------------------------------------------------------ calls
    def expr_Call(self, node: ast.Call, state: State) -> Value:
        func = node.func
        if isinstance(func, ast.Call) and func.args and self.static_qual(func.func) in FUNC_GRAD_TRANSFORMS:
            return self.func_grad_call(node, state)
        # Method call on a value: evaluate the receiver once.
        if isinstance(func, ast.Attribute):
            recv = self.eval(func.value, state)
            if isinstance(recv, TensorVal):
                args = [(a, self.eval(a, state)) for a in node.args]
                kwvals = {}
                for kw in node.keywords:
                    v = self.eval(kw.value, state)
                    if kw.arg:
                        kwvals[kw.arg] = (kw.value, v)
                val = self.tensor_method(func.attr, func.value, recv, args, node, state, kwvals)
                self.record(node, val)
                return val
            if isinstance(recv, ModuleVal):
                return self.module_method(recv, func, node, state)
            if isinstance(recv, OptimizerVal):
                for a in node.args:
                    self.eval(a, state)
                if func.attr == "step" and not node.args and not node.keywords and recv.module_sites:
                    self.optimizer_step(recv, func, node, state)
                return PyVal()
            if isinstance(recv, SeqVal) or (recv is UNKNOWN and func.attr == "append"):
                key = key_of(func.value)
                if isinstance(recv, SeqVal) and key and func.attr in (
                        "append", "extend", "insert", "__setitem__", "__iadd__", "pop", "remove", "clear"):
                    state.set(key, UNKNOWN)  # its elements are no longer all alike (or no longer the known ones)
                if func.attr == "append" and node.args:
                    val = self.eval(node.args[0], state)
                    self.check_accumulate(node, func.value, val, node.args[0], state, "append")
                    return PyVal()
            if isinstance(recv, PyVal):
                vals = [self.eval(a, state) for a in node.args]
                return PyVal(cut=recv.cut, pcut=_pcut_of([recv] + vals))
            if recv is UNKNOWN and func.attr == "backward":
                args, kwargs = self.eval_args(node, state)
                self.backward(recv, func.value, node, state, "Tensor.backward", kwargs, positional=len(args))
                return PyVal()
            callee = self.attribute(recv, func, state)
            if isinstance(recv, ObjectVal) and isinstance(callee, BoundMethod) and self.loops:
                self.check_accumulating_method(node, func, recv, callee, state)
            val = self.call_value(callee, node, state)
            if isinstance(recv, ObjectVal):
                self.used_object(func.value, recv, state, func.attr)
            self.record(node, val)
            return val
        callee = self.eval(func, state)
        val = self.call_value(callee, node, state)
        if isinstance(callee, ObjectVal):
            self.used_object(func, callee, state, "__call__")
        self.record(node, val)
        return val

    def used_object(self, ref: ast.AST, obj: ObjectVal, state: State, method: Optional[str]) -> None:
        """Method `method` of `obj` ran (None: `obj` was handed to other code): from now on the attributes that
        may have changed are UNKNOWN."""
        key = key_of(ref)
        if key is None or state.get(key) != obj:
            return
        if method is not None and self.find_method(obj.cls, method) is None:
            return  # a callable attribute (`self.model(x)`), not a method
        changed = self.method_mutations(obj.cls, method) if method is not None else frozenset({"*"})
        if not changed <= obj.changed:
            if method is not None:
                # The method's own writes to `self.*` came back as `key.*` entries (see `call_function`): keep them.
                state.env[key] = replace(obj, changed=obj.changed | changed)
            else:
                state.set(key, replace(obj, changed=obj.changed | changed))

    def func_grad_call(self, node: ast.Call, state: State) -> Value:
        """`torch.func.grad(f)(*args)`: `f` must return a 0-dim tensor (with has_aux=True, a pair)."""
        transform = node.func
        fn = self.eval(transform.args[0], state)
        for a in transform.args[1:]:
            self.eval(a, state)
        for kw in transform.keywords:
            self.eval(kw.value, state)
        args, kwargs = self.eval_args(node, state)
        if not isinstance(fn, FuncVal) or kwarg(transform, "has_aux") is not None or any(
                isinstance(a, ast.Starred) for a in node.args) or any(kw.arg is None for kw in node.keywords):
            return UNKNOWN
        result = self.call_function(fn, None, args, kwargs, node, state)
        if isinstance(result, TensorVal) and result.shape is not None and len(result.shape) >= 1:
            self.emit(FuncGradEvent(node, self.static_qual(transform.func) or "torch.func.grad",
                                    self.seg(transform.args[0]), result))
        return UNKNOWN

    def optimizer_step(self, opt: OptimizerVal, func: ast.Attribute, node: ast.Call, state: State) -> None:
        """`opt.step()` updates the parameters of the module the optimizer was built from, in place: a graph
        that saved them and is still alive (not yet backwarded, or retained) can no longer be backwarded."""
        sites = opt.module_sites
        what = f"`{self.seg(node)}` updated " + (f"the parameters of `{opt.owner}`" if opt.owner else "its parameters") \
            + " in place"
        fact = None

        def mark(val: TensorVal) -> TensorVal:
            nonlocal fact
            if val.rg is Tri.NO or val.freed is not None or val.stepped is not None or not sites & val.psaved:
                return val
            fact = fact or self.fact(node, what)
            return val.with_(stepped=fact)

        for key, val in list(state.env.items()):
            state.env[key] = map_tensors(val, mark)

    def eval_args(self, node: ast.Call, state: State) -> tuple[list, dict]:
        args = [(a, self.eval(a, state)) for a in node.args]
        kwargs = {kw.arg: (kw.value, self.eval(kw.value, state)) for kw in node.keywords if kw.arg}
        for kw in node.keywords:
            if kw.arg is None:
                self.eval(kw.value, state)
        for n, v in list(args) + list(kwargs.values()):
            if isinstance(v, ObjectVal):
                self.used_object(n, v, state, None)
        return args, kwargs

    def call_value(self, callee: Value, node: ast.Call, state: State) -> Value:
        if isinstance(callee, ModuleRef):
            return self.call_qualified(callee.qual, node, state)
        if isinstance(callee, ModuleVal):
            args, kwargs = self.eval_args(node, state)
            result = self.call_module(callee, args, kwargs, node, state)
            if isinstance(result, TensorVal) and result.rg is Tri.YES and not result.gained and all(
                    v.rg is Tri.NO for _, v in args if isinstance(v, TensorVal)) and any(
                    isinstance(v, TensorVal) for _, v in args):
                result = result.with_(gained=True)
            if callee.eval_at is not None and state.grad is Tri.YES and isinstance(result, TensorVal) \
                    and result.rg is Tri.YES:
                self.emit(ModuleCallEvent(node, self.seg(node), result, callee.eval_at))
            return result
        if isinstance(callee, FuncVal):
            args, kwargs = self.eval_args(node, state)
            return self.call_function(callee, None, args, kwargs, node, state)
        if isinstance(callee, BoundMethod):
            args, kwargs = self.eval_args(node, state)
            return self.call_function(callee.func, callee.self_val, args, kwargs, node, state)
        if isinstance(callee, ClassVal):
            args, kwargs = self.eval_args(node, state)
            return self.instantiate(callee.info, args, kwargs, node, state)
        if isinstance(callee, ObjectVal):
            args, kwargs = self.eval_args(node, state)
            meth = self.find_method(callee.cls, "__call__")
            if meth is None or _is_static(meth.node):
                return UNKNOWN
            return self.call_function(meth, callee, args, kwargs, node, state)
        self.eval_args(node, state)
        return UNKNOWN

    # ---- torch and library functions by qualified name
    def call_qualified(self, qual: str, node: ast.Call, state: State) -> Value:
        short = qual.rsplit(".", 1)[-1]
        if qual in db.GRAD_MODE:
            args, _ = self.eval_args(node, state)
            enabled, inference = db.GRAD_MODE[qual]
            if qual.endswith("inference_mode") and (node.args or node.keywords):
                mode = node.args[0] if node.args else node.keywords[0].value
                flag = const_bool(mode)
                if flag is False:
                    enabled, inference = True, False
                elif flag is None:
                    # `inference_mode(cond)`: gradsight cannot tell, so the mode is unknown.
                    return GradModeCtx(Tri.MAYBE, False, f"{qual}({self.seg(mode)})")
            if enabled is None:
                flag = const_bool(node.args[0]) if node.args else None
                enabled_t = Tri.of(flag)
                label = f"{qual.replace('torch.autograd.', 'torch.')}({self.seg(node.args[0]) if node.args else ''})"
                # As a statement, set_grad_enabled changes the mode from here on.
                return GradModeCtx(enabled_t, False, label)
            return GradModeCtx(Tri.of(enabled), inference, f"{qual}()")
        if qual.startswith("builtins."):
            return self.call_builtin(short, node, state)
        args, kwargs = self.eval_args(node, state)
        if qual == "torch.load":
            # A whole pickled model (what a call on the result shows it is): a module whose parameters require
            # grad unless something froze them. Evidence from use, so findings built on it are warnings.
            return ModuleVal("torch.load", has_params=Tri.YES, evidence=True,
                             origin=self.fact(node, f"a model loaded by `{self.seg(node)}`"))
        if qual in db.BACKWARD_FUNCS:
            target_node, target = args[0] if args else kwargs.get("outputs", kwargs.get("tensors", (None, UNKNOWN)))
            inputs: list = []
            if qual.endswith(".grad"):
                in_node, in_val = args[1] if len(args) > 1 else kwargs.get("inputs", (None, UNKNOWN))
                if isinstance(in_val, TensorVal):
                    inputs = [(in_node, in_val)]
                elif isinstance(in_val, SeqVal) and isinstance(in_node, (ast.List, ast.Tuple)):
                    inputs = list(zip(in_node.elts, in_val.items))
            if qual.endswith(".grad"):
                gradient = args[2] if len(args) > 2 else kwargs.get("grad_outputs")
            else:
                gradient = args[1] if len(args) > 1 else kwargs.get("grad_tensors")
            if target_node is not None:
                self.backward(target, target_node, node, state, qual, kwargs, inputs=inputs, gradient=gradient)
            if not qual.endswith(".grad"):
                return PyVal()
            return self.grad_results(node, target, inputs, kwargs, state)
        if qual in db.NUMPY_FUNCS:
            if args and isinstance(args[0][1], TensorVal):
                self.emit(NumpyEvent(node, args[0][1], self.seg(args[0][0]), qual, insert_at=None))
                return PyVal(cut=self.fact(node, f"`{self.seg(node)}` copied the values into NumPy"),
                             pcut=self.cut_params(args[0][1], node, f"`{self.seg(node)}`"))
            return PyVal(cut=next((v.cut for _, v in args if isinstance(v, PyVal) and v.cut), None),
                         pcut=_pcut_of(v for _, v in args))
        if qual.startswith("numpy.") or qual.startswith("math."):
            cut = next((v.cut for _, v in args if isinstance(v, PyVal) and v.cut), None)
            tensor_args = [(n, v) for n, v in args if isinstance(v, TensorVal)]
            if qual.startswith("numpy.") and tensor_args and qual.rsplit(".", 1)[-1] not in db.NUMPY_METHOD_DISPATCH:
                # NumPy functions convert tensor arguments with __array__, which is `.numpy()`.
                n, v = tensor_args[0]
                self.emit(NumpyEvent(node, v, self.seg(n), qual, insert_at=n if isinstance(n, (ast.Name, ast.Attribute)) else None))
                return PyVal(cut=self.fact(node, f"`{self.seg(node)}` converted the tensor to NumPy"),
                             pcut=self.cut_params(v, node, f"`{self.seg(node)}`"))
            if tensor_args:
                return UNKNOWN
            return PyVal(cut=cut, pcut=_pcut_of(v for _, v in args))
        if qual.startswith("torch.optim.") and short[:1].isupper() and "lr_scheduler" not in qual:
            owner = None
            module_sites: frozenset = frozenset()
            if args:
                self.optimizer(args[0], node, qual)
                if isinstance(args[0][1], ParamsVal):
                    module_sites = args[0][1].module_sites
                    self.note_trained(module_sites)
                if isinstance(args[0][1], ParamsVal) and args[0][1].owner:
                    owner = args[0][1].owner
                    fact = self.fact(node, f"`{short}` took the parameters of `{owner}`")
                    if self.frame_optimized:
                        # Inside a function: `owner` names a local of this call only (`self` in a method called
                        # from elsewhere is not the `self` of another method).
                        self.frame_optimized[-1][owner] = fact
                    else:
                        self.optimized_modules[owner] = fact
            return OptimizerVal(origin=self.fact(node, f"optimizer `{short}`"), owner=owner, module_sites=module_sites)
        if qual == "torch.nn.Parameter" or qual == "torch.nn.parameter.Parameter":
            rg = Tri.YES
            if len(args) > 1 or "requires_grad" in kwargs:
                flag = const_bool((args[1][0] if len(args) > 1 else kwargs["requires_grad"][0]))
                rg = Tri.of(flag)
            src = args[0][1] if args else UNKNOWN
            leaf = self.new_leaf(node, rg, param=True, shape=src.shape if isinstance(src, TensorVal) else None,
                                 label="nn.Parameter", name_hint=None)
            return leaf.with_(psrc=frozenset({_fsite(leaf.origin)})) if rg is Tri.YES else leaf
        if qual.startswith("torch.nn.init."):
            return args[0][1] if args else UNKNOWN
        if qual.startswith("torch.nn.utils."):
            return UNKNOWN
        if qual.startswith("torch.nn.") and short[:1].isupper() and not qual.startswith("torch.nn.functional"):
            if short == "Sequential" and len(args) == 1 and isinstance(args[0][0], ast.Starred) \
                    and isinstance(args[0][0].value, ast.Name):
                # `nn.Sequential(*layers)` with `layers` a list literal built just before.
                inner = self.lookup(args[0][0].value.id, state)
                if isinstance(inner, SeqVal) and not inner.homog:
                    args = [(args[0][0], v) for v in inner.items]
            return self.new_module(qual, args, kwargs, node)
        if qual.startswith("torch.") and short in db.FACTORIES and qual.count(".") == 1:
            return self.factory(short, args, kwargs, node, state)
        if qual == "torch.autograd.Variable":
            return args[0][1] if args else UNKNOWN
        if qual in ("torch.utils.checkpoint.checkpoint",):
            reentrant_node = kwargs.get("use_reentrant", (None, None))[0]
            reentrant = Tri.YES if reentrant_node is None else Tri.of(const_bool(reentrant_node))
            inputs = tuple(v for _, v in args[1:] if isinstance(v, TensorVal))
            if len(inputs) == len(args[1:]) and inputs:
                self.emit(CheckpointEvent(node, inputs, reentrant, state.grad))
            if args:
                fn = args[0][1]
                rest = args[1:]
                if isinstance(fn, (FuncVal, BoundMethod, ModuleVal)):
                    if isinstance(fn, ModuleVal):
                        return self.call_module(fn, rest, {}, node, state)
                    if isinstance(fn, BoundMethod):
                        return self.call_function(fn.func, fn.self_val, rest, {}, node, state)
                    return self.call_function(fn, None, rest, {}, node, state)
            return UNKNOWN
        if _is_tensor_function(qual):
            return self.torch_function(qual, args, kwargs, node, state)
        return UNKNOWN

    def call_builtin(self, name: str, node: ast.Call, state: State) -> Value:
        args, kwargs = self.eval_args(node, state)
        if name in ("float", "int", "bool", "complex") and args and isinstance(args[0][1], TensorVal):
            t = args[0][1]
            return PyVal(cut=self.fact(node, f"`{name}()` turned `{self.seg(args[0][0])}` into a Python number",
                                       t.origin if t.rg is Tri.YES else None),
                         pcut=self.cut_params(t, node, f"`{self.seg(node)}`"))
        if name in ("list", "tuple") and args and isinstance(args[0][1], TensorVal):
            return UNKNOWN
        if name in ("list", "tuple") and len(args) == 1 and isinstance(args[0][1], ParamsVal):
            return args[0][1]
        if name in ("list", "tuple", "reversed") and len(args) == 1 and isinstance(args[0][1], SeqVal):
            # A copy of a known sequence has the same elements (an iterator over it yields them once).
            return args[0][1]
        if name in ("max", "min", "abs", "sum", "round", "float", "int", "len", "sorted", "list", "tuple", "range",
                    "enumerate", "zip", "str", "repr", "print", "isinstance", "pow", "divmod", "map", "filter",
                    "any", "all", "reversed", "dict", "set", "format", "hash", "id", "type"):
            if name in ("enumerate", "zip", "sum") and any(isinstance(v, (TensorVal, ParamsVal, SeqVal)) for _, v in args):
                return UNKNOWN
            if any(isinstance(v, TensorVal) for _, v in args):
                return UNKNOWN
            cut = next((v.cut for _, v in args if isinstance(v, PyVal) and v.cut), None)
            return PyVal(cut=cut, pcut=_pcut_of(v for _, v in args), scalar=name in ("len", "int", "float", "round"),
                         scalar_items=name == "range")
        if name == "super":
            return UNKNOWN
        return UNKNOWN

    def factory(self, name: str, args, kwargs, node: ast.Call, state: State) -> Value:
        for typo in REQUIRES_GRAD_SPELLINGS - {"requires_grad"}:
            if typo in kwargs:
                self.emit(FactoryEvent(node, TensorVal(), f"kwarg:{typo}", Tri.of(const_bool(kwargs[typo][0])),
                                       state.grad, state.inference))
        rg_node = kwargs.get("requires_grad", (None, None))[0]
        flag = const_bool(rg_node) if rg_node is not None else False
        rg = Tri.of(flag)
        is_int = Tri.MAYBE
        dtype = kwargs.get("dtype", (None, None))[0]
        if dtype is not None:
            dname = dtype.attr if isinstance(dtype, ast.Attribute) else (dtype.id if isinstance(dtype, ast.Name) else "")
            is_int = Tri.YES if dname in db.INT_DTYPES else (Tri.NO if dname in db.FLOAT_DTYPES else Tri.MAYBE)
        elif name in db.INT_FACTORIES:
            is_int = Tri.YES
        elif name == "arange" and args:
            if all(isinstance(a, ast.Constant) and type(a.value) is int for a, _ in args):
                is_int = Tri.YES
            elif any(isinstance(a, ast.Constant) and isinstance(a.value, float) for a, _ in args):
                is_int = Tri.NO
        elif name in ("randn", "rand", "randn_like", "rand_like", "normal", "linspace", "logspace", "FloatTensor",
                      "DoubleTensor", "empty", "zeros", "ones", "eye"):
            is_int = Tri.NO
        shape = None
        if name in ("randn", "rand", "zeros", "ones", "empty", "full") and args:
            dim_nodes = [a for a, _ in args]
            if name == "full":
                dim_nodes = dim_nodes[:1]
            if len(dim_nodes) == 1 and isinstance(dim_nodes[0], (ast.Tuple, ast.List)):
                dim_nodes = dim_nodes[0].elts  # torch.zeros((2, 3))
            elif name == "full":
                dim_nodes = []
            dims = []
            for a in dim_nodes:
                if isinstance(a, ast.Constant) and type(a.value) is int:
                    dims.append(a.value)
                else:
                    dims = None
                    break
            shape = tuple(dims) if dims is not None and (dims or name != "full") else None
        elif name in ("tensor", "Tensor", "FloatTensor") and len(args) == 1 and not kwargs.keys() - {
                "requires_grad", "dtype", "device"}:
            # `torch.Tensor(3)` is an uninitialised tensor of size 3, not a scalar: only lists for the legacy names.
            if name == "tensor" or isinstance(args[0][0], (ast.List, ast.Tuple)):
                shape = _literal_shape(args[0][0])
        if name in ("tensor", "as_tensor", "asarray", "from_numpy") and args:
            src_node, src = args[0]
            if isinstance(src, TensorVal) and name in ("as_tensor", "asarray"):
                # as_tensor returns its tensor argument itself (history included) unless dtype/device change.
                if not kwargs:
                    return src
                return self.tensor_op("torch.Tensor.to", [(src_node, src)], node, state)
            if isinstance(src, TensorVal):
                result = self.new_leaf(node, rg, shape=src.shape, is_int=src.is_int,
                                       label=f"torch.{name}()", name_hint=None, inference=state.inference)
                if src.rg is Tri.YES and state.grad is not Tri.NO:
                    self.emit(GraphCutEvent(node, src, self.seg(src_node), f"torch.{name}"))
                if src.rg is not Tri.NO and rg is Tri.NO and state.grad is not Tri.NO:
                    result = result.with_(nograd=self.fact(
                        node, f"`torch.{name}({self.seg(src_node)})` copies the values without their history",
                        src.origin), pcut=self.cut_params(src, node, f"`{self.seg(node)}`"))
                return result
            if isinstance(src, SeqVal):
                inner = flat_tensors([(src_node, src)])
                grads = [(n, v) for n, v in inner if v.rg is Tri.YES]
                if grads and state.grad is not Tri.NO:
                    self.emit(GraphCutEvent(node, grads[0][1], self.seg(src_node), f"torch.{name}"))
                if not inner and all(isinstance(v, PyVal) for v in src.items):
                    cut = next((v.cut for v in src.items if v.cut), None)
                    src = PyVal(cut=cut)
            if isinstance(src, PyVal) and src.cut is not None and rg is not Tri.NO and rg_node is not None:
                self.emit(FactoryEvent(node, TensorVal(nograd=src.cut), "rewrap", rg, state.grad, state.inference))
            if isinstance(src, PyVal) and src.cut is not None and rg is Tri.NO:
                return self.new_leaf(node, rg, is_int=is_int, label=f"torch.{name}()", name_hint=None).with_(
                    nograd=self.fact(node, f"rebuilt by `torch.{name}()` from values that left autograd", src.cut),
                    pcut=src.pcut)
            if isinstance(src, PyVal) and is_int is Tri.MAYBE:
                is_int = _literal_dtype(src_node)
        if name.endswith("_like") and args and isinstance(args[0][1], TensorVal):
            shape = args[0][1].shape
            if is_int is Tri.MAYBE:
                is_int = args[0][1].is_int
        result = self.new_leaf(node, rg, shape=shape, is_int=is_int, label=f"torch.{name}()", name_hint=None,
                               inference=state.inference)
        if rg_node is not None and rg is not Tri.NO:
            self.emit(FactoryEvent(node, result, "factory", rg, state.grad, state.inference))
        return result

    def new_leaf(self, node: ast.AST, rg: Tri, *, param: bool = False, shape=None, is_int: Tri = Tri.MAYBE,
                 label: str, name_hint, inference: bool = False) -> TensorVal:
        origin = self.fact(node, f"created by `{label}`" + (" with requires_grad=True" if rg is Tri.YES and not param else ""))
        sources: frozenset = frozenset()
        nograd = None
        if rg is Tri.YES and not param:
            site = self.site(node)
            sources = frozenset({site})
            self.grad_leaves.setdefault(site, (label, origin))
        if rg is Tri.NO:
            nograd = self.fact(node, f"`{self.seg(node)}` was created without requires_grad=True")
        return TensorVal(rg=rg, leaf=Tri.YES, origin=origin, nograd=nograd, sources=sources, param=param,
                         inference=inference, shape=shape, is_int=is_int, storage=self.site(node))

    def new_module(self, qual: str, args, kwargs, node: ast.Call) -> Value:
        short = db.module_short(qual)
        origin = self.fact(node, f"`{self.seg(node)}`")
        inplace = const_bool(kwargs.get("inplace", (None, None))[0]) is True
        if inplace and "Dropout" in short:
            p_node = args[0][0] if args else kwargs.get("p", (None, None))[0]
            if isinstance(p_node, ast.Constant) and p_node.value == 0:
                inplace = False  # dropout with p=0 never writes
        if short in db.CONTAINERS:
            layers = tuple(v for _, v in args) if short == "Sequential" else ()
            if short == "Sequential" and len(args) == 1 and isinstance(args[0][0], ast.Starred):
                # `nn.Sequential(*[Block() for _ in range(n)])`, `nn.Sequential(*layers)`: the list's modules (a
                # comprehension's one representative runs once: what it does to its input is the same each time).
                hit = self.starred_values.get(id(args[0][0]))
                seq = hit[1] if hit is not None and hit[0] is args[0][0] else None
                layers = seq.items if isinstance(seq, SeqVal) else (UNKNOWN,)
            if short == "ModuleList" and len(args) == 1 and isinstance(args[0][1], SeqVal):
                layers = args[0][1].items
            if short in ("Sequential", "ModuleList") and not all(isinstance(v, ModuleVal) for v in layers):
                layers = ()
            has = Tri.NO
            for lay in layers:
                has = Tri.YES if has is Tri.YES or lay.has_params is Tri.YES else (Tri.MAYBE if lay.has_params is Tri.MAYBE else has)
            if not layers:
                has = Tri.MAYBE
            return ModuleVal(qual, layers=layers if short in ("Sequential", "ModuleList") else (), has_params=has,
                             origin=origin)
        if short in db.PARAMLESS_MODULES or short.endswith("Loss"):
            reduction = None
            red = kwargs.get("reduction", (None, None))[0]
            if isinstance(red, ast.Constant) and isinstance(red.value, str):
                reduction = red.value
            elif short.endswith("Loss"):
                reduction = "mean" if red is None else "?"
            return ModuleVal(qual, inplace=inplace, has_params=Tri.NO, reduction=reduction, origin=origin)
        has = Tri.YES if short in db.PARAM_MODULES else Tri.MAYBE
        out_node = args[1][0] if len(args) > 1 else kwargs.get("out_features", (None, None))[0]
        out = out_node.value if short == "Linear" and isinstance(out_node, ast.Constant) \
            and type(out_node.value) is int else None
        return ModuleVal(qual, has_params=has, origin=origin, out_features=out)

    def optimizer(self, first: tuple, node: ast.Call, qual: str) -> None:
        arg_node, val = first
        if isinstance(val, SeqVal) and isinstance(arg_node, (ast.List, ast.Tuple)):
            params = tuple((elt, v) for elt, v in zip(arg_node.elts, val.items) if isinstance(v, TensorVal))
            if params:
                self.emit(OptimizerEvent(node, params, qual))

    # ---- differentiable ops
    def torch_function(self, qual: str, args, kwargs, node: ast.Call, state: State) -> Value:
        short = qual.rsplit(".", 1)[-1]
        tensor_args = [(n, v) for n, v in args if isinstance(v, TensorVal)]
        inplace_kw = const_bool(kwargs.get("inplace", (None, None))[0]) is True
        if (inplace_kw and short in db.INPLACE_CAPABLE_FUNCTIONAL) or (db.is_inplace_name(short) and args):
            if args and isinstance(args[0][1], TensorVal):
                return self.inplace(args[0][0], args[0][1], f"{short}" + ("(inplace=True)" if inplace_kw else ""),
                                    state, node, rhs=[v for _, v in args[1:]])
            return UNKNOWN
        if "out" in kwargs and state.grad is not Tri.NO:
            grads = tuple(self.seg(n) for n, v in tensor_args if v.rg is Tri.YES)
            if grads:
                self.emit(OutArgEvent(node, qual, grads, state.grad))
        if not tensor_args and not any(isinstance(v, (SeqVal,)) for _, v in args):
            return UNKNOWN
        # torch.cat / torch.stack take a sequence of tensors.
        flat = list(args)
        if args and isinstance(args[0][1], SeqVal):
            elts = args[0][0].elts if isinstance(args[0][0], (ast.List, ast.Tuple)) else [args[0][0]] * len(args[0][1].items)
            flat = list(zip(elts, args[0][1].items)) + list(args[1:])
        result = self.tensor_op(qual, flat, node, state, kwargs=kwargs)
        if isinstance(result, TensorVal) and "reduction" in kwargs:
            red = kwargs["reduction"][0]
            if isinstance(red, ast.Constant) and red.value == "none":
                result = result.with_(shape=("?",))
            elif isinstance(red, ast.Constant) and red.value in ("mean", "sum"):
                result = result.with_(shape=())
        return result

    def tensor_method(self, name: str, recv_node: ast.AST, recv: TensorVal, args, node: ast.Call,
                      state: State, kwvals: Optional[dict] = None) -> Value:
        if name == "backward":
            kwargs = kwvals if kwvals is not None else {kw.arg: (kw.value, UNKNOWN) for kw in node.keywords if kw.arg}
            gradient = args[0] if args else kwargs.get("gradient")
            self.backward(recv, recv_node, node, state, "Tensor.backward", kwargs, positional=len(args),
                          gradient=gradient)
            return PyVal()
        if name == "detach":
            for s in recv.sources:
                self.cut_sources.setdefault(s, self.fact(node, f"`{self.seg(node)}`"))
            # `.detach()` shares the storage and the version counter of what it detaches.
            return TensorVal(rg=Tri.NO, leaf=Tri.YES, shape=recv.shape, is_int=recv.is_int, origin=recv.origin,
                             nograd=self.fact(node, f"detached by `{self.seg(node)}`"),
                             pcut=self.cut_params(recv, node, f"`{self.seg(node)}`"), storage=recv.storage)
        if name in db.CUT_METHODS:
            if name == "numpy":
                self.emit(NumpyEvent(node, recv, self.seg(recv_node), "Tensor.numpy", insert_at=recv_node))
            if recv.rg is not Tri.NO:
                for s in recv.sources:
                    self.cut_sources.setdefault(s, self.fact(node, f"`.{name}()` turned the tensor into {db.CUT_METHODS[name]}"))
            return PyVal(cut=self.fact(node, f"`.{name}()` turned `{self.seg(recv_node)}` into {db.CUT_METHODS[name]}"),
                         pcut=self.cut_params(recv, node, f"`{self.seg(node)}`"))
        if name == "requires_grad_":
            flag = const_bool(args[0][0]) if args else True
            self.emit(FactoryEvent(node, recv, "requires_grad_", Tri.of(flag), state.grad, state.inference))
            key = key_of(recv_node)
            if recv.leaf is Tri.YES:
                rg = Tri.of(flag)
                site = self.site(node)
                new = recv.with_(rg=rg, nograd=None if rg is not Tri.NO else self.fact(node, "requires_grad_(False)"),
                                 sources=recv.sources | ({site} if rg is Tri.YES and not recv.param else set()),
                                 origin=self.fact(node, f"`{self.seg(node)}` made a leaf that requires grad", recv.origin))
                if rg is Tri.YES and not recv.param:
                    self.grad_leaves.setdefault(site, ("requires_grad_()", new.origin))
                if key:
                    state.set(key, new)
                return new
            return recv
        if name == "retain_grad":
            key = key_of(recv_node)
            if key and state.get(key) == recv:
                state.set(key, recv.with_(retains=True))
            return PyVal()
        if name in ("register_hook", "size", "dim", "numel", "stride", "element_size"):
            return PyVal() if name in ("size", "dim", "numel", "stride", "element_size") else recv
        if name == "detach_" and recv.view is not None:
            self.emit(ViewInplaceEvent(node, recv, self.seg(recv_node), "detach_", state.grad))
        if name in ("resize_", "resize_as_") and recv.rg is Tri.YES:
            self.emit(ViewInplaceEvent(node, recv, self.seg(recv_node), name, state.grad))
            return recv
        if name == "detach_":
            new = recv.with_(rg=Tri.NO, leaf=Tri.YES, nograd=self.fact(node, "detached in place by `.detach_()`"))
            key = key_of(recv_node)
            if key:
                state.set(key, new)
            return new
        if db.is_inplace_name(name):
            return self.inplace(recv_node, recv, name, state, node, rhs=[v for _, v in args])
        if name in db.COPY_METHODS:
            return self.copy_method(name, recv_node, recv, args, node, state)
        return self.tensor_op(f"torch.Tensor.{name}", [(recv_node, recv)] + list(args), node, state, kwargs=kwvals)

    def copy_method(self, name, recv_node, recv: TensorVal, args, node: ast.Call, state: State) -> Value:
        result = self.tensor_op(f"torch.Tensor.{name}", [(recv_node, recv)], node, state)
        if not isinstance(result, TensorVal):
            return result
        if recv.rg is Tri.NO:
            return result.with_(leaf=Tri.YES)
        always = name in db.ALWAYS_COPY
        if name in ("to", "type"):
            dtype_nodes = [kwarg(node, "dtype")] + [a for a in node.args]
            for d in dtype_nodes:
                if isinstance(d, ast.Attribute) and d.attr in ("float64", "double", "float16", "half", "bfloat16",
                                                               "int64", "long", "int32", "int"):
                    always = True
        if always:
            return result
        return result.with_(leaf=Tri.MAYBE, rg=recv.rg) if recv.leaf is not Tri.NO else result

    def tensor_op(self, qual: str, args, node: ast.AST, state: State, kwargs=None) -> Value:
        """A differentiable op: the result's grad state from its inputs, and what it saves for backward."""
        short = qual.rsplit(".", 1)[-1]
        tensors = [(n, v) for n, v in args if isinstance(v, TensorVal)]
        unknown_inputs = any(v is UNKNOWN for _, v in args)
        nd = db.nondifferentiable(qual)
        if nd == "no_grad" or short in ("long", "int", "bool", "byte", "short"):
            return TensorVal(rg=Tri.NO, leaf=Tri.YES, is_int=Tri.YES, origin=self.fact(node, f"`{self.seg(node)}`"),
                             nograd=self.fact(node, f"`{short}` is not differentiable: its result has no gradient"))
        if not tensors:
            return UNKNOWN
        any_yes = any(v.rg is Tri.YES for _, v in tensors)
        all_no = all(v.rg is Tri.NO for _, v in tensors) and not unknown_inputs
        if state.grad is Tri.NO:
            rg = Tri.NO
        elif any_yes and state.grad is Tri.YES:
            rg = Tri.YES
        elif all_no:
            rg = Tri.NO
        else:
            rg = Tri.MAYBE
        origin = self.fact(node, f"from `{self.seg(node)}`")
        nograd = None
        if rg is Tri.NO:
            if state.grad is Tri.NO:
                nograd = self.fact(node, "computed while grad mode was disabled", state.grad_why)
            else:
                cause = next((v.nograd for _, v in tensors if v.nograd is not None), None)
                nograd = self.fact(node, "computed only from tensors that do not require grad", cause)
        segs: frozenset = frozenset()
        sources: frozenset = frozenset()
        psaved: frozenset = frozenset()
        stepped = None
        freed = None
        freed_sure = True
        carried = None
        via = None
        stored = None
        entry = db.op_entry(qual, [isinstance(v, TensorVal) for _, v in args]) if rg is not Tri.NO else None
        psrc: frozenset = frozenset()
        pcut = _pcut_of(v for _, v in args)
        partial = unknown_inputs or any(v.psrc_partial for _, v in tensors)
        if rg is not Tri.NO:
            for n, v in tensors:
                segs |= v.segs
                sources |= v.sources
                if v.rg is not Tri.NO:
                    psaved |= v.psaved
                    psrc |= v.psrc
                    stepped = stepped or v.stepped
                if v.freed is not None and v.rg is not Tri.NO and v.leaf is not Tri.YES:
                    freed = freed or v.freed
                    freed_sure = freed_sure and v.freed_sure
                    carried = carried or v.carried
                    via = via or v.via or self.fact(n, self.seg(n))
                stored = stored or v.stored
            carried = carried or self.carry_check(tensors, node, state)
            if entry is not None and entry.get("saves_any") and rg is Tri.YES:
                segs = segs | {self.site(node)}
        saved_out = None
        if rg is Tri.YES and entry is not None:
            if entry.get("saves_output"):
                saved_out = self.fact(node, f"saved for backward by `{_pretty(qual)}`")
            self.mark_saved_inputs(qual, entry, args, node, state)
            for idx in _saved_input_indices(entry, args):
                v = args[idx][1]
                if v.param and v.rg is Tri.YES and v.origin is not None:
                    psaved |= {_fsite(v.origin)}
        saved_seg = self.site(node) if saved_out is not None else None
        shape = self.result_shape(short, tensors, args, kwargs)
        is_int = Tri.NO if any(v.is_int is Tri.NO for _, v in tensors) else (
            Tri.YES if all(v.is_int is Tri.YES for _, v in tensors) else Tri.MAYBE)
        if short in ("float", "double", "half", "softmax", "log_softmax", "mean", "sigmoid", "__truediv__", "div"):
            is_int = Tri.NO
        zerograd = None
        if rg is Tri.YES:
            if nd == "zero_grad":
                zerograd = self.fact(node, f"`{_pretty(qual)}` has a zero gradient everywhere")
            else:
                grad_inputs = [v for _, v in tensors if v.rg is not Tri.NO]
                if grad_inputs and all(v.zerograd is not None for v in grad_inputs):
                    zerograd = grad_inputs[0].zerograd
        view = None
        multiview = short in db.MULTI_VIEW
        if multiview or (short in db.VIEW_METHODS and (short != "__getitem__" or _basic_index(node))):
            view = self.fact(node, f"a view made by `{self.seg(node)}`")
        nograd_view = view is not None and state.grad is Tri.NO and not state.inference and any(
            v.rg is Tri.YES for _, v in tensors)
        base = tensors[0][1]
        leaf_view = view is not None and rg is Tri.YES and (
            (base.leaf is Tri.YES and base.rg is Tri.YES) or base.leaf_view)
        return TensorVal(rg=rg, leaf=Tri.NO if rg is Tri.YES else (Tri.YES if rg is Tri.NO else Tri.MAYBE),
                         origin=origin, nograd=nograd, saved=saved_out, freed=freed, freed_sure=freed_sure,
                         segs=segs, sources=sources, shape=shape, is_int=is_int, inference=state.inference,
                         carried=carried, via=via, zerograd=zerograd, view=view, multiview=multiview,
                         nograd_view=nograd_view, saved_seg=saved_seg, leaf_view=leaf_view, psaved=psaved,
                         stepped=stepped, psrc=psrc, pcut=pcut, psrc_partial=partial,
                         storage=base.storage if view is not None else self.site(node), stored=stored,
                         evidence=rg is Tri.YES and all(v.evidence for _, v in tensors if v.rg is Tri.YES))

    def carry_check(self, tensors, node: ast.AST, state: Optional[State] = None) -> Optional[Fact]:
        """A tensor from an earlier iteration whose graph a backward later in this loop frees, fed into this
        step's graph: report the carry once (CarryEvent) and mark what is computed from it."""
        if not self.loops:
            return None
        for n, v in tensors:
            if v.carried is not None:
                return v.carried
        for n, v in tensors:
            f = v.freed
            if f is None or v.rg is Tri.NO or v.leaf is Tri.YES or f.path is not None:
                continue
            if f.line >= getattr(node, "lineno", 0) and self._in_current_loop(f.line):
                key = key_of(n)
                is_tuple = state is not None and key is not None and isinstance(state.get(key), SeqVal)
                self.emit(CarryEvent(node, v, self.seg(n), n, is_tuple))
                return self.fact(node, f"`{self.seg(n)}` carries the previous iteration's graph into this step")
        return None

    def _in_current_loop(self, line: int) -> bool:
        loop = self.loops[-1].node
        return loop.lineno <= line <= (getattr(loop, "end_lineno", None) or loop.lineno)

    def mark_saved_inputs(self, qual: str, entry: dict, args, node: ast.AST, state: State) -> None:
        saves = entry.get("saves_inputs") or {}
        rgs = [(v.rg if isinstance(v, TensorVal) else Tri.NO) for _, v in args]
        for idx_s, triggers in saves.items():
            try:
                idx = int(idx_s)
            except ValueError:
                continue
            if idx >= len(args):
                continue
            arg_node, val = args[idx]
            if not isinstance(val, TensorVal):
                continue
            if triggers:
                ok = any(isinstance(t, int) and t < len(rgs) and rgs[t] is Tri.YES for t in triggers)
            else:
                ok = any(r is Tri.YES for r in rgs)
            if not ok:
                continue
            if val.inference and not state.inference:
                self.emit(InferenceSaveEvent(node, val, self.seg(arg_node), _pretty(qual)))
            key = key_of(arg_node)
            self.mark_saved_view_base(arg_node, qual, node, state)
            self.mark_saved_storage(arg_node, val, _pretty(qual), node, state)
            if key is None or state.get(key) != val:
                continue
            state.env[key] = val.with_(saved=self.fact(node, f"saved for backward by `{_pretty(qual)}`"),
                                       saved_seg=self.site(node))

    def mark_saved_storage(self, arg_node: ast.AST, val: TensorVal, what: str, node: ast.AST, state: State) -> None:
        """An op saved `val`: every other reference to the same storage shares its version counter, so an in-place
        write through any of them makes that backward raise. They count as saved too (the heap's alias rule)."""
        if val.storage is None or val.is_data:
            return
        key = key_of(arg_node)
        fact = None
        for k, v in list(state.env.items()):
            if k == key or not isinstance(v, TensorVal) or v.storage != val.storage or v.saved is not None \
                    or v.is_data:
                continue
            if fact is None:
                fact = self.fact(node, f"`{self.seg(arg_node)}`, which shares its storage, was saved for backward "
                                       f"by `{what}`")
            state.env[k] = v.with_(saved=fact, saved_seg=self.site(node))

    def alias_writes(self, target_node: ast.AST, target: TensorVal, op: str, state: State, stmt: ast.AST,
                     whole: ast.AST) -> None:
        """An in-place write through `target` bumps the version counter of every alias of its storage: report the
        aliases whose value an op saved (`preview = energy.detach(); preview.clamp_()` after `exp` saved
        `energy`), then forget those saves so one write is reported once."""
        if target.storage is None or target.is_data:
            return
        key = key_of(target_node)
        reported = target.saved is not None
        for k, v in list(state.env.items()):
            if k == key or not isinstance(v, TensorVal) or v.storage != target.storage or v.saved is None \
                    or v.is_data:
                continue
            if not reported:
                self.emit(InplaceEvent(stmt, v, k, op, state.grad, stmt=whole))
                reported = True
            state.env[k] = v.with_(saved=None)

    def fresh_storage(self, value: Value, state: State, stmt: ast.AST) -> None:
        """A tensor allocated by this statement is not the one an earlier run of the same statement allocated (a
        loop's previous iteration): references to that older one stop being its aliases."""
        if not isinstance(value, TensorVal) or value.storage is None or not self.loops:
            return
        line = value.storage[1]
        if value.storage[0] != self.scope.path or not (
                getattr(stmt, "lineno", 0) <= line <= (getattr(stmt, "end_lineno", None) or 0)):
            return
        for k, v in list(state.env.items()):
            if isinstance(v, TensorVal) and v.storage == value.storage:
                state.env[k] = v.with_(storage=None)

    def mark_saved_view_base(self, arg_node: ast.AST, qual: str, node: ast.AST, state: State) -> None:
        """`x[0] * w` saves the view `x[0]`, which shares `x`'s version counter: modifying `x` in place
        afterwards (`x[0] = ...`, `x += 1`) makes that backward raise, so `x` counts as saved too."""
        if isinstance(arg_node, ast.Subscript) and _basic_index(arg_node):
            base_node = arg_node.value
        elif (isinstance(arg_node, ast.Call) and isinstance(arg_node.func, ast.Attribute)
              and arg_node.func.attr in db.VIEW_METHODS and arg_node.func.attr not in ("reshape", "flatten")):
            base_node = arg_node.func.value  # reshape/flatten copy when they must: not surely a view
        else:
            return
        key = key_of(base_node)
        base = state.get(key) if key else None
        if not isinstance(base, TensorVal) or base.saved is not None or base.is_data:
            return
        state.set(key, base.with_(saved=self.fact(node, f"`{self.seg(arg_node)}`, a view of it, was saved for "
                                                        f"backward by `{_pretty(qual)}`"),
                                  saved_seg=self.site(node)))

    @staticmethod
    def result_shape(short: str, tensors, args, kwargs) -> Optional[tuple]:
        if short in db.REDUCTIONS:
            has_dim = len(args) > 1 or (kwargs and ("dim" in kwargs or "axis" in kwargs))
            if not has_dim:
                return ()
            return _reduced_shape(tensors[0][1].shape if tensors else None, args, kwargs)
        if short in ("mse_loss", "l1_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
                     "binary_cross_entropy_with_logits", "smooth_l1_loss", "huber_loss", "kl_div"):
            return ()
        shapes = [v.shape for _, v in tensors]
        if short in ("matmul", "__matmul__", "mm", "mv", "dot") and len(tensors) == 2 and len(args) == 2 \
                and all(s is not None and "?" not in s and len(s) in (1, 2) for s in shapes):
            a, b = shapes
            if a[-1] != b[0]:
                return None
            return a[:-1] + b[1:]
        if short in db.ELEMENTWISE_UNARY and len(tensors) == 1:
            return shapes[0]
        if short in db.ELEMENTWISE_BINARY:
            known = [s for s in shapes if s is not None]
            if len(known) == len(shapes) and known:
                return _broadcast(known)
            if len(tensors) == 1 and shapes[0] is not None:
                others_scalar = all(not isinstance(v, TensorVal) for _, v in args[1:])
                return shapes[0] if others_scalar else None
        return None

    def inplace(self, target_node: ast.AST, target: TensorVal, op: str, state: State, stmt: ast.AST,
                rhs=(), module: Optional[ModuleVal] = None) -> Value:
        whole = getattr(self, "current_stmt", None)
        if not (isinstance(whole, ast.Expr) and whole.value is stmt):
            whole = stmt
        self.emit(InplaceEvent(stmt, target, self.seg(target_node), op, state.grad, stmt=whole, module=module))
        self.alias_writes(target_node, target, op, state, stmt, whole)
        if target.multiview or target.nograd_view:
            self.emit(ViewInplaceEvent(stmt, target, self.seg(target_node), op, state.grad))
        rg = target.rg
        extra = [v for v in rhs if isinstance(v, TensorVal)]
        if state.grad is not Tri.NO and any(v.rg is Tri.YES for v in extra):
            rg = Tri.YES
        leaf = target.leaf
        if state.grad is not Tri.NO and rg is Tri.YES and target.leaf is Tri.YES and not target.param and target.rg is Tri.NO:
            leaf = Tri.NO
        new = target.with_(saved=None, rg=rg, leaf=leaf,
                           sources=target.sources | frozenset().union(*[v.sources for v in extra]) if extra else target.sources,
                           psrc=target.psrc | frozenset().union(*[v.psrc for v in extra if v.rg is not Tri.NO]),
                           pcut=_cap(target.pcut | _pcut_of(extra)),
                           psrc_partial=target.psrc_partial or any(v is UNKNOWN for v in rhs)
                           or any(v.psrc_partial for v in extra))
        key = key_of(target_node)
        if key is not None:
            state.set(key, new)
        self.record(target_node, new)
        return new

    # ---- backward
    def grad_results(self, node: ast.Call, target: Value, inputs: list, kwargs: dict, state: State) -> Value:
        """`torch.autograd.grad(...)` returns one gradient per input; without create_graph they have no history."""
        if not inputs:
            return UNKNOWN
        create = Tri.of(const_bool(kwargs["create_graph"][0])) if "create_graph" in kwargs else Tri.NO
        if create is Tri.NO or state.grad is Tri.NO:
            why = self.fact(node, "`torch.autograd.grad` without create_graph=True returns gradients with no history")
            g = TensorVal(rg=Tri.NO, leaf=Tri.YES, nograd=why, origin=why, is_int=Tri.NO)
        else:
            rg = Tri.YES if isinstance(target, TensorVal) and target.rg is Tri.YES and create is Tri.YES else Tri.MAYBE
            src = target if isinstance(target, TensorVal) else TensorVal()
            g = TensorVal(rg=rg, leaf=Tri.NO if rg is Tri.YES else Tri.MAYBE, is_int=Tri.NO,
                          origin=self.fact(node, "a gradient computed with create_graph=True"),
                          sources=src.sources, segs=src.segs)
        return SeqVal(tuple(g.with_(shape=v.shape if isinstance(v, TensorVal) else None) for _, v in inputs))

    def backward(self, target: Value, target_node: ast.AST, call: ast.Call, state: State, api: str,
                 kwargs: dict, positional: int = 0, inputs: list | None = None,
                 gradient: Optional[tuple] = None) -> None:
        key = key_of(target_node)
        if key is not None and state.grad is not Tri.NO and (
                target is UNKNOWN or isinstance(target, TensorVal) and target.rg is Tri.MAYBE):
            # Evidence from use: past a backward on it, the tensor has a graph (the backward would raise otherwise).
            known = target if isinstance(target, TensorVal) else TensorVal(
                origin=self.fact(target_node, f"`{self.seg(target_node)}` is backwarded, so it has a graph"))
            state.set(key, known.with_(rg=Tri.YES, leaf=Tri.NO, evidence=True))
        if not isinstance(target, TensorVal):
            return
        retain = Tri.NO
        rnode = kwargs.get("retain_graph", (None, None))[0]
        cnode = kwargs.get("create_graph", (None, None))[0]
        if rnode is not None:
            retain = Tri.of(const_bool(rnode))
        if cnode is not None and const_bool(cnode) is not False:
            retain = Tri.YES if retain is Tri.NO else retain
        if api == "Tensor.backward" and positional >= 2:
            retain = Tri.MAYBE
        gradient_given = positional >= 1 or "gradient" in kwargs or "grad_tensors" in kwargs or "grad_outputs" in kwargs
        if api == "torch.autograd.grad" and len(call.args) >= 3:
            gradient_given = True
        create = Tri.NO if cnode is None else Tri.of(const_bool(cnode))
        unode = kwargs.get("allow_unused", (None, None))[0]
        allow_unused = Tri.NO if unode is None else Tri.of(const_bool(unode))
        if kwargs.get("materialize_grads", (None, None))[0] is not None:
            allow_unused = Tri.MAYBE
        self.emit(BackwardEvent(call, target, self.seg(target_node), api, call, gradient_given, retain, state.grad,
                                target_node, tuple(inputs or ()), create, allow_unused, gradient))
        self.backward_seen = True
        self.reached_sources |= target.sources
        self.param_cuts(target)
        if target.rg is not Tri.YES or retain is not Tri.NO:
            return
        line_fact = self.fact(call, f"`{self.seg(call)}` freed the graph's saved tensors")
        self.record(call, target.with_(freed=line_fact), transition=True,
                    summary="backward consumes this graph here: its saved tensors are freed, so another backward "
                            "through any part of it raises (unless retain_graph=True)",
                    label="graph freed")
        def consume(val: TensorVal) -> TensorVal:
            if val.saved is not None and val.saved_seg is not None and val.saved_seg in target.segs:
                # The graph that saved this value is gone: modifying it in place is harmless now.
                val = val.with_(saved=None, saved_seg=None)
            if val.segs & target.segs and val.rg is not Tri.NO:
                val = val.with_(freed=line_fact, freed_sure=True, carried=None)
            return val

        for key, val in list(state.env.items()):
            state.env[key] = map_tensors(val, consume)
        key = key_of(target_node)
        if key and isinstance(state.get(key), TensorVal) and target.segs:
            state.env[key] = state.env[key].with_(freed=line_fact, freed_sure=True)

    def param_cuts(self, target: TensorVal) -> None:
        """Module parameters reaching this backward only through a cut (`.detach()`, `.data`, a NumPy round
        trip) become GS202 candidates, keyed at the cut; any backward reaching them uncut clears them."""
        if target.rg is Tri.NO:
            return
        for site in target.psrc:
            self.reached_sources.add(ParamReach(("params", site)))
        if target.rg is not Tri.YES or target.psrc_partial or not target.pcut:
            return
        for site, cut_site, cut in sorted(target.pcut, key=lambda e: (repr(e[1]), repr(e[0]))):
            if site in target.psrc or cut.path is not None or cut_site[0] != self.root_path \
                    or not self.is_trained(site):
                continue
            key = ParamCut((cut_site[0], cut_site[1], cut_site[2], site))
            if any(isinstance(k, ParamCut) and k[0] == key[0] and k[1] == key[1] and k[3] == site and k[2] != key[2]
                   for k in self.grad_leaves):
                continue  # one report per line: `h.data / h.data.norm()` cuts twice, the fix is the same
            name = self.module_name(site)
            label = f"the parameters of `{name}`" if name else "these parameters"
            created = Fact(site[1], site[2], f"{label} were created here", None, site[0])
            self.grad_leaves.setdefault(key, (label, created))
            self.cut_sources.setdefault(key, cut)

    # ---- modules
    def module_method(self, recv: ModuleVal, func: ast.Attribute, node: ast.Call, state: State) -> Value:
        name = func.attr
        if name in ("parameters",):
            self.eval_args(node, state)
            return ParamsVal(origin=self.fact(node, f"parameters of `{self.seg(func.value)}`"), owner=key_of(func.value),
                             module_sites=frozenset({_msite(recv)}) if _msite(recv) else frozenset())
        if name in ("to", "cuda", "cpu", "float", "double", "half", "train", "eval", "requires_grad_", "zero_grad",
                    "apply", "share_memory", "type"):
            args, kwargs = self.eval_args(node, state)
            key = key_of(func.value)
            if name in ("requires_grad_", "eval", "train"):
                if name == "requires_grad_":
                    flag = const_bool(node.args[0]) if node.args else True
                    new = replace(recv, has_params=Tri.of(flag) if flag is not None else Tri.MAYBE)
                elif name == "eval" or (node.args and const_bool(node.args[0]) is False):
                    new = replace(recv, eval_at=self.fact(node, f"`{self.seg(node)}` switched to evaluation mode"))
                else:
                    new = replace(recv, eval_at=None)
                if key:
                    state.set(key, new)
                return new
            return recv if name != "zero_grad" else PyVal()
        if name == "forward":
            args, kwargs = self.eval_args(node, state)
            return self.call_module(recv, args, kwargs, node, state)
        if name in ("append", "extend", "insert") and recv.layers and db.module_short(recv.qual) == "ModuleList":
            self.eval_args(node, state)
            key = key_of(func.value)
            if key:
                state.set(key, replace(recv, layers=()))  # its layers are no longer all known
            return PyVal()
        if recv.cls is not None:
            meth = self.find_method(recv.cls, name)
            if meth is not None:
                args, kwargs = self.eval_args(node, state)
                return self.call_function(meth, recv, args, kwargs, node, state)
            sub = recv.attr(name)
            if isinstance(sub, ModuleVal):
                args, kwargs = self.eval_args(node, state)
                return self.call_module(sub, args, kwargs, node, state)
        self.eval_args(node, state)
        return UNKNOWN

    def call_module(self, mod: ModuleVal, args, kwargs, node: ast.AST, state: State) -> Value:
        ins = [v for _, v in flat_tensors(list(args) + list(kwargs.values()))]
        inherited = frozenset().union(*[v.psaved for v in ins])
        inherited_src = frozenset().union(*[v.psrc for v in ins]) | {e[0] for v in ins for e in v.pcut}
        result = self._call_module(mod, args, kwargs, node, state)
        site = _msite(mod)
        if site is None or mod.has_params is Tri.NO:
            return result
        self.optimized_modules.setdefault(f"\0name\0{site!r}",
                                          self.seg(node.func if isinstance(node, ast.Call) else node))

        def tag(val: TensorVal) -> TensorVal:
            # Parameters of a sub-module (or the module's own) were saved by this call: so were `mod`'s.
            if val.psaved - inherited and site not in val.psaved:
                val = val.with_(psaved=val.psaved | {site})
            new_src = val.psrc - inherited_src - {site}
            for sub in new_src | ({e[0] for e in val.pcut} - inherited_src - {site}):
                self.note_parent(sub, site)
            if new_src:
                val = val.with_(psrc=val.psrc | {site})
            return val

        return map_tensors(result, tag)

    def _call_module(self, mod: ModuleVal, args, kwargs, node: ast.AST, state: State) -> Value:
        if mod.alts:
            # One of several modules (bound on different paths): each runs on its own copy of the state.
            out: Optional[Value] = None
            ends = []
            unsaved = False
            for alt in mod.alts:
                branch = state.copy()
                res = self.call_module(alt, args, kwargs, node, branch)
                unsaved = unsaved or not (isinstance(res, TensorVal) and res.saved is not None)
                out = join_values(out, res)
                ends.append(branch)
            if unsaved and isinstance(out, TensorVal):
                out = out.with_(saved=None, saved_seg=None)  # saved only if every alternative saves it
            joined = ends[0]
            for e in ends[1:]:
                joined = joined.join(e)
            state.env, state.compound = joined.env, joined.compound
            return out if out is not None else UNKNOWN
        if mod.cls is not None:
            fwd = self.find_method(mod.cls, "forward")
            if fwd is None:
                return UNKNOWN
            return self.call_function(fwd, mod, args, kwargs, node, state)
        short = db.module_short(mod.qual)
        if short == "Sequential" and mod.layers:
            if not args:
                return UNKNOWN
            val: Value = args[0][1]
            arg_node = args[0][0]
            for layer in mod.layers:
                val = self.call_module(layer, [(arg_node, val)], {}, node, state)
                arg_node = node
            return val
        if not args:
            return UNKNOWN
        in_node, x = args[0]
        if not isinstance(x, TensorVal) and x is not UNKNOWN and not isinstance(x, SeqVal):
            return UNKNOWN
        if mod.inplace and isinstance(x, TensorVal):
            self.inplace(in_node, x, f"{short}(inplace=True)", state, node, module=mod)
            if x.saved is not None and state.grad is not Tri.NO and x.rg is Tri.YES:
                x = x.with_(saved=None)
        params = mod.has_params
        if state.grad is Tri.NO:
            rg = Tri.NO
        elif params is Tri.YES:
            rg = Tri.YES
        elif isinstance(x, TensorVal):
            rg = x.rg if params is Tri.NO else (Tri.YES if x.rg is Tri.YES else Tri.MAYBE)
            if any(v.rg is Tri.YES for _, v in flat_tensors(args[1:])):
                rg = Tri.YES
        else:
            rg = Tri.MAYBE
        origin = self.fact(node, f"from `{self.seg(node)}`")
        pairs = flat_tensors(args)
        tensors = [v for _, v in pairs]
        nograd = None
        if rg is Tri.NO:
            if state.grad is Tri.NO:
                nograd = self.fact(node, "computed while grad mode was disabled", state.grad_why)
            else:
                nograd = self.fact(node, "computed only from tensors that do not require grad",
                                   next((v.nograd for v in tensors if v.nograd), None))
        segs = frozenset().union(*[v.segs for v in tensors]) if tensors else frozenset()
        sources = frozenset().union(*[v.sources for v in tensors]) if tensors else frozenset()
        freed = next((v.freed for v in tensors if v.freed is not None and v.rg is not Tri.NO and v.leaf is not Tri.YES), None)
        carried = next((v.carried for v in tensors if v.carried is not None), None)
        via = None
        if freed is not None:
            via_arg = next(((n, v) for n, v in pairs if v.freed is freed), None)
            if via_arg is not None:
                via = via_arg[1].via or self.fact(via_arg[0], self.seg(via_arg[0]))
        carried = carried or self.carry_check(pairs, node, state)
        entry = db.op_entry(mod.qual)
        saved = None
        psaved = frozenset().union(*[v.psaved for v in tensors if v.rg is not Tri.NO]) if tensors else frozenset()
        psrc = frozenset().union(*[v.psrc for v in tensors if v.rg is not Tri.NO]) if tensors else frozenset()
        if rg is Tri.YES and params is Tri.YES and _msite(mod):
            psrc = psrc | {_msite(mod)}
        pcut = _pcut_of(tensors)
        partial = x is UNKNOWN or any(v is UNKNOWN for _, v in args) or any(v.psrc_partial for v in tensors)
        stepped = next((v.stepped for v in tensors if v.stepped is not None and v.rg is not Tri.NO), None)
        if rg is Tri.YES and params is Tri.YES and state.grad is Tri.YES and entry is not None and _msite(mod):
            for pname, triggers in (entry.get("saves_inputs") or {}).items():
                if pname.isdigit():
                    continue
                if not triggers or any(isinstance(t, int) and t < len(args) and isinstance(args[t][1], TensorVal)
                                       and args[t][1].rg is Tri.YES for t in triggers):
                    psaved = psaved | {_msite(mod)}
                    break
        if rg is Tri.YES:
            if entry is None or entry.get("saves_any", True):
                segs = segs | {self.site(node)}
            if entry is not None:
                if entry.get("saves_output"):
                    saved = self.fact(node, f"saved for backward by `{short}`")
                    if not (entry is None or entry.get("saves_any", True)):
                        segs = segs | {self.site(node)}
                trig_args = list(args)
                # Modules: input 0 is saved when its weights require grad ("weight" trigger).
                for idx_s, triggers in (entry.get("saves_inputs") or {}).items():
                    if not idx_s.isdigit() or int(idx_s) >= len(trig_args):
                        continue
                    if triggers and not any((isinstance(t, str) and params is Tri.YES) or (isinstance(t, int) and t < len(trig_args)
                                                                                       and isinstance(trig_args[t][1], TensorVal)
                                                                                       and trig_args[t][1].rg is Tri.YES)
                                            for t in triggers):
                        continue
                    a_node, a_val = trig_args[int(idx_s)]
                    if isinstance(a_val, TensorVal) and a_val.inference and not state.inference:
                        self.emit(InferenceSaveEvent(node, a_val, self.seg(a_node), short))
                    key = key_of(a_node)
                    if isinstance(a_val, TensorVal):
                        self.mark_saved_storage(a_node, a_val, short, node, state)
                    if key and isinstance(a_val, TensorVal) and state.get(key) == a_val:
                        state.env[key] = a_val.with_(saved=self.fact(node, f"saved for backward by `{short}`"),
                                                     saved_seg=self.site(node))
        shape = None
        if mod.reduction is not None:
            shape = ("?",) if mod.reduction == "none" else (() if mod.reduction in ("mean", "sum") else None)
        elif short in db.PARAMLESS_MODULES and isinstance(x, TensorVal) and short not in ("Flatten", "Unflatten") \
                and "Pool" not in short and "Pad" not in short and "Upsample" not in short:
            shape = x.shape
        elif mod.out_features is not None and isinstance(x, TensorVal) and x.shape and "?" not in x.shape:
            shape = x.shape[:-1] + (mod.out_features,)
        zerograd = None
        if rg is Tri.YES and params is Tri.NO:
            grad_inputs = [v for v in tensors if v.rg is not Tri.NO]
            if grad_inputs and all(v.zerograd is not None for v in grad_inputs):
                zerograd = grad_inputs[0].zerograd
        result = TensorVal(rg=rg, leaf=Tri.NO if rg is Tri.YES else (Tri.YES if rg is Tri.NO else Tri.MAYBE),
                           origin=origin, nograd=nograd, saved=saved, freed=freed, segs=segs, sources=sources,
                           shape=shape, is_int=Tri.NO, carried=carried, via=via, zerograd=zerograd,
                           inference=state.inference, saved_seg=self.site(node) if saved is not None else None,
                           gained=rg is Tri.YES and params is Tri.YES and all(v.rg is Tri.NO for v in tensors),
                           psaved=psaved if rg is not Tri.NO else frozenset(),
                           stepped=stepped if rg is not Tri.NO else None,
                           psrc=psrc if rg is not Tri.NO else frozenset(), pcut=pcut, psrc_partial=partial,
                           storage=self.site(node),
                           stored=next((v.stored for v in tensors if v.stored is not None), None) if rg is not Tri.NO
                           else None,
                           evidence=rg is Tri.YES and (mod.evidence or (params is not Tri.YES and bool(tensors) and all(
                               v.evidence for v in tensors if v.rg is Tri.YES))))
        if short in db.RECURRENT:
            hidden = result.with_(saved=None, shape=None)
            return SeqVal((result.with_(shape=None), SeqVal((hidden, hidden)) if short == "LSTM" else hidden))
        return result

    def instantiate(self, info: ClassInfo, args, kwargs, node: ast.AST, state: State) -> Value:
        if not info.is_module:
            return self.new_object(info, args, kwargs, node, state)
        origin = self.fact(node, f"`{self.seg(node)}`")
        base = ModuleVal(info.name, cls=info, origin=origin, has_params=Tri.MAYBE)
        init = self.find_method(info, "__init__")
        attrs: tuple = ()
        if init is not None:
            ck = (id(info), tuple(v for _, v in args))
            if ck in self.init_cache:
                attrs = self.init_cache[ck]
            else:
                self.init_cache[ck] = ()
                attrs = self.collect_init_attrs(init, base, args, kwargs, node, state)
                self.init_cache[ck] = attrs
        has = Tri.NO
        for _, v in attrs:
            if isinstance(v, ModuleVal):
                if v.has_params is Tri.YES:
                    has = Tri.YES
                elif v.has_params is Tri.MAYBE and has is Tri.NO:
                    has = Tri.MAYBE
            elif isinstance(v, TensorVal) and v.param:
                has = Tri.YES
            elif v is UNKNOWN and has is Tri.NO:
                has = Tri.MAYBE
        if not attrs:
            has = Tri.MAYBE
        return ModuleVal(info.name, cls=info, origin=origin, has_params=has, attrs=attrs)

    def new_object(self, info: ClassInfo, args, kwargs, node: ast.AST, state: State, fresh: bool = True) -> Value:
        """An instance of a plain class whose every base is a plain class of the analysed code (so all its methods
        are known), without decorators or a metaclass; anything else is UNKNOWN. Not `fresh`: any method may
        already have run on it."""
        if not _plain_class(info):
            return UNKNOWN
        changed = frozenset() if fresh else self.method_mutations(info, None)
        origin = self.fact(node, f"`{self.seg(node)}`")
        base = ObjectVal(info, (), origin, changed)
        init = self.find_method(info, "__init__")
        attrs: tuple = ()
        if init is not None:
            ck = (id(info), tuple(v for _, v in args), tuple(sorted((k, v) for k, (_, v) in kwargs.items())))
            try:
                hash(ck)
            except TypeError:
                return UNKNOWN
            if ck in self.init_cache:
                attrs = self.init_cache[ck]
            else:
                self.init_cache[ck] = ()
                attrs = self.collect_init_attrs(init, base, args, kwargs, node, state)
                self.init_cache[ck] = attrs
        return replace(base, attrs=attrs)

    def method_mutations(self, info: ClassInfo, method: Optional[str]) -> frozenset:
        """The attributes of `self` that running `method` of `info` may have changed (`_own_mutations`, followed
        through its calls of other methods on `self`; "*": any). `method` None: every method but `__init__` may
        have run. Each method's syntax is read once per analysis."""
        key = ("mutates", id(info.node), method)
        hit = self.syntax_memo.get(key)
        if hit is not None and hit[0] is info.node:
            return hit[1]
        methods = self.syntax("methods", info.node, lambda _n: _class_methods(info))
        todo = [m for m in methods if m != "__init__"] if method is None else [method]
        out: set = set()
        done: set = set()
        while todo:
            name = todo.pop()
            if name in done:
                continue
            done.add(name)
            meth = methods.get(name)
            if meth is None:
                if name != "__call__":
                    out.add("*")
                continue
            attrs, calls = self.syntax("own_mutations", meth.node, lambda fn: _own_mutations(fn, methods))
            out |= attrs
            todo.extend(calls)
        result = frozenset(out)
        self.syntax_memo[key] = (info.node, result)
        return result

    def collect_init_attrs(self, init: FuncVal, self_val: ModuleVal, args, kwargs, node, state) -> tuple:
        was = self.reporting
        self.reporting = False
        try:
            end = self.run_function(init, self_val, args, kwargs, node, state, want_state=True)
        finally:
            self.reporting = was
        if not isinstance(end, State):
            return ()
        out = []
        for key, val in end.env.items():
            if key.startswith("self.") and key.count(".") == 1 and "[" not in key:
                out.append((key[5:], val))
        return tuple(sorted(out, key=lambda kv: kv[0]))

    # ---- user functions
    def receiver_key(self, func: FuncVal, self_val: Optional[Value], node: ast.AST, state: State) -> Optional[str]:
        """The caller's reference key of the instance a method runs on (`lut` for `lut(x)` and `lut.forward(x)`,
        `self.meter` for `self.meter.update(v)`), when the caller's value there is that instance."""
        if not isinstance(self_val, (ModuleVal, ObjectVal)) or not isinstance(node, ast.Call):
            return None
        f = node.func
        ref = f.value if isinstance(f, ast.Attribute) and f.attr == func.node.name else f
        key = key_of(ref)
        if key is None or "[" in key or state.get(key) != self_val:
            return None
        return key

    def call_function(self, func: FuncVal, self_val: Optional[Value], args, kwargs, node: ast.AST,
                      state: State) -> Value:
        # Object state across method calls: what the caller knows about `recv.attr` is the method's `self.attr`,
        # and what the method leaves in `self.attr` is the caller's `recv.attr` afterwards.
        recv_key = self.receiver_key(func, self_val, node, state)
        imports = None
        if recv_key is not None:
            prefix = recv_key + "."
            imports = tuple(sorted((k[len(prefix):], v) for k, v in state.env.items() if k.startswith(prefix)))
        result = self.run_function(func, self_val, args, kwargs, node, state, self_import=imports)
        if recv_key is not None:
            for rest, val in self.last_exports:
                if state.get(f"{recv_key}.{rest}") != val:
                    state.set(f"{recv_key}.{rest}", val)
        self.last_exports = ()
        if not isinstance(result, Value):
            return UNKNOWN
        out = flat_tensors([(node, result)])
        if out and all(v.leaf is Tri.YES and v.rg is Tri.NO for _, v in out):
            # A helper that detaches what it is handed (`h = repackage(h)`, truncated BPTT) carries no graph.
            return result
        carried = self.carry_check(flat_tensors(list(args) + list(kwargs.values())), node, state)
        return with_carried(result, carried) if carried is not None else result

    def run_function(self, func: FuncVal, self_val, args, kwargs, node, state: State, want_state: bool = False,
                     self_import: Optional[tuple] = None):
        """Run `func`'s body on abstract arguments. `self_import`: (attribute path, value) pairs the caller knows
        about the instance; the `self.*` entries the body leaves are put in `self.last_exports` (when given)."""
        self.last_exports = ()
        if self.depth >= MAX_CALL_DEPTH or any(f is func.node for f in self.stack):
            return UNKNOWN
        fn = func.node
        if self_val is UNKNOWN and not self.stack and isinstance(func.owner, ClassInfo) and not func.owner.is_module \
                and fn.name != "__init__" and not _is_static(fn) and not any(
                    isinstance(d, ast.Name) and d.id == "classmethod" for d in fn.decorator_list):
            # A plain class's method analysed on its own: `self` is an instance built from unknown arguments, on
            # which other methods may already have run.
            init = self.find_method(func.owner, "__init__")
            n_args = len(init.node.args.args) - 1 if init is not None else 0
            self_val = self.new_object(func.owner, [(fn, UNKNOWN)] * max(n_args, 0), {}, fn, state, fresh=False)
        grad, why, inference = state.grad, state.grad_why, state.inference
        for dec in fn.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            q = self.static_qual(target)
            if q in db.GRAD_MODE:
                enabled, inf = db.GRAD_MODE[q]
                if enabled is not None:
                    grad, inference = Tri.of(enabled), inf
                    why = self.fact(dec, f"grad mode disabled by the `@{self.seg(dec)}` decorator") if not enabled else None
            elif q not in ("builtins.staticmethod", "builtins.classmethod", "functools.wraps", "builtins.property") \
                    and not (q or "").startswith("torch."):
                return UNKNOWN if not want_state else None
        arg_vals = [v for _, v in args]
        kw_vals = {k: v for k, (_, v) in kwargs.items()}
        memo_key = (id(fn), self_val, tuple(arg_vals), tuple(sorted(kw_vals.items(), key=lambda kv: kv[0])), grad,
                    inference, self.reporting, want_state, self_import)
        try:
            hash(memo_key)
        except TypeError:
            memo_key = None
        if memo_key is not None and memo_key in self.memo:
            if self_import is not None:
                self.last_exports = self.memo_exports.get(memo_key, ())
            return self.memo[memo_key]
        callee_state = State(grad=grad, grad_why=why, inference=inference)
        params = fn.args
        positional = list(params.posonlyargs) + list(params.args)
        vals = list(arg_vals)
        self_name = None
        if self_val is not None and positional:
            self_name = positional[0].arg
            callee_state.set(self_name, self_val)
            for rest, val in self_import or ():
                callee_state.set(f"{self_name}.{rest}", val)
            positional = positional[1:]
        all_positional = list(params.posonlyargs) + list(params.args)
        defaults = dict(zip([p.arg for p in all_positional[len(all_positional) - len(params.defaults):]],
                            params.defaults))
        defaults.update({p.arg: d for p, d in zip(params.kwonlyargs, params.kw_defaults) if d is not None})
        for i, p in enumerate(positional):
            if i < len(vals):
                callee_state.set(p.arg, vals[i])
            elif p.arg in kw_vals:
                callee_state.set(p.arg, kw_vals[p.arg])
            else:
                callee_state.set(p.arg, _constant_default(defaults.get(p.arg)))
        for p in params.kwonlyargs:
            callee_state.set(p.arg, kw_vals[p.arg] if p.arg in kw_vals else _constant_default(defaults.get(p.arg)))
        if params.vararg:
            callee_state.set(params.vararg.arg, UNKNOWN)
        if params.kwarg:
            callee_state.set(params.kwarg.arg, UNKNOWN)
        other_scope = func.module if func.module is not None else self.scope
        saved_globals = (self.globals_state, self.globals_scope)
        if not self.stack:
            # Called from module-level code (or analysed on its own, with an empty state): its globals are
            # that code's variables as of the call.
            self.globals_state, self.globals_scope = state, self.scope
        saved_scope, saved_src = self.scope, self.src
        saved_loops = self.loops
        self.scope, self.src = other_scope, other_scope.source
        self.loops = []
        self.stack.append(fn)
        self.frame_optimized.append({})
        self.frame_caller_grad.append(state.grad)
        self.depth += 1
        self.returns.append([])
        self.return_exports.append(f"{self_name}." if self_import is not None and self_name else None)
        self.self_names.append(self_name)
        self.return_states.append([])
        try:
            end = self.exec_block(fn.body, callee_state)
            rets = self.returns[-1]
            exit_envs = self.return_states[-1]
        finally:
            self.self_names.pop()
            self.return_exports.pop()
            self.return_states.pop()
            self.returns.pop()
            self.depth -= 1
            self.stack.pop()
            self.frame_optimized.pop()
            self.frame_caller_grad.pop()
            self.scope, self.src = saved_scope, saved_src
            self.globals_state, self.globals_scope = saved_globals
            self.loops = saved_loops
        if want_state:
            result = end
        else:
            if not end.dead:
                rets = rets + [PyVal()]
            result = rets[0] if rets else UNKNOWN
            for r in rets[1:]:
                result = result.join(r)
        exports: tuple = ()
        if self_import is not None and self_name:
            prefix = self_name + "."
            if not end.dead:
                exit_envs = exit_envs + [{k: v for k, v in end.env.items() if k.startswith(prefix)}]
            joined: dict = {}
            for env in exit_envs:
                for k, v in env.items():
                    joined[k] = join_values(joined.get(k), v)
            exports = tuple(sorted((k[len(prefix):], v) for k, v in joined.items() if v is not None))
            self.last_exports = exports
        if memo_key is not None:
            self.memo[memo_key] = result
            if self_import is not None:
                self.memo_exports[memo_key] = exports
        return result

    def static_qual(self, node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Name):
            if node.id in self.scope.imports:
                return self.scope.imports[node.id]
            if node.id in BUILTINS:
                return "builtins." + node.id
            return node.id
        if isinstance(node, ast.Attribute):
            base = self.static_qual(node.value)
            return f"{base}.{node.attr}" if base else None
        return None


_OP_NAMESPACES = ("torch.nn.functional.", "torch.linalg.", "torch.special.", "torch.fft.")


def _is_tensor_function(qual: str) -> bool:
    """torch functions that compute tensors from tensors. Classes (`torch.distributed.rpc.RRef`) and
    other namespaces (`torch.cuda.*`, `torch.distributed.*`, `torch.jit.*`) are not modelled: UNKNOWN."""
    short = qual.rsplit(".", 1)[-1]
    if not short or short[0].isupper():
        return False
    if qual.count(".") == 1 and qual.startswith("torch."):
        return True
    return qual.startswith(_OP_NAMESPACES) or db.op_entry(qual) is not None and qual.startswith("torch.")


def _constant_default(node: Optional[ast.AST]) -> Value:
    """The value of a parameter left to its default: a constant's is known (`smooth=1.0`, `cache=None`)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    if isinstance(node, ast.Constant):
        return PyVal(scalar=isinstance(node.value, (int, float)) and not isinstance(node.value, bool),
                     is_none=node.value is None)
    return UNKNOWN


def _reduced_shape(shape: Optional[tuple], args, kwargs) -> Optional[tuple]:
    """The shape after reducing over one constant dim (`x.mean(dim=0)`, `x.sum(1)`) without keepdim."""
    if shape is None or "?" in shape or (kwargs and "keepdim" in kwargs and const_bool(kwargs["keepdim"][0]) is not False):
        return None
    dim_node = args[1][0] if len(args) > 1 else (kwargs or {}).get("dim", (None, None))[0]
    if len(args) > 2:
        return None
    if isinstance(dim_node, ast.UnaryOp) and isinstance(dim_node.op, ast.USub) and isinstance(dim_node.operand, ast.Constant):
        dim = -dim_node.operand.value if type(dim_node.operand.value) is int else None
    elif isinstance(dim_node, ast.Constant) and type(dim_node.value) is int:
        dim = dim_node.value
    else:
        return None
    if dim is None or not -len(shape) <= dim < len(shape):
        return None
    dim %= len(shape)
    return shape[:dim] + shape[dim + 1:]


def _int_index(slice_node: ast.AST, index: Value) -> bool:
    """An index made of Python numbers (and slices of them) only: basic indexing, which makes a view."""
    if isinstance(slice_node, ast.Tuple):
        return False  # the tuple's value is not tracked per element: stay with the syntactic rule
    return isinstance(index, PyVal) and index.scalar


def _basic_index(node: ast.AST) -> bool:
    """`x[0]`, `x[1:3]`, `x[:, None]`, `x[..., 0]` make views; indexing with tensors or lists copies."""
    if not isinstance(node, ast.Subscript):
        return False
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    for p in parts:
        if isinstance(p, ast.Slice):
            continue
        if isinstance(p, ast.Constant) and (p.value is None or p.value is Ellipsis or type(p.value) is int):
            continue
        if isinstance(p, ast.UnaryOp) and isinstance(p.operand, ast.Constant):
            continue
        return False
    return True


def _sets_grads(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.ctx, ast.Store):
        return True
    if isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else "")
        return name in ("backward", "step") or ("grad" in name and "clip_grad" not in name)
    return False


def _stmt_method(stmt: ast.stmt) -> Optional[str]:
    """`backward` for `loss.backward()` (also `scaler.scale(loss).backward()`), `zero_grad` for
    `opt.zero_grad()`, `step` for `opt.step()` / `scaler.step(opt)`, as whole expression statements; else None."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute)):
        return None
    name = stmt.value.func.attr
    return name if name in ("backward", "zero_grad", "step") else None


def _backward_names(loop: ast.AST) -> frozenset:
    """The names `name` the loop calls `name.backward(...)` on."""
    return frozenset(sub.func.value.id for sub in ast.walk(loop)
                     if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)
                     and sub.func.attr == "backward" and isinstance(sub.func.value, ast.Name))


def _loop_store_counts(loop: ast.AST) -> dict:
    """How many statements in the loop bind each reference key (assignments, augmented assignments, loop targets)."""
    out: dict = {}
    for n in ast.walk(loop):
        if isinstance(n, ast.Assign):
            targets = n.targets
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
            targets = [n.target]
        elif isinstance(n, (ast.For, ast.AsyncFor)) and n is not loop:
            targets = [n.target]
        else:
            continue
        keys = set()
        for t in targets:
            for sub in ast.walk(t):
                k = key_of(sub) if isinstance(getattr(sub, "ctx", None), ast.Store) else None
                if k is not None:
                    keys.add(k)
        for k in keys:
            out[k] = out.get(k, 0) + 1
    return out


def _params_accumulated_into_self(fn: ast.AST) -> frozenset:
    """Parameters of method `fn` that it adds into an attribute of `self` (`self.sum += val * n`,
    `self.total = self.total + val`, `self.history.append(val)`)."""
    params = [p.arg for p in fn.args.posonlyargs + fn.args.args]
    if not params:
        return frozenset()
    me, rest = params[0], set(params[1:])
    out: set = set()

    def names(node: ast.AST) -> set:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in rest}

    for n in ast.walk(fn):
        if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add) and _self_attr(n.target, me):
            out |= names(n.value)
        elif isinstance(n, ast.Assign) and len(n.targets) == 1 and _self_attr(n.targets[0], me):
            added = _accumulated_operand(n.targets[0], n.value)
            if added is not None:
                out |= names(added)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("append", "extend") \
                and _self_attr(n.func.value, me) and n.args:
            out |= names(n.args[0])
    return frozenset(out)


def _is_static(fn: ast.AST) -> bool:
    return any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in fn.decorator_list)


# Calls on an attribute (`self.x.m(...)`) that leave what gradsight knows about `x` as it was; any other method
# may change it. (`train`/`eval` change only a module's mode: recorded as "x:mode".)
_KEEPING_METHODS = {"parameters", "named_parameters", "state_dict", "children", "modules", "named_modules",
                    "buffers", "named_buffers", "forward", "zero_grad", "step", "to", "cuda", "cpu", "float", "double",
                    "half", "size", "dim", "numel", "item", "tolist", "numpy", "detach", "clone", "get", "keys",
                    "values", "items", "copy", "format", "view", "reshape", "flatten", "unsqueeze", "squeeze",
                    "permute", "transpose", "contiguous", "sum", "mean", "max", "min", "argmax", "argmin", "abs",
                    "exp", "log", "sigmoid", "softmax", "log_softmax", "matmul", "mm", "norm", "pow", "sqrt",
                    "expand", "repeat", "gather", "index_select", "masked_fill", "split", "chunk", "long", "int",
                    "bool", "type", "eq", "ne", "gt", "lt", "ge", "le", "mul", "add", "sub", "div"}


def _plain_class(info: ClassInfo) -> bool:
    """A class without decorators or metaclass whose bases are all such classes of the analysed code."""
    todo, seen = [info], 0
    while todo:
        cur = todo.pop()
        seen += 1
        if seen > 10 or cur.node.decorator_list or cur.node.keywords:
            return False
        for b in cur.bases:
            if isinstance(b, ClassInfo):
                todo.append(b)
            elif b not in ("object", "builtins.object"):
                return False
    return True


def _class_methods(info: ClassInfo) -> dict:
    """name -> FuncVal over the class and its bases (the nearest definition wins)."""
    out: dict = {}
    todo, seen = [info], 0
    while todo and seen < 10:
        cur = todo.pop(0)
        seen += 1
        for name, meth in cur.methods.items():
            out.setdefault(name, meth)
        todo.extend(b for b in cur.bases if isinstance(b, ClassInfo))
    return out


def _own_mutations(fn: ast.AST, methods: dict) -> tuple:
    """For `Interpreter.method_mutations`: (the attributes of `self` that method `fn` itself may rebind or change:
    `self.x = ...`, `self.x += ...`, `self.x[k] = ...`, `self.x.append(...)`, `self.x.add_(...)`, "x:mode" for
    `self.x.eval()`/`.train()`, "*" when it hands `self` to other code or uses `__dict__`; the names of the other
    methods it calls on `self`)."""
    params = fn.args.posonlyargs + fn.args.args
    if not params or _is_static(fn):
        return frozenset(), ()
    me = params[0].arg
    out: set = set()
    calls: list = []
    for n in ast.walk(fn):
        if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del)):
            attr = _self_attr(n, me)
            if attr:
                out.add(attr)
        elif isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Attribute):
                if isinstance(f.value, ast.Name) and f.value.id == me:
                    if f.attr in methods:
                        calls.append(f.attr)  # self.other_method(...); else a callable attribute (a module)
                else:
                    attr = _self_attr(f.value, me)
                    if attr and f.attr in ("train", "eval"):
                        out.add(f"{attr}:mode")
                    elif attr and (f.attr not in _KEEPING_METHODS or f.attr.endswith("_")):
                        out.add(attr)
            if any(isinstance(a, ast.Name) and a.id == me for a in list(n.args) + [k.value for k in n.keywords]):
                out.add("*")  # `self` handed to other code
        elif isinstance(n, ast.Attribute) and n.attr == "__dict__" and isinstance(n.value, ast.Name) \
                and n.value.id == me:
            out.add("*")
        elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and isinstance(
                getattr(n, "value", None), ast.Name) and n.value.id == me:
            out.add("*")  # aliased: `obj = self`
    return frozenset(out), tuple(calls)


def _self_attr(node: ast.AST, me: str) -> Optional[str]:
    """`x` for `self.x`, `self.x.y`, `self.x[k]`, `self.x.y[k].z` (with `me` the name of `self`); else None."""
    attr = None
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute):
            attr = node.attr
        node = node.value
    return attr if isinstance(node, ast.Name) and node.id == me else None


def _loop_effects(loop: ast.AST) -> tuple:
    """For `Interpreter.deep_loop`: (every name the loop mentions, the keys it assigns to, whether it calls
    `set_grad_enabled`, which changes the grad mode past the statement)."""
    names, stores, sets_mode = set(), set(), False
    for n in ast.walk(loop):
        if isinstance(n, ast.Name):
            names.add(n.id)
            if isinstance(n.ctx, (ast.Store, ast.Del)):
                stores.add(n.id)
        elif isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del)):
            k = key_of(n)
            if k is not None:
                stores.add(k)
        elif isinstance(n, ast.Call):
            f = n.func
            if (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) == "set_grad_enabled":
                sets_mode = True
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
            stores.add(n.name)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
            stores.add(n.name)
        elif isinstance(n, ast.alias):
            name = (n.asname or n.name).split(".", 1)[0]
            names.add(name)
            stores.add(name)
    return frozenset(names), frozenset(stores), sets_mode


def _holds_tensor(val: Value) -> bool:
    if isinstance(val, TensorVal):
        return True
    if isinstance(val, SeqVal):
        return any(_holds_tensor(v) for v in val.items)
    return False


def _grad_read_keys(node: ast.AST) -> frozenset:
    """The reference keys `k` whose `k.grad` appears under `node`."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and n.attr == "grad":
            k = key_of(n.value)
            if k is not None:
                out.add(k)
    return frozenset(out)


def _root_name(node: ast.AST) -> Optional[str]:
    """`stats` for `stats[k]`, `self` for `self.history["loss"]`; None when the chain does not start at a name."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _accumulated_operand(target: ast.AST, value: ast.AST) -> Optional[ast.AST]:
    """For `t = t + x` / `t = x + t` / `stats[k] = stats.get(k, 0) + x`: the added operand `x`, else None."""
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
        return None
    key = key_of(target)
    container = key_of(target.value) if isinstance(target, ast.Subscript) else None

    def reads_target(node: ast.AST) -> bool:
        if key is not None and key_of(node) == key:
            return True
        if container is None:
            return False
        if isinstance(node, ast.Subscript) and key_of(node.value) == container:
            return True
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and key_of(node.func.value) == container)

    def scaled_target(node: ast.AST) -> bool:
        # `0.95 * trend`, `trend * decay`: a running average (EMA) keeps the old value, scaled.
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
            return (reads_target(node.left) and not any(reads_target(n) for n in ast.walk(node.right))) or (
                isinstance(node.op, ast.Mult) and reads_target(node.right)
                and not any(reads_target(n) for n in ast.walk(node.left)))
        return reads_target(node)

    if scaled_target(value.left) and not any(reads_target(n) for n in ast.walk(value.right)):
        return value.right
    if scaled_target(value.right) and not any(reads_target(n) for n in ast.walk(value.left)):
        return value.left
    return None


def _literal_shape(node: ast.AST) -> Optional[tuple]:
    """The shape of `torch.tensor(<literal>)`: `1.0` -> (), `[1.0]` -> (1,), `[[1, 2], [3, 4]]` -> (2, 2)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return ()
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _literal_shape(node.operand)
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        inner = [_literal_shape(e) for e in node.elts]
        if inner[0] is None or any(i != inner[0] for i in inner):
            return None
        return (len(node.elts),) + inner[0]
    return None


def _literal_dtype(node: ast.AST) -> Tri:
    """Whether `torch.tensor(<literal>)` has an integer dtype: YES when every element is an int or bool constant,
    NO when one is a float or the literal is empty (torch gives an empty literal the default float dtype)."""
    elems: list = []

    def walk(n: ast.AST) -> bool:
        if isinstance(n, (ast.List, ast.Tuple)):
            return all(walk(e) for e in n.elts)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            return walk(n.operand)
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float, bool)):
            elems.append(n.value)
            return True
        return False

    if not walk(node):
        return Tri.NO if any(isinstance(c, ast.Constant) and isinstance(c.value, float) for c in ast.walk(node)) \
            else Tri.MAYBE
    if not elems or any(isinstance(v, float) for v in elems):
        return Tri.NO
    return Tri.YES


def _use_kind(node: ast.AST, key: str) -> Optional[str]:
    """For `Interpreter.next_use_after`: "grad" for a read of `key.grad`, "backward" for a backward call, "reset" for a
    statement that rebinds `key` or makes it require grad again, else None."""
    if isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.ctx, ast.Load) \
            and key_of(node.value) == key:
        return "grad"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "backward" or (node.func.attr == "grad" and key_of(node.func.value) in (
                "torch.autograd", "autograd")):
            return "backward"
        if node.func.attr == "requires_grad_" and key_of(node.func.value) == key:
            return "reset"
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            for sub in ast.walk(t):
                if key_of(sub) == key and isinstance(getattr(sub, "ctx", None), ast.Store):
                    return "reset"
                if isinstance(sub, ast.Attribute) and sub.attr == "requires_grad" and key_of(sub.value) == key:
                    return "reset"
    return None


def _cap(pcut: frozenset) -> frozenset:
    if len(pcut) <= MAX_PCUT:
        return pcut
    return frozenset(sorted(pcut, key=lambda e: (repr(e[1]), repr(e[0])))[:MAX_PCUT])


def _pcut_of(vals) -> frozenset:
    out: frozenset = frozenset()
    for v in vals:
        if isinstance(v, (TensorVal, PyVal)) and v.pcut:
            out |= v.pcut
    return _cap(out)


def _fsite(f: Fact) -> tuple:
    return (f.path, f.line, f.column)


def _msite(mod: Value) -> Optional[tuple]:
    """A module's identity for `TensorVal.psaved`: where it was created."""
    origin = getattr(mod, "origin", None)
    return _fsite(origin) if isinstance(mod, ModuleVal) and origin is not None else None


def _saved_input_indices(entry: dict, args) -> list:
    """Indices of the arguments an op saves for backward, given which arguments require grad."""
    rgs = [(v.rg if isinstance(v, TensorVal) else Tri.NO) for _, v in args]
    out = []
    for idx_s, triggers in (entry.get("saves_inputs") or {}).items():
        if not idx_s.isdigit() or int(idx_s) >= len(args) or not isinstance(args[int(idx_s)][1], TensorVal):
            continue
        if triggers:
            ok = any(isinstance(t, int) and t < len(rgs) and rgs[t] is Tri.YES for t in triggers)
        else:
            ok = any(r is Tri.YES for r in rgs)
        if ok:
            out.append(int(idx_s))
    return out


def map_tensors(value: Value, fn) -> Value:
    if isinstance(value, TensorVal):
        return fn(value)
    if isinstance(value, SeqVal):
        items = tuple(map_tensors(v, fn) for v in value.items)
        return value if items == value.items else SeqVal(items)
    return value


def flat_tensors(args) -> list:
    """(node, TensorVal) pairs from call arguments, looking inside tuples such as an LSTM's `(h, c)`."""
    out = []
    for n, v in args:
        if isinstance(v, TensorVal):
            out.append((n, v))
        elif isinstance(v, SeqVal):
            elts = n.elts if isinstance(n, (ast.Tuple, ast.List)) and len(n.elts) == len(v.items) else [n] * len(v.items)
            out.extend(flat_tensors(list(zip(elts, v.items))))
    return out


def with_carried(value: Value, carried: Fact) -> Value:
    if isinstance(value, TensorVal) and value.freed is not None:
        return value.with_(carried=carried)
    if isinstance(value, SeqVal):
        return SeqVal(tuple(with_carried(v, carried) for v in value.items))
    return value


def self_view(value: TensorVal) -> TensorVal:
    return value.with_(saved=None, shape=None)


def widen(entry: State, head: State) -> State:
    out = head.copy()
    for key, val in head.env.items():
        if entry.env.get(key) != val:
            out.env[key] = UNKNOWN
    return out


def _broadcast(shapes: list[tuple]) -> Optional[tuple]:
    if any("?" in s for s in shapes):
        return ("?",) if all(len(s) for s in shapes) else None
    n = max(len(s) for s in shapes)
    out = []
    for i in range(1, n + 1):
        dims = {s[-i] for s in shapes if len(s) >= i and s[-i] != 1}
        if len(dims) > 1:
            return None
        out.append(dims.pop() if dims else 1)
    return tuple(reversed(out))


def _pretty(qual: str) -> str:
    short = qual.rsplit(".", 1)[-1]
    if qual.startswith("torch.Tensor."):
        sym = {"__mul__": "*", "__rmul__": "*", "__matmul__": "@", "__truediv__": "/", "__rtruediv__": "/",
               "__pow__": "**", "__getitem__": "indexing"}.get(short)
        return sym or f".{short}()"
    if qual.startswith("torch.nn.functional."):
        return f"F.{short}"
    return qual


def describe(value: TensorVal) -> tuple[str, str, list[Fact]]:
    """(one-line summary, short inlay label, chain of facts) for a tensor value."""
    if value.freed is not None and value.rg is not Tri.NO:
        chain = value.freed.chain()
        word = "" if value.freed_sure else "maybe "
        return (f"{word}graph already freed by backward at line {value.freed.line}; another backward through it raises",
                f"{word}graph freed (L{value.freed.line})", chain)
    if value.rg is Tri.NO:
        if value.nograd is not None:
            chain = value.nograd.chain()
            root = chain[0]
            return (f"no gradient: {value.nograd.text} (line {value.nograd.line})"
                    + (f"; cause: {root.text} (line {root.line})" if root is not value.nograd else ""),
                    "no grad", chain)
        return "no gradient: does not require grad", "no grad", []
    if value.rg is Tri.MAYBE:
        return "may or may not require grad (depends on values gradsight cannot see)", "grad? (maybe)", []
    parts = ["requires grad", "leaf" if value.leaf is Tri.YES else ("non-leaf" if value.leaf is Tri.NO else "maybe leaf")]
    if value.param:
        parts.append("parameter")
    if value.origin is not None:
        parts.append(f"{value.origin.text} (line {value.origin.line})")
    chain = value.origin.chain() if value.origin else []
    label = "grad · " + ("leaf" if value.leaf is Tri.YES else "non-leaf")
    if value.saved is not None:
        parts.append(f"{value.saved.text} at line {value.saved.line}")
        label += " · saved"
        chain = chain + [value.saved]
    return " · ".join(parts), label, chain


FUNC_GRAD_TRANSFORMS = {"torch.func.grad", "torch.func.grad_and_value", "functorch.grad", "functorch.grad_and_value"}
REQUIRES_GRAD_SPELLINGS = {"requires_grad", "require_grad", "requires_grads", "require_grads", "requires_gradient",
                           "requiresgrad", "required_grad", "requires_grad_"}
BUILTINS = {"float", "int", "bool", "complex", "list", "tuple", "max", "min", "abs", "sum", "round", "len",
            "sorted", "range", "enumerate", "zip", "str", "repr", "print", "isinstance", "pow", "divmod", "map",
            "filter", "any", "all", "reversed", "dict", "set", "format", "hash", "id", "type", "super",
            "staticmethod", "classmethod", "property"}
MODULE_METHODS = {"parameters", "to", "cuda", "cpu", "train", "eval", "zero_grad", "forward", "requires_grad_"}
