from __future__ import annotations

import ast

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from ._loop_iteration import LOOPS, LoopIteration, method_call, pos
from .base import Invalid, Rule, Valid, msg, dotted_name

# Last parts of a name that count iterations even when this loop does not bind it (`self.global_step`, a trainer
# attribute moved in another method).
_COUNTER_WORDS = ("step", "iter", "batch", "idx", "index", "count")


def _is_counter_mod(node: ast.AST) -> bool:
    """`i % k`, `(i + 1) % accum`: a modulo of numbers, never string formatting (`"%d" % i`)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod)):
        return False
    left = node.left
    if isinstance(left, (ast.JoinedStr, ast.Constant)):
        return False
    return not (isinstance(node.right, ast.Constant) and node.right.value in (0, 1))


def _counter_of(test: ast.AST, body: LoopIteration, depth: int = 0) -> ast.BinOp | None:
    """The modulo of a loop counter the test holds: its left side names something this iteration moves (the loop
    variable, `step += 1`, `i = ...`) or a counter attribute (`self.global_step`). A flag set earlier in the body
    (`do_update = (i + 1) % k == 0`) is read through. `epoch % 2` in a loop over batches is not a counter."""
    for node in ast.walk(test):
        if _is_counter_mod(node):
            for n in ast.walk(node.left):
                if not isinstance(n, (ast.Name, ast.Attribute)):
                    continue
                name = dotted_name(n)
                if name in body.bound:
                    return node
                last = (name or "").rsplit(".", 1)[-1].lower()
                if isinstance(n, ast.Attribute) and any(w in last for w in _COUNTER_WORDS):
                    return node
        elif isinstance(node, ast.Name) and depth == 0 and node.id in body.flags:
            found = _counter_of(body.flags[node.id], body, 1)
            if found is not None:
                return found
    return None


def _optimizers_of(q, tree_assigns: list) -> dict:
    """Optimizer spelling -> the spellings of the modules whose `.parameters()` it was built from, for
    `opt = torch.optim.X(model.parameters(), ...)` in this file."""
    out: dict = {}
    for a in tree_assigns:
        value = a.value
        if not isinstance(value, ast.Call) or not (q.call_name(value) or "").startswith("torch.optim."):
            continue
        mods = {dotted_name(n.func.value) for n in ast.walk(value)
                if method_call(n, "parameters") or method_call(n, "named_parameters")} - {None}
        for target in a.targets:
            name = dotted_name(target)
            if name is not None:
                out.setdefault(name, set()).update(mods)
    return out


def _optimizer_name(name: str) -> bool:
    last = name.rsplit(".", 1)[-1].lower()
    return "opt" in last and "sched" not in last


class ZeroGradDefeatsAccumulation(Rule):
    code = "GS517"
    name = "zero-grad-defeats-accumulation"
    severity = Severity.WARNING
    summary = ("A loop zeroes the gradients every iteration but steps only every few iterations (a modulo of the "
               "counter): each step sees the last batch's gradients alone.")
    events = (FileEvent,)
    what_it_does = ("Flags an unconditional `opt.zero_grad()` (or `model.zero_grad()`) in a loop's body that also "
                    "runs a backward on every iteration, when the optimizer's `step()` (or `scaler.step(opt)`) runs "
                    "only under an `if` whose test is a modulo of a loop counter: `(i + 1) % accum == 0`, "
                    "`step % k == k - 1`, `not (i + 1) % k`, or a flag set from one in the body (`do_update = "
                    "(i + 1) % k == 0`). The counter is the loop's variable, a name the body moves "
                    "(`global_step += 1`) or an attribute named like one (`self.global_step`); `epoch % 2` in a "
                    "loop over batches is not. A model's `zero_grad()` matches the optimizer built from its "
                    "`parameters()` in the file, or the only optimizer the loop steps. Not flagged: a "
                    "`zero_grad()` under an `if` (zeroing with the step, the correct accumulation), a step guarded "
                    "by anything but a modulo (a non-finite loss, a warm-up flag, AMP logic), a guarded block with "
                    "a backward of its own before the step (a generator trained every `n_critic` iterations), an "
                    "optimizer that also steps on every iteration, and a backward only in a nested loop.")
    why_bad = ("`backward()` adds into `.grad`; accumulating over several batches means calling `step()` once "
               "after several backwards and zeroing only after that step. When `zero_grad()` runs on every "
               "iteration, each iteration wipes what the previous ones accumulated, so every step follows the last "
               "micro-batch's gradient alone, still divided by the accumulation count if the loss was. The "
               "effective batch is a fraction of the intended one, the other backwards are wasted work, and no "
               "error is raised.")
    example = ("for i, (x, y) in enumerate(loader):\n    opt.zero_grad()\n    loss = loss_fn(model(x), y) / accum\n"
               "    loss.backward()\n    if (i + 1) % accum == 0:\n        opt.step()")
    use_instead = ("for i, (x, y) in enumerate(loader):\n    loss = loss_fn(model(x), y) / accum\n    loss.backward()\n"
                   "    if (i + 1) % accum == 0:\n        opt.step()\n        opt.zero_grad()")
    fix_safety = ("This rule offers no automatic fix: moving `zero_grad()` under the step's condition changes every "
                  "step's gradient (that is the point) and the first step's, if gradients were left from before "
                  "the loop.")
    references = ("https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html",
                  "https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-accumulation",
                  "https://pytorch.org/tutorials/recipes/recipes/zeroing_out_gradients.html")

    _head = ("import torch\n\nnet = torch.nn.Linear(1, 1, bias=False)\nopt = torch.optim.SGD(net.parameters(), lr=0.0)\n"
             "batches = [torch.tensor([[1.0]]), torch.tensor([[3.0]]), torch.tensor([[5.0]]), torch.tensor([[7.0]])]\n"
             "accum = 2\nstepped_with = []\n")
    # Per-batch gradients 1, 3, 5, 7 (divided by `accum`): accumulating pairs steps with 2.0 and 6.0, zeroing on
    # every iteration steps with 1.5 and 3.5 (the second batch of each pair alone).
    valid = (
        Valid(_head + "for i, x in enumerate(batches):\n    loss = net(x).sum() / accum\n    loss.backward()\n"
              "    if (i + 1) % accum == 0:\n        stepped_with.append(net.weight.grad.item())\n"
              "        opt.step()\n        opt.zero_grad()\nassert stepped_with == [2.0, 6.0]\n"),
        # Zeroed once before the loop, then with each step; `set_to_none` either way.
        Valid(_head + "opt.zero_grad(set_to_none=True)\nfor i, x in enumerate(batches):\n"
              "    (net(x).sum() / accum).backward()\n    if i % accum == accum - 1:\n"
              "        stepped_with.append(net.weight.grad.item())\n        opt.step()\n"
              "        opt.zero_grad(set_to_none=True)\nassert stepped_with == [2.0, 6.0]\n"),
        # A step skipped on a non-finite loss: that batch's gradients are meant to be dropped.
        Valid(_head + "for i, x in enumerate(batches):\n    opt.zero_grad()\n    loss = net(x).sum()\n"
              "    loss.backward()\n    if torch.isfinite(loss):\n        opt.step()\n"),
        # Stepping every iteration; the modulo only decides when to log.
        Valid(_head + "for i, x in enumerate(batches):\n    opt.zero_grad()\n    loss = net(x).sum()\n"
              "    loss.backward()\n    opt.step()\n    if i % 100 == 0:\n        stepped_with.append(loss.item())\n"),
        # Two optimizers: the one stepped every `accum` iterations is zeroed under its own condition.
        Valid("import torch\n\nD = torch.nn.Linear(2, 1)\nG = torch.nn.Linear(2, 2)\n"
              "opt_d = torch.optim.SGD(D.parameters(), lr=0.01)\nopt_g = torch.optim.SGD(G.parameters(), lr=0.01)\n"
              "accum = 2\nfor i in range(4):\n    z = torch.randn(4, 2)\n    opt_d.zero_grad()\n"
              "    D(G(z).detach()).mean().backward()\n    opt_d.step()\n    (-D(G(z)).mean() / accum).backward()\n"
              "    if (i + 1) % accum == 0:\n        opt_g.step()\n        opt_g.zero_grad()\n"),
        # A generator trained every `n_critic` iterations with a backward of its own, zeroed every iteration.
        Valid("import torch\n\nD = torch.nn.Linear(2, 1)\nG = torch.nn.Linear(2, 2)\n"
              "opt_d = torch.optim.SGD(D.parameters(), lr=0.01)\nopt_g = torch.optim.SGD(G.parameters(), lr=0.01)\n"
              "n_critic = 2\nfor i in range(4):\n    z = torch.randn(4, 2)\n    opt_d.zero_grad()\n"
              "    D(G(z).detach()).mean().backward()\n    opt_d.step()\n    opt_g.zero_grad()\n"
              "    if i % n_critic == 0:\n        (-D(G(z)).mean()).backward()\n        opt_g.step()\n"),
        # The optimizer steps on every iteration; a second step every few iterations is not accumulation.
        Valid(_head + "for i, x in enumerate(batches):\n    opt.zero_grad()\n    net(x).sum().backward()\n"
              "    opt.step()\n    if i % accum == 0:\n        opt.step()\n"),
        # The modulo counts epochs, not the batches of this loop.
        Valid(_head + "for epoch in range(2):\n    for x in batches:\n        opt.zero_grad()\n"
              "        net(x).sum().backward()\n        if epoch % 2 == 0:\n            opt.step()\n"),
    )
    invalid = (
        Invalid(_head + "for i, x in enumerate(batches):\n    opt.zero_grad()\n    loss = net(x).sum() / accum\n"
                "    loss.backward()\n    if (i + 1) % accum == 0:\n"
                "        stepped_with.append(net.weight.grad.item())\n        opt.step()\n",
                line=9, runtime="silent: stepped_with == [1.5, 3.5]"),
        # Zeroing at the end of every iteration, the model's `zero_grad()`, a counter of its own and `set_to_none`.
        Invalid(_head + "step = 0\nfor x in batches:\n    (net(x).sum() / accum).backward()\n    step += 1\n"
                "    if not step % accum:\n        stepped_with.append(net.weight.grad.item())\n        opt.step()\n"
                "    net.zero_grad(set_to_none=True)\n",
                line=15, runtime="silent: stepped_with == [1.5, 3.5]"),
        # A flag computed from the counter, an AMP scaler stepping the optimizer.
        Invalid(_head + "scaler = torch.amp.GradScaler('cpu', enabled=False)\nfor i, x in enumerate(batches):\n"
                "    opt.zero_grad()\n    scaler.scale(net(x).sum() / accum).backward()\n"
                "    do_update = (i + 1) % accum == 0\n    if do_update:\n"
                "        stepped_with.append(net.weight.grad.item())\n        scaler.step(opt)\n        scaler.update()\n",
                line=10, runtime="silent: stepped_with == [1.5, 3.5]"),
        # mammoth's STAR-Prompt first stage (models/star_prompt_utils/end_to_end_model.py): the accumulation is
        # written out (zero at the first batch and after each step) but a `zero_grad()` was left at the top.
        Invalid(_head + "for i, x in enumerate(batches):\n    opt.zero_grad()\n    loss = net(x).sum()\n"
                "    if i == 0:\n        opt.zero_grad()\n    (loss / accum).backward()\n"
                "    if (i > 0 or accum == 1) and i % accum == 0:\n"
                "        stepped_with.append(net.weight.grad.item())\n        opt.step()\n        opt.zero_grad()\n",
                line=9, runtime="silent: stepped_with == [2.5]"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        attrs = q.attrs
        if "zero_grad" not in attrs or "step" not in attrs or not ("backward" in attrs or "manual_backward" in attrs):
            return  # one pass over the attribute names; this rule runs on every keystroke
        zero_lines = [c.lineno for c in q.calls() if isinstance(c.func, ast.Attribute) and c.func.attr == "zero_grad"]
        if not zero_lines:
            return
        loops = [n for n in q.nodes() if type(n) in LOOPS]
        flagged: set = set()
        optimizers = None
        for loop in loops:
            first, last = loop.lineno, loop.end_lineno or loop.lineno
            if not any(first < n <= last for n in zero_lines):
                continue
            body = _Iteration(loop)
            if not body.zeros or not body.plain_backwards or not body.steps:
                continue
            if optimizers is None:
                optimizers = _optimizers_of(q, q.assigns)
            for zero, owner in body.zeros:
                if id(zero) in flagged:
                    continue
                hit = self._guarded_step(body, owner, optimizers)
                if hit is None:
                    continue
                step, guard = hit
                flagged.add(id(zero))
                s_line, s_col = report.source.span(step)[:2]
                g_line, g_col = report.source.span(guard)[:2]
                report.add(self, zero,
                           msg("This `zero_grad()` runs every iteration, the step (line ", s_line,
                               ") only every few: it sees one batch's gradients. Zero after the step, under its "
                               "condition."),
                           related=[Note(g_line, g_col, "the step runs only when this modulo holds"),
                                    Note(s_line, s_col, "steps with the last iteration's gradients alone")])

    def _guarded_step(self, body: "_Iteration", owner: str, optimizers: dict):
        mine = [(step, guards) for step, guards in body.steps if _steps(step, owner, body, optimizers)]
        if any(not guards for _, guards in mine):
            return None  # the optimizer also steps on every iteration: nothing is being accumulated
        for step, guards in mine:
            counter = None
            for stmt, _branch in guards:
                counter = _counter_of(stmt.test, body)
                if counter is not None:
                    break
            if counter is None:
                continue
            # A backward inside the guarded blocks before the step: the step has gradients of its own (a generator
            # trained every `n_critic` iterations).
            blocks = [n for stmt, branch in guards for s in branch for n in ast.walk(s)]
            if any(b in blocks and pos(b) < pos(step) for b in body.guarded_backwards):
                continue
            if not self._sees_backward(body, owner, step):
                continue
            return step, counter
        return None

    @staticmethod
    def _sees_backward(body: "_Iteration", owner: str, step: ast.Call) -> bool:
        """Going back from the step through the iteration (wrapping around to its end), is an unconditional backward
        met before the zeroing? If the zeroing comes first, the step sees no gradient at all (GS507's problem)."""
        at = pos(step)
        marks = [(pos(b), "b") for b in body.plain_backwards] + [(pos(z), "z") for z, o in body.zeros if o == owner]
        before = sorted((m for m in marks if m[0] < at), reverse=True)
        after = sorted((m for m in marks if m[0] > at), reverse=True)
        nearest = next(iter(before + after), None)
        return nearest is not None and nearest[1] == "b"


def _steps(call: ast.Call, owner: str, body: "_Iteration", optimizers: dict) -> bool:
    """Does `call` step the optimizer whose gradients `owner.zero_grad()` clears? The same receiver, or an AMP scaler
    stepping it (`scaler.step(opt)`); for a model's `zero_grad()`, the optimizer built from its `parameters()`
    in this file or, when that is unknown, the only optimizer-like name stepped in the loop."""
    receiver = dotted_name(call.func.value) or ""
    args = [dotted_name(a) or "" for a in call.args]
    if receiver == owner or owner in args:
        return True
    stepped = {dotted_name(s.func.value) for s, _ in body.steps} | {dotted_name(a) for s, _ in body.steps
                                                                   for a in s.args}
    if owner in stepped or _optimizer_name(owner):
        return False  # `owner` is an optimizer; this call steps another one
    named = [n for n in [receiver] + args if n and _optimizer_name(n)]
    if not named:
        return False
    built = [optimizers[n] for n in named if n in optimizers]
    if built:
        return any(owner in mods for mods in built)
    return len({n for n in stepped if n and _optimizer_name(n)}) == 1


class _Iteration(LoopIteration):
    """The shared walk, seen as this rule needs it: `step` calls only (not Lightning's `optimizer_step`), guarded by
    `if`s only (a step in an `except` clause counts as unconditional), backwards split into the unconditional ones
    and those under an `if`/`except` or in a nested loop."""

    def __init__(self, loop: ast.AST):
        super().__init__(loop)
        self.steps = [(call, [(g, branch) for g, branch in guards if isinstance(g, ast.If)])
                      for call, guards in self.steps if call.func.attr == "step"]
        self.plain_backwards = [b for b, plain, nested in self.backwards if plain and not nested]
        self.guarded_backwards = [b for b, plain, nested in self.backwards if not (plain and not nested)]
