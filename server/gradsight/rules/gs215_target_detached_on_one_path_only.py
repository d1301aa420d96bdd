from __future__ import annotations

import ast
import re

from ..engine.query import FileEvent
from ..engine.report import Note
from ..engine.report import text as join
from ..findings import Severity
from ._syntax import imports_torch
from .base import Invalid, Rule, Valid, dotted_name

# Losses whose second argument (or `target=`) is the value the prediction is pulled towards.
_LOSS_FUNCTIONS = frozenset("torch.nn.functional." + n for n in (
    "kl_div", "mse_loss", "l1_loss", "smooth_l1_loss", "cross_entropy", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "huber_loss"))
_LOSS_MODULES = frozenset("torch.nn." + n for n in (
    "KLDivLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss",
    "HuberLoss"))
_LOSS_ATTRS = frozenset(n.rsplit(".", 1)[1] for n in _LOSS_FUNCTIONS | _LOSS_MODULES)
_NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                      "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode"})
_STOPS = frozenset({"no_grad", "inference_mode", "detach", "data"})
# A helper's parameter that receives the target.
_TARGET_PARAM = re.compile(r"targets?|y|labels?|label_\w*|labels_\w*")
# Conditions that choose between training and evaluation (a no_grad evaluation arm says nothing about what the
# training arm's target should be) or that switch the stop-gradient itself (an option, not an oversight).
_SKIP_TEST = re.compile(r"train|eval|valid|test|infer|predict|detach|stop|grad|freeze|frozen|fix", re.I)
# Tensor methods that pass a graph through: `logits[n:].chunk(2)` carries what `logits` carries.
_PASS = frozenset({"chunk", "split", "view", "reshape", "float", "half", "to", "contiguous", "squeeze", "unsqueeze",
                   "permute", "transpose", "flatten", "softmax", "log_softmax", "sigmoid", "tanh", "mean", "sum",
                   "type", "clone", "cuda", "narrow", "unbind", "tensor_split", "expand", "repeat", "t", "exp",
                   "log", "pow", "argmax", "max", "min", "norm", "div", "mul", "add", "sub", "float32"})
_STATIC = ("zeros", "ones", "empty", "full", "tensor", "randn", "rand", "randint", "arange", "eye", "linspace")


def _names(node: ast.AST) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


_CUTTING_METHODS = frozenset({"detach", "size", "dim", "numel", "item", "tolist"})
_CUTTING_ATTRS = frozenset({"data", "shape", "dtype", "device", "ndim"})


def _stops_grad(expr: ast.AST) -> bool:
    """`x.detach()`, `x.data`, `x.detach().clone()[:n]`: the outer chain of the value cuts the graph; so do what
    is no tensor at all, a shape, a size, a number (`x.shape[2:4]`, `x.size(0)`, `x.item()`)."""
    while True:
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            if expr.func.attr in _CUTTING_METHODS:
                return True
            expr = expr.func.value
        elif isinstance(expr, ast.Attribute):
            if expr.attr in _CUTTING_ATTRS:
                return True
            expr = expr.value
        elif isinstance(expr, ast.Subscript):
            expr = expr.value
        else:
            return False


def _mentions_stop(expr: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in ("detach", "data") for n in ast.walk(expr))


def _stores(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(node))


def _loss_shaped_calls(top) -> list:
    """A top-level statement's calls that may compute a loss, by spelling alone (`check` asks the rest): a call of
    a call (`nn.MSELoss()(pred, target)`), a loss function's name, or a name that says loss or criterion."""
    out = []
    for call in top.calls:
        f = call.func
        t = type(f)
        if t is ast.Call:
            out.append(call)
        elif t is ast.Attribute or t is ast.Name:
            spelled = f.attr if t is ast.Attribute else f.id
            low = spelled.lower()
            if spelled in _LOSS_ATTRS or "loss" in low or "crit" in low:
                out.append(call)
    return out


class _Assign:
    """One assignment of the name in an arm: the statement, its value, and whether it runs under no_grad."""

    __slots__ = ("stmt", "value", "no_grad")

    def __init__(self, stmt, value, no_grad):
        self.stmt, self.value, self.no_grad = stmt, value, no_grad

    @property
    def detached(self) -> bool:
        return self.no_grad or (self.value is not None and _stops_grad(self.value))


