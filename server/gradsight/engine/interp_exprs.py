"""Expressions: names, attributes (module and object state), subscripts, containers, operators, comprehensions."""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import Optional

from .astwalk import walk
from . import torchdb as db
from .events import GradReadEvent
from .interp_util import BUILTINS, string_compare, MODULE_METHODS, _int_index, _is_static, _is_staticmethod, _msite, _pcut_of, key_of
from .state import State
from .values import (UNKNOWN, BoundMethod, ClassInfo, ClassVal, DistVal, FuncVal, MapVal, ModuleRef, ModuleVal, ObjectVal, OptimizerVal,
                     ParamsVal, PyVal, SeqVal, TensorVal, Tri, Value)


# torch layers whose `__init__` registers a `weight` parameter (and `bias`, where it has one).
_WEIGHT_LAYERS = frozenset({"Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
                            "ConvTranspose3d", "Embedding", "EmbeddingBag"})
# Constants evaluate to one of three shared values (they are compared and hashed often).
_NONE = PyVal(is_none=True, truth=False)  # `None` is falsy: `if optimizer:` with `optimizer=None` passed
_NUMBER = PyVal(scalar=True)
_PLAIN = PyVal()
_TRUE = PyVal(truth=True, boolean=True)
_FALSE = PyVal(truth=False, boolean=True)
_STRING_MAX = 64  # longer string constants (docstrings, messages) are plain data


def _library(qual: str) -> bool:
    """Names of torch, numpy and builtins, never looked for in the workspace. The whole top-level name: a workspace
    package called `torchrl`, `torch_geometric` or `torchbearer` is not torch."""
    return qual.split(".", 1)[0] in ("torch", "numpy", "builtins")


@dataclass(frozen=True)
class _At:
    """Where a relative module name is resolved from: the resolver reads only a scope's `path`."""

    path: str


