from __future__ import annotations

import ast

from ..engine.report import Note, text as join
from ..engine.events import ReassignEvent
from ..engine.query import FileEvent
from ..engine.values import UNKNOWN, TensorVal, Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid

_KEEP_LEAF = ("detach", "detach_", "requires_grad_", "data")
_INPLACE_FORMS = frozenset({"clamp_", "clamp_min_", "clamp_max_", "clip_", "mul_", "add_", "sub_", "div_", "abs_",
                            "exp_", "log_", "sigmoid_", "tanh_", "fill_", "zero_", "normal_", "uniform_"})


def _key(node: ast.AST):
    """`self.log_alpha` / `w` as text, for a name or a `self.x` attribute; else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return "self." + node.attr
    return None


def _makes_trainable_leaf(value: ast.AST, q) -> bool:
    """`torch.zeros(1, requires_grad=True)`, `torch.tensor(...).requires_grad_()`, `nn.Parameter(...)`."""
    if not isinstance(value, ast.Call):
        return False
    qual = q.call_name(value) or ""
    if qual in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
        return True
    if qual.startswith("torch.") and any(kw.arg == "requires_grad" and isinstance(kw.value, ast.Constant)
                                         and kw.value.value is True for kw in value.keywords):
        return True
    return isinstance(value.func, ast.Attribute) and value.func.attr == "requires_grad_" and not any(
        isinstance(a, ast.Constant) and a.value is False for a in value.args)


def _hands_to_optimizer(call: ast.Call, key: str, q) -> bool:
    """A call that builds an optimizer (`torch.optim.Adam([self.log_alpha])`, a project helper named like
    `get_optim(self.log_alpha, spec)`) with `key` among its arguments."""
    qual = q.call_name(call) or ""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id if isinstance(call.func, ast.Name) \
        else ""
    if not (qual.startswith("torch.optim.") and qual.rsplit(".", 1)[-1][:1].isupper() or "optim" in name.lower()):
        return False
    return any(_key(n) == key for a in list(call.args) + [k.value for k in call.keywords] for n in ast.walk(a))


def _rebinds_from_itself(value: ast.AST, key: str) -> bool:
    """`self.log_alpha.clamp(-5, 4)`, `torch.clamp(w, 0, 1)`, `w.to(device)`: a tensor computed from `key` itself,
    with nothing that makes it a leaf again."""
    if not isinstance(value, ast.Call):
        return False
    for n in ast.walk(value):
        if isinstance(n, ast.Attribute) and n.attr in _KEEP_LEAF:
            return False
        if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute)) and (
                getattr(n.func, "attr", None) or getattr(n.func, "id", "")) == "Parameter":
            return False
    f = value.func
    if isinstance(f, ast.Attribute) and _key(f.value) == key:
        return True
    return bool(value.args) and _key(value.args[0]) == key and isinstance(f, ast.Attribute) \
        and isinstance(f.value, ast.Name) and f.value.id in ("torch", "th")



class UpdateMakesNonLeaf(Rule):
    code = "GS506"
    name = "update-makes-non-leaf"
    severity = Severity.WARNING
    summary = "A manual update `w = w - lr * w.grad` rebinds the weight to a new tensor: a non-leaf, or (under `no_grad`) one without grad."
    events = (ReassignEvent, FileEvent)
    what_it_does = ("Flags `w = w - lr * w.grad` (any rebinding of a leaf that requires grad computed from its own "
                    "`.grad`) with grad mode on, and the same rebinding inside `torch.no_grad()`, which makes `w` a "
                    "new tensor that does not require grad. In a training loop the message names the statement "
                    "that fails next: the following read of `w.grad` (None now) or the next iteration's backward. "
                    "A rebinding followed by `w.requires_grad_()` (or `w.requires_grad = True`) before any such "
                    "use is correct and not reported. Also flags `for p in model.parameters(): p = p - lr * p.grad`: "
                    "rebinding the loop variable to a value nothing reads leaves the parameter unchanged. And flags a "
                    "trainable leaf handed to an optimizer (`torch.optim.Adam([self.log_alpha])`, or a helper "
                    "named like `get_optim(self.log_alpha, ...)`) that is later rebound to a tensor computed from "
                    "itself (`self.log_alpha = self.log_alpha.clamp(-5, 4)`), told from the code's shape so that "
                    "it holds however the class is reached.")
    why_bad = ("With grad mode on, the new `w` is a computed tensor with history, not a leaf: the next backward "
               "leaves `w.grad` as None (with a warning) and the graph grows every step. Under `no_grad`, the new "
               "`w` does not require grad at all: `w.grad.zero_()` raises `'NoneType' object has no attribute "
               "'zero_'`, the next update raises a `TypeError` on `lr * None`, or the next backward raises "
               "\"element 0 of tensors does not require grad\" when `w` was its only trainable input. Update in "
               "place under `torch.no_grad()`.")
    example = "w = w - 0.1 * w.grad"
    use_instead = "with torch.no_grad():\n    w -= 0.1 * w.grad\nw.grad = None"
    references = ("https://pytorch.org/tutorials/beginner/examples_autograd/polynomial_autograd.html",)
    valid = (
        # The same clamp in place under no_grad: the optimizer's leaf stays the leaf.
        Valid("import torch\n\n\nclass SAC:\n    def __init__(self):\n        self.log_alpha = torch.zeros(1, requires_grad=True)\n"
              "        self.alpha_optim = torch.optim.Adam([self.log_alpha], lr=0.1)\n\n"
              "    def train_alpha(self, log_probs):\n        loss = -(self.log_alpha * (log_probs + 1.0)).mean()\n"
              "        self.alpha_optim.zero_grad()\n        loss.backward()\n        self.alpha_optim.step()\n"
              "        with torch.no_grad():\n            self.log_alpha.clamp_(-5, 4)\n\n\nagent = SAC()\n"
              "for _ in range(3):\n    agent.train_alpha(torch.randn(8))\nassert agent.log_alpha.is_leaf\n"),
        Valid("import torch\nw = torch.randn(3, requires_grad=True)\n(w * 2).sum().backward()\nwith torch.no_grad():\n"
              "    w -= 0.1 * w.grad\n"),
        Valid("import torch\nx = torch.randn(4)\nw = torch.randn(4, requires_grad=True)\nfor _ in range(3):\n"
              "    loss = (w * x).sum()\n    loss.backward()\n    with torch.no_grad():\n        w = w - 0.1 * w.grad\n"
              "    w.requires_grad_()\n"),
        Valid("import torch\nx = torch.randn(4)\nw = torch.randn(4, requires_grad=True)\nfor _ in range(3):\n"
              "    loss = (w * x).sum()\n    loss.backward()\n    with torch.no_grad():\n        w -= 0.1 * w.grad\n"
              "    w.grad.zero_()\n"),
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(3, 1)\nm(torch.randn(4, 3)).pow(2).mean().backward()\n"
              "fast = []\nfor p in m.parameters():\n    p = p - 0.1 * p.grad\n    fast.append(p)\n"),
        Valid("import torch\n\n\ndef step(w, lr):\n    with torch.no_grad():\n        w -= lr * w.grad\n"
              "    w.grad.zero_()\n    return w\n"),
    )
    invalid = (
        # Moved to another device or dtype after the optimizer took it (tianshou's CQL `.to(device)`): the optimizer
        # steps the original, and the copy the loss uses never changes.
        Invalid("import torch\n\n\nclass CQL:\n    def __init__(self):\n        self.log_alpha = torch.tensor([0.0], requires_grad=True)\n        self.optim = torch.optim.Adam([self.log_alpha], lr=0.1)\n        self.log_alpha = self.log_alpha.to(torch.float64)\n\n    def update(self):\n        loss = (self.log_alpha.exp() * 2.0).sum()\n        self.optim.zero_grad()\n        loss.backward()\n        self.optim.step()\n\n\nagent = CQL()\nbefore = agent.log_alpha.detach().clone()\nfor _ in range(3):\n    agent.update()\n", line=8,
                runtime="silent: torch.equal(agent.log_alpha.detach(), before)"),
        # An optimized leaf rebound to a value computed from itself (SLM-Lab's SAC): the third call's backward
        # runs into the clamp graph the second one freed.
        Invalid("import torch\n\n\nclass SAC:\n    def __init__(self):\n        self.log_alpha = torch.zeros(1, requires_grad=True)\n"
                "        self.alpha_optim = torch.optim.Adam([self.log_alpha], lr=0.1)\n\n"
                "    def train_alpha(self, log_probs):\n        loss = -(self.log_alpha * (log_probs + 1.0)).mean()\n"
                "        self.alpha_optim.zero_grad()\n        loss.backward()\n        self.alpha_optim.step()\n"
                "        self.log_alpha = self.log_alpha.clamp(-5, 4)\n\n\nagent = SAC()\nfor _ in range(3):\n"
                "    agent.train_alpha(torch.randn(8))\n", line=14, also=(12,),
                runtime="raises: backward through the graph a second time"),
        Invalid("import torch\nw = torch.randn(3, requires_grad=True)\n(w * 2).sum().backward()\nw = w - 0.1 * w.grad\n",
                line=4, runtime="silent: not w.is_leaf"),
        Invalid("import torch\nw = torch.randn(3, requires_grad=True)\n(w * 2).sum().backward()\nwith torch.no_grad():\n"
                "    w = w - 0.1 * w.grad\n", line=5, runtime="silent: not w.requires_grad"),
        Invalid("import torch\nx = torch.randn(4)\nw = torch.randn(4, requires_grad=True)\nfor _ in range(3):\n"
                "    loss = (w * x).sum()\n    loss.backward()\n    with torch.no_grad():\n        w = w - 0.1 * w.grad\n"
                "    w.grad.zero_()\n", line=8, runtime="raises: 'NoneType' object has no attribute 'zero_'"),
        Invalid("import torch\nx = torch.randn(4)\nw = torch.randn(4, requires_grad=True)\nfor _ in range(3):\n"
                "    loss = (w * x).sum()\n    loss.backward()\n    with torch.no_grad():\n        w = w - 0.1 * w.grad\n",
                line=8, runtime="raises: element 0 of tensors does not require grad"),
        Invalid("import torch\nimport torch.nn as nn\nm = nn.Linear(3, 1)\nw0 = m.weight.detach().clone()\n"
                "m(torch.randn(4, 3)).pow(2).mean().backward()\nwith torch.no_grad():\n"
                "    for p in m.parameters():\n        p = p - 0.1 * p.grad\n", line=8,
                runtime="silent: torch.equal(m.weight, w0)"),
    )

    def check(self, event, report) -> None:
        if isinstance(event, FileEvent):
            self.check_rebound_optimized_leaf(event, report)
            return
        old, new = event.old, event.new
        if not event.reads_grad or isinstance(event.node, ast.AugAssign):
            return  # `w -= lr * w.grad` updates the tensor in place
        nxt = event.next_use
        key = event.key
        if nxt is not None and nxt[0] == "loopvar":
            if isinstance(old, TensorVal) and old.rg is Tri.NO:
                return
            loop = nxt[1]
            report.add(self, event.node,
                       f"This rebinds the loop variable `{key}` to a new tensor, so the tensor it named is never "
                       f"updated. Update it in place under `torch.no_grad()` (`{key} -= ...`).", related=[loop])
            return
        if nxt is not None and nxt[0] == "reset":
            return  # `w.requires_grad_()` (or a new binding) follows
        if isinstance(old, TensorVal) and isinstance(new, TensorVal) and old.leaf is Tri.YES and not old.param \
                and new.leaf is Tri.NO and new.rg is Tri.YES and old.rg is Tri.YES:
            msg = (f"This rebinds `{key}` to a computed tensor (not a leaf), so the next backward leaves its "
                   f"`.grad` None. Update it in place under `torch.no_grad()`.")
            report.add(self, event.node, msg, related=[old.origin])
            return
        if event.grad_mode is not Tri.NO:
            return
        if isinstance(old, TensorVal):
            if old.leaf is not Tri.YES or old.param or old.rg is Tri.NO:
                return
            # In a loop the value before the update joins the first iteration's leaf with the rebound tensor:
            # `sources` says a path still had the leaf created with requires_grad=True.
            if old.rg is Tri.MAYBE and not (old.sources and nxt is not None):
                return
        elif old is UNKNOWN:
            # A function's argument: reading `key.grad` says it is trained; report only when a later statement
            # surely meets the rebound tensor.
            if nxt is None:
                return
        else:
            return
        value = getattr(event.node, "value", None)
        text = report.source.segment(value) if value is not None else ""
        if isinstance(new, TensorVal) and new.rg is not Tri.NO or "requires_grad" in text or "Parameter" in text:
            return
        related = [old.origin] if isinstance(old, TensorVal) else []
        extra = ""
        if nxt is None:
            then = "the next backward never reaches it"
        else:
            kind, use = nxt
            related.append(use)
            if kind == "grad":
                then = join("its `.grad` (line ", use.line, ") is None afterwards")
            else:
                then = join("the backward at line ", use.line, " misses it")
                extra = " That backward raises if nothing else in its graph requires grad."
        msg = join(f"Under no_grad this rebinds `{key}` to a tensor without grad, so ", then, f".{extra} "
                   f"Update it in place (`{key} -= ...`).")
        report.add(self, event.node, msg, related=related)

    def check_rebound_optimized_leaf(self, event: FileEvent, report) -> None:
        """`self.log_alpha = torch.zeros(1, requires_grad=True)` handed to an optimizer, later rebound as
        `self.log_alpha = self.log_alpha.clamp(-5, 4)` (SLM-Lab's SAC): the optimizer keeps the old leaf, and the
        new tensor is computed from it. In grad mode it carries a graph that grows with every rebinding, so a
        later backward runs into the part an earlier one freed and raises; under `no_grad` it is a tensor nothing
        trains. Told from the code's shape, so it holds however the class is reached."""
        q = event.query
        if "optim" not in " ".join(q.attrs).lower() and not any("optim" in n for n in q.imported):
            return
        made: dict = {}
        for node in q.assigns:
            if len(node.targets) == 1 and _key(node.targets[0]) is not None \
                    and _makes_trainable_leaf(node.value, q):
                made.setdefault(_key(node.targets[0]), []).append(node)
        if not made:
            return
        calls = [c for c in q.calls() if isinstance(c.func, (ast.Attribute, ast.Name))]
        for node in q.assigns:
            if len(node.targets) != 1:
                continue
            key = _key(node.targets[0])
            if key not in made or not _rebinds_from_itself(node.value, key):
                continue
            scope = q.enclosing(node, (ast.ClassDef,)) if key.startswith("self.") else q.enclosing_function(node)
            same = lambda n: (q.enclosing(n, (ast.ClassDef,)) if key.startswith("self.")
                              else q.enclosing_function(n)) is scope
            if not any(same(m) for m in made[key]):
                continue
            opts = [c for c in calls if same(c) and _hands_to_optimizer(c, key, q)]
            if not opts or any(c.lineno > node.lineno and q.enclosing_function(c) is q.enclosing_function(node)
                               for c in opts):
                continue  # no optimizer holds it, or one is built again on the new tensor after the rebinding
            opt = min(opts, key=lambda c: c.lineno)
            f = node.value.func
            method = f.attr if isinstance(f, ast.Attribute) and _key(f.value) == key else None
            fix = f"`{key}.{method}_(...)`" if method and method + "_" in _INPLACE_FORMS else f"`{key}.copy_(...)`"
            fn = q.enclosing_function(node)
            if method in ("to", "cuda", "cpu", "double", "float", "half"):
                # `self.log_alpha = self.log_alpha.to(device)` after the optimizer took it: a no-op on the same
                # device, a copy the optimizer never updates on another one (tianshou's CQL).
                then = ("When the device or dtype changes it is a copy that never changes: move the tensor before "
                        "the optimizer takes it, or create it there.")
            elif getattr(fn, "name", "") == "__init__":
                then = "The new one never changes. Change it in place under `torch.no_grad()`" + f" ({fix})."
            else:
                then = ("The new one is computed from it: in grad mode it carries a graph that grows with every "
                        f"rebinding, and a later backward raises. Change it in place under `torch.no_grad()` ({fix}).")
            report.add(self, node,
                       join(f"This rebinds `{key}` to a new tensor, so the optimizer (line ", opt.lineno,
                            ") keeps stepping the old one. " + then),
                       related=[Note(opt.lineno, opt.col_offset + 1, "the optimizer takes the leaf here")])