class TargetDetachedOnOnePathOnly(Rule):
    code = "GS215"
    name = "target-detached-on-one-path-only"
    severity = Severity.WARNING
    summary = ("A loss target computed under `no_grad` (or detached) on one branch keeps the network's graph on "
               "the other, so there the loss also trains through its target.")
    events = (FileEvent,)
    what_it_does = (
        "Flags the target argument of a loss (`F.kl_div`, `F.mse_loss`, `F.l1_loss`, `F.smooth_l1_loss`, "
        "`F.cross_entropy`, `F.binary_cross_entropy(_with_logits)`, `F.huber_loss`, their `nn.*Loss` modules, or a "
        "same-file loss helper's `target`/`y`/`label` parameter) when the target is read from a name that an "
        "`if` assigns on two paths: on one path only under `with torch.no_grad()` / `torch.inference_mode()` or "
        "as `.detach()` / `.data`, on the other from a network call that keeps its graph (a chunk of "
        "`self.model(inputs)` of a concatenated forward; names that path binds are followed, except bindings to a "
        "`.detach()` / `.data` value or made under no_grad, which carry no graph). The target expression itself must not detach, the "
        "loss must not run under no_grad and the name must not be re-detached in between. Conditions that "
        "choose training against evaluation, or that switch the stop-gradient itself (`if self.detach:`), are "
        "left alone: there the two paths are meant to differ.")
    why_bad = (
        "The branch that computes the target without a graph states the intent: the target is a constant the "
        "prediction is pulled towards (a pseudo-label, a teacher's or the weak view's distribution in UDA / "
        "FixMatch-style consistency losses). On the other branch the same value still carries the network's "
        "graph, so `backward()` also moves the network to make its target agree with the prediction: the "
        "gradient, and what the model learns, depend on a flag such as `use_cat` that should only change how "
        "the forward is batched. Nothing raises.")
    example = ("if use_cat:\n    logits_w, logits_s = model(torch.cat((x_w, x_s))).chunk(2)\nelse:\n"
               "    logits_s = model(x_s)\n    with torch.no_grad():\n        logits_w = model(x_w)\n"
               "loss = F.kl_div(F.log_softmax(logits_s, dim=-1), F.softmax(logits_w / T, dim=-1))")
    use_instead = ("loss = F.kl_div(F.log_softmax(logits_s, dim=-1), F.softmax(logits_w / T, dim=-1).detach())")
    fix_safety = ("This rule offers no automatic fix: detaching the target changes the gradients on the path that "
                  "kept the graph, which is the point but is a training change to make knowingly.")
    references = ("https://pytorch.org/docs/stable/generated/torch.no_grad.html",
                  "https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html",
                  "https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation")

    _uda_head = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"
                 "torch.manual_seed(0)\nmodel = nn.Linear(4, 3)\nx_w, x_s = torch.randn(2, 4), torch.randn(2, 4)\n\n\n"
                 "def unsup_loss(use_cat):\n    if use_cat:\n        logits = model(torch.cat((x_w, x_s)))\n"
                 "        logits_w, logits_s = logits.chunk(2)\n    else:\n        logits_s = model(x_s)\n"
                 "        with torch.no_grad():\n            logits_w = model(x_w)\n")
    # Both paths compute the same values; the gradients must agree too.
    _uda_tail = ("\n\ng_cat = torch.autograd.grad(unsup_loss(True), model.weight)[0]\n"
                 "g_sep = torch.autograd.grad(unsup_loss(False), model.weight)[0]\n")
    _teacher = ("import torch\nimport torch.nn as nn\n\n\nclass Trainer:\n    def __init__(self, model):\n"
                "        self.model = model\n        self.criterion = nn.MSELoss()\n\n"
                "    def consistency(self, x, shared_forward):\n")
    _teacher_tail = ("\n\ntorch.manual_seed(0)\nnet = nn.Linear(3, 3)\nx = torch.randn(4, 3)\ntr = Trainer(net)\n"
                     "g_shared = torch.autograd.grad(tr.consistency(x, True), net.weight)[0]\n"
                     "g_apart = torch.autograd.grad(tr.consistency(x, False), net.weight)[0]\n")
    valid = (
        # The fixed UDA step: the target detached where the loss reads it, whatever the branch.
        Valid(_uda_head + "    return F.kl_div(F.log_softmax(logits_s, dim=-1),\n"
              "                    F.softmax(logits_w / 0.4, dim=-1).detach(), reduction=\"batchmean\")" + _uda_tail
              + "assert torch.allclose(g_cat, g_sep)\n"),
        # Re-detached inside the branch that kept the graph.
        Valid(_uda_head.replace("logits.chunk(2)\n", "logits.chunk(2)\n        logits_w = logits_w.detach()\n")
              + "    return F.kl_div(F.log_softmax(logits_s, dim=-1),\n"
              "                    F.softmax(logits_w / 0.4, dim=-1), reduction=\"batchmean\")" + _uda_tail
              + "assert torch.allclose(g_cat, g_sep)\n"),
        # Re-detached after the branch.
        Valid(_uda_head + "    logits_w = logits_w.detach()\n    return F.kl_div(F.log_softmax(logits_s, dim=-1),\n"
              "                    F.softmax(logits_w / 0.4, dim=-1), reduction=\"batchmean\")" + _uda_tail
              + "assert torch.allclose(g_cat, g_sep)\n"),
        # The branch-dependent name is the prediction, not the target: its graph is what is trained.
        Valid(_uda_head.replace("logits_s = model(x_s)\n        with torch.no_grad():\n            logits_w = model(x_w)",
                                "with torch.no_grad():\n            logits_s = model(x_s)\n"
                                "        logits_w = model(x_w)")
              + "    return F.kl_div(F.log_softmax(logits_w, dim=-1),\n"
              "                    F.softmax(logits_s / 0.4, dim=-1).detach(), reduction=\"batchmean\")" + _uda_tail),
        # An evaluation branch under no_grad: the condition picks training against evaluation. In training both
        # views are meant to get gradients (a VICReg-style invariance term).
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\ntorch.manual_seed(0)\n"
              "model = nn.Linear(4, 3)\nx1, x2 = torch.randn(2, 4), torch.randn(2, 4)\n\n\n"
              "def invariance(training):\n    if training:\n        z2 = model(x2)\n    else:\n"
              "        with torch.no_grad():\n            z2 = model(x2)\n"
              "    return F.mse_loss(model(x1), z2)\n\n\ninvariance(True).backward()\n"),
        # The stop-gradient is an option of the method (SimSiam-style ablations): the flag says so.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\ntorch.manual_seed(0)\n"
              "model = nn.Linear(4, 4)\nx = torch.randn(2, 4)\n\n\ndef loss_fn(stop_gradient):\n"
              "    z = model(x + 0.1)\n    if stop_gradient:\n        z = z.detach()\n"
              "    return F.mse_loss(model(x), z)\n\n\nloss_fn(True).backward()\n"),
        # The loss under no_grad is a metric: nothing backward runs through it.
        Valid(_uda_head + "    with torch.no_grad():\n        return F.kl_div(F.log_softmax(logits_s, dim=-1),\n"
              "                        F.softmax(logits_w / 0.4, dim=-1), reduction=\"batchmean\")\n\n\n"
              "assert not unsup_loss(True).requires_grad\n"),
        # The mix path's target is made from names bound to `.detach()` results under no_grad, the cut path's is
        # detached directly: neither carries a graph (Britefury/cutmix-semisup-seg train_seg_semisup_mask_mt.py;
        # bench/fresh26-false/05).
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"
              "torch.manual_seed(0)\nstudent_net = nn.Conv2d(3, 4, 1)\nteacher_net = student_net\n\n\n"
              "def consistency(x0, x1, masks, mask_mix):\n    if mask_mix:\n"
              "        with torch.no_grad():\n            logits_u0_tea = teacher_net(x0).detach()\n"
              "            logits_u1_tea = teacher_net(x1).detach()\n"
              "        logits_cons_stu = student_net(x0 * (1 - masks) + x1 * masks)\n"
              "        logits_cons_tea = logits_u0_tea * (1 - masks) + logits_u1_tea * masks\n    else:\n"
              "        with torch.no_grad():\n            logits_cons_tea = teacher_net(x0).detach()\n"
              "        logits_cons_stu = student_net(x0 * masks)\n"
              "    loss = F.smooth_l1_loss(logits_cons_stu, logits_cons_tea, reduction=\"none\")\n"
              "    return loss.sum(dim=1).mean(), logits_cons_tea\n\n\n"
              "x0, x1 = torch.randn(2, 3, 6, 6), torch.randn(2, 3, 6, 6)\n"
              "masks = (torch.rand(2, 1, 6, 6) > 0.5).float()\nfor mix in (True, False):\n"
              "    loss, target = consistency(x0, x1, masks, mix)\n    assert not target.requires_grad\n"
              "    loss.backward()\n"),
        # The mix path's masks come from a method of a plain class's object, given the batch's mask parameters
        # (`next(...)` of a data iterator) and the images' shape: no network, no graph (the repository's own
        # train_seg_semisup_mask_mt.py:438; bench/fresh26-notes.md).
        Valid('import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\ntorch.manual_seed(0)\n\n\nclass BoxMaskGenerator(object):\n    def torch_masks_from_params(self, params, shape, device):\n        return (params.view(-1, 1, 1, 1) > 0.5).float().expand(-1, 1, *shape).to(device)\n\n\nmask_generator = BoxMaskGenerator()\nstudent_net = nn.Conv2d(3, 4, 1)\nteacher_net = student_net\ndata = {"image0": torch.randn(2, 3, 6, 6), "image1": torch.randn(2, 3, 6, 6), "mask_params": torch.rand(2)}\ntrain_iter = iter([data, data])\n\n\ndef consistency(mask_mix):\n    batch = next(train_iter)\n    x0, x1 = batch["image0"].to("cpu"), batch["image1"].to("cpu")\n    if mask_mix:\n        mask_params = batch["mask_params"].to("cpu")\n        masks = mask_generator.torch_masks_from_params(mask_params, x0.shape[2:4], "cpu")\n        with torch.no_grad():\n            logits_u0_tea = teacher_net(x0).detach()\n            logits_u1_tea = teacher_net(x1).detach()\n        logits_cons_stu = student_net(x0 * (1 - masks) + x1 * masks)\n        logits_cons_tea = logits_u0_tea * (1 - masks) + logits_u1_tea * masks\n    else:\n        with torch.no_grad():\n            logits_cons_tea = teacher_net(x0).detach()\n        logits_cons_stu = student_net(x0)\n    loss = F.smooth_l1_loss(logits_cons_stu, logits_cons_tea, reduction="none")\n    return loss.sum(dim=1).mean(), logits_cons_tea\n\n\nfor mix in (True, False):\n    loss, target = consistency(mix)\n    assert not target.requires_grad\n    loss.backward()\n'),
    )
    invalid = (
        # The look-alike: the mask generator is a module with a learnt scale, so the mixed target keeps its graph.
        Invalid('import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\ntorch.manual_seed(0)\n\n\nclass BoxMaskGenerator(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.scale = nn.Parameter(torch.ones(1))\n\n    def torch_masks_from_params(self, params, shape, device):\n        return torch.sigmoid(self.scale * params.view(-1, 1, 1, 1)).expand(-1, 1, *shape).to(device)\n\n\nmask_generator = BoxMaskGenerator()\nstudent_net = nn.Conv2d(3, 4, 1)\nteacher_net = student_net\ndata = {"image0": torch.randn(2, 3, 6, 6), "image1": torch.randn(2, 3, 6, 6), "mask_params": torch.rand(2)}\ntrain_iter = iter([data, data])\n\n\ndef consistency(mask_mix):\n    batch = next(train_iter)\n    x0, x1 = batch["image0"].to("cpu"), batch["image1"].to("cpu")\n    if mask_mix:\n        mask_params = batch["mask_params"].to("cpu")\n        masks = mask_generator.torch_masks_from_params(mask_params, x0.shape[2:4], "cpu")\n        with torch.no_grad():\n            logits_u0_tea = teacher_net(x0).detach()\n            logits_u1_tea = teacher_net(x1).detach()\n        logits_cons_stu = student_net(x0 * (1 - masks) + x1 * masks)\n        logits_cons_tea = logits_u0_tea * (1 - masks) + logits_u1_tea * masks\n    else:\n        with torch.no_grad():\n            logits_cons_tea = teacher_net(x0).detach()\n        logits_cons_stu = student_net(x0)\n    loss = F.smooth_l1_loss(logits_cons_stu, logits_cons_tea, reduction="none")\n    return loss.sum(dim=1).mean(), logits_cons_tea\n\n\nloss, target_mix = consistency(True)\nloss.backward()\n',
                line=39, runtime="silent: target_mix.requires_grad"),
        # The look-alike: one of the mixed teacher outputs is computed outside no_grad without `.detach()` (the
        # teacher is the student), so the mix path's target keeps the graph.
        Invalid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"
                "torch.manual_seed(0)\nstudent_net = nn.Conv2d(3, 4, 1)\nteacher_net = student_net\n\n\n"
                "def consistency(x0, x1, masks, mask_mix):\n    if mask_mix:\n"
                "        with torch.no_grad():\n            logits_u0_tea = teacher_net(x0).detach()\n"
                "        logits_u1_tea = teacher_net(x1)\n"
                "        logits_cons_stu = student_net(x0 * (1 - masks) + x1 * masks)\n"
                "        logits_cons_tea = logits_u0_tea * (1 - masks) + logits_u1_tea * masks\n    else:\n"
                "        with torch.no_grad():\n            logits_cons_tea = teacher_net(x0).detach()\n"
                "        logits_cons_stu = student_net(x0 * masks)\n"
                "    loss = F.smooth_l1_loss(logits_cons_stu, logits_cons_tea, reduction=\"none\")\n"
                "    return loss.sum(dim=1).mean(), logits_cons_tea\n\n\n"
                "x0, x1 = torch.randn(2, 3, 6, 6), torch.randn(2, 3, 6, 6)\n"
                "masks = (torch.rand(2, 1, 6, 6) > 0.5).float()\n"
                "loss, target_mix = consistency(x0, x1, masks, True)\nloss.backward()\n",
                line=21, runtime="silent: target_mix.requires_grad"),
        # USB's UDA step (microsoft/Semi-supervised-learning, "Fix uda detach bug"): with the concatenated forward
        # the weak view's logits keep the graph, and the KL target trains the model too.
        Invalid(_uda_head + "    return F.kl_div(F.log_softmax(logits_s, dim=-1),\n"
                "                    F.softmax(logits_w / 0.4, dim=-1), reduction=\"batchmean\")" + _uda_tail,
                line=19, runtime="silent: not torch.allclose(g_cat, g_sep)"),
        # The target computed under no_grad before the `if`, rebound from the shared forward inside it, and
        # handed to an `nn.MSELoss` module.
        Invalid(_teacher + "        with torch.no_grad():\n            target = self.model(x)\n"
                "        if shared_forward:\n            out = self.model(torch.cat((x, x + 0.1)))\n"
                "            target, pred = out.chunk(2)\n        else:\n            pred = self.model(x + 0.1)\n"
                "        return self.criterion(pred, target)" + _teacher_tail, line=18,
                runtime="silent: not torch.allclose(g_shared, g_apart)"),
        # A same-file loss helper; the separate path detaches explicitly.
        Invalid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
                "def consistency_loss(logits, targets):\n"
                "    return (-F.softmax(targets, dim=-1) * F.log_softmax(logits, dim=-1)).sum(-1).mean()\n\n\n"
                "torch.manual_seed(0)\nmodel = nn.Linear(4, 3)\nx_w, x_s = torch.randn(2, 4), torch.randn(2, 4)\n\n\n"
                "def unsup(use_cat):\n    if use_cat:\n"
                "        logits_w, logits_s = model(torch.cat((x_w, x_s))).chunk(2)\n"
                "    else:\n        logits_w = model(x_w).detach()\n        logits_s = model(x_s)\n"
                "    loss = consistency_loss(logits_s, logits_w)\n    return loss\n\n\n"
                "g_cat = torch.autograd.grad(unsup(True), model.weight)[0]\n"
                "g_sep = torch.autograd.grad(unsup(False), model.weight)[0]\n", line=21,
                runtime="silent: not torch.allclose(g_cat, g_sep)"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        attrs = q.attrs
        if not (attrs & _STOPS) or not imports_torch(q):
            return  # nothing cuts a graph, or no torch: one cheap test, since this runs on every keystroke
        helpers = modules = quiet = None
        for call in q.surveyed("GS215.loss-calls", _loss_shaped_calls):
            f = call.func
            target = None
            if isinstance(f, ast.Call):
                if q.call_name(f) in _LOSS_MODULES:  # `nn.MSELoss()(pred, target)`
                    target = _second(call)
            elif not isinstance(f, (ast.Name, ast.Attribute)):
                continue
            elif (f.attr if isinstance(f, ast.Attribute) else f.id) in _LOSS_ATTRS \
                    and q.call_name(call) in _LOSS_FUNCTIONS:
                target = _second(call)
            else:
                attr = (f.attr if isinstance(f, ast.Attribute) else f.id).lower()
                if "loss" not in attr and "crit" not in attr:
                    continue  # modules and helpers are looked up only for calls named like a loss
                if modules is None:
                    modules = _loss_modules(q)
                if dotted_name(f) in modules:
                    target = _second(call)
                else:
                    helpers = _helpers(q) if helpers is None else helpers
                    target = _helper_target(call, helpers)
            if target is None or _mentions_stop(target):
                continue
            quiet = _quiet_names(q) if quiet is None else quiet
            if _names(target) & quiet:
                self._check_target(q, report, call, target)

    def _check_target(self, q, report, call, target) -> None:
        stmt = q.statement(call)
        if stmt is None or _under_no_grad(q, stmt, None):
            return
        for name in sorted(_names(target)):
            found = _branch_before(q, stmt, name)
            if found is None:
                continue
            quiet, graph = found
            line, col = report.source.span(quiet.stmt)[:2]
            g_line, g_col = report.source.span(graph.stmt)[:2]
            report.add(self, target, join(
                f"`{name}` keeps the model's graph on one path, so there this loss also trains through its target. "
                "Detach the target here, as the path at line ", line, " does."),
                related=[Note(line, col, "computed without a graph on this path"),
                         Note(g_line, g_col, "keeps the model's graph on this path")])
            return


