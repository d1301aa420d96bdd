"""Modules and objects: module calls, user classes and their state across method calls, user functions."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Optional

from . import torchdb as db
from .astwalk import walk
from .call_writes import written_in_call
from .nograd_calls import switches_grad_mode
from .rebinding import _number_expr, _returns_numbers
from .events import InferenceSaveEvent
from .interp_util import (BUILTINS, MAX_CALL_DEPTH, _class_methods, _constant_default, _graph_homes, _graph_homes_fresh, _has_backward,
                          _is_static, _is_staticmethod, _msite, own_mutations, _pcut_of, _plain_class, const_bool,
                          flat_tensors, key_of, layers_have_params, map_tensors, param_defaults, with_carried)
from .state import State
from .values import (GRAD_MODE_OFF, ONLY_FROM_NO_GRAD, UNKNOWN, USE, ClassInfo, FuncVal, ModuleVal, ObjectVal,
                     OptimizerVal, ParamsVal, NameOf, PyVal, SeqVal, TensorVal, Tri, Value, frozen_layers, graph_free,
                     join_values)


# Decorators (qualified-name prefixes) that never change grad mode around the function they wrap.
_GRAD_NEUTRAL_DECORATORS = ("pytest.", "_pytest.", "functools.", "abc.", "typing.", "typing_extensions.", "click.",
                            "hydra.", "dataclasses.", "unittest.", "builtins.", "contextlib.")


def _module_args(fn: ast.AST) -> frozenset:
    """Names `fn` calls a method only modules and optimizers have on (`model.named_parameters()`): a loss module's
    `forward(self, model)` that sums a penalty over the network's parameters takes the network, not a prediction
    (hidden-networks' `SubnetL1RegLoss`; bench/fresh19-false/09)."""
    return frozenset(n.func.value.id for n in walk(fn) if type(n) is ast.Call and type(n.func) is ast.Attribute
                     and n.func.attr in db.MODULE_ONLY_METHODS and type(n.func.value) is ast.Name)


class ObjectsMixin:
    """Part of `Interpreter` (see interp.py)."""

    # ---- modules
    def own_module_sites(self, recv: ModuleVal, key: str, state: State) -> frozenset:
        """The sites of `recv` and of the modules it holds as attributes (`self.q` while `__init__` runs
        `Adam(self.parameters())`): its `parameters()` are theirs too, whether or not its `forward` runs them."""
        sites = {_msite(recv)}
        sites.update(_msite(v) for _, v in recv.attrs if isinstance(v, ModuleVal))
        prefix, depth = key + ".", key.count(".") + 1
        sites.update(_msite(v) for k, v in state.env.items()
                     if isinstance(v, ModuleVal) and k.startswith(prefix) and k.count(".") == depth and "[" not in k)
        sites.discard(None)
        return frozenset(sites)

    def module_method(self, recv: ModuleVal, func: ast.Attribute, node: ast.Call, state: State) -> Value:
        name = func.attr
        if name in ("parameters",):
            self.eval_args(node, state)
            owner = key_of(func.value)
            # `self.parameters()` of the instance being built covers the modules it holds; a built module's
            # `m.parameters()` keeps its own site (twin heads of one critic stepped one at a time stay apart).
            sites = self.own_module_sites(recv, owner, state) if owner == "self" else frozenset({_msite(recv)}) - {None}
            return ParamsVal(origin=self.fact(node, "parameters-of", expr=self.seg(func.value)), owner=owner,
                             module_sites=sites, frozen=recv.has_params is Tri.NO)
        if name in ("to", "cuda", "cpu", "float", "double", "half", "train", "eval", "requires_grad_", "zero_grad",
                    "apply", "share_memory", "type"):
            args, kwargs = self.eval_args(node, state)
            key = key_of(func.value)
            if name in ("requires_grad_", "eval", "train"):
                if name == "requires_grad_":
                    flag = const_bool(node.args[0]) if node.args else True
                    new = replace(recv, has_params=Tri.of(flag) if flag is not None else Tri.MAYBE)
                elif name == "eval" or (node.args and const_bool(node.args[0]) is False):
                    new = replace(recv, eval_at=self.expr_fact(node, "eval-mode"), eval_sure=True)
                else:
                    new = replace(recv, eval_at=None, eval_sure=False)
                    held = self.globals_state.env.get(key) if key and self.globals_state is not None else None
                    if type(held) is ModuleVal and held.eval_sure:
                        # A function putting a module-level model back in training mode (`def train_epoch():
                        # model.train()`): the model its callers see is no longer surely in eval mode.
                        self.globals_state.env[key] = replace(held, eval_sure=False)
                if key:
                    state.set(key, new)
                return new
            return recv if name != "zero_grad" else PyVal()
        if name == "forward":
            args, kwargs = self.eval_args(node, state)
            return self.call_module(recv, args, kwargs, node, state)
        if name in ("append", "extend", "insert") and db.module_short(recv.qual) == "ModuleList" \
                and (recv.layers or recv.has_params is Tri.NO):
            # A known list of layers (`nn.ModuleList()` is one, empty) grows by the modules appended; anything else
            # appended makes its layers unknown.
            args, _ = self.eval_args(node, state)
            added = None
            if name in ("append", "insert") and args and isinstance(args[-1][1], ModuleVal):
                added = (args[-1][1],)
            elif name == "extend" and args and isinstance(args[0][1], SeqVal) and not args[0][1].homog \
                    and all(isinstance(v, ModuleVal) for v in args[0][1].items):
                added = args[0][1].items
            key = key_of(func.value)
            if key:
                if added is None:
                    state.set(key, replace(recv, layers=(), has_params=Tri.MAYBE))
                else:
                    state.set(key, replace(recv, layers=recv.layers + added,
                                           has_params=layers_have_params(added, recv.has_params)))
            return PyVal()
        if recv.cls is not None:
            meth = self.find_method(recv.cls, name)
            if meth is not None:
                args, kwargs = self.eval_args(node, state)
                if _is_static(meth.node):
                    # A `@staticmethod` gets its arguments as given (no `self`); a classmethod's `cls` is not modelled.
                    return self.call_function(meth, None, args, kwargs, node, state) if _is_staticmethod(meth.node) \
                        else UNKNOWN
                ins = [v for _, v in flat_tensors(list(args) + list(kwargs.values()))]
                inherited_src = frozenset().union(*[v.psrc for v in ins])
                result = self.call_function(meth, recv, args, kwargs, node, state)
                site = _msite(recv)
                if site is None or recv.has_params is Tri.NO:
                    return result
                self.optimized_modules.setdefault(NameOf(site), self.seg(func.value))

                def tag(val: TensorVal) -> TensorVal:
                    # A method of a module (`model.v(s)`, `self.pi(x)`) runs its sub-modules as `forward` would: they
                    # belong to it (an optimizer over its parameters trains them) and its parameters reach the result.
                    new_src = val.psrc - inherited_src - {site}
                    self.note_parents(new_src, site)
                    return val.with_(psrc=val.psrc | {site}) if new_src else val

                return map_tensors(result, tag)
            sub = recv.attr(name)
            if isinstance(sub, ModuleVal):
                args, kwargs = self.eval_args(node, state)
                return self.call_module(sub, args, kwargs, node, state)
        self.eval_args(node, state)
        if recv.evidence and recv.cls is None and state.grad is Tri.YES:
            # `self.model.eval()` made `self.model` a module known from use: a method of it that another method of
            # the class backwards the result of still gives a graph, from this module's parameters.
            val = self.backwarded_method(func, node)
            site = _msite(recv)
            if isinstance(val, TensorVal) and site is not None:
                val = val.with_(psrc=val.psrc | {site})
            return val
        return UNKNOWN

    def call_module(self, mod: ModuleVal, args, kwargs, node: ast.AST, state: State) -> Value:
        ins = [v for _, v in flat_tensors(list(args) + list(kwargs.values()))]
        inherited = frozenset().union(*[v.psaved for v in ins])
        inherited_src = frozenset().union(*[v.psrc for v in ins]) | {e[0] for v in ins for e in v.pcut}
        result = self._call_module(mod, args, kwargs, node, state)
        site = _msite(mod)
        if site is None or mod.has_params is Tri.NO:
            return result
        self.optimized_modules.setdefault(NameOf(site), self.seg(node.func if isinstance(node, ast.Call) else node))

        def tag(val: TensorVal) -> TensorVal:
            # Parameters of a sub-module (or the module's own) were saved by this call: so were `mod`'s.
            if val.psaved - inherited and site not in val.psaved:
                val = val.with_(psaved=val.psaved | {site})
            new_src = val.psrc - inherited_src - {site}
            self.note_parents(new_src | ({e[0] for e in val.pcut} - inherited_src - {site}), site)
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
            if unsaved and isinstance(out, TensorVal) and out.saved is not None:
                out = out.with_(saved_sure=False)  # saved on the paths whose module saves it
            joined = ends[0]
            for e in ends[1:]:
                joined = joined.join(e)
            state.env, state.compound = joined.env, joined.compound
            return out if out is not None else UNKNOWN
        if mod.cls is not None:
            # A class that defines `__call__` itself (a loss wrapping its work in `@torch.no_grad()` there, coqui
            # TTS's `TorchSTFT`) runs that, not `nn.Module.__call__` -> `forward`.
            call = self.find_method(mod.cls, "__call__")
            fwd = call if call is not None else self.find_method(mod.cls, "forward")
            if fwd is None:
                return UNKNOWN
            return self.call_function(fwd, mod, args, kwargs, node, state)
        short = db.module_short(mod.qual)
        if self.loops or self.stack:
            self.retire_storage(self.site(node), state)
        if short in ("Sequential", "Compose") and mod.layers:
            if not args:
                return UNKNOWN
            val: Value = args[0][1]
            arg_node = args[0][0]
            for layer in frozen_layers(mod, mod.layers):
                val = self.call_module(layer, [(arg_node, val)], {}, node, state)
                arg_node = node
            return val
        if short == "Sequential" and mod.head and args:
            # Known children, then one gradsight cannot see: they run on the input (and save it), the rest is unknown.
            val, arg_node = args[0][1], args[0][0]
            for layer in frozen_layers(mod, mod.head):
                val = self.call_module(layer, [(arg_node, val)], {}, node, state)
                arg_node = node
            return UNKNOWN
        if not args:
            return UNKNOWN
        if short in db.LOSS_MODULES_WITH_TARGET:
            target = args[1] if len(args) > 1 else kwargs.get("target")
            if target is not None:
                self.check_loss_target(short, args[0], target, node, state)
        in_node, x = args[0]
        if short == "Identity" and isinstance(x, TensorVal):
            # `nn.Identity` returns its input object itself: what an op saved of it (a ReLU's output, timm's
            # `ConvBNAct` ending in `self.lab = nn.Identity()`) is still saved, and the storage is the same.
            return x
        if not isinstance(x, TensorVal) and x is not UNKNOWN and not isinstance(x, SeqVal):
            return UNKNOWN
        inplace_key = None
        if mod.inplace and isinstance(x, TensorVal):
            self.inplace(in_node, x, f"{short}(inplace=True)", state, node, module=mod)
            if x.saved is not None and state.grad is not Tri.NO and x.rg is Tri.YES:
                x = x.with_(saved=None)
            inplace_key = key_of(in_node)
        params = mod.has_params
        if state.grad is Tri.NO:
            rg = Tri.NO
        elif params is Tri.YES:
            rg = Tri.YES
        elif isinstance(x, TensorVal):
            rg = x.rg if params is Tri.NO else (Tri.YES if x.rg is Tri.YES else Tri.MAYBE)
            # Torch differentiates every tensor argument, not only the first: `nn.MSELoss()(target, pred)` with
            # the prediction second has history, as `F.mse_loss` does (DeepRL_Algorithms' TD3; fresh21-false/01).
            rest = list(args[1:]) + list(kwargs.values())
            if any(v.rg is Tri.YES for _, v in flat_tensors(rest)):
                rg = Tri.YES
            elif rg is Tri.NO and any(v is UNKNOWN or isinstance(v, TensorVal) and v.rg is Tri.MAYBE for _, v in rest):
                rg = Tri.MAYBE
        else:
            rg = Tri.MAYBE
        if rg is Tri.YES and state.grad is Tri.MAYBE:
            rg = Tri.MAYBE  # grad mode may be off here (`set_grad_enabled(phase == "train")`, a caller's no_grad)
        origin = self.expr_fact(node, "from")
        pairs = flat_tensors(args)
        tensors = [v for _, v in pairs]
        nograd = None
        if rg is Tri.NO:
            if state.grad is Tri.NO:
                nograd = self.fact(node, GRAD_MODE_OFF, state.grad_why)
            else:
                nograd = self.fact(node, ONLY_FROM_NO_GRAD, next((v.nograd for v in tensors if v.nograd), None))
        segs = frozenset().union(*[v.segs for v in tensors]) if tensors else frozenset()
        sources = frozenset().union(*[v.sources for v in tensors]) if tensors else frozenset()
        freed = next((v.freed for v in tensors if v.freed is not None and v.rg is not Tri.NO and v.leaf is not Tri.YES), None)
        carried = next((v.carried for v in tensors if v.carried is not None), None)
        via = None
        if freed is not None:
            via_arg = next(((n, v) for n, v in pairs if v.freed is freed), None)
            if via_arg is not None:
                via = via_arg[1].via or self.expr_fact(via_arg[0], USE)
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
                    saved = self.fact(node, "saved-by", op=short)
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
                        state.env[key] = a_val.with_(saved=self.fact(node, "saved-by", op=short),
                                                     saved_seg=self.site(node))
                    elif a_val is UNKNOWN and isinstance(a_node, ast.Name) and params is Tri.YES \
                            and (not triggers or any(isinstance(t, str) for t in triggers)) \
                            and state.get(a_node.id) is UNKNOWN:
                        # A name of unknown value (a `forward` parameter) handed to a layer whose trainable weights
                        # save their input: it is a tensor (the layer takes nothing else), and this call saved it
                        # whatever its own grad state, so a later in-place write on it makes backward raise.
                        state.env[a_node.id] = TensorVal(saved=self.fact(node, "saved-by", op=short),
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
        if inplace_key is not None and isinstance(x, TensorVal) and x.storage is not None:
            # An in-place module (`nn.ReLU(inplace=True)`) returns its input: the result is the input's storage,
            # and the name it was called on now holds the result. When the module saves its output (ReLU does),
            # that storage is saved, so a second in-place module on the same input raises (NASNet's
            # `relu1(h)` and `relu2(h)` on one `h`).
            result = result.with_(storage=x.storage)
            if saved is not None:
                self.mark_saved_storage(in_node, result, short, node, state)
            if isinstance(state.get(inplace_key), TensorVal):
                state.set(inplace_key, result)
        if short in db.RECURRENT:
            hidden = result.with_(saved=None, shape=None)
            return SeqVal((result.with_(shape=None), SeqVal((hidden, hidden)) if short == "LSTM" else hidden))
        return result

    def instantiate(self, info: ClassInfo, args, kwargs, node: ast.AST, state: State) -> Value:
        if not self.is_module_class(info):
            return self.new_object(info, args, kwargs, node, state)
        origin = self.expr_fact(node)
        base = ModuleVal(info.name, cls=info, origin=origin, has_params=Tri.MAYBE)
        init = self.find_method(info, "__init__")
        attrs: tuple = ()
        if init is not None:
            # Keyword arguments are part of the key: `M(relu=True)` then `M(relu=False)` build different layers.
            ck = (id(info), tuple(v for _, v in args), tuple((k, kwargs[k][1]) for k in sorted(kwargs)))
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
        if has is not Tri.YES and self.torch_layer_base(info):
            has = Tri.YES  # `class SNConv2d(nn.Conv2d, SN)`: the torch layer's `__init__` registered its weight
        result = ModuleVal(info.name, cls=info, origin=origin, has_params=has, attrs=attrs)
        for _, v in attrs:
            if type(v) is not OptimizerVal or v.owner != "self":
                continue
            # `self.optimizer = Adam(self.parameters())` in the class's `__init__` (philtabor's networks): this
            # instance is trained. Noted here, not only while `__init__` runs, as its attributes may come from
            # the cache of an earlier instance.
            self.note_trained({_msite(result)})
            break
        return result

    def new_object(self, info: ClassInfo, args, kwargs, node: ast.AST, state: State, fresh: bool = True) -> Value:
        """An instance of a plain class whose every base is a plain class of the analysed code (so all its methods
        are known), without decorators or a metaclass; anything else is UNKNOWN. Not `fresh`: any method may
        already have run on it."""
        if not _plain_class(info, self.class_bases):
            return UNKNOWN
        changed = frozenset() if fresh else self.method_mutations(info, None)
        origin = self.expr_fact(node)
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
        pins = getattr(self, "pinned_flags", None)
        if pins and id(info.node) in pins:
            # A caller's run with this class's constant flag fixed (`reverse.py`): one value for the object's life.
            attr, truth = pins[id(info.node)]
            attrs = tuple((k, PyVal(truth=truth) if k == attr else v) for k, v in attrs)
        return replace(base, attrs=attrs)

    def method_mutations(self, info: ClassInfo, method: Optional[str]) -> frozenset:
        """The attributes of `self` that running `method` of `info` may have changed (`own_mutations`, followed
        through its calls of other methods on `self`; "*": any). `method` None: every method but `__init__` may
        have run. Each method's syntax is read once per analysis."""
        key = ("mutates", id(info.node), method)
        hit = self.syntax_memo.get(key)
        if hit is not None and hit[0] is info.node:
            return hit[1]
        methods = self.syntax("methods", info.node, lambda _n: _class_methods(info, self.class_bases))
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
            # A pure function of the method's text, so kept across keystrokes; the methods it calls on `self`
            # are looked up in this class (a subclass may define one its base's method calls).
            attrs, calls = self.by_text("own_mutations", meth, own_mutations)
            out |= attrs
            todo.extend(c for c in calls if c in methods)
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
        if key is None or "[" in key or state.get(key) is not self_val:
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
            imports = tuple(sorted((k[len(prefix):], state.env[k]) for k in state.compound if k.startswith(prefix))) \
                if state.compound else ()
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

    def trains_itself(self, func: FuncVal) -> bool:
        """Whether `func`'s body runs a backward (`_has_backward`), its text read first (most decorated functions,
        timm's registered factories, have none)."""
        fn = func.node
        lines = getattr(getattr(func.module, "source", None), "lines", None)
        if lines is not None and getattr(fn, "end_lineno", None):
            text = "".join(lines[fn.lineno - 1:fn.end_lineno])
            if "backward" not in text and "grad(" not in text:
                return False
        return self.syntax("has_backward", fn, _has_backward) is not None

    def run_function(self, func: FuncVal, self_val, args, kwargs, node, state: State, want_state: bool = False,
                     *rest, **kw):
        result = self._run_function(func, self_val, args, kwargs, node, state, want_state, *rest, **kw)
        if state.grad is not Tri.MAYBE and self.syntax("switches_grad", func.node, switches_grad_mode):
            # `torch.set_grad_enabled(False)` as a statement in the callee (a constructor that turns grad mode off
            # for what follows): the caller goes on in whatever mode the call left, which gradsight does not track.
            state.grad = Tri.MAYBE
        return result

    def _run_function(self, func: FuncVal, self_val, args, kwargs, node, state: State, want_state: bool = False,
                     self_import: Optional[tuple] = None, closure: Optional[tuple] = None):
        """Run `func`'s body on abstract arguments. `self_import`: (attribute path, value) pairs the caller knows
        about the instance; the `self.*` entries the body leaves are put in `self.last_exports` (when given).
        `closure`: (reference key, value) pairs of the enclosing function's scope that a nested function analysed on
        its own reads (`units.Closure`), names before the keys below them."""
        self.last_exports = ()
        if self.depth >= MAX_CALL_DEPTH or any(f is func.node for f in self.stack):
            return UNKNOWN
        fn = func.node
        if self_val is UNKNOWN and not self.stack and isinstance(func.owner, ClassInfo) and not self.is_module_class(func.owner) \
                and fn.name != "__init__" and not _is_static(fn) and not any(
                    isinstance(d, ast.Name) and d.id == "classmethod" for d in fn.decorator_list):
            # A plain class's method analysed on its own: `self` is an instance built from unknown arguments, on
            # which other methods may already have run.
            init = self.find_method(func.owner, "__init__")
            n_args = len(init.node.args.args) - 1 if init is not None else 0
            self_val = self.new_object(func.owner, [(fn, UNKNOWN)] * max(n_args, 0), {}, fn, state, fresh=False)
            flag = self.instance_flag(func.owner) if isinstance(self_val, ObjectVal) and not want_state else None
            if flag is not None and self.forced_flag is None:
                # `self.automatic_entropy_tuning`, set once in `__init__` and tested in several places: one object
                # has one value for its whole life, so the method runs once per value (never mixing an update that
                # rebuilt `self.alpha` with one that did not: dongminlee94's SAC).
                out = None
                for truth in (True, False):
                    self.forced_flag = (fn, None, truth)
                    try:
                        obj = replace(self_val, attrs=tuple((k, PyVal(truth=truth) if k == flag else v)
                                                            for k, v in self_val.attrs)
                                      + (() if self_val.attr(flag) is not None else ((flag, PyVal(truth=truth)),)))
                        res = self.run_function(func, obj, args, kwargs, node, state, want_state, self_import,
                                                closure)
                    finally:
                        self.forced_flag = None
                    out = join_values(out, res) if isinstance(res, Value) else out
                return out if out is not None else UNKNOWN
        grad, why, inference = state.grad, state.grad_why, state.inference
        for dec in fn.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            q = self.static_qual(target)
            if q in db.GRAD_MODE:
                enabled, inf = db.GRAD_MODE[q]
                if enabled is not None:
                    grad, inference = Tri.of(enabled), inf
                    why = self.expr_fact(dec, "no-grad-decorator") if not enabled else None
            elif q not in ("builtins.staticmethod", "builtins.classmethod", "functools.wraps", "builtins.property") \
                    and not (q or "").startswith("torch.") \
                    and not (isinstance(func.owner, ClassInfo) and self.identity_decorator(target)):
                if node is not fn or not ((q or "").startswith(_GRAD_NEUTRAL_DECORATORS)
                                          or self.trains_itself(func)):
                    # A call through a decorator gradsight cannot see: the wrapper decides what comes back. And a
                    # function under an unknown decorator is not analysed on its own either: the wrapper may enter
                    # `no_grad` (lucidrains' `eval_decorator`), so little could be claimed, and registries
                    # (timm's `@register_model` on hundreds of factories) would cost a third more time per file.
                    return UNKNOWN if not want_state else None
                # The function analysed on its own under a decorator known to leave grad mode alone (pytest
                # marks, functools caches, CLI and config entry points), or under any decorator when its body
                # runs a backward (a training loop under a retry-on-OOM wrapper such as accelerate's
                # `find_executable_batch_size`: the backward needs grad mode, so the wrapper leaves it on; evidence
                # of use): its body is what runs whenever the wrapper calls it.
        if self.capture is not None and id(fn) in self.capture:
            self.capture[id(fn)] = True  # the body runs (the driver asks before analysing the closures it returns)
        if not want_state and self.forced_flag is None:
            flag = self.flag_param(fn)
            if flag is not None and self.flag_truth(fn, flag, self_val, args, kwargs, node) is None:
                # Run once with the flag true and once false: `if icm: L = ...` and a later `if icm: L.backward()`
                # in one loop are never on different sides, which one path-insensitive run would join.
                out = None
                for truth in (True, False):
                    self.forced_flag = (fn, flag, truth)
                    try:
                        res = self.run_function(func, self_val, args, kwargs, node, state, want_state, self_import,
                                                closure)
                    finally:
                        self.forced_flag = None
                    out = join_values(out, res) if isinstance(res, Value) else out
                return out if out is not None else UNKNOWN
        forced = self.forced_flag if self.forced_flag is not None and self.forced_flag[0] is fn else None
        arg_vals = [v for _, v in args]
        kw_vals = {k: v for k, (_, v) in kwargs.items()}
        dropped = self.discarded_result[1] if self.discarded_result is not None \
            and self.discarded_result[0] is node else None
        memo_key = (id(fn), self_val, tuple(arg_vals), tuple(sorted(kw_vals.items(), key=lambda kv: kv[0])), grad,
                    inference, self.report_token(), want_state, self_import, forced[1:] if forced else None, closure,
                    dropped)
        try:
            hash(memo_key)
        except TypeError:
            memo_key = None
        if memo_key is not None and self.spec:
            memo_key = self.summary_key(memo_key)
        if memo_key is not None and memo_key in self.memo:
            hit, exports, saves = self.localize_segs(
                fn, (func.module or self.scope).path, node, arg_vals, kw_vals, self_import, self.memo[memo_key],
                self.memo_exports.get(memo_key, ()), self.memo_saves.get(memo_key, ()), want_state)
            if self_import is not None:
                self.last_exports = exports
            self.saved_in_call(saves, node, state)
            written_in_call(self, self.memo_writes.get(memo_key, ()), node, state, getattr(self, "current_stmt", None))
            if isinstance(hit, Value):
                self.fresh_from_call(hit, fn, (func.module or self.scope).path, state)
            return hit
        callee_state = State(grad=grad, grad_why=why, inference=inference)
        for key, val in closure or ():
            callee_state.set(key, val)
        called = node is not fn  # a real call site (a unit analysed on its own runs with its own node)
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
        defaults = param_defaults(params)
        loss_input = not called and fn.name == "forward" and isinstance(func.owner, ClassInfo) \
            and self.is_module_class(func.owner) and "Loss" in func.owner.name
        for i, p in enumerate(positional):
            if i == 0 and loss_input and (i >= len(vals) or vals[i] is UNKNOWN) \
                    and p.arg not in self.syntax("module-args", fn, _module_args):
                # Evidence from use: a loss module's `forward` is run on what is trained, so its first input (the
                # prediction) has a graph. Findings built on it are warnings (timm's `AsymmetricLossSingleLabel`
                # writing into a tensor that `xs_pos * targets` saved).
                callee_state.set(p.arg, TensorVal(rg=Tri.YES, leaf=Tri.NO, evidence=True, psrc_partial=True,
                                                  origin=self.fact(p, "loss-input", name=p.arg, cls=func.owner.name),
                                                  storage=self.site(p)))
            elif i < len(vals):
                callee_state.set(p.arg, vals[i])
            elif p.arg in kw_vals:
                callee_state.set(p.arg, kw_vals[p.arg])
            else:
                callee_state.set(p.arg, _constant_default(defaults.get(p.arg), called))
        for p in params.kwonlyargs:
            callee_state.set(p.arg, kw_vals[p.arg] if p.arg in kw_vals else _constant_default(defaults.get(p.arg),
                                                                                              called))
        if forced is not None and forced[1] is not None:
            callee_state.set(forced[1], PyVal(truth=forced[2]))  # this run's side of the flag (a parameter's)
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
        caller_stmt = getattr(self, "current_stmt", None)
        self.frame_caller_grad.append(state.grad)
        self.depth += 1
        self.returns.append([])
        self.return_exports.append(f"{self_name}." if self_import is not None and self_name else None)
        self.self_names.append(self_name)
        self.return_states.append([])
        self.call_saves.append([])
        self.call_writes.append([])
        self.pending_inplace.append([])
        self.pending_dropped.append([])
        self.frame_flags.append({"escape": False, "called_at": getattr(node, "lineno", 0)})
        try:
            end = self.exec_block(fn.body, callee_state)
            rets = self.returns[-1]
            exit_envs = self.return_states[-1]
        finally:
            pending = self.pending_inplace.pop()
            kept = self.pending_dropped.pop()
            flags = self.frame_flags.pop()
            saves = tuple(self.call_saves.pop())
            writes = tuple(self.call_writes.pop())
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
        if pending:
            self.settle_inplace(pending, fn, flags, rets + ([PyVal()] if not end.dead else []), exit_envs + [end.env])
        if kept:
            self.settle_dropped(kept, fn, flags, rets + ([PyVal()] if not end.dead else []), exit_envs + [end.env])
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
                exit_envs = exit_envs + [{k: end.env[k] for k in end.compound if k.startswith(prefix)}]
            joined: dict = {}
            for env in exit_envs:
                for k, v in env.items():
                    joined[k] = join_values(joined.get(k), v)
            exports = tuple(sorted((k[len(prefix):], v) for k, v in joined.items() if v is not None))
        if node is not fn and not want_state:
            result, exports, saves = self.prune_dead_saves(fn, other_scope.path, node, arg_vals, kw_vals, self_import,
                                                           result, exports, saves, flags, dropped)
        if memo_key is not None:
            self.memo[memo_key] = result
            self.stored_summary(memo_key)
            if self_import is not None:
                self.memo_exports[memo_key] = exports
            if saves:
                self.memo_saves[memo_key] = saves
            if writes:
                self.memo_writes[memo_key] = writes
        result, exports, saves = self.localize_segs(fn, other_scope.path, node, arg_vals, kw_vals, self_import, result,
                                                    exports, saves, want_state)
        if self_import is not None and self_name:
            self.last_exports = exports
        self.saved_in_call(saves, node, state)
        written_in_call(self, writes, node, state, caller_stmt)
        self.fresh_from_call(result, fn, other_scope.path, state)
        return result

    def instance_flag(self, info: ClassInfo) -> Optional[str]:
        """An attribute of a plain class that only `__init__` assigns (from a parameter with a bool default, a bool
        constant, or a setting read off a parameter: `cfg.automatic_entropy_tuning`) and that the class's methods
        test as `if self.x:` / `if not self.x:` / `if self.x is True:` in two places or more; None when there is none
        (memoised per class node)."""
        memo = self.__dict__.setdefault("_instance_flags", {})
        if id(info.node) in memo and memo[id(info.node)][0] is info.node:
            return memo[id(info.node)][1]
        found = None
        init = info.methods.get("__init__")
        if init is not None:
            defaults = {k: v for k, v in param_defaults(init.node.args).items()
                        if isinstance(v, ast.Constant) and isinstance(v.value, bool)}
            params = {a.arg for a in init.node.args.args[1:] + init.node.args.kwonlyargs}
            cands, others = set(), set()
            for n in walk(init.node):
                if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Attribute) \
                        and isinstance(n.targets[0].value, ast.Name) and n.targets[0].value.id == "self":
                    v = n.value
                    setting = isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) and v.value.id in params
                    plain = isinstance(v, ast.Name) and v.id in defaults \
                        or isinstance(v, ast.Constant) and isinstance(v.value, bool)
                    (cands if plain or setting else others).add(n.targets[0].attr)
            cands -= others
            tests: dict = {}
            for name, meth in info.methods.items():
                for n in walk(meth.node):
                    if name != "__init__" and isinstance(n, (ast.Assign, ast.AugAssign)) and any(
                            isinstance(t, ast.Attribute) and t.attr in cands
                            for tt in (n.targets if isinstance(n, ast.Assign) else [n.target]) for t in walk(tt)):
                        cands -= {t.attr for tt in (n.targets if isinstance(n, ast.Assign) else [n.target])
                                  for t in walk(tt) if isinstance(t, ast.Attribute)}
                    if isinstance(n, ast.If):
                        t = n.test.operand if isinstance(n.test, ast.UnaryOp) and isinstance(n.test.op, ast.Not) \
                            else n.test
                        if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], (ast.Is, ast.IsNot)) \
                                and isinstance(t.comparators[0], ast.Constant) and isinstance(t.comparators[0].value, bool):
                            t = t.left  # `if self.x is True:`
                        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                            tests[t.attr] = tests.get(t.attr, 0) + 1
            found = next((k for k in sorted(cands) if tests.get(k, 0) >= 2), None)
        memo[id(info.node)] = (info.node, found)
        return found

    def identity_decorator(self, target: ast.AST) -> bool:
        """A decorator of the workspace that hands back the function it is given (`def lab_api(fn): ...; return
        fn`, SLM-Lab): the decorated method is the method. Only asked for methods: registries decorate module-level
        factories (timm's `@register_model`), which stay unanalysed on their own (their cost, measured)."""
        if not isinstance(target, (ast.Name, ast.Attribute)):
            return False
        val = self.eval(target, State())
        if not isinstance(val, FuncVal):
            return False
        fn = val.node
        params = fn.args.posonlyargs + fn.args.args
        if len(params) != 1 or fn.args.vararg or fn.args.kwarg or any(
                isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) for n in ast.walk(fn) if n is not fn):
            return False
        returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
        return bool(returns) and all(isinstance(r.value, ast.Name) and r.value.id == params[0].arg for r in returns)

    def flag_param(self, fn: ast.AST) -> Optional[str]:
        """The function's flag: a parameter with a `True`/`False` default that the body never rebinds and tests
        as `if flag:` / `if not flag:` in two places or more (`def worker(..., icm=False)`), or None."""
        if id(fn) in self.flag_params:
            return self.flag_params[id(fn)]
        a = fn.args
        params = a.posonlyargs + a.args
        flags = {name for name, d in param_defaults(a).items()
                 if isinstance(d, ast.Constant) and isinstance(d.value, bool)}
        found = None
        if flags:
            tests: dict = {}
            for n in walk(fn):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in flags:
                    flags.discard(n.id)
                elif isinstance(n, ast.If):
                    t = n.test.operand if isinstance(n.test, ast.UnaryOp) and isinstance(n.test.op, ast.Not) \
                        else n.test
                    if isinstance(t, ast.Name):
                        tests[t.id] = tests.get(t.id, 0) + 1
            found = next((p.arg for p in params + a.kwonlyargs if p.arg in flags and tests.get(p.arg, 0) >= 2), None)
        self.flag_params[id(fn)] = found
        return found

    @staticmethod
    def flag_truth(fn: ast.AST, flag: str, self_val, args, kwargs, node: ast.AST) -> Optional[bool]:
        """The truth of the flag parameter as this call binds it (None: unknown, both values possible)."""
        a = fn.args
        positional = [p.arg for p in a.posonlyargs + a.args]
        if self_val is not None and positional:
            positional = positional[1:]
        if flag in kwargs:
            val = kwargs[flag][1]
        elif flag in positional and positional.index(flag) < len(args):
            val = args[positional.index(flag)][1]
        else:
            if node is fn:
                return None  # analysed on its own: callers may pass either
            d = param_defaults(a).get(flag)
            return d.value if isinstance(d, ast.Constant) and isinstance(d.value, bool) else None
        return val.truth if isinstance(val, PyVal) else None

    def prune_dead_saves(self, fn: ast.AST, path: str, node: ast.AST, arg_vals, kw_vals, self_import, result,
                         exports, saves, flags: dict, dropped=None):
        """Saves whose graph died with the call's locals are saves no longer. A tensor an op saved counts as saved
        (for the in-place rules, GS204's `.data` writes included) only while a backward could still run through
        the op's graph; when a call returns, that graph lives on only in what the call hands back (its results, the
        attributes it leaves on `self`). `print(F.softplus(self.w))` at the end of a `reset_parameters` that
        `__init__` calls builds a graph that nothing keeps: the method's next call, writing `self.w.data.fill_(v)`
        before that line, changes nothing any backward reads. Pruned only where the text says no graph can go
        elsewhere (`_graph_homes`) and nothing was handed to code gradsight cannot see; a graph's segments
        (`segs`) held by a result or an attribute keep its saves. `dropped` (`discarded_result`): the parts of the
        result the calling statement throws away ("all", or the tuple's length and the unread positions), which
        keep nothing alive: `it, logp = sample(...)` with `logp` never read, a gather's saved index `it` is written
        in place freely."""
        if flags.get("escape"):
            return result, exports, saves
        entry = dict(self_import or ())
        kept = [result]
        if dropped == "all":
            kept = []
        elif dropped is not None and isinstance(result, SeqVal) and len(result.items) == dropped[0]:
            kept = [v for i, v in enumerate(result.items) if i not in dropped[1:]]
        homes = self.durable("graph_homes", fn, _graph_homes)
        if homes is None:
            # In-place writes into tensors the body made itself may graft a graph there without its segments:
            # prunable only when nothing the caller keeps carries a graph at all (checked first: it is cheap).
            if not (all(graph_free(v) for v in kept) and all(entry.get(k) == v or graph_free(v) for k, v in exports)):
                return result, exports, saves
            homes = self.durable("graph_homes_fresh", fn, _graph_homes_fresh)
            if homes is None:
                return result, exports, saves
        first, last = fn.lineno, getattr(fn, "end_lineno", None) or fn.lineno
        handed = _handed_segs(node, arg_vals, kw_vals, self_import)

        def inner(seg) -> bool:
            return type(seg) is tuple and len(seg) >= 3 and seg[0] == path and first <= seg[1] <= last \
                and seg not in handed

        def may_hide(v) -> bool:
            if isinstance(v, SeqVal):
                return any(may_hide(i) for i in v.items)
            return not (graph_free(v) or isinstance(v, (TensorVal, ParamsVal)))

        # An unknown attribute is what the caller handed in when it is unchanged, or the body only copies a
        # parameter into it; anything else unknown may hold a graph the call built.
        if may_hide(result) or any(may_hide(v) and not (v is UNKNOWN and k in homes) and entry.get(k) != v
                                   for k, v in exports):
            return result, exports, saves
        live: set = set()
        for v in kept + [v for _, v in exports]:
            for _, t in flat_tensors([(node, v)]):
                live |= t.segs
        dead = {seg for _, _, seg in saves if inner(seg) and seg not in live}

        fact_path = None if path == self.root_path else path
        all_dead = not any(inner(seg) for seg in live)

        def prune(v: TensorVal) -> TensorVal:
            if v.saved_seg is not None and inner(v.saved_seg) and v.saved_seg not in live:
                dead.add(v.saved_seg)
                return v.with_(saved=None, saved_seg=None)
            if v.saved_seg is None and v.saved is not None and all_dead and v.saved.path == fact_path \
                    and isinstance(v.saved.line, int) and first <= v.saved.line <= last:
                # Saved on several paths by ops of this body at different sites (no one segment): no graph the
                # body made outlives the call, so none of them is a save any more.
                return v.with_(saved=None)
            return v

        result = map_tensors(result, prune) if isinstance(result, Value) else result
        exports = tuple((k, map_tensors(v, prune)) for k, v in exports)
        saves = tuple(e for e in saves if e[2] not in dead)
        return result, exports, saves

    def localize_segs(self, fn: ast.AST, path: str, node: ast.AST, arg_vals, kw_vals, self_import, result, exports,
                      saves, want_state: bool):
        """Graph segments a call made inside the function's body become segments of the call site. Two calls
        of one function (or two instances of one module class, SAC's and TD3's twin critics `qf1(s, a)` and
        `qf2(s, a)`) build two graphs: a backward through one frees nothing of the other, although both were
        built by the same lines. Segments the call was handed (its arguments, `self`'s attributes) stay as they
        are, so a graph it only passes on, or keeps in `self` and returns later, is still the same graph.

        The inner segments are grouped by which of the result's tensors hold them: one segment per group, at the
        call site. A call with one output gets one segment, as before; a twin-Q network's `return x1, x2`, whose
        heads separate branches built, gets one per head (a backward through one frees nothing of the other),
        and a trunk both heads share gets one of its own that both carry. The sets stay small however deep the
        call (a 12-block transformer carries one segment per call, not one per op)."""
        if node is fn or want_state:
            return result, exports, saves
        first, last = fn.lineno, getattr(fn, "end_lineno", None) or fn.lineno
        handed = _handed_segs(node, arg_vals, kw_vals, self_import)
        site = self.site(node)

        def inner(seg) -> bool:
            return type(seg) is tuple and len(seg) >= 3 and seg[0] == path and first <= seg[1] <= last \
                and seg not in handed

        groups: dict = {}
        outs = [t for _, t in flat_tensors([(node, result)])] if isinstance(result, SeqVal) else ()
        if len(outs) > 1:
            for i, t in enumerate(outs[:8]):
                for seg in t.segs:
                    if inner(seg):
                        groups.setdefault(seg, []).append(i)

        def at_site(seg) -> tuple:
            owners = groups.get(seg)
            return site + (tuple(owners),) if owners else site

        handed_cells = None

        def own_cell(cell) -> bool:
            # A tensor the body allocated (not one it was handed): each call site gets a cell of its own, so the
            # outputs of two calls of one function (two instances of one wrapper module) are no aliases.
            nonlocal handed_cells
            if not (type(cell) is tuple and len(cell) >= 3 and cell[0] == path and first <= cell[1] <= last):
                return False
            if handed_cells is None:
                handed_cells = {t.storage for v in list(arg_vals) + list(kw_vals.values())
                                + [v for _, v in (self_import or ())] for _, t in flat_tensors([(node, v)])}
            return cell not in handed_cells

        def local(v: TensorVal) -> TensorVal:
            new = frozenset(s for s in v.segs if inner(s))
            moved = v.saved_seg is not None and inner(v.saved_seg)
            cell = v.storage is not None and own_cell(v.storage)
            if not new and not moved and not cell:
                return v
            return v.with_(segs=(v.segs - new) | {at_site(s) for s in new} if new else v.segs,
                           saved_seg=at_site(v.saved_seg) if moved else v.saved_seg,
                           storage=site + (v.storage,) if cell else v.storage)

        if isinstance(result, Value):
            result = self.own_modules(map_tensors(result, local), path, first, last, node)
        exports = tuple((k, map_tensors(v, local)) for k, v in exports)
        saves = tuple((site + (storage,) if own_cell(storage) else storage, op, at_site(seg) if inner(seg) else seg)
                      for storage, op, seg in saves)
        return result, exports, saves

    def own_modules(self, result: Value, path: str, first: int, last: int, node: ast.AST) -> Value:
        """A module a factory function builds and returns alone (`def make_net(): return Net()`) is a new module at
        each call: made where the call is, so two nets from two calls train apart (co-teaching's `clf1`, `clf2`,
        `PreActResNet18()` from another file)."""
        o = result.origin if isinstance(result, ModuleVal) else None
        if o is not None and (o.path is None and path == self.scope.path or o.path == path) and first <= o.line <= last:
            return replace(result, origin=self.expr_fact(node))
        return result

    def settle_inplace(self, pending: list, fn: ast.AST, flags: dict, rets: list, envs: list) -> None:
        """At a function's end, the in-place writes on saved tensors its body (and its callees) made, as (event, line
        in this body: the write, or the call it came up through): reported when a backward may run after them or a
        graph went where gradsight cannot follow; handed to the caller, whose own end decides, when only the
        function's results or attributes carry graphs; dropped when every graph it built dies with its locals."""
        if flags.get("escape"):
            for event, _ in pending:
                self.deliver(event)
            return
        lines = flags.get("backward_at")
        if lines:
            # A write matters to a backward that runs after it in this body, or elsewhere in a loop holding both
            # (a later iteration). One that ran only before it (TRPO's `autograd.grad` of the old loss, then a line
            # search that divides by `expected_improve` and scales it in place) never reads what it saved; nor does
            # the backward inside the very call a callee's write came up through (the callee already checked it).
            loops = [(n.lineno, n.end_lineno or n.lineno) for n in walk(fn)
                     if isinstance(n, (ast.For, ast.AsyncFor, ast.While))]
            later = []
            for event, at in pending:
                if any(b > at or (b != at and any(lo <= b <= hi and lo <= at <= hi for lo, hi in loops))
                       or (b == at and at == getattr(event.node, "lineno", -1)) for b in lines):
                    self.deliver(event)
                else:
                    later.append((event, at))
            pending = later
            if not pending:
                return
        if not self.graph_outlives(fn, rets, envs):
            return
        if self.pending_inplace:
            called_at = flags.get("called_at", 0)
            self.pending_inplace[-1].extend((event, called_at) for event, _ in pending)
        else:
            for event, _ in pending:
                self.deliver(event)

    def settle_dropped(self, pending: list, fn: ast.AST, flags: dict, rets: list, envs: list) -> None:
        """At a function's end, the accumulations its loops made without a backward (`check_accumulate`) and the
        states they fed back into the next iteration (`check_carry`): when the function never backwards (nor does
        anything it calls), hands no graph to code gradsight cannot see, and returns or leaves no graph
        (`graph_outlives`), nothing can ever backward what those loops kept: it grew with every iteration for
        nothing (flair's `generate_text` feeding `hidden` back, a validation loop summing its losses then logging
        `.item()`). Reported as such (`dropped`); otherwise an accumulation is reported as it was seen, and a
        state fed back is not reported (an unrolled recurrence whose result a caller backwards)."""
        dropped = not flags.get("escape") and not flags.get("backward_at") \
            and self.syntax("has_backward", fn, _has_backward) is None \
            and not self.syntax("stores_outside", fn, _stores_outside) \
            and not self.graph_outlives(fn, [] if self.syntax("returns_numbers", fn, _returns_numbers) else rets, envs)
        for event in pending:
            if dropped:
                self.deliver(replace(event, dropped=True))
            elif event.how != "carry":
                self.deliver(event)

    @staticmethod
    def graph_outlives(fn: ast.AST, rets: list, envs: list) -> bool:
        """Whether a graph built in the function `fn` (which neither backwarded nor handed a graph to unseen code:
        `settle_inplace` asks that first) may still be backwarded after it returns, so that an in-place write on a
        tensor it saved matters: it yields, it returns something that may carry a graph, or it left one in an
        attribute or item (`self.cache = ...`, `state["h"] = ...`). Otherwise every graph it built dies with its
        locals (an inference method that detaches what it hands back: labelmodels' posteriors), and writing into
        a saved tensor there makes nothing raise. (Which graph outlives is not asked: a value's segments miss
        the other operand of an in-place op, `x += residual`, so they cannot tell.)"""
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(fn)):
            return True
        if not all(graph_free(v) for v in rets):
            return True
        for env in envs:
            for key, v in env.items():
                if ("." in key or "[" in key) and not graph_free(v):
                    return True
        return False

    def fresh_from_call(self, result: Value, fn: ast.AST, path: str, state: State) -> None:
        """Tensors the call allocated (their storage site is in the function's body) are new: references in the
        caller to a tensor an earlier call allocated at the same site (the previous block's output, now this block's
        input) stop being their aliases. A tensor the function was handed and returns keeps its storage."""
        first, last = fn.lineno, getattr(fn, "end_lineno", None) or fn.lineno
        fresh = {v.storage for v in (result.items if isinstance(result, SeqVal) else (result,))
                 if isinstance(v, TensorVal) and v.storage is not None and v.storage[0] == path
                 and first <= v.storage[1] <= last}
        if not fresh:
            return
        for k, v in list(state.env.items()):
            # Only references an op saved matter (an in-place write through an alias is checked against saves);
            # leaving the others alone keeps loop heads stable.
            if isinstance(v, TensorVal) and v.storage in fresh and v.saved is not None:
                state.env[k] = v.with_(storage=None)

    def saved_in_call(self, saves: tuple, node: ast.AST, state: State) -> None:
        """The caller's side of `call_saves`: references in `state` to a storage an op saved inside the call
        count as saved (an in-place write on them afterwards makes that backward raise), and so they do for the
        caller's caller."""
        if not saves:
            return
        if self.call_saves:
            self.call_saves[-1].extend(saves)
        by_storage = {}
        for storage, op, seg in saves:
            by_storage.setdefault(storage, (op, seg))
        for k, v in list(state.env.items()):
            if not isinstance(v, TensorVal) or v.saved is not None or v.is_data or v.storage not in by_storage:
                continue
            op, seg = by_storage[v.storage]
            state.env[k] = v.with_(saved=self.fact(node, "saved-in-call", op=op, call=self.seg(node)), saved_seg=seg)

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


