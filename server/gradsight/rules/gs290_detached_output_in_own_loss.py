"""GS290: a loss term that scores a network's detached output, in the loss whose optimizer steps that network."""

from __future__ import annotations

import ast
from typing import Optional

from ..engine.astwalk import walk
from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from ._calls import TORCH_OPTIMIZERS, call_word
from .base import Invalid, Rule, Valid

def _survey(top) -> list:
    """Assignments that build an optimizer or call something on a detached name, `.backward()` and `.step()` calls:
    a superset of what `check` needs, by spelling alone."""
    out = []
    # The lines of the statement's own `.detach()` calls: only an assignment spanning one of them is walked.
    detach_lines = {c.lineno for c in top.calls if isinstance(c.func, ast.Attribute) and c.func.attr == "detach"}
    for node in top.assigns:
        value = node.value
        if isinstance(value, ast.Call) and call_word(value.func) in TORCH_OPTIMIZERS:
            out.append(node)
        elif detach_lines and any(value.lineno <= n <= (value.end_lineno or value.lineno) for n in detach_lines) \
                and any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "detach"
                        for c in walk(value)):
            out.append(node)
    for call in top.calls:
        if isinstance(call.func, ast.Attribute) and call.func.attr in ("backward", "step"):
            out.append(call)
    return out


def _networks(opt_call: ast.Call) -> set:
    """`Adam(itertools.chain(G.parameters(), F.parameters()))` -> {"G", "F"}."""
    nets = set()
    for node in walk(opt_call):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "parameters"
                and not node.args):
            nets.add(ast.unparse(node.func.value))
    return nets


def _detached_scoring(value: ast.AST) -> Optional[tuple]:
    """`D(x.detach())` inside `value` (possibly reduced: `D(x.detach()).mean()`): (the call, `x`'s name)."""
    for node in walk(value):
        if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Name, ast.Attribute)):
            continue
        if call_word(node.func) == "detach":
            continue
        for arg in node.args:
            if (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "detach"
                    and not arg.args and isinstance(arg.func.value, ast.Name)):
                return node, arg.func.value.id
    return None