def _quiet_names(q) -> set:
    """Names the file binds under `with torch.no_grad()` or to a `.detach()` / `.data` value: only a target read
    from one of them can have a path without a graph (one pass, so files without such a target stop here)."""
    out = set()
    for n in q.nodes():
        t = type(n)
        if t is ast.Assign and _stops_grad(n.value):
            targets = n.targets
        elif (t is ast.With or t is ast.AsyncWith) and _is_no_grad_with(q, n):
            targets = n.body
        else:
            continue
        for t in targets:
            out |= {m.id for m in ast.walk(t) if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Store)}
    return out


def _second(call: ast.Call):
    for kw in call.keywords:
        if kw.arg == "target":
            return kw.value
    if len(call.args) >= 2 and not any(isinstance(a, ast.Starred) for a in call.args[:2]):
        return call.args[1]
    return None


def _loss_modules(q) -> set:
    """Spellings bound to an `nn.*Loss` module of the list: `self.criterion = nn.MSELoss()`."""
    out = set()
    for a in q.assigns:
        if isinstance(a.value, ast.Call) and q.call_name(a.value) in _LOSS_MODULES:
            out |= {dotted_name(t) for t in a.targets} - {None}
    return out


def _helpers(q) -> dict:
    """Same-file functions named like a loss with a target-like parameter: name -> (index among the positional
    parameters after `self`, parameter name)."""
    out = {}
    for n in q.nodes():
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) or "loss" not in n.name.lower():
            continue
        params = [a.arg for a in [*n.args.posonlyargs, *n.args.args]]
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        for i, p in enumerate(params):
            if _TARGET_PARAM.fullmatch(p):
                out.setdefault(n.name, (i, p))
                break
    return out


