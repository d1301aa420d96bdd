"""Statements: blocks, assignments, branches, `with` grad-mode blocks, returns (loops: interp_loops.py)."""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import replace
from typing import Optional

from .astwalk import walk
from . import torchdb as db
from .events import (AccumulateEvent, DiscardEvent, FactoryEvent, GradModeEvent, ReassignEvent, SelfStoreEvent,
                     ZeroGradEvent)
from .interp_exprs import values_indices_call
from .rebinding import _number_bindings
from .interp_util import (_const_key, bool_compare_truth, REQUIRES_GRAD_SPELLINGS, _accumulated_operand, _backward_names, _grad_read_keys,
                          _has_backward, _is_static, _loop_store_counts, _msite, _params_accumulated_into_self,
                          _pcut_of, _remade_before, _root_name, _stmt_method, _use_kind, const_bool, key_of,
                          self_view, _class_methods, _invariant_test, _loop_changes, _module_mutations,
                          _survey_discarded)
from .paths import _test_key, _block_tests, _block_path, _mentions, _rebuilt_before_use, _assumed_key
from .state import State
from .values import (UNKNOWN, BoundMethod, ClassInfo, ClassVal, Fact, FuncVal, GradModeCtx, MapVal, ModuleVal, ObjectVal,
                     OptimizerVal, ParamsVal, PyVal, SeqVal, TensorVal, Tri, Value, frozen_layers, join_all, summarise)


_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ()))  # never library models
_TENSOR_CLASSES = frozenset({"torch.Tensor", "torch.autograd.Variable", "torch.autograd.variable.Variable"})
_NOT_TENSOR_CLASSES = frozenset({"numpy.ndarray", "numpy.generic", "builtins.list", "builtins.tuple", "builtins.dict",
                                 "builtins.int", "builtins.float", "builtins.str", "builtins.bool", "builtins.bytes",
                                 "builtins.set", "numbers.Number"})
_PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
_MODULE_CLASSES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})


def _with_flattened(stmts: list[ast.stmt]):
    """(top, stmt) for the statements of a block in the order they run, the bodies of `with` statements (nested
    ones too) read in place of the `with`; `top` is the block's own statement that holds `stmt`."""
    for top in stmts:
        if not isinstance(top, (ast.With, ast.AsyncWith)):
            yield top, top
            continue
        todo = list(reversed(top.body))
        while todo:
            s = todo.pop()
            if isinstance(s, (ast.With, ast.AsyncWith)):
                todo.extend(reversed(s.body))
            else:
                yield top, s


