"""GS590: parameters made trainable in a loop while a "first iterations only" flag holds, never frozen again."""

from __future__ import annotations

import ast
from typing import Optional

from ..engine.query import FileEvent
from ..findings import Severity
from . import _hooks
from .base import Invalid, Rule, Valid

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _true_set(node: ast.AST) -> Optional[ast.AST]:
    """The receiver of `x.requires_grad_()` / `x.requires_grad_(True)` / `x.requires_grad = True`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_":
        args = list(node.args) + [k.value for k in node.keywords if k.arg == "requires_grad"]
        if not args or (len(args) == 1 and isinstance(args[0], ast.Constant) and args[0].value is True):
            return node.func.value
        return None
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Constant) \
            and node.value.value is True:
        t = node.targets[0]
        if isinstance(t, ast.Attribute) and t.attr == "requires_grad":
            return t.value
    return None


def _counts_down(assign: ast.AST, loop_var: str, flag: str) -> bool:
    """`flag = loop_var < n` (or `<=`, or `n > loop_var`): true on the first iterations, false on the later ones. A
    bound of 0 or 1 (`i < 1`) is the first iteration alone, a one-time setup rather than a training phase."""
    if not (isinstance(assign, ast.Assign) and any(isinstance(t, ast.Name) and t.id == flag for t in assign.targets)):
        return False
    v = assign.value
    if not (isinstance(v, ast.Compare) and len(v.ops) == 1):
        return False
    left, op, right = v.left, v.ops[0], v.comparators[0]
    if isinstance(op, (ast.Gt, ast.GtE)):
        left, right = right, left
    elif not isinstance(op, (ast.Lt, ast.LtE)):
        return False
    if isinstance(right, ast.Constant) and isinstance(right.value, (int, float)) and right.value <= 1:
        return False  # `i < 1`: a one-time setup on the first iteration, meant to stay
    return isinstance(left, ast.Name) and left.id == loop_var


def _loop_var(loop: ast.AST) -> Optional[str]:
    if isinstance(loop, (ast.For, ast.AsyncFor)) and isinstance(loop.target, ast.Name):
        return loop.target.id
    return None


class UnfrozenWhileFlagNeverRefrozen(Rule):
    code = "GS590"
    name = "unfrozen-while-flag-never-refrozen"
    severity = Severity.WARNING
    summary = ("`x.requires_grad_(True)` under a flag that is true only on a loop's first iterations, with nothing "
               "setting it back: `x` still gets gradients after the flag turns false.")
    events = (FileEvent,)
    what_it_does = ("Flags `x.requires_grad_(True)` (also `x.requires_grad_()`, `x.requires_grad = True`) in a loop, "
                    "directly under `if flag:` (or `elif flag:`), where the loop body sets `flag = i < n` from its own "
                    "loop variable (true on the first iterations only: train the text encoder for the first `n` "
                    "epochs), and nothing in the loop sets `x`'s (or an enclosing module's) `requires_grad` back: no "
                    "`requires_grad_(False)` or `requires_grad_(flag)` outside the `if` chain, no call that receives "
                    "both the module and the flag. The finding stands on the unfreezing statement.")
    why_bad = ("`requires_grad` is a state, not a per-iteration switch: once set to True it stays True. When the flag "
               "turns false the code stops unfreezing, but nothing freezes again, so the module keeps receiving "
               "gradients in every later iteration (the optimizer keeps updating what it holds of it, and the "
               "graph through it keeps the layers after it trainable), the opposite of what the flag says. "
               "Gradual unfreezing (`if epoch >= k: backbone.requires_grad_(True)`) is one-way on purpose "
               "and is not flagged.")
    example = ("for epoch in range(epochs):\n    train_enc = epoch < enc_epochs\n    if train_enc:\n"
               "        encoder.requires_grad_(True)   # never set back to False\n    ...")
    use_instead = "for epoch in range(epochs):\n    train_enc = epoch < enc_epochs\n    encoder.requires_grad_(train_enc)"
    references = ("https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.requires_grad_",)
    valid = (
        # The flag decides both ways.
        Valid("import torch\n\nenc = torch.nn.Linear(2, 2)\nhead = torch.nn.Linear(2, 1)\n"
              "opt = torch.optim.SGD(list(enc.parameters()) + list(head.parameters()), lr=0.1)\n"
              "for epoch in range(3):\n    train_enc = epoch < 1\n    enc.requires_grad_(train_enc)\n"
              "    if epoch == 1:\n        frozen_at = enc.weight.detach().clone()\n    opt.zero_grad()\n"
              "    head(enc(torch.randn(4, 2))).sum().backward()\n    opt.step()\n"
              "assert torch.equal(frozen_at, enc.weight)\n"),
        # Gradual unfreezing: one-way on purpose (the flag turns true later and stays true).
        Valid("import torch\n\nenc = torch.nn.Linear(2, 2).requires_grad_(False)\nhead = torch.nn.Linear(2, 1)\n"
              "opt = torch.optim.SGD(list(enc.parameters()) + list(head.parameters()), lr=0.1)\n"
              "for epoch in range(3):\n    unfreeze = epoch >= 1\n    if unfreeze:\n        enc.requires_grad_(True)\n"
              "    opt.zero_grad()\n    head(enc(torch.randn(4, 2))).sum().backward()\n    opt.step()\n"),
        # Frozen again on the other branch.
        Valid("import torch\n\nenc = torch.nn.Linear(2, 2)\nhead = torch.nn.Linear(2, 1)\n"
              "opt = torch.optim.SGD(list(enc.parameters()) + list(head.parameters()), lr=0.1)\n"
              "for epoch in range(3):\n    train_enc = epoch < 1\n    if train_enc:\n        enc.requires_grad_(True)\n"
              "    else:\n        enc.requires_grad_(False)\n    if epoch == 1:\n"
              "        frozen_at = enc.weight.detach().clone()\n    opt.zero_grad()\n"
              "    head(enc(torch.randn(4, 2))).sum().backward()\n    opt.step()\n"
              "assert torch.equal(frozen_at, enc.weight)\n"),
    )
    invalid = (
        Invalid("import torch\n\nenc = torch.nn.Linear(2, 2).requires_grad_(False)\nhead = torch.nn.Linear(2, 1)\n"
                "opt = torch.optim.SGD(list(enc.parameters()) + list(head.parameters()), lr=0.1)\n"
                "enc_epochs = 1\nfor epoch in range(3):\n    train_enc = epoch < enc_epochs\n    if train_enc:\n"
                "        enc.requires_grad_(True)\n    if epoch == enc_epochs:\n"
                "        frozen_at = enc.weight.detach().clone()\n    opt.zero_grad()\n"
                "    head(enc(torch.randn(4, 2))).sum().backward()\n    opt.step()\n",
                line=10, runtime="silent: not torch.equal(frozen_at, enc.weight)"),
        # The other branch of the chain freezes a whole model; this one only ever unfreezes a part of it
        # (sd_dreambooth_extension's text encoder with LoRA).
        Invalid("import torch\n\nenc = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2))\n"
                "enc.requires_grad_(False)\nhead = torch.nn.Linear(2, 1)\nuse_lora, tenc_epochs = True, 1\n"
                "opt = torch.optim.SGD(list(enc.parameters()) + list(head.parameters()), lr=0.1)\n"
                "for epoch in range(3):\n    train_tenc = epoch < tenc_epochs\n    if not use_lora:\n"
                "        enc.requires_grad_(train_tenc)\n    elif train_tenc:\n        enc[0].requires_grad_(True)\n"
                "    if epoch == 1:\n        frozen_at = enc[0].weight.detach().clone()\n    opt.zero_grad()\n"
                "    head(enc(torch.randn(4, 2))).sum().backward()\n    opt.step()\n",
                line=13, runtime="silent: not torch.equal(frozen_at, enc[0].weight)"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        calls = "requires_grad_" in q.attrs
        stores = "requires_grad" in q.attr_stores
        if not calls and not stores:
            return  # the common case (this rule runs on every keystroke): reading `.requires_grad` is not enough
        candidates = []
        if calls:
            candidates = [c for c in q.calls() if isinstance(c.func, ast.Attribute) and c.func.attr == "requires_grad_"]
        if stores:
            candidates += [a for a in q.assigns if _true_set(a) is not None]
        for node in candidates:
            receiver = _true_set(node)
            if receiver is None:
                continue
            stmt = node if isinstance(node, ast.stmt) else q.statement(node)
            guard = q.parent(stmt)
            if not (isinstance(guard, ast.If) and stmt in guard.body and isinstance(guard.test, ast.Name)):
                continue
            flag = guard.test.id
            chain = guard
            while isinstance(q.parent(chain), ast.If) and chain in q.parent(chain).orelse:
                chain = q.parent(chain)
            loop = q.enclosing(chain, _LOOPS + _DEFS)
            var = _loop_var(loop) if isinstance(loop, _LOOPS) else None
            if var is None:
                continue
            body = _hooks.own_nodes(loop)
            if not any(_counts_down(n, var, flag) for n in body):
                continue
            shown = report.source.segment(receiver) or ""
            if not shown or self._reset(q, report, body, chain, shown, flag):
                continue
            message = (f"`{shown}` is unfrozen while `{flag}` holds, never refrozen: it still gets gradients once "
                       f"`{flag}` is False.")
            if len(message) > 110 or "\n" in shown:
                message = (f"A module is unfrozen while `{flag}` holds, never refrozen: it still gets gradients once "
                           "it is False.")
            report.add(self, stmt, message)

    @staticmethod
    def _reset(q, report, body: list, chain: ast.AST, shown: str, flag: str) -> bool:
        """Whether the loop may set `shown`'s requires_grad back: a `requires_grad_(...)` / `.requires_grad = ...`
        other than True on it (or on a module holding it, outside the `if` chain that unfreezes it), or a call
        handed both the flag and the module (`set_requires_grad(encoder, train_enc)`)."""
        inside = {id(n) for n in ast.walk(chain)}

        def covers(expr: ast.AST, exact_only: bool) -> bool:
            text = report.source.segment(expr) or ""
            return text == shown or (not exact_only and shown.startswith(text) and shown[len(text):len(text) + 1]
                                     in (".", "["))

        for n in body:
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "requires_grad_" \
                    and _true_set(n) is None and covers(n.func.value, id(n) in inside):
                return True
            if isinstance(n, ast.Assign) and _true_set(n) is None and len(n.targets) == 1 \
                    and isinstance(n.targets[0], ast.Attribute) and n.targets[0].attr == "requires_grad" \
                    and covers(n.targets[0].value, id(n) in inside):
                return True
            if isinstance(n, ast.Call) and any(isinstance(a, ast.Name) and a.id == flag for a in n.args) \
                    and any(covers(a, False) for a in n.args):
                return True
        return False
