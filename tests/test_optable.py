"""The committed table of what PyTorch ops save for backward (gradsight/data/saved_tensors.json).

The schema and must-have facts are checked without torch; the ``torch``-marked test
re-derives the whole table with the installed torch (scripts/gen_optable.py --check).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TABLE_PATH = ROOT / "server" / "gradsight" / "data" / "saved_tensors.json"
SCRIPT = ROOT / "scripts" / "gen_optable.py"

KINDS = {"function", "method", "module"}
NONDIFF_CLASSES = {"no_grad", "zero_grad", "not_implemented"}
REQUIRED = {"saves_output": bool, "saves_inputs": dict, "saves_any": bool}
OPTIONAL = {
    "saves_internal": bool,
    "saves_output_when": list,
    "saved_outputs": list,
    "when_not_tensor": dict,
    "overloads": dict,
}


@pytest.fixture(scope="module")
def raw() -> str:
    return TABLE_PATH.read_text()


@pytest.fixture(scope="module")
def table(raw: str) -> dict:
    return json.loads(raw)


@pytest.fixture(scope="module")
def ops(table: dict) -> dict:
    return table["ops"]


def _check_ref(ref: object, key: str, kind: str) -> None:
    if kind == "module":
        assert isinstance(ref, (int, str)) and not isinstance(ref, bool), (key, ref)
        if isinstance(ref, str):
            assert ref and not ref.isdigit(), (key, ref)
    else:
        assert isinstance(ref, int) and not isinstance(ref, bool), (key, ref)
    if isinstance(ref, int):
        assert ref >= 0, (key, ref)


def _check_entry(key: str, entry: dict, kind: str, nested: bool = False) -> None:
    allowed = set(REQUIRED) | set(OPTIONAL) | ({"kind"} if not nested else set())
    assert set(entry) <= allowed, (key, set(entry) - allowed)
    for field, typ in REQUIRED.items():
        assert isinstance(entry.get(field), typ), (key, field, entry.get(field))
    for field, typ in OPTIONAL.items():
        if field in entry:
            assert isinstance(entry[field], typ), (key, field)
    for idx, refs in entry["saves_inputs"].items():
        if kind == "module" and not idx.isdigit():
            assert idx.replace("_", "").replace(".", "").isalnum(), (key, idx)  # a parameter/buffer name
        else:
            assert idx.isdigit(), (key, idx)
        assert isinstance(refs, list), (key, idx)
        for ref in refs:
            _check_ref(ref, key, kind)
        assert refs == sorted(refs, key=lambda r: (isinstance(r, str), r)), (key, idx, refs)
    for ref in entry.get("saves_output_when", []):
        _check_ref(ref, key, kind)
    if "saves_output_when" in entry:
        assert entry["saves_output"] and entry["saves_output_when"], key
    if "saved_outputs" in entry:
        assert entry["saves_output"] and entry["saved_outputs"], key
        assert all(isinstance(k, int) and k >= 0 for k in entry["saved_outputs"]), key
    # Anything saved (and freed by the first backward) makes a second backward fail.
    if entry["saves_output"] or entry["saves_inputs"] or entry.get("saves_internal"):
        assert entry["saves_any"], key
    if not nested:
        for idx, sub in entry.get("when_not_tensor", {}).items():
            assert idx.isdigit(), (key, idx)
            _check_entry(f"{key} (arg {idx} not a tensor)", sub, kind, nested=True)
            assert idx not in sub["saves_inputs"], (key, idx)  # a Python value is never "saved"
        for label, sub in entry.get("overloads", {}).items():
            assert isinstance(label, str) and label, key
            _check_entry(f"{key} ({label})", sub, kind, nested=True)


def test_file_is_canonical_json(raw: str, table: dict) -> None:
    # Pretty-printed with sorted keys, as written by scripts/gen_optable.py: diffs stay reviewable.
    assert raw == json.dumps(table, indent=2, sort_keys=True) + "\n"
    assert set(table) == {"torch_version", "ops", "nondifferentiable"}
    assert isinstance(table["torch_version"], str) and table["torch_version"][0].isdigit()


def test_schema(ops: dict) -> None:
    assert len(ops) >= 150
    for key, entry in ops.items():
        assert entry.get("kind") in KINDS, key
        kind = entry["kind"]
        assert key.startswith("torch."), key
        if kind == "method":
            assert key.startswith("torch.Tensor."), key
        elif kind == "module":
            name = key.removeprefix("torch.nn.")
            assert name != key and "." not in name and name[0].isupper(), key
        else:
            assert not key.startswith("torch.Tensor."), key
        _check_entry(key, entry, kind)


def test_nondifferentiable(table: dict, ops: dict) -> None:
    nd = table["nondifferentiable"]
    assert set(nd.values()) <= NONDIFF_CLASSES
    assert set(nd) <= set(ops)
    for key, cls in nd.items():
        if cls != "zero_grad":  # a zero-grad op still has a (saving-nothing) backward node
            assert not ops[key]["saves_any"], key
    for key in ("torch.argmax", "torch.argmin", "torch.argsort", "torch.eq", "torch.lt", "torch.isnan",
                "torch.nonzero", "torch.Tensor.argmax", "torch.Tensor.long", "torch.Tensor.int",
                "torch.Tensor.bool", "torch.Tensor.detach", "torch.Tensor.item", "torch.Tensor.__eq__",
                "torch.Tensor.__lt__", "torch.Tensor.__ge__", "torch.zeros_like", "torch.nn.functional.one_hot"):
        assert nd.get(key) == "no_grad", key
    for key in ("torch.round", "torch.floor", "torch.ceil", "torch.sign", "torch.trunc", "torch.Tensor.round"):
        assert nd.get(key) == "zero_grad", key
    for key in ("torch.exp", "torch.mul", "torch.Tensor.float", "torch.Tensor.double", "torch.max",
                "torch.sort", "torch.topk", "torch.Tensor.__getitem__", "torch.frac"):
        assert key not in nd, key


def test_covers_the_common_ops(ops: dict) -> None:
    must = [f"torch.{n}" for n in (
        "exp log sin cos tanh sigmoid relu sqrt rsqrt abs neg pow square reciprocal erf log1p expm1 clamp "
        "clip floor round sign add sub mul div matmul mm bmm addmm maximum minimum where atan2 sum mean "
        "max min prod norm logsumexp softmax log_softmax var std cumsum reshape transpose permute squeeze "
        "unsqueeze flatten cat stack split chunk unbind gather index_select narrow t clone").split()]
    must += [f"torch.nn.functional.{n}" for n in (
        "relu gelu silu leaky_relu elu softplus dropout linear conv1d conv2d layer_norm batch_norm mse_loss "
        "cross_entropy binary_cross_entropy binary_cross_entropy_with_logits nll_loss l1_loss smooth_l1_loss "
        "normalize embedding pad interpolate max_pool2d avg_pool2d softmax log_softmax sigmoid tanh").split()]
    must += [f"torch.Tensor.{n}" for n in (
        "exp __mul__ __add__ __pow__ __matmul__ __truediv__ __rtruediv__ __sub__ __neg__ __getitem__ sum mean "
        "view reshape clamp expand contiguous").split()]
    must += [f"torch.nn.{n}" for n in (
        "Linear Conv1d Conv2d ReLU Sigmoid Tanh GELU SiLU Softmax LogSoftmax LayerNorm BatchNorm1d BatchNorm2d "
        "Dropout Embedding MSELoss CrossEntropyLoss BCEWithLogitsLoss BCELoss L1Loss NLLLoss GRU LSTM RNN "
        "Identity Flatten MaxPool2d AvgPool2d LeakyReLU ELU Softplus Hardtanh").split()]
    assert [k for k in must if k not in ops] == []


def test_ops_that_save_their_output(ops: dict) -> None:
    for name in ("sigmoid", "tanh", "exp", "relu", "softmax", "log_softmax", "sqrt", "rsqrt", "reciprocal"):
        for key in (f"torch.{name}", f"torch.Tensor.{name}"):
            assert ops[key]["saves_output"], key
            assert ops[key]["saves_inputs"] == {}, key
            assert ops[key]["saves_any"], key
    for key in ("torch.nn.functional.relu", "torch.nn.functional.sigmoid", "torch.nn.ReLU", "torch.nn.Sigmoid",
                "torch.nn.Tanh", "torch.nn.Softmax", "torch.nn.LogSoftmax", "torch.Tensor.sigmoid_",
                "torch.Tensor.relu_"):
        assert ops[key]["saves_output"], key


def test_ops_that_save_their_input(ops: dict) -> None:
    for key in ("torch.sin", "torch.log", "torch.abs", "torch.square", "torch.nn.functional.gelu",
                "torch.nn.functional.silu", "torch.nn.GELU", "torch.nn.LeakyReLU", "torch.clamp"):
        assert ops[key]["saves_inputs"] == {"0": []}, key
        assert not ops[key]["saves_output"], key


def test_binary_ops(ops: dict) -> None:
    for key in ("torch.mul", "torch.Tensor.mul", "torch.Tensor.__mul__", "torch.matmul", "torch.mm",
                "torch.bmm", "torch.Tensor.__matmul__"):
        assert ops[key]["saves_inputs"] == {"0": [1], "1": [0]}, key
        assert not ops[key]["saves_output"], key
    for key in ("torch.add", "torch.sub", "torch.Tensor.add", "torch.Tensor.__add__", "torch.Tensor.__sub__",
                "torch.Tensor.__radd__", "torch.Tensor.__neg__"):
        assert ops[key]["saves_inputs"] == {} and not ops[key]["saves_output"], key
        assert not ops[key]["saves_any"], key
    assert ops["torch.Tensor.add"] == {"saves_output": False, "saves_inputs": {}, "saves_any": False,
                                       "saves_internal": False, "kind": "method",
                                       "when_not_tensor": ops["torch.Tensor.add"]["when_not_tensor"]}
    # x / y needs 1/y for x's grad and x, y for y's grad.
    assert ops["torch.div"]["saves_inputs"] == {"0": [1], "1": []}
    assert ops["torch.addmm"]["saves_inputs"] == {"1": [2], "2": [1]}
    assert not ops["torch.addmm"]["saves_output"]


def test_python_scalar_operands(ops: dict) -> None:
    # x * 2.0 saves no tensor of the user's, but it does save the wrapped scalar: the graph
    # cannot be backwarded twice.
    for key in ("torch.mul", "torch.Tensor.__mul__", "torch.Tensor.__truediv__", "torch.div"):
        sub = ops[key]["when_not_tensor"]["1"]
        assert sub["saves_inputs"] == {} and not sub["saves_output"], key
        assert sub["saves_any"] and sub["saves_internal"], key
    for key in ("torch.Tensor.__rmul__", "torch.Tensor.__rtruediv__"):
        assert ops[key]["saves_inputs"] == {} and ops[key]["saves_any"], key
    for key in ("torch.add", "torch.Tensor.__add__", "torch.Tensor.__sub__"):
        assert not ops[key]["when_not_tensor"]["1"]["saves_any"], key
    # x ** 2 saves x, not the result; x ** y saves the result too.
    assert ops["torch.Tensor.__pow__"]["when_not_tensor"]["1"]["saves_inputs"] == {"0": []}
    assert not ops["torch.Tensor.__pow__"]["when_not_tensor"]["1"]["saves_output"]
    assert ops["torch.Tensor.__pow__"]["saves_output"]


def test_indexing(ops: dict) -> None:
    getitem = ops["torch.Tensor.__getitem__"]
    assert getitem["saves_inputs"] == {"1": []}  # x[idx_tensor] saves idx, not x
    assert not getitem["when_not_tensor"]["1"]["saves_any"]  # x[0:2, 1] saves nothing
    for key in ("torch.gather", "torch.index_select", "torch.nn.functional.embedding", "torch.nn.Embedding"):
        assert ops[key]["saves_any"], key
    assert ops["torch.nn.functional.embedding"]["saves_inputs"] == {"0": []}


def test_views_and_shape_ops_save_nothing(ops: dict) -> None:
    for key in ("torch.Tensor.view", "torch.reshape", "torch.Tensor.reshape", "torch.transpose", "torch.permute",
                "torch.squeeze", "torch.unsqueeze", "torch.flatten", "torch.Tensor.expand", "torch.cat",
                "torch.stack", "torch.split", "torch.chunk", "torch.unbind", "torch.narrow", "torch.t",
                "torch.Tensor.contiguous", "torch.clone", "torch.nn.Identity", "torch.nn.Flatten",
                "torch.sum", "torch.mean", "torch.Tensor.sum", "torch.Tensor.mean", "torch.cumsum"):
        e = ops[key]
        assert (e["saves_output"], e["saves_inputs"], e["saves_any"]) == (False, {}, False), key


def test_modules(ops: dict) -> None:
    linear = ops["torch.nn.Linear"]
    assert linear["kind"] == "module"
    assert not linear["saves_output"]
    assert linear["saves_inputs"]["0"] == ["weight"]  # the input is saved for weight's grad
    assert linear["saves_inputs"]["weight"] == [0]  # the weight is saved for the input's grad
    assert ops["torch.nn.functional.linear"]["saves_inputs"] == {"0": [1], "1": [0]}
    for key in ("torch.nn.Conv2d", "torch.nn.Conv1d"):
        assert ops[key]["saves_inputs"]["0"] == [] and ops[key]["saves_inputs"]["weight"] == [], key
    assert ops["torch.nn.Dropout"]["saves_internal"] and ops["torch.nn.Dropout"]["saves_inputs"] == {}
    assert ops["torch.nn.CrossEntropyLoss"]["saves_inputs"] == {"1": []}  # the target
    assert ops["torch.nn.MSELoss"]["saves_inputs"] == {"0": [], "1": []}
    for key in ("torch.nn.LSTM", "torch.nn.GRU", "torch.nn.RNN", "torch.nn.BatchNorm1d", "torch.nn.LayerNorm"):
        assert ops[key]["saves_any"], key


def test_reductions_with_indices(ops: dict) -> None:
    # x.max() saves x and the result; x.max(dim) saves only the returned indices.
    assert ops["torch.max"]["saves_output"] and ops["torch.max"]["saves_inputs"] == {"0": []}
    dim = ops["torch.max"]["overloads"]["dim"]
    assert dim["saved_outputs"] == [1] and dim["saves_inputs"] == {}
    assert ops["torch.sort"]["saved_outputs"] == [1]
    assert ops["torch.topk"]["saved_outputs"] == [1]


@pytest.mark.torch
def test_table_is_not_stale() -> None:
    """Re-derive the table with the installed torch; fails (with a diff) if the committed file is stale."""
    pytest.importorskip("torch")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]


def test_paramless_losses() -> None:
    """`torchdb.PARAMLESS_LOSSES` is every torch.nn loss module that builds without arguments and then has no
    parameters and no buffers, and each gains a buffer only from a tensor argument (GS510 relies on both)."""
    torch = pytest.importorskip("torch")
    import inspect

    from gradsight.engine import torchdb as db

    found = set()
    for name in dir(torch.nn):
        cls = getattr(torch.nn, name)
        if not (inspect.isclass(cls) and issubclass(cls, torch.nn.Module) and name.endswith("Loss")):
            continue
        try:
            module = cls()
        except TypeError:
            continue  # needs sizes (AdaptiveLogSoftmaxWithLoss): has parameters
        if not list(module.parameters()) and not list(module.buffers()):
            found.add(name)
            params = inspect.signature(cls).parameters
            for arg in [a for a in params if a in ("weight", "pos_weight")]:
                with_tensor = cls(**{arg: torch.ones(3)})
                assert list(with_tensor.buffers()), (name, arg)
    assert found == db.PARAMLESS_LOSSES


def test_distribution_only_methods() -> None:
    """`torchdb.DISTRIBUTION_ONLY` names no attribute of a tensor, each is a method of `torch.distributions`
    objects, and `SAMPLES_WITHOUT_GRAD` are the ones whose result has no graph even from parameters with one (the
    engine reads `dist.sample()` on a value it took for a tensor as a distribution's sample: fresh28-false/02)."""
    torch = pytest.importorskip("torch")

    from gradsight.engine import torchdb as db

    loc = torch.zeros(2, requires_grad=True) * 1
    normal = torch.distributions.Normal(loc, torch.ones(2))
    categorical = torch.distributions.Categorical(logits=torch.zeros(3, requires_grad=True) * 1)
    for name in db.DISTRIBUTION_ONLY:
        assert not hasattr(torch.Tensor, name), name
        assert hasattr(torch.distributions.Distribution, name), name
    assert set(db.SAMPLES_WITHOUT_GRAD) <= set(db.DISTRIBUTION_ONLY)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not normal.sample().requires_grad and not normal.sample_n(2).requires_grad
        assert not categorical.sample().requires_grad and not categorical.enumerate_support().requires_grad
    assert normal.rsample().requires_grad and normal.log_prob(torch.zeros(2)).requires_grad