class ExpressionsMixin:
    """Part of `Interpreter` (see interp.py)."""

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
        v = node.value
        if v is None:
            return _NONE
        if isinstance(v, bool):
            return _TRUE if v else _FALSE
        if isinstance(v, str) and len(v) <= _STRING_MAX:
            # A short string constant is known exactly: `if mode == "train":` under a call that passed "valid".
            return PyVal(string=v)
        return _NUMBER if isinstance(v, (int, float)) and not isinstance(v, bool) else _PLAIN

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
        if scope.star_imports and name not in BUILTINS:
            val = self.star_value(scope, name)
            if val is not UNKNOWN:
                return val
        if name in BUILTINS:
            return ModuleRef("builtins." + name)
        return UNKNOWN

    def star_value(self, scope, name: str, depth: int = 0) -> Value:
        """`from ptsemseg.models.utils import *` then `conv2DBatchNormRelu(...)`: a function or class that a
        workspace module star-imported into `scope` defines (or star-imports itself, a few levels deep). Names
        starting with `_` are not exported by a star import; an `__all__` is not read (a name it leaves out is
        merely one more name found). Torch and library modules are not looked into."""
        if self.resolve_module is None or name.startswith("_") or depth > 3:
            return UNKNOWN
        for mod in scope.star_imports:
            if _library(mod.lstrip(".")):
                continue
            level = len(mod) - len(mod.lstrip("."))
            other = self.resolve_module(mod.lstrip("."), level, scope)
            if other is None or other is scope:
                continue
            val = self.exported(other, name, depth + 1)
            if val is not UNKNOWN:
                return val
        return UNKNOWN

    def exported(self, other, name: str, depth: int = 0) -> Value:
        """The function or class that the workspace module `other` makes importable as `name`: its own, or one it
        imports from another module (a package's `__init__.py` re-exporting `from .generator import VAE`, relative
        imports read from `other`'s own folder), or one it star-imports, a few levels deep. A name it imports from
        a library is that library's name, as if imported directly. UNKNOWN for anything else (a module-level
        variable, a submodule)."""
        if name in other.functions:
            return other.functions[name]
        if name in other.classes:
            return ClassVal(other.classes[name])
        if depth > 3:
            return UNKNOWN
        qual = other.imports.get(name)
        if qual is not None:
            if _library(qual):
                return ModuleRef(qual)
            # Depth counts every step, so modules that import a name from each other end here.
            val = self.workspace_value(qual, other, depth + 1)
            if val is not UNKNOWN:
                return val
            return self.submodule_ref(qual, other) if qual.startswith(".") else ModuleRef(qual)
        if other.star_imports:
            return self.star_value(other, name, depth + 1)
        return UNKNOWN

    def import_value(self, qual: str) -> Value:
        if qual.startswith("."):
            val = self.workspace_value(qual)
            return val if val is not UNKNOWN else self.submodule_ref(qual, self.scope)
        if self.resolve_module is not None and not _library(qual):
            val = self.workspace_value(qual)
            if val is not UNKNOWN:
                return val
        return ModuleRef(qual)

    def submodule_ref(self, qual: str, scope) -> Value:
        """`from . import tcn` (`qual` ".tcn", relative to `scope`'s file): the workspace module it names, as a
        reference that remembers where it is relative to; UNKNOWN when no workspace file is that module."""
        level = len(qual) - len(qual.lstrip("."))
        path = getattr(scope, "path", None)
        if self.resolve_module is None or not path or self.resolve_module(qual.lstrip("."), level, scope) is None:
            return UNKNOWN
        return ModuleRef(qual, origin=path)

    def workspace_value(self, qual: str, scope=None, depth: int = 0) -> Value:
        """The function or class `qual` names in a workspace module (relative names are read from `scope`'s
        folder, by default the analysed file's), re-exports followed (`exported`)."""
        if self.resolve_module is None:
            return UNKNOWN
        scope = scope if scope is not None else self.scope
        mod, _, name = qual.rpartition(".")
        level = len(qual) - len(qual.lstrip("."))
        other = self.resolve_module(mod.lstrip("."), level, scope)
        if other is None:
            return UNKNOWN
        if other is scope and qual.startswith("."):
            # `from . import x` in a package's `__init__.py`: `x` is a submodule, not a value of this scope.
            return UNKNOWN
        return self.exported(other, name, depth)

    def expr_Attribute(self, node: ast.Attribute, state: State) -> Value:
        key = key_of(node)
        if key is not None and key in state.env:
            val = state.env[key]
            self.record(node, val)
            return val
        base = self.eval(node.value, state)
        if isinstance(base, PyVal) and base.is_none and isinstance(node.ctx, ast.Load):
            # An attribute of what is surely None (`autoencoder.encoder` with `autoencoder=None`) raises: where
            # the code goes on, the caller passed an object, whatever it is.
            base_key = key_of(node.value)
            if base_key is not None:
                state.set(base_key, UNKNOWN)
            self.record(node, UNKNOWN)
            return UNKNOWN
        val = self.attribute(base, node, state)
        self.record(node, val)
        return val

    def attribute(self, base: Value, node: ast.Attribute, state: State) -> Value:
        attr = node.attr
        if isinstance(base, ModuleRef):
            qual = f"{base.qual}.{attr}"
            if base.origin is not None and self.resolve_module is not None:
                # `tcn.TemporalConvNet` after `from . import tcn`: resolved from the importing file's folder.
                at = _At(base.origin)
                val = self.workspace_value(qual, at)
                return val if val is not UNKNOWN else ModuleRef(qual, origin=base.origin)
            if self.resolve_module is not None and not _library(base.qual):
                # `from allennlp.nn import util` then `util.masked_log_softmax(...)`: a function or class of a
                # workspace module reached through its package.
                val = self.workspace_value(qual)
                if val is not UNKNOWN:
                    return val
            return ModuleRef(qual)
        if isinstance(base, TensorVal):
            if attr == "data":
                return TensorVal(rg=Tri.NO, leaf=Tri.YES, shape=base.shape, is_int=base.is_int,
                                 nograd=self.fact(node, "data"),
                                 origin=base.origin, saved=base.saved, is_data=True,
                                 pcut=self.cut_params(base, node))
            if attr == "grad":
                if isinstance(getattr(self, "current_stmt", None), ast.Assign) is False or not any(
                        t is node for t in getattr(self.current_stmt, "targets", ())):
                    self.emit(GradReadEvent(node, base, self.seg(node.value)))
                return TensorVal(rg=Tri.NO, leaf=Tri.YES, shape=base.shape, origin=self.fact(node, "grad-attribute"))
            if attr in ("T", "mT", "H", "mH", "real", "imag"):
                return self.tensor_op(f"torch.Tensor.{attr}", [(node.value, base)], node, state)
            if attr in ("shape", "dtype", "device", "requires_grad", "is_leaf", "grad_fn", "ndim", "is_cuda"):
                return PyVal()
            return UNKNOWN
        if isinstance(base, DistVal):
            return self.distribution_property(base, node, state)
        if isinstance(base, ModuleVal):
            sub = base.attr(attr)
            if sub is not None:
                return sub
            if base.cls is None and attr in ("weight", "bias") and base.has_params is not Tri.NO:
                return TensorVal(rg=base.has_params, leaf=Tri.YES, param=True, is_int=Tri.NO,
                                 origin=self.expr_fact(node, "parameter"),
                                 psrc=frozenset({_msite(base)}) if _msite(base) else frozenset())
            if base.cls is not None and attr in ("weight", "bias") and base.has_params is not Tri.NO \
                    and self.torch_layer_base(base.cls):
                # `self.weight` in a subclass of `nn.Linear`/`nn.Conv2d` (BigGAN's `SNConv2d(nn.Conv2d, SN)`):
                # the parameter the torch layer's `__init__` registered, unless the class assigns it itself.
                return TensorVal(rg=base.has_params, leaf=Tri.YES, param=True, is_int=Tri.NO,
                                 origin=self.expr_fact(node, "parameter"),
                                 psrc=frozenset({_msite(base)}) if _msite(base) else frozenset())
            if base.cls is not None:
                meth = self.find_method(base.cls, attr)
                if meth is not None and _is_property(meth.node):
                    return self.call_function(meth, base, [], {}, node, state)
                if meth is not None and _is_static(meth.node):
                    # `self.neum(v, model, batch)` on a `@staticmethod`: no `self` is bound (a classmethod's `cls`
                    # is not modelled: unknown, as for other objects).
                    return meth if _is_staticmethod(meth.node) else UNKNOWN
                if meth is not None:
                    return BoundMethod(meth, base)
            return ModuleRef(f"<module-attr>.{attr}") if attr in MODULE_METHODS else UNKNOWN
        if isinstance(base, ObjectVal):
            sub = base.attr(attr)
            if sub is not None:
                return sub
            meth = self.find_method(base.cls, attr)
            if meth is not None and _is_property(meth.node):
                # `self.alpha` where `alpha` is a `@property` returning `self.log_alpha.exp()`: its value.
                return self.call_function(meth, base, [], {}, node, state)
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
            for b in self.class_bases(info):
                if isinstance(b, ClassInfo):
                    parent = b
                    break
            info = parent
            seen += 1
        return None

    def torch_layer_base(self, info: ClassInfo, depth: int = 0) -> bool:
        """A class deriving, directly or through this workspace's classes, from a torch layer whose `__init__`
        registers `weight` (and `bias`) parameters (`nn.Linear`, `nn.Conv2d`, `nn.Embedding`, ...), and that neither
        assigns, deletes nor freezes them itself (`self.weight = ...`, `del self.weight`, `self.weight.requires_grad =
        False` in any of its methods). Memoised per analysis."""
        if depth == 0:
            memo = self.__dict__.setdefault("_torch_layer_memo", {})
            hit = memo.get(id(info))
            if hit is None or hit[0] is not info:
                hit = memo[id(info)] = (info, self._torch_layer_base(info))
            return hit[1]
        return self._torch_layer_base(info, depth)

    def _torch_layer_base(self, info: ClassInfo, depth: int = 0) -> bool:
        if depth == 0 and info.node is not None and any(
                isinstance(n, ast.Attribute) and (n.attr in ("weight", "bias") and isinstance(n.ctx, (ast.Store, ast.Del))
                                                  or n.attr in ("requires_grad", "requires_grad_")
                                                  and isinstance(n.value, ast.Attribute)
                                                  and n.value.attr in ("weight", "bias"))
                for n in walk(info.node)):
            return False  # the class makes, removes (weight norm) or freezes them itself
        return depth < 8 and any(isinstance(b, ClassInfo) and self._torch_layer_base(b, depth + 1)
                                 or isinstance(b, str) and b.startswith("torch.nn.")
                                 and b.rsplit(".", 1)[-1] in _WEIGHT_LAYERS
                                 for b in self.class_bases(info))

    def is_module_class(self, info: ClassInfo, depth: int = 0) -> bool:
        """An `nn.Module` subclass, also through bases in other workspace files (`class Net(BaseNet)`)."""
        if info.is_module:
            return True
        return depth < 8 and any(isinstance(b, ClassInfo) and self.is_module_class(b, depth + 1)
                                 or isinstance(b, str) and b.startswith("torch.nn.") and b.rsplit(".", 1)[-1][:1].isupper()
                                 for b in self.class_bases(info))

    def class_bases(self, info: ClassInfo) -> tuple:
        """`info.bases` with the classes of other workspace files resolved (`class SAC(Algorithm)` with
        `from algo.base import Algorithm`): their methods and `__init__` are then known as for a base in the same
        file. Memoised per analysis; a base that does not resolve stays its qualified name."""
        memo = self.__dict__.setdefault("_class_bases", {})
        hit = memo.get(id(info))
        if hit is not None and hit[0] is info:
            return hit[1]
        out = []
        for b in info.bases:
            head, dot, rest = b.partition(".") if isinstance(b, str) else ("", "", "")
            if dot and info.module is not None and head not in info.module.imports and info.module.star_imports \
                    and head not in info.module.classes and head not in info.module.functions:
                # `class Net(nn.Module)` where `nn` comes from `from .layers import *` (a module that does
                # `import torch.nn as nn`: a star import without `__all__` exports it too).
                val = self.star_value(info.module, head)
                if isinstance(val, ModuleRef):
                    b = f"{val.qual}.{rest}"
            if isinstance(b, str) and self.resolve_module is not None and "." in b \
                    and not b.startswith(("torch.", "builtins.", "typing.", "abc.", "numpy.")):
                mod, _, name = b.rpartition(".")
                level = len(mod) - len(mod.lstrip("."))
                other = self.resolve_module(mod.lstrip("."), level, info.module) if mod.strip(".") or level else None
                cls = other.classes.get(name) if other is not None else None
                if cls is None and other is not None:
                    # A base re-exported by a package (`from models import BaseModel`, its `__init__.py` importing
                    # it from `models/base.py`; `from .train import Trainer` in `core/utils/__init__.py`), followed
                    # a few imports deep.
                    val = self.exported(other, name)
                    cls = val.info if isinstance(val, ClassVal) else None
                out.append(cls if cls is not None else b)
            else:
                out.append(b)
        result = tuple(out)
        memo[id(info)] = (info, result)
        return result

    def expr_Subscript(self, node: ast.Subscript, state: State) -> Value:
        key = key_of(node)
        if key is not None and key in state.env:
            self.eval(node.value, state)
            return state.env[key]
        base = self.eval(node.value, state)
        index = self.eval(node.slice, state)
        if isinstance(base, TensorVal) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            # A tensor cannot be indexed by a string: what was taken for a tensor (an unseen model's output) is a
            # mapping, and nothing is known of its entries (a detector's `pred[0]["labels"]` are integers).
            return UNKNOWN
        if isinstance(base, TensorVal) and _indices_item(node) and self._tensor_receiver(node.value, state):
            # `torch.max(qvals, dim=1)[1]`: the indices of a (values, indices) op are integers without any history.
            call = node.value
            return TensorVal(rg=Tri.NO, leaf=Tri.YES, is_int=Tri.YES, origin=self.expr_fact(call),
                             nograd=self.fact(call, "not-differentiable", op=f"{call.func.attr} indices"))
        if isinstance(base, TensorVal):
            val = self.tensor_op("torch.Tensor.__getitem__", [(node.value, base)], node, state)
            if isinstance(val, TensorVal) and val.view is None and _int_index(node.slice, index):
                # `x[k]` with a Python int `k` (a loop variable over `range`) is basic indexing: a view.
                val = val.with_(view=self.expr_fact(node, "view"), storage=base.storage)
            if isinstance(val, TensorVal):
                # An item of split()/unbind()'s result is one of those views (we model the tuple as one value).
                val = val.with_(shape=None, multiview=base.multiview or val.multiview,
                                view=base.view if base.multiview else val.view)
            return val
        if isinstance(base, MapVal):
            return base.item  # any key of a dict of one class's objects
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

    @staticmethod
    def _tensor_receiver(call: ast.Call, state: State) -> bool:
        """`call`'s receiver is `torch` or a tensor, not an object whose own method `topk`/`sort`/`max` the call
        may run (`self.topk(x)`): an expression (`net(x).max(1)`), `torch`, or a name bound to a tensor."""
        recv = call.func.value
        if type(recv) is ast.Name and recv.id in ("torch", "th"):
            return True
        key = key_of(recv)
        return key is None or isinstance(state.env.get(key), TensorVal)

    def expr_Tuple(self, node, state) -> Value:
        items = tuple(self.eval(e, state) for e in node.elts)
        if node.elts and all(isinstance(e, ast.Starred) for e in node.elts):
            # `[*actor.parameters(), *critic.parameters()]`: the parameters of all of them, as `a + b` of two lists.
            vals = [self.starred_values.get(id(e), (None, UNKNOWN))[1] for e in node.elts]
            if all(isinstance(v, ParamsVal) for v in vals):
                return ParamsVal(origin=vals[0].origin, module_sites=frozenset().union(*(v.module_sites for v in vals)))
        return SeqVal(items)

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
            # `not flag` is the negated bool (`set_grad_enabled(not volatile)` with `volatile=False` enables grad);
            # `-x`, `+x`, `~x` keep what is known of the number but no longer one surely-True/False bool.
            if isinstance(node.op, ast.Not):
                truth = True if val.is_none else not val.string if val.string is not None \
                    else None if val.truth is None else not val.truth
            else:
                truth = None
            return replace(val, truth=truth, is_none=False, string=None, scalar_items=False, is_tensor_list=False,
                           boolean=isinstance(node.op, ast.Not))
        return UNKNOWN

    def expr_Compare(self, node: ast.Compare, state: State) -> Value:
        # A comparison's result has no history, so the graph its operands build dies with the expression: what
        # their ops save for backward is freed at once (`mask = x.abs() < eps; x[mask] = 0` is fine).
        self.discard_depth += 1
        try:
            vals = [self.eval(node.left, state)] + [self.eval(c, state) for c in node.comparators]
        finally:
            self.discard_depth -= 1
        if any(isinstance(v, TensorVal) for v in vals):
            return TensorVal(rg=Tri.NO, leaf=Tri.YES, is_int=Tri.YES,
                             nograd=self.fact(node, "comparison"))
        if len(node.ops) == 1:
            # `phase == "train"` with `phase` surely one string: a known bool (`set_grad_enabled(phase == "train")`).
            swap = isinstance(node.left, ast.Constant)
            known = string_compare(node.ops[0], vals[1] if swap else vals[0],
                                   node.left if swap else node.comparators[0])
            if known is not None:
                return _TRUE if known else _FALSE
        return PyVal()

    def expr_BoolOp(self, node, state) -> Value:
        vals = [self.eval(v, state) for v in node.values]
        out = vals[0]
        for v in vals[1:]:
            out = out.join(v)
        return out

    def expr_IfExp(self, node, state) -> Value:
        self.eval(node.test, state)
        # A test whose outcome is known (`x.detach().numpy() if torch.is_tensor(x) else x` on a tensor) takes one
        # branch, as `if` does: joining the other would make what a metric keeps look like a graph.
        known = self.static_truth(node.test, state)
        if known is not None:
            return self.eval(node.body if known else node.orelse, state)
        # Each arm runs from the state before the test, as an `if` statement's branches do: what one arm does (an op
        # that saves its input in `self.norm(x) if cond else x`) is not seen by the other, where that op never ran.
        other = state.copy()
        then_val = self.eval(node.body, state)
        else_val = self.eval(node.orelse, other)
        if state.env != other.env or state.grad != other.grad:
            joined = state.join(other)
            state.env.clear()
            state.env.update(joined.env)
            state.compound.clear()
            state.compound.update(joined.compound)
            state.grad, state.grad_why, state.inference = joined.grad, joined.grad_why, joined.inference
        return then_val.join(else_val)

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
        if isinstance(node, ast.DictComp) and isinstance(vals[1], ObjectVal):
            return MapVal(vals[1])  # `{k: AverageMeter(k) for k in names}`
        if all(isinstance(v, PyVal) for v in vals):
            cut = next((v.cut for v in vals if v.cut), None)
            return PyVal(cut=cut, pcut=_pcut_of(vals))
        if not isinstance(node, ast.DictComp) and isinstance(vals[0], (TensorVal, ModuleVal, ObjectVal, SeqVal)):
            return SeqVal((vals[0],), homog=True)
        return UNKNOWN

    def expr_ListComp(self, node, state) -> Value:
        rows = _literal_rows(node)
        if rows is not None:
            return self._unrolled(node, rows, state)
        return self._comprehension(node, [node.elt], state)

    def _unrolled(self, node, rows: list, state: State) -> Value:
        """A comprehension over literal tuples (`[arr.append(el) for arr, el in zip((policies, values), (p, v))]`)
        run once per row, in the caller's state: what its element does to other names (the lists it appends to) is
        what the code does. Its own names do not outlive it."""
        names = [n.id for n in walk(node.generators[0].target) if isinstance(n, ast.Name)]
        before = {n: state.env[n] for n in names if n in state.env}
        vals = []
        target = node.generators[0].target
        for row in rows:
            items = [self.eval(e, state) for e in row]
            self.assign(target, items[0] if len(items) == 1 else SeqVal(tuple(items)), state, node)
            bound = {n: state.env.get(n) for n in names}
            vals.append(self.eval(node.elt, state))
            # `arr.append(el)` changed the list `arr` is another name for: the name in the literal gets it.
            pairs = [(target, row[0])] if len(row) == 1 else list(zip(getattr(target, "elts", ()), row))
            for t, e in pairs:
                key = key_of(e)
                if isinstance(t, ast.Name) and key is not None and state.env.get(t.id) is not bound[t.id]:
                    state.set(key, state.env[t.id])
        for n in names:
            state.env.pop(n, None)
        state.env.update(before)
        return SeqVal(tuple(vals))

    expr_SetComp = expr_ListComp
    expr_GeneratorExp = expr_ListComp

    def expr_DictComp(self, node, state) -> Value:
        return self._comprehension(node, [node.key, node.value], state)