class StatementsMixin:
    """Part of `Interpreter` (see interp.py)."""

    # ------------------------------------------------------------------ statements
    def exec_block(self, stmts: list[ast.stmt], state: State) -> State:
        pending = self.check_step_order(stmts) if self.reporting and (
            len(stmts) >= 3 or any(isinstance(s, (ast.With, ast.AsyncWith)) for s in stmts)) else ()
        outer = getattr(self, "block_ctx", None)
        for i, stmt in enumerate(stmts):
            if state.dead:
                break
            if isinstance(stmt, ast.If) and self.loops and stmts is getattr(self.loops[-1].node, "body", None):
                split = self.split_loop_test(stmts, i, state)
                if split is not None:
                    state = split
                    break
            if isinstance(stmt, ast.If):
                key = self.correlated_test(stmts, i)
                if key is not None and (self.frame_id(), key) not in self.assumed \
                        and self.static_truth(stmt.test, state) is None:
                    state = self.split_tail(stmts, i, key, state)
                    break
            self.block_ctx = (stmts, i)  # for `graded_since_zero`: the statements before this one in its block
            state = self.exec_stmt(stmt, state)
        self.block_ctx = outer
        for zero, backward, step in pending:
            # Resolved after the block ran, so optimizers built inside it are known.
            if self.clears_stepped_grads(zero.value, step.value, state):
                self.emit(ZeroGradEvent(zero.value, self.expr_fact(backward.value), self.expr_fact(step.value)))
        return state

    def frame_id(self) -> int:
        return id(self.stack[-1]) if self.stack else 0

    def correlated_test(self, stmts: list[ast.stmt], i: int) -> Optional[str]:
        """`if self.mode == "auto": loss.backward(retain_graph=True) else: loss.backward()`, then later in the block
        `if self.mode == "auto": (-lagrange_loss).backward()`: two tests of one value that nothing between them can
        change (`_invariant_test`, the loop-invariance check, over the statements from the first `if` on). The key
        of the test (its syntax, a leading `not` dropped) when it recurs later in the block (nested statements
        included), else None."""
        stmt = stmts[i]

        def compute(_):
            key = _test_key(stmt.test)
            if key is None or self.syntax("block_tests", stmts[0], lambda _: _block_tests(stmts)).get(key[0], -1) <= i:
                return None
            mutations = self.syntax("module_mutations", self.scope.tree, _module_mutations)
            changes = _loop_changes(ast.Module(body=stmts[i:], type_ignores=[]))
            return key[0] if _invariant_test(stmt.test, changes, mutations) else None
        return self.syntax("correlated_test", stmt, compute)

    def split_tail(self, stmts: list[ast.stmt], i: int, key: str, state: State) -> State:
        """Runs the statements from `stmts[i]` (an `if` whose test recurs later, `correlated_test`) to the block's
        end twice: once with the test assumed true, once false, and joins the two ends. Every `if` on that test in
        the frame takes the branch the assumption says (`static_truth`), so paths that take the first `if`'s true
        branch and a later one's false branch, which cannot run, add nothing (a `backward(retain_graph=True)` in
        one branch, the second backward under the same test)."""
        ends = []
        slot = (self.frame_id(), key)
        # Optimizers are recorded outside the state (`optimized_modules`): one built on the first path is not there
        # on the second (`net.head = ...` under one `elif`, the optimizer built further down: GS504).
        books = [self.optimized_modules] + self.frame_optimized[-1:]
        before = [dict(b) for b in books]
        for truth in (True, False):
            if not truth:
                first = [dict(b) for b in books]
                for book, old in zip(books, before):
                    book.clear()
                    book.update(old)
            self.assumed[slot] = truth
            ends.append(self.run_rest(stmts, i, state.copy()))
        del self.assumed[slot]
        for book, seen in zip(books, first):
            for k, v in seen.items():
                book.setdefault(k, v)
        return ends[0].join(ends[1])

    def run_rest(self, stmts: list[ast.stmt], i: int, run: State) -> State:
        """The statements of a block from `stmts[i]` to its end, on `run` (one assumed path of a split)."""
        for j in range(i, len(stmts)):
            if run.dead:
                break
            self.block_ctx = (stmts, j)
            run = self.exec_stmt(stmts[j], run)
        return run

    def check_step_order(self, stmts: list[ast.stmt]) -> list:
        """`loss.backward()`, then `x.zero_grad()`, then `opt.step()` in one block, with no backward between the
        last two: candidates (zero, backward, step); `clears_stepped_grads` decides whether `x` is `opt` or the
        module it trains. A `with` block's body always runs, in order, where the `with` stands: its statements are
        read as the block's own (`with autocast(): accelerator.backward(loss)`, then `zero_grad()` and `step()`
        after it). A triple wholly inside one `with` is left to that `with`'s own block."""
        backward = zero = None
        found = []
        for top, stmt in _with_flattened(stmts):
            name = _stmt_method(stmt)
            if name == "backward":
                backward, zero = (top, stmt), None
            elif name == "zero_grad" and backward is not None:
                zero = zero or (top, stmt)
            elif name == "step" and zero is not None and "sched" not in self.seg(stmt.value.func.value).lower():
                if not (backward[0] is zero[0] is top and isinstance(top, (ast.With, ast.AsyncWith))):
                    found.append((zero[1], backward[1], stmt))
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
        call = stmt.value
        val = self.eval_discarding(call, "all", state) if isinstance(call, ast.Call) else self.eval(call, state)
        last = getattr(self, "last_method", None)
        if self.reporting and last is not None and last[0] is call and isinstance(val, TensorVal) \
                and call.func.attr in db.PURE_METHODS and not last[1].evidence:
            self.emit(DiscardEvent(call, call.func.attr, last[1]))
        if isinstance(val, GradModeCtx) and val.sets_mode:
            # `torch.set_grad_enabled(False)` as a statement changes the mode from here on.
            state.grad = val.enabled
            state.grad_why = self.fact(stmt.value, "grad-mode-set", label=val.label)
        return state

    def stmt_Assign(self, stmt: ast.Assign, state: State) -> State:
        if isinstance(stmt.value, ast.Dict) and len(stmt.targets) == 1 and key_of(stmt.targets[0]) is not None \
                and stmt.value.keys and all(k is not None and _const_key(k) for k in stmt.value.keys):
            return self.assign_dict_literal(stmt, stmt.targets[0], stmt.value, state)
        if len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and self.only_discarded(stmt):
            # `improve = loss_improve / expected_improve` read only in `if improve > alpha:`: the graph dies
            # unused, so what its ops save is freed at once, as inside a comparison (TRPO's line search).
            self.discard_depth += 1
            try:
                value = self.eval(stmt.value, state)
            finally:
                self.discard_depth -= 1
        else:
            unread = self.unread_targets(stmt) if isinstance(stmt.value, ast.Call) else None
            value = self.eval_discarding(stmt.value, unread, state) if unread else self.eval(stmt.value, state)
        if value is UNKNOWN and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and isinstance(stmt.value, ast.Call):
            value = self.library_value(stmt.targets[0], stmt.value)
        if len(stmt.targets) == 1 and self.loops and (isinstance(value, TensorVal) or value is UNKNOWN):
            # `total = total + loss`, `stats[k] = stats.get(k, 0) + loss`: an accumulation spelled as a rebinding.
            added = _accumulated_operand(stmt.targets[0], stmt.value)
            if added is not None:
                self.check_accumulate(stmt, stmt.targets[0], value, added, state, "+=")
            elif isinstance(stmt.targets[0], ast.Subscript) and self._tensor_buffer(stmt.targets[0], state):
                # Into a tensor, any index keeps them all: the write is recorded (CopySlices) on top of the buffer's
                # history, so `losses[i % n] = loss` chains every step's graph whichever slot it overwrites.
                self.check_accumulate(stmt, stmt.targets[0], value, stmt.value, state, "write")
            elif isinstance(stmt.targets[0], ast.Subscript) and self._new_key_each_step(stmt.targets[0].slice) \
                    and not isinstance(state.get(_root_name(stmt.targets[0]) or ""), TensorVal):
                # `step_loss_log[step_count] = loss`: a new entry every iteration, so the container keeps them all
                # (a tensor takes a copy: under `torch.no_grad()` it records nothing, in grad mode see above).
                self.check_accumulate(stmt, stmt.targets[0], value, stmt.value, state, "store")
        if self.loops and self.holds_dropped(state):
            self.check_carry(stmt, value, state)
        for target in stmt.targets:
            self.assign(target, value, state, stmt)
        return state

    def eval_discarding(self, call: ast.Call, positions, state: State) -> Value:
        """`call` evaluated with `discarded_result` set: the parts of its result the statement throws away
        (`positions`) keep none of the graph it built alive (`prune_dead_saves`)."""
        outer = self.discarded_result
        self.discarded_result = (call, positions)
        try:
            return self.eval(call, state)
        finally:
            self.discarded_result = outer

    def unread_targets(self, stmt: ast.Assign):
        """For `out = f(x)` / `a, b = f(x)` in a function: "all" when the one name bound is never read in the
        function, else the positions of the tuple's names it never reads (a tuple of plain names only); None when
        every name is read (or outside a function, or where the function may read its names another way)."""
        if not self.stack or len(stmt.targets) != 1:
            return None
        target = stmt.targets[0]
        unread = self.survey_discarded()[1]
        if not unread:
            return None
        if isinstance(target, ast.Name):
            return "all" if target.id in unread else None
        if not isinstance(target, (ast.Tuple, ast.List)) or not all(isinstance(e, ast.Name) for e in target.elts):
            return None
        found = tuple(i for i, e in enumerate(target.elts) if e.id in unread)
        return (len(target.elts),) + found if found else None

    def survey_discarded(self) -> tuple:
        """`_survey_discarded` of the running function, memoised per function node, across analyses too (`durable`:
        a function an edit did not touch keeps its node, so a keystroke elsewhere does not walk it again)."""
        region = self.stack[-1]
        survey = self.discarded_names.get(id(region))
        if survey is None:
            survey = self.discarded_names[id(region)] = self.durable("survey_discarded", region,
                                                                             lambda r: _survey_discarded(r, self.nodes))
        return survey

    def only_discarded(self, stmt: ast.Assign) -> bool:
        """Whether every read of the name `stmt` binds, in its function, throws the graph away: an
        operand of a comparison, `.item()`, `float()`/`int()`/`bool()`, a formatted string. Such a value's graph
        is never backwarded. The function's names are surveyed once, in one walk. Module-level code is not
        surveyed: that walk would cover the whole file on every keystroke (+20 ms at p90 typing in timm's
        `vision_transformer.py`, measured)."""
        if not self.stack:
            return False
        return self.survey_discarded()[0].get(stmt.targets[0].id, False)

    def assign_dict_literal(self, stmt: ast.Assign, target: ast.AST, node: ast.Dict, state: State) -> State:
        """`d = {"a": x, "b": y}` with constant keys: the entries are tracked like `d["a"] = x` stores (`d` itself
        stays UNKNOWN), so `d["a"]` reads them and `for v in d.values()` iterates them (`dict_entries`)."""
        values = [self.eval(v, state) for v in node.values]
        self.assign(target, UNKNOWN, state, stmt)
        key = key_of(target)
        for k, v in zip(node.keys, values):
            state.set(f"{key}[{_const_key(k)}]", v)
        return state

    @staticmethod
    def dict_entries(key: str, state: State) -> list:
        """The values of the entries `key[<constant>]` the state tracks (not deeper keys such as `key["a"].x` or
        `key["a"][0]`, whose text after `key[` holds a `]` before its end)."""
        prefix = key + "["
        return [state.env[k] for k in sorted(state.compound)
                if k.startswith(prefix) and k.endswith("]") and "]" not in k[len(prefix):-1] and k in state.env]

    def _tensor_buffer(self, target: ast.Subscript, state: State) -> bool:
        """`losses[idx] = loss` in grad mode, in a loop that calls backward, into a tensor bound to a name
        (`losses = torch.zeros(n)` before the loop): an index-assignment into a tensor is an in-place op that
        autograd records, so the buffer carries the written value's history and every later write chains onto it.
        A leaf that requires grad is left out (writing into it raises: GS302's case), and so is a buffer the loop
        rebinds (`losses = losses.detach()` cuts the chain every iteration)."""
        loop = self.loops[-1]
        if state.grad is not Tri.YES or loop.has_backward is None or not isinstance(target.value, ast.Name) \
                or self.syntax("loop_stores", loop.node, _loop_store_counts).get(target.value.id, 0):
            return False
        base = state.get(target.value.id)
        return isinstance(base, TensorVal) and not (base.leaf is Tri.YES and base.rg is not Tri.NO)

    def _new_key_each_step(self, key: ast.AST) -> bool:
        """Whether subscript `key` names a new entry on every iteration of the innermost loop, when that loop
        calls backward: the loop's own counter (`for step in ...`, `for i, batch in enumerate(...)`) or a name it
        counts up (`step_count += 1`). A key from a nested loop over a fixed set (`for k in stats`) repeats."""
        loop = self.loops[-1]
        if not isinstance(key, ast.Name) or loop.has_backward is None:
            return False
        node = loop.node
        if isinstance(node, (ast.For, ast.AsyncFor)):
            target = node.target
            if isinstance(target, ast.Tuple) and isinstance(node.iter, ast.Call) \
                    and isinstance(node.iter.func, ast.Name) and node.iter.func.id == "enumerate" and target.elts:
                target = target.elts[0]
            if isinstance(target, ast.Name) and target.id == key.id and isinstance(node.iter, ast.Call) \
                    and isinstance(node.iter.func, ast.Name) and node.iter.func.id in ("range", "enumerate"):
                return True
        return self.syntax(("counts_up", key.id), node, lambda n: _counts_up(n, key.id))

    def _library_call(self, call: ast.Call) -> bool:
        """Whether `call` goes into an installed third-party library: its root name is imported, from neither torch
        nor the standard library, and not from a workspace file. Only those are worth asking jedi about (its first
        question in a process costs seconds); asking for every unresolved call made checking a library folder 20x
        slower."""
        root = call.func
        while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
            root = root.func if isinstance(root, ast.Call) else root.value
        if not isinstance(root, ast.Name) or root.id not in self.scope.imports:
            return False
        qual = self.scope.imports[root.id]
        top = qual.split(".", 1)[0]
        if not top or qual.startswith(".") or top in ("torch", "numpy", "builtins") or top in _STDLIB:
            return False
        if self.resolve_module is not None:
            # The package, or the module the name comes from: a folder without `__init__.py` (`utils/losses.py`
            # imported as `utils.losses`, a namespace package) has no file for its top-level name.
            for module in dict.fromkeys((top, qual.rpartition(".")[0], qual)):
                try:
                    if module and self.resolve_module(module, 0, self.scope) is not None:
                        return False  # a workspace module: the engine reads its code itself
                except Exception:  # noqa: BLE001 - resolution trouble means "not a workspace module"
                    pass
        return True

    def library_value(self, name: ast.Name, call: Optional[ast.Call] = None) -> Value:
        """A call result the engine cannot resolve (`model = AutoModel.from_pretrained(...)`), classified by the
        optional library inference the driver may install (`interp.libinfer`): a module or an optimizer, known from
        evidence of use (findings built on it are warnings at most). UNKNOWN when there is none or it says nothing."""
        infer = getattr(self, "libinfer", None)
        if infer is None or (call is not None and not self._library_call(call)):
            return UNKNOWN
        try:
            lib = infer.classify(self.src.text, self.scope.path, name.lineno, self.src.cp_col(name.lineno,
                                                                                              name.col_offset) - 1)
        except Exception:  # noqa: BLE001 - an inference failure must never stop the analysis
            return UNKNOWN
        if lib is None:
            return UNKNOWN
        origin = self.fact(name, "library-class", expr=self.seg(name), qualname=lib.qualname)
        if getattr(lib, "is_module", False):
            # A module class whose code creates no parameter (`param_free`) hands its inputs' grad state on.
            return ModuleVal(lib.qualname, has_params=Tri.NO if getattr(lib, "param_free", False) else Tri.YES,
                             evidence=True, origin=origin)
        if getattr(lib, "is_optimizer", False):
            return OptimizerVal(origin=origin)
        return UNKNOWN

    def stmt_AnnAssign(self, stmt: ast.AnnAssign, state: State) -> State:
        if stmt.value is not None:
            self.assign(stmt.target, self.eval(stmt.value, state), state, stmt)
        return state

    def stmt_AugAssign(self, stmt: ast.AugAssign, state: State) -> State:
        rhs = self.eval(stmt.value, state)
        target = stmt.target
        if isinstance(target, ast.Subscript):
            base = self.eval(target.value, state)
            if isinstance(base, TensorVal) and not _str_key(target):
                if self.loops and isinstance(stmt.op, ast.Add) and self._tensor_buffer(target, state):
                    # `stats[0] += loss` into a tensor made before the loop: the buffer's history chains every step.
                    self.check_accumulate(stmt, target, rhs, stmt.value, state, "write")
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
        elif isinstance(cur, SeqVal) and isinstance(rhs, SeqVal) and opname == "Add":
            # `outs += [y]`: in a loop (or onto a summarised list) the list is summarised as `append` does.
            if self.loops or cur.homog or rhs.homog:
                for v in rhs.items:
                    self.check_accumulate(stmt, target, v, stmt.value, state, "append")
                self.assign(target, summarise(cur.items + rhs.items), state, stmt)
            else:
                self.assign(target, SeqVal(cur.items + rhs.items), state, stmt)
        elif isinstance(cur, ParamsVal) and opname == "Add" and not cur.frozen and not cur.weak \
                and (isinstance(rhs, ParamsVal) or rhs is UNKNOWN):
            # `self.params = list(mac.parameters())`, then `self.params += list(self.mixer.parameters())`: still
            # the parameters of `mac` (its owner, the evidence an optimizer over them gives), plus others'.
            more = rhs.module_sites if isinstance(rhs, ParamsVal) else frozenset()
            self.assign(target, replace(cur, module_sites=cur.module_sites | more), state, stmt)
        elif isinstance(cur, PyVal) and rhs is UNKNOWN or cur is UNKNOWN and isinstance(rhs, PyVal):
            # A number and a value gradsight cannot see (`loss += self.reg()` on a loss from `self(*inputs)`): the
            # result is as unknown as `loss + 0.0` is, not a number (that would hide `total += loss` later).
            if rhs is UNKNOWN and opname == "Add":
                self.check_accumulate(stmt, target, rhs, stmt.value, state, "+=")
            self.assign(target, UNKNOWN, state, stmt)
        elif isinstance(cur, PyVal) or isinstance(rhs, PyVal):
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
            held = next((v for k in state.compound if k.startswith((prefix_sub, prefix_dot))
                         and isinstance(v := state.env.get(k), TensorVal) and v.rg is Tri.YES
                         and v.leaf is not Tri.YES), None)
            if held is not None:
                value = held
        if not self.loops:
            self.check_accumulate_on_self(stmt, target, value, value_node, how)
            return
        loop = self.loops[-1]
        if how == "append" and (value is UNKNOWN or isinstance(value, PyVal)) \
                and key_of(target) in self.syntax("last_items_backwarded", loop.node,
                                                  lambda n: _last_items_backwarded(n, self.nodes(n))):
            # `losses.append(reduce(add, terms))` then `losses[-1].backward()`: what was appended is backwarded, so
            # it has a graph (tntorch's loss history).
            value = TensorVal(rg=Tri.YES, leaf=Tri.NO, evidence=True,
                              origin=self.expr_fact(value_node, "backwarded"))
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
        held = key if isinstance(target, ast.Name) else root
        if held is not None and _remade_before(loop.node, stmt, held):
            # `tout = out + 0; tout[:, a:b] += x`: made anew each iteration before this statement, in a loop that
            # an enclosing loop's earlier round entered with it bound: nothing outlives the iteration.
            return
        me = self.self_names[-1] if self.self_names else None
        backward = loop.has_backward
        if backward is None and value.freed is not None:
            # `total += self.train_one_batch(batch)`, the helper backwarding the loss it returns: a backward runs in
            # this loop, through the call on this statement (mtl YOLO's `train_one_epoch`).
            fact = value.freed
            fn = self.stack[-1] if self.stack else None
            in_loop = fact.path is None and loop.node.lineno <= fact.line <= (loop.node.end_lineno or 0)
            in_callee = fact.path is not None or (fn is not None and not (
                fn.lineno <= fact.line <= (fn.end_lineno or fn.lineno)))
            if in_loop or in_callee:
                backward = stmt.lineno
        event = AccumulateEvent(stmt, self.seg(target), value, value_node, backward, how,
                                in_module=me is not None and isinstance(state.get(me), ModuleVal),
                                eval_at=self.evaluated_by(value, state) if backward is None else None)
        if backward is None and event.eval_at is None and how in ("+=", "append") and not event.in_module \
                and self.holds_dropped(state) and value.leaf is not Tri.YES:
            # Whether anything can backward what this loop keeps is known when the function ends.
            self.pending_dropped[-1].append(event)
            return
        self.emit(event)

    def holds_dropped(self, state: State) -> bool:
        """Whether an accumulation without backward is held for `settle_dropped`: on the reporting pass, in a
        function of the analysed file, with grad mode surely on."""
        return self.reporting and bool(self.pending_dropped) and self.scope.path == self.root_path \
            and state.grad is Tri.YES

    def check_carry(self, stmt: ast.Assign, value: Value, state: State) -> None:
        """`prediction, hidden = self.forward(inp, hidden)` in a loop: a state bound before the loop, rebound only
        here from an expression that reads it, now carrying a graph. Each iteration's graph hangs off the next
        one's, so the chain grows with the loop; held for `settle_dropped`. A pass through layers
        (`for layer in self.layers: x = layer(x)`: the callee reads the loop variable) is one forward, not a
        growing chain."""
        loop = self.loops[-1]
        if len(stmt.targets) != 1 or not isinstance(loop.node, (ast.For, ast.AsyncFor, ast.While)):
            return
        fn = self.stack[-1] if self.stack else None
        if not self.syntax("samples", loop.node, lambda n: _samples(n, self.nodes(n))) and not _generation_name(getattr(fn, "name", "")):
            # Only a loop that generates: it samples or decodes each step's output (`torch.multinomial`,
            # `argmax`, fresh noise), or its function says so (`generate`, `sample`, `translate`, ...). A demo that
            # unrolls a few teacher-forced steps and prints their shapes keeps a graph too, but nothing grows there.
            return
        target = stmt.targets[0]
        if isinstance(target, ast.Name):
            pairs = [(target, value)]
        elif isinstance(target, ast.Tuple) and isinstance(value, SeqVal) and not value.homog \
                and len(value.items) == len(target.elts):
            pairs = list(zip(target.elts, value.items))
        else:
            return
        loop_vars = set()
        if isinstance(loop.node, (ast.For, ast.AsyncFor)):
            loop_vars = {n.id for n in walk(loop.node.target) if isinstance(n, ast.Name)}
        func = stmt.value.func if isinstance(stmt.value, ast.Call) else None
        if func is None or any(isinstance(n, ast.Name) and n.id in loop_vars for n in walk(func)):
            return
        read = {n.id for n in walk(stmt.value) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        counts = self.syntax("loop_stores", loop.node, _loop_store_counts)
        for elt, val in pairs:
            if not isinstance(elt, ast.Name) or elt.id not in read or elt.id not in loop.entry_keys \
                    or counts.get(elt.id, 0) != 1:
                continue
            graph = next((v for v in (val.items if isinstance(val, SeqVal) else (val,))
                          if isinstance(v, TensorVal) and v.rg is Tri.YES and v.leaf is Tri.NO), None)
            if graph is None:
                continue
            self.pending_dropped[-1].append(AccumulateEvent(stmt, elt.id, graph, stmt.value, None, "carry"))
            return

    def evaluated_by(self, value: TensorVal, state: State) -> Optional[Fact]:
        """Where a module whose parameters reach `value` was put in eval mode (`model.eval()`), if one was and still
        is, and the enclosing function (or module-level code) calls no backward: the code says it is evaluating,
        so a graph kept from it is kept for nothing. (A backward anywhere in the function may be the one that
        needs what the loop kept: `feats.append(model(x))` with batch norm frozen, then a loss on them.)"""
        region = self.stack[-1] if self.stack else self.scope.tree
        if self.syntax("has_backward", region, _has_backward) is not None:
            return None
        if value.psrc:
            for v in state.env.values():
                if isinstance(v, ModuleVal) and v.eval_at is not None and _msite(v) in value.psrc:
                    return v.eval_at
        if self.stack and state.grad is Tri.YES and _evaluation_name(getattr(region, "name", "")):
            # `def evaluate(self, sentences)`, `def validate(self, valid_iter)`: the function says what it is for
            # (OpenNMT's, flair's, ParlAI's evaluation loops without `no_grad`).
            return self.fact(region, "evaluation-function", name=region.name)
        return None

    def surely_grad_loss(self, value: Value, value_node, region: ast.AST) -> Optional[TensorVal]:
        """`value` if it surely requires grad. A loss that `region` calls backward on surely does, even when
        gradsight cannot see why (a model passed in as an argument): `loss.backward()` would raise otherwise."""
        if isinstance(value, TensorVal) and value.rg is Tri.YES:
            return value
        if not ((value is UNKNOWN or isinstance(value, TensorVal) and value.rg is Tri.MAYBE) and isinstance(
                value_node, ast.Name) and value_node.id in self.syntax("backward_on", region, _backward_names)):
            return None
        # ... unless the name read here was rebound to a number after that backward (`loss = loss.item()` below an
        # `if phase == 'train': loss.backward()`, pytorch-dc-tts): the nearest assignment above this read decides.
        above = [b for b in self.syntax("number_bindings", region, _number_bindings).get(value_node.id, ())
                 if b[0] < value_node.lineno]
        if above and max(above)[1]:
            return None
        return value.with_(rg=Tri.YES) if isinstance(value, TensorVal) else TensorVal(rg=Tri.YES)

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
        then_state, else_state = state.copy(), state.copy()
        self.refine_requires_grad(stmt.test, then_state, else_state)
        self.refine_none(stmt.test, then_state, else_state)
        # Inside a function, the `if`s whose test this analysis cannot decide are kept open while their branches
        # run (`backward_guarded_off` asks whether one gates an optimizer update).
        opened = self.frame_flags[-1].setdefault("undecided", []) if self.frame_flags else None
        if opened is not None:
            opened.append(stmt)
        try:
            then = self.exec_block(stmt.body, then_state)
            other = self.exec_block(stmt.orelse, else_state)
        finally:
            if opened is not None:
                opened.pop()
        return then.join(other)


    @staticmethod
    def refine_none(test: ast.AST, then_state: State, else_state: State) -> None:
        """`if ema is not None:` / `if ema:` (or their negations) on an object that is `None` on some path
        (`ObjectVal.maybe_none`): the object on the side where the test lets it through, `None` on the other."""
        negate = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        inner = test.operand if negate else test
        if isinstance(inner, ast.Compare) and len(inner.ops) == 1 and isinstance(inner.ops[0], (ast.Is, ast.IsNot)) \
                and isinstance(inner.comparators[0], ast.Constant) and inner.comparators[0].value is None:
            negate, inner = negate != isinstance(inner.ops[0], ast.Is), inner.left
        key = key_of(inner)
        val = then_state.get(key) if key is not None else None
        if not (isinstance(val, ObjectVal) and val.maybe_none):
            return
        obj, none = (else_state, then_state) if negate else (then_state, else_state)
        obj.set(key, replace(val, maybe_none=False))
        none.set(key, PyVal(is_none=True, truth=False))

    @staticmethod
    def refine_requires_grad(test: ast.AST, then_state: State, else_state: State) -> None:
        """`if t.requires_grad: ... else: t.cpu().numpy()` (wenet's ONNX export): on the branch where the test is
        false, `t` does not require grad; where it is true, it does."""
        negate = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        inner = test.operand if negate else test
        if not (isinstance(inner, ast.Attribute) and inner.attr == "requires_grad"):
            return
        key = key_of(inner.value)
        val = then_state.get(key) if key is not None else None
        if not isinstance(val, TensorVal) or val.rg is not Tri.MAYBE:
            return
        yes, no = (else_state, then_state) if negate else (then_state, else_state)
        yes.set(key, val.with_(rg=Tri.YES))
        no.set(key, val.with_(rg=Tri.NO, leaf=Tri.YES if val.leaf is Tri.MAYBE else val.leaf))

    def static_truth(self, test: ast.AST, state: State) -> Optional[bool]:
        """`x is None` / `x is not None` where `x` is surely None or surely an object (a tensor, a module): the
        branch taken is known (a cache filled on the first call: `if self.cached is None:`); `flag` / `not flag`
        where `flag` is surely True or False (a bool default the call left, `ret_np=False`); a test assumed by
        `split_tail`. Else None."""
        if self.assumed:
            key = _assumed_key(test)
            hit = self.assumed.get((self.frame_id(), key[0]))
            if hit is not None:
                return hit != key[1]
        if isinstance(test, ast.Constant):
            return bool(test.value)  # `if True:` / `while 1:` / `if 0:`
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.static_truth(test.operand, state)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            # `self.training and k > 0`: an `and` with a surely false operand is false, an `or` with a true one true.
            decisive = isinstance(test.op, ast.Or)
            return decisive if any(self.static_truth(v, state) is decisive for v in test.values) else None
        if isinstance(test, ast.Attribute) and test.attr == "training" and key_of(test.value) is not None:
            # `self.training` of a module its caller put in eval mode on every path (`net.eval()`, then `net(x)`).
            base = state.get(key_of(test.value))
            if isinstance(base, ModuleVal) and base.eval_sure:
                return False
        if isinstance(test, ast.Name):
            val = state.get(test.id)
            if isinstance(val, OptimizerVal):
                return True  # `if optimizer:` on a torch optimizer (no `__bool__` or `__len__`: always truthy)
            return val.truth if isinstance(val, PyVal) else None
        if isinstance(test, ast.Attribute) and test.attr == "requires_grad":
            # `if t.requires_grad:` on a tensor whose grad state is known (only with grad mode on: under no_grad a
            # leaf may still say True).
            key = key_of(test.value)
            val = state.get(key) if key is not None else None
            if isinstance(val, TensorVal) and val.rg in (Tri.YES, Tri.NO) and state.grad is Tri.YES:
                return val.rg is Tri.YES
            return None
        if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name):
            # `if self.flag:` on an object whose flag this run fixed (`instance_flag`), or on a submodule that the
            # analysed code built and now calls (`self.sepconv(x)`, its `__init__` stored `self.activate_first =
            # activate_first` from what that construction passed or left to the default, and no other method
            # changes): the branch its construction chose. Not for the unit's own module (the bottom of the stack),
            # whose callers may build it with anything.
            val = state.get(key_of(test))
            if val is None:
                base = state.get(test.value.id)
                if isinstance(base, ModuleVal) and len(self.stack) >= 2 and isinstance(base.cls, ClassInfo):
                    val = base.attr(test.attr)
                    if isinstance(val, PyVal) and val.truth is not None:  # the methods are read only then
                        changed = self.method_mutations(base.cls, None)
                        val = val if test.attr not in changed and "*" not in changed else None
                else:
                    val = base.attr(test.attr) if isinstance(base, ObjectVal) else None
            return val.truth if isinstance(val, PyVal) else None
        if isinstance(test, ast.Call) and test.args and not test.keywords:
            # `isinstance(x, torch.Tensor)` (or `Variable`, its old name, or a tuple naming one) / `torch.is_tensor(x)`
            # where `x` is surely a tensor or surely not one.
            fn, cls = self.static_qual(test.func), test.args[-1]
            if fn == "torch.is_tensor" or (fn == "builtins.isinstance" and len(test.args) == 2 and any(
                    self.static_qual(c) in _TENSOR_CLASSES for c in (cls.elts if isinstance(cls, ast.Tuple) else [cls]))):
                key = key_of(test.args[0])
                val = state.get(key) if key is not None else None
                if isinstance(val, TensorVal):
                    return True
                if isinstance(val, PyVal) and (val.scalar or val.is_none or val.truth is not None):
                    return False
            elif fn == "builtins.isinstance" and len(test.args) == 2:
                # `isinstance(x, np.ndarray)` (or list, int, ...) on what is surely a tensor: False. The classes
                # must all be known non-tensor ones (a tuple of them too); a subclass check stays unknown.
                classes = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
                quals = [self.static_qual(c) for c in classes]
                key = key_of(test.args[0])
                val = state.get(key) if key is not None else None
                if isinstance(val, TensorVal) and quals and all(q in _NOT_TENSOR_CLASSES for q in quals):
                    return False
                if set(quals) <= _PARAMETER_CLASSES and (isinstance(val, ModuleVal) or isinstance(
                        val, TensorVal) and (val.param or val.leaf is Tri.NO)):
                    # `isinstance(m, nn.Parameter)`: a module or a computed tensor is none, a parameter is one
                    # (dytox's `freeze_parameters(m)` handed either).
                    return isinstance(val, TensorVal) and val.param
                if set(quals) <= _MODULE_CLASSES and isinstance(val, (ModuleVal, TensorVal)):
                    return isinstance(val, ModuleVal)
            return None
        bool_test = bool_compare_truth(test, state)
        if bool_test is not None:
            return bool_test
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
        elif isinstance(val, ObjectVal) and val.maybe_none:
            return None
        elif isinstance(val, (TensorVal, ModuleVal, ObjectVal, OptimizerVal, ParamsVal)):
            is_none = False
        else:
            return None
        return is_none if isinstance(test.ops[0], ast.Is) else not is_none


    def loop_receivers(self, loop: ast.AST, state: State) -> tuple:
        """`LoopEvent.receivers`: the objects of known classes whose methods the loop calls (`self.mart_loss(x, y)` of
        a trainer whose base class is in another file)."""
        out = []
        for recv in self.syntax("receiver_names", loop, lambda n: _receiver_names(n, self.nodes(n))):
            val = state.get(recv)
            cls = getattr(val, "cls", None) if isinstance(val, (ObjectVal, ModuleVal)) else None
            if not isinstance(cls, ClassInfo):
                continue
            attrs = {k for k, _ in val.attrs} | {k[len(recv) + 1:].split(".", 1)[0].split(":", 1)[0]
                                                 for k in state.env if k.startswith(recv + ".")}
            methods = self.syntax("methods", cls.node, lambda _n, c=cls: _class_methods(c, self.class_bases))
            out.append((recv, frozenset(attrs), tuple((name, f.node) for name, f in methods.items()),
                        self.unseen_base(cls)))
        return tuple(out)

    def unseen_base(self, info: ClassInfo, depth: int = 0) -> bool:
        """Whether the class has, up its bases, one gradsight cannot see (not torch's, not `object`)."""
        for b in self.class_bases(info):
            if isinstance(b, ClassInfo):
                if depth < 8 and self.unseen_base(b, depth + 1):
                    return True
            elif isinstance(b, str) and b not in ("object", "builtins.object") and not b.startswith("torch."):
                return True
        return False


    def stmt_Return(self, stmt: ast.Return, state: State) -> State:
        value = self.eval(stmt.value, state) if stmt.value is not None else PyVal(is_none=stmt.value is None)
        capture = self.capture
        if capture is not None and id(stmt) in capture:
            seen = capture[id(stmt)]
            capture[id(stmt)] = state.copy() if seen is None else seen.join(state)
        if self.returns:
            self.returns[-1].append(value)
        if self.return_exports and self.return_exports[-1] is not None:
            prefix = self.return_exports[-1]
            self.return_states[-1].append({k: state.env[k] for k in state.compound if k.startswith(prefix)})
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
                mode = "grad-mode-enabled" if ctx.enabled is Tri.YES else "grad-mode-disabled"
                state.grad_why = self.fact(item.context_expr, mode, label=ctx.label)
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
                state.forget(k)
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
            elif n == 2 and isinstance(value, TensorVal) and _values_indices(stmt, target):
                # `vals, idx = torch.topk(x, k)` (sort, kthvalue, mode, max/min/median along a dim, cummax, cummin):
                # the values carry `x`'s history, the indices are integers without any.
                call = stmt.value
                idx = TensorVal(rg=Tri.NO, leaf=Tri.YES, is_int=Tri.YES, origin=self.expr_fact(call),
                                nograd=self.fact(call, "not-differentiable", op=f"{call.func.attr} indices"))
                items = [value, idx]
            else:
                items = [self.element_of(value)] * n
            for elt, val in zip(target.elts, items):
                self.assign(elt, val, state, stmt)
            return
        if isinstance(target, ast.Starred):
            self.assign(target.value, UNKNOWN, state, stmt)
            return
        if isinstance(target, (ast.Attribute, ast.Subscript)) and _may_thaw(target, value, stmt):
            self.thaw_above(key_of(target) or "", state)
        if isinstance(target, ast.Subscript):
            base = self.eval(target.value, state)
            self.eval(target.slice, state)
            if isinstance(base, TensorVal) and not _str_key(target):  # (`out[-1]['hm'] = ...`: a dict's entry)
                self.inplace(target.value, base, "__setitem__", state, stmt, rhs=[value])
                return
            if base is UNKNOWN and state.grad is Tri.YES and self.reporting:
                # `self.queue[:, :bs] = z` on a buffer registered elsewhere: whether it held a graph is not known
                # here; the rule decides from the class's code.
                self.check_store_graph(target.value, "__setitem__", [value], stmt, False)
            if isinstance(base, MapVal) and key_of(target.value):
                # A store into a dict of one class's objects: what any key may hold now is the join.
                joined = base.join(MapVal(value)) if isinstance(value, ObjectVal) else UNKNOWN
                state.set(key_of(target.value), joined)
            if isinstance(base, SeqVal) and key_of(target.value) and (base.homog or key_of(target) is None):
                # A store into a summarised list, or at an index that is not a constant (`ws[i] = ws[i].detach()`
                # in a `range` loop): which item changed is not known, so the list is (docs/heap.md). Before, a
                # list with known items kept them all, and DeepRobust's Meta-Self read the computed weights of
                # its last update back after `ws[i] = ws[i].detach()` (a GS209 error on a leaf).
                state.set(key_of(target.value), UNKNOWN)
                return
            key = key_of(target)
            if key is None and state.compound and key_of(target.value):
                # `loss_dict[key] = value.item()` over `loss_dict.items()`: the entries may be floats now (DBNet).
                state.weak_items(key_of(target.value), value)
            if key:
                if isinstance(base, ModuleVal):
                    self.check_reassign(key, state.get(key), value, state, stmt)
                if self.self_names and self.self_names[-1] is not None \
                        and key.startswith(self.self_names[-1] + "."):
                    value = self._kept_on_object(value, target, stmt)  # `self.state["h"] = h`: kept on the object
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
                and key.startswith(self.self_names[-1] + "."):
            # A graph kept on the object outlives this call: a later call's backward can reach it. A tuple of
            # tensors (an LSTM's `(h, c)` state) keeps each one's graph.
            value = self._kept_on_object(value, target, stmt)
            if self.reporting and state.grad is Tri.YES and isinstance(value, TensorVal) and value.rg is Tri.YES \
                    and value.leaf is Tri.NO and key.count(".") == 1 and self.stack \
                    and getattr(self.stack[-1], "name", "") == "forward" \
                    and isinstance(state.get(self.self_names[-1]), ModuleVal):
                self.emit(SelfStoreEvent(stmt, "self." + target.attr, value))
        state.set(key, value)
        self.record(target, value)

    def _kept_on_object(self, value: Value, target: ast.AST, stmt: ast.AST, fact=None) -> Value:
        """`value` with `stored` set on every tensor with a graph in it (itself, or the items of a tuple)."""
        def graph(v) -> bool:
            return isinstance(v, TensorVal) and v.rg is not Tri.NO and v.leaf is not Tri.YES and v.stored is None

        if graph(value):
            return value.with_(stored=fact or self.fact(stmt, "kept-on-object", expr=self.seg(target)))
        if isinstance(value, SeqVal) and not value.homog and any(graph(v) for v in value.items):
            fact = fact or self.fact(stmt, "kept-on-object", expr=self.seg(target))
            return SeqVal(tuple(self._kept_on_object(v, target, stmt, fact) for v in value.items))
        return value

    def set_requires_grad_attr(self, target: ast.Attribute, base: TensorVal, value: Value, state: State, stmt) -> None:
        flag = const_bool(getattr(stmt, "value", None)) if isinstance(stmt, ast.Assign) else None
        flag_t = Tri.of(flag)
        self.emit(FactoryEvent(stmt, base, f"attr:{target.attr}", flag_t, state.grad, state.inference))
        key = key_of(target.value)
        if target.attr != "requires_grad" or key is None or base.leaf is not Tri.YES:
            return
        site = self.site(stmt)
        new = base.with_(rg=flag_t, nograd=None if flag_t is not Tri.NO else self.fact(stmt, "requires-grad-attribute", flag="False"),
                         sources=base.sources | ({site} if flag_t is Tri.YES and not base.param else set()))
        if flag_t is Tri.YES and not base.param and not base.evidence:  # as for `requires_grad_()` (interp_ops)
            self.grad_leaves.setdefault(site, ("requires_grad = True", self.fact(stmt, "requires-grad-attribute", flag="True")))
        state.set(key, new)

    def check_reassign(self, key: str, old: Optional[Value], new: Value, state: State, stmt) -> None:
        value_node = getattr(stmt, "value", None)
        reads_grad = value_node is not None and key in self.syntax("grad_reads", value_node, _grad_read_keys)
        frame = self.frame_optimized[-1] if self.frame_optimized else {}
        owner = next((k for k in frame if key.startswith((k + ".", k + "["))), None)
        where = frame.get(owner) if owner is not None else None
        if owner is None:
            owner = next((k for k in self.optimized_modules if type(k) is str and key.startswith((k + ".", k + "["))),
                         None)
            where = self.optimized_modules.get(owner) if owner is not None else None
        if where is not None and isinstance(new, ModuleVal) and self.reporting and self.optimizer_rebuilt(stmt, where):
            where = None
        if reads_grad or (owner is not None and isinstance(new, ModuleVal)):
            next_use = self.next_use_after(key, stmt) if reads_grad and self.reporting else None
            self.emit(ReassignEvent(stmt, key, old, new, reads_grad, where, next_use, state.grad))

    def optimizer_rebuilt(self, stmt: ast.stmt, where: Fact) -> bool:
        """Whether the optimizer built at `where` (`name = optim.SGD(...)`) is bound anew after the layer swap `stmt`,
        on every path, before anything reads it: an incremental-learning loop swaps the classifier, then builds this
        iteration's optimizer over the new parameters; the stale one is never stepped again."""
        if where.path is not None:
            return False
        func = self.stack[-1] if self.stack else None
        body = func.body if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) else self.scope.tree.body
        built = next((n for n in walk(func if func is not None else self.scope.tree)
                      if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.value, ast.Call)
                      and n.value.lineno == where.line), None)
        name = key_of(built.targets[0]) if built is not None else None
        path = _block_path(body, stmt) if name is not None else None
        if path is None:
            return False

        def rebuilds(s: ast.stmt) -> bool:
            if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and key_of(s.targets[0]) == name
                    and isinstance(s.value, ast.Call)):
                return False
            qual = self.static_qual(s.value.func) or ""
            return qual.startswith("torch.optim.") and not qual.startswith("torch.optim.lr_scheduler.") \
                and not _mentions(s.value, name)

        declared = func is not None and any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names
                                            for n in walk(func))
        return _rebuilt_before_use(path, name, rebuilds, local="." not in name and "[" not in name and not declared)

    def next_use_after(self, key: str, stmt: ast.AST) -> Optional[tuple]:
        """What happens next to `key` after the rebinding `stmt`, in execution order: the rest of the
        enclosing loop body, then (next iteration) its start up to and including `stmt`; outside a loop, the rest
        of the enclosing function or module. ("grad", Fact) for a read of `key.grad`, ("backward", Fact) for a
        backward call, ("reset", Fact) for a statement that rebinds `key` or makes it require grad again."""
        in_loop = bool(self.loops)
        region = self.loops[-1].node if in_loop else (self.stack[-1] if self.stack else self.scope.tree)
        found = []
        for node in walk(region):
            kind = _use_kind(node, key)
            if kind is not None and hasattr(node, "lineno"):
                found.append(((node.lineno, node.col_offset), kind, node))
        if isinstance(region, (ast.For, ast.AsyncFor, ast.While)):
            # The loop header (iterable, test) is not part of an iteration's body.
            head = {id(n) for n in walk(region.iter if not isinstance(region, ast.While) else region.test)}
            found = [f for f in found if id(f[2]) not in head]
            if not isinstance(region, ast.While) and any(key_of(n) == key for n in walk(region.target)):
                # Rebinding the loop's own variable: the update is lost unless the new value is read afterwards.
                end_pos = (getattr(stmt, "end_lineno", stmt.lineno), getattr(stmt, "end_col_offset", 0))
                for n in walk(region):
                    if isinstance(n, (ast.Name, ast.Attribute, ast.Subscript)) and isinstance(n.ctx, ast.Load) \
                            and key_of(n) == key and (n.lineno, n.col_offset) >= end_pos:
                        return "reset", self.expr_fact(n)
                return "loopvar", self.expr_fact(region.target)
        start = (stmt.lineno, stmt.col_offset)
        end = (getattr(stmt, "end_lineno", stmt.lineno), getattr(stmt, "end_col_offset", 0))
        after = sorted((f for f in found if f[0] >= end), key=lambda f: f[0])
        before = sorted((f for f in found if f[0] < end and f[2] is not stmt), key=lambda f: f[0]) if in_loop else []
        for _, kind, node in after + before:
            if node is stmt or (kind == "reset" and start <= (node.lineno, node.col_offset) < end):
                continue
            return kind, self.expr_fact(node)
        return None

    def element_of(self, value: Value) -> Value:
        if isinstance(value, ParamsVal):
            if value.frozen:  # a module frozen by `requires_grad_(False)`
                return TensorVal(rg=Tri.NO, leaf=Tri.YES, param=True, origin=value.origin, is_int=Tri.NO,
                                 nograd=value.origin)
            # `weak`: an unseen object's parameters paired with another model's by `zip` (an EMA copy of an unseen
            # model): whether they require grad is not known.
            unseen = value.evidence or value.weak
            return TensorVal(rg=Tri.MAYBE if value.weak else Tri.YES, leaf=Tri.YES, param=True, origin=value.origin,
                             is_int=Tri.NO, psrc=value.module_sites, evidence=unseen, psrc_partial=unseen)
        if isinstance(value, SeqVal) and value.items:
            return join_all(value.items)
        if isinstance(value, PyVal):
            return PyVal(cut=value.cut, pcut=value.pcut, scalar=value.scalar_items)
        if isinstance(value, TensorVal):
            return self_view(value)
        if isinstance(value, ModuleVal) and value.layers:
            # Iterating a frozen container (`for block in self.blocks:`) yields children frozen with it.
            return join_all(frozen_layers(value, value.layers))
        return UNKNOWN


