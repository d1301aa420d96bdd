from __future__ import annotations

import ast
from typing import Optional

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid

_PARAMETER = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
# Reads of a tensor that carry no gradient: its shape, type and place (`self.pos_embed.shape[1]`).
_NEUTRAL = frozenset({"shape", "dtype", "device", "size", "numel", "dim", "ndim", "is_cuda", "requires_grad"})
# Reads that cut the graph: what they give has no gradient path back to the parameter.
_CUTS = frozenset({"detach", "data"})


def _trainable_parameter(call: ast.AST, q) -> bool:
    """`nn.Parameter(t)` (or `nn.Parameter(t, requires_grad=True)`): a parameter that requires grad."""
    if not isinstance(call, ast.Call) or q.call_name(call) not in _PARAMETER or len(call.args) > 1:
        return False
    for kw in call.keywords:
        if kw.arg == "requires_grad" and not (isinstance(kw.value, ast.Constant) and kw.value.value is True):
            return False
    return True


def _opt_in_parameter(made: ast.Assign, attr: str, init: ast.FunctionDef, me: str, q) -> bool:
    """`if use_learnable: self.x = nn.Parameter(...)` / `else: self.x = fixed_table(...)` in `__init__`, where
    `use_learnable` is a parameter of `__init__` whose default is off (`False`, `None`, `0`) and no call in the file
    passes it as `True`: by default `self.x` is a fixed tensor, and detaching it is right."""
    branch = q.parent(made)
    if not (isinstance(branch, ast.If) and made in branch.body and isinstance(branch.test, ast.Name)):
        return False
    flag = branch.test.id
    args = init.args.posonlyargs + init.args.args
    defaults = dict(zip([a.arg for a in args][len(args) - len(init.args.defaults):], init.args.defaults))
    defaults.update({a.arg: d for a, d in zip(init.args.kwonlyargs, init.args.kw_defaults) if d is not None})
    default = defaults.get(flag)
    if not (isinstance(default, ast.Constant) and not default.value):
        return False
    if not any(isinstance(s, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == attr
                                                 and isinstance(t.value, ast.Name) and t.value.id == me
                                                 for t in s.targets) for s in branch.orelse):
        return False
    return not any(kw.arg == flag and not (isinstance(kw.value, ast.Constant) and not kw.value.value)
                   for call in q.calls() for kw in call.keywords)


def _self_name(fn: ast.AST) -> Optional[str]:
    args = fn.args.posonlyargs + fn.args.args
    return args[0].arg if args else None


def _read_kind(node: ast.Attribute, q) -> str:
    """What a read of `x.attr` does with the value: "cut" (it reaches `.detach()` or `.data` through methods,
    slices and attribute reads: `x.pos_embed.type_as(h).clone().detach()`), "neutral" (its shape or type, an `is None`
    test, an in-place initialiser's argument), "managed" (written, also through `.data`: an in-place method, an
    assignment), else "live" (a gradient can flow)."""
    cut = False
    cur = node
    while True:
        parent = q.parent(cur)
        if isinstance(parent, ast.Attribute) and parent.value is cur:
            if isinstance(parent.ctx, (ast.Store, ast.Del)):
                return "managed"  # `self.p.data = ...`, `self.p.grad = ...`
            if parent.attr.endswith("_") and not parent.attr.endswith("__"):
                return "managed"  # `self.p.copy_(...)`, `self.p.data.mul_(0.9)`: set by hand
            if parent.attr in _CUTS:
                cut = True
            elif parent.attr in _NEUTRAL and not cut:
                return "neutral"
            cur = parent
            continue
        if isinstance(parent, ast.Call) and parent.func is cur:
            cur = parent
            continue
        if isinstance(parent, ast.Subscript) and parent.value is cur:
            if isinstance(parent.ctx, (ast.Store, ast.Del)):
                return "managed"
            cur = parent
            continue
        if isinstance(parent, ast.Call) and any(a is cur for a in parent.args) \
                and (q.call_name(parent) or ast.unparse(parent.func)).endswith("_"):
            # Initialised in place (`trunc_normal_(self.pos_embed, std=.02)` in `init_weights`, `zeros_(p.data)`).
            return "neutral"
        if isinstance(parent, ast.Compare) and cur is node and all(isinstance(op, (ast.Is, ast.IsNot))
                                                                   for op in parent.ops):
            return "neutral"
        return "cut" if cut else "live"


