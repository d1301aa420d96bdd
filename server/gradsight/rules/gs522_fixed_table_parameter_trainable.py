from __future__ import annotations

import ast
import re
from typing import Optional

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid

_PARAMETER = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
_GRAD_OFF = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                       "torch.autograd.grad_mode.no_grad"})
# Methods that give the same values in another dtype, place or shape: the table is still the table.
_SAME_VALUES = frozenset({"float", "double", "half", "bfloat16", "to", "type", "type_as", "unsqueeze", "squeeze",
                          "reshape", "view", "view_as", "clone", "detach", "contiguous", "cpu", "cuda", "flatten",
                          "permute", "transpose", "expand", "expand_as", "astype"})
# Constructors that wrap an array or tensor without changing its values.
_WRAPS = frozenset({"torch.from_numpy", "torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.FloatTensor",
                    "numpy.array", "numpy.asarray", "numpy.float32"})
_DEPTH = 4  # how many calls deep a table's maker is followed (MAE's 2d -> from_grid -> 1d helpers)


def _trainable_by_default(call: ast.AST, q) -> bool:
    """`nn.Parameter(t)`: a parameter that requires grad by default. One that spells out `requires_grad=True`
    (which changes nothing) is left out: writing the keyword is the author saying the parameter is to be learned,
    and a table copied into it is a learned embedding's starting value (ClimaX creates its `pos_embed`, `var_embed`
    and queries so, where MAE, whose initialisation it copies, writes `requires_grad=False`)."""
    if not isinstance(call, ast.Call) or q.call_name(call) not in _PARAMETER or len(call.args) > 1:
        return False
    return all(kw.arg != "requires_grad" for kw in call.keywords)