def _helper_target(call: ast.Call, helpers: dict):
    f = call.func
    if isinstance(f, ast.Name):
        hit = helpers.get(f.id)
    elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
        hit = helpers.get(f.attr)
    else:
        return None
    if hit is None:
        return None
    index, param = hit
    for kw in call.keywords:
        if kw.arg == param:
            return kw.value
    if index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
        return call.args[index]
    return None


def _is_no_grad_with(q, node) -> bool:
    return isinstance(node, (ast.With, ast.AsyncWith)) and any(
        isinstance(it.context_expr, ast.Call) and q.call_name(it.context_expr) in _NO_GRAD for it in node.items)


def _under_no_grad(q, node, stop) -> bool:
    """Is `node` inside a `with torch.no_grad()` (below `stop`, within its function)?"""
    p = q.parent(node)
    while p is not None and p is not stop and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                  ast.Lambda, ast.ClassDef)):
        if _is_no_grad_with(q, p):
            return True
        p = q.parent(p)
    return False


def _block_of(q, stmt):
    """The list of statements that holds `stmt`, and its parent."""
    parent = q.parent(stmt)
    if parent is None:
        return None, None
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and stmt in block:
            return block, parent
    for h in getattr(parent, "handlers", ()) or ():
        if stmt in h.body:
            return h.body, h
    return None, parent


