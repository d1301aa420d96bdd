"""PyTorch knowledge the analysis needs, without importing torch.

The central table, which ops save which tensors for backward, is generated from torch itself by
`scripts/gen_optable.py` into `gradsight/data/saved_tensors.json`; a test re-derives it when torch is
installed so it stays true across torch versions. The small lists below are facts about APIs
(which calls build tensors, which leave autograd) that do not depend on numerics.
"""

from __future__ import annotations

import json
import pathlib
from types import MappingProxyType
from typing import Optional

DATA = pathlib.Path(__file__).resolve().parent.parent / "data" / "saved_tensors.json"

FACTORIES = {
    "randn", "rand", "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "randint",
    "randperm", "normal", "tensor", "as_tensor", "from_numpy", "randn_like", "rand_like", "zeros_like",
    "ones_like", "empty_like", "full_like", "randint_like", "Tensor", "FloatTensor", "LongTensor",
    "DoubleTensor", "IntTensor", "BoolTensor", "empty_strided", "asarray", "scalar_tensor", "frombuffer",
}
INT_FACTORIES = {"randint", "randperm", "LongTensor", "IntTensor", "BoolTensor", "randint_like"}
INT_DTYPES = {"long", "int", "int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64", "bool",
              "short"}
# Legacy tensor types whose elements are integers or bools: `x.type(torch.LongTensor)` casts to one.
INT_TENSOR_TYPES = {"LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"}
FLOAT_DTYPES = {"float", "float32", "float64", "double", "half", "float16", "bfloat16", "cfloat", "complex64",
                "complex128"}

# Tensor methods that take data out of autograd, and what they return.
# Methods of `nn.Module` or `torch.optim.Optimizer` that `torch.Tensor` does not have (checked under the pinned
# torch by tests/test_rules_torch.py through GS519's examples and `hasattr(torch.Tensor, name)` in its test):
# calling one on a tensor raises AttributeError.
# Functions that reparametrize a module's weight (now computed, with gradient, from new parameters) and return the
# module itself (each checked under torch: `weight_norm(m) is m`).
RETURNS_ITS_MODULE = frozenset({
    "torch.nn.utils.weight_norm", "torch.nn.utils.spectral_norm", "torch.nn.utils.remove_weight_norm",
    "torch.nn.utils.remove_spectral_norm", "torch.nn.utils.parametrizations.weight_norm",
    "torch.nn.utils.parametrizations.spectral_norm", "torch.nn.utils.parametrizations.orthogonal",
})

MODULE_ONLY_METHODS = frozenset({
    "zero_grad", "parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children",
    "modules", "named_modules", "eval", "train", "state_dict", "load_state_dict", "step", "add_param_group",
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook", "register_backward_hook",
})

# Methods of `torch.distributions` objects that no tensor has (tests/test_torchdb.py checks it under torch): called
# on a value taken for a tensor, the value is a distribution. Sampling runs under `no_grad` (only `rsample` keeps a
# graph).
DISTRIBUTION_ONLY = frozenset({"sample", "sample_n", "rsample", "log_prob", "entropy", "cdf", "icdf",
                               "enumerate_support", "perplexity"})
SAMPLES_WITHOUT_GRAD = frozenset({"sample", "sample_n", "enumerate_support"})
CUT_METHODS = {"item": "a Python number", "tolist": "Python lists", "numpy": "a NumPy array"}
# Methods whose result never requires grad (integer/bool results or index results).
NO_GRAD_METHODS = {
    "argmax", "argmin", "argsort", "eq", "ne", "lt", "gt", "le", "ge", "isnan", "isinf", "isfinite",
    "nonzero", "long", "int", "bool", "byte", "short", "char", "__eq__", "__ne__", "__lt__", "__gt__",
    "__le__", "__ge__", "__and__", "__or__", "__xor__", "__invert__", "count_nonzero", "bincount",
    "logical_and", "logical_or", "logical_not", "logical_xor", "equal", "allclose", "isclose",
    "searchsorted", "bucketize", "unique", "size", "dim", "numel", "stride", "data_ptr", "element_size",
    "is_contiguous", "get_device", "nelement", "ndimension",
}
# Differentiable but with zero gradient almost everywhere: the loss trains nothing through them.
ZERO_GRAD_METHODS = {"round", "floor", "ceil", "trunc", "sign", "frac_zero"}
# In-place-looking names that do not modify tensor data the autograd way.
NOT_INPLACE = {"requires_grad_", "retain_grad", "share_memory_", "register_hook", "apply_", "map_",
               "pin_memory", "record_stream", "detach_", "resize_", "resize_as_", "set_", "backward"}
