"""Tensors of unknown origin: evidence from use that a value requires grad, and in-place ops that save their result.

The GS101 shape's runtime behaviour is checked through GS101's own examples (test_rules_torch.py); the in-place
programs below were run under torch 2.13 (pow_ by a number: backward runs; by a tensor, and exp_: it raises)."""

from gradsight.analysis import analyze_source
from gradsight.findings import Severity

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"


def _found(code: str, rule: str):
    return [(f.line, f.severity) for f in analyze_source(code, "example.py").findings if f.code == rule]


def test_inference_target_of_a_loss_is_evidence_for_the_prediction():
    code = HEAD + ("def kd(loss, student_output, x, teacher, alpha):\n"
                   "    prob_s = F.log_softmax(student_output, dim=-1)\n"
                   "    with torch.inference_mode():\n"
                   "        prob_t = F.softmax(teacher(x), dim=-1)\n"
                   "    return loss + alpha * F.kl_div(prob_s, prob_t, reduction='batchmean')\n")
    assert _found(code, "GS101") == [(8, Severity.WARNING)]


def test_inference_target_through_a_loss_module():
    code = HEAD + ("class Distill(nn.Module):\n"
                   "    def __init__(self, teacher):\n"
                   "        super().__init__()\n"
                   "        self.teacher = teacher\n"
                   "        self.crit = nn.MSELoss()\n\n"
                   "    def forward(self, pred, x):\n"
                   "        with torch.inference_mode():\n"
                   "            target = F.softmax(self.teacher(x), dim=-1)\n"
                   "        return self.crit(pred, target)\n")
    assert _found(code, "GS101") == [(13, Severity.WARNING)]


def test_no_evidence_without_the_functions_own_bracket():
    # The target comes from the caller (a parameter): whether it is an inference tensor is not known here.
    code = HEAD + ("def kd(student_output, prob_t):\n"
                   "    return F.kl_div(F.log_softmax(student_output, dim=-1), prob_t, reduction='batchmean')\n")
    assert _found(code, "GS101") == []


def test_inference_prediction_evaluated_is_quiet():
    # The prediction is the inference tensor and the target unknown (labels): an evaluation, nothing is saved.
    code = HEAD + ("def evaluate(model, x, y):\n"
                   "    with torch.inference_mode():\n"
                   "        out = model(x)\n"
                   "    return F.cross_entropy(out, y).item()\n")
    assert _found(code, "GS101") == []


def test_prediction_known_without_grad_is_quiet():
    code = HEAD + ("def kd(x, teacher):\n"
                   "    prob_s = F.log_softmax(torch.randn(2, 3), dim=-1)\n"
                   "    with torch.inference_mode():\n"
                   "        prob_t = F.softmax(teacher(x), dim=-1)\n"
                   "    return F.kl_div(prob_s, prob_t, reduction='batchmean')\n")
    assert _found(code, "GS101") == []


def test_function_called_without_grad_is_quiet():
    # Called only under no_grad: the unit starts with grad mode unknown, so the loss may save nothing.
    code = HEAD + ("def kd(student_output, x, teacher):\n"
                   "    with torch.inference_mode():\n"
                   "        prob_t = F.softmax(teacher(x), dim=-1)\n"
                   "    return F.kl_div(F.log_softmax(student_output, dim=-1), prob_t, reduction='batchmean')\n\n\n"
                   "def report(student_output, x, teacher):\n"
                   "    with torch.no_grad():\n"
                   "        return kd(student_output, x, teacher).item()\n")
    assert _found(code, "GS101") == []


def test_inplace_op_saving_its_result_then_written():
    code = ("import torch\nv = torch.rand(3, requires_grad=True)\n"
            "a = v * 1\na.pow_(2)\na.add_(1)\n"                           # pow_ by a number saves no result: runs
            "b = v * 1\nb.pow_(torch.full((3,), 2.0))\nb.add_(1)\n"        # by a tensor it does: backward raises
            "c = v * 1\nc.exp_()\nc.mul_(2)\n"                             # exp_ saves its result: raises
            "(a + b + c).sum().backward()\n")
    assert sorted(line for line, _ in _found(code, "GS301")) == [8, 11]