EVALUATION_WORDS = frozenset({"eval", "evaluate", "evaluation", "validate", "validation"})


def _evaluation_name(name: str) -> bool:
    """Whether a function's name says it evaluates: one of its words (`_`-separated, or camelCase) is `eval`,
    `evaluate`, `validate` or `validation` (`evaluate`, `validate_epoch`, `run_eval`, `evalStep`), or its first
    word is `val` (`val_step`, `val_epoch`; elsewhere `val` is often a value: `compute_target_val`)."""
    words = [w.lower() for part in name.split("_") for w in re.findall(r"[a-z]+|[A-Z][a-z]*", part)]
    return any(w in EVALUATION_WORDS for w in words) or words[:1] == ["val"]


GENERATION_WORDS = frozenset({"generate", "generation", "sample", "sampling", "decode", "decoding", "translate",
                              "synthesize", "synthesis", "infer", "inference", "predict", "beam", "greedy",
                              "autoregressive", "rollout"})
_SAMPLING_CALLS = frozenset({"multinomial", "argmax", "topk", "sample", "randn", "randn_like", "rand", "rand_like",
                             "normal", "bernoulli", "choice", "categorical", "gumbel_softmax"})


def _generation_name(name: str) -> bool:
    """Whether a function's name says it generates (`generate_text`, `sample`, `translate`, `greedy_decode`)."""
    words = [w.lower() for part in name.split("_") for w in re.findall(r"[a-z]+|[A-Z][a-z]*", part)]
    return any(w in GENERATION_WORDS for w in words)


