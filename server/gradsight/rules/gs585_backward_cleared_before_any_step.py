from __future__ import annotations

import ast

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from ._dead_backward import dead_backwards
from .base import Invalid, Rule, Valid, msg

_SETUP = ("import torch\nimport torch.nn as nn\n\ntorch.manual_seed(0)\nenc = nn.Linear(2, 2)\nhead = nn.Linear(2, 1)\n"
          "opt_enc = torch.optim.SGD(enc.parameters(), lr=0.1)\nopt_head = torch.optim.SGD(head.parameters(), lr=0.1)\n"
          "\n\ndef train_step(x):\n    z = enc(x)\n")
# What one SGD step of the task loss alone gives the encoder: the step the buggy code takes.
_CHECK = ("\n\nx = torch.randn(8, 2)\nw0 = enc.weight.detach().clone()\n"
          "g_task = torch.autograd.grad((head(enc(x)) - 1).pow(2).mean(), enc.weight)[0]\ntrain_step(x)\n")


class BackwardClearedBeforeAnyStep(Rule):
    code = "GS585"
    name = "backward-cleared-before-any-step"
    severity = Severity.WARNING
    summary = ("Every optimizer that steps after a backward is zeroed before its step: that backward's gradients "
               "are cleared unused, and its loss trains nothing.")
    events = (FileEvent,)
    what_it_does = (
        "In one function, flags the `zero_grad()` that clears a backward's gradients when:\n\n"
        "- `a.backward()` (or `accelerator.backward(a)`, `self.manual_backward(a)`) runs, not in a nested loop, and "
        "is followed in its block by unconditional statements (an `if` or loop there that steps, zeroes or "
        "backwards makes the rule stay quiet);\n"
        "- every optimizer that steps after it (`opt.step()`, `scaler.step(opt)`) is zeroed with "
        "`opt.zero_grad()` between the backward and its step, and at least one steps; no other step of the "
        "function can run after the backward (a loop's earlier statements, the code after the loop);\n"
        "- nothing between the backward and the first step may use the gradients: no call whose name speaks of "
        "gradients, steps, optimizers, updates, reductions or hooks, and the function never reads or writes "
        "`.grad` nor registers a hook (FGSM's `x.grad`, saliency and gradient statistics need the backward "
        "alone).\n\n"
        "The finding stands on the zeroing of the optimizer that gathers the most backwards before its step (the "
        "one whose zeroing was meant to open an accumulation), else on the first zeroing after the backward.")
    why_bad = (
        "`backward()` only adds into `.grad`; an optimizer applies what is there when it steps. `zero_grad()` "
        "before any step throws the first backward's contribution away, so that loss (a KL penalty, an "
        "auxiliary term) changes nothing, with no error. rlkit's PEARL trainer backwarded its KL term and then "
        "zeroed the context encoder's optimizer before the reward and Q backwards: the information bottleneck "
        "never trained the encoder.")
    example = ("kl_loss.backward(retain_graph=True)\nopt_enc.zero_grad()  # clears the KL gradient\n"
               "opt_head.zero_grad()\ntask_loss.backward()\nopt_head.step()\nopt_enc.step()")
    use_instead = ("opt_enc.zero_grad()\nkl_loss.backward(retain_graph=True)\nopt_head.zero_grad()\n"
                   "task_loss.backward()\nopt_head.step()\nopt_enc.step()")
    fix_safety = ("This rule offers no automatic fix: zeroing before the first backward or dropping that backward "
                  "are both possible intents.")
    references = ("https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html",
                  "https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html")

    valid = (
        # The fix: the encoder's optimizer is zeroed before the KL backward, which then adds to the task loss's.
        Valid(_SETUP + "    opt_enc.zero_grad()\n    kl_loss = z.pow(2).mean()\n    kl_loss.backward(retain_graph=True)\n"
              "    opt_head.zero_grad()\n    loss = (head(z) - 1).pow(2).mean()\n    loss.backward()\n"
              "    opt_head.step()\n    opt_enc.step()\n" + _CHECK
              + "assert not torch.allclose(enc.weight, w0 - 0.1 * g_task)\n"),
        # FGSM adversarial training: the first backward is there for the input's gradient.
        Valid(_SETUP.replace("    z = enc(x)\n", "    x = x.clone().requires_grad_(True)\n")
              + "    (head(enc(x)) - 1).pow(2).mean().backward()\n    x_adv = (x + 0.1 * x.grad.sign()).detach()\n"
              "    opt_enc.zero_grad()\n    opt_head.zero_grad()\n    (head(enc(x_adv)) - 1).pow(2).mean().backward()\n"
              "    opt_enc.step()\n    opt_head.step()\n\n\ntrain_step(torch.randn(8, 2))\n"),
        # A GAN's generator step: the discriminator is zeroed, the generator steps with the backward's gradient.
        Valid(_SETUP + "    loss = (head(z) - 1).pow(2).mean()\n    loss.backward()\n    opt_head.zero_grad()\n"
              "    opt_enc.step()\n    opt_enc.zero_grad()\n\n\ntrain_step(torch.randn(8, 2))\n"),
        # Two phases, each stepped before the next zeroing.
        Valid(_SETUP + "    loss = (head(z.detach()) - 1).pow(2).mean()\n    loss.backward()\n    opt_head.step()\n"
              "    opt_enc.zero_grad()\n    z.pow(2).mean().backward()\n    opt_enc.step()\n    opt_head.zero_grad()\n"
              "\n\ntrain_step(torch.randn(8, 2))\n"),
    )
    invalid = (
        # rlkit's PEARL shape: the KL backward, then both optimizers zeroed before the task backward.
        Invalid(_SETUP + "    kl_loss = z.pow(2).mean()\n    kl_loss.backward(retain_graph=True)\n"
                "    opt_enc.zero_grad()\n    opt_head.zero_grad()\n    loss = (head(z) - 1).pow(2).mean()\n"
                "    loss.backward()\n    opt_head.step()\n    opt_enc.step()\n" + _CHECK,
                line=15, runtime="silent: torch.allclose(enc.weight, w0 - 0.1 * g_task)"),
        # One optimizer zeroed between two backwards: only the second loss moves the weights.
        Invalid(_SETUP + "    z.pow(2).mean().backward()\n    opt_enc.zero_grad()\n"
                "    (head(enc(x)) - 1).pow(2).mean().backward()\n    opt_enc.step()\n" + _CHECK,
                line=14, runtime="silent: torch.allclose(enc.weight, w0 - 0.1 * g_task)"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        attrs = q.attrs
        if "zero_grad" not in attrs or "step" not in attrs or not ("backward" in attrs or "manual_backward" in attrs):
            return  # one pass over the attribute names; this rule runs on every keystroke
        lines = sorted({c.lineno for c in q.calls()
                        if isinstance(c.func, ast.Attribute) and c.func.attr == "zero_grad"})
        if not lines:
            return
        functions = q.functions
        all_calls = list(q.calls())
        seen: set = set()
        for line in lines:
            around = [f for f in functions if f.lineno <= line <= f.end_lineno]
            fn = max(around, key=lambda f: f.lineno) if around else None
            if fn is None or id(fn) in seen:
                continue
            seen.add(id(fn))
            # The function's own calls, from the file's index (no walk): not those of functions nested in it.
            nested = [(f.lineno, f.end_lineno) for f in functions
                      if f is not fn and fn.lineno <= f.lineno and f.end_lineno <= fn.end_lineno]
            calls = [c for c in all_calls if fn.lineno <= c.lineno <= fn.end_lineno]
            if nested:
                calls = [c for c in calls if not any(a <= c.lineno <= b for a, b in nested)]
            flagged: set = set()
            for dead in dead_backwards(fn, calls):
                if id(dead.zero) in flagged:
                    continue
                flagged.add(id(dead.zero))
                b_line, b_col = report.source.span(dead.backward)[:2]
                related = [Note(b_line, b_col, "this backward's gradients are never applied")]
                for z in dead.zeros[:3]:
                    z_line, z_col = report.source.span(z)[:2]
                    related.append(Note(z_line, z_col, "also cleared here before its optimizer steps"))
                report.add(self, dead.zero,
                           msg("This `zero_grad()` clears the backward at line ", b_line, " before any step "
                               "uses it. That loss trains nothing: zero `", dead.receiver, "` before that backward."),
                           related=related)