# Methods returning values that change device or dtype: a copy (non-leaf) unless it is a no-op.
COPY_METHODS = {"to", "cuda", "cpu", "double", "float", "half", "bfloat16", "type", "type_as"}
# Tensor methods that return a new tensor and change nothing (their in-place twins end in `_`): a statement that only
# calls one of them on a tensor throws its work away (`DiscardEvent`). Methods that may return the tensor itself
# (`.to()` when nothing changes) are included: the statement still does nothing.
PURE_METHODS = {"add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "pow", "neg", "abs",
                "sqrt", "rsqrt", "exp", "log", "log1p", "sigmoid", "tanh", "relu", "clamp", "clamp_min", "clamp_max",
                "clip", "floor", "ceil", "round", "trunc", "sign", "reciprocal", "masked_fill", "masked_scatter",
                "index_fill", "index_add", "index_copy", "index_put", "scatter", "scatter_add", "lerp", "addcmul",
                "addcdiv", "t", "transpose", "permute", "view", "reshape", "squeeze", "unsqueeze", "flatten",
                "expand", "repeat", "contiguous", "clone", "detach", "float", "half", "double", "long", "int",
                "bool", "to", "cpu", "cuda", "type", "type_as"}
ALWAYS_COPY = {"double", "half", "bfloat16", "cuda"}
VIEW_METHODS = {"view", "view_as", "reshape", "transpose", "permute", "squeeze", "unsqueeze", "flatten",
                "expand", "expand_as", "narrow", "t", "T", "mT", "select", "unfold", "diagonal",
                "as_strided", "movedim", "swapaxes", "unflatten", "__getitem__"}
MULTI_VIEW = {"split", "chunk", "unbind", "tensor_split", "split_with_sizes", "hsplit", "vsplit"}
REDUCTIONS = {"sum", "mean", "prod", "norm", "std", "var", "logsumexp", "amax", "amin", "max", "min", "median",
              "nansum", "nanmean", "all", "any", "dot", "vdot"}
ELEMENTWISE_UNARY = {
    "exp", "log", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "sqrt", "rsqrt", "abs", "neg", "square",
    "reciprocal", "erf", "log1p", "expm1", "clamp", "clip", "log2", "log10", "exp2", "softplus", "gelu", "silu",
    "clone", "contiguous", "__neg__", "__pos__", "__abs__", "pow", "float", "double", "half", "to", "cpu", "cuda",
    "detach", "sinh", "cosh", "asin", "acos", "atan", "leaky_relu", "elu", "selu", "mish", "hardtanh",
    "dropout", "softmax", "log_softmax", "normalize", "layer_norm",
}
ELEMENTWISE_BINARY = {
    "add", "sub", "mul", "div", "true_divide", "maximum", "minimum", "atan2", "__add__", "__radd__", "__sub__",
    "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__", "__pow__", "__rpow__", "where",
    "subtract", "multiply", "divide",
}
BINOP_DUNDER = {
    "Add": "__add__", "Sub": "__sub__", "Mult": "__mul__", "Div": "__truediv__", "Pow": "__pow__",
    "MatMult": "__matmul__", "FloorDiv": "__floordiv__", "Mod": "__mod__",
}
INPLACE_DUNDER = {
    "Add": "__iadd__", "Sub": "__isub__", "Mult": "__imul__", "Div": "__itruediv__", "Pow": "__ipow__",
    "MatMult": "__imatmul__", "FloorDiv": "__ifloordiv__", "Mod": "__imod__",
}
INPLACE_TO_OUT = {"__iadd__": "__add__", "__isub__": "__sub__", "__imul__": "__mul__",
                  "__itruediv__": "__truediv__", "__ipow__": "__pow__", "__imatmul__": "__matmul__"}