def _samples(loop: ast.AST, nodes: Optional[list] = None) -> bool:
    """Whether the loop body samples or decodes: a call of `multinomial`, `argmax`, `topk`, `.sample()`, fresh
    noise (`torch.randn_like`), ... (by the called name). `nodes`: `walk(loop)`, where the caller has it."""
    for n in (walk(loop) if nodes is None else nodes):
        if isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if name in _SAMPLING_CALLS:
                return True
    return False


def _last_items_backwarded(loop: ast.AST, nodes: Optional[list] = None) -> frozenset:
    """The lists whose last item the loop runs a backward on (`losses[-1].backward()`), as reference keys.
    `nodes`: `walk(loop)`, where the caller has it."""
    out = set()
    for n in (walk(loop) if nodes is None else nodes):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward" \
                and isinstance(n.func.value, ast.Subscript):
            index = n.func.value.slice
            key = key_of(n.func.value.value)
            if key is not None and isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub) \
                    and isinstance(index.operand, ast.Constant) and index.operand.value == 1:
                out.add(key)
    return frozenset(out)


def _counts_up(loop: ast.AST, name: str) -> bool:
    """Whether the loop body adds a constant to `name` (`step_count += 1`) and binds it nowhere else."""
    ups = binds = 0
    for n in walk(loop):
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id == name:
            ups += isinstance(n.op, ast.Add) and isinstance(n.value, ast.Constant)
            binds += 1
        elif isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
            binds += 1
    return ups == 1 and binds == 1


