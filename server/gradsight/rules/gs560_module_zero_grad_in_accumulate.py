from __future__ import annotations

import ast

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid, dotted_name, msg

# Statements whose body does not run on every pass through the `with` block (a `zero_grad()` under
# `if accelerator.sync_gradients:` is gated by hand), or not at that point at all (a nested definition).
_NOT_EVERY_STEP = (ast.If, ast.Try, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Match)


def _plain_calls(stmts: list):
    """The calls of `stmts` that run whenever the statements run: not under an `if`/`try`/`match`, not in a
    nested definition (a `for`/`while`/`with` inside still runs every time)."""
    todo = list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, _NOT_EVERY_STEP):
            continue
        if isinstance(node, ast.Call):
            yield node
        todo.extend(ast.iter_child_nodes(node))


def _backwards(stmts: list) -> bool:
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in (
                    "backward", "manual_backward"):
                return True
    return False


class ModuleZeroGradInAccumulate(Rule):
    code = "GS560"
    name = "module-zero-grad-in-accumulate"
    severity = Severity.WARNING
    summary = ("`model.zero_grad()` inside `accelerator.accumulate(model)` runs on every micro-step: it wipes the "
               "gradients being accumulated.")
    events = (FileEvent,)
    what_it_does = ("Flags `M.zero_grad(...)` inside a `with X.accumulate(..., M, ...):` block (Hugging Face "
                    "accelerate's gradient accumulation) when `M` is spelled as one of the block's arguments (the "
                    "module being accumulated, not an optimizer), the call runs on every pass through the block "
                    "(not under an `if` such as `if accelerator.sync_gradients:`, not in a `try` or a nested "
                    "definition) and the block runs a backward (`accelerator.backward(loss)`, `loss.backward()`). "
                    "The prepared optimizer's `zero_grad()` in the same place is correct and not flagged.")
    why_bad = ("Inside `accumulate()` accelerate skips the prepared optimizer's `step()` and `zero_grad()` on every "
               "micro-step but the last of each accumulation window; that is how the gradients of several "
               "micro-batches add up in `.grad` before one step. The module's own `zero_grad()` is not wrapped: it "
               "clears `.grad` on every micro-step, so the step that finally runs uses the last micro-batch's "
               "gradient alone (still divided by the accumulation count). Nothing raises; the effective batch "
               "shrinks and the other backwards are wasted. Checked with accelerate 1.15 and torch 2.13: with 4 "
               "accumulation steps the gradient at the step equals the last micro-batch's alone.")
    example = ("with accelerator.accumulate(model):\n    loss = compute_loss(model, batch)\n"
               "    accelerator.backward(loss)\n    optimizer.step()\n    model.zero_grad(set_to_none=True)")
    use_instead = ("with accelerator.accumulate(model):\n    loss = compute_loss(model, batch)\n"
                   "    accelerator.backward(loss)\n    optimizer.step()\n    optimizer.zero_grad(set_to_none=True)")
    fix_safety = ("This rule offers no automatic fix: the optimizer that trains the module must be the one passed "
                  "through `accelerator.prepare` (only that one is gated), which the file may not show.")
    references = ("https://huggingface.co/docs/accelerate/usage_guides/gradient_accumulation",
                  "https://huggingface.co/docs/accelerate/package_reference/accelerator#accelerate.Accelerator.accumulate",
                  "https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.zero_grad")

    # accelerate is not a dependency of these examples: `Accelerator` below is its documented contract in a few
    # lines (inside `accumulate()`, the prepared optimizer's `step()` and `zero_grad()` run only on the last
    # micro-step of each window; the model's own methods are not wrapped). Per-batch gradients 1, 3, 5, 7 (over
    # `accum` = 2): accumulating pairs steps with 2.0 and 6.0, wiping on every micro-step with 1.5 and 3.5.
    _head = ("import contextlib\nimport torch\n\n\nclass Accelerator:\n"
             "    def __init__(self, gradient_accumulation_steps):\n"
             "        self.k, self.n, self.sync_gradients = gradient_accumulation_steps, 0, True\n\n"
             "    @contextlib.contextmanager\n    def accumulate(self, *models):\n        self.n += 1\n"
             "        self.sync_gradients = self.n % self.k == 0\n        yield\n\n"
             "    def backward(self, loss):\n        loss.backward()\n\n    def prepare(self, optimizer):\n"
             "        acc = self\n\n        class Prepared:\n            def step(self):\n"
             "                if acc.sync_gradients:\n                    optimizer.step()\n\n"
             "            def zero_grad(self, set_to_none=True):\n                if acc.sync_gradients:\n"
             "                    optimizer.zero_grad(set_to_none=set_to_none)\n\n        return Prepared()\n\n\n"
             "accum = 2\naccelerator = Accelerator(gradient_accumulation_steps=accum)\n"
             "model = torch.nn.Linear(1, 1, bias=False)\n"
             "optimizer = accelerator.prepare(torch.optim.SGD(model.parameters(), lr=0.0))\n"
             "batches = [torch.tensor([[1.0]]), torch.tensor([[3.0]]), torch.tensor([[5.0]]), torch.tensor([[7.0]])]\n"
             "stepped_with = []\n")
    _record = "        if accelerator.sync_gradients:\n            stepped_with.append(model.weight.grad.item())\n"
    valid = (
        # The prepared optimizer's zero_grad: gated, the accumulation works.
        Valid(_head + "for x in batches:\n    with accelerator.accumulate(model):\n"
              "        accelerator.backward(model(x).sum() / accum)\n" + _record +
              "        optimizer.step()\n        optimizer.zero_grad()\nassert stepped_with == [2.0, 6.0]\n"),
        # The module's zero_grad gated by hand on the sync step.
        Valid(_head + "for x in batches:\n    with accelerator.accumulate(model):\n"
              "        accelerator.backward(model(x).sum() / accum)\n" + _record +
              "        optimizer.step()\n        if accelerator.sync_gradients:\n"
              "            model.zero_grad(set_to_none=True)\nassert stepped_with == [2.0, 6.0]\n"),
        # Another module's zero_grad (a frozen reference model the block never backwards into).
        Valid(_head + "reference = torch.nn.Linear(1, 1)\nfor x in batches:\n"
              "    with accelerator.accumulate(model):\n        reference.zero_grad()\n"
              "        accelerator.backward(model(x).sum() / accum)\n" + _record +
              "        optimizer.step()\n        optimizer.zero_grad()\nassert stepped_with == [2.0, 6.0]\n"),
        # No backward in the block (an evaluation pass): nothing is being accumulated there.
        Valid(_head + "for x in batches:\n    with accelerator.accumulate(model):\n        model.zero_grad()\n"
              "        with torch.no_grad():\n            model(x)\n"),
    )
    invalid = (
        Invalid(_head + "for x in batches:\n    with accelerator.accumulate(model):\n"
                "        accelerator.backward(model(x).sum() / accum)\n" + _record +
                "        optimizer.step()\n        model.zero_grad(set_to_none=True)\n",
                line=45, runtime="silent: stepped_with == [1.5, 3.5]"),
        # An attribute spelling, the zeroing first and a plain `loss.backward()`.
        Invalid(_head + "class Trainer:\n    def __init__(self):\n        self.policy = model\n\n"
                "    def train(self):\n        for x in batches:\n"
                "            with accelerator.accumulate(self.policy):\n                self.policy.zero_grad()\n"
                "                (self.policy(x).sum() / accum).backward()\n"
                "                if accelerator.sync_gradients:\n"
                "                    stepped_with.append(self.policy.weight.grad.item())\n"
                "                optimizer.step()\n\n\nTrainer().train()\n",
                line=46, runtime="silent: stepped_with == [1.5, 3.5]"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        attrs = q.attrs
        if "accumulate" not in attrs or "zero_grad" not in attrs:
            return  # one set lookup on every keystroke; only files using both are looked at
        for call in q.calls():
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr == "accumulate" and call.args):
                continue
            item = q.parent(call)
            block = q.parent(item) if isinstance(item, ast.withitem) else None
            if not isinstance(block, (ast.With, ast.AsyncWith)) or item.context_expr is not call:
                continue
            modules = {dotted_name(a) for a in call.args} - {None}
            if not modules or not _backwards(block.body):
                continue
            for zero in _plain_calls(block.body):
                f = zero.func
                if not (isinstance(f, ast.Attribute) and f.attr == "zero_grad"):
                    continue
                owner = dotted_name(f.value)
                if owner not in modules:
                    continue
                w_line, w_col = report.source.span(call)[:2]
                report.add(self, zero,
                           msg("`", owner, ".zero_grad()` inside `accumulate(", owner, ")` wipes the earlier "
                               "micro-steps' gradients. Call the prepared optimizer's `zero_grad()`: accelerate "
                               "skips it until the step."),
                           related=[Note(w_line, w_col, "accumulates gradients over several passes through this "
                                                        "block; only the prepared optimizer's step/zero_grad wait")])
