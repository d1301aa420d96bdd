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

The interpreter is one class assembled from mixins, one per seam: statements and control flow
(interp_stmts.py), expressions (interp_exprs.py), calls (interp_calls.py), differentiable ops and the heap
(interp_ops.py), modules, objects and user functions (interp_objects.py); helpers are in interp_util.py. The heap
model (tensor storage shared by views and aliases, containers, object state across method calls) and the evidence
levels are described in docs/heap.md.

Blind spots (kept deliberately; each would cost precision elsewhere):
- Storage identity is per allocation site: a tensor made by a statement that runs again (a loop) is a new storage
  for references bound by that statement; an alias made through a helper in another file is not followed.
- Containers: tensors stored in dicts or lists of unknown shape are UNKNOWN when read back, except comprehensions
  (every element like the first) and constant keys (`stats["loss"]`).
- Library models (`torchvision.models.resnet18()`) are UNKNOWN: their results may or may not require grad.
  A loss that a loop calls `.backward()` on is taken to require grad (evidence from use).
- Plain (non-`nn.Module`) classes such as a `Trainer` are modelled (`ObjectVal`) only when all their bases are
  plain classes of the file and they have no decorators. What a method leaves in `self.x` comes back to the
  caller as `recv.x` (and goes in on the next call) when the receiver is a reference (`trainer.step()`); an
  instance handed to other code is UNKNOWN afterwards.
- Facts found while running code of another workspace file shape values only: that file's findings come from its
  own analysis, where the caller's arguments are unknown.
- Some checks read the syntax around a statement instead of the state: what follows a rebinding
  `w = w - lr * w.grad`, and `backward()` / `zero_grad()` / `step()` order within one block of statements.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, Optional

from .api import StateFact
from .astwalk import walk
from .events import BackwardEvent, Event, FreedElsewhereEvent, InplaceEvent
from .interp_calls import CallsMixin
from .interp_dists import DistsMixin
from .interp_exprs import ExpressionsMixin
from .interp_loops import LoopsMixin
from .interp_objects import ObjectsMixin
from .interp_ops import OpsMixin
from .interp_stmts import StatementsMixin
from .speculate import SpeculateMixin
from .interp_util import (MAX_CALL_DEPTH, MAX_FACTS, MAX_LOOP_ITERS, MAX_LOOP_NESTING, MAX_PCUT, LoopCtx, ModuleScope,
                          _cap, _sets_grads, const_bool, describe, key_of, kwarg, remember)
from .state import State
from .values import CREATED_WITHOUT_GRAD, ONLY_FROM_NO_GRAD, Fact, NameOf, ParentOf, TensorVal, Trained, Tri, Value


# Re-exported: the driver and the tests import these from here.
__all__ = ["MAX_CALL_DEPTH", "MAX_FACTS", "MAX_LOOP_ITERS", "MAX_LOOP_NESTING", "MAX_PCUT", "Interpreter", "LoopCtx",
           "ModuleScope", "UnitState", "const_bool", "describe", "key_of", "kwarg"]


@dataclass
class UnitState:
    """What one unit's run (module-level code, or one definition analysed on its own) produces and what it may
    reuse only within itself. The driver gives each unit a fresh one (`units._isolated`), so a unit's results
    never depend on what ran before it, and swaps this one object back afterwards."""

    facts: dict = field(default_factory=dict)  # span -> StateFact, for hovers and inlay hints
    # Whole-file bookkeeping for "requires_grad that never flows" (GS202).
    grad_leaves: dict = field(default_factory=dict)
    cut_sources: dict = field(default_factory=dict)
    reached_sources: set = field(default_factory=set)
    backward_seen: bool = False
    memo: dict = field(default_factory=dict)  # call summaries and loop fixpoints
    init_cache: dict = field(default_factory=dict)
    optimized_modules: dict = field(default_factory=dict)  # module key -> where an optimizer took its parameters()
    track: Optional[set] = None  # functions of the analysed file this unit ran (None: not recorded)