# A module whose position table is a parameter only behind an off-by-default constructor flag (VideoMAE's
# `use_learnable_pos_emb`), read detached; the INVALID examples differ in how the flag is turned on.
_ENCODER = ("import torch\nimport torch.nn as nn\n\n\nclass Encoder(nn.Module):\n"
            "    def __init__(self, dim=4, learnable_pos=False):\n        super().__init__()\n"
            "        self.proj = nn.Linear(dim, dim)\n        if learnable_pos:\n"
            "            self.pos_embed = nn.Parameter(torch.zeros(1, 3, dim))\n        else:\n"
            "            self.pos_embed = torch.randn(1, 3, dim)\n\n    def forward(self, x):\n"
            "        return self.proj(x + self.pos_embed.type_as(x).clone().detach())\n\n\n")


class ParameterReadOnlyDetached(Rule):
    code = "GS216"
    name = "parameter-read-only-detached"
    severity = Severity.WARNING
    summary = "A trainable `nn.Parameter` that the module only reads through `.detach()` never gets a gradient."
    events = (FileEvent,)
    what_it_does = ("Flags the read in a method (`forward`, `forward_features`) of an `nn.Parameter` that a "
                    "module's `__init__` creates trainable (`self.pos_embed = nn.Parameter(...)`, no "
                    "`requires_grad=False`) when every read of that attribute in the file goes through `.detach()` "
                    "or `.data` (through `.type_as(x)`, `.to(...)`, `.clone()` and slices on the way), only looks at "
                    "its shape, compares it with `None` or initialises it in place (`trunc_normal_(self.pos_embed)`), "
                    "and the module has other parameters or submodules (it is trained). A parameter written by hand "
                    "(an in-place method, `.data` assignment, a store outside `__init__`) is left alone: it is "
                    "updated without gradients on purpose. Reads from other files are not seen.")
    why_bad = ("Nothing raises: the optimizer holds the parameter, but `.detach()` cuts it out of every graph, so "
               "its `.grad` stays None and it keeps its initial value while the rest of the model trains "
               "(ibot's fine-tuning added `self.pos_embed...clone().detach()` and froze its position embedding).")
    example = ("class ViT(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
               "        self.proj = nn.Linear(8, 8)\n        self.pos_embed = nn.Parameter(torch.zeros(1, 4, 8))\n\n"
               "    def forward(self, x):\n        return self.proj(x + self.pos_embed.clone().detach())")
    use_instead = ("    def forward(self, x):\n        return self.proj(x + self.pos_embed)   # or register_buffer "
                   "if it must stay fixed")
    fix_safety = "There is no automatic fix: whether the value should train or be a buffer is the author's choice."
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html",
                  "https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_buffer")
    valid = (
        # The fix: the parameter itself is added.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass ViT(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.proj = nn.Linear(8, 8)\n"
              "        self.pos_embed = nn.Parameter(torch.zeros(1, 4, 8))\n\n    def forward(self, x):\n"
              "        if self.pos_embed is not None:\n            x = x + self.pos_embed.type_as(x)\n"
              "        return self.proj(x)\n\n\nm = ViT()\nm(torch.randn(2, 4, 8)).sum().backward()\n"
              "assert m.pos_embed.grad is not None\n"),
        # Frozen on purpose: created with `requires_grad=False`.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass ViT(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.proj = nn.Linear(8, 8)\n"
              "        self.pos_embed = nn.Parameter(torch.zeros(1, 4, 8), requires_grad=False)\n\n"
              "    def forward(self, x):\n        return self.proj(x + self.pos_embed.detach())\n"),
        # Updated by hand (an EMA of the batch statistics): the detached read is how it is meant to be used.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Center(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.proj = nn.Linear(8, 8)\n"
              "        self.center = nn.Parameter(torch.zeros(1, 8))\n\n    def forward(self, x):\n"
              "        out = self.proj(x) - self.center.detach()\n        with torch.no_grad():\n"
              "            self.center.mul_(0.9).add_(0.1 * out.mean(0, keepdim=True))\n        return out\n"),
        # An EMA kept by hand through `.data`: the detached read is how it is meant to be used.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Center(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.proj = nn.Linear(8, 8)\n"
              "        self.center = nn.Parameter(torch.zeros(1, 8))\n\n    def forward(self, x):\n"
              "        out = self.proj(x) - self.center.detach()\n"
              "        self.center.data = 0.9 * self.center.data + 0.1 * out.detach().mean(0, keepdim=True)\n"
              "        return out\n"),
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Center(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.proj = nn.Linear(8, 8)\n"
              "        self.center = nn.Parameter(torch.zeros(1, 8))\n\n    def forward(self, x):\n"
              "        out = self.proj(x) - self.center.detach()\n"
              "        self.center.data[:] = out.detach().mean(0, keepdim=True)\n        return out\n"),
        # A module whose only parameter is detached trains nothing (a placeholder policy in a test).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass ZeroPolicy(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.bias = nn.Parameter(torch.zeros(1))\n\n"
              "    def forward(self, x):\n        return x * 0 + self.bias.detach()\n"),
        # Read with its graph elsewhere (a regularizer): a gradient reaches it.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass ViT(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.proj = nn.Linear(8, 8)\n"
              "        self.pos_embed = nn.Parameter(torch.zeros(1, 4, 8))\n\n    def forward(self, x):\n"
              "        return self.proj(x + self.pos_embed.detach())\n\n    def penalty(self):\n"
              "        return self.pos_embed.pow(2).sum()\n"),
    )
    invalid = (
        # The parameter exists only when a constructor flag that is off by default is turned on (here through a
        # dict of options); by default the attribute is a fixed table, which the detach is right for: information.
        Invalid(_ENCODER
                + "opts = {\"learnable_pos\": True}\nenc = Encoder(**opts)\n"
                "enc(torch.randn(2, 3, 4)).sum().backward()\n",
                line=15, runtime="silent: enc.pos_embed.grad is None", severity=Severity.INFORMATION),
        # The same class turned on by a call in the file: a warning.
        Invalid(_ENCODER
                + "torch.manual_seed(0)\nenc = Encoder(learnable_pos=True)\n"
                "enc(torch.randn(2, 3, 4)).sum().backward()\n",
                line=15, runtime="silent: enc.pos_embed.grad is None", severity=Severity.WARNING),
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass ViT(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.proj = nn.Linear(8, 8)\n"
                "        self.pos_embed = nn.Parameter(torch.zeros(1, 4, 8))\n\n    def forward(self, x):\n"
                "        if self.pos_embed is not None:\n"
                "            x = x + self.pos_embed.type_as(x).to(x.device).clone().detach()\n"
                "        return self.proj(x)\n\n\nm = ViT()\nm(torch.randn(2, 4, 8)).sum().backward()\n",
                line=13, runtime="silent: m.pos_embed.grad is None and m.proj.weight.grad is not None"),
        # Read in a helper of `forward` (ibot's and VideoMAE's `forward_features`), initialised in place elsewhere.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass ViT(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.proj = nn.Linear(8, 8)\n"
                "        self.pos_embed = nn.Parameter(torch.zeros(1, 4, 8))\n        self.init_weights()\n\n"
                "    def init_weights(self):\n        nn.init.trunc_normal_(self.pos_embed, std=0.02)\n\n"
                "    def forward_features(self, x):\n"
                "        return x + self.pos_embed.expand(x.shape[0], -1, -1).detach()\n\n"
                "    def forward(self, x):\n        return self.proj(self.forward_features(x))\n\n\n"
                "m = ViT()\nm(torch.randn(2, 4, 8)).sum().backward()\n",
                line=16, runtime="silent: m.pos_embed.grad is None and m.proj.weight.grad is not None"),
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.fc = nn.Linear(3, 3)\n"
                "        self.scale = nn.Parameter(torch.ones(3))\n\n"
                "    def forward(self, x):\n        return self.fc(x) * self.scale.data\n\n\n"
                "m = Net()\nm(torch.randn(2, 3)).sum().backward()\n",
                line=12, runtime="silent: m.scale.grad is None and m.fc.weight.grad is not None"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if not ({"detach", "data"} & q.attrs) or ("Parameter" not in q.attrs
                                                    and not any(v.endswith(".Parameter") for v in q.imported)):
            return  # the common case, checked first (this rule runs on every keystroke)
        classes = [n for n in q.class_defs if q.is_module_class(n)]
        if not classes:
            return
        reads: Optional[dict] = None
        for cls in classes:
            init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
            if init is None or not any(isinstance(f, ast.FunctionDef) and f.name == "forward" for f in cls.body):
                continue
            me = _self_name(init)
            created, others = {}, 0
            for n in ast.walk(init):
                if not isinstance(n, ast.Assign):
                    continue
                for t in n.targets:
                    if not (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == me):
                        continue
                    if _trainable_parameter(n.value, q):
                        created.setdefault(t.attr, n)
                    elif q.is_module_constructor(n.value) or q.call_name(n.value) in _PARAMETER:
                        others += 1
            if not created:
                continue
            if reads is None:
                reads = {}
                for n in q.nodes():
                    if isinstance(n, ast.Attribute):
                        reads.setdefault(n.attr, []).append(n)
            for attr, made in created.items():
                # The module trains something else (another parameter or a submodule): a placeholder module whose
                # only parameter is detached trains nothing, on purpose.
                if others + len(created) - 1 == 0:
                    continue
                first = self._only_detached(attr, reads.get(attr, ()), init, cls, q)
                if first is None:
                    continue
                stmt = q.statement(first)
                # Created only when a constructor flag that is off by default is turned on, with a fixed tensor in
                # its place otherwise: the detaching read is right for the default, so information, not a warning.
                opt_in = _opt_in_parameter(made, attr, init, me, q)
                report.add(self, stmt if stmt is not None else first,
                           f"`{ast.unparse(first)}` is a trainable parameter, but every read detaches it: it never "
                           f"gets a gradient. Drop the `.detach()` (or `.data`), or make it a buffer if it must stay "
                           f"fixed.",
                           related=[Note(made.lineno, made.col_offset + 1,
                                         "created as a trainable `nn.Parameter` here")],
                           severity=Severity.INFORMATION if opt_in else None)

    @staticmethod
    def _only_detached(attr: str, nodes, init: ast.AST, cls: ast.ClassDef, q) -> Optional[ast.Attribute]:
        """The first cut read of `attr` in a method of `cls` (its `forward`, or a helper such as `forward_features`)
        when every read of it in the file outside `__init__` is cut or
        neutral and nothing stores into it outside `__init__`; None otherwise."""
        first = None
        for n in nodes:
            inside_init = init.lineno <= n.lineno <= (init.end_lineno or init.lineno)
            if isinstance(n.ctx, (ast.Store, ast.Del)):
                if not inside_init:
                    return None
                continue
            if inside_init:
                continue
            kind = _read_kind(n, q)
            if kind in ("live", "managed"):
                return None
            if kind == "cut" and cls.lineno <= n.lineno <= (cls.end_lineno or cls.lineno) \
                    and (first is None or (n.lineno, n.col_offset) < (first.lineno, first.col_offset)):
                first = n
        return first