def _preceding(q, stmt):
    """The statements run before `stmt` in its function, nearest first: earlier ones of its block, then those
    before the enclosing `with`/`if`/`try`, ... Loops are not gone around."""
    while True:
        block, parent = _block_of(q, stmt)
        if block is None:
            return
        for s in reversed(block[:block.index(stmt)]):
            yield s
        if parent is None or isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            return
        if isinstance(parent, ast.ExceptHandler):
            parent = q.parent(parent)
        stmt = parent


def _last_defs(q, stmts, name):
    """Walk back from the statements (nearest first) to what last bound `name`: ("if", node) for an `if` that
    assigns it, ("assign", [_Assign]) for a plain statement, None when unknown or not found."""
    for s in stmts:
        if not _stores(s, name):
            continue
        if isinstance(s, ast.If):
            return "if", s
        if isinstance(s, (ast.With, ast.AsyncWith)) and not _is_no_grad_with(q, s):
            return _last_defs(q, reversed(s.body), name)
        assigns = _arm_assigns(q, [s], name, s)
        return ("assign", assigns) if assigns else None
    return None


def _arm_assigns(q, stmts, name, stop) -> list:
    """Every statement of `stmts` (nested functions aside) that binds `name`, with its value and grad mode."""
    out = []
    todo = list(stmts)
    while todo:
        s = todo.pop(0)
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(s, ast.Assign) and any(_stores(t, name) for t in s.targets):
            out.append(_Assign(s, s.value, _under_no_grad(q, s, q.parent(stop))))
        elif isinstance(s, (ast.AugAssign, ast.AnnAssign)) and _stores(s.target, name):
            out.append(_Assign(s, s.value, _under_no_grad(q, s, q.parent(stop))))
        elif isinstance(s, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.If, ast.While, ast.Try)):
            if isinstance(s, (ast.For, ast.AsyncFor)) and _stores(s.target, name):
                out.append(_Assign(s, None, _under_no_grad(q, s, q.parent(stop))))
            if isinstance(s, (ast.With, ast.AsyncWith)) and any(
                    it.optional_vars is not None and _stores(it.optional_vars, name) for it in s.items):
                out.append(_Assign(s, None, _under_no_grad(q, s, q.parent(stop))))
            for field in ("body", "orelse", "finalbody"):
                todo.extend(getattr(s, field, None) or [])
            for h in getattr(s, "handlers", ()) or ():
                todo.extend(h.body)
        elif _stores(s, name):
            out.append(_Assign(s, None, _under_no_grad(q, s, q.parent(stop))))
    return out