def _unit_field(name: str) -> property:
    """An interpreter attribute that lives in its current `UnitState`."""
    return property(lambda self: getattr(self.unit, name), lambda self, value: setattr(self.unit, name, value),
                    doc=f"`self.unit.{name}` (see `UnitState`)")


class Interpreter(StatementsMixin, LoopsMixin, ExpressionsMixin, CallsMixin, OpsMixin, ObjectsMixin, DistsMixin,
                  SpeculateMixin):
    facts = _unit_field("facts")
    grad_leaves = _unit_field("grad_leaves")
    cut_sources = _unit_field("cut_sources")
    reached_sources = _unit_field("reached_sources")
    backward_seen = _unit_field("backward_seen")
    memo = _unit_field("memo")
    init_cache = _unit_field("init_cache")
    optimized_modules = _unit_field("optimized_modules")
    track = _unit_field("track")

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
        self.unit = UnitState()  # facts, GS202 bookkeeping, memos, optimizer bookkeeping: per unit
        # Module-level state while module-level code calls a function: globals as of the call.
        self.globals_state: Optional[State] = None
        self.globals_scope: Optional[ModuleScope] = None
        # Facts about the syntax under a node (does it call backward, which keys' `.grad` it reads), computed once
        # per analysis: (kind, id(node)) -> (node, result). The node is kept so a reused id can never match; nothing
        # is stored on the nodes themselves (trees are shared between versions of a file).
        self.discarded_names: dict = {}  # id(function) -> its `_survey_discarded` (durable across analyses)
        self.syntax_memo: dict = {}
        # (id(node), kind) -> (node, source, path, fact): `expr_fact`'s facts without a parent, per analysis.
        self.fact_memo: dict = {}
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
        # Per call frame: (storage, op, op site) of every tensor an op saved during the call; after it returns, the
        # caller's references to those storages count as saved (`Conv1d` inside `self.postnet(mel)` saves `mel`).
        self.call_saves: list = []
        self.memo_saves: dict = {}
        # Per call frame: (storage, value written) of every tensor without a graph that an in-place write gave one
        # during the call (`call_writes.py`); after it returns, the caller's references to it have the graph.
        self.call_writes: list = []
        self.memo_writes: dict = {}
        # A function analysed on its own, run once per value of a bool flag parameter (`run_function`): the
        # (function node, parameter, truth) of the run in progress, and each function's flag (or None).
        self.forced_flag: Optional[tuple] = None
        # (class node, method name) while an inherited method runs on an instance of this file's class (`inherited.py`)
        self.inherited: Optional[tuple] = None
        self.flag_params: dict = {}
        # Per function frame: its in-place writes on saved tensors as (event, line in the frame's body), held until
        # it ends (`settle_inplace`), and its flags: where in its body backwards ran (`backward_at`), whether a
        # graph went to code gradsight cannot see (`escape`), and the line of the call that made it (`called_at`).
        self.pending_inplace: list = []
        # Per function frame: accumulations in loops without backward (and states fed back into the next
        # iteration), held until the function ends (`settle_dropped`): whether anything can ever backward them is
        # known only then.
        self.pending_dropped: list = []
        self.frame_flags: list = []
        # (id of the function frame or None, reference key) -> where an optimizer took the parameters of an object
        # gradsight cannot see: calling it in grad mode gives an output with a graph (evidence from use).
        self.evidence_models: dict = {}
        self.libinfer = None  # optional library inference the driver may install (see `library_value`)
        # Answers about unchanged top-level statements kept across analyses (`interp_util._module_mutations`): an
        # engine-owned bounded `OrderedDict` the driver may install (`units.UnitCache.stmt_memo`).
        self.stmt_memo = None
        self.stmt_digest = None  # the digest of a top-level statement's text in the analysed file (`Digests.node`)
        # id(ast.Starred) -> (node, value of the starred sequence), for callees that unpack it.
        self.starred_values: dict = {}
        # id(ast.Call) -> (node, the list of pairs) for `OrderedDict(pairs)`, for `nn.Sequential(OrderedDict(...))`.
        self.pair_lists: dict = {}
        # id(ast.Return) -> the join of the states in which that `return` ran (None: not yet), for the returns the
        # driver asks about: what a factory leaves to the nested function it returns (`units.run_closures`).
        self.capture: Optional[dict] = None
        # (id of the function frame or 0, `_test_key`) -> the truth `split_tail` assumes for that `if` test.
        self.assumed: dict = {}
        # The open speculative reporting rounds of loops, innermost last (`speculate.py`).
        self.spec: list = []

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

    def durable(self, kind: str, node: ast.AST, compute: Callable[[ast.AST], object]):
        """`syntax(kind, node, compute)`, also kept across analyses in the engine's `stmt_memo` for the same node
        object: nodes of top-level statements an edit did not touch are shared by the next version, so a callee's
        answer is not recomputed on every keystroke."""
        memo = self.stmt_memo
        if memo is None:
            return self.syntax(kind, node, compute)
        key = (kind, id(node))
        hit = memo.get(key)
        if hit is not None and hit[0] is node:
            return hit[1]
        value = self.syntax(kind, node, compute)
        remember(memo, key, (node, value))
        return value

    def by_text(self, kind: str, func, compute: Callable[[ast.AST], object]):
        """`durable(kind, func.node, compute)` for a function `compute` reads only the text of, also kept across
        analyses for a re-parsed copy with the same text: a method of the analysed file (`home`) is keyed by the
        digest of its text (`stmt_digest`; a class an edit is typing in is parsed again on every keystroke, its other
        methods unchanged). Functions of other files are keyed by their node."""
        node, memo, digest = func.node, self.stmt_memo, self.stmt_digest
        if memo is None or digest is None or func.module is None or func.module is not getattr(self, "home", None):
            return self.durable(kind, node, compute)
        key = (kind, digest(node))
        hit = memo.get(key)
        if hit is not None:
            return hit
        value = compute(node)
        remember(memo, key, value)
        return value

    def nodes(self, node: ast.AST) -> list:
        """`astwalk.walk(node)` memoised per analysis, for the syntax questions asked of one loop (what it binds,
        mutates, backwards, samples): one walk instead of one each. Callers only read the list."""
        return self.syntax("walk", node, self.src.walk)

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
        # Events inside another workspace file's code only shape values here. What this file's code makes that
        # code do wrong is reported by the rules from this file's events, in that file (`Reporter.add_in`).
        if self.reporting and self.scope.path == self.root_path:
            if self.pending_inplace and isinstance(event, InplaceEvent) and event.target.saved is not None:
                # An in-place write on a saved tensor inside a function: whether any backward can run through
                # that graph is known when the function ends (`run_function`, `graph_outlives`).
                self.pending_inplace[-1].append((event, getattr(event.node, "lineno", 0)))
                return
            self.deliver(event)
        elif self.reporting and self.inherited is not None and type(event) is BackwardEvent:
            # An inherited method's backward through a graph this file's code freed (`inherited.py`).
            t = event.target
            if t.freed is not None and t.freed.path is None and t.carried is None and t.rg is not Tri.NO:
                self.deliver(FreedElsewhereEvent(self.inherited[0], t, self.expr_fact(event.call), self.inherited[1]))

    def fact(self, node: ast.AST, kind: str, parent: Optional[Fact] = None, **args) -> Fact:
        """A fact of `kind` (a key of `words.FACT_WORDS`) at `node`, with its structured arguments."""
        line, col, _, _ = self.src.span(node)
        return Fact(line, col, kind, tuple(args.items()), parent,
                    None if self.scope.path == self.root_path else self.scope.path)

    def expr_fact(self, node: ast.AST, kind: str = "expr", parent: Optional[Fact] = None) -> Fact:
        """A fact about the expression `node` as written (`expr`: its source text, shortened). Without a parent it
        is a function of the node, the kind and the file being run, so it is made once per analysis (loop rounds
        and calls evaluate the same expressions again; facts are immutable values, sharing one is invisible)."""
        if parent is not None:
            return self.fact(node, kind, parent, expr=self.seg(node))
        key = (id(node), kind)
        hit = self.fact_memo.get(key)
        if hit is not None and hit[0] is node and hit[1] is self.src and hit[2] == self.scope.path:
            return hit[3]
        out = self.fact(node, kind, None, expr=self.seg(node))
        self.fact_memo[key] = (node, self.src, self.scope.path, out)
        return out

    root_path: str = ""
    # > 0 while evaluating a comparison's operands: the graph they build dies with the expression, so what its
    # ops save for backward is not recorded (`expr_Compare`).
    discard_depth: int = 0
    # (call node, positions) while evaluating a call whose result the statement throws away: `f(x)` as a
    # statement, `out = f(x)` or `a, b = f(x)` with names the function never reads ("all", or the indices of the
    # unread names). `prune_dead_saves` leaves those parts out of what keeps the call's graph alive.
    discarded_result: Optional[tuple] = None

    # Which modules an optimizer trains, which module ran which, and their names are kept in
    # `optimized_modules` beside the optimizers' owners, under typed keys (`Trained`, `ParentOf`, `NameOf`; an
    # owner is a reference key, a `str`): the driver scopes that table per analysed unit (module-level code, then
    # each function with module-level code's entries) and caches it with them.
    def note_trained(self, sites) -> None:
        for site in sites:
            self.optimized_modules.setdefault(Trained(site), None)

    def note_parents(self, subs, parent) -> None:
        for sub in subs:
            self.optimized_modules.setdefault(ParentOf(sub, parent), parent)

    def module_name(self, site) -> Optional[str]:
        return self.optimized_modules.get(NameOf(site))

    def is_trained(self, site) -> bool:
        seen, todo = set(), [site]
        while todo and len(seen) < 64:
            s = todo.pop()
            if Trained(s) in self.optimized_modules:
                return True
            if s in seen:
                continue
            seen.add(s)
            todo.extend(k.parent for k in self.optimized_modules if type(k) is ParentOf and k.sub == s)
        return False

    def cut_params(self, val: TensorVal, node: ast.AST) -> frozenset:
        """The `pcut` of what a cut (`.detach()`, `.data`, `.numpy()`, ...) at `node` of `val` returns."""
        out = val.pcut
        if val.rg is not Tri.NO and val.psrc and len(out) < MAX_PCUT:
            fact = self.expr_fact(node)
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
        if old is not None and not (value.rg is not Tri.MAYBE and old.uncertain):
            return
        auto_summary, auto_label, chain = describe(value)
        if self.spec:
            self.note_fact(span, old)
        self.facts[span] = StateFact(*span, name=self.seg(node), summary=summary or auto_summary,
                                     label=label or auto_label,
                                     chain=tuple((f.line, f.text) for f in chain),
                                     transition=transition or (
                                         getattr(getattr(self, "current_stmt", None), "value", None) is node
                                         and self._is_transition(value, span[0])),
                                     uncertain=value.rg is Tri.MAYBE)

    @staticmethod
    def _is_transition(value: TensorVal, line: int) -> bool:
        if value.gained and value.origin is not None and value.origin.line == line:
            return True
        for f in (value.nograd, value.saved, value.freed):
            if f is None or f.line != line or f.path is not None:
                continue
            if f.kind in (CREATED_WITHOUT_GRAD, ONLY_FROM_NO_GRAD):
                continue
            return True
        return value.rg is Tri.YES and value.leaf is Tri.YES and value.origin is not None and value.origin.line == line