def _may_thaw(target: ast.AST, value: Value, stmt: ast.AST) -> bool:
    """Whether storing `value` at `target` may give the modules above it a parameter that requires grad: a new layer
    or parameter (`model.fc = nn.Linear(...)` after freezing `model`), or `requires_grad` set to anything but
    False (`model.weight.requires_grad = True`)."""
    if isinstance(target, ast.Attribute) and target.attr == "requires_grad":
        return const_bool(getattr(stmt, "value", None)) is not False
    if isinstance(value, ModuleVal):
        return value.has_params is not Tri.NO
    return isinstance(value, TensorVal) and value.param and value.rg is not Tri.NO


def _receiver_names(loop: ast.AST, nodes: Optional[list] = None) -> tuple:
    """The plain names the loop calls methods on (`self` in `self.mart_loss(x, y)`), in the order of a walk.
    `nodes`: `walk(loop)`, where the caller has it."""
    return tuple(dict.fromkeys(n.func.value.id for n in (walk(loop) if nodes is None else nodes) if isinstance(n, ast.Call)
                               and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)))


def _values_indices(stmt: ast.AST, target: ast.AST) -> bool:
    """`stmt` is `a, b = <op>(...)` for an op that returns (values, indices) (`values_indices_call`)."""
    if type(stmt) is not ast.Assign or len(stmt.targets) != 1 or stmt.targets[0] is not target:
        return False
    return values_indices_call(stmt.value)


def _str_key(target: ast.Subscript) -> bool:
    """A store through a string key: no tensor takes one, so the value taken for a tensor is a mapping."""
    return isinstance(target.slice, ast.Constant) and type(target.slice.value) is str
