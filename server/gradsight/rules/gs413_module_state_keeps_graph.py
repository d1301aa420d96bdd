from __future__ import annotations

import ast

from ..engine.query import FileEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


def _self_attr(node: ast.AST) -> str | None:
    """`self.hidden` -> "hidden" (only a plain attribute of the instance)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _stored_attrs(target: ast.AST) -> set:
    """Attributes of the instance a target (or a tuple of targets) stores to."""
    if isinstance(target, (ast.Tuple, ast.List)):
        out: set = set()
        for elt in target.elts:
            out |= _stored_attrs(elt)
        return out
    name = _self_attr(target)
    return {name} if name else set()


def _submodules(cls: ast.ClassDef, q) -> set:
    """Attributes the class's methods bind to a module constructor (`self.lstm = nn.LSTM(...)`)."""
    out = set()
    for n in ast.walk(cls):
        if isinstance(n, ast.Assign) and q.is_module_constructor(n.value):
            for t in n.targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
                    out.add(t.attr)
    return out


def _fed_state(calls: list) -> set:
    """Attributes of `self` passed to these calls, directly or through a subscript (`self.hidden[0]`)."""
    out = set()
    for call in calls:
        for a in [*call.args, *(k.value for k in call.keywords)]:
            name = _self_attr(a.value if isinstance(a, ast.Subscript) else a)
            if name:
                out.add(name)
    return out


def _no_grad_decorated(fn: ast.FunctionDef, q) -> bool:
    for d in fn.decorator_list:
        name = q.qualname(d.func if isinstance(d, ast.Call) else d) or ""
        if name in ("torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad"):
            return True
    return False


