"""Calls: dispatch on the callee, torch and builtin functions by qualified name, factories, modules and optimizers
being built."""

from __future__ import annotations

import ast
import itertools
from dataclasses import replace
from typing import Optional

from . import torchdb as db
from .astwalk import walk
from .events import (CheckpointEvent, FactoryEvent, FuncGradEvent, GraphCutEvent, ModuleCallEvent,
                     ModuleMethodOnTensorEvent, NumpyEvent,
                     OptimizerEvent, TensorIteratedEvent, ViewInplaceEvent)
from .interp_util import (FUNC_GRAD_TRANSFORMS, REQUIRES_GRAD_SPELLINGS, _backward_names, _fsite, _is_static, _is_tensor_function,
                          _literal_dtype, _literal_shape, _pcut_of, const_bool, flat_tensors, key_of, kwarg,
                          layers_have_params, map_tensors)
from .init_optimizers import init_optimizers
from .custom_functions import FUNCTION_BASES, returned_input
from .interp_dists import KL_FUNCS, is_distribution
from .views import view_binding
from .interp_super import is_super_call, super_call
from .self_methods import own_method
from .state import State
from .values import (CREATED_WITHOUT_GRAD, UNKNOWN, BoundMethod, ClassVal, DistVal, FuncVal, GradModeCtx, ModuleRef, ModuleVal, NameOf,
                     MapVal, ObjectVal, OptimizerVal, ParamsVal, PyVal, SeqVal, TensorVal, Tri, Value, carries_graph,
                     map_of_pairs, summarise)


# Tensor methods that return several views at once (`TensorIteratedEvent`, GS312).
_SPLITTING = frozenset({"unbind", "chunk", "split", "tensor_split"})