PARAMLESS_MODULES = {
    "ReLU", "ReLU6", "Sigmoid", "Tanh", "GELU", "SiLU", "Mish", "Softmax", "LogSoftmax", "Softmin", "Softplus",
    "ELU", "CELU", "SELU", "LeakyReLU", "Hardtanh", "Hardswish", "Hardsigmoid", "Hardshrink", "Softshrink",
    "Tanhshrink", "Softsign", "Threshold", "GLU", "LogSigmoid", "Dropout", "Dropout1d", "Dropout2d",
    "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "Identity", "Flatten", "Unflatten", "MaxPool1d",
    "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "Upsample",
    "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle", "ChannelShuffle",
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "CosineSimilarity", "PairwiseDistance", "Fold", "Unfold", "LPPool1d", "LPPool2d",
}
# Loss modules with no parameters; they hold a buffer only when handed a tensor (`weight=`, `pos_weight=`, or the
# positional `weight`). Re-derived from torch by tests/test_optable.py::test_paramless_losses.
PARAMLESS_LOSSES = {
    "BCELoss", "BCEWithLogitsLoss", "CTCLoss", "CosineEmbeddingLoss", "CrossEntropyLoss", "GaussianNLLLoss",
    "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss", "MSELoss", "MarginRankingLoss",
    "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss", "PoissonNLLLoss",
    "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
}
PARAM_MODULES = {
    "Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
    "ConvTranspose3d", "Embedding", "EmbeddingBag", "LayerNorm", "GroupNorm", "RMSNorm", "BatchNorm1d",
    "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "RNN", "GRU", "LSTM",
    "RNNCell", "GRUCell", "LSTMCell", "MultiheadAttention", "Transformer", "TransformerEncoder",
    "TransformerDecoder", "TransformerEncoderLayer", "TransformerDecoderLayer", "PReLU",
}
RECURRENT = {"RNN": 2, "GRU": 2, "LSTM": 2, "MultiheadAttention": 2}
CONTAINERS = {"Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"}
INPLACE_CAPABLE_MODULES = {"ReLU", "ReLU6", "LeakyReLU", "ELU", "CELU", "SELU", "Hardtanh", "Hardswish",
                           "Hardsigmoid", "SiLU", "Mish", "Threshold", "Dropout", "Dropout1d", "Dropout2d",
                           "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"}
# Constructors of sparse tensors from index and value tensors: the result is a tensor whatever gradsight knows of
# its arguments, and it requires grad exactly when its values do (`torch.sparse_coo_tensor(idx, w, (n, n))` of a
# `w` computed from a tensor that requires grad has a grad_fn).
SPARSE_CONSTRUCTORS = frozenset({"torch.sparse_coo_tensor", "torch.sparse_csr_tensor", "torch.sparse_csc_tensor",
                                 "torch.sparse_bsr_tensor", "torch.sparse_bsc_tensor",
                                 "torch.sparse_compressed_tensor"})
INPLACE_CAPABLE_FUNCTIONAL = {"relu", "relu6", "leaky_relu", "elu", "celu", "selu", "hardtanh", "hardswish",
                              "hardsigmoid", "silu", "mish", "threshold", "dropout", "dropout1d", "dropout2d",
                              "dropout3d", "alpha_dropout", "rrelu"}

GRAD_MODE = {
    "torch.no_grad": (False, False),
    "torch.autograd.no_grad": (False, False),
    "torch.autograd.grad_mode.no_grad": (False, False),
    "torch.enable_grad": (True, False),
    "torch.autograd.enable_grad": (True, False),
    "torch.inference_mode": (False, True),
    "torch.autograd.inference_mode": (False, True),
    "torch.set_grad_enabled": (None, False),
    "torch.autograd.set_grad_enabled": (None, False),
}

# Ops returning a tuple of float tensors, each saved for backward as the table's `saved_outputs` says, with the
# number of tensors they return: their results are unpacked output by output (`Q, R = torch.linalg.qr(a)`;
# `std, mean = torch.std_mean(x)` saves the std only, so writing into `mean` is harmless). The (values, indices)
# ops (`topk`, `sort`, `max(dim)`, ...) are not among them: their result stands for the values, which those ops
# never save, and unpacking makes the indices (`interp_stmts.assign`).
DECOMPOSITIONS = MappingProxyType({"qr": 2, "svd": 3, "eigh": 2, "std_mean": 2})