def _reaching(q, stmts, name, stop) -> list:
    """The bindings of `name` in `stmts` that can reach their end: the last statement that binds it, the last
    binding in a `with` body, every binding of an `if` (and the ones before it when a branch may not bind it),
    of a loop or a `try` (and the ones before)."""
    for i in range(len(stmts) - 1, -1, -1):
        s = stmts[i]
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not _stores(s, name):
            continue
        if isinstance(s, (ast.With, ast.AsyncWith)) and not any(
                it.optional_vars is not None and _stores(it.optional_vars, name) for it in s.items):
            return _reaching(q, s.body, name, stop)
        if isinstance(s, ast.If):
            got = _reaching(q, s.body, name, stop) + _reaching(q, s.orelse, name, stop)
            if not (any(_stores(x, name) for x in s.body) and any(_stores(x, name) for x in s.orelse)):
                got += _reaching(q, stmts[:i], name, stop)
            return got
        if isinstance(s, (ast.For, ast.AsyncFor, ast.While, ast.Try)):
            return _arm_assigns(q, [s], name, stop) + _reaching(q, stmts[:i], name, stop)
        return _arm_assigns(q, [s], name, stop)
    return []


def _graph_nodes(expr):
    """The nodes of `expr` whose value can reach it with a graph: a `.detach()` / `.data` chain (`net(x).detach()`)
    and what it is made from are left out."""
    todo = [expr]
    while todo:
        n = todo.pop()
        if _stops_grad(n):
            continue
        yield n
        todo.extend(ast.iter_child_nodes(n))