class CallsMixin:
    """Part of `Interpreter` (see interp.py)."""

    def run_trained_model(self, model: ast.AST, node: ast.AST, state: State, ins: Optional[list] = None) -> Value:
        """`model(x)` (or `model.forward(x)`) on an object gradsight cannot see whose parameters an optimizer
        trains, in grad mode: an output with a graph (evidence of use), or UNKNOWN when there is no such evidence.
        `ins`: the values of the call's arguments (default: those of its arguments that are names)."""
        model_key = key_of(model)
        if model_key is None:
            return UNKNOWN
        frame = self.stack[-1] if self.stack else None
        trained = self.evidence_models.get((id(frame) if frame is not None else None, model_key))
        me = self.self_names[-1] if self.self_names else None
        if trained is None and frame is not None and me and model_key.startswith(me + ".") \
                and model_key.count(".") == 1:
            owner = self.method_class(frame)
            if owner is not None:
                trained = self.evidence_models.get((("class", owner), "self." + model_key[len(me) + 1:]))
        psaved: frozenset = frozenset()
        psrc: frozenset = frozenset()
        hit = self.init_table(model)
        if hit is not None and hit[0] in hit[1][1]:
            call = hit[1][1][hit[0]]
            # The model `__init__` hands to an optimizer, identified by that call: its output's graph runs through
            # parameters an optimizer trains (GS421 compares a bootstrap value's model with the prediction's).
            site = _init_site(call)
            psrc = frozenset({site})
            self.note_trained(psrc)
            self.optimized_modules.setdefault(NameOf(site), model_key)
            if trained is None:
                trained = self.fact(call, "optimizer-trains", op=self.seg(call.func), model=model_key)
            if ins is None:
                ins = [state.get(key_of(a)) for a in list(node.args) + [k.value for k in node.keywords]
                       if key_of(a) is not None]
            if any(isinstance(v, TensorVal) and v.rg is Tri.YES for v in ins):
                # Its input requires grad, so its layers save the weights they multiply it by (a `Linear`'s
                # weight, for the input's gradient): a step of its optimizer before this graph's backward bumps
                # their versions (GS308).
                psaved = frozenset({_init_site(call)})
        if trained is None:
            return UNKNOWN
        stmt = self.current_stmt
        if type(stmt) is ast.Assign and stmt.value is node and trained.line > node.lineno \
                and any(key_of(t) == model_key for t in stmt.targets):
            # `model = model(num_classes=10)` (a factory looked up by name, then called): the optimizer built after
            # it trains what the call made, not what was called.
            return UNKNOWN
        return TensorVal(rg=Tri.YES, leaf=Tri.NO, evidence=True, psrc_partial=True, psaved=psaved, psrc=psrc,
                         origin=self.fact(node, "runs-trained-model", trained, expr=self.seg(node), model=model_key))

    def unknown_view_detach(self, ref: ast.Name, node: ast.Call, state: State) -> None:
        """`t.detach_()` on a value gradsight cannot see, where the function binds `t` once, to a view of what it
        reads (`views.view_binding`): it raises whatever `t`'s grad state. Evidence from use (that `t` answers
        `detach_()` is what makes it a tensor), so the finding is a warning."""
        region = self.stack[-1] if self.stack else self.scope.tree
        made = self.syntax("view-binding:" + ref.id, region, lambda r: view_binding(r, ref.id, self.static_qual))
        if made is None:
            return
        target = TensorVal(rg=Tri.MAYBE, leaf=Tri.NO, evidence=True, view=self.fact(made, "view", expr=self.seg(made)))
        self.emit(ViewInplaceEvent(node, target, self.seg(ref), "detach_", state.grad))

    def init_table(self, ref: ast.AST):
        """(`A`, `init_optimizers` table) for `self.A` in a method of a class of this file whose `__init__` builds
        an optimizer over a model it keeps; None otherwise."""
        me = self.self_names[-1] if self.self_names else None
        if not (me and self.stack and isinstance(ref, ast.Attribute) and isinstance(ref.value, ast.Name)
                and ref.value.id == me):
            return None
        owner = self.method_class(self.stack[-1])
        cls = next((info.node for info in list(self.scope.classes.values()) if id(info.node) == owner), None)
        if cls is None:
            return None
        table = self.syntax("init-optimizers", cls, lambda c: init_optimizers(c, self.static_qual))
        if table[2] is None:
            return None
        if self.track is not None and getattr(self, "home", None) is self.scope:
            # The answer reads `__init__`'s text: a cached result of this unit holds only while it is unchanged.
            self.track.add(table[2])
        return ref.attr, table

    def trains_in_init(self, ref: ast.AST) -> bool:
        """`ref` is `self.Y`, a model whose parameters the class's `__init__` hands to an optimizer."""
        hit = self.init_table(ref)
        return hit is not None and hit[0] in hit[1][1]

    def init_optimizer(self, ref: ast.AST) -> Optional[OptimizerVal]:
        """`self.X` when the class's `__init__` stores into it an optimizer over `self.Y`'s parameters (and nothing
        else stores either): an optimizer of those parameters, identified by the first optimizer over `self.Y`."""
        hit = self.init_table(ref)
        if hit is None or hit[0] not in hit[1][0]:
            return None
        model, short, call = hit[1][0][hit[0]]
        owner = f"{ref.value.id}.{model}"
        return OptimizerVal(origin=self.fact(call, "optimizer", op=short), owner=owner,
                            module_sites=frozenset({_init_site(hit[1][1][model])}))

    def backwarded_method(self, func: ast.Attribute, node: ast.Call) -> Value:
        """`self.model.calculate_loss(scores, batch)` on an attribute of `self` gradsight cannot see, in grad mode,
        where another method of the class binds the same call's result to a name it backwards (`loss =
        self.model.calculate_loss(...)`, then `loss.backward()`): a tensor with a graph (evidence of use), as in
        that method. UNKNOWN otherwise."""
        frame = self.stack[-1] if self.stack else None
        me = self.self_names[-1] if self.self_names else None
        key = key_of(func)
        if frame is None or not me or key is None or not key.startswith(me + ".") or key.count(".") != 2:
            return UNKNOWN
        owner = self.method_class(frame)
        cls = next((info.node for info in list(self.scope.classes.values()) if id(info.node) == owner), None)
        if cls is None:
            return UNKNOWN
        lines = self.scope.source.lines
        calls = self.syntax("backwarded_calls", cls, lambda c: _backwarded_calls(c, lines))
        if self.track is not None and getattr(self, "home", None) is self.scope:
            # The answer reads those methods' text: a cached result of this unit holds only while it is unchanged.
            self.track.update(set(calls.values()))
        where = calls.get("self." + key[len(me) + 1:])
        if where is None or where is frame:
            return UNKNOWN
        return TensorVal(rg=Tri.YES, leaf=Tri.NO, evidence=True, psrc_partial=True,
                         origin=self.fact(node, "gives-backwarded-loss", expr=self.seg(node), method=where.name))

    def method_class(self, fn: ast.AST):
        """The id of the class node that defines method `fn` (in the file being analysed or the one it runs in)."""
        memo = self.__dict__.setdefault("_method_class", {})
        if id(fn) not in memo:
            memo[id(fn)] = next((id(info.node) for info in list(self.scope.classes.values())
                                 if any(m.node is fn for m in info.methods.values())), None)
        return memo[id(fn)]

    def stored_on_self(self, key: str):
        """(class id, `self.attr`) for a parameter `key` of the `__init__` running now that it stores as
        `self.attr = key`, or for `key` itself when it is `self.attr`; else None."""
        if not self.stack or not self.self_names or not self.self_names[-1]:
            return None
        fn = self.stack[-1]
        owner = self.method_class(fn)
        if owner is None:
            return None
        me = self.self_names[-1]
        if key.startswith(me + ".") and key.count(".") == 1:
            return owner, "self." + key[len(me) + 1:]
        if getattr(fn, "name", "") != "__init__" or "." in key:
            return None
        for stmt in fn.body:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and stmt.value.id == key \
                    and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Attribute) \
                    and isinstance(stmt.targets[0].value, ast.Name) and stmt.targets[0].value.id == me:
                return owner, "self." + stmt.targets[0].attr
        return None

    # ------------------------------------------------------------------ calls
    def expr_Call(self, node: ast.Call, state: State) -> Value:
        val = self.call_expr(node, state)
        for group in (node.args, node.keywords) if node.args or node.keywords else ():
            for a in group:
                # A module handed to a call may come back in training mode (`train_epoch(model)` runs `model.train()`).
                a = a.value if type(a) is ast.keyword else a
                key = a.id if type(a) is ast.Name else key_of(a) if type(a) is ast.Attribute else None
                held = state.env.get(key) if key is not None else None
                if type(held) is ModuleVal and held.eval_sure:
                    state.env[key] = replace(held, eval_sure=False)  # the same reference: what is under it stays
        return val

    def call_expr(self, node: ast.Call, state: State) -> Value:
        func = node.func
        if isinstance(func, ast.Call) and func.args and self.static_qual(func.func) in FUNC_GRAD_TRANSFORMS:
            return self.func_grad_call(node, state)
        # Method call on a value: evaluate the receiver once.
        if isinstance(func, ast.Attribute):
            if is_super_call(func):
                val = super_call(self, node, state)
                if val is not None:
                    return val
            recv = self.eval(func.value, state)
            if func.attr == "requires_grad_" and not (node.args and const_bool(node.args[0]) is False) \
                    and key_of(func.value) is not None:
                # `model.fc.requires_grad_()`, `model.weight.requires_grad_(True)` after freezing `model`: whatever
                # the receiver is, the modules above it may require grad again.
                self.thaw_above(key_of(func.value), state)
            if isinstance(recv, TensorVal):
                args = [(a, self.eval(a, state)) for a in node.args]
                kwvals = {}
                for kw in node.keywords:
                    v = self.eval(kw.value, state)
                    if kw.arg:
                        kwvals[kw.arg] = (kw.value, v)
                if func.attr in db.MODULE_ONLY_METHODS:
                    self.emit(ModuleMethodOnTensorEvent(node, func.attr, recv, self.seg(func.value)))
                elif func.attr in _SPLITTING and recv.rg is Tri.YES:
                    self.emit(TensorIteratedEvent(node, func.attr, recv, self.seg(func.value), state.grad))
                val = self.tensor_method(func.attr, func.value, recv, args, node, state, kwvals)
                self.record(node, val)
                self.last_method = (node, recv)  # for `stmt_Expr`: a statement that discards a new tensor
                return val
            if isinstance(recv, ModuleVal):
                return self.module_method(recv, func, node, state)
            if isinstance(recv, MapVal):
                # A dict of one class's objects: its values are that object; a method that may change it makes it
                # unknown.
                args, kwargs = self.eval_args(node, state)
                if func.attr == "values" and not args:
                    return SeqVal((recv.item,), homog=True)
                if func.attr == "items" and not args:
                    return SeqVal((SeqVal((UNKNOWN, recv.item)),), homog=True)
                if func.attr == "get" and len(args) == 1 and not kwargs:
                    return recv.item  # or None, on which any use of it as the object raises
                if func.attr not in ("keys", "copy", "__len__", "__contains__") and key_of(func.value) is not None:
                    state.set(key_of(func.value), UNKNOWN)
                self.escapes([v for _, v in args] + [v for _, v in kwargs.values()])
                return UNKNOWN
            if isinstance(recv, ClassVal) and func.attr == "apply":
                val = self.custom_function_apply(recv.info, node, state)
                if val is not None:
                    self.record(node, val)
                    return val
            if isinstance(recv, DistVal):
                val = self.distribution_method(recv, func, node, state)
                self.record(node, val)
                return val
            if func.attr == "step" and not node.args and not node.keywords and (
                    recv is UNKNOWN or isinstance(recv, OptimizerVal) and not recv.module_sites):
                # `self.qf1_optimizer.step()` in a trainer whose `__init__` built it over a model it was handed.
                recv = self.init_optimizer(func.value) or recv
            if isinstance(recv, OptimizerVal):
                for a in node.args:
                    self.eval(a, state)
                if func.attr == "step" and not node.args and not node.keywords and recv.module_sites:
                    self.optimizer_step(recv, func, node, state)
                return PyVal()
            if isinstance(recv, SeqVal) or (recv is UNKNOWN and func.attr == "append"):
                key = key_of(func.value)
                added = None
                if func.attr in ("append", "insert") and node.args:
                    added = (self.eval(node.args[-1], state),)
                    if func.attr == "insert":
                        self.eval(node.args[0], state)
                elif func.attr == "extend" and node.args:
                    more = self.eval(node.args[0], state)
                    added = more.items if isinstance(more, SeqVal) else None
                if isinstance(recv, SeqVal) and key and func.attr in (
                        "append", "extend", "insert", "__setitem__", "__iadd__", "pop", "remove", "clear"):
                    # A list that grows is summarised: one element standing for all it may hold (the join of the
                    # old elements and the new ones). Anything else makes it unknown.
                    state.set(key, summarise(recv.items + added) if added is not None else UNKNOWN)
                if func.attr == "append" and node.args:
                    self.check_accumulate(node, func.value, added[0], node.args[-1], state, "append")
                    if recv is UNKNOWN:
                        self.escapes(added)  # into a list of the caller's (or of code gradsight cannot see)
                    return PyVal()
                if added is not None:
                    return PyVal()
            if isinstance(recv, PyVal) and recv.is_none:
                # A method of what is surely None (a parameter left to `autoencoder=None`, analysed on its own):
                # on None the call raises, so the path that goes on had the caller pass an object, whatever it is.
                # The result and the name are unknown there, never data.
                self.eval_args(node, state)
                key = key_of(func.value)
                if key is not None:
                    state.set(key, UNKNOWN)
                return UNKNOWN
            if isinstance(recv, PyVal):
                vals = [self.eval(a, state) for a in node.args]
                return PyVal(cut=recv.cut, pcut=_pcut_of([recv] + vals))
            if recv is UNKNOWN and func.attr == "parameters" and key_of(func.value) is not None \
                    and (func.value.id not in self.scope.imports if isinstance(func.value, ast.Name) else True):
                # The parameters of an object gradsight cannot see (a model from another package, a name bound to
                # one of several classes): leaves that require grad unless something froze them. Evidence of use.
                self.eval_args(node, state)
                return ParamsVal(origin=self.fact(node, "parameters-of", expr=self.seg(func.value)),
                                 owner=key_of(func.value), evidence=True)
            if recv is UNKNOWN and (func.attr == "eval" and not node.args and not node.keywords
                                    or func.attr == "train" and len(node.args) == 1 and const_bool(node.args[0]) is False) \
                    and key_of(func.value) is not None \
                    and (func.value.id not in self.scope.imports if isinstance(func.value, ast.Name) else True):
                # `model.eval()` on an object gradsight cannot see (a function's parameter, `self.model` handed
                # in): it is a module, now in eval mode, whose parameters require grad unless something froze them.
                # Evidence of use (findings built on it are warnings), as for `torch.load`.
                key = key_of(func.value)
                mod = ModuleVal("torch.nn.Module", has_params=Tri.YES, evidence=True,
                                eval_at=self.expr_fact(node, "eval-mode"), eval_sure=True,
                                origin=self.fact(node, "module-by-use", expr=self.seg(func.value)))
                state.set(key, mod)
                return mod
            if recv is UNKNOWN and func.attr == "requires_grad_" and isinstance(func.value, ast.Call) \
                    and (not node.args or const_bool(node.args[0]) is True) and not node.keywords \
                    and isinstance(func.value.func, (ast.Name, ast.Attribute)) \
                    and not isinstance(self.eval(func.value.func, state), ClassVal):
                # `f(...).requires_grad_(True)` on a result gradsight cannot see (botorch's
                # `columnwise_clamp(X).requires_grad_(True)`): a tensor now requires grad (an `nn.Module` would
                # also answer `requires_grad_`, but a call's result made to require grad and kept is a tensor in
                # practice). Evidence of use: findings built on it are warnings. Whether it is a leaf is not known.
                return TensorVal(rg=Tri.YES, leaf=Tri.MAYBE, evidence=True,
                                 origin=self.expr_fact(node, "made-require-grad"), storage=self.site(node))
            if recv is UNKNOWN and func.attr == "detach" and not node.args and not node.keywords:
                # `t.detach()` on a value gradsight cannot see (a tensor from `ctx.saved_tensors`, a function's
                # argument): what answers `detach()` is a tensor in practice, and the result is a leaf without
                # grad that shares the receiver's storage. Evidence of use: findings built on it are warnings.
                return TensorVal(rg=Tri.NO, leaf=Tri.YES, evidence=True, nograd=self.expr_fact(node, "detached-by"),
                                 storage=self.site(node))
            if recv is UNKNOWN and func.attr == "backward":
                args, kwargs = self.eval_args(node, state)
                if args and not (isinstance(args[0][1], TensorVal) and args[0][1].rg is Tri.NO):
                    # `accelerator.backward(loss)`, `fabric.backward(loss)`: a training helper that backwards its
                    # argument, not a tensor (`t.backward(g)` takes a gradient, which needs no grad). A loss known
                    # to need grad is backwarded as such; otherwise nothing is concluded about either.
                    if isinstance(args[0][1], TensorVal) and args[0][1].rg is Tri.YES:
                        self.backward(args[0][1], args[0][0], node, state, "Tensor.backward", kwargs,
                                      positional=len(args) - 1)
                    return PyVal()
                self.backward(recv, func.value, node, state, "Tensor.backward", kwargs, positional=len(args))
                return PyVal()
            if recv is UNKNOWN and func.attr == "detach_" and not node.args and not node.keywords \
                    and isinstance(func.value, ast.Name) and not state.inference:
                self.unknown_view_detach(func.value, node, state)
            callee = self.attribute(recv, func, state)
            if callee is UNKNOWN and (recv is UNKNOWN or isinstance(recv, ObjectVal)):
                callee = own_method(self, func, recv) or callee  # `self.helper(w)` with `self` unknown
            if callee is UNKNOWN and (recv is UNKNOWN or isinstance(recv, ObjectVal)) and state.grad is Tri.YES \
                    and self.trains_in_init(func):
                # `self.qf1(torch.cat([obs, a], 1))` where `__init__` handed `self.qf1`'s parameters to an optimizer.
                args, kwargs = self.eval_args(node, state)
                self.escapes([v for _, v in args] + [v for _, v in kwargs.values()])
                val = self.run_trained_model(func, node, state, ins=[v for _, v in args] + [v for _, v in
                                                                                           kwargs.values()])
                self.record(node, val)
                return val
            val = self.call_value(callee, node, state)
            if val is UNKNOWN and callee is UNKNOWN and recv is UNKNOWN and state.grad is Tri.YES:
                val = self.backwarded_method(func, node)  # `self.model.calculate_loss(...)`
            if val is UNKNOWN and callee is UNKNOWN and state.grad is Tri.YES and self.evidence_models:
                if recv is UNKNOWN and func.attr == "forward":
                    val = self.run_trained_model(func.value, node, state)  # `self.mac.forward(batch, t=t)`
                elif isinstance(recv, ObjectVal):
                    val = self.run_trained_model(func, node, state)  # `self.mac(batch)`
            if isinstance(recv, ObjectVal) and isinstance(callee, BoundMethod) and self.loops:
                # After the call: what the method left on the object says whether it kept a graph.
                self.check_accumulating_method(node, func, recv, callee, state)
            if isinstance(recv, ObjectVal):
                self.used_object(func.value, recv, state, func.attr)
            self.record(node, val)
            return val
        callee = self.eval(func, state)
        val = self.call_value(callee, node, state)
        if val is UNKNOWN and callee is UNKNOWN and state.grad is Tri.YES and self.evidence_models:
            val = self.run_trained_model(func, node, state)
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
        what = dict(expr=self.seg(node), owner=opt.owner) if opt.owner else dict(expr=self.seg(node))
        fact = None
        graded = self.graded_since_zero(opt, func, state)

        def mark(val: TensorVal) -> TensorVal:
            nonlocal fact
            if val.rg is Tri.NO or val.freed is not None or val.stepped is not None or not sites & val.psaved:
                return val
            inner = val.psaved - sites
            if graded is not None and inner and not inner & graded:
                # The layers this graph saved have no gradient since `zero_grad()` set them to None, and an
                # optimizer skips such parameters: this step leaves them as they were (pranz24's SAC: `qf1_loss`
                # backwarded and stepped, then `qf2_loss`, built by the critic's other head, backwarded).
                return val
            fact = fact or self.fact(node, "stepped-params-of" if opt.owner else "stepped-params", **what)
            return val.with_(stepped=fact)

        for key, val in list(state.env.items()):
            state.env[key] = map_tensors(val, mark)

    def graded_since_zero(self, opt: OptimizerVal, func: ast.Attribute, state: State) -> Optional[frozenset]:
        """The module sites whose parameters may have a gradient when `opt.step()` runs, read from the statements
        before it in its block back to the optimizer's (or its module's) `zero_grad()`: the gradient sources of
        the tensors backwarded in between. None when that is not known: no such `zero_grad()` in the block, one
        that keeps zero tensors (`set_to_none=False`), a backward inside a nested statement or of a value whose
        sources are not all known."""
        ctx = getattr(self, "block_ctx", None)
        if ctx is None:
            return None
        stmts, i = ctx
        mine = {self.seg(func.value)} | ({opt.owner} if opt.owner else set())
        graded: frozenset = frozenset()
        for stmt in reversed(stmts[:i]):
            call = stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
            f = call.func if call is not None else None
            if isinstance(f, ast.Attribute) and f.attr == "zero_grad" and self.seg(f.value) in mine:
                keep = next((k.value for k in call.keywords if k.arg == "set_to_none"), None)
                if call.args or keep is not None and const_bool(keep) is not True:
                    return None
                return graded
            if isinstance(f, ast.Attribute) and f.attr == "backward" and not call.args:
                key = key_of(f.value)
                val = state.get(key) if key else None
                if not isinstance(val, TensorVal) or not val.psrc:
                    return None  # (a batch of data that also fed it, `psrc_partial`, is taken to add no parameters)
                graded |= val.psrc
                continue
            if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in (
                    "backward", "zero_grad", "step") or isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                    and n.func.id == "backward" for n in walk(stmt)):
                return None
        return None

    def custom_function_apply(self, info, node: ast.Call, state: State) -> Optional[Value]:
        """`Fn.apply(...)` of a custom `autograd.Function` whose `forward` returns one of its inputs as-is
        (`custom_functions.returned_input`): that input, now a view made inside a custom Function when it requires grad
        (`TensorVal.fnview`). None (not handled here) for any other class or `forward`."""
        if not any(isinstance(b, str) and b in FUNCTION_BASES for b in self.class_bases(info)):
            return None
        fwd = self.find_method(info, "forward")
        idx = returned_input(fwd.node) if fwd is not None else None
        if idx is None or node.keywords or idx >= len(node.args) \
                or any(isinstance(a, ast.Starred) for a in node.args):
            return None
        args = [(a, self.eval(a, state)) for a in node.args]
        a_node, x = args[idx]
        if not isinstance(x, TensorVal):
            return UNKNOWN
        vals = [v for _, v in args]
        if state.grad is Tri.NO or all(isinstance(v, PyVal) or isinstance(v, TensorVal) and v.rg is Tri.NO
                                       for v in vals):
            return x  # nothing requires grad: torch hands back the input itself, a plain tensor
        rg = Tri.YES if state.grad is Tri.YES and any(isinstance(v, TensorVal) and v.rg is Tri.YES for v in vals) \
            else Tri.MAYBE
        made = self.fact(node, "custom-function-view", expr=self.seg(node.func), name=self.seg(a_node), cls=info.name)
        return x.with_(rg=rg, leaf=Tri.NO if rg is Tri.YES else Tri.MAYBE, nograd=None, fnview=made,
                       fnview_sure=True, view=made, multiview=False, leaf_view=False)

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
            if self.frame_flags and not callee.qual.startswith(("torch.", "builtins.", "math.")):
                # A library function: what it does with a graph it is handed is not known.
                self.escapes([state.get(key_of(a)) for a in node.args if key_of(a) is not None]
                             + [state.get(key_of(k.value)) for k in node.keywords if key_of(k.value) is not None])
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
        args, kwargs = self.eval_args(node, state)
        self.escapes([v for _, v in args] + [v for _, v in kwargs.values()])
        return UNKNOWN

    def escapes(self, values) -> None:
        """Values handed to code gradsight cannot see: a graph among them may be backwarded there or later
        (`graph_outlives`)."""
        if self.frame_flags and any(carries_graph(v) for v in values):
            for flags in self.frame_flags:
                flags["escape"] = True

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
                if flag is None and args and isinstance(args[0][1], PyVal):
                    flag = args[0][1].truth  # a flag a call passed, `phase == "train"` on a known string
                enabled_t = Tri.of(flag)
                label = f"{qual.replace('torch.autograd.', 'torch.')}({self.seg(node.args[0]) if node.args else ''})"
                # As a statement, set_grad_enabled changes the mode from here on.
                return GradModeCtx(enabled_t, False, label, sets_mode=True)
            return GradModeCtx(Tri.of(enabled), inference, f"{qual}()")
        if qual.startswith("builtins."):
            return self.call_builtin(short, node, state)
        args, kwargs = self.eval_args(node, state)
        if qual == "collections.OrderedDict" and len(args) == 1 and not kwargs and isinstance(args[0][1], SeqVal):
            # `OrderedDict([("fc", nn.Linear(...)), ...])`: the pairs, kept for `nn.Sequential(OrderedDict(...))`.
            self.pair_lists[id(node)] = (node, args[0][1])
            mapped = map_of_pairs(args[0][1])
            if mapped is not None:
                return mapped  # `OrderedDict([(name, AverageMeter(name)) for name in names])`
        if qual.startswith("torchvision.transforms.") and db.module_short(qual) in ("Normalize", "Compose"):
            made = self.tensor_transform(db.module_short(qual), args, kwargs, node)
            if made is not None:
                return made
        if qual == "copy.deepcopy" and args and isinstance(args[0][1], ModuleVal):
            # A copy of a module (the usual target network, `q_target = copy.deepcopy(q)`): the same layers with
            # parameters of its own, so it is a module of its own (its site is this call), which an optimizer
            # given the original's parameters does not train.
            return replace(args[0][1], origin=self.expr_fact(node))
        if qual == "torch.load":
            # A whole pickled model (what a call on the result shows it is): a module whose parameters require
            # grad unless something froze them. Evidence from use, so findings built on it are warnings.
            return ModuleVal("torch.load", has_params=Tri.YES, evidence=True,
                             origin=self.expr_fact(node, "loaded-model"))
        if qual in db.BACKWARD_FUNCS:
            target_node, target = args[0] if args else kwargs.get("outputs", kwargs.get("tensors", (None, UNKNOWN)))
            inputs: list = []
            in_val: Value = UNKNOWN
            in_node = None
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
                self.backward(target, target_node, node, state, qual, kwargs, inputs=inputs, gradient=gradient,
                              grad_inputs=in_val if qual.endswith(".grad") else None)
            if not qual.endswith(".grad"):
                return PyVal()
            if not inputs and (isinstance(in_val, (SeqVal, ParamsVal)) or in_val is UNKNOWN and in_node is not None):
                # `autograd.grad(loss, fast_weights)`: one gradient per element of a sequence bound to a name, or of
                # inputs gradsight does not know (a parameter `params`): autograd.grad returns a tuple either way.
                grads = self.grad_results(node, target, [(None, self.element_of(in_val))], kwargs, state)
                return SeqVal(grads.items, homog=True) if isinstance(grads, SeqVal) else grads
            return self.grad_results(node, target, inputs, kwargs, state)
        if qual in db.NUMPY_FUNCS:
            if args and isinstance(args[0][1], TensorVal):
                self.emit(NumpyEvent(node, args[0][1], self.seg(args[0][0]), qual, insert_at=None))
                return PyVal(cut=self.expr_fact(node, "copied-to-numpy"), pcut=self.cut_params(args[0][1], node))
            return PyVal(cut=next((v.cut for _, v in args if isinstance(v, PyVal) and v.cut), None),
                         pcut=_pcut_of(v for _, v in args))
        if qual.startswith("numpy.") or qual.startswith("math."):
            cut = next((v.cut for _, v in args if isinstance(v, PyVal) and v.cut), None)
            tensor_args = [(n, v) for n, v in args if isinstance(v, TensorVal)]
            if qual.startswith("numpy.") and tensor_args and qual.rsplit(".", 1)[-1] not in db.NUMPY_METHOD_DISPATCH:
                # NumPy functions convert tensor arguments with __array__, which is `.numpy()`.
                n, v = tensor_args[0]
                self.emit(NumpyEvent(node, v, self.seg(n), qual, insert_at=n if isinstance(n, (ast.Name, ast.Attribute)) else None))
                return PyVal(cut=self.expr_fact(node, "converted-to-numpy"), pcut=self.cut_params(v, node))
            if tensor_args:
                return UNKNOWN
            return PyVal(cut=cut, pcut=_pcut_of(v for _, v in args))
        if is_distribution(qual):
            return self.make_distribution(qual, args, kwargs, node, state)
        if qual in KL_FUNCS:
            return self.distribution_kl(args, node, state)
        if qual.startswith("torch.optim.") and short[:1].isupper() and "lr_scheduler" not in qual:
            owner = None
            module_sites: frozenset = frozenset()
            if not args and "params" in kwargs:
                args = [kwargs["params"]]  # `RMSprop(params=self.params, lr=...)`
            if args:
                self.optimizer(args[0], node, qual)
                first = args[0][0]
                model_key = None
                if (args[0][1] is UNKNOWN or isinstance(args[0][1], ParamsVal) and args[0][1].evidence) \
                        and isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute) \
                        and first.func.attr in ("parameters", "named_parameters"):
                    model_key = key_of(first.func.value)
                elif isinstance(args[0][1], ParamsVal) and args[0][1].evidence and args[0][1].owner:
                    # `self.params = list(mac.parameters())`, then `RMSprop(params=self.params)`.
                    model_key = args[0][1].owner
                if model_key is not None:
                    # An object gradsight cannot see whose parameters an optimizer trains: evidence that calling it
                    # in grad mode gives an output with a graph (see `expr_Call`).
                    frame = id(self.stack[-1]) if self.stack else None
                    fact = self.fact(node, "optimizer-trains", op=short, model=model_key)
                    self.evidence_models.setdefault((frame, model_key), fact)
                    attr = self.stored_on_self(model_key)
                    if attr is not None:
                        # Built in a method from what `__init__` was handed and keeps (`self.mac = mac`): every
                        # method of the class that calls `self.mac` runs the trained model (pymarl's learners).
                        self.evidence_models.setdefault((("class", attr[0]), attr[1]), fact)
                if isinstance(args[0][1], ParamsVal):
                    module_sites = args[0][1].module_sites
                    self.note_trained(module_sites)
                if isinstance(args[0][1], ParamsVal) and args[0][1].owner:
                    owner = args[0][1].owner
                    fact = self.fact(node, "optimizer-took", op=short, owner=owner)
                    if self.frame_optimized:
                        # Inside a function: `owner` names a local of this call only (`self` in a method called
                        # from elsewhere is not the `self` of another method).
                        self.frame_optimized[-1][owner] = fact
                    else:
                        self.optimized_modules[owner] = fact
            return OptimizerVal(origin=self.fact(node, "optimizer", op=short), owner=owner, module_sites=module_sites)
        if qual == "torch.nn.Parameter" or qual == "torch.nn.parameter.Parameter":
            rg = Tri.YES
            if len(args) > 1 or "requires_grad" in kwargs:
                flag = const_bool((args[1][0] if len(args) > 1 else kwargs["requires_grad"][0]))
                rg = Tri.of(flag)
            src = args[0][1] if args else UNKNOWN
            # Only floating tensors can require grad: a trained parameter is no integer tensor.
            leaf = self.new_leaf(node, rg, param=True, shape=src.shape if isinstance(src, TensorVal) else None,
                                 is_int=Tri.NO if rg is Tri.YES else src.is_int if isinstance(src, TensorVal)
                                 else Tri.MAYBE, label="nn.Parameter", name_hint=None)
            return leaf.with_(psrc=frozenset({_fsite(leaf.origin)})) if rg is Tri.YES else leaf
        if qual.startswith("torch.nn.init."):
            if short.endswith("_") and not short.startswith("_"):
                return args[0][1] if args else UNKNOWN  # `kaiming_normal_(w)` fills `w` and returns it
            # `calculate_gain(...)`, `_calculate_correct_fan(w, mode)`, `_calculate_fan_in_and_fan_out(w)`: numbers
            # about the tensor, not the tensor (pfrl's NoisyLinear: `np.sqrt(3.0 / fan_in)`).
            return SeqVal((PyVal(scalar=True), PyVal(scalar=True))) if "fan_in_and_fan_out" in short \
                else PyVal(scalar=True)
        if qual in db.RETURNS_ITS_MODULE:
            # `self.pos_conv = weight_norm(self.pos_conv)`: the same module, whose layer still saves its input.
            first = args[0][1] if args else UNKNOWN
            return first if isinstance(first, ModuleVal) else UNKNOWN
        if qual.startswith("torch.nn.utils."):
            return self.rnn_packing(qual, args, node, state)
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
            # The pre-0.4 wrapper. Under torch 2.x `Variable(t)` is a new leaf that shares `t`'s memory and has no
            # history, whatever `t` had: `requires_grad` as given (default False). Wrapping a tensor with a graph
            # cuts that graph (tests/test_variable.py checks both under torch).
            if not args:
                return UNKNOWN
            src_node, src = args[0]
            rg_node = kwargs["requires_grad"][0] if "requires_grad" in kwargs else (args[1][0] if len(args) > 1 else None)
            flag = False if rg_node is None else const_bool(rg_node)
            if not isinstance(src, TensorVal):
                if flag is True and src is UNKNOWN and state.grad is not Tri.NO:
                    # `Variable(pred, requires_grad=True)` of a value gradsight cannot see: whether it had a graph
                    # is not known here; GS203 reads the use (a loss's prediction that is backwarded).
                    self.emit(GraphCutEvent(node, TensorVal(rg=Tri.MAYBE, leaf=Tri.MAYBE, evidence=True),
                                            self.seg(src_node), "Variable"))
                return src if flag is False and not isinstance(src, PyVal) else UNKNOWN
            if state.grad is not Tri.NO and (src.rg is Tri.YES or flag is True and src.rg is Tri.MAYBE):
                self.emit(GraphCutEvent(node, src, self.seg(src_node), "Variable"))
            rg = Tri.of(flag) if flag is not None else Tri.MAYBE
            leaf = self.new_leaf(node, rg, shape=src.shape, is_int=src.is_int,
                                 label="Variable(requires_grad=True)" if rg is Tri.YES else "Variable()", name_hint=None,
                                 inference=state.inference)
            if rg is Tri.NO and src.rg is not Tri.NO:
                leaf = leaf.with_(nograd=self.fact(node, "copied-without-history", src.origin, fn="autograd.Variable",
                                                   expr=self.seg(src_node)), pcut=self.cut_params(src, node))
            return leaf.with_(storage=src.storage) if src.storage is not None else leaf
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
        if name == "dict" and len(args) == 1 and not kwargs and map_of_pairs(args[0][1]) is not None:
            return map_of_pairs(args[0][1])  # `dict((k, Meter()) for k in names)`
        if name in ("float", "int", "bool", "complex") and args and isinstance(args[0][1], TensorVal):
            t = args[0][1]
            return PyVal(cut=self.fact(node, "to-python-number", t.origin if t.rg is Tri.YES else None, fn=name,
                                       expr=self.seg(args[0][0])),
                         pcut=self.cut_params(t, node))
        if name in ("list", "tuple") and args and isinstance(args[0][1], TensorVal):
            self.emit(TensorIteratedEvent(node, name, args[0][1], self.seg(args[0][0]), state.grad))
            return UNKNOWN
        if name in ("list", "tuple") and len(args) == 1 and isinstance(args[0][1], ParamsVal):
            return args[0][1]
        if name in ("list", "tuple", "reversed") and len(args) == 1 and isinstance(args[0][1], SeqVal):
            # A copy of a known sequence has the same elements (an iterator over it yields them once).
            return args[0][1]
        known = (SeqVal, ParamsVal)
        if name == "zip" and args and not kwargs and all(isinstance(v, known) for _, v in args):
            # Pairs of the sequences' elements (`zip(grads, params)`, `zip(target.parameters(), net.parameters())`),
            # summarised as one element: a tuple of each sequence's joined element.
            # The parameters of an object gradsight cannot see, paired with another model's (an EMA or target
            # update over an unseen model: stylegan2-ada's `zip(G_ema.parameters(), G.parameters())`), are not
            # known to require grad: such copies are frozen where gradsight cannot see.
            return SeqVal((SeqVal(tuple(self.element_of(replace(v, weak=True) if isinstance(v, ParamsVal)
                                                         and v.evidence else v) for _, v in args)),), homog=True)
        if name == "zip" and args and not kwargs and any(v is UNKNOWN for _, v in args) \
                and all(v is UNKNOWN or isinstance(v, (PyVal,) + known) for _, v in args) \
                and not any(isinstance(a, ast.Starred) for a, _ in args):
            # `for x, y in zip(xs, ys)` with an iterable gradsight cannot see: its item is unknown (it may be a
            # tensor), not plain Python data; the others' items as above (`range()` gives numbers).
            return SeqVal((SeqVal(tuple(UNKNOWN if v is UNKNOWN else self.element_of(
                replace(v, weak=True) if isinstance(v, ParamsVal) and v.evidence else v) for _, v in args)),),
                homog=True)
        if name == "enumerate" and len(args) == 1 and not kwargs and isinstance(args[0][1], known):
            return SeqVal((SeqVal((PyVal(scalar=True), self.element_of(args[0][1]))),), homog=True)
        if name == "enumerate" and args and args[0][1] is UNKNOWN and not any(isinstance(a[0], ast.Starred)
                                                                              for a in args):
            # `for i, (x, y) in enumerate(loader)` over what gradsight cannot see: an index and an unknown item, as
            # `for x, y in loader` gives (not plain Python data: a model applied to it still trains).
            return SeqVal((SeqVal((PyVal(scalar=True), UNKNOWN)),), homog=True)
        if name == "map" and len(args) == 2 and not kwargs and isinstance(args[0][0], ast.Lambda) \
                and isinstance(args[1][1], known) and len(args[0][0].args.args) == 1 and not (
                    args[0][0].args.vararg or args[0][0].args.kwarg or args[0][0].args.kwonlyargs):
            # `list(map(lambda p: p[1] - lr * p[0], zip(grads, fast_weights)))` (MAML's inner step): the lambda's
            # body on the joined element, in a copy of the state.
            fn = args[0][0]
            inner = state.copy()
            target = ast.copy_location(ast.Name(id=fn.args.args[0].arg, ctx=ast.Store()), fn.args.args[0])
            self.assign(target, self.element_of(args[1][1]), inner, fn)
            out = self.eval(fn.body, inner)
            if isinstance(out, (TensorVal, ModuleVal, ObjectVal, SeqVal)):
                return SeqVal((out,), homog=True)
            return UNKNOWN
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

    def factory(self, name: str, args, kwargs, node: ast.Call, state: State, label: Optional[str] = None) -> Value:
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
                                       label=label or f"torch.{name}()", name_hint=None, inference=state.inference)
                if src.rg is Tri.YES and state.grad is not Tri.NO:
                    self.emit(GraphCutEvent(node, src, self.seg(src_node), f"torch.{name}"))
                if src.rg is not Tri.NO and rg is Tri.NO and state.grad is not Tri.NO:
                    result = result.with_(nograd=self.fact(node, "copied-without-history", src.origin, fn=name, expr=self.seg(src_node)),
                        pcut=self.cut_params(src, node))
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
                return self.new_leaf(node, rg, is_int=is_int, label=label or f"torch.{name}()", name_hint=None).with_(
                    nograd=self.fact(node, "rebuilt-from-cut", src.cut, fn=name),
                    pcut=src.pcut)
            if isinstance(src, PyVal) and is_int is Tri.MAYBE:
                is_int = _literal_dtype(src_node)
        if name.endswith("_like") and args and isinstance(args[0][1], TensorVal):
            shape = args[0][1].shape
            if is_int is Tri.MAYBE:
                is_int = args[0][1].is_int
        if dtype is None and isinstance(node, ast.Call) and any(kw.arg is None for kw in node.keywords):
            is_int = Tri.MAYBE  # `torch.tensor(0, requires_grad=True, **tkwargs)`: the dict may give the dtype
        if name in ("as_tensor", "asarray") and args and args[0][1] is UNKNOWN and rg is Tri.NO:
            # `torch.as_tensor(out, dtype=...)` of a value gradsight cannot see: a tensor keeps its history through
            # it, so whether the result requires grad is not known (rtdl's GrowNet; bench/fresh19-false/08).
            return self.new_leaf(node, rg, shape=shape, is_int=is_int, label=label or f"torch.{name}()",
                                 name_hint=None, inference=state.inference).with_(rg=Tri.MAYBE, leaf=Tri.MAYBE,
                                                                                  nograd=None)
        result = self.new_leaf(node, rg, shape=shape, is_int=is_int, label=label or f"torch.{name}()", name_hint=None,
                               inference=state.inference)
        if rg_node is not None and rg is not Tri.NO:
            self.emit(FactoryEvent(node, result, "factory", rg, state.grad, state.inference))
        return result

    def new_leaf(self, node: ast.AST, rg: Tri, *, param: bool = False, shape=None, is_int: Tri = Tri.MAYBE,
                 label: str, name_hint, inference: bool = False) -> TensorVal:
        origin = self.fact(node, "created-by-requires-grad" if rg is Tri.YES and not param else "created-by", label=label)
        sources: frozenset = frozenset()
        nograd = None
        if rg is Tri.YES and not param:
            site = self.site(node)
            sources = frozenset({site})
            self.grad_leaves.setdefault(site, (label, origin))
        if rg is Tri.NO:
            nograd = self.expr_fact(node, CREATED_WITHOUT_GRAD)
        return TensorVal(rg=rg, leaf=Tri.YES, origin=origin, nograd=nograd, sources=sources, param=param,
                         inference=inference, shape=shape, is_int=is_int, storage=self.site(node))

    def new_module(self, qual: str, args, kwargs, node: ast.Call) -> Value:
        short = db.module_short(qual)
        origin = self.expr_fact(node)
        inplace = const_bool(kwargs.get("inplace", (None, None))[0]) is True
        if inplace and "Dropout" in short:
            p_node = args[0][0] if args else kwargs.get("p", (None, None))[0]
            if isinstance(p_node, ast.Constant) and p_node.value == 0:
                inplace = False  # dropout with p=0 never writes
        if short in db.CONTAINERS:
            layers = tuple(v for _, v in args) if short == "Sequential" else ()
            seq, loop_params = None, Tri.NO
            if short == "Sequential" and len(args) == 1 and isinstance(args[0][0], ast.Starred):
                # `nn.Sequential(*[Block() for _ in range(n)])`, `nn.Sequential(*layers)`: the list's modules (a
                # comprehension's one representative runs once: what it does to its input is the same each time).
                hit = self.starred_values.get(id(args[0][0]))
                seq = hit[1] if hit is not None and hit[0] is args[0][0] else None
                layers = seq.items if isinstance(seq, SeqVal) else (UNKNOWN,)
                if isinstance(seq, SeqVal) and seq.homog and any(isinstance(v, ModuleVal) and v.alts for v in layers):
                    # A list that grew by different modules (`layers.extend([conv, bn, relu])` in a loop) is
                    # summarised by their join, which is not one layer that runs once.
                    layers = (UNKNOWN,)
            pairs_hit = self.pair_lists.get(id(args[0][0])) if short == "Sequential" and len(args) == 1 else None
            if pairs_hit is not None and pairs_hit[0] is not args[0][0]:
                pairs_hit = None
            if pairs_hit is not None:
                # `nn.Sequential(OrderedDict(pairs))`: the pairs' modules, in order (a list that grew in a loop:
                # one representative pair, as for `nn.Sequential(*layers)`).
                pairs = pairs_hit[1]
                seq = SeqVal(tuple(p.items[1] if isinstance(p, SeqVal) and len(p.items) == 2 and not p.homog
                                   else UNKNOWN for p in pairs.items), pairs.homog)
                layers = seq.items
                if seq.homog and any(isinstance(v, ModuleVal) and v.alts for v in layers):
                    layers = (UNKNOWN,)
            if pairs_hit is not None and seq.homog and layers == (UNKNOWN,) \
                    and all(isinstance(v, ModuleVal) and all(isinstance(a, ModuleVal) and a.cls is None for a in v.alts)
                            for v in seq.items) \
                    and any(a.has_params is Tri.YES for v in seq.items for a in v.alts):
                # The pairs of a list that grew by different torch.nn modules in a loop (`Linear`, `BatchNorm1d`,
                # `ReLU`): their order is not one layer that runs once, but one of them surely has parameters.
                # (`nn.Sequential(*layers)` of such a list is the same shape; left as it was, not yet measured.)
                loop_params = Tri.YES
            if short == "ModuleList" and len(args) == 1 and isinstance(args[0][1], SeqVal):
                layers = args[0][1].items
            head: tuple = ()
            if short in ("Sequential", "ModuleList") and not all(isinstance(v, ModuleVal) for v in layers):
                if short == "Sequential" and not (len(args) == 1 and isinstance(args[0][0], ast.Starred)):
                    head = tuple(itertools.takewhile(lambda v: isinstance(v, ModuleVal), layers))
                layers = ()
            has = layers_have_params(layers)
            if not layers and not (short == "ModuleList" and not args and not kwargs):
                has = Tri.MAYBE  # an empty `nn.ModuleList()` has no parameters until modules are appended
            if loop_params is Tri.YES:
                has = Tri.YES
            return ModuleVal(qual, layers=layers if short in ("Sequential", "ModuleList") else (), has_params=has,
                             origin=origin, head=head)
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


