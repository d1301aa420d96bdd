from __future__ import annotations

import ast

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid, msg, dotted_name

# Words in a method that stop its gradient (or say the author thought about it): left alone.
_STOPS = frozenset({"no_grad", "inference_mode", "set_grad_enabled", "detach", "detach_"})


def _deepcopy_stores(q) -> list:
    """`self.Y = copy.deepcopy(self.X)` assignments of the file, as (line, "Y", "X"): each top-level statement's
    list is kept while it is unchanged (this rule runs on every keystroke)."""
    return q.surveyed("GS185.deepcopy-stores", _statement_deepcopy_stores)


def _statement_deepcopy_stores(top) -> list:
    out = []
    call, attribute, name = ast.Call, ast.Attribute, ast.Name
    for a in top.assigns:
        v = a.value
        if type(v) is not call:
            continue
        f = v.func
        last = f.attr if type(f) is attribute else f.id if type(f) is name else ""
        if last != "deepcopy" or len(v.args) != 1:
            continue
        src = dotted_name(v.args[0]) or ""
        if not src.startswith("self.") or src.count(".") != 1:
            continue
        for t in a.targets:
            tn = dotted_name(t) or ""
            if tn.startswith("self.") and tn.count(".") == 1:
                out.append((a.lineno, tn[5:], src[5:]))
    return out


def _suffix(copy: str, orig: str):
    """`backbone_momentum` of `backbone` -> "momentum"; `target_encoder` of `encoder` -> "target"."""
    if copy.startswith(orig + "_"):
        return copy[len(orig) + 1:]
    if copy.endswith("_" + orig):
        return copy[:-len(orig) - 1]
    return None


class MomentumBranchRunsTrainedModules(Rule):
    code = "GS185"
    name = "momentum-branch-runs-trained-modules"
    severity = Severity.WARNING
    summary = ("A `forward_momentum`-style method runs the trained modules with gradient instead of their "
               "momentum copies: the key branch back-propagates into the online network.")
    events = (FileEvent,)
    what_it_does = (
        "Flags a method of a class that keeps copies of its modules made with `copy.deepcopy` and named after "
        "them with a common word (`self.backbone_momentum = copy.deepcopy(self.backbone)`, "
        "`self.target_encoder = deepcopy(self.encoder)`), when:\n\n"
        "- the method's name holds that word (`forward_momentum`, `target_forward`) and the file calls it;\n"
        "- it calls the original modules (`self.backbone(x)`) and uses none of the copies;\n"
        "- it neither detaches nor turns the gradient off (`@torch.no_grad()`, `with torch.no_grad():`, "
        "`.detach()`).\n\n"
        "The finding stands on the method's `def` line, where `@torch.no_grad()` goes.")
    why_bad = (
        "Momentum (MoCo, BYOL, DenseCL) and target-network branches are stop-gradient: their outputs are "
        "constants the online branch is pulled towards, which is why the class keeps frozen copies for them. A "
        "method named for that branch that runs the online modules in grad mode makes the contrastive loss "
        "back-propagate through the keys into the trained backbone and heads as well, with no error: a "
        "different, usually collapsing, objective. lightly's DenseCL example had this bug.")
    example = ("def forward_momentum(self, x):\n    key = self.backbone(x)  # the trained backbone, with gradient\n"
               "    return self.head(key)")
    use_instead = ("@torch.no_grad()\ndef forward_momentum(self, x):\n    key = self.backbone_momentum(x)\n"
                   "    return self.head_momentum(key)")
    fix_safety = ("This rule offers no automatic fix: whether the branch should run the copies or the online "
                  "modules under `torch.no_grad()` is the method's design.")
    references = ("https://arxiv.org/abs/1911.05722", "https://pytorch.org/docs/stable/generated/torch.no_grad.html")

    _cls = ("import copy\nimport torch\nimport torch.nn as nn\n\n\nclass MoCo(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.backbone = nn.Linear(4, 4)\n"
            "        self.backbone_momentum = copy.deepcopy(self.backbone)\n"
            "        for p in self.backbone_momentum.parameters():\n            p.requires_grad = False\n\n"
            "    def forward(self, x):\n        return self.backbone(x)\n\n")
    _run = ("\n\ntorch.manual_seed(0)\nmodel = MoCo()\nq = model(torch.randn(8, 4))\n"
            "k = model.forward_momentum(torch.randn(8, 4))\n(q * k).sum().backward()\n")

    valid = (
        # The fix: the method runs under `torch.no_grad()`.
        Valid(_cls + "    @torch.no_grad()\n    def forward_momentum(self, x):\n        return self.backbone(x)\n"
              + _run + "assert not k.requires_grad\n"),
        # The momentum branch runs the frozen copy.
        Valid(_cls + "    def forward_momentum(self, x):\n        return self.backbone_momentum(x)\n"
              + _run + "assert not k.requires_grad\n"),
        # The branch detaches its output.
        Valid(_cls + "    def forward_momentum(self, x):\n        return self.backbone(x).detach()\n"
              + _run + "assert not k.requires_grad\n"),
    )
    invalid = (
        # lightly's DenseCL shape: `forward_momentum` runs the trained backbone in grad mode.
        Invalid(_cls + "    def forward_momentum(self, x):\n        return self.backbone(x)\n" + _run, line=17,
                runtime="silent: k.requires_grad"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "deepcopy" not in q.attrs and "copy.deepcopy" not in q.imported:
            return  # no `deepcopy` in the file (this rule runs on every keystroke)
        stores = _deepcopy_stores(q)
        if not stores:
            return
        for cls in q.class_defs:
            copies = {c: o for line, c, o in stores if cls.lineno <= line <= cls.end_lineno}
            words: dict = {}
            for c, o in copies.items():
                w = _suffix(c, o)
                if w:
                    words.setdefault(w, {})[o] = c
            if not words:
                continue
            for m in cls.body:
                if not isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) or m.name.startswith("__"):
                    continue
                parts = m.name.split("_")
                for w, pairs in words.items():
                    if w not in parts or m.name not in q.attrs:
                        continue
                    self._check_method(m, w, pairs, report)

    def _check_method(self, m, word: str, pairs: dict, report) -> None:
        called, used, stops = [], set(), False
        for n in ast.walk(m):
            if isinstance(n, ast.Call):
                name = dotted_name(n.func) or ""
                if name.startswith("self.") and name.count(".") == 1 and name[5:] in pairs:
                    called.append(n)
            if isinstance(n, ast.Attribute):
                used.add(dotted_name(n))
                if n.attr in _STOPS:
                    stops = True
            elif isinstance(n, ast.Name) and n.id in _STOPS:
                stops = True
        if stops or not called or any("self." + c in used for c in pairs.values()):
            return
        first = called[0]
        orig = dotted_name(first.func)[5:]
        line, col = report.source.span(first)[:2]
        report.add(self, m,
                   msg("`", m.name, "` runs the trained `self.", orig, "` in grad mode, not its copy. Its outputs "
                       "back-propagate into the trained modules: decorate it with `@torch.no_grad()` or run `self.",
                       pairs[orig], "`."),
                   related=[Note(line, col, "the trained module, run in grad mode")],
                   span=report.source.line_span(m.lineno))