class ModuleStateKeepsGraph(Rule):
    code = "GS413"
    name = "module-state-keeps-graph"
    severity = Severity.WARNING
    summary = ("A module's `forward` feeds a submodule's output back into it through an attribute "
               "(`out, self.hidden = self.lstm(x, self.hidden)`): the next call builds on a graph the last "
               "backward freed.")
    events = (FileEvent,)
    what_it_does = ("Flags a statement in an `nn.Module`'s `forward` that passes `self.<state>` to a submodule "
                    "of the class (`self.lstm`, `self.rnn`, ...) and stores that call's result back into "
                    "`self.<state>`, when nothing detaches or resets the state: no `.detach()` of it in the class, "
                    "no other method assigning it (a `reset_hidden()`), no `x.<state> = ...` elsewhere in the "
                    "file, and `forward` is not run under `torch.no_grad()`. It stays quiet in a file that calls "
                    "backward itself: there the training loop is visible and GS402 follows the state through it "
                    "and reports this statement when the carry really happens.")
    why_bad = ("The stored state is the submodule's output, with the graph of this call. The next `forward` "
               "starts from it, so the next loss's graph reaches back into this step's graph, whose saved "
               "tensors the first `backward()` freed: the second training step raises \"Trying to backward "
               "through the graph a second time\" (and until then every step's graph stays alive).")
    example = ("class Tagger(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
               "        self.lstm = nn.LSTM(3, 4, batch_first=True)\n        self.hidden = None\n\n"
               "    def forward(self, x):\n        out, self.hidden = self.lstm(x, self.hidden)\n        return out")
    use_instead = ("class Tagger(nn.Module):\n    ...\n    def forward(self, x):\n"
                   "        out, hidden = self.lstm(x, self.hidden)\n"
                   "        self.hidden = tuple(h.detach() for h in hidden)  # carry the values, not the graph\n"
                   "        return out")
    fix_safety = ("This rule offers no automatic fix: whether to carry the detached state (truncated BPTT) or to "
                  "start each batch from a fresh state is a modelling choice.")
    references = ("https://pytorch.org/tutorials/beginner/former_torchies/autograd_tutorial_old.html",
                  "https://discuss.pytorch.org/t/solved-why-we-need-to-detach-variable-which-contains-hidden-representation/1426")

    _head = ("import torch\nimport torch.nn as nn\n\n\nclass Tagger(nn.Module):\n    def __init__(self):\n"
             "        super().__init__()\n        self.lstm = nn.LSTM(3, 4, batch_first=True)\n"
             "        self.hidden = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))\n\n")
    # What a training step leaves on the module: a state with a graph (the next step's backward raises).
    _probe = ("silent: (m := Tagger()) is not None and m(torch.randn(2, 5, 3)).sum().backward() is None "
              "and m.hidden[0].grad_fn is not None")
    valid = (
        Valid(_head + "    def forward(self, x):\n        out, hidden = self.lstm(x, self.hidden)\n"
              "        self.hidden = tuple(h.detach() for h in hidden)\n        return out[:, -1, :]\n"),
        Valid(_head + "    def forward(self, x):\n        out, _ = self.lstm(x)\n        return out[:, -1, :]\n"),
        # The state is reset by a method the training loop calls each batch.
        Valid(_head + "    def reset(self):\n        self.hidden = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))\n\n"
              "    def forward(self, x):\n        out, self.hidden = self.lstm(x, self.hidden)\n        return out[:, -1, :]\n"),
        # The caller resets it (the PyTorch tutorial's `model.hidden = model.init_hidden()`).
        Valid(_head + "    def forward(self, x):\n        out, self.hidden = self.lstm(x, self.hidden)\n"
              "        return out[:, -1, :]\n\n\ndef step(model, x):\n"
              "    model.hidden = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))\n    return model(x)\n"),
        # Inference only.
        Valid(_head + "    @torch.no_grad()\n    def forward(self, x):\n        out, self.hidden = self.lstm(x, self.hidden)\n"
              "        return out[:, -1, :]\n"),
    )
    invalid = (
        # cnslab_fmri's fMRI_LSTM had this shape (its training loop was in another file).
        Invalid(_head + "    def forward(self, x):\n        out, self.hidden = self.lstm(x, self.hidden)\n"
                "        return out[:, -1, :]\n", line=12, runtime=_probe),
        Invalid(_head.replace("self.hidden = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))",
                              "self.cell = nn.GRUCell(3, 4)\n        self.hidden = (torch.zeros(2, 4),)")
                + "    def forward(self, x):\n        h = self.cell(x[:, 0, :], self.hidden[0])\n"
                "        self.hidden = (self.cell(x[:, 1, :], h),)\n        return self.hidden[0]\n", line=14,
                runtime="silent: (m := Tagger()) is not None and m(torch.randn(2, 5, 3)).sum().backward() is None "
                        "and m.hidden[0].grad_fn is not None"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "backward" in q.attrs:
            return  # the training loop is in this file: the interpreter follows the state (GS402)
        # Every keystroke runs this: look only at assignments that store into an attribute of `self` and call a
        # method or submodule of `self` on their right-hand side (a handful per file), walking nothing else.
        subs_of: dict = {}
        for stmt in q.assigns:
            stored = set().union(*(_stored_attrs(t) for t in stmt.targets))
            if not stored:
                continue
            calls = [c for c in ast.walk(stmt.value) if isinstance(c, ast.Call) and _self_attr(c.func)]
            if not calls:
                continue
            forward = q.enclosing_function(stmt)
            if not isinstance(forward, ast.FunctionDef) or forward.name != "forward" or not forward.args.args \
                    or forward.args.args[0].arg != "self" or _no_grad_decorated(forward, q):
                continue
            cls = q.enclosing(forward, (ast.ClassDef,))
            if cls is None or not q.is_module_class(cls):
                continue
            if id(cls) not in subs_of:
                subs_of[id(cls)] = _submodules(cls, q)
            subs = subs_of[id(cls)]
            calls = [c for c in calls if _self_attr(c.func) in subs]
            if not calls:
                continue
            # Fed to the submodule in this statement (`out, self.h = self.lstm(x, self.h)`), or in an earlier one
            # of the same `forward` (a cell run twice: `h = self.cell(x0, self.h)`, `self.h = self.cell(x1, h)`).
            fed = _fed_state(calls) if stmt.value in calls else _fed_state(
                [c for c in ast.walk(forward) if isinstance(c, ast.Call) and _self_attr(c.func) in subs])
            for state in sorted(stored & fed):
                if not self._released(state, stmt, cls, q):
                    report.add(self, stmt,
                               f"`self.{state}` keeps this call's graph for the next `forward`, so the second "
                               f"training step's backward raises; store `{state}` detached (`.detach()`) or reset "
                               f"it each batch.")

    @staticmethod
    def _released(state: str, carry: ast.Assign, cls: ast.ClassDef, q) -> bool:
        """Does anything detach or reset the state: `.detach()`/`.detach_()` on it in the class, another method
        (not `__init__`) or another statement of `forward` assigning it, or `x.<state> = ...` outside the class?"""
        inside = {id(n) for n in ast.walk(cls)}
        for n in q.nodes():
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("detach", "detach_"):
                for sub in ast.walk(n.func.value):
                    if isinstance(sub, ast.Attribute) and sub.attr == state:
                        return True
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and n is not carry:
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                stores = {t.attr for tt in targets for t in ast.walk(tt)
                          if isinstance(t, ast.Attribute) and isinstance(t.ctx, ast.Store)}
                if state not in stores:
                    continue
                if id(n) not in inside:
                    return True  # the caller resets it
                fn = q.enclosing_function(n)
                if fn is None or getattr(fn, "name", "") != "__init__":
                    return True
        return False