def _is_property(fn: ast.AST) -> bool:
    """A method read as an attribute: `@property`, `@functools.cached_property` (not a setter or deleter)."""
    for dec in getattr(fn, "decorator_list", ()):
        name = dec.attr if isinstance(dec, ast.Attribute) else dec.id if isinstance(dec, ast.Name) else None
        if name in ("property", "cached_property"):
            return True
    return False


def _literal_rows(node: ast.ListComp) -> Optional[list]:
    """The rows of a comprehension with one `for` and no `if` over a literal tuple or list, or over `zip` of literal
    tuples or lists of one length (at most 8 rows, no starred items): each row's item expressions. None otherwise."""
    if len(node.generators) != 1 or node.generators[0].ifs or node.generators[0].is_async:
        return None
    it = node.generators[0].iter
    if isinstance(it, (ast.Tuple, ast.List)):
        cols = [it]
    elif isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "zip" and it.args \
            and not it.keywords and all(isinstance(a, (ast.Tuple, ast.List)) for a in it.args):
        cols = it.args
        if not isinstance(node.generators[0].target, ast.Tuple) or len(node.generators[0].target.elts) != len(cols):
            return None
    else:
        return None
    lengths = {len(c.elts) for c in cols}
    if len(lengths) != 1 or not 0 < lengths.pop() <= 8 \
            or any(isinstance(e, ast.Starred) for c in cols for e in c.elts):
        return None
    return [list(row) for row in zip(*(c.elts for c in cols))]