def test_inplace_op_saving_its_result_under_no_grad_is_quiet():
    code = ("import torch\nv = torch.rand(3, requires_grad=True)\n"
            "with torch.no_grad():\n    c = v * 1\n    c.exp_()\n    c.mul_(2)\n")
    assert _found(code, "GS301") == []


_TWINS = ("def make(eps):\n"
          "    def update(gs, ns, inplace=True):\n"
          "        if inplace:\n\n"
          "            def f(g, n):\n"
          "                return g.div_(n.sqrt().add_(eps))\n\n"
          "        else:\n\n"
          "            def f(g, n):\n"
          "                return g.div(n.sqrt().add_(eps))\n\n"
          "        return list(map(f, gs, ns))\n\n"
          "    return update\n")


def test_out_of_place_twin_is_evidence_for_its_tensors():
    # torchopt's differentiable update: the out-of-place `f` exists for autograd; its `sqrt` saves the output that
    # `add_` then overwrites. The in-place twin (line 11) is not claimed: it never runs under autograd.
    assert _found(HEAD + _TWINS, "GS301") == [(16, Severity.WARNING)]


def test_twins_that_differ_otherwise_are_no_evidence():
    # The branches differ by more than in-place names (`sqrt` against `rsqrt`): not twins, nothing is claimed.
    code = HEAD + _TWINS.replace("g.div(n.sqrt().add_(eps))", "g.mul(n.rsqrt().add_(eps))")
    assert _found(code, "GS301") == []


def test_nested_def_without_a_twin_is_quiet():
    code = HEAD + ("def make(eps):\n"
                   "    def update(gs, ns):\n"
                   "        def f(g, n):\n"
                   "            return g.div(n.sqrt().add_(eps))\n\n"
                   "        return list(map(f, gs, ns))\n\n"
                   "    return update\n")
    assert _found(code, "GS301") == []


# GS350: an in-place write into a detached alias of the caller's tensor (the detach is the evidence that the caller's
# tensor may carry a graph). The rule's own examples run under torch (test_rules_torch.py).

def test_detached_argument_written_in_place_through_a_view():
    code = HEAD + ("def masked_mean(predictions, mask):\n"
                   "    p = predictions.detach()\n"
                   "    p = p.view(-1)\n"
                   "    p.mul_(mask.view(-1))\n"
                   "    p[p < 0] = 0\n"
                   "    return p.sum() / mask.sum()\n")
    assert _found(code, "GS350") == [(9, Severity.WARNING), (10, Severity.WARNING)]


def test_detached_copy_or_rebound_alias_is_quiet():
    code = HEAD + ("def a(x, m):\n"
                   "    y = x.detach().clone()\n"
                   "    y *= m\n"
                   "    return y\n\n\n"
                   "def b(x, m):\n"
                   "    y = x.detach()\n"
                   "    y = y * m\n"
                   "    y *= 2\n"
                   "    return y\n\n\n"
                   "def c(x, flag):\n"
                   "    y = x.detach()\n"
                   "    if flag:\n"
                   "        y = y.sigmoid()\n"
                   "    y += 1\n"
                   "    return y\n\n\n"
                   "def fill_(x, v):\n"
                   "    y = x.detach()\n"
                   "    y.fill_(v)\n\n\n"
                   "def load_into(out, src):\n"
                   "    o = out.detach()\n"
                   "    o.copy_(src)\n"
                   "    o[:] = src\n")
    assert _found(code, "GS350") == []


def test_helper_in_a_base_class_of_another_file(tmp_path):
    from gradsight.engine.workspace import Workspace
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "metric.py").write_text(
        "import torch\n\n\nclass Metric:\n    @staticmethod\n    def unwrap(*tensors):\n"
        "        return (x.detach().cpu() if isinstance(x, torch.Tensor) else x for x in tensors)\n")
    sub = ("import torch\nfrom pkg.metric import Metric\n\n\nclass Cov(Metric):\n"
           "    def __call__(self, predictions, labels, mask=None):\n"
           "        predictions, labels, mask = self.unwrap(predictions, labels, mask)\n"
           "        predictions = predictions.view(-1)\n"
           "        if mask is not None:\n"
           "            predictions *= mask.view(-1)\n"
           "        return (predictions * labels.view(-1)).sum()\n")
    (tmp_path / "pkg" / "cov.py").write_text(sub)
    found = analyze_source(sub, str(tmp_path / "pkg" / "cov.py"), workspace=Workspace(tmp_path)).findings
    assert [(f.line, f.code) for f in found if f.code == "GS350"] == [(10, "GS350")]
    # Without the workspace the helper is not seen: nothing is claimed.
    assert [f for f in analyze_source(sub, "cov.py").findings if f.code == "GS350"] == []


