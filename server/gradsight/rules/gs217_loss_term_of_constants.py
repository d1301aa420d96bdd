from __future__ import annotations

import ast
from typing import Optional

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid

_VARIABLE = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})


def _no_grad_variable(value: ast.AST, q) -> bool:
    """`Variable(t, requires_grad=False)`: the author marks the value as a constant (since torch 0.4 it is also
    detached from whatever `t` was computed from)."""
    if not (isinstance(value, ast.Call) and q.call_name(value) in _VARIABLE and value.args):
        return False
    flag = next((k.value for k in value.keywords if k.arg == "requires_grad"),
                value.args[1] if len(value.args) > 1 else None)
    return isinstance(flag, ast.Constant) and flag.value is False


def _loss_callee(call: ast.Call, q, loss_attrs: set) -> bool:
    """A loss: `self.bce_loss(...)` bound to an `nn.*Loss` module, an `nn.*Loss(...)(...)`, or a loss function of
    `torch.nn.functional` (`F.mse_loss`, `F.binary_cross_entropy`, `F.cross_entropy`, ...)."""
    f = call.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" and f.attr in loss_attrs:
        return True
    name = q.call_name(call) or ""
    if name.startswith("torch.nn.functional."):
        last = name.rsplit(".", 1)[-1]
        return last.endswith("_loss") or last in ("cross_entropy", "binary_cross_entropy",
                                                  "binary_cross_entropy_with_logits", "kl_div", "nll_loss")
    return False


def _names(expr: ast.AST) -> set:
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


class LossTermOfConstants(Rule):
    code = "GS217"
    name = "loss-term-of-constants"
    severity = Severity.WARNING
    summary = ("A loss term whose prediction and target were both made with `Variable(..., requires_grad=False)` "
               "is a constant: it trains nothing.")
    events = (FileEvent,)
    what_it_does = ("Flags a loss call (an `nn.*Loss` module stored on `self`, or a loss function of "
                    "`torch.nn.functional`) whose two arguments read only names the same function bound to "
                    "`Variable(..., requires_grad=False)`, when another loss call of that function takes a "
                    "prediction that is not one of them: one term of a multi-part loss computed on two constants, "
                    "typically a target or mask passed where the prediction belongs.")
    why_bad = ("Nothing raises: the term adds a number to the loss but no gradient, so the output it was meant to "
               "train (an objectness score, a confidence) is never trained by it (PyTorch-YOLOv3's "
               "`self.bce_loss(conf_mask[...], tconf[...])` instead of `conf[...]`). Since torch 0.4, "
               "`Variable(t, requires_grad=False)` is also detached from `t`'s graph.")
    example = ("tconf = Variable(tconf, requires_grad=False)\nmask = Variable(mask, requires_grad=False)\n"
               "loss_x = self.mse(x[mask == 1], tx[mask == 1])\n"
               "loss_conf = self.bce(mask[mask == 1], tconf[mask == 1])   # the mask, not the prediction")
    use_instead = "loss_conf = self.bce(conf[mask == 1], tconf[mask == 1])"
    fix_safety = "There is no automatic fix: which prediction the term needs is the author's choice."
    references = ("https://pytorch.org/docs/stable/autograd.html#variable-deprecated",)
    _head = ("import torch\nimport torch.nn as nn\nfrom torch.autograd import Variable\n\n\n"
             "class Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.mse_loss = nn.MSELoss()\n        self.bce_loss = nn.BCELoss()\n\n"
             "    def forward(self, x, conf, tx, tconf, conf_mask):\n"
             "        tx = Variable(tx, requires_grad=False)\n        tconf = Variable(tconf, requires_grad=False)\n"
             "        conf_mask = Variable(conf_mask, requires_grad=False)\n"
             "        loss_x = self.mse_loss(x[conf_mask == 1], tx[conf_mask == 1])\n")
    _tail = ("        return loss_x + loss_conf\n\n\nx = torch.randn(6, requires_grad=True)\n"
             "conf = torch.rand(6, requires_grad=True)\nmask = torch.tensor([1., 1., 0., 1., 0., 1.])\n"
             "loss = Head()(x, conf, torch.zeros(6), torch.ones(6), mask)\nloss.backward()\n")
    valid = (
        # The fix: the prediction, with the constant target.
        Valid(_head + "        loss_conf = self.bce_loss(conf[conf_mask == 1], tconf[conf_mask == 1])\n" + _tail
              + "assert conf.grad is not None\n"),
        # A single loss on constants (a check of the targets, not a term of a model's loss).
        Valid("import torch\nimport torch.nn.functional as F\nfrom torch.autograd import Variable\n\n\n"
              "def target_spread(a, b):\n    a = Variable(a, requires_grad=False)\n"
              "    b = Variable(b, requires_grad=False)\n    return F.mse_loss(a, b)\n"),
    )
    invalid = (
        Invalid(_head + "        loss_conf = self.bce_loss(conf_mask[conf_mask == 1], tconf[conf_mask == 1])\n"
                + _tail, line=17, runtime="silent: conf.grad is None and x.grad is not None"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "Variable" not in q.attrs and not any(v.endswith(".Variable") for v in q.imported):
            return  # the common case, checked first (this rule runs on every keystroke)
        for fn in q.functions:
            constants: dict = {}
            for n in ast.walk(fn):
                if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                        and _no_grad_variable(n.value, q) and q.enclosing_function(n) is fn:
                    constants.setdefault(n.targets[0].id, n)
            if len(constants) < 2:
                continue
            cls = q.enclosing(fn, (ast.ClassDef,))
            loss_attrs = self._loss_attrs(cls, q) if cls is not None else set()
            calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and len(n.args) >= 2
                     and q.enclosing_function(n) is fn and _loss_callee(n, q, loss_attrs)]
            const_calls, other = [], False
            for c in calls:
                pred, target = _names(c.args[0]), _names(c.args[1])
                if pred and target and pred <= constants.keys() and target <= constants.keys():
                    const_calls.append(c)
                elif pred and not pred <= constants.keys():
                    other = True
            if not other:
                continue
            for c in const_calls:
                stmt = q.statement(c)
                used = sorted(_names(c.args[0]) | _names(c.args[1]), key=lambda k: constants[k].lineno)
                report.add(self, stmt if stmt is not None else c,
                           "This loss term compares two `requires_grad=False` constants: it adds a number and "
                           f"trains nothing. Pass the prediction where `{ast.unparse(c.args[0])}` stands.",
                           related=[Note(constants[k].lineno, constants[k].col_offset + 1,
                                         f"`{k}` is made a constant here") for k in used[:3]])

    @staticmethod
    def _loss_attrs(cls: ast.ClassDef, q) -> set:
        """Attributes the class binds to a `torch.nn` loss module (`self.bce_loss = nn.BCELoss()`)."""
        out = set()
        for n in ast.walk(cls):
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
                name = q.call_name(n.value) or ""
                if name.startswith("torch.nn.") and name.rsplit(".", 1)[-1].endswith("Loss"):
                    out |= {t.attr for t in n.targets if isinstance(t, ast.Attribute)
                            and isinstance(t.value, ast.Name) and t.value.id == "self"}
        return out
