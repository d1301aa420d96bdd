"""Loops: `for`/`while` iterated to a fixpoint (memoised per unit, widened past a bound, run once from a widened
state when nested too deep), the reporting pass over the body (folded into the round that confirms the fixpoint:
`speculate.py`), `break`/`continue`, freeze loops, and the names a loop-invariant test binds (`iteration_start`).
Part of `Interpreter` (see interp.py)."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Optional

from .astwalk import children, walk
from .events import AccumulateEvent, LoopEvent
from .guarded_reads import _may_guard
from .interp_util import (LoopCtx, MAX_LOOP_ITERS, MAX_LOOP_NESTING, _has_backward, _holds_tensor, _loop_effects,
                          const_bool, key_of, widen, _guarded_binds, _invariant_test, _loop_changes,
                          _module_mutations, _backward_names, _loop_store_counts, _params_accumulated_into_self,
                          _name_binds, _remade_before, _root_name)
from .paths import _assumed_key, _first_iteration_test, _last_iteration_test
from .state import State
from .values import UNKNOWN, BoundMethod, Fact, ModuleVal, ObjectVal, PyVal, SeqVal, TensorVal, Tri, join_all


class LoopsMixin:
    """Part of `Interpreter` (see interp.py)."""

    # Whether a loop on the reporting pass folds that pass into its confirming round (`speculate.py`); the tests
    # turn it off to compare.
    speculative_reporting = True

    def new_iteration(self, node, head: State, bind) -> State:
        """The state at the top of one iteration of `node`: a copy of `head` with the loop target bound
        (`bind`) and the names no iteration can carry forgotten (`iteration_start`)."""
        s = head.copy()
        bind(s)
        self.iteration_start(node, s)
        return s

    def iteration_start(self, node, s: State) -> None:
        """At the top of an iteration of `node`: forget the names whose value from an earlier iteration no run can
        observe. Such a name is bound in this loop only in branches of tests no statement of the loop can change
        (`if self.objective == "H":`, `if loss_fn == "cw":`, nothing storing them outside `__init__`), each reached
        from the body's top level through such tests only, and read only in later top-level statements; and it was
        unbound when this loop, or an enclosing one over which the tests are invariant too and which binds it only
        there, began. Every iteration then takes the branches the first one took: where none binds it, the read
        raises NameError in the first iteration already, never reading an old value (Beta-VAE's `if/elif` without
        `else` binding the loss, a PGD attack's two `if`s: no second backward of an earlier loss)."""
        def guarded(n) -> dict:
            if not _may_guard(n):
                return {}
            return _guarded_binds(n, self.syntax("loop_changes", n, lambda m: _loop_changes(m, self.nodes(m))),
                                  self.module_mutations(), self.nodes)

        names = self.syntax("guarded_binds", node, guarded)
        if not names:
            return
        mutations = self.module_mutations()
        changes = self.syntax("loop_changes", node, lambda n: _loop_changes(n, self.nodes(n)))
        for name in names:
            if s.get(name) is None:
                continue
            for ctx in self.loops:
                if name in ctx.entry_keys:
                    continue
                if ctx.node is not node:
                    outer = self.syntax("loop_changes", ctx.node, lambda n: _loop_changes(n, self.nodes(n)))
                    if outer[0].get(name) != changes[0].get(name) or not all(
                            self.syntax(("invariant", id(ctx.node)), t, lambda t: _invariant_test(t, outer, mutations))
                            for t in names[name]):
                        continue
                s.forget(name)
                break

    def module_mutations(self) -> tuple:
        """`_module_mutations` of the file the running code is in, memoised per analysis and, per top-level
        statement, across analyses (`stmt_memo`; keyed by the statement's text in the analysed file)."""
        return self.syntax("module_mutations", self.scope.tree,
                           lambda tree: _module_mutations(tree, self.stmt_memo, self.stmt_digest
                                                          if self.scope is getattr(self, "home", None) else None))

    def stmt_For(self, stmt: ast.For, state: State) -> State:
        it = self.eval(stmt.iter, state)
        elem = self.element_of(it)
        view = stmt.iter.func.attr if isinstance(stmt.iter, ast.Call) and isinstance(stmt.iter.func, ast.Attribute) \
            and stmt.iter.func.attr in ("values", "items") and not stmt.iter.args and not stmt.iter.keywords else None
        dict_key = key_of(stmt.iter.func.value) if view is not None else None
        entries = self.dict_entries(dict_key, state) if dict_key is not None and it is UNKNOWN else []
        if entries:
            # `for loss in losses.values()` over a dict whose entries are tracked: the element is re-read from the
            # state each round (a backward in the body frees the graphs the entries hold), and a dict with one
            # entry runs the body once.
            def bind_entry(s: State) -> None:
                now = self.dict_entries(dict_key, s) or entries
                cur = join_all(now)
                self.assign(stmt.target, SeqVal((PyVal(), cur)) if view == "items" else cur, s, stmt)

            if len(entries) == 1:
                return self.loop_once(stmt, state, bind_entry, stmt.body, stmt.orelse)
            return self.loop(stmt, state, bind_entry, stmt.body, stmt.orelse)
        # `for loss in [loss_a, loss_b]:` iterates over references whose values the body changes (a backward
        # frees their graphs): read them again on each round instead of once before the loop.
        reread = isinstance(stmt.iter, (ast.List, ast.Tuple)) and isinstance(it, SeqVal) \
            and len(it.items) == len(stmt.iter.elts) and all(key_of(e) is not None for e in stmt.iter.elts)

        def bind(s: State) -> None:
            cur = elem
            if reread:
                cur = self.element_of(SeqVal(tuple(s.env.get(key_of(e), v) for e, v in zip(stmt.iter.elts, it.items))))
            self.assign(stmt.target, cur, s, stmt)

        if isinstance(stmt.iter, (ast.List, ast.Tuple)) and len(stmt.iter.elts) == 1 \
                and not isinstance(stmt.iter.elts[0], ast.Starred) or self.range_count(stmt) == 1:
            # `for loss in [loss_a]:` (or `for i in range(1):`) runs its body exactly once: no fixpoint (a second
            # round would see what the first left, e.g. the graph its backward freed, and claim a second backward
            # that never happens).
            return self.loop_once(stmt, state, bind, stmt.body, stmt.orelse)
        out = self.loop(stmt, state, bind, stmt.body, stmt.orelse)
        self.freeze_after_loop(stmt, out)
        return out

    stmt_AsyncFor = stmt_For

    def freeze_after_loop(self, stmt: ast.For, state: State) -> None:
        """After `for p in m.parameters(): p.requires_grad = False`, `m` is frozen as by `m.requires_grad_(False)`:
        its `.weight` is no parameter that requires grad (solo-learn's DeepClusterV2 copies normalised prototypes
        into it in `__init__`: a GS302 error before) and its output has the input's grad state. A write under a
        condition, or of a value that is not a constant, leaves whether it still requires grad open. Unfreezing
        this way, or freezing part of it, opens its parents (`thaw_above`)."""
        found = self.syntax("freeze_loop", stmt, _freeze_loop)
        if found is None:
            return
        owner, flag, certain, expr = found
        if expr is not None:
            val = self.eval(expr, state)
            if isinstance(val, PyVal) and val.boolean and val.truth is not None:
                flag, certain = val.truth, True
        if flag is not False:
            self.thaw_above(owner, state)
        mod = state.get(owner)
        if not isinstance(mod, ModuleVal) or mod.alts:
            return
        has = Tri.of(flag) if certain else mod.has_params.join(Tri.of(flag))
        if has is not mod.has_params:
            # Not `state.set`: what is known of its attributes (`m.fc`, `self.encoder`) stays.
            state.env[owner] = replace(mod, has_params=has)
        if flag is False:
            # `parameters()` covers the submodules: those known by name (`self.blocks`, `m.fc`) are frozen with it
            # (pytorch-fid's InceptionV3 freezes itself at the end of `__init__`, then runs `self.blocks`).
            for key in [k for k in state.env if k[len(owner):len(owner) + 1] in (".", "[") and k.startswith(owner)]:
                sub = state.env[key]
                if isinstance(sub, ModuleVal) and not sub.alts and sub.has_params is not Tri.NO:
                    state.env[key] = replace(sub, has_params=Tri.NO if certain else sub.has_params.join(Tri.NO))

    def thaw_above(self, key: str, state: State) -> None:
        """Something below `key`'s modules may require grad again (`model.fc.requires_grad_(True)`, a new
        `model.fc = nn.Linear(...)`, `model.weight.requires_grad = True`): a frozen module above it is frozen no
        more, or no longer surely (a frozen backbone with a trainable head gives outputs that require grad)."""
        cuts = [i for i, c in enumerate(key) if c in ".["]
        for i in cuts:
            prefix = key[:i]
            mod = state.env.get(prefix)
            if isinstance(mod, ModuleVal) and mod.has_params is Tri.NO:
                state.env[prefix] = replace(mod, has_params=Tri.MAYBE)

    def loop_once(self, node, state: State, bind, body, orelse) -> State:
        """A loop whose body runs exactly once, from the entry state: like a block, with the loop context that
        `break`/`continue`, accumulation checks and the loop rules read."""
        ctx = LoopCtx(node, frozenset(state.env), self.syntax("has_backward", node, lambda n: _has_backward(n, self.nodes(n))))
        self.loops.append(ctx)
        try:
            if self.reporting:
                self.emit(LoopEvent(node, self.stack[-1] if self.stack else None,
                                    self.loop_receivers(node, state)))
            s = self.new_iteration(node, state, bind)
            s = self.exec_block(body, s)
            for c in ctx.continues:
                s = s.join(c)
            for last in ctx.lasts:
                s = s.join(last)
        finally:
            self.loops.pop()
        if orelse and not s.dead:
            s = self.exec_block(orelse, s)
        for b in ctx.breaks:
            s = s.join(b)
        return s

    def split_loop_test(self, stmts: list, i: int, state: State) -> Optional[State]:
        """At `stmts[i]`, an `if` of the innermost loop's body: the rest of the body run on both sides of a test that
        tells the last iteration (`split_last`) or, as the body's first statement, the first one (`split_first`)
        from the others; None for any other test (or one already assumed)."""
        ctx, stmt = self.loops[-1], stmts[i]
        last = self.syntax("last_iteration", stmt, lambda s: _last_iteration_test(ctx.node, s.test))
        first = self.syntax("first_iteration", stmt, lambda s: _first_iteration_test(ctx.node, s.test)) \
            if last is None and i == 0 and ctx.first is not None else None
        if last is None and first is None:
            return None
        key = _assumed_key(stmt.test)[0]
        if (self.frame_id(), key) in self.assumed:
            return None
        if last is not None:
            return self.split_last(stmts, i, key, last, state)
        return self.split_first(stmts, key, first, state)

    def split_last(self, stmts: list[ast.stmt], i: int, key: str, last: bool, state: State) -> State:
        """Runs the rest of a loop body from `stmts[i]` (an `if` telling the last iteration from the others,
        `_last_iteration_test`) twice: once as the last iteration, whose end state leaves the loop
        (`LoopCtx.lasts`), and once as any other, whose end state is returned and reaches the next iteration.
        `backward(retain_graph=True)` on every iteration but the last, which frees the graph, frees nothing a later
        iteration reads."""
        slot = (self.frame_id(), key)
        ends = []
        for truth in (last, not last):
            self.assumed[slot] = truth
            ends.append(self.run_rest(stmts, i, state.copy()))
        del self.assumed[slot]
        if not ends[0].dead:
            self.loops[-1].lasts.append(ends[0])
        return ends[1]

    def split_first(self, stmts: list, key: str, first: bool, state: State) -> State:
        """Runs a loop body whose first statement is an `if` telling the first iteration from the others
        (`_first_iteration_test`) twice: as the first iteration, from the loop's entry (`LoopCtx.first`), and as any
        later one, from `state` (the fixpoint head), and joins the two ends. `if epoch > 0: out = net(x)` then
        `out.backward()`: a later iteration always rebinds `out` before the backward, so the value the entry brought
        in, whose graph the first backward frees, is never backwarded again (Kaixhin's PPO; bench/fresh23-false/01)."""
        slot = (self.frame_id(), key)
        ends = []
        for truth, start in ((first, self.loops[-1].first), (not first, state)):
            self.assumed[slot] = truth
            ends.append(self.run_rest(stmts, 0, start.copy()))
        del self.assumed[slot]
        return ends[0].join(ends[1])

    def stmt_While(self, stmt: ast.While, state: State) -> State:
        self.eval(stmt.test, state)
        return self.loop(stmt, state, lambda s: self.eval(stmt.test, s), stmt.body, stmt.orelse)

    def loop(self, node, state: State, bind, body, orelse) -> State:
        entry = state.copy()
        ctx = LoopCtx(node, frozenset(state.env), self.syntax("has_backward", node, lambda n: _has_backward(n, self.nodes(n))))
        if len(self.loops) >= MAX_LOOP_NESTING:
            return self.deep_loop(node, ctx, entry, bind, body, orelse)
        was_reporting = self.reporting
        self.reporting = False
        head = entry
        self.loops.append(ctx)
        if body and isinstance(body[0], ast.If) and self.syntax(
                "first_iteration", body[0], lambda s: _first_iteration_test(node, s.test)) is not None:
            ctx.first = self.new_iteration(node, entry, bind)
        key = self._loop_key(node, entry)
        hit = self.memo.get(key) if key is not None else None
        merged = None  # the speculative round that confirmed the fixpoint: it was the reporting pass
        try:
            reuse = None
            lasts: tuple = ()
            # The end state of an iteration begun from the fixpoint head (its `continue`s joined): what a loop
            # that surely runs leaves (`loop_exit`). None where the head was widened.
            ends = None
            if hit is not None and hit[0] is node:
                # The same loop entered again with the same state (an outer loop's next round, or its reporting
                # pass): its fixpoint is a function of that state, so it is not iterated again.
                reuse, lasts, ends = hit[1], hit[2], hit[3]
            elif key is not None:
                reuse, lasts, ends = self._enclosing_fixpoint(node, key, entry)
            if reuse is not None:
                head = reuse.copy()
            else:
                # Iteration starts from an earlier fixpoint of this loop whose entry lies below this one (an outer
                # loop's next round, entering with more than the last): see `warm_start`.
                head = self.warm_start(key, entry)
                converged = False
                # On the reporting pass, a round that may confirm the fixpoint (any but a first round from the bare
                # entry) runs with reporting on, its results held back (`speculate.py`): when it confirms, it was
                # the reporting pass (the same body from the same head), which then does not run again.
                speculate = was_reporting and self.speculative_reporting
                rounds = 0
                while rounds < MAX_LOOP_ITERS:
                    ctx.breaks.clear()
                    ctx.continues.clear()
                    ctx.lasts.clear()
                    spec = self.begin_spec() if speculate and (rounds > 0 or head is not entry) else None
                    self.reporting = spec is not None
                    try:
                        s = self.new_iteration(node, head, bind)
                        s = self.exec_block(body, s)
                    except BaseException:
                        if spec is not None:
                            self.drop_spec(spec)
                        raise
                    finally:
                        self.reporting = False
                    if spec is not None and spec.tainted:
                        # An inner loop's exit differed with reporting on: run this round again without it.
                        self.drop_spec(spec)
                        speculate = False
                        continue
                    rounds += 1
                    for c in ctx.continues:
                        s = s.join(c)
                    new_head = entry.join(s)
                    if new_head.same(head):
                        converged = True
                        merged = spec
                        ends = s
                        break
                    if spec is not None:
                        self.drop_spec(spec)
                    head = new_head
                else:
                    head = widen(entry, head)
                # The last iteration's end states of the round that reached the fixpoint (`split_last`).
                lasts = tuple(ctx.lasts)
                if key is not None:
                    self.memo_store(key, (node, head.copy(), lasts, ends.copy() if ends is not None else None))
                    if converged:
                        family = self.memo.setdefault(key[:4], [])
                        if len(family) < 4:
                            self.memo_append(family, (entry, head.copy(), lasts, ends.copy() if ends is not None else None))
                        warm = self.memo.setdefault(self._warm_key(key), [])
                        if len(warm) < 4:
                            self.memo_append(warm, (entry, head.copy(), tuple(c.entry_keys for c in self.loops[:-1])))
            self.reporting = was_reporting
            if merged is not None:
                # The confirming round's breaks and last-iteration states are the reporting pass's.
                ctx.continues.clear()
                self.close_spec(merged, LoopEvent(node, self.stack[-1] if self.stack else None,
                                                  self.loop_receivers(node, head)))
                merged = None
            else:
                ctx.breaks.clear()
                ctx.continues.clear()
                ctx.lasts.clear()
                self.loop_pass(node, head, bind, body)
                if not self.reporting:
                    ctx.lasts.extend(lasts)
            from_head = ends is None or not self.runs_once(node)
            exit_from = head if from_head else ends
            if self.reporting and self.spec and (ctx.breaks or ctx.lasts != list(lasts)):
                self.check_exit_taint(exit_from, ctx, lasts, from_head)
        except BaseException:
            if merged is not None:
                self.drop_spec(merged)
            raise
        finally:
            self.reporting = was_reporting
            self.loops.pop()
        return self.loop_exit(exit_from, ctx, orelse, from_head)

    def runs_once(self, node) -> bool:
        """Whether `node` is a `for` loop whose body surely runs at least once: over `range(...)` of integer
        constants that is not empty (`for _ in range(4):`), or over a list or tuple display with an element and no
        starred one. Its exit then comes from the end of an iteration, not from its head: the head also holds the
        entry (zero iterations), and a name the body rebinds (`y = x * 2`) would keep its value from before the
        loop, e.g. an earlier outer iteration's graph that a backward freed. A name in the `range` is read as the
        integer a module-level statement binds it to once (`N = 10`), where the running function binds it nowhere."""
        if self.syntax("runs_once", node, _runs_once):
            return True
        count = self.range_count(node)
        return count is not None and count > 0

    def range_count(self, node) -> Optional[int]:
        """How many times `for _ in range(...)` runs, where its arguments are integer constants or names of
        module-level integer constants (`_module_ints`) that the running function does not bind; else None. A
        function of the syntax (the loop's module and function are its own), asked once per analysis."""
        if not (isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.iter, ast.Call)
                and isinstance(node.iter.func, ast.Name) and node.iter.func.id == "range"
                and not node.iter.keywords and 1 <= len(node.iter.args) <= 3):
            return None
        return self.syntax("range_count", node, self._range_count)

    def _range_count(self, node) -> Optional[int]:
        args = []
        for a in node.iter.args:
            if isinstance(a, ast.Constant) and type(a.value) is int:
                args.append(a.value)
                continue
            if not isinstance(a, ast.Name):
                return None
            value = self.syntax("module_ints", self.scope.tree, _module_ints).get(a.id)
            fn = self.stack[-1] if self.stack else None
            if value is None or fn is not None and a.id in self.syntax("local_names", fn, _local_names):
                return None
            args.append(value)
        try:
            return len(range(*args))
        except ValueError:  # a zero step
            return None

    def check_exit_taint(self, head: State, ctx: LoopCtx, lasts: tuple, from_head: bool = True) -> None:
        """Inside a speculative round (`speculate.py`): this loop's exit after its reporting pass (its head, the
        pass's breaks and last-iteration states) against the exit off the reporting pass (its head and the
        fixpoint's last-iteration states). Where they differ, the rounds around it are not what a round without
        reporting computes."""
        on = self.exit_state(head, ctx.breaks + ctx.lasts, from_head)
        off = self.exit_state(head, list(lasts), from_head)
        if not on.same(off):
            self.taint()

    @staticmethod
    def exit_state(head: State, ends: list, from_head: bool = True) -> State:
        """`head`, a loop's fixpoint head (the test failed: live), or with `from_head` false the end of an
        iteration from it where the body surely runs (`runs_once`; dead where every path left by `break`, `return`
        or `raise`), joined with `ends` (the breaks and last-iteration states)."""
        out = head.copy()
        if from_head:
            out.dead = False
        for b in ends:
            out = out.join(b)
        return out

    def _enclosing_fixpoint(self, node, key: tuple, entry: State) -> tuple:
        """A fixpoint this loop reached before (same loop, function and depth: `key[:4]`) that is exactly the
        fixpoint for `entry`: one computed from an entry `old` with old ⊑ entry ⊑ its head. The head `h` is then a
        fixpoint for `entry` too (entry ⊔ body(h) lies between old ⊔ body(h) = h and h), and for a monotone body
        the one iterating from `entry` would reach (it is the least above `old`). This is the common case of an
        outer loop's second round, whose entry to the inner loop adds what the inner loop itself left at the end
        of the first round. Only converged (not widened) fixpoints are kept for this. Returns that head, the
        last iteration's end states kept with it (`LoopCtx.lasts`) and the end of an iteration from the head (a
        function of the head alone), or (None, (), None)."""
        for old, head, lasts, ends in self.memo.get(key[:4], ()):
            if old.inference != entry.inference or old.dead or entry.dead:
                continue
            if old.join(entry).same(entry) and entry.join(head).same(head):
                return head, lasts, ends
        return None, (), None

    def warm_start(self, key: Optional[tuple], entry: State) -> State:
        """Where the fixpoint iteration for `entry` starts: `entry` joined with the head `h` of a fixpoint this loop
        reached before from an entry `old` with old ⊑ entry, else `entry` itself. For a monotone body the least
        fixpoint above `entry` lies above `h` (the least above `old`), so iterating from entry ⊔ h reaches the same
        fixpoint as iterating from `entry`, in fewer rounds: an outer loop's next round enters its inner loops with
        the earlier round's entries plus what that round changed, and the inner loops no longer redo the rounds
        that only rebuilt `h`. The earlier fixpoint must come from the same body: the same loop, function and
        depth, the same assumed tests (`split_tail`) and forced flag (`run_function`), and enclosing loops that
        began with at least the names they began with then (`iteration_start` forgets fewer names, never more).
        Only converged (not widened) fixpoints are kept for this (`_enclosing_fixpoint` covers entry ⊑ h, where no
        round is needed at all)."""
        if key is None or entry.dead:
            return entry
        found = self.memo.get(self._warm_key(key))
        if not found:
            return entry
        enclosing = tuple(c.entry_keys for c in self.loops[:-1])
        for old, head, old_enclosing in found:
            if old.inference == entry.inference and not old.dead \
                    and all(now >= then for now, then in zip(enclosing, old_enclosing)) \
                    and old.join(entry).same(entry):
                return entry.join(head)
        return entry

    def _warm_key(self, key: tuple) -> tuple:
        """The memo key of a loop's earlier fixpoints for `warm_start` (see there): `_loop_key`'s loop, function
        and depth, its assumed tests, and the forced flag."""
        return ("\0warm",) + key[1:4] + (key[-1], self.forced_flag)

    def _loop_key(self, node, entry: State) -> Optional[tuple]:
        """The key under which a loop's fixpoint is kept in the unit's memo (`self.memo`, emptied per unit), or
        None where it must be recomputed: a body that returns or yields adds to the running call's results as it
        iterates, which a reused fixpoint would skip. The key holds everything the fixpoint reads: the loop, the
        function it runs in, how deep it is nested, and the whole entry state (values are hashable and compared
        by value)."""
        if self.syntax("loop_returns", node, lambda n: _returns_inside(n, self.nodes(n))):
            return None
        try:
            return ("\0loop", id(node), id(self.stack[-1]) if self.stack else None, len(self.loops), entry.grad,
                    entry.inference, entry.dead, frozenset(entry.env.items()), frozenset(self.assumed.items()))
        except TypeError:  # a value that cannot be hashed: no reuse
            return None

    def loop_pass(self, node, head: State, bind, body) -> None:
        """The reporting pass over a loop body, from its fixpoint `head` (nothing to do off the reporting pass)."""
        if self.reporting:
            self.emit(LoopEvent(node, self.stack[-1] if self.stack else None,
                                self.loop_receivers(node, head)))
            s = self.new_iteration(node, head, bind)
            self.exec_block(body, s)

    def loop_exit(self, head: State, ctx: LoopCtx, orelse, from_head: bool = True) -> State:
        """The state after a loop: its head (the test failed), or the end of an iteration where the body surely
        runs (`from_head` false, see `exit_state`), joined with every `break` and the last iteration's end states
        (`LoopCtx.lasts`), then the `else` block."""
        out = self.exit_state(head, ctx.breaks + ctx.lasts, from_head)
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
                s = self.new_iteration(node, head, bind)
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


    def check_accumulating_method(self, node: ast.Call, func: ast.Attribute, recv: ObjectVal, meth: BoundMethod,
                                  state: State) -> None:
        """`meter.update(loss, n)` in a loop that calls backward, on an object bound before the loop whose method
        adds that argument into one of its attributes (`self.sum += val * n`, `self.values.append(val)`): the
        object keeps every iteration's graph. The object may also be an item of a container bound before the loop
        (`metrics[k].update(...)` over `metrics = {k: AverageMeter() for k in names}`), and the argument an item
        of a dict whose keys the loop walks (`for k in loss_dict: metrics[k].update(loss_dict[k], n)`), one of
        which holds the loss it backwards (`_walked_item_grad`)."""
        walked = [self.walked_item_grad(a, self.loops[-1], state) if key_of(a) is None else None for a in node.args]
        key = key_of(func.value)
        root = _root_name(func.value)

        def outlives(loop: LoopCtx) -> bool:
            if key is not None and key in loop.entry_keys:
                return not _remade_before(loop.node, node, root or "")
            # An item or attribute of a container the loop never rebinds (`metrics[k]`, `self.meters[k]`).
            return not isinstance(func.value, ast.Name) and root is not None and root in loop.entry_keys \
                and self.syntax("loop_stores", loop.node, _loop_store_counts).get(root, 0) == 0 \
                and not _remade_before(loop.node, node, root)

        # The loop that runs each step: the innermost one that calls backward and that the object outlives (an inner
        # loop over a dict's keys or a batch's parts runs inside it); else the innermost loop, as before.
        loops = self.loops[:-1] if any(w is not None for w in walked) else self.loops
        loop = next((c for c in reversed(loops) if c.has_backward and outlives(c)), loops[-1] if loops else None)
        if loop is None or not outlives(loop) or any(isinstance(a, ast.Starred) for a in node.args):
            return
        if key is not None:
            prefix = key + "."
            kept = [state.env[k] for k in state.compound if k.startswith(prefix)]
            if kept and not any(isinstance(v, TensorVal) and v.rg is not Tri.NO and v.leaf is not Tri.YES
                                or v is UNKNOWN for v in kept):
                # The method ran on this object (its `self.*` came back): nothing it keeps has a graph
                # (`self.correct += (logits.detach().argmax(-1) == tags).sum()`).
                return
        fn = meth.func.node
        params = [p.arg for p in fn.args.posonlyargs + fn.args.args][1:]
        kept = self.syntax("keeps_args", fn, _params_accumulated_into_self)
        for i, arg in enumerate(node.args):
            if i >= len(params) or params[i] not in kept:
                continue
            arg_key = key_of(arg)  # only references: evaluating an expression twice could report twice
            if arg_key is not None and state.get(arg_key) is not None:
                value = self.surely_grad_loss(state.get(arg_key), arg, loop.node)
            else:
                value = walked[i]
            if value is not None:
                self.emit(AccumulateEvent(node, f"{self.seg(func.value)}.{func.attr}()", value, arg,
                                          loop.has_backward, "keeps", kept_at=self._kept_at(meth, params[i], kept),
                                          eval_at=self.evaluated_by(value, state) if loop.has_backward is None
                                          else None))
                return

    def stale_source(self, arg: ast.AST, value: TensorVal, node: ast.AST, state: Optional[State]) -> Optional[Fact]:
        """For a carried graph (`carry_check`) fed through `arg`, a container or name the loop makes anew before
        `node` (`net_policies = []` ... `torch.cat(net_policies)`): the one tensor name bound before the loop and
        never in it whose graph the same backward freed (`beg_embedding = net.emb(beg_token)` above the loop, fed
        into every step's decoding): the statement to move into the loop. A fact at its last binding before the
        loop; None where there is not exactly one such name or its binding is not in the loop's function."""
        loop = self.loops[-1]
        root = _root_name(arg)
        if state is None or root is None or not _remade_before(loop.node, node, root):
            return None
        stores = self.syntax("loop_stores", loop.node, _loop_store_counts)
        names = [k for k in loop.entry_keys if "." not in k and "[" not in k and stores.get(k, 0) == 0
                 and isinstance(state.env.get(k), TensorVal) and state.env[k].freed == value.freed
                 and state.env[k].rg is Tri.YES and state.env[k].leaf is Tri.NO]
        if len(names) != 1:
            return None
        region = self.stack[-1] if self.stack else self.scope.tree
        binds = [n for n in walk(region) if isinstance(n, ast.Assign) and n.lineno < loop.node.lineno
                 and any(isinstance(t, ast.Name) and t.id == names[0] for t in n.targets)]
        if not binds:
            return None
        last = max(binds, key=lambda n: (n.lineno, n.col_offset))
        return self.fact(last, "bound-before-loop", expr=names[0])

    def walked_item_grad(self, arg: ast.AST, loop: LoopCtx, state: State) -> Optional[TensorVal]:
        """`d[k]` (or `v`) where the loop walks every key of the dict `d` (`for k in d:`, `for k in d.keys():`, `for k,
        v in d.items():`), and the item at some constant key of `d` is a loss the loop surely backwards (`loss =
        d["loss"]` ... `loss.backward()`): on the iteration that reaches that key, the argument is that loss, with
        its graph (SLIP's `for k in loss_dict: metrics[k].update(loss_dict[k], n)`). None otherwise."""
        walk_node = loop.node
        if not isinstance(walk_node, (ast.For, ast.AsyncFor)):
            return None
        it, target = walk_node.iter, walk_node.target
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and not it.args \
                and it.func.attr in ("keys", "items"):
            how, it = it.func.attr, it.func.value
        else:
            how = "keys"
        dict_key = key_of(it)
        if dict_key is None:
            return None
        if how == "keys":
            ok = isinstance(target, ast.Name) and isinstance(arg, ast.Subscript) and key_of(arg.value) == dict_key \
                and isinstance(arg.slice, ast.Name) and arg.slice.id == target.id
        else:
            ok = isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[1], ast.Name) \
                and isinstance(arg, ast.Name) and arg.id == target.elts[1].id
        if not ok:
            return None
        region = self.loops[-2].node if len(self.loops) > 1 else None
        if region is None:
            return None
        backwarded = self.syntax("backward_on", region, _backward_names)
        for n in walk(region):
            # `loss = d["loss"]` with `loss` backwarded, or `d["loss"].backward()`, in the enclosing loop.
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                    and n.targets[0].id in backwarded and isinstance(n.value, ast.Subscript) \
                    and key_of(n.value.value) == dict_key and key_of(n.value) is not None:
                return TensorVal(rg=Tri.YES, leaf=Tri.NO, evidence=True,
                                 origin=self.expr_fact(n.value, "backwarded"))
        return None

    def _kept_at(self, meth: BoundMethod, param: str, kept: dict) -> Optional[Fact]:
        """Where method `meth` adds its parameter `param` into `self` (`kept`, from `_params_accumulated_into_self`),
        as a fact of its file."""
        module = meth.func.module
        if module is None:
            return None
        line, col, _, _ = module.source.span(kept[param])
        return Fact(line, col, "added-into-object", (("name", param),), None,
                    None if module.path == self.root_path else module.path)