# `Variable(pred, requires_grad=True)` of a prediction gradsight cannot see (sd_dreambooth_extension's U-Net from
# diffusers). GS203's INVALID example runs the same shape under torch: the model's weights get no gradient.
_REWRAP = ("from torch.autograd import Variable\n\n\n"
           "def train_step(unet, batch, optimizer, accelerator):\n"
           "    pred = unet(batch['x'], batch['t']).sample\n"
           "    chunks = torch.split(pred, 1, dim=0)\n"
           "    model_pred = torch.stack(chunks, dim=0)\n"
           "    model_pred = Variable(model_pred, requires_grad=True)\n"
           "    instance_loss = F.mse_loss(model_pred.float(), batch['y'].float(), reduction='mean')\n"
           "    loss = (instance_loss + 0.0) / 2\n"
           "    accelerator.backward(loss)\n"
           "    optimizer.step()\n")


def test_rewrapped_unseen_prediction_of_a_backwarded_loss():
    assert _found(HEAD + _REWRAP, "GS203") == [(13, Severity.WARNING)]


def test_rewrapped_unseen_value_whose_grad_is_read_is_quiet():
    code = HEAD + _REWRAP + "    return model_pred.grad\n"
    assert _found(code, "GS203") == []


def test_rewrapped_unseen_value_as_a_loss_target_or_without_backward_is_quiet():
    target = HEAD + _REWRAP.replace("F.mse_loss(model_pred.float(), batch['y'].float()",
                                    "F.mse_loss(batch['y'].float(), model_pred.float()")
    assert _found(target, "GS203") == []
    no_backward = HEAD + _REWRAP.replace("    accelerator.backward(loss)\n", "    print(loss.item())\n")
    assert _found(no_backward, "GS203") == []
    without_flag = HEAD + _REWRAP.replace("Variable(model_pred, requires_grad=True)", "Variable(model_pred)")
    assert _found(without_flag, "GS203") == []


# A training loop in a nested function under a decorator gradsight cannot see (a retry-on-out-of-memory wrapper
# such as accelerate's `find_executable_batch_size`), run by the enclosing function through the decorator: its own
# backward needs grad mode, so it is analysed in grad mode (the model's output requires grad: `.numpy()` raises
# "Can't call numpy() on Tensor that requires grad", checked under torch 2.13 with an identity decorator).
_DECORATED = ("from helpers import find_executable_batch_size\n\n\n"
              "def main(loader):\n"
              "    @find_executable_batch_size(starting_batch_size=8)\n"
              "    def inner_loop(batch_size):\n"
              "        model = nn.Linear(3, 3)\n"
              "        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
              "        for x, y in loader:\n"
              "            out = model(x)\n"
              "            print(out.numpy())\n"
              "            loss = F.mse_loss(out, y)\n"
              "            loss.backward()\n"
              "            optimizer.step()\n"
              "            optimizer.zero_grad()\n\n"
              "    return inner_loop()\n")


def test_decorated_training_closure_runs_in_grad_mode():
    assert _found(HEAD + _DECORATED, "GS201") == [(16, Severity.ERROR)]


def test_decorated_closure_without_backward_stays_unanalysed():
    code = HEAD + _DECORATED.replace("            loss.backward()\n", "")
    assert _found(code, "GS201") == []


def test_decorated_training_closure_raises_under_torch():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def find_executable_batch_size(starting_batch_size):
        return lambda fn: (lambda: fn(starting_batch_size))

    @find_executable_batch_size(starting_batch_size=8)
    def inner_loop(batch_size):
        model = nn.Linear(3, 3)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in [(torch.randn(2, 3), torch.randn(2, 3))]:
            out = model(x)
            out.numpy()
            F.mse_loss(out, y).backward()
            optimizer.step()

    try:
        inner_loop()
    except RuntimeError as e:
        assert "requires grad" in str(e)
    else:
        raise AssertionError("numpy() on the model output did not raise")