BACKWARD_FUNCS = {"torch.autograd.backward", "torch.autograd.grad"}

# Losses that compare a prediction with a target: the functional name -> the module class of the same loss. The
# prediction is the first argument (`input`), the target the second (`target`); GS418 reads them.
LOSSES_WITH_TARGET = {
    "mse_loss": "MSELoss", "l1_loss": "L1Loss", "smooth_l1_loss": "SmoothL1Loss", "huber_loss": "HuberLoss",
    "kl_div": "KLDivLoss", "binary_cross_entropy": "BCELoss",
    "binary_cross_entropy_with_logits": "BCEWithLogitsLoss", "cross_entropy": "CrossEntropyLoss",
}
LOSS_MODULES_WITH_TARGET = frozenset(LOSSES_WITH_TARGET.values())
# Losses that are zero when the prediction equals the target (a distance), so zero with both in one memory.
DISTANCE_LOSSES = frozenset({"mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "MSELoss", "L1Loss",
                             "SmoothL1Loss", "HuberLoss"})
# NumPy functions that call the argument's own method (`t.mean(axis=...)`) instead of converting it: on a
# tensor they fail with a TypeError about `axis`/`dim`, not the numpy() error (checked under torch 2.13).
NUMPY_METHOD_DISPATCH = {"mean", "sum", "max", "min", "std", "var", "prod", "amax", "amin", "any", "all", "ptp",
                         "array_equal", "size", "shape", "ndim"}
NUMPY_FUNCS = {"numpy.array", "numpy.asarray", "numpy.asanyarray", "numpy.ascontiguousarray"}


# Minimal built-in facts, used where the generated table has no entry (or is missing).
_BUILTIN_SAVES: dict[str, dict] = {
    # name: (saves_output, saves_inputs, saves_any)
}
for _n in ("sigmoid", "tanh", "exp", "relu", "softmax", "log_softmax", "sqrt", "rsqrt", "exp2", "expm1",
           "elu", "hardtanh", "threshold"):
    _BUILTIN_SAVES[_n] = {"saves_output": True, "saves_inputs": {}, "saves_any": True}
for _n in ("mul", "__mul__", "__rmul__", "matmul", "__matmul__", "mm", "bmm", "multiply"):
    _BUILTIN_SAVES[_n] = {"saves_output": False, "saves_inputs": {"0": [1], "1": [0]}, "saves_any": True}
for _n in ("div", "__truediv__", "true_divide", "divide"):
    _BUILTIN_SAVES[_n] = {"saves_output": False, "saves_inputs": {"0": [1], "1": []}, "saves_any": True}
for _n in ("log", "sin", "cos", "tan", "abs", "pow", "__pow__", "square", "reciprocal", "erf", "log1p",
           "clamp", "clip", "gelu", "silu", "leaky_relu", "softplus", "mish", "log2", "log10", "sinh", "cosh",
           "asin", "acos", "atan", "norm", "prod", "std", "var", "logsumexp", "max", "min", "amax", "amin",
           "layer_norm", "normalize", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy",
           "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "gather",
           "index_select", "embedding", "conv1d", "conv2d", "conv3d", "batch_norm", "group_norm", "dropout",
           "maximum", "minimum", "where", "atan2", "cosine_similarity", "max_pool2d", "max_pool1d"):
    _BUILTIN_SAVES.setdefault(_n, {"saves_output": False, "saves_inputs": {"0": []}, "saves_any": True})
for _n in ("linear", "addmm"):
    _BUILTIN_SAVES[_n] = {"saves_output": False, "saves_inputs": {"0": [1], "1": [0]}, "saves_any": True}
for _n in ("add", "sub", "__add__", "__radd__", "__sub__", "__rsub__", "sum", "mean", "view", "reshape",
           "transpose", "permute", "squeeze", "unsqueeze", "flatten", "expand", "clone", "contiguous", "t",
           "__neg__", "neg", "cat", "stack", "to", "cpu", "cuda", "float", "double", "__getitem__", "narrow",
           "split", "chunk", "unbind", "detach", "view_as", "expand_as", "subtract", "flip", "roll", "repeat",
           "pad", "identity"):
    _BUILTIN_SAVES[_n] = {"saves_output": False, "saves_inputs": {}, "saves_any": False}