_STORING_METHODS = frozenset({"append", "extend", "insert", "update", "add", "setdefault", "put", "put_nowait"})


def _stores_outside(fn: ast.AST) -> bool:
    """Whether `fn` writes something other than a number into an object it did not make: an item or attribute of
    a parameter or a global (`results[k] = total`, `self.cache = h`, `history.append(loss)`), or a global name.
    What it stores there may outlive the call, whatever gradsight knows of the value."""
    local: set = set()
    declared: set = set()
    for n in walk(fn):
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            declared.update(n.names)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            local.add(n.id)
    local -= declared

    def outside(target: ast.AST) -> bool:
        while isinstance(target, (ast.Attribute, ast.Subscript)):
            target = target.value
        return not isinstance(target, ast.Name) or target.id not in local

    for n in walk(fn):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if _number_expr(n.value):
                continue
            for t in targets:
                if isinstance(t, ast.Name) and t.id in declared:
                    return True
                if isinstance(t, (ast.Attribute, ast.Subscript)) and outside(t):
                    return True
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _STORING_METHODS \
                and n.args and not all(_number_expr(a) for a in n.args) and outside(n.func.value) \
                and isinstance(n.func.value, (ast.Name, ast.Attribute, ast.Subscript)):
            return True
    return False


def _handed_segs(node: ast.AST, arg_vals, kw_vals, self_import) -> set:
    """The graph segments (and saved segments) a call was handed: its arguments' and `self`'s attributes'."""
    handed: set = set()
    for v in list(arg_vals) + list(kw_vals.values()) + [v for _, v in (self_import or ())]:
        for _, t in flat_tensors([(node, v)]):
            handed |= t.segs
            if t.saved_seg is not None:
                handed.add(t.saved_seg)
    return handed