def _network_calls(q, expr, bound, depth=3) -> bool:
    """Does `expr` take its value from a call that looks like a network (`self.model(x)`, `net(x)`): not a tensor
    method, not a torch / numpy function, not cut by `.detach()`? Names bound earlier in the same path are followed
    (`logits[n:].chunk(2)` with `logits = self.model(inputs)`), through their bindings that may carry a graph."""
    if expr is None:
        return False
    for n in _graph_nodes(expr):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Attribute) and (f.attr in _PASS or f.attr in _STATIC or f.attr == "detach"
                                                 or f.attr.startswith("new_") or f.attr.endswith("_like")):
                continue
            spelled = dotted_name(f)
            if spelled is None or spelled in _BUILTINS or spelled.split(".")[0] in _LIBRARY_ALIASES:
                continue
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and q.plain_object(f.value):
                continue  # a method of a plain class's object (`mask_generator.torch_masks_from_params(...)`)
            qual = q.qualname(f) or ""
            if qual.split(".")[0] in _LIBRARIES:
                continue
            return True
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and depth > 0:
            if any(_network_calls(q, v, bound, depth - 1) for v in bound.get(n.id, ())):
                return True
    return False


_LIBRARIES = frozenset({"torch", "numpy", "math", "random", "scipy", "einops", "builtins"})
_LIBRARY_ALIASES = frozenset({"torch", "F", "nn", "np", "numpy", "math", "random"})
_BUILTINS = frozenset({"len", "int", "float", "range", "list", "tuple", "dict", "min", "max", "sum", "abs", "zip",
                       "enumerate", "isinstance", "getattr", "print", "str", "bool", "round", "sorted", "super",
                       "type", "map", "any", "all", "next", "iter"})