def _load() -> "MappingProxyType":
    """The generated table (`scripts/gen_optable.py`: functions, methods and `torch.nn` modules, each run under
    torch with saved-tensor hooks; `tests/test_optable.py` re-derives it), read once at import into a read-only
    mapping: a constant of the process, not a cache. Unreadable data gives an empty table (nothing is known to
    be saved, so nothing is reported from it)."""
    try:
        data = json.loads(DATA.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("ops"), dict):
        data = {"ops": {}}
    return MappingProxyType({"ops": MappingProxyType(data["ops"]),
                             "nondifferentiable": MappingProxyType(dict(data.get("nondifferentiable") or {}))})


_TABLE = _load()


# Keywords that name the reduced dimension (`axis` is NumPy's spelling, which torch accepts): given one, `max`, `min`,
# `median` and `nanmedian` return (values, indices), the table's "dim" overload.
DIM_KEYWORDS = frozenset({"dim", "axis"})


def op_entry(qual: str, tensor_args: Optional[list] = None, keywords=()) -> Optional[dict]:
    """What `qual` saves for backward, or None when nothing is known (callers then assume it saves nothing).

    `tensor_args[i]` says whether positional argument i is a tensor (None: not known); the generated table has
    separate facts for Python-number arguments (`x * 2.0` saves the wrapped scalar, `x + 2.0` saves nothing).
    `keywords` are the names of the keyword arguments: a dim given as `dim=` picks the overload a positional dim
    picks (`x.max(dim=-1)` saves its indices, not its values: bench/fresh25-false/05).
    """
    entry = _op_entry(qual)
    if entry is None or not tensor_args:
        return entry
    overloads = entry.get("overloads") or {}
    if len(tensor_args) == 1 and tensor_args[0] and "dim" in overloads and DIM_KEYWORDS.intersection(keywords):
        return overloads["dim"]
    if len(tensor_args) >= 2 and tensor_args[0]:
        # `torch.max(a, b)` (overload "other": saves its inputs) against `torch.max(x, dim)` ("dim": saves the
        # indices) and `torch.max(x)` (the entry: saves its output). A second argument not known to be a number
        # is taken as a tensor: a dim is almost always a literal.
        sub = overloads.get("dim") if tensor_args[1] is False else overloads.get("other")
        if sub is not None:
            return sub
    for idx, sub in (entry.get("when_not_tensor") or {}).items():
        if idx.isdigit() and int(idx) < len(tensor_args) and not tensor_args[int(idx)]:
            return sub
    return entry


def _op_entry(qual: str) -> Optional[dict]:
    table = _TABLE["ops"]
    entry = table.get(qual)
    if entry is not None:
        return entry
    short = qual.rsplit(".", 1)[-1]
    if qual.startswith("torch.nn.") and short[:1].isupper():
        return None  # a module the generated table does not cover: what it saves is not known
    # torch.X, torch.Tensor.X and torch.nn.functional.X share facts where the generated table lacks one.
    for alias in (f"torch.{short}", f"torch.Tensor.{short}", f"torch.nn.functional.{short}"):
        if alias in table:
            return table[alias]
    return _BUILTIN_SAVES.get(short)


def nondifferentiable(qual: str) -> Optional[str]:
    """'no_grad' (result never requires grad), 'zero_grad' (gradient is zero), or None."""
    nd = _TABLE["nondifferentiable"]
    if qual in nd:
        return nd[qual]
    short = qual.rsplit(".", 1)[-1]
    for alias in (f"torch.{short}", f"torch.Tensor.{short}"):
        if alias in nd:
            return nd[alias]
    if short in NO_GRAD_METHODS:
        return "no_grad"
    if short in ZERO_GRAD_METHODS:
        return "zero_grad"
    return None


def is_inplace_name(name: str) -> bool:
    if name in NOT_INPLACE:
        return False
    if name.startswith("__i") and name.endswith("__") and name not in ("__init__", "__index__", "__iter__"):
        return True
    return name.endswith("_") and not name.startswith("_") and not name.endswith("__")


def module_short(qual: str) -> str:
    return qual.rsplit(".", 1)[-1]
