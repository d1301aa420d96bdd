from __future__ import annotations

import ast
from typing import Optional

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid

_GRAD_OFF = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                       "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode"})


def _grad_off(node: ast.AST, q) -> bool:
    """`torch.no_grad()` / `torch.inference_mode()` (called or not), as a decorator or a `with` item."""
    target = node.func if isinstance(node, ast.Call) else node
    return q.qualname(target) in _GRAD_OFF


def _loss_name(name: str) -> bool:
    low = name.lower()
    return low.endswith("loss") or low.endswith("criterion")


def _method(cls: ast.ClassDef, name: str) -> Optional[ast.FunctionDef]:
    return next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == name), None)


def _params(fn: ast.FunctionDef) -> list:
    return [a.arg for a in fn.args.posonlyargs + fn.args.args]


def _reads_plainly(expr: ast.AST, name: str) -> bool:
    """Whether `expr` reads `name` with its graph: `y_hat`, `y_hat.squeeze(1)`, not `y_hat.detach()`."""
    if any(isinstance(n, ast.Attribute) and n.attr in ("detach", "data") for n in ast.walk(expr)):
        return False
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(expr))


def _returned(fn: ast.FunctionDef, call: ast.Call) -> bool:
    """Whether what `call` gives reaches a `return` of `fn`: inside the returned expression, or through names
    assigned from it (`y_hat_M = self.stft(y_hat)`, `loss = F.l1_loss(y_M, y_hat_M)`, `return loss`)."""
    assigns = [n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
               and n.value is not None]
    names: set = set()
    for stmt in assigns:
        if any(n is call for n in ast.walk(stmt.value)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names |= {e.id for t in targets for e in ast.walk(t) if isinstance(e, ast.Name)}
    for _ in range(3):  # a few rounds: terms summed into a total, then the total returned
        for stmt in assigns:
            if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(stmt.value)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                names |= {e.id for t in targets for e in ast.walk(t) if isinstance(e, ast.Name)}
    for ret in (n for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None):
        if any(n is call or isinstance(n, ast.Name) and n.id in names for n in ast.walk(ret.value)):
            return True
    return False


class NoGradModuleInLoss(Rule):
    code = "GS107"
    name = "no-grad-module-in-loss"
    severity = Severity.WARNING
    summary = ("A module whose `forward`/`__call__` runs under `@torch.no_grad()` is applied to a loss's prediction: "
               "the loss gets no gradient from it.")
    events = (FileEvent,)
    what_it_does = ("Flags `@torch.no_grad()` (or `@torch.inference_mode()`) on the `forward` or `__call__` of an "
                    "`nn.Module` class when, in the same file, the `forward` of a loss module (a class named "
                    "`...Loss` or `...Criterion`) applies an instance of it to its first argument, the prediction, "
                    "and what it gives reaches the loss it returns (a spectrogram, a feature extractor computed on "
                    "`y_hat`). Applied only to the target, or to a detached prediction, it is not flagged: a target "
                    "needs no gradient.")
    why_bad = ("Nothing raises where the loss is one term among others: the term computed through the no-grad "
               "module has no graph, so the model gets no gradient from it and the term only adds a constant "
               "(coqui-ai/TTS's `TorchSTFT.__call__` under `@torch.no_grad()` silently cut its vocoder's STFT "
               "losses). Alone, `loss.backward()` raises that the tensor does not require grad.")
    example = ("class STFT(nn.Module):\n    @torch.no_grad()\n    def __call__(self, x):\n"
               "        return torch.stft(x, 64, return_complex=True).abs()\n\n\nclass STFTLoss(nn.Module):\n"
               "    def __init__(self):\n        super().__init__()\n        self.stft = STFT()\n\n"
               "    def forward(self, y_hat, y):\n        return F.l1_loss(self.stft(y_hat), self.stft(y))")
    use_instead = ("class STFT(nn.Module):\n"
                   "    def __call__(self, x):   # no decorator: the prediction keeps its graph\n"
                   "        return torch.stft(x, 64, return_complex=True).abs()")
    fix_safety = "There is no automatic fix: remove the decorator, or detach only where a target is computed."
    references = ("https://pytorch.org/docs/stable/generated/torch.no_grad.html",)
    valid = (
        # The fix: no decorator.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass STFT(nn.Module):\n"
              "    def __call__(self, x):\n"
              "        return torch.stft(x, 64, window=torch.ones(64), return_complex=True).abs()\n\n\n"
              "class STFTLoss(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.stft = STFT()\n\n"
              "    def forward(self, y_hat, y):\n        return F.l1_loss(self.stft(y_hat), self.stft(y))\n\n\n"
              "y_hat = torch.randn(2, 256, requires_grad=True)\nSTFTLoss()(y_hat, torch.randn(2, 256)).backward()\n"),
        # A perceptual loss whose frozen feature extractor runs without grad on the target only.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Frozen(nn.Module):\n"
              "    def __init__(self):\n        super().__init__()\n        self.net = nn.Linear(8, 8)\n\n"
              "    @torch.no_grad()\n    def forward(self, x):\n        return self.net(x)\n\n\n"
              "class FeatureLoss(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.target_net = Frozen()\n        self.proj = nn.Linear(8, 8)\n\n"
              "    def forward(self, pred, target):\n"
              "        return F.mse_loss(self.proj(pred), self.target_net(target))\n"),
        # A target assigner run on the detached prediction (yolov8's `TaskAlignedAssigner`).
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Assigner(nn.Module):\n"
              "    @torch.no_grad()\n    def forward(self, scores):\n        return (scores > 0.5).float()\n\n\n"
              "class DetLoss(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.assigner = Assigner()\n\n"
              "    def forward(self, pred, target):\n        mask = self.assigner(pred.detach().sigmoid())\n"
              "        return F.binary_cross_entropy_with_logits(pred, target * mask)\n"),
    )
    invalid = (
        Invalid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass STFT(nn.Module):\n"
                "    @torch.no_grad()\n    def __call__(self, x):\n"
                "        return torch.stft(x, 64, window=torch.ones(64), return_complex=True).abs()\n\n\n"
                "class STFTLoss(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.stft = STFT()\n\n"
                "    def forward(self, y_hat, y):\n        y_hat_m = self.stft(y_hat)\n        y_m = self.stft(y)\n"
                "        loss_mag = F.l1_loss(torch.log(y_m + 1e-5), torch.log(y_hat_m + 1e-5))\n"
                "        return loss_mag\n\n\n"
                "y_hat = torch.randn(2, 256, requires_grad=True)\nloss = STFTLoss()(y_hat, torch.randn(2, 256))\n"
                "total = loss + y_hat.pow(2).mean()\ntotal.backward()\n",
                line=7, runtime="silent: not loss.requires_grad"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if not ({"no_grad", "inference_mode"} & q.attrs) \
                and not any(v.endswith((".no_grad", ".inference_mode")) for v in q.imported):
            return  # the common case, checked first (this rule runs on every keystroke)
        classes = [n for n in q.class_defs if q.is_module_class(n)]
        off = {}  # class name -> (method, decorator)
        for cls in classes:
            for name in ("forward", "__call__"):
                fn = _method(cls, name)
                deco = next((d for d in fn.decorator_list if _grad_off(d, q)), None) if fn is not None else None
                if deco is not None:
                    off[cls.name] = (fn, deco)
                    break
        if not off:
            return
        uses: dict = {}
        for loss in classes:
            forward = _method(loss, "forward")
            if not _loss_name(loss.name) or forward is None or any(_grad_off(d, q) for d in forward.decorator_list):
                continue
            params = _params(forward)[1:]
            if not params:
                continue
            pred = params[0]
            stored = {}
            for n in ast.walk(loss):
                if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name) \
                        and n.value.func.id in off:
                    for t in n.targets:
                        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                            stored[t.attr] = n.value.func.id
            if not stored:
                continue
            for call in (n for n in ast.walk(forward) if isinstance(n, ast.Call)):
                f = call.func
                if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"
                        and f.attr in stored and call.args and _reads_plainly(call.args[0], pred)):
                    continue
                if self._under_grad_off(call, forward, q) or not _returned(forward, call):
                    continue
                uses.setdefault(stored[f.attr], []).append((loss.name, pred, call))
        for name, found in uses.items():
            fn, deco = off[name]
            loss_name, pred, _ = found[0]
            shown = ast.unparse(deco.func if isinstance(deco, ast.Call) else deco)
            report.add(self, deco,
                       f"`@{shown}()` on `{name}.{fn.name}` cuts `{loss_name}` from the graph: `{pred}` gets no "
                       f"gradient through it. Remove it, or detach only the target.",
                       related=[Note(c.lineno, c.col_offset + 1, f"`{loss}` applies it to its prediction `{p}` here")
                                for loss, p, c in found[:3]])

    @staticmethod
    def _under_grad_off(node: ast.AST, fn: ast.FunctionDef, q) -> bool:
        for w in (n for n in ast.walk(fn) if isinstance(n, (ast.With, ast.AsyncWith))):
            if any(_grad_off(item.context_expr, q) for item in w.items) \
                    and any(n is node for s in w.body for n in ast.walk(s)):
                return True
        return False