def _self_attr(node: ast.AST) -> Optional[tuple]:
    """`(self-name, attr)` for `<name>.<attr>`; None otherwise."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id, node.attr
    return None


def _trig(fn: ast.AST, qualify) -> set:
    """Which of "sin"/"cos" a function body (or expression) calls: `torch.sin`, `np.cos`, `x.sin()`, `from math
    import sin` (`qualify(name)` gives a bare name's qualified name in the file that holds `fn`)."""
    found = set()
    for n in ast.walk(fn):
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        name = f.attr if isinstance(f, ast.Attribute) else None
        if isinstance(f, ast.Name):
            qual = qualify(f.id) or ""
            name = qual.rpartition(".")[2] if qual.rpartition(".")[2] in ("sin", "cos") else None
        if name in ("sin", "cos"):
            found.add(name)
    return found


def _called_names(fn: ast.AST) -> list:
    return [n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]


def _copy_calls(top) -> list:
    """A top-level statement's `x.copy_(...)` calls with an argument."""
    return [call for call in top.calls if isinstance(call.func, ast.Attribute) and call.func.attr == "copy_"
            and call.args]


class FixedTableParameterTrainable(Rule):
    code = "GS522"
    name = "fixed-table-parameter-trainable"
    severity = Severity.WARNING
    summary = ("An `nn.Parameter` filled in place with a fixed sin/cos table (`.data.copy_(...)`) is left trainable: "
               "the optimizer changes the table.")
    events = (FileEvent,)
    what_it_does = ("Flags `self.p.data.copy_(table)` (or `self.p.copy_(table)` under `torch.no_grad()`) in a module "
                    "class whose `self.p` is created as a trainable `nn.Parameter` (no `requires_grad` keyword: an "
                    "explicit `requires_grad=True` is a learned embedding started from the table on purpose) when "
                    "`table` is a sinusoidal table: made by a function (of this file or another file of the "
                    "workspace, followed a few calls deep) or by statements of the same method that compute both a "
                    "sine and a cosine, and the file never sets `requires_grad` on that attribute nor names it in a "
                    "string (a `register_buffer` name, a `named_parameters` filter, a `no_weight_decay` set). A "
                    "table loaded from data (pretrained word vectors) is left alone: it is usually fine-tuned on "
                    "purpose.")
    why_bad = ("A sin/cos position table is a fixed function of the position: code fills it through `.data` (no "
               "gradient) because it is not meant to be learned. Left with `requires_grad=True`, the parameter is in "
               "`model.parameters()`, gets a gradient in every backward and the optimizer (and weight decay) moves "
               "it away from the table: nothing raises, the model silently trains a different embedding "
               "(MONAI's `PatchEmbeddingBlock` with `pos_embed_type='sincos'`, fixed by setting `requires_grad = "
               "False`; MAE, DiT and open_clip create the same table with `requires_grad=False`).")
    example = ("class PatchEmbed(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
               "        self.pos = nn.Parameter(torch.zeros(1, 16, 8))\n        with torch.no_grad():\n"
               "            self.pos.data.copy_(sincos_table(16, 8))")
    use_instead = ("class PatchEmbed(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                   "        self.pos = nn.Parameter(torch.zeros(1, 16, 8), requires_grad=False)\n"
                   "        with torch.no_grad():\n            self.pos.data.copy_(sincos_table(16, 8))\n"
                   "        # or: self.register_buffer(\"pos\", sincos_table(16, 8))")
    fix_safety = ("There is no automatic fix: whether the embedding should stay fixed (`requires_grad=False`, a "
                  "buffer) or is a learned embedding started from the table is the author's choice.")
    references = ("https://pytorch.org/docs/stable/generated/torch.nn.parameter.Parameter.html",
                  "https://github.com/Project-MONAI/MONAI/pull/7564")

    _TABLE = ("import torch\nimport torch.nn as nn\n\n\ndef sincos_table(n, d):\n"
              "    pos = torch.arange(n, dtype=torch.float32)[:, None]\n"
              "    freq = torch.exp(torch.arange(0, d, 2).float() * (-4.0 / d))\n"
              "    return torch.cat([torch.sin(pos * freq), torch.cos(pos * freq)], dim=1)[None]\n\n\n")
    _TRAIN = ("\n\nm = PatchEmbed()\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
              "m(torch.randn(2, 16, 8)).pow(2).sum().backward()\nopt.step()\n")
    valid = (
        # The fix: frozen after the copy.
        Valid(_TABLE + "class PatchEmbed(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.proj = nn.Linear(8, 8)\n        self.pos = nn.Parameter(torch.zeros(1, 16, 8))\n"
              "        with torch.no_grad():\n            self.pos.data.copy_(sincos_table(16, 8))\n"
              "            self.pos.requires_grad = False\n\n    def forward(self, x):\n"
              "        return self.proj(x + self.pos)\n" + _TRAIN
              + "assert torch.equal(m.pos.data, sincos_table(16, 8))\n"),
        # Created frozen (MAE, DiT).
        Valid(_TABLE + "class PatchEmbed(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.proj = nn.Linear(8, 8)\n"
              "        self.pos = nn.Parameter(torch.zeros(1, 16, 8), requires_grad=False)\n"
              "        self.pos.data.copy_(sincos_table(16, 8).float())\n\n    def forward(self, x):\n"
              "        return self.proj(x + self.pos)\n" + _TRAIN),
        # Pretrained word vectors copied into an embedding: fine-tuned on purpose.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Encoder(nn.Module):\n"
              "    def __init__(self, vectors):\n        super().__init__()\n"
              "        self.emb = nn.Parameter(torch.zeros(10, 8))\n"
              "        self.emb.data.copy_(torch.from_numpy(vectors).float())\n\n    def forward(self, i):\n"
              "        return self.emb[i]\n\n\nimport numpy as np\nm = Encoder(np.ones((10, 8)))\n"
              "m(torch.tensor([1, 2])).sum().backward()\n"),
        # Named in a string: frozen by a filter over `named_parameters()` elsewhere in the file.
        Valid(_TABLE + "class PatchEmbed(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.proj = nn.Linear(8, 8)\n        self.pos = nn.Parameter(torch.zeros(1, 16, 8))\n"
              "        self.pos.data.copy_(sincos_table(16, 8))\n        for n, p in self.named_parameters():\n"
              "            if n == \"pos\":\n                p.requires_grad_(False)\n\n    def forward(self, x):\n"
              "        return self.proj(x + self.pos)\n" + _TRAIN
              + "assert torch.equal(m.pos.data, sincos_table(16, 8))\n"),
        # Created with `requires_grad=True` written out, as are the model's other learned embeddings: a learned
        # embedding started from the table on purpose (microsoft/ClimaX arch.py; bench/fresh27-repro/03 part D).
        Valid(_TABLE + "class ClimaX(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.proj = nn.Linear(8, 8)\n"
              "        self.var_query = nn.Parameter(torch.zeros(1, 1, 8), requires_grad=True)\n"
              "        self.pos_embed = nn.Parameter(torch.zeros(1, 16, 8), requires_grad=True)\n"
              "        self.initialize_weights()\n\n    def initialize_weights(self):\n"
              "        pos_embed = sincos_table(16, 8)\n        self.pos_embed.data.copy_(pos_embed.float())\n\n"
              "    def forward(self, x):\n        return self.proj(x + self.pos_embed) + self.var_query\n"
              + _TRAIN.replace("PatchEmbed", "ClimaX")),
    )
    invalid = (
        # The look-alike: the other learned embedding spells `requires_grad=True`, the table's parameter does not
        # (the default, trainable): the optimizer moves the table.
        Invalid(_TABLE + "class ClimaX(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.proj = nn.Linear(8, 8)\n"
                "        self.var_query = nn.Parameter(torch.zeros(1, 1, 8), requires_grad=True)\n"
                "        self.pos_embed = nn.Parameter(torch.zeros(1, 16, 8))\n"
                "        self.initialize_weights()\n\n    def initialize_weights(self):\n"
                "        pos_embed = sincos_table(16, 8)\n        self.pos_embed.data.copy_(pos_embed.float())\n\n"
                "    def forward(self, x):\n        return self.proj(x + self.pos_embed) + self.var_query\n"
                + _TRAIN.replace("PatchEmbed", "ClimaX"),
                line=21, runtime="silent: not torch.equal(m.pos_embed.data, sincos_table(16, 8))"),
        Invalid(_TABLE + "class PatchEmbed(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.proj = nn.Linear(8, 8)\n        self.pos = nn.Parameter(torch.zeros(1, 16, 8))\n"
                "        with torch.no_grad():\n            table = sincos_table(16, 8)\n"
                "            self.pos.data.copy_(table.float())\n\n    def forward(self, x):\n"
                "        return self.proj(x + self.pos)\n" + _TRAIN,
                line=18, runtime="silent: not torch.equal(m.pos.data, sincos_table(16, 8))"),
        # The table computed in the method itself, copied in a weight-initialisation method.
        Invalid("import math\n\nimport torch\nimport torch.nn as nn\n\n\nclass PatchEmbed(nn.Module):\n"
                "    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(8, 8)\n"
                "        self.pos = nn.Parameter(torch.empty(1, 16, 8))\n        self.init_weights()\n\n"
                "    def init_weights(self):\n        pe = torch.zeros(16, 8)\n"
                "        position = torch.arange(16).float()[:, None]\n"
                "        div = torch.exp(torch.arange(0, 8, 2).float() * (-math.log(1e4) / 8))\n"
                "        pe[:, 0::2] = torch.sin(position * div)\n        pe[:, 1::2] = torch.cos(position * div)\n"
                "        with torch.no_grad():\n            self.pos.copy_(pe.unsqueeze(0))\n\n"
                "    def forward(self, x):\n        return self.proj(x + self.pos)\n" + _TRAIN,
                line=21, runtime="silent: m.pos.grad is not None and m.pos.grad.abs().sum() > 0"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "copy_" not in q.attrs or ("Parameter" not in q.attrs
                                      and not any(v.endswith(".Parameter") for v in q.imported)):
            return  # the common case, checked first (this rule runs on every keystroke)
        for call in q.surveyed("GS522.copies", _copy_calls):
            f = call.func
            target = f.value
            through_data = isinstance(target, ast.Attribute) and target.attr == "data"
            if through_data:
                target = target.value
            owner = _self_attr(target)
            if owner is None:
                continue
            # The method and class that hold the call, found by their lines (parent links, which walk the whole
            # top-level statement, are built only for a copy inside a method whose `self` it writes).
            cls = self._holder(q.class_defs, call.lineno)
            fn = self._holder([m for m in cls.body if isinstance(m, ast.FunctionDef)], call.lineno) \
                if cls is not None else None
            if fn is None or not fn.args.args or fn.args.args[0].arg != owner[0] or not q.is_module_class(cls):
                continue
            if not through_data and not self._grad_off(call, q):
                continue
            if not self._sinusoid(call.args[0], fn, call, q):
                continue
            made = self._created_trainable(cls, owner[1], q)
            if made is None or self._frozen(owner[1], q):
                continue
            stmt = q.statement(call)
            report.add(self, stmt if stmt is not None else call,
                       f"`{ast.unparse(target)}` is filled with a fixed sin/cos table but stays trainable: the "
                       f"optimizer changes it. Set `requires_grad = False` after the copy (or make it a buffer).",
                       related=[Note(made.lineno, made.col_offset + 1,
                                     "created as a trainable `nn.Parameter` here")])

    @staticmethod
    def _holder(defs, line: int):
        """The innermost of `defs` (classes or methods) whose lines hold `line`; None if none does."""
        best = None
        for d in defs:
            if d.lineno <= line <= (d.end_lineno or d.lineno) and (best is None or d.lineno > best.lineno):
                best = d
        return best

    @staticmethod
    def _grad_off(call: ast.Call, q) -> bool:
        """The call runs inside `with torch.no_grad():` (or a function decorated with it)."""
        cur = call
        while cur is not None:
            cur = q.parent(cur)
            if isinstance(cur, (ast.With, ast.AsyncWith)):
                if any(q.call_name(i.context_expr) in _GRAD_OFF for i in cur.items):
                    return True
            elif isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return any(q.qualname(d.func if isinstance(d, ast.Call) else d) in _GRAD_OFF
                           for d in cur.decorator_list)
        return False

    @staticmethod
    def _created_trainable(cls: ast.ClassDef, attr: str, q) -> Optional[ast.AST]:
        """The store `self.<attr> = nn.Parameter(...)` (trainable) of the class when every store of that attribute
        in the class is one (or `None`); None otherwise."""
        made = None
        for n in ast.walk(cls):
            if not isinstance(n, (ast.Assign, ast.AnnAssign)):
                continue
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if not (isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name)):
                    continue
                if isinstance(n.value, ast.Constant) and n.value.value is None:
                    continue
                if not _trainable_by_default(n.value, q):
                    return None
                made = made or n
        return made

    @staticmethod
    def _frozen(attr: str, q) -> bool:
        """Some statement of the file sets `requires_grad` on `<x>.<attr>` (`self.pos.requires_grad = False`,
        `m.pos.requires_grad_(False)`), or a string names the attribute (a `register_buffer` name, a filter over
        `named_parameters()`, a `no_weight_decay` set). Walks the file: asked only once a table copy was found."""
        word = re.compile(rf"\b{re.escape(attr)}\b")
        for n in q.nodes():
            if isinstance(n, ast.Attribute) and n.attr in ("requires_grad", "requires_grad_") \
                    and isinstance(n.value, ast.Attribute) and n.value.attr == attr:
                return True
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and word.search(n.value):
                return True
        return False

    @staticmethod
    def _sinusoid(value: ast.AST, fn: ast.AST, at: ast.AST, q) -> bool:
        """`value` is a sin/cos table: a call (through dtype/shape methods and array wrappers) of a function that
        computes both a sine and a cosine, or a local name whose stores in `fn` (above `at`) do."""
        for _ in range(8):
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                    and value.func.attr in _SAME_VALUES:
                value = value.func.value
            elif isinstance(value, ast.Call) and q.call_name(value) in _WRAPS and value.args:
                value = value.args[0]
            elif isinstance(value, ast.Subscript):
                value = value.value
            else:
                break
        if isinstance(value, ast.Name):
            stores = []
            for stmt in ast.walk(fn):
                if not isinstance(stmt, (ast.Assign, ast.AugAssign)) or stmt.lineno >= at.lineno:
                    continue
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for t in targets:
                    while isinstance(t, ast.Subscript):
                        t = t.value
                    if isinstance(t, ast.Name) and t.id == value.id:
                        stores.append(stmt.value)
            if not stores:
                return False
            found, names = set(), []
            for s in stores:
                found |= _trig(s, lambda n: q.qualname(ast.Name(id=n, ctx=ast.Load())))
                names += _called_names(s)
            return found == {"sin", "cos"} or FixedTableParameterTrainable._makers_trig(names, q, found)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            return FixedTableParameterTrainable._makers_trig([value.func.id], q, set())
        return False

    @staticmethod
    def _makers_trig(names: list, q, found: set) -> bool:
        """The functions called by `names` (this file's or imported from the workspace), followed `_DEPTH` calls
        deep, compute both a sine and a cosine (together with what was `found` already)."""
        found = set(found)
        todo = [(n, None, 0) for n in names]
        seen = set()
        while todo:
            name, where, depth = todo.pop()
            key = (name, id(where))
            if key in seen or depth >= _DEPTH:
                continue
            seen.add(key)
            hit = q.function_def_in(name, where)
            if hit is None:
                continue
            node, imports, scope = hit[0], hit[1], hit[3]
            found |= _trig(node, (imports or {}).get)
            if found == {"sin", "cos"}:
                return True
            todo += [(n, scope, depth + 1) for n in _called_names(node)]
        return False