def _may_spell(node: ast.AST, lines: list, word: str) -> bool:
    """Whether the source lines of `node` may hold the identifier `word` (ASCII): they contain it, or they are not all
    ASCII (an identifier is NFKC-normalised: a full-width spelling is the same name). A text search that lets the
    walks for a name skip code that never spells it."""
    end = getattr(node, "end_lineno", None)
    if end is None or end > len(lines):
        return True
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
    text = "\n".join(lines[start - 1:end])
    return word in text or not text.isascii()


def _backwarded_calls(cls: ast.ClassDef, lines: Optional[list] = None) -> dict:
    """`self.<attr>.<method>` (spelled with `self`) -> the method of `cls` that binds that call's result to a name
    and backwards the name (`loss = self.model.calculate_loss(scores, batch)`, then `loss.backward()`). `lines`, the
    source of the file, lets methods that never spell `backward` be skipped without a walk."""
    out: dict = {}
    for fn in cls.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not fn.args.args:
            continue
        if lines is not None and not _may_spell(fn, lines, "backward"):
            continue
        me = fn.args.args[0].arg
        names = _backward_names(fn)
        if not names:
            continue
        for stmt in walk(fn):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and stmt.targets[0].id in names and isinstance(stmt.value, ast.Call) \
                    and isinstance(stmt.value.func, ast.Attribute):
                key = key_of(stmt.value.func)
                if key is not None and key.startswith(me + ".") and key.count(".") == 2:
                    out.setdefault("self." + key[len(me) + 1:], fn)
    return out


def _init_site(call: ast.Call) -> tuple:
    """The identity, for `TensorVal.psaved` and `OptimizerVal.module_sites`, of a model a class's `__init__` hands
    to an optimizer: that optimizer's call (no module is created there, so no module site can be equal to it)."""
    return ("init-optimizer", call.lineno, call.col_offset)

