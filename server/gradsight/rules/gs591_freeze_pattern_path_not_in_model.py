"""GS591: a freeze-by-name pattern whose dotted path contradicts the module path the same file uses."""

from __future__ import annotations

import ast
from typing import Iterator, Optional

from ..engine.query import FileEvent
from ..findings import Severity
from . import _hooks
from .base import Invalid, Rule, Valid

_NAMED = ("named_parameters", "named_modules")


def _segments(node: ast.AST) -> Optional[list]:
    """`"a.b.c."` -> ["a", "b", "c"]; an f-string's replacement field is a wildcard (None) segment."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        parts = [node.value]
    elif isinstance(node, ast.JoinedStr):
        parts = [v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else None for v in node.values]
    else:
        return None
    out: list = []
    for part in parts:
        if part is None:
            out.append(None)
            continue
        pieces = part.split(".")
        if out and out[-1] is None and pieces and pieces[0] == "":
            pieces = pieces[1:]
        out.extend(p if p else None for p in pieces)
    return out


def _triples(segs: list) -> Iterator[tuple]:
    for i in range(len(segs) - 2):
        a, x, b = segs[i:i + 3]
        if all(isinstance(s, str) and s.isidentifier() for s in (a, x, b)) and x != b and a != x:
            yield a, x, b


def _loop_patterns(q, loop: ast.For) -> list:
    """The string nodes of the pattern list a `for name, p in m.named_parameters():` body tests `name` against
    (`any(k in name for k in frozen)`, `if k in name` over `for k in frozen`) before changing `requires_grad`."""
    target = loop.target
    if not (isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name)):
        return []
    name = target.elts[0].id
    body = [n for s in loop.body for n in ast.walk(s)]
    if not any(isinstance(n, ast.Attribute) and n.attr in ("requires_grad", "requires_grad_") for n in body):
        return []
    lists = set()
    for n in body:
        if isinstance(n, ast.comprehension) and isinstance(n.iter, ast.Name) and isinstance(n.target, ast.Name):
            k = n.target.id
            lists |= {n.iter.id for c in body if isinstance(c, ast.Compare) and len(c.ops) == 1
                      and isinstance(c.ops[0], ast.In) and isinstance(c.left, ast.Name) and c.left.id == k
                      and isinstance(c.comparators[0], ast.Name) and c.comparators[0].id == name}
    if not lists:
        return []
    fn = q.enclosing_function(loop)
    scope = _hooks.own_nodes(fn if fn is not None else q.tree)
    out = []
    for n in scope:
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                and n.targets[0].id in lists and isinstance(n.value, (ast.List, ast.Tuple, ast.Set)):
            out.extend(n.value.elts)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("append", "add") \
                and isinstance(n.func.value, ast.Name) and n.func.value.id in lists and n.args:
            out.append(n.args[0])
    return out


class FreezePatternPathNotInModel(Rule):
    code = "GS591"
    name = "freeze-pattern-path-not-in-model"
    severity = Severity.WARNING
    summary = ("A parameter-name pattern that freezes by substring spells a module path (`a.model.layers`) that the "
               "same file reaches another way (`a.layers`): it matches nothing and freezes nothing.")
    events = (FileEvent,)
    what_it_does = ("Flags a string in the pattern list of a `for name, p in m.named_parameters():` loop that tests "
                    "`k in name` and sets `requires_grad`, when the pattern holds three dotted names `a.x.b` and the "
                    "file itself reaches `b` straight from `a` (`....a.b`) and never writes `a.x`. Parameter names "
                    "follow the attribute path, so `a.x.b` is not in any name: the `if` never matches and the "
                    "layers it was meant to freeze (or unfreeze) stay as they were. The finding stands on the "
                    "pattern.")
    why_bad = ("Freezing by name patterns fails silently: a pattern that matches no parameter name changes nothing "
               "and raises nothing, so the layers it names keep training (or stay frozen). When the code that uses "
               "the model reaches the layers as `text_model.layers[i]`, their parameters are named "
               "`...text_model.layers.i....`, and a pattern `text_model.model.layers.i.` (a path of another "
               "version of the library, or of a wrapper) is never a substring of them.")
    example = ("frozen = [f\"text_model.model.layers.{i}.\" for i in last]   # the code uses text_model.layers\n"
               "for name, p in vlm.named_parameters():\n    if any(k in name for k in frozen):\n"
               "        p.requires_grad = False")
    use_instead = ("frozen = [f\"text_model.layers.{i}.\" for i in last]\nmatched = set()\n"
                   "for name, p in vlm.named_parameters():\n    hits = [k for k in frozen if k in name]\n"
                   "    if hits:\n        p.requires_grad = False\n        matched.update(hits)\n"
                   "assert matched == set(frozen), set(frozen) - matched")
    references = ("https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.named_parameters",)
    valid = (
        Valid("import torch\n\n\nclass Text(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.layers = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(2)])\n\n\n"
              "class Wrapper(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.text_model = Text()\n\n\nvlm = Wrapper()\nn_layers = len(vlm.text_model.layers)\n"
              "frozen = []\nfor i in [n_layers - 1]:\n    frozen.append(f\"text_model.layers.{i}.\")\n"
              "for name, p in vlm.named_parameters():\n    if any(k in name for k in frozen):\n"
              "        p.requires_grad = False\nassert not vlm.text_model.layers[1].weight.requires_grad\n"),
    )
    invalid = (
        Invalid("import torch\n\n\nclass Text(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.layers = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(2)])\n\n\n"
                "class Wrapper(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.text_model = Text()\n\n\nvlm = Wrapper()\nn_layers = len(vlm.text_model.layers)\n"
                "frozen = []\nfor i in [n_layers - 1]:\n    frozen.append(f\"text_model.model.layers.{i}.\")\n"
                "for name, p in vlm.named_parameters():\n    if any(k in name for k in frozen):\n"
                "        p.requires_grad = False\n",
                line=20, runtime="silent: vlm.text_model.layers[1].weight.requires_grad"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        attrs = q.attrs
        if "requires_grad" not in attrs and "requires_grad_" not in attrs or attrs.isdisjoint(_NAMED):
            return  # the common case (this rule runs on every keystroke)
        loops = []
        for call in q.calls():
            f = call.func
            if isinstance(f, ast.Attribute) and f.attr in _NAMED:
                parent = q.parent(call)
                if isinstance(parent, ast.For) and parent.iter is call:
                    loops.append(parent)
        if not loops:
            return
        chains: Optional[set] = None
        for loop in loops:
            for pattern in _loop_patterns(q, loop):
                segs = _segments(pattern)
                if not segs:
                    continue
                if chains is None:
                    chains = self._pairs(q)
                for a, x, b in _triples(segs):
                    if (a, b) in chains and (a, x) not in chains:
                        message = (f"`{a}.{x}.{b}` is in no parameter name (this file uses `{a}.{b}`): it matches "
                                   "nothing.")
                        if len(message) > 110:
                            message = f"This pattern's `{x}` is in no parameter name (this file uses `{a}.{b}`)."
                        report.add(self, pattern, message)
                        break

    @staticmethod
    def _pairs(q) -> set:
        """(a, b) for every attribute chain `... a.b` of the file (`a` a name or an attribute)."""
        out = set()
        for n in q.nodes():
            if isinstance(n, ast.Attribute):
                v = n.value
                if isinstance(v, ast.Attribute):
                    out.add((v.attr, n.attr))
                elif isinstance(v, ast.Name):
                    out.add((v.id, n.attr))
        return out
