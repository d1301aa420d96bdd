"""`torch.autograd.Variable(t)` under the pinned torch, which `interp_calls.call_qualified` models: a new leaf that
shares `t`'s memory and has no history, `requires_grad` as given (default False)."""

import pytest

torch = pytest.importorskip("torch")
from torch.autograd import Variable  # noqa: E402

from gradsight.analysis import analyze_source  # noqa: E402


def test_torch_variable_of_a_graph_tensor_is_a_new_leaf():
    w = torch.randn(3, requires_grad=True)
    y = w * 2
    v = Variable(y)
    assert not v.requires_grad and v.grad_fn is None and v is not y
    v2 = Variable(y, requires_grad=True)
    assert v2.requires_grad and v2.is_leaf and v2.grad_fn is None
    assert v2.data_ptr() == y.data_ptr()  # same memory
    assert not Variable(w).requires_grad  # even a leaf's flag is not carried over


def test_analysis_agrees():
    code = ("import torch\nfrom torch.autograd import Variable\nw = torch.randn(3, requires_grad=True)\n"
            "v = Variable(w * 2)\nprint(v.numpy())\n")
    analysis = analyze_source(code, "v.py")
    assert ("GS203", 4) in [(f.code, f.line) for f in analysis.findings]
    assert not [f for f in analysis.findings if f.code == "GS201"]  # `v` has no grad: numpy() works
    facts = {(f.line, f.name): f for f in analysis.facts}
    assert "no gradient" in facts[(5, "v")].summary
