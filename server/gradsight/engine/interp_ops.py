"""Differentiable ops and the heap: tensor methods, the op table, saved tensors and the storage they share with
their aliases, in-place writes, backward."""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import walk
from .gradtests import grad_tested, grad_tests
from . import torchdb as db
from .call_writes import note_write
from .events import (BackwardEvent, BootstrapTargetEvent, CarryEvent, FactoryEvent, InferenceSaveEvent, InplaceEvent,
                     LossTargetEvent, NumpyEvent, OutArgEvent, SameTensorLossEvent, StoreGraphEvent, TensorHookEvent,
                     ViewInplaceEvent)
from .interp_util import (grad_origins, _basic_index, _broadcast, _cap, _fsite, _pcut_of, _pretty, _reduced_shape,
                          _saved_input_indices, const_bool, key_of, kwarg, map_tensors)
from .paths import gates_update
from .state import State
from .values import (GRAD_MODE_OFF, MADE_LEAF_REQUIRE_GRAD, MAYBE_SAME_LEAF, ONLY_FROM_NO_GRAD, UNKNOWN, UNKNOWN_REACH,
                     USE, Fact, ModuleVal, ParamCut, ParamReach, ParentOf, PyVal, SeqVal, TensorVal, Tri, Value, join_all)


def _input_segs(val: Optional[Value]) -> Optional[frozenset]:
    """The graph segments in the history of `torch.autograd.grad`'s inputs (None when an input is not known)."""
    if isinstance(val, TensorVal):
        return val.segs
    if isinstance(val, SeqVal) and val.items and all(isinstance(v, TensorVal) for v in val.items):
        return frozenset().union(*[v.segs for v in val.items])
    return None


# Ops that keep a bootstrapped target one (`TensorVal.boot`): shape ops and casts of it alone.
_BOOT_KEEPS = frozenset({"view", "view_as", "reshape", "squeeze", "unsqueeze", "flatten", "expand", "expand_as",
                         "float", "double", "half", "to", "type", "type_as", "contiguous", "__getitem__"})
# Facts that say an input was taken as requiring grad from the code's own evidence (`engine/gradtests.py`): a save
# that rests on one says so.
_TAKEN_KINDS = ("grad-tested", "out-of-place-twin")
_ARITH = frozenset({"__mul__", "__rmul__", "__add__", "__radd__", "__sub__", "__rsub__", "mul", "add", "sub"})