_PAIR_OPS = frozenset({"topk", "sort", "kthvalue", "mode", "cummax", "cummin"})
_PAIR_WITH_DIM = frozenset({"max", "min", "median", "nanmedian"})


def values_indices_call(call: ast.AST, const_dim: bool = False) -> bool:
    """`call` is an op that returns (values, indices): the pair ops always, `max`/`min`/`median` along a dim (a
    second positional argument of `torch.max(x, 1)`, the first of `x.max(1)`, or `dim=`). `const_dim`: that
    positional argument must be an int constant (`torch.max(x, y)` of two tensors returns one tensor)."""
    if type(call) is not ast.Call or type(call.func) is not ast.Attribute:
        return False
    name = call.func.attr
    if name in _PAIR_OPS:
        return True
    if name not in _PAIR_WITH_DIM:
        return False
    if any(kw.arg == "dim" for kw in call.keywords):
        return True
    on_torch = type(call.func.value) is ast.Name and call.func.value.id in ("torch", "th")
    pos = 1 if on_torch else 0
    if len(call.args) <= pos:
        return False
    dim = call.args[pos]
    if type(dim) is ast.UnaryOp and type(dim.op) is ast.USub:
        dim = dim.operand
    return not const_dim or (type(dim) is ast.Constant and type(dim.value) is int)


def _indices_item(node: ast.Subscript) -> bool:
    """`node` is `<op>(...)[1]` (or `[-1]`) of an op that surely returns (values, indices): the indices."""
    k = node.slice
    if type(k) is ast.UnaryOp and type(k.op) is ast.USub:
        k = k.operand  # `[-1]`: the last of two
    return type(k) is ast.Constant and type(k.value) is int and k.value == 1 \
        and values_indices_call(node.value, const_dim=True)