def _returns_inside(loop: ast.AST, nodes: Optional[list] = None) -> bool:
    """Whether a `return`, `yield` or `yield from` of the enclosing function is inside `loop` (nested function
    and class bodies are their own). `nodes`: `walk(loop)`, where the caller has it: without any such node in it,
    the answer is no without the scope-aware walk."""
    if nodes is not None and not any(type(n) in _EXITS for n in nodes):
        return False
    todo = children(loop)
    while todo:
        n = todo.pop()
        t = type(n)
        if t is ast.Return or t is ast.Yield or t is ast.YieldFrom:
            return True
        if not (t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.Lambda or t is ast.ClassDef):
            todo.extend(children(n))
    return False


_EXITS = (ast.Return, ast.Yield, ast.YieldFrom)


def _runs_once(loop: ast.AST) -> bool:
    """See `LoopsMixin.runs_once`: a `for` over a non-empty `range` of integer constants or a non-empty list or
    tuple display without starred elements."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    it = loop.iter
    if isinstance(it, (ast.List, ast.Tuple)):
        return bool(it.elts) and not any(isinstance(e, ast.Starred) for e in it.elts)
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
            and not it.keywords and 1 <= len(it.args) <= 3):
        return False
    args = []
    for a in it.args:
        if not (isinstance(a, ast.Constant) and type(a.value) is int):
            return False
        args.append(a.value)
    try:
        return len(range(*args)) > 0
    except ValueError:  # a zero step
        return False


def _module_ints(tree: ast.Module) -> dict:
    """Module-level names bound exactly once in the module, by a top-level statement, to an integer constant
    (`N = 10`, `mb_size, N = 16, 10`), and never declared `global` in a function: name -> the integer."""
    ints: dict = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
            pairs = [(target, value)]
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
                pairs = list(zip(target.elts, value.elts))
            for t, v in pairs:
                if isinstance(t, ast.Name) and isinstance(v, ast.Constant) and type(v.value) is int:
                    ints[t.id] = v.value
    counts = _name_binds(tree)  # every binding anywhere in the module; a `global` declaration counts as unbounded
    return {k: v for k, v in ints.items() if counts.get(k) == 1}


def _local_names(fn: ast.AST) -> frozenset:
    """The names a function binds itself: its parameters and every name bound under it (`_name_binds`)."""
    a = fn.args
    params = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x is not None]
    return frozenset(params) | frozenset(_name_binds(fn))


def _freeze_loop(loop: ast.AST):
    """`for p in m.parameters(): p.requires_grad = False` (or `p.requires_grad_(False)`, `p.detach_()`, or
    `for name, p in m.named_parameters():`): (owner key, flag, certain, expression) where `flag` is the constant every
    write sets (None when the writes disagree or set no constant), `certain` says every parameter surely gets it (a
    write directly in the body, no `break`/`continue`/`return`/`raise`, the loop variable never rebound), and
    `expression` is the one name or attribute a sure loop writes instead of a constant (None otherwise). None for any
    other loop."""
    it = getattr(loop, "iter", None)
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute)
            and it.func.attr in ("parameters", "named_parameters") and not it.args
            and not any(kw.arg == "recurse" for kw in it.keywords)):
        return None
    owner = key_of(it.func.value)
    target = loop.target
    if it.func.attr == "named_parameters" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
        target = target.elts[1]
    if owner is None or not isinstance(target, ast.Name):
        return None
    var = target.id

    def write(s: ast.AST) -> tuple:
        """(the flag `s` writes into the loop variable's `requires_grad`: True/False, "?" (not a constant), or None
        when `s` is no such write; the expression it writes where that is no constant)."""
        if isinstance(s, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad"
                                             and isinstance(t.value, ast.Name) and t.value.id == var
                                             for t in s.targets):
            flag = const_bool(s.value)
            return ("?", s.value) if flag is None else (flag, None)
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute) \
                and s.value.func.attr == "requires_grad_" and isinstance(s.value.func.value, ast.Name) \
                and s.value.func.value.id == var:
            flag = const_bool(s.value.args[0]) if s.value.args else True
            return ("?", s.value.args[0]) if flag is None else (flag, None)
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute) \
                and s.value.func.attr == "detach_" and not s.value.args and not s.value.keywords \
                and isinstance(s.value.func.value, ast.Name) and s.value.func.value.id == var:
            # A parameter is a leaf: `p.detach_()` makes it stop requiring grad, as `p.requires_grad_(False)` does
            # (the mean-teacher idiom `for param in teacher.parameters(): param.detach_()`).
            return False, None
        return None, None

    flags = set()
    values: list = []  # the expressions of the writes that set no constant
    written: set = set()  # the writing statements
    exits = rebound = False
    for n in walk(loop):
        if n is loop:
            continue
        if isinstance(n, ast.stmt):
            w, value = write(n)
            if w is not None:
                flags.add(w)
                written.add(id(n))
                if value is not None:
                    values.append(value)
        if isinstance(n, (ast.Break, ast.Continue, ast.Return, ast.Raise)):
            exits = True
        elif isinstance(n, ast.Name) and n.id == var and isinstance(n.ctx, ast.Store) and n is not target:
            rebound = True
    if not flags:
        return None
    flag = next(iter(flags)) if len(flags) == 1 and "?" not in flags else None
    surely = any(id(s) in written for s in loop.body) and not exits and not rebound
    # One write of a name or attribute (`param.requires_grad = requires_grad`, pytorch-fid's InceptionV3 with its
    # default `requires_grad=False`): `freeze_after_loop` asks its value.
    expr = values[0] if flags == {"?"} and len(values) == 1 and isinstance(values[0], (ast.Name, ast.Attribute)) \
        else None
    return owner, flag, flag is not None and surely, expr if surely else None