def _float_literal(node) -> bool:
    """`1.0`, `-0.5`, `2e-3`: a Python float written in the code."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, float)


class OpsMixin:
    """Part of `Interpreter` (see interp.py)."""

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
        out_node = kwargs.get("out", (None, None))[0]
        if "out" in kwargs and state.grad is not Tri.NO and not (isinstance(out_node, ast.Constant)
                                                                 and out_node.value is None):  # `out=None`: the default
            grads = tuple(self.seg(n) for n, v in tensor_args if v.rg is Tri.YES)
            if grads:
                self.emit(OutArgEvent(node, qual, grads, state.grad))
        if not tensor_args and not any(isinstance(v, (SeqVal,)) for _, v in args):
            if state.grad is Tri.NO and args and any(v is UNKNOWN for _, v in args) \
                    and db.op_entry(qual) is not None and not db.nondifferentiable(qual):
                # A differentiable torch op run with grad mode off returns a tensor without history whatever its
                # inputs are (`F.cross_entropy(model(x), y)` under `torch.no_grad()`): certain, from torch's
                # semantics alone.
                return TensorVal(rg=Tri.NO, leaf=Tri.YES, origin=self.expr_fact(node, "from"),
                                 nograd=self.fact(node, GRAD_MODE_OFF, state.grad_why), inference=state.inference,
                                 storage=self.site(node))
            return UNKNOWN
        if short in db.LOSSES_WITH_TARGET:
            pred = args[0] if args else kwargs.get("input")
            target = args[1] if len(args) > 1 else kwargs.get("target")
            if pred is not None and target is not None:
                self.check_loss_target(short, pred, target, node, state)
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

    def tensor_transform(self, short: str, args, kwargs, node: ast.Call) -> Optional[Value]:
        """torchvision's tensor transforms that autograd follows: `transforms.Normalize(mean, std)` is an
        `nn.Module` without parameters whose output (`(x - mean) / std` on a clone of `x`) keeps `x`'s history, and
        `transforms.Compose([...])` of such transforms runs them in order, like an `nn.Sequential`. Any other
        transform (`ToTensor`, `ToPILImage`, random augmentations), and `Normalize(..., inplace=True)`, stays
        unknown: None, and the call is handled like any other library call."""
        origin = self.expr_fact(node)
        if short == "Normalize":
            flag = kwargs.get("inplace", args[3] if len(args) > 3 else (None, None))[0]
            if flag is not None and const_bool(flag) is not False:
                return None
            return ModuleVal("torchvision.transforms.Normalize", has_params=Tri.NO, origin=origin)
        if short == "Compose" and len(args) == 1 and not kwargs and isinstance(args[0][1], SeqVal) \
                and not args[0][1].homog and args[0][1].items \
                and all(isinstance(v, ModuleVal) and v.qual == "torchvision.transforms.Normalize"
                        for v in args[0][1].items):
            return ModuleVal("torchvision.transforms.Compose", layers=args[0][1].items, has_params=Tri.NO,
                             origin=origin)
        return None

    def rnn_packing(self, qual: str, args, node: ast.Call, state: State) -> Value:
        """`torch.nn.utils.rnn`: packing copies the padded tensor into a `PackedSequence` whose `data` has the
        input's grad state (an RNN module takes it like a tensor); unpacking returns `(padded, lengths)`, the padded
        tensor with the packed data's grad state. `pad_sequence` stacks a list of tensors. Anything else there
        (`clip_grad_norm_`, `parameters_to_vector`, ...) stays unknown."""
        short = qual.rsplit(".", 1)[-1]
        first = args[0][1] if args else UNKNOWN
        if short == "pad_sequence" and isinstance(first, SeqVal) and first.items:
            first = join_all(first.items)
        if short not in ("pack_padded_sequence", "pad_packed_sequence", "pad_sequence") \
                or not isinstance(first, TensorVal):
            return UNKNOWN
        out = first.with_(origin=self.expr_fact(node, "from"), storage=self.site(node), view=None, saved=None,
                          shape=None, leaf=first.leaf if first.rg is not Tri.YES else Tri.NO, multiview=False,
                          leaf_view=False, nograd_view=False, is_data=False)
        if short == "pad_packed_sequence":
            lengths = TensorVal(rg=Tri.NO, leaf=Tri.YES, is_int=Tri.YES, origin=self.expr_fact(node, "from"),
                                nograd=self.fact(node, "not-differentiable", op=short))
            return SeqVal((out, lengths))
        return out

    def tensor_method(self, name: str, recv_node: ast.AST, recv: TensorVal, args, node: ast.Call,
                      state: State, kwvals: Optional[dict] = None) -> Value:
        if name == "backward":
            kwargs = kwvals if kwvals is not None else {kw.arg: (kw.value, UNKNOWN) for kw in node.keywords if kw.arg}
            gradient = args[0] if args else kwargs.get("gradient")
            self.backward(recv, recv_node, node, state, "Tensor.backward", kwargs, positional=len(args),
                          gradient=gradient)
            return PyVal()
        if name in db.DISTRIBUTION_ONLY:
            # No tensor has the method: the value taken for a tensor (a model's output `dist, value = model(s)`) is
            # a distribution; its samples carry no graph, its `rsample()`/`log_prob()` depend on its parameters.
            if name in db.SAMPLES_WITHOUT_GRAD:
                return TensorVal(rg=Tri.NO, leaf=Tri.YES, origin=self.expr_fact(node),
                                 nograd=self.expr_fact(node, "sampled"))
            return UNKNOWN
        if name == "detach":
            for s in recv.sources:
                self.cut_sources.setdefault(s, self.expr_fact(node))
            # `.detach()` shares the storage and the version counter of what it detaches.
            return TensorVal(rg=Tri.NO, leaf=Tri.YES, shape=recv.shape, is_int=recv.is_int, origin=recv.origin,
                             nograd=self.expr_fact(node, "detached-by"), pcut=self.cut_params(recv, node), storage=recv.storage)
        if name in db.CUT_METHODS:
            if name == "numpy":
                self.emit(NumpyEvent(node, recv, self.seg(recv_node), "Tensor.numpy", insert_at=recv_node))
            if recv.rg is not Tri.NO:
                for s in recv.sources:
                    self.cut_sources.setdefault(s, self.fact(node, "cut-method", method=name, what=db.CUT_METHODS[name]))
            return PyVal(cut=self.fact(node, "cut-method-of", method=name, expr=self.seg(recv_node), what=db.CUT_METHODS[name]),
                         pcut=self.cut_params(recv, node))
        if name in ("new_zeros", "new_ones", "new_full", "new_empty", "new_tensor", "new"):
            # A new tensor with the receiver's dtype and device, and no history (`requires_grad=` as for factories);
            # the legacy `x.new(*sizes)` / `x.new(data)` is an uninitialised or copied tensor, without history too.
            short = "tensor" if name == "new_tensor" else "empty" if name == "new" else name[4:]
            return self.factory(short, args, kwvals or {}, node, state, label=f".{name}()")
        if name == "requires_grad_":
            flag = const_bool(args[0][0]) if args else True
            self.emit(FactoryEvent(node, recv, "requires_grad_", Tri.of(flag), state.grad, state.inference))
            key = key_of(recv_node)
            if recv.leaf is Tri.YES:
                rg = Tri.of(flag)
                site = self.site(node)
                new = recv.with_(rg=rg, nograd=None if rg is not Tri.NO else self.fact(node, "requires-grad-false-call"),
                                 sources=recv.sources | ({site} if rg is Tri.YES and not recv.param else set()),
                                 origin=self.expr_fact(node, MADE_LEAF_REQUIRE_GRAD, recv.origin))
                if rg is Tri.YES and not recv.param and not recv.evidence:
                    # A tensor known only from use (`v.detach()` of an unseen `v`) feeds code gradsight cannot see
                    # (`self.get_logits(adv)`): whether its gradient is ever read is not known (GS202 stays quiet).
                    self.grad_leaves.setdefault(site, ("requires_grad_()", new.origin))
                if key:
                    state.set(key, new)
                return new
            if recv.leaf is Tri.MAYBE and flag is True and recv.rg is not Tri.YES:
                # If the tensor is a leaf, it is a gradient origin of its own from here on: `autograd.grad(loss,
                # [x_adv])` after `x_adv = x.detach() + noise; x_adv.requires_grad_()` reaches this site and nothing
                # else of the value's unknown past (TRADES' attack loop, whose clean-branch graph that grad never
                # runs). Its grad state is left as it was: whether `x` already had a graph (a non-leaf, which
                # `requires_grad_()` leaves as it is) stays open, and GS501 reads that as "may be a non-leaf".
                new = recv.with_(sources=recv.sources | {self.site(node)})
                if key:
                    state.set(key, new)
                return new
            return recv
        if name == "retain_grad":
            key = key_of(recv_node)
            if key and state.get(key) == recv:
                state.set(key, recv.with_(retains=True))
            return PyVal()
        if name == "register_hook":
            self.emit(TensorHookEvent(node, recv, self.seg(recv_node)))
        if name in ("register_hook", "size", "dim", "numel", "stride", "element_size"):
            return PyVal() if name in ("size", "dim", "numel", "stride", "element_size") else recv
        if name == "detach_" and recv.view is not None:
            self.emit(ViewInplaceEvent(node, recv, self.seg(recv_node), "detach_", state.grad))
        if name in ("resize_", "resize_as_") and recv.rg is Tri.YES:
            self.emit(ViewInplaceEvent(node, recv, self.seg(recv_node), name, state.grad))
            return recv
        if name == "detach_":
            new = recv.with_(rg=Tri.NO, leaf=Tri.YES, nograd=self.fact(node, "detached-in-place"))
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
        if name in ("to", "type") and any(self.int_dtype(d) for d in [kwarg(node, "dtype")] + list(node.args)):
            # A cast to an integer or bool dtype (`.to(torch.uint8)`, `.type(torch.LongTensor)`) has no gradient:
            # torch gives a tensor that does not require grad, whatever the input.
            return TensorVal(rg=Tri.NO, leaf=Tri.YES, is_int=Tri.YES, origin=self.expr_fact(node),
                             nograd=self.expr_fact(node, "int-cast"))
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
        if recv.leaf is Tri.YES and recv.rg is Tri.YES:
            # `torch.zeros(1, requires_grad=True).to(device)`: the leaf itself where nothing changes (GS302 warns of
            # an in-place op on it), a copy with history on another device or dtype.
            return result.with_(leaf=Tri.MAYBE, rg=recv.rg,
                                origin=self.fact(node, MAYBE_SAME_LEAF, recv.origin, expr=self.seg(node), op=name))
        return result.with_(leaf=Tri.MAYBE, rg=recv.rg) if recv.leaf is not Tri.NO else result

    def int_dtype(self, node: Optional[ast.AST]) -> bool:
        """Whether a dtype argument surely names an integer or bool dtype: `torch.long`, `torch.uint8`, the builtins
        `int` and `bool`, a legacy integer tensor type (`torch.LongTensor`, `torch.cuda.ByteTensor`) or its name as a
        string (`"torch.LongTensor"`)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            qual = node.value
        elif isinstance(node, (ast.Name, ast.Attribute)):
            qual = self.static_qual(node) or ""
        else:
            return False
        if qual in ("builtins.int", "builtins.bool"):
            return True
        head, _, last = qual.rpartition(".")
        if head == "torch":
            return last in db.INT_DTYPES or last in db.INT_TENSOR_TYPES
        return head == "torch.cuda" and last in db.INT_TENSOR_TYPES

    def check_loss_target(self, op: str, pred, target, node: ast.AST, state: State) -> None:
        """A loss comparing a prediction with a target, both with graphs, where the target's graph runs through a
        module that no optimizer in view trains and that the prediction does not run through: a target network or
        a teacher whose output was not detached (`LossTargetEvent`, GS418); a bootstrapped target (`r + gamma * v`)
        whose graph runs through a trained module the prediction also runs through (`BootstrapTargetEvent`, GS421).
        Certain facts only: both require grad, the prediction's graph reaches a module an optimizer trains, grad
        mode is on."""
        if not self.reporting or state.grad is not Tri.YES:
            return
        self.inference_target(op, pred, target, node, state)
        (pred_node, p), (target_node, t) = pred, target
        if op in db.DISTANCE_LOSSES and isinstance(p, TensorVal) and isinstance(t, TensorVal) \
                and p.storage is not None and p.storage == t.storage and p.view is None and t.view is None \
                and not p.multiview and not t.multiview and Tri.YES in (p.rg, t.rg) and self.allocated_here(p.storage):
            self.emit(SameTensorLossEvent(node, op, pred_node, target_node))
        if not (isinstance(p, TensorVal) and isinstance(t, TensorVal)) or p.rg is not Tri.YES or not p.psrc \
                or not t.psrc or not any(self.is_trained(site) for site in p.psrc):
            return
        if t.rg is Tri.YES and t.leaf is Tri.NO:
            untrained = tuple((site, self.module_name(site)) for site in sorted(t.psrc - p.psrc, key=repr)
                              if not self.is_trained(site))
            if untrained:
                self.emit(LossTargetEvent(node, op, self.seg(target_node), target_node, untrained, t.origin))
        elif t.rg is not Tri.MAYBE or t.boot is None:
            # A bootstrapped target that has a graph on one path only (`if self.double: v = self.q(s2)` / `else:`
            # from the target network, detached) still trains through it on that path.
            return
        if t.boot is None or not t.psrc <= p.psrc:
            # Only a target whose graph runs through nothing but the prediction's modules: a target network of the
            # same class shares its sub-modules' sites with the online one, but not its own (GS418's case). An
            # unknown input (a method's argument) may add modules to the target's graph; it still runs through these.
            return
        outer = sorted(t.psrc, key=lambda s: (any(ParentOf(s, o) in self.optimized_modules for o in t.psrc), repr(s)))
        shared = tuple((site, self.module_name(site)) for site in outer if self.is_trained(site))
        if shared:
            self.emit(BootstrapTargetEvent(node, op, self.seg(target_node), target_node, shared, t.boot))

    def inference_target(self, op: str, pred, target, node: ast.AST, state: State) -> None:
        """A loss, run with grad mode on, whose target this function made inside its own `torch.inference_mode()`
        block and whose prediction's grad state is unknown (a parameter, a model gradsight cannot see): the function
        left inference mode to compute the loss with autograd on, so the prediction is taken to require grad
        (evidence from use), and the loss must save the inference target (timm's KD: `kl_div(prob_s, prob_t)`).
        Only where the loss saves its target whenever the prediction requires grad (docs/optable.md)."""
        (pred_node, p), (target_node, t) = pred, target
        if state.inference or not isinstance(t, TensorVal) or not t.inference or t.origin is None \
                or t.origin.path is not None or not self.stack:
            return
        if not (p is UNKNOWN or isinstance(p, TensorVal) and p.rg is Tri.MAYBE):
            return
        fn = self.stack[-1]
        if not fn.lineno <= t.origin.line <= (fn.end_lineno or fn.lineno):
            return  # made by a caller or elsewhere: not this function's own bracket
        entry = db.op_entry(f"torch.nn.{op}" if op[:1].isupper() else f"torch.nn.functional.{op}")
        triggers = ((entry or {}).get("saves_inputs") or {}).get("1")
        if triggers is None or (triggers and 0 not in triggers):
            return
        bracket = self.inference_bracket(fn, t.origin.line)
        if bracket is None:
            return
        why = self.fact(pred_node, "inference-bracket", expr=self.seg(pred_node))
        # The finding stands on the `with` the user must change (`torch.no_grad()` instead); the loss raises.
        self.emit(InferenceSaveEvent(bracket, t, self.seg(target_node), op, evidence=why, raises=node))

    def inference_bracket(self, fn: ast.AST, line: int) -> Optional[ast.AST]:
        """The `torch.inference_mode()` of a `with` statement of `fn` whose body holds `line`, if any."""
        for n in walk(fn):
            if not isinstance(n, (ast.With, ast.AsyncWith)) or not n.body \
                    or not n.body[0].lineno <= line <= (n.end_lineno or n.lineno):
                continue
            for item in n.items:
                call = item.context_expr
                qual = self.static_qual(call.func) if isinstance(call, ast.Call) else None
                mode = db.GRAD_MODE.get(qual or "")
                if mode is not None and mode[1]:
                    return call
        return None

    def allocated_here(self, storage) -> bool:
        """Whether an allocation site is a statement of the code running now (this function's body, or module-level
        code): a site inside a function it called is the same for every call of it, so two calls' results
        (mmagic's perceptual loss: `self.vgg(pred)` and `self.vgg(gt)`) share it without sharing memory."""
        path, line = storage[0], storage[1]
        if path != self.scope.path:
            return False
        fn = self.stack[-1] if self.stack else None
        if fn is None:
            return not any(isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                           and d.lineno <= line <= (d.end_lineno or d.lineno) for d in self.scope.tree.body)
        return fn.lineno <= line <= (fn.end_lineno or fn.lineno)

    def tensor_op(self, qual: str, args, node: ast.AST, state: State, kwargs=None) -> Value:
        """A differentiable op: the result's grad state from its inputs, and what it saves for backward."""
        short = qual.rsplit(".", 1)[-1]
        nd = db.nondifferentiable(qual)
        if nd is None and self.stack and state.grad is not Tri.NO and not state.inference:
            args = self.grad_tested_args(args, node, state)
        tensors = [(n, v) for n, v in args if isinstance(v, TensorVal)]
        unknown_inputs = any(v is UNKNOWN for _, v in args)
        if nd == "no_grad" or short in ("long", "int", "bool", "byte", "short", "char"):
            return TensorVal(rg=Tri.NO, leaf=Tri.YES, is_int=Tri.YES, origin=self.expr_fact(node), nograd=self.fact(node, "not-differentiable", op=short))
        if not tensors:
            if state.inference and unknown_inputs:
                # Whatever its inputs, a torch op under `torch.inference_mode()` makes an inference tensor (timm's
                # KD teacher: `softmax(teacher(x))` on a model gradsight cannot see).
                why = self.fact(node, "inference-mode-op", op=short)
                return TensorVal(rg=Tri.NO, leaf=Tri.YES, inference=True, origin=self.expr_fact(node), nograd=why)
            if qual in db.SPARSE_CONSTRUCTORS and unknown_inputs and state.grad is not Tri.NO:
                # A sparse matrix built from values gradsight cannot see (pytorch3d's cotangent Laplacian from a
                # function's `verts`): a tensor that may require grad, so in-place writes to it are checked (GS309).
                return TensorVal(rg=Tri.MAYBE, leaf=Tri.MAYBE, origin=self.expr_fact(node, "from"),
                                 storage=self.site(node))
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
        origin = self.expr_fact(node, "from")
        nograd = None
        if rg is Tri.NO:
            if state.grad is Tri.NO:
                nograd = self.fact(node, GRAD_MODE_OFF, state.grad_why)
            else:
                cause = next((v.nograd for _, v in tensors if v.nograd is not None), None)
                nograd = self.fact(node, ONLY_FROM_NO_GRAD, cause)
        segs: frozenset = frozenset()
        sources: frozenset = frozenset()
        psaved: frozenset = frozenset()
        stepped = None
        freed = None
        freed_sure = True
        carried = None
        via = None
        stored = None
        entry = db.op_entry(qual, [True if isinstance(v, TensorVal) else None if v is UNKNOWN else False
                                   for _, v in args], keywords=kwargs or ()) if rg is not Tri.NO else None
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
                    via = via or v.via or self.expr_fact(n, USE)
                stored = stored or v.stored
            carried = carried or self.carry_check(tensors, node, state)
            if entry is not None and entry.get("saves_any") and rg is Tri.YES:
                segs = segs | {self.site(node)}
        saved_out = None
        if rg is Tri.YES and entry is not None:
            if entry.get("saves_output") and (short in db.DECOMPOSITIONS or 0 in entry.get("saved_outputs", (0,))):
                # `vals, idx = x.topk(k)` (sort, max/min along a dim): the table saves only output 1, the indices;
                # the result stands for the values, which no backward reads (bench/fresh19-false/05).
                # Saved because an input was taken as requiring grad on the function's own evidence: say so.
                why = next((v.origin for _, v in tensors if v.origin is not None and v.origin.kind in _TAKEN_KINDS),
                           None)
                saved_out = self.fact(node, "saved-by", why, op=_pretty(qual))
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
        elif is_int is not Tri.NO and short in _ARITH and any(_float_literal(n) for n, _ in args):
            is_int = Tri.NO  # `1.0 * (x > 0)`: a Python float promotes a bool or integer tensor to float32 (icefall)
        zerograd = None
        if rg is Tri.YES:
            if nd == "zero_grad":
                zerograd = self.fact(node, "zero-gradient", op=_pretty(qual))
            else:
                grad_inputs = [v for _, v in tensors if v.rg is not Tri.NO]
                if grad_inputs and all(v.zerograd is not None for v in grad_inputs):
                    zerograd = grad_inputs[0].zerograd
        view = None
        multiview = short in db.MULTI_VIEW
        if multiview or (short in db.VIEW_METHODS and (short != "__getitem__" or _basic_index(node))):
            view = self.expr_fact(node, "view")
        nograd_view = view is not None and state.grad is Tri.NO and not state.inference and any(
            v.rg is Tri.YES for _, v in tensors)
        base = tensors[0][1]
        leaf_view = view is not None and rg is Tri.YES and (
            (base.leaf is Tri.YES and base.rg is Tri.YES) or base.leaf_view)
        boot = self.bootstrap(short, args, state) if rg is not Tri.NO else None
        logp, adv = self.pg_markers(short, args, node, state) if rg is Tri.YES else (None, None)
        result = TensorVal(rg=rg, leaf=Tri.NO if rg is Tri.YES else (Tri.YES if rg is Tri.NO else Tri.MAYBE),
                           origin=origin, nograd=nograd, saved=saved_out, freed=freed, freed_sure=freed_sure,
                           segs=segs, sources=sources, shape=shape, is_int=is_int, inference=state.inference,
                           carried=carried, via=via, zerograd=zerograd, view=view, multiview=multiview,
                           nograd_view=nograd_view, saved_seg=saved_seg, leaf_view=leaf_view, psaved=psaved,
                           stepped=stepped, psrc=psrc, pcut=pcut, psrc_partial=partial,
                           storage=base.storage if view is not None else self.site(node), stored=stored,
                           evidence=rg is Tri.YES and all(v.evidence for _, v in tensors if v.rg is Tri.YES),
                           boot=boot, logp=logp, adv=adv)
        if view is not None and base.fnview is not None and rg is not Tri.NO:
            # A view of a custom Function's view (`out.view(b, n, t)`) is one too: torch refuses it in place alike.
            result = result.with_(fnview=base.fnview, fnview_sure=base.fnview_sure)
        if short in db.DECOMPOSITIONS and entry is not None and entry.get("saved_outputs"):
            # `Q, R = torch.linalg.qr(a)`: one tensor per output, each with its own storage, saved as the table says
            # (qr saves both: an in-place write on `R` or a view of it makes backward raise; std_mean only the std).
            saved_idx = entry["saved_outputs"]
            return SeqVal(tuple(result.with_(saved=saved_out if i in saved_idx else None,
                                             saved_seg=saved_seg if i in saved_idx else None,
                                             storage=(self.site(node), i), shape=None)
                                for i in range(db.DECOMPOSITIONS[short])))
        return result

    def grad_tested_args(self, args, node: ast.AST, state: State):
        """Arguments the function itself asks about: a name of unknown grad state whose `.requires_grad` a later test
        of this function reads is taken as requiring grad from here on (evidence from use, `engine/gradtests.py`)."""
        tests = self.syntax("grad-tests", self.stack[-1], lambda fn: grad_tests(fn, self.nodes))
        if tests is None:
            return args
        out = []
        for n, v in args:
            if isinstance(n, ast.Name) and (v is UNKNOWN or isinstance(v, TensorVal) and v.rg is Tri.MAYBE) \
                    and state.get(n.id) is v:
                if grad_tested(tests, n.id, node.lineno):
                    why = self.fact(n, "grad-tested", name=n.id)
                    base = v if isinstance(v, TensorVal) else TensorVal(leaf=Tri.MAYBE)
                    v = base.with_(rg=Tri.YES, leaf=Tri.MAYBE if base.leaf is not Tri.NO else Tri.NO, evidence=True,
                                   origin=why, nograd=None)
                    state.set(n.id, v)
            out.append((n, v))
        return out

    def bootstrap(self, short: str, args, state: State) -> Optional[Fact]:
        """The `boot` of an op's result: where the graph-carrying tensor of a bootstrapped target was made. `r + gamma *
        v` (also `r + (1 - done) * gamma * v`) is one: a sum of a term without gradient that is not a Python number
        (the reward, read from data) and a scaled term (`*` or `/`) whose graph runs through modules. Shape ops and
        casts of one such target keep it (`target.unsqueeze(1)`, `target.float()`)."""
        grad_args = [v for _, v in args if isinstance(v, TensorVal) and v.rg is not Tri.NO]
        if short in _BOOT_KEEPS and len(grad_args) == 1:
            return grad_args[0].boot
        if short not in ("__add__", "__radd__") or len(args) != 2:
            return None
        for (scaled_node, scaled), (rest_node, rest) in (args, args[::-1]):
            if not (isinstance(scaled_node, ast.BinOp) and isinstance(scaled_node.op, (ast.Mult, ast.Div))) \
                    or not isinstance(scaled, TensorVal) or scaled.rg is Tri.NO or not scaled.psrc:
                continue
            if isinstance(rest, TensorVal) and (rest.rg is not Tri.NO or rest.psrc):
                continue
            if isinstance(rest_node, ast.BinOp) and isinstance(rest_node.op, (ast.Mult, ast.Div)):
                continue  # `beta * y + (1 - beta) * p`: a mixture (soft bootstrapping), not a reward plus a value
            if rest is not UNKNOWN and not isinstance(rest, TensorVal):
                continue
            return self.scaled_origin(scaled_node, state)
        return None

    def scaled_origin(self, node: ast.AST, state: State) -> Fact:
        """Where the factor of a product (`gamma * (1 - done) * q_next`) that carries a graph through modules was made:
        a name's value's origin (`q_next = q(s2).max(1)[0]`), else the factor itself."""
        factors, todo = [], [node]
        while todo:
            n = todo.pop()
            if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mult, ast.Div)):
                todo.extend((n.right, n.left))
            else:
                factors.append(n)
        for f in factors:
            # `next_values.max(1)[0]`: a selection from a name leads to where that name's value was made.
            while isinstance(f, (ast.Call, ast.Attribute, ast.Subscript)) \
                    and isinstance(f.func if isinstance(f, ast.Call) else f, (ast.Attribute, ast.Subscript)):
                f = f.func.value if isinstance(f, ast.Call) else f.value
            origin = self.value_made(f, state)
            if origin is not None:
                return origin
        return self.expr_fact(node)

    def value_made(self, node: ast.AST, state: State) -> Optional[Fact]:
        """Where the graph of a name's tensor came from a module: its origin, followed back through assignments in
        the running function that only select from or reshape another such name (`q_next = next_q.gather(1, a2)`
        leads to `next_q = q(s2)`, where `torch.no_grad()` goes). None when `node` is not such a name."""
        fn = self.stack[-1] if self.stack else self.scope.tree
        origin = None
        for _ in range(4):
            v = state.get(node.id) if isinstance(node, ast.Name) else None
            if not isinstance(v, TensorVal) or v.rg is Tri.NO or not v.psrc or v.origin is None \
                    or v.origin.path is not None:
                return origin
            origin = v.origin
            made = next((n.value for n in walk(fn) if isinstance(n, ast.Assign) and n.lineno == origin.line
                         and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
                         and n.targets[0].id == node.id), None)
            node = made
            while isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
                node = node.func if isinstance(node, ast.Call) else node.value
        return origin

    def backwarded_model_output(self, loss: str, call: ast.AST, state: State) -> None:
        """Evidence from use, one step further: `loss = F.cross_entropy(out, y)` then `loss.backward()`, where
        `out = model(x)` came from a callable gradsight cannot see. A torch function has no parameters of its own,
        so the graph the backward needed came from its inputs; when exactly one of them is such a model output
        (the others being data), that output has a graph too (`out.numpy()` after it raises)."""
        region = self.loops[-1].node if self.loops else (self.stack[-1] if self.stack else None)
        if region is None:
            return
        line = getattr(call, "lineno", 0)
        binds: dict = {}  # name -> its last `name = ...` statement before the backward, in the region
        for n in walk(region):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                    and n.lineno < line:
                prev = binds.get(n.targets[0].id)
                if prev is None or (prev.lineno, prev.col_offset) < (n.lineno, n.col_offset):
                    binds[n.targets[0].id] = n
        made = binds.get(loss)
        if made is None or not isinstance(made.value, ast.Call) \
                or not (self.static_qual(made.value.func) or "").startswith("torch."):
            return
        outputs = []
        for arg in made.value.args:
            if not isinstance(arg, ast.Name):
                continue
            bound = binds.get(arg.id)
            if bound is None or not isinstance(bound.value, ast.Call) or not isinstance(bound.value.func, ast.Name):
                continue
            if state.get(bound.value.func.id) is UNKNOWN and state.get(arg.id) is UNKNOWN:
                outputs.append(arg)
        if len(outputs) != 1:
            return
        name = outputs[0].id
        state.set(name, TensorVal(rg=Tri.YES, leaf=Tri.NO, evidence=True,
                                  origin=self.fact(binds[name].value, "feeds-backwarded", expr=name, loss=loss)))

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
                self.emit(CarryEvent(node, v, self.seg(n), n, is_tuple, source=self.stale_source(n, v, node, state)))
                return self.fact(node, "carries-previous", expr=self.seg(n))
        return None

    def _in_current_loop(self, line: int) -> bool:
        loop = self.loops[-1].node
        return loop.lineno <= line <= (getattr(loop, "end_lineno", None) or loop.lineno)

    def mark_saved_inputs(self, qual: str, entry: dict, args, node: ast.AST, state: State) -> None:
        if self.discard_depth:
            return  # the op's result only feeds a comparison: its graph, and what it saved, is freed at once
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
            state.env[key] = val.with_(saved=self.fact(node, "saved-by", op=_pretty(qual)),
                                       saved_seg=self.site(node))

    def mark_saved_storage(self, arg_node: ast.AST, val: TensorVal, what: str, node: ast.AST, state: State) -> None:
        """An op saved `val`: every other reference to the same storage shares its version counter, so an in-place
        write through any of them makes that backward raise. They count as saved too (the heap's alias rule)."""
        if val.storage is None or val.is_data:
            return
        if self.call_saves:
            # Inside a called function: the caller's references to this storage are saved too (`saved_in_call`).
            self.call_saves[-1].append((val.storage, what, self.site(node)))
        key = key_of(arg_node)
        fact = None
        for k, v in list(state.env.items()):
            if k == key or not isinstance(v, TensorVal) or v.storage != val.storage or v.saved is not None \
                    or v.is_data:
                continue
            if fact is None:
                fact = self.fact(node, "storage-saved", expr=self.seg(arg_node), op=what)
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
        loop's previous iteration, or an earlier call of this function: a block's output fed back as the next
        block's input): references to that older one stop being its aliases."""
        if not isinstance(value, TensorVal) or value.storage is None or not (self.loops or self.stack):
            return
        line = value.storage[1]
        if value.storage[0] != self.scope.path or not (
                getattr(stmt, "lineno", 0) <= line <= (getattr(stmt, "end_lineno", None) or 0)):
            return
        self.retire_storage(value.storage, state)

    @staticmethod
    def retire_storage(site: tuple, state: State) -> None:
        """A module call about to allocate at `site` makes new tensors: references in `state` to what an earlier
        run of the same call allocated there (the previous block's output, now this block's input; last
        iteration's result) are other tensors, so they stop being aliases of the new ones. Otherwise an
        `nn.ReLU(inplace=True)` inside the call would seem to overwrite them."""
        for k, v in list(state.env.items()):
            if isinstance(v, TensorVal) and v.storage == site:
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
        state.set(key, base.with_(saved=self.fact(node, "view-saved", expr=self.seg(arg_node), op=_pretty(qual)),
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
        if target.rg is Tri.NO and state.grad is Tri.YES and module is None:
            self.check_store_graph(target_node, op, rhs, whole, True)
        if module is None:
            note_write(self, target_node, target, op, rhs, state, whole)
        if target.storage is None or target.storage != self.site(target_node):
            # Unless the write goes into what this very expression just allocated (`torch.FloatTensor(n).uniform_()`
            # in a loop): no reference holds that yet; references to its site hold an earlier run's tensor.
            self.alias_writes(target_node, target, op, state, stmt, whole)
        if target.multiview or target.nograd_view or target.fnview is not None:
            self.emit(ViewInplaceEvent(stmt, target, self.seg(target_node), op, state.grad))
        rg = target.rg
        extra = [v for v in rhs if isinstance(v, TensorVal)]
        if state.grad is not Tri.NO and any(v.rg is Tri.YES for v in extra):
            rg = Tri.YES
        elif state.grad is not Tri.NO and rg is Tri.NO and (any(v is UNKNOWN for v in rhs)
                                                              or any(v.rg is Tri.MAYBE for v in extra)):
            # `total += loss` with an unknown `loss`: `total` may now have history.
            rg = Tri.MAYBE
        leaf = target.leaf
        if state.grad is not Tri.NO and rg is not Tri.NO and target.leaf is Tri.YES and not target.param \
                and target.rg is Tri.NO:
            leaf = Tri.NO if rg is Tri.YES else Tri.MAYBE
        new = target.with_(saved=None, rg=rg, leaf=leaf, nograd=target.nograd if rg is Tri.NO else None,
                           sources=target.sources | frozenset().union(*[v.sources for v in extra]) if extra else target.sources,
                           psrc=target.psrc | frozenset().union(*[v.psrc for v in extra if v.rg is not Tri.NO]),
                           pcut=_cap(target.pcut | _pcut_of(extra)),
                           psrc_partial=target.psrc_partial or any(v is UNKNOWN for v in rhs)
                           or any(v.psrc_partial for v in extra))
        saved = self.inplace_saves_output(op, new, rhs, stmt, state)
        if saved is not None:
            new = new.with_(saved=saved, saved_seg=self.site(stmt))
        key = key_of(target_node)
        if key is not None:
            state.set(key, new)
        elif new.rg is not target.rg:
            self._write_through_index(target_node, target, new, state)
        self.record(target_node, new)
        return new

    def inplace_saves_output(self, op: str, new: TensorVal, rhs, stmt: ast.AST, state: State) -> Optional[Fact]:
        """`t.sqrt_()`, `t.exp_()`, `t.sigmoid_()` on a tensor that requires grad, in grad mode: like their out-of-place
        twins they save their result for backward (docs/optable.md), so a later in-place write into it (`.add_(eps)`)
        makes that backward raise. Certain facts only: `t.pow_(2)` (a Python number) saves no result, and an
        argument not known to be a tensor is taken as a number."""
        if new.rg is not Tri.YES or state.grad is not Tri.YES or state.inference or not op.isidentifier():
            return None
        entry = db.op_entry(f"torch.Tensor.{op}", [True] + [isinstance(v, TensorVal) for v in rhs])
        if entry is None or not entry.get("saves_output"):
            return None
        why = new.origin if new.origin is not None and new.origin.kind in _TAKEN_KINDS else None
        return self.fact(stmt, "saved-by", why, op=f".{op}()")

    def _write_through_index(self, target_node: ast.AST, target: TensorVal, new: TensorVal, state: State) -> None:
        """`fx2[i][j] = f(x)`: the write goes through `fx2[i]`, a view that has no name, into `fx2`'s storage;
        a value with history written into a view gives the base history too (torch's CopySlices)."""
        root = target_node
        while isinstance(root, ast.Subscript):
            root = root.value
        rkey = key_of(root) if root is not target_node else None
        base = state.get(rkey) if rkey else None
        if not isinstance(base, TensorVal) or base.storage is None or base.storage != target.storage \
                or base.rg is not Tri.NO:
            return
        leaf = base.leaf
        if base.leaf is Tri.YES and not base.param:
            leaf = Tri.NO if new.rg is Tri.YES else Tri.MAYBE
        state.set(rkey, base.with_(saved=None, rg=new.rg, leaf=leaf, nograd=None, sources=base.sources | new.sources,
                                   psrc=base.psrc | new.psrc, pcut=_cap(base.pcut | new.pcut),
                                   psrc_partial=base.psrc_partial or new.psrc_partial))

    def check_store_graph(self, target_node: ast.AST, op: str, rhs, stmt: ast.AST, known_before: bool) -> None:
        """`self.x[...] = v` / `self.x.copy_(v)` with `v` surely carrying a graph, in grad mode (`StoreGraphEvent`)."""
        me = self.self_names[-1] if self.self_names else None
        key = key_of(target_node)
        if (key is None or "[" in key) and isinstance(target_node, ast.Subscript) and op == "__setitem__":
            # `self.sv[i][:] = sv`: a write into an item of `self.sv` (a list of buffers a property hands out); the
            # rule decides from the class's code what the attribute holds.
            key = key_of(target_node.value)
        if not me or key is None or not key.startswith(me + ".") or key.count(".") != 1 or "[" in key:
            return
        if op not in ("__setitem__", "copy_", "index_copy_", "masked_scatter_", "index_put_", "__iadd__", "add_"):
            return
        val = next((v for v in rhs if isinstance(v, TensorVal) and v.rg is Tri.YES and v.leaf is Tri.NO), None)
        if val is not None:
            self.emit(StoreGraphEvent(stmt, "self." + key[len(me) + 1:], op, val, known_before))

    # ---- backward
    def grad_results(self, node: ast.Call, target: Value, inputs: list, kwargs: dict, state: State) -> Value:
        """`torch.autograd.grad(...)` returns one gradient per input; without create_graph they have no history."""
        if not inputs:
            return UNKNOWN
        create = Tri.of(const_bool(kwargs["create_graph"][0])) if "create_graph" in kwargs else Tri.NO
        if create is Tri.NO or state.grad is Tri.NO:
            why = self.fact(node, "grad-without-create-graph")
            g = TensorVal(rg=Tri.NO, leaf=Tri.YES, nograd=why, origin=why, is_int=Tri.NO)
        else:
            rg = Tri.YES if isinstance(target, TensorVal) and target.rg is Tri.YES and create is Tri.YES else Tri.MAYBE
            src = target if isinstance(target, TensorVal) else TensorVal()
            g = TensorVal(rg=rg, leaf=Tri.NO if rg is Tri.YES else Tri.MAYBE, is_int=Tri.NO,
                          origin=self.fact(node, "grad-with-create-graph"),
                          sources=src.sources, segs=src.segs)
        return SeqVal(tuple(g.with_(shape=v.shape if isinstance(v, TensorVal) else None) for _, v in inputs))

    def backward_guarded_off(self, state) -> bool:
        """Whether a backward runs with grad mode off only because a call was made with grad mode off, and only
        under an `if` that gates an optimizer update (`paths.gates_update`) and that this analysis cannot decide, in
        that call or a deeper one: `if mode == "train": optimizer.zero_grad(); loss.backward(); optimizer.step()`
        in a function its evaluation caller runs under `no_grad`, the test hanging on what that caller passes or on
        state it set up. Such a test is how code shared by training and evaluation keeps the update out of
        evaluation, so GS401 claims nothing there (a guess, not evidence)."""
        if state.grad is not Tri.NO:
            return False
        for i, grad in enumerate(self.frame_caller_grad):
            if grad is Tri.NO:
                return any(self.syntax("gates_update", stmt, gates_update)
                           for flags in self.frame_flags[i:] for stmt in flags.get("undecided", ()))
        return False

    def backward(self, target: Value, target_node: ast.AST, call: ast.Call, state: State, api: str,
                 kwargs: dict, positional: int = 0, inputs: list | None = None,
                 gradient: Optional[tuple] = None, grad_inputs: Optional[Value] = None) -> None:
        for _, v in inputs or ():
            if isinstance(v, TensorVal):
                # `torch.autograd.grad(cost, adv)` differentiates with respect to `adv`: its flag is what makes that
                # work, whatever gradsight knows of `cost` (a loss from a model it cannot see). Not dead (GS202).
                self.reached_sources |= v.sources
        key = key_of(target_node)
        if key is not None and state.grad is not Tri.NO and (
                target is UNKNOWN or isinstance(target, TensorVal) and target.rg is Tri.MAYBE):
            # Evidence from use: past a backward on it, the tensor has a graph (the backward would raise otherwise).
            known = target if isinstance(target, TensorVal) else TensorVal(
                origin=self.expr_fact(target_node, "backwarded"))
            state.set(key, known.with_(rg=Tri.YES, leaf=Tri.NO, evidence=True))
            if target is UNKNOWN and isinstance(target_node, ast.Name):
                self.backwarded_model_output(target_node.id, call, state)
        if not isinstance(target, TensorVal):
            if target is UNKNOWN and api != "torch.autograd.grad" and state.grad is not Tri.NO:
                self.reached_sources.add(UNKNOWN_REACH)  # what it reached is not known (GS202)
            return
        retain = Tri.NO
        # `retain_variables=` is retain_graph's pre-0.4 name (torch 2 rejects it with a TypeError): either way
        # this backward does not free the graph.
        rnode = kwargs.get("retain_graph", kwargs.get("retain_variables", (None, None)))[0]
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
                                target_node, tuple(inputs or ()), create, allow_unused, gradient,
                                self.backward_guarded_off(state)))
        self.backward_seen = True
        # Each frame records the line of its own body where the backward ran: the call into the callee that ran
        # it, or the backward itself in the innermost frame.
        frames = self.frame_flags
        for i, flags in enumerate(frames):
            line = frames[i + 1].get("called_at", 0) if i + 1 < len(frames) else call.lineno
            flags.setdefault("backward_at", []).append(line)
        self.reached_sources |= target.sources
        if target.psrc_partial and api != "torch.autograd.grad":
            # An unknown value fed the loss (SMPLify's `self.smpl(global_orient=global_orient)`): the tensors it
            # carried are not in `sources`, so what this backward reached is not known either.
            self.reached_sources.add(UNKNOWN_REACH)
        self.param_cuts(target)
        if target.rg is not Tri.YES or retain is not Tri.NO:
            return
        line_fact = self.expr_fact(call, "freed")
        self.record(call, target.with_(freed=line_fact), transition=True,
                    summary="backward consumes this graph here: its saved tensors are freed, so another backward "
                            "through any part of it raises (unless retain_graph=True)",
                    label="graph freed")
        for frame in self.call_saves:
            # What this backward freed no longer counts as saved for the callers either.
            frame[:] = [entry for entry in frame if entry[2] not in target.segs]

        # `torch.autograd.grad(out, inputs)` runs, and frees, only the nodes on paths from `out` to an input: a
        # value whose gradient reaches none of the inputs' leaves keeps its graph (MAML's shared encoder output,
        # used again after an inner-loop `autograd.grad(loss, fast_weights)`).
        # Nor does it run the inputs' own history: a value whose shared segments all lie there keeps its graph
        # (`t = t * 0 + c` after `autograd.grad(f(t), t)`, a line search on `t`).
        by_grad = grad_inputs is not None and api == "torch.autograd.grad"
        wanted = grad_origins(grad_inputs, partial=True) if by_grad else None
        behind = _input_segs(grad_inputs) if by_grad else None

        def consume(val: TensorVal) -> TensorVal:
            if val.saved is not None and val.saved_seg is not None and val.saved_seg in target.segs:
                # The graph that saved this value is gone: modifying it in place is harmless now.
                val = val.with_(saved=None, saved_seg=None, saved_gone=line_fact)
            shared = val.segs & target.segs
            if wanted is not None and shared:
                mine = grad_origins(val, partial=True)
                if mine is not None and not mine & wanted:
                    return val
            if behind is not None and shared and shared <= behind:
                return val
            if shared and val.rg is not Tri.NO:
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
            created = Fact(site[1], site[2], "created-here", (("label", label),), None, site[0])
            self.grad_leaves.setdefault(key, (label, created))
            self.cut_sources.setdefault(key, cut)
