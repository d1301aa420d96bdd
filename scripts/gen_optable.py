#!/usr/bin/env python
"""Derive gradsight's table of what PyTorch ops save for backward.

gradsight's analysis never imports torch, so the facts it needs about autograd
live in a committed data file, ``server/gradsight/data/saved_tensors.json``.
This script *derives* that file by experiment with the installed torch; nothing
in it is typed in by hand except the list of ops and the small inputs each one
is run on.

For every op, and for every scenario in which exactly one differentiable input
(or module parameter) requires grad, plus the scenario in which all of them do:

* each tensor that could be saved (every tensor input, parameter and buffer,
  and every tensor output) is bumped in place (``add_(0)`` under ``no_grad``,
  like an optimizer step) after the op ran, and backward is run: if it raises
  "... modified by an inplace operation", that tensor is saved for backward
  in that scenario;
* backward is run twice without ``retain_graph``: if the second call raises,
  the op's backward nodes hold saved tensors (``saves_any``);
* the ``_saved_*`` attributes of the op's backward nodes are read and compared
  by storage against the inputs and outputs, to find saved tensors the user
  never sees (indices, masks, statistics: ``saves_internal``), and to
  cross-check the experiments (mismatches are printed as notes on stderr);
* the gradient of every input is checked for being identically zero, and the
  outputs for requiring grad at all (``nondifferentiable``).

Usage::

    python scripts/gen_optable.py           # rewrite the JSON file
    python scripts/gen_optable.py --check   # exit 1 with a diff when it is stale
    python scripts/gen_optable.py --only torch.mul --print

See docs/optable.md for the format.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
TABLE_PATH = ROOT / "server" / "gradsight" / "data" / "saved_tensors.json"
INPLACE_ERROR = "modified by an inplace operation"
SECOND_BACKWARD_ERROR = "backward through the graph a second time"
NOT_IMPLEMENTED_ERRORS = ("is not implemented", "not implemented for")
MULTI_VIEW_ERROR = "output of a function that returns multiple views"


# --------------------------------------------------------------------------------------
# Input specs: the small tensors every op is run on.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ten:
    """A float32 tensor. ``dom`` picks the value range; ``grad=False`` marks a tensor
    that is never made to require grad (running statistics, ...)."""

    shape: tuple[int, ...]
    dom: str = "any"  # any | pos | unit | gt1 | prob | spd
    grad: bool = True


@dataclass(frozen=True)
class Long:
    """An int64 tensor of indices in [0, high)."""

    shape: tuple[int, ...]
    high: int


@dataclass(frozen=True)
class Mask:
    shape: tuple[int, ...]


@dataclass(frozen=True)
class Lst:
    """A Python list of tensors (``torch.cat([a, b])``); it counts as one input."""

    items: tuple[Any, ...]


def T(*shape: int, dom: str = "any", grad: bool = True) -> Ten:
    return Ten(tuple(shape), dom, grad)


X = T(3, 4)
X2 = T(3, 4)
POS = T(3, 4, dom="pos")
UNIT = T(3, 4, dom="unit")
PROB = T(3, 4, dom="prob")
GT1 = T(3, 4, dom="gt1")
MASK = Mask((3, 4))


@dataclass
class Op:
    key: str
    kind: str  # function | method | module
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    factory: Callable[[], Any] | None = None  # modules
    # arg index -> a Python value (scalar, slice...) to use in place of the tensor:
    # derived into the entry's "when_not_tensor" field.
    not_tensor: dict[int, Any] = field(default_factory=dict)
    # label -> (args, kwargs) of another overload under the same name.
    overloads: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = field(default_factory=dict)
    # In-place method: arg 0 is modified and is the output. It is passed as a non-leaf
    # (a clone of the leaf) when it requires grad, and its "saved" facts are reported
    # as saves_output only.
    inplace: bool = False


OPS: list[Op] = []


def _add(key: str, kind: str, args: tuple, kwargs: dict | None = None, **extra: Any) -> None:
    if any(op.key == key for op in OPS):
        raise ValueError(f"duplicate op {key}")
    OPS.append(Op(key, kind, tuple(args), dict(kwargs or {}), **extra))


def op(
    name: str,
    *args: Any,
    torch_: bool = True,
    F: bool = False,
    method: bool = False,
    nt: dict[int, Any] | None = None,
    ov: dict | None = None,
    **kwargs: Any,
) -> None:
    """Register ``name`` as torch.<name> and/or torch.nn.functional.<name> and/or
    torch.Tensor.<name>, all run on the same positional arguments."""
    extra = {"not_tensor": dict(nt or {}), "overloads": dict(ov or {})}
    if torch_:
        _add(f"torch.{name}", "function", args, kwargs, **extra)
    if F:
        _add(f"torch.nn.functional.{name}", "function", args, kwargs, **extra)
    if method:
        _add(f"torch.Tensor.{name}", "method", args, kwargs, **extra)


def meth(name: str, *args: Any, nt: dict[int, Any] | None = None, ov: dict | None = None, **kwargs: Any) -> None:
    op(name, *args, torch_=False, method=True, nt=nt, ov=ov, **kwargs)


def inplace(name: str, *args: Any, nt: dict[int, Any] | None = None, **kwargs: Any) -> None:
    _add(f"torch.Tensor.{name}", "method", args, kwargs, not_tensor=dict(nt or {}), inplace=True)


def fn(name: str, *args: Any, nt: dict[int, Any] | None = None, **kwargs: Any) -> None:
    op(name, *args, torch_=False, F=True, nt=nt, **kwargs)


def mod(name: str, factory: Callable[[], Any], *args: Any) -> None:
    _add(f"torch.nn.{name}", "module", args, factory=factory)


def _register_ops() -> None:  # noqa: PLR0915 - a long, flat list by design
    import torch
    from torch import nn

    # ---- elementwise unary math: torch.X and torch.Tensor.X ---------------------------
    for name, arg in [
        ("exp", X), ("exp2", X), ("expm1", X), ("log", POS), ("log2", POS), ("log10", POS),
        ("log1p", POS), ("sin", X), ("cos", X), ("tan", UNIT), ("asin", UNIT), ("acos", UNIT),
        ("atan", X), ("sinh", X), ("cosh", X), ("tanh", X), ("asinh", X), ("acosh", GT1),
        ("atanh", UNIT), ("sigmoid", X), ("relu", X), ("sqrt", POS), ("rsqrt", POS),
        ("abs", X), ("neg", X), ("square", X), ("reciprocal", POS), ("erf", X), ("erfc", X),
        ("erfinv", UNIT), ("logit", PROB), ("nan_to_num", X), ("sign", X), ("sgn", X),
        ("floor", X), ("ceil", X), ("round", X), ("trunc", X), ("frac", X),
        ("isnan", X), ("isinf", X), ("isfinite", X), ("nonzero", X),
    ]:
        op(name, arg, method=True, F=name in ("sigmoid", "tanh", "relu"))
    op("clamp", X, -0.5, 0.5, method=True)
    op("clip", X, -0.5, 0.5, method=True)
    op("clamp_min", X, 0.0, method=True)
    op("clamp_max", X, 0.0, method=True)

    # ---- binary ------------------------------------------------------------------------
    for name in ("add", "sub", "mul", "div", "true_divide", "remainder", "fmod"):
        op(name, X, POS, method=True, nt={1: 2.0})
    op("pow", POS, X, method=True, nt={1: 2.0})
    for name in ("maximum", "minimum", "fmax", "fmin", "atan2", "hypot"):
        op(name, X, X2, method=True)
    op("floor_divide", X, POS, method=True)
    op("lerp", X, X2, 0.3, method=True)
    op("where", MASK, X, X2, nt={2: 0.0})
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        op(name, X, X2, method=True)
    op("matmul", T(3, 4), T(4, 2), method=True)
    op("mm", T(3, 4), T(4, 2), method=True)
    op("bmm", T(2, 3, 4), T(2, 4, 2), method=True)
    op("addmm", T(3, 2), T(3, 4), T(4, 2), method=True)
    op("mv", T(3, 4), T(4), method=True)
    op("dot", T(4), T(4), method=True)
    op("outer", T(3), T(4), method=True)
    op("einsum", "ij,jk->ik", T(3, 4), T(4, 2))
    op("cdist", T(3, 4), T(2, 4))

    # ---- reductions --------------------------------------------------------------------
    for name in ("sum", "mean", "prod", "norm", "var", "std", "all", "any"):
        op(name, X, method=True)
    # `median(x)` returns one tensor (saved); `median(x, dim)` returns (values, indices) and saves the indices only.
    for name in ("median", "nanmedian"):
        op(name, X, method=True, ov={"dim": ((X, 1), {})})
    op("var_mean", X)
    op("std_mean", X)
    for name in ("max", "min"):
        op(name, X, method=True, ov={"dim": ((X, 1), {}), "other": ((X, X2), {})})
    for name in ("amax", "amin", "logsumexp", "cumsum", "cumprod", "logcumsumexp",
                 "argmax", "argmin", "argsort", "sort"):
        op(name, X, 1, method=True)
    op("topk", X, 2, method=True)
    # Ops that always return (values, indices): what their backward saves is one of the two outputs.
    op("kthvalue", X, 2, 1, method=True)
    for name in ("mode", "cummax", "cummin"):
        op(name, X, 1, method=True)
    op("softmax", X, 1, method=True)
    op("log_softmax", X, 1, method=True)
    op("unique", X)

    # ---- shape / view / indexing ---------------------------------------------------------
    op("reshape", X, (4, 3), method=True)
    meth("view", X, 4, 3)
    meth("view_as", X, T(4, 3))
    meth("reshape_as", X, T(4, 3))
    op("transpose", X, 0, 1, method=True)
    op("permute", X, (1, 0), method=True)
    op("squeeze", T(3, 1, 4), 1, method=True)
    op("unsqueeze", X, 0, method=True)
    op("flatten", T(2, 3, 4), 1, method=True)
    meth("expand", T(3, 1), 3, 4)
    meth("expand_as", T(3, 1), X)
    op("broadcast_to", T(3, 1), (3, 4), method=True)
    meth("repeat", X, 2, 1)
    op("tile", X, (2, 1), method=True)
    op("repeat_interleave", X, 2, 0, method=True)
    op("cat", Lst((X, X2)), 0)
    op("concat", Lst((X, X2)), 0)
    op("stack", Lst((X, X2)), 0)
    op("split", X, 2, 1, method=True)
    op("chunk", X, 2, 0, method=True)
    op("unbind", X, 0, method=True)
    op("gather", X, 1, Long((3, 2), 4), method=True)
    op("index_select", X, 0, Long((2,), 3), method=True)
    op("take", X, Long((5,), 12), method=True)
    op("masked_select", X, MASK, method=True)
    op("masked_fill", X, MASK, 0.0, method=True)
    op("scatter", X, 1, Long((3, 2), 4), T(3, 2), method=True)
    op("scatter_add", X, 1, Long((3, 2), 4), T(3, 2), method=True)
    op("narrow", X, 1, 0, 2, method=True)
    op("select", X, 0, 1, method=True)
    op("t", X, method=True)
    op("movedim", X, 0, 1, method=True)
    op("flip", X, (0,), method=True)
    op("roll", X, 1, 0, method=True)
    op("tril", X, method=True)
    op("triu", X, method=True)
    op("diag", T(4), method=True)
    op("diagonal", X, method=True)
    op("clone", X, method=True)
    meth("contiguous", X)
    meth("detach", X)
    for name in ("float", "double", "half", "long", "int", "bool"):
        meth(name, X)
    meth("to", X, torch.float64)
    meth("type_as", X, T(2, dom="pos"))
    meth("item", T(1))
    meth("tolist", X)
    for name in ("zeros_like", "ones_like", "rand_like", "randn_like", "empty_like"):
        op(name, X)
    op("full_like", X, 2.0)

    # ---- linear algebra: decompositions save their outputs ----------------------------------
    op("linalg.qr", T(4, 3))
    op("qr", T(4, 3), method=True)
    op("linalg.svd", T(4, 3), full_matrices=False)
    op("svd", T(4, 3), method=True)
    op("linalg.eigh", T(3, 3, dom="spd"))
    op("linalg.cholesky", T(3, 3, dom="spd"))
    op("cholesky", T(3, 3, dom="spd"), method=True)
    op("linalg.inv", T(3, 3, dom="spd"))
    op("inverse", T(3, 3, dom="spd"), method=True)

    # ---- Tensor dunders --------------------------------------------------------------------
    for name in ("__add__", "__sub__", "__mul__", "__truediv__", "__mod__"):
        meth(name, X, POS, nt={1: 2.0})
    meth("__floordiv__", X, POS)
    meth("__pow__", POS, X, nt={1: 2.0})
    for name in ("__radd__", "__rsub__", "__rmul__", "__rpow__"):
        meth(name, X, 2.0)
    meth("__rtruediv__", POS, 2.0)
    meth("__matmul__", T(3, 4), T(4, 2))
    meth("__neg__", X)
    meth("__pos__", X)
    meth("__abs__", X)
    meth("__getitem__", X, Long((2,), 3), nt={1: (slice(0, 2), 1)}, ov={"mask": ((X, MASK), {})})
    for name in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
        meth(name, X, X2)
    meth("__invert__", MASK)
    meth("__and__", MASK, Mask((3, 4)))
    meth("__or__", MASK, Mask((3, 4)))

    # ---- in-place methods (arg 0 is modified; its saved-ness is reported as saves_output) --
    for name in ("add_", "sub_", "mul_", "div_", "__iadd__", "__isub__", "__imul__", "__itruediv__"):
        inplace(name, X, POS, nt={1: 2.0})
    inplace("pow_", POS, X, nt={1: 2.0})
    for name in ("exp_", "sigmoid_", "tanh_", "relu_", "sqrt_", "neg_", "abs_", "log_"):
        inplace(name, POS if name in ("sqrt_", "log_") else X)
    inplace("clamp_", X, -0.5, 0.5)
    inplace("masked_fill_", X, MASK, 0.0)
    inplace("copy_", X, X2)
    inplace("zero_", X)
    inplace("fill_", X, 1.0)
    inplace("__setitem__", X, Long((2,), 3), T(2, 4), nt={1: (slice(0, 2),)})

    # ---- torch.nn.functional -------------------------------------------------------------
    for name in ("relu6", "gelu", "silu", "mish", "leaky_relu", "elu", "selu", "celu",
                 "softplus", "softsign", "hardtanh", "hardswish", "hardsigmoid", "logsigmoid",
                 "tanhshrink", "softshrink", "hardshrink", "glu", "normalize"):
        fn(name, X)
    fn("softmax", X, dim=1)
    fn("log_softmax", X, dim=1)
    fn("dropout", X, 0.5, True)
    fn("linear", T(2, 4), T(3, 4), T(3))
    fn("bilinear", T(2, 3), T(2, 4), T(5, 3, 4), T(5))
    fn("conv1d", T(1, 2, 5), T(3, 2, 3), T(3))
    fn("conv2d", T(1, 2, 5, 5), T(3, 2, 3, 3), T(3))
    fn("conv_transpose2d", T(1, 2, 3, 3), T(2, 3, 2, 2), T(3))
    fn("layer_norm", X, (4,), T(4), T(4))
    fn("batch_norm", T(4, 3), T(3, grad=False), T(3, dom="pos", grad=False), T(3), T(3), True)
    fn("group_norm", T(2, 4, 3), 2, T(4), T(4))
    fn("embedding", Long((2, 3), 5), T(5, 4))
    fn("one_hot", Long((3,), 4))
    fn("pad", X, (1, 1))
    fn("interpolate", T(1, 1, 3, 3), scale_factor=2.0, mode="nearest")
    fn("max_pool2d", T(1, 1, 4, 4), 2)
    fn("avg_pool2d", T(1, 1, 4, 4), 2)
    fn("adaptive_avg_pool2d", T(1, 1, 4, 4), 1)
    fn("mse_loss", X, X2)
    fn("l1_loss", X, X2)
    fn("smooth_l1_loss", X, X2)
    fn("huber_loss", X, X2)
    fn("cross_entropy", T(3, 5), Long((3,), 5))
    fn("nll_loss", T(3, 5), Long((3,), 5))
    fn("binary_cross_entropy", PROB, T(3, 4, dom="prob"))
    fn("binary_cross_entropy_with_logits", X, PROB)
    fn("kl_div", X, PROB, reduction="batchmean")
    fn("cosine_similarity", X, X2)
    fn("pairwise_distance", X, X2)
    fn("scaled_dot_product_attention", T(1, 2, 3, 4), T(1, 2, 3, 4), T(1, 2, 3, 4))

    # ---- modules (input 0 is the forward input; losses take (input, target)) --------------
    mod("Linear", lambda: nn.Linear(4, 3), T(2, 4))
    mod("Bilinear", lambda: nn.Bilinear(3, 4, 5), T(2, 3), T(2, 4))
    mod("Conv1d", lambda: nn.Conv1d(2, 3, 3), T(1, 2, 5))
    mod("Conv2d", lambda: nn.Conv2d(2, 3, 3), T(1, 2, 5, 5))
    mod("ConvTranspose2d", lambda: nn.ConvTranspose2d(2, 3, 2), T(1, 2, 3, 3))
    for name in ("ReLU", "ReLU6", "Sigmoid", "Tanh", "GELU", "SiLU", "Mish", "LeakyReLU", "ELU",
                 "SELU", "Softplus", "Softsign", "Hardtanh", "Hardswish", "LogSigmoid", "Identity"):
        mod(name, getattr(nn, name), X)
    mod("Softmax", lambda: nn.Softmax(dim=1), X)
    mod("LogSoftmax", lambda: nn.LogSoftmax(dim=1), X)
    mod("LayerNorm", lambda: nn.LayerNorm(4), X)
    mod("BatchNorm1d", lambda: nn.BatchNorm1d(3), T(4, 3))
    mod("BatchNorm2d", lambda: nn.BatchNorm2d(2), T(2, 2, 3, 3))
    mod("GroupNorm", lambda: nn.GroupNorm(2, 4), T(2, 4, 3))
    mod("Dropout", lambda: nn.Dropout(0.5), X)
    mod("Embedding", lambda: nn.Embedding(5, 4), Long((2, 3), 5))
    mod("Flatten", nn.Flatten, T(2, 3, 4))
    mod("MaxPool2d", lambda: nn.MaxPool2d(2), T(1, 1, 4, 4))
    mod("AvgPool2d", lambda: nn.AvgPool2d(2), T(1, 1, 4, 4))
    mod("AdaptiveAvgPool2d", lambda: nn.AdaptiveAvgPool2d(1), T(1, 1, 4, 4))
    for name in ("MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss"):
        mod(name, getattr(nn, name), X, X2)
    mod("CrossEntropyLoss", nn.CrossEntropyLoss, T(3, 5), Long((3,), 5))
    mod("NLLLoss", nn.NLLLoss, T(3, 5), Long((3,), 5))
    mod("BCELoss", nn.BCELoss, PROB, T(3, 4, dom="prob"))
    mod("BCEWithLogitsLoss", nn.BCEWithLogitsLoss, X, PROB)
    mod("KLDivLoss", lambda: nn.KLDivLoss(reduction="batchmean"), X, PROB)
    mod("RNN", lambda: nn.RNN(4, 3), T(2, 1, 4))
    mod("GRU", lambda: nn.GRU(4, 3), T(2, 1, 4))
    mod("LSTM", lambda: nn.LSTM(4, 3), T(2, 1, 4))
    mod("MultiheadAttention", lambda: nn.MultiheadAttention(4, 2), T(3, 1, 4), T(3, 1, 4), T(3, 1, 4))


# --------------------------------------------------------------------------------------
# Running one trial.
# --------------------------------------------------------------------------------------


def _resolve(key: str) -> Any:
    import torch

    obj: Any = torch
    for part in key.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def _make(spec: Any, seed: int) -> Any:
    import torch

    g = torch.Generator().manual_seed(seed)
    if isinstance(spec, Ten):
        u = torch.rand(spec.shape, generator=g)
        if spec.dom == "any":
            return torch.randn(spec.shape, generator=g)
        if spec.dom == "pos":
            return u + 0.5
        if spec.dom == "unit":
            return u * 1.6 - 0.8
        if spec.dom == "gt1":
            return u + 1.5
        if spec.dom == "prob":
            return u * 0.8 + 0.1
        if spec.dom == "spd":  # a symmetric positive definite matrix (eigh, cholesky, inv)
            a = torch.randn(spec.shape, generator=g)
            return a @ a.transpose(-2, -1) + spec.shape[-1] * torch.eye(spec.shape[-1])
        raise ValueError(spec.dom)
    if isinstance(spec, Long):
        return torch.randint(0, spec.high, spec.shape, generator=g)
    if isinstance(spec, Mask):
        return torch.rand(spec.shape, generator=g) > 0.5
    raise TypeError(spec)


def _is_diff(spec: Any) -> bool:
    if isinstance(spec, Ten):
        return spec.grad
    if isinstance(spec, Lst):
        return any(_is_diff(s) for s in spec.items)
    return False


def _is_tensor_spec(spec: Any) -> bool:
    return isinstance(spec, (Ten, Long, Mask, Lst))


def _flatten(obj: Any) -> list:
    import torch

    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [t for o in obj for t in _flatten(o)]
    return []


def _storage(t: Any) -> int | None:
    try:
        if t.numel() == 0:
            return None
        return t.untyped_storage().data_ptr()
    except Exception:  # noqa: BLE001
        return None


@dataclass
class Trial:
    differentiable: bool = False
    inplace_error: bool = False
    not_implemented: bool = False
    second_backward_ok: bool | None = None
    zero_grad: bool | None = None
    saved_attrs: set = field(default_factory=set)  # candidate ids found via _saved_* attributes
    internal: list = field(default_factory=list)  # names of saved tensors matching no candidate
    n_outputs: int = 0


def _saved_tensors_of_graph(roots: list) -> list[tuple[str, Any]]:
    """(node.attr, tensor) for every tensor saved by the nodes reachable from roots,
    stopping at leaves (AccumulateGrad)."""
    import torch

    seen: set[int] = set()
    stack = list(roots)
    found: list[tuple[str, Any]] = []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if "AccumulateGrad" in node.name():
            continue
        for attr in dir(node):
            if not attr.startswith("_saved_"):
                continue
            try:
                val = getattr(node, attr)
            except Exception:  # noqa: BLE001
                continue
            vals = val if isinstance(val, (tuple, list)) else [val]
            for v in vals:
                if isinstance(v, torch.Tensor):
                    found.append((f"{node.name()}.{attr}", v))
        saved = getattr(node, "saved_tensors", None)  # custom autograd.Function nodes
        if isinstance(saved, tuple):
            found.extend((f"{node.name()}.saved_tensors", v) for v in saved if isinstance(v, torch.Tensor))
        stack.extend(n for n, _ in node.next_functions)
    return found


def run_trial(
    op: Op,
    args: tuple,
    kwargs: dict,
    rg: frozenset,
    mutate: Any = None,
    full: bool = False,
) -> Trial:
    """Run ``op`` once with the items in ``rg`` requiring grad. ``mutate`` is a candidate id
    (int arg index, param/buffer name, or ("out", k)) bumped in place before backward.
    ``full`` also runs the double-backward, zero-gradient and attribute checks."""
    import torch

    res = Trial()
    # candidate id -> tensors
    handles: dict[Any, list] = {}
    leaves: list = []
    call_args: list = []
    for i, spec in enumerate(args):
        if isinstance(spec, Lst):
            ts = [_make(s, 1000 + 10 * i + j) for j, s in enumerate(spec.items)]
            for t, s in zip(ts, spec.items):
                if i in rg and _is_diff(s):
                    t.requires_grad_(True)
                    leaves.append(t)
            handles[i] = ts
            call_args.append(ts)
        elif _is_tensor_spec(spec):
            t = _make(spec, 1000 + 10 * i)
            if i in rg:
                t.requires_grad_(True)
                leaves.append(t)
                if op.inplace and i == 0:
                    t = t.clone()  # in-place ops need a non-leaf
            handles[i] = [t]
            call_args.append(t)
        else:
            call_args.append(spec)

    torch.manual_seed(1)
    if op.kind == "module":
        module = op.factory()
        module.train()
        for name, p in module.named_parameters():
            p.requires_grad_(name in rg)
            handles[name] = [p]
            if name in rg:
                leaves.append(p)
        for name, b in module.named_buffers():
            handles[name] = [b]
        target = module
    else:
        target = _resolve(op.key)

    torch.manual_seed(2)
    try:
        out = target(*call_args, **kwargs)
    except RuntimeError as e:
        raise RuntimeError(f"{op.key}: forward failed: {e}") from e
    outs = [handles[0][0]] if op.inplace else _flatten(out)
    res.n_outputs = len(outs)
    for k, o in enumerate(outs):
        handles[("out", k)] = [o]
    diff_outs = [o for o in outs if o.requires_grad]
    res.differentiable = bool(diff_outs)
    if not diff_outs:
        return res

    if full:
        storage_owner: dict[int, Any] = {}
        for cid, ts in handles.items():
            for t in ts:
                s = _storage(t)
                if s is not None:
                    storage_owner.setdefault(s, cid)
        roots = [o.grad_fn for o in diff_outs if o.grad_fn is not None]
        for where, t in _saved_tensors_of_graph(roots):
            owner = storage_owner.get(_storage(t))
            if owner is None:
                res.internal.append(where)
            else:
                res.saved_attrs.add(owner)

    g = torch.Generator().manual_seed(3)
    grads = [torch.randn(o.shape, generator=g, dtype=o.dtype) for o in diff_outs]
    if mutate is not None:
        # Like user code: the loss exists before the in-place change, backward comes after.
        # (o * g) saves only g, which nothing mutates.
        loss = sum((o * gr).sum() for o, gr in zip(diff_outs, grads))
        with torch.no_grad():
            for t in handles[mutate]:
                try:
                    t.add_(0)
                except RuntimeError:
                    torch.autograd.graph.increment_version(t)
        try:
            loss.backward()
        except RuntimeError as e:
            msg = str(e)
            # A saved view of a multi-output view (MultiheadAttention's in_proj_weight.chunk)
            # reports a modified base with the multiple-views message.
            if INPLACE_ERROR in msg or MULTI_VIEW_ERROR in msg:
                res.inplace_error = True
                return res
            if any(s in msg for s in NOT_IMPLEMENTED_ERRORS):
                res.not_implemented = True
                return res
            raise RuntimeError(f"{op.key}: backward failed (mutate={mutate!r}): {e}") from e
        return res

    try:
        torch.autograd.backward(diff_outs, grads)
    except RuntimeError as e:
        if any(s in str(e) for s in NOT_IMPLEMENTED_ERRORS):
            res.not_implemented = True
            return res
        raise RuntimeError(f"{op.key}: backward failed: {e}") from e

    if full:
        res.zero_grad = all(t.grad is None or not bool(t.grad.ne(0).any()) for t in leaves)
        try:
            torch.autograd.backward(diff_outs, grads)
            res.second_backward_ok = True
        except RuntimeError as e:
            if SECOND_BACKWARD_ERROR not in str(e):
                raise RuntimeError(f"{op.key}: second backward failed oddly: {e}") from e
            res.second_backward_ok = False
    return res


# --------------------------------------------------------------------------------------
# Deriving one entry.
# --------------------------------------------------------------------------------------


def _sort_ids(ids: Any) -> list:
    return sorted(ids, key=lambda c: (isinstance(c, str), c))


def _cid_key(c: Any) -> str:
    return str(c)


def derive_entry(op: Op, args: tuple, kwargs: dict, notes: list[str], label: str = "") -> tuple[dict, str | None]:
    """Returns (entry without "kind", nondifferentiable class or None)."""
    name = op.key + label
    items: list = [i for i, s in enumerate(args) if _is_diff(s)]
    cands: list = [i for i, s in enumerate(args) if _is_tensor_spec(s)]
    if op.kind == "module":
        torch_mod = op.factory()
        params = [n for n, _ in torch_mod.named_parameters()]
        buffers = [n for n, _ in torch_mod.named_buffers()]
        items += params
        cands += params + buffers

    empty = {"saves_output": False, "saves_inputs": {}, "saves_any": False, "saves_internal": False}
    if not items:
        return empty, "no_grad"
    all_rg = frozenset(items)
    base = run_trial(op, args, kwargs, all_rg, full=True)
    if not base.differentiable:
        return empty, "no_grad"
    if base.not_implemented:
        return empty, "not_implemented"

    scenarios = [frozenset([d]) for d in items]
    if len(items) > 1:
        scenarios.append(all_rg)
    out_cands = [("out", k) for k in range(base.n_outputs)]
    saved_in: dict[Any, set] = {}  # candidate -> scenarios where it is saved
    for sc in scenarios:
        for c in cands + out_cands:
            t = run_trial(op, args, kwargs, sc, mutate=c)
            if t.inplace_error:
                saved_in.setdefault(c, set()).add(sc)

    def triggers(c_list: list) -> list | None:
        trig = {d for d in items for c in c_list if frozenset([d]) in saved_in.get(c, ())}
        in_all = any(all_rg in saved_in.get(c, ()) for c in c_list)
        if not trig and not in_all:
            return None
        if not trig:
            notes.append(f"{name}: {c_list} saved only when several inputs require grad")
        if not trig or trig == set(items):
            return []
        return _sort_ids(trig)

    saves_inputs = {}
    for c in cands:
        if op.inplace and c == 0:
            continue  # arg 0 *is* the output
        trig = triggers([c])
        if trig is not None:
            saves_inputs[_cid_key(c)] = trig
    entry: dict[str, Any] = {
        "saves_output": False,
        "saves_inputs": saves_inputs,
        "saves_any": base.second_backward_ok is False,
        "saves_internal": bool(base.internal),
    }
    out_trig = triggers(out_cands)
    if out_trig is not None:
        entry["saves_output"] = True
        if out_trig:
            entry["saves_output_when"] = out_trig
        if base.n_outputs > 1:
            entry["saved_outputs"] = [k for k in range(base.n_outputs) if saved_in.get(("out", k))]

    # Cross-checks between the experiments and the _saved_* attributes (all scenario).
    exp_all = {c for c, scs in saved_in.items() if all_rg in scs}
    attr_all = {c for c in base.saved_attrs if c in cands or c in out_cands}
    if op.inplace:  # arg 0 and output 0 are the same tensor
        exp_all = {("out", 0) if c == 0 else c for c in exp_all}
        attr_all = {("out", 0) if c == 0 else c for c in attr_all}
    if exp_all != attr_all:
        notes.append(
            f"{name}: in-place experiment says saved={_sort_ids(map(str, exp_all))}, "
            f"_saved_* attributes say {_sort_ids(map(str, attr_all))}"
        )
    if entry["saves_any"] != bool(saved_in or base.internal or base.saved_attrs):
        notes.append(f"{name}: double backward says saves_any={entry['saves_any']} "
                     f"but saved tensors found={bool(saved_in or base.internal)}")
    nd = "zero_grad" if base.zero_grad else None
    return entry, nd


def derive_op(op: Op, notes: list[str]) -> tuple[dict, str | None]:
    entry, nd = derive_entry(op, op.args, op.kwargs, notes)
    for idx, value in sorted(op.not_tensor.items()):
        args = list(op.args)
        args[idx] = value
        sub, _ = derive_entry(op, tuple(args), op.kwargs, notes, f" (arg {idx} not a tensor)")
        entry.setdefault("when_not_tensor", {})[str(idx)] = sub
    for label, (args, kwargs) in sorted(op.overloads.items()):
        sub, _ = derive_entry(op, args, {**op.kwargs, **kwargs}, notes, f" (overload {label})")
        entry.setdefault("overloads", {})[label] = sub
    entry["kind"] = op.kind
    return entry, nd


def derive_table(only: list[str] | None = None, verbose: bool = False) -> tuple[dict, list[str]]:
    import torch

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    if not OPS:
        _register_ops()
    notes: list[str] = []
    ops: dict[str, dict] = {}
    nondiff: dict[str, str] = {}
    for o in OPS:
        if only and o.key not in only:
            continue
        t0 = time.perf_counter()
        entry, nd = derive_op(o, notes)
        ops[o.key] = entry
        if nd:
            nondiff[o.key] = nd
        if verbose:
            print(f"{time.perf_counter() - t0:7.3f}s {o.key}", file=sys.stderr)
    table = {"torch_version": torch.__version__, "ops": ops, "nondifferentiable": nondiff}
    return table, notes


def render(table: dict) -> str:
    return json.dumps(table, indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 with a diff if the committed table is stale")
    ap.add_argument("--output", type=Path, default=TABLE_PATH)
    ap.add_argument("--only", action="append", help="derive only these op keys (with --print)")
    ap.add_argument("--print", action="store_true", help="print the derived table instead of writing it")
    ap.add_argument("--notes", action="store_true", help="print cross-check notes to stderr")
    ap.add_argument("-v", "--verbose", action="store_true", help="print per-op timings to stderr")
    ns = ap.parse_args(argv)

    t0 = time.perf_counter()
    table, notes = derive_table(ns.only, ns.verbose)
    if ns.notes:
        for n in notes:
            print("note:", n, file=sys.stderr)
    text = render(table)
    if ns.print or ns.only:
        sys.stdout.write(text)
        return 0
    if ns.check:
        try:
            committed = json.loads(ns.output.read_text())
        except (OSError, ValueError) as e:
            print(f"{ns.output}: cannot read ({e})", file=sys.stderr)
            return 1
        old_version = committed.get("torch_version")
        # The torch version alone does not make the table stale: only the facts do.
        committed["torch_version"] = table["torch_version"]
        if committed == table:
            note = "" if old_version == table["torch_version"] else f" (derived with torch {old_version})"
            print(f"{ns.output.relative_to(ROOT) if ns.output.is_relative_to(ROOT) else ns.output}: "
                  f"up to date with torch {table['torch_version']}{note}, "
                  f"{len(table['ops'])} ops, {time.perf_counter() - t0:.1f}s")
            return 0
        diff = difflib.unified_diff(
            render(committed).splitlines(keepends=True), text.splitlines(keepends=True),
            "committed", f"derived with torch {table['torch_version']}",
        )
        sys.stdout.writelines(diff)
        print(f"\n{ns.output} is stale: run `python scripts/gen_optable.py` to regenerate it.")
        return 1
    ns.output.parent.mkdir(parents=True, exist_ok=True)
    ns.output.write_text(text)
    print(f"wrote {ns.output} ({len(table['ops'])} ops, {len(table['nondifferentiable'])} "
          f"nondifferentiable) in {time.perf_counter() - t0:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