def _bound_values(q, stmts) -> dict:
    """name -> values bound to it by the plain assignments of an arm (nested blocks included) that may carry a graph:
    not a `.detach()` / `.data` value, and not one computed under `with torch.no_grad()` (`a = net(x)` there has no
    graph; a bare name, `a = b`, is only another reference to `b`'s tensor and is kept)."""
    out: dict = {}
    todo = [(s, False) for s in stmts]
    while todo:
        n, off = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, ast.Assign) and not _stops_grad(n.value) and not (off and not isinstance(n.value, ast.Name)):
            for t in n.targets:
                for m in ast.walk(t):
                    if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Store):
                        out.setdefault(m.id, []).append(n.value)
        inner = off or _is_no_grad_with(q, n)
        todo.extend((c, inner) for c in ast.iter_child_nodes(n))
    return out


def _branch_before(q, stmt, name):
    """The `_Assign`s of the path that computes `name` without a graph and of the one that keeps it, when the last
    binding of `name` before `stmt` is an `if` whose paths disagree: one without a graph only, the other from a
    network call with one."""
    found = _last_defs(q, _preceding(q, stmt), name)
    if found is None or found[0] != "if":
        return None
    node = found[1]
    if _SKIP_TEST.search(ast.unparse(node.test)) or _under_no_grad(q, node, None):
        return None
    body = _reaching(q, node.body, name, node)
    if any(_stores(s, name) for s in node.orelse):
        other = _reaching(q, node.orelse, name, node)
        other_stmts = node.orelse
    else:
        before = _last_defs(q, _preceding(q, node), name)
        if before is None or before[0] != "assign":
            return None
        other = before[1]
        other_stmts = [a.stmt for a in other]
        # `x = x.detach()` under a flag is an option of the method, whatever the flag is called.
        if any(a.value is not None and _stops_grad(a.value) and name in _names(a.value) for a in body):
            return None
    for quiet, loud, loud_stmts, quiet_stmts in ((body, other, other_stmts, node.body),
                                                 (other, body, node.body, other_stmts)):
        if not quiet or not loud or not all(a.detached for a in quiet):
            continue
        bound = _bound_values(q, loud_stmts)
        graph = next((a for a in loud if not a.detached and _network_calls(q, a.value, bound)), None)
        if graph is not None:
            return quiet[0], graph
    return None