def _loads(node: ast.AST) -> set:
    return {n.id for n in walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


class DetachedOutputInOwnLoss(Rule):
    code = "GS290"
    name = "detached-output-in-own-loss"
    severity = Severity.WARNING
    summary = ("A loss term scores `G`'s output through `D(fake.detach())`, and the backward of that loss steps an "
               "optimizer of `G` only: the term gives `G` no gradient.")
    events = (FileEvent,)
    what_it_does = ("Flags `out = D(fake.detach())` where `fake = G(...)`, `D` is a network another optimizer of "
                    "the file trains, `out` flows into a loss whose "
                    "`.backward()` is followed by `opt.step()` of an optimizer built over `G.parameters()` (and not "
                    "over `D`'s), with no undetached `D(fake)` on the way: the generator step of a GAN with the "
                    "discriminator step's detach copied into it.")
    why_bad = ("`detach()` cuts the path from the term back to `G`, so the term's gradient reaches only `D`'s "
               "parameters, which this optimizer does not step (and whose gradients the discriminator step "
               "usually zeroes). `G` trains on the other terms alone, silently: a generator that never gets the "
               "adversarial signal. Detaching the fake belongs in the discriminator's step, not the generator's.")
    example = ("fake = netG(z)\nfake_out = netD(fake.detach()).mean()\ng_loss = 1 - fake_out\n"
               "optimizerG.zero_grad()\ng_loss.backward()\noptimizerG.step()")
    use_instead = ("fake = netG(z)\nfake_out = netD(fake).mean()\ng_loss = 1 - fake_out\n"
                   "optimizerG.zero_grad()\ng_loss.backward()\noptimizerG.step()")
    fix_safety = "There is no automatic fix: score the undetached output in the generator's loss."
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html",)

    _HEAD = ("import torch\nimport torch.nn as nn\nnetG, netD = nn.Linear(2, 2), nn.Linear(2, 1)\n"
             "optimizerG = torch.optim.SGD(netG.parameters(), lr=0.0)\n"
             "optimizerD = torch.optim.SGD(netD.parameters(), lr=0.0)\nz, target = torch.randn(4, 2), torch.randn(4, 2)\n")
    # What the generator gets from its content term alone.
    _CONTENT = "torch.autograd.grad(((netG(z) - target) ** 2).mean(), netG.weight)[0]"
    valid = (
        Valid(_HEAD + "for _ in range(2):\n    fake = netG(z)\n    fake_out = netD(fake).mean()\n"
              "    g_loss = ((fake - target) ** 2).mean() + 0.1 * (1 - fake_out)\n"
              "    optimizerG.zero_grad()\n    g_loss.backward()\n    optimizerG.step()\n"
              "    d_fake = netD(fake.detach()).mean()\n    optimizerD.zero_grad()\n    d_fake.backward()\n"
              "    optimizerD.step()\n"),
        # The detached term trains the network the optimizer holds (the discriminator's own step).
        Valid(_HEAD + "fake = netG(z)\ng_loss = -netD(fake).mean()\noptimizerG.zero_grad()\ng_loss.backward()\n"
              "optimizerG.step()\nd_loss = netD(fake.detach()).mean()\noptimizerD.zero_grad()\nd_loss.backward()\n"
              "optimizerD.step()\n"),
        # The generator also gets the undetached score.
        Valid(_HEAD + "fake = netG(z)\nlogged = netD(fake.detach()).mean()\n"
              "g_loss = -netD(fake).mean() + 0 * logged\noptimizerG.zero_grad()\ng_loss.backward()\n"
              "optimizerG.step()\n"),
    )
    invalid = (
        Invalid(_HEAD + "fake = netG(z)\nfake_out = netD(fake.detach()).mean()\n"
                "g_loss = ((fake - target) ** 2).mean() + 0.1 * (1 - fake_out)\n"
                "optimizerG.zero_grad()\ng_loss.backward()\noptimizerG.step()\n",
                line=8, runtime="silent: torch.allclose(netG.weight.grad, " + _CONTENT + ")"),
        # CycleGAN's generator step: two generators, one optimizer over both, a criterion against the real label.
        Invalid("import itertools\nimport torch\nimport torch.nn as nn\nG_AB, G_BA, D_B = nn.Linear(2, 2), "
                "nn.Linear(2, 2), nn.Linear(2, 1)\n"
                "opt_G = torch.optim.Adam(itertools.chain(G_AB.parameters(), G_BA.parameters()), lr=0.0)\n"
                "opt_D = torch.optim.Adam(D_B.parameters(), lr=0.0)\n"
                "mse = nn.MSELoss()\nreal_A = torch.randn(4, 2)\n"
                "fake_B = G_AB(real_A)\nout_B = D_B(fake_B.detach())\nloss_gan = mse(out_B, torch.ones_like(out_B))\n"
                "loss_cycle = (G_BA(fake_B) - real_A).abs().mean()\nopt_G.zero_grad()\n(loss_gan + loss_cycle).backward()\n"
                "opt_G.step()\n",
                line=10, runtime="silent: torch.allclose(G_AB.weight.grad, torch.autograd.grad("
                "(G_BA(G_AB(real_A)) - real_A).abs().mean(), G_AB.weight)[0])"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        attrs = q.attrs
        if "detach" not in attrs or "parameters" not in attrs or "step" not in attrs or "backward" not in attrs:
            return
        items = q.surveyed("GS290.items", _survey)
        optimizers = {}
        for node in items:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)
                    and call_word(node.value.func) in TORCH_OPTIMIZERS):
                nets = _networks(node.value)
                if nets:
                    optimizers[ast.unparse(node.targets[0])] = nets
        if not optimizers:
            return
        for node in items:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
                continue
            hit = _detached_scoring(node.value)
            if hit is not None:
                self._check_term(q, report, node, hit, items, optimizers)

    def _check_term(self, q, report, assign: ast.Assign, hit: tuple, items: list, optimizers: dict) -> None:
        scorer_call, src = hit
        scorer = ast.unparse(scorer_call.func)
        fn = q.enclosing_function(assign)
        at = assign.lineno
        # `src = G(...)`: the last binding of the detached name before the term, in the same function.
        gen = None
        for node in walk(fn) if fn is not None else ():
            if (isinstance(node, ast.Assign) and node.lineno < at and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name) and node.targets[0].id == src
                    and isinstance(node.value, ast.Call)):
                if gen is None or node.lineno > gen.lineno:
                    gen = node
        if fn is None:
            gen = self._module_binding(q, src, at)
        if gen is None:
            return
        producer = ast.unparse(gen.value.func)
        # The scorer is a network another optimizer trains (the discriminator), not a function such as `torch.mean`.
        if producer == scorer or not any(scorer in nets for nets in optimizers.values()):
            return
        owners = [name for name, nets in optimizers.items() if producer in nets and scorer not in nets]
        if not owners:
            return
        # The names the term's value flows into, in line order, up to a backward of one of them.
        flow = {assign.targets[0].id}
        scope = [n for n in (walk(fn) if fn is not None else q.nodes())
                 if isinstance(n, (ast.Assign, ast.AugAssign)) and n.lineno > at]
        scope.sort(key=lambda n: (n.lineno, n.col_offset))
        backward = None
        backs = sorted((c for c in items if isinstance(c, ast.Call) and c.func.attr == "backward" and c.lineno > at
                        and q.enclosing_function(c) is fn), key=lambda c: (c.lineno, c.col_offset))
        for back in backs:
            for n in scope:
                if n.lineno >= back.lineno:
                    break
                target = n.targets[0] if isinstance(n, ast.Assign) and len(n.targets) == 1 else getattr(n, "target", None)
                if isinstance(target, ast.Name) and _loads(n.value) & flow:
                    flow.add(target.id)
            if _loads(back.func.value) & flow:
                backward = back
                break
        if backward is None:
            return
        # An undetached score of the same output between the producer and the backward gives the gradient anyway.
        for node in walk(fn) if fn is not None else q.nodes():
            if (isinstance(node, ast.Call) and gen.lineno < getattr(node, "lineno", 0) <= backward.lineno
                    and ast.unparse(node.func) == scorer
                    and any(isinstance(a, ast.Name) and a.id == src for a in node.args)):
                return
        # The first optimizer step after the backward must be the generator's: a discriminator step that comes first
        # is what this backward was for (its own `D(fake.detach())` term).
        steps = sorted((c for c in items if isinstance(c, ast.Call) and c.func.attr == "step"
                        and q.enclosing_function(c) is fn and c.lineno > backward.lineno
                        and ast.unparse(c.func.value) in optimizers), key=lambda c: (c.lineno, c.col_offset))
        step = steps[0] if steps else None
        if step is None or ast.unparse(step.func.value) not in owners:
            return
        opt = ast.unparse(step.func.value)
        report.add(self, assign,
                   "The detach cuts this loss term off the network whose optimizer steps, so it trains that network "
                   f"nothing. `{src}` is `{producer}`'s output and `{opt}` steps `{producer}`: score `{src}` itself "
                   f"here and keep `{src}.detach()` for the discriminator's step.",
                   related=[Note(gen.lineno, gen.col_offset + 1, f"`{src}` is `{producer}`'s output"),
                            Note(backward.lineno, backward.col_offset + 1, "the loss is backwarded here"),
                            Note(step.lineno, step.col_offset + 1, f"`{opt}` steps `{producer}` only from other terms")])

    @staticmethod
    def _module_binding(q, src: str, before: int):
        best = None
        for node in q.nodes():
            if (isinstance(node, ast.Assign) and node.lineno < before and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name) and node.targets[0].id == src
                    and isinstance(node.value, ast.Call) and q.enclosing_function(node) is None):
                if best is None or node.lineno > best.lineno:
                    best = node
        return best
