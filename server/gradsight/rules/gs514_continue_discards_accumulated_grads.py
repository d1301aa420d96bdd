from __future__ import annotations

import ast

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from ._loop_iteration import LOOPS, LoopIteration, method_call, pos
from .base import Invalid, Rule, Valid, msg, dotted_name

# Words of a `continue`'s guard that say "this batch is bad, drop it": non-finite values, an AMP overflow.
_BAD_VALUE_WORDS = frozenset({"nan", "inf", "isnan", "isinf", "isfinite", "finite", "nonfinite", "overflow",
                              "anomaly"})
# Words of a compared value that make the guard a threshold on the loss or the gradients (a spike filter).
_VALUE_WORDS = ("loss", "norm", "grad")
# ... unless the name is an accumulation setting (`grad_accum_steps`), which is the counter this rule is about.
_COUNTER_WORDS = ("accum", "acc_", "step", "iter", "batch", "count")
# Parts of a guard's names (split at `_`) that name gradient accumulation or the update it waits for.
_ACCUMULATION_WORDS = frozenset({"acc", "accum", "accumulate", "accumulation", "accumulated", "update", "updates",
                                 "sync", "every", "interval"})




def _words(expr: ast.AST) -> list:
    """Lower-case identifiers of an expression: names, attributes, called functions."""
    out = []
    for n in ast.walk(expr):
        if isinstance(n, ast.Name):
            out.append(n.id.lower())
        elif isinstance(n, ast.Attribute):
            out.append(n.attr.lower())
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            out.append(n.value.lower())
    return out


def _deliberate(test: ast.AST) -> bool:
    """A guard that drops a bad batch on purpose: non-finite values, a threshold on the loss or the gradients, an
    `except` clause (a batch that ran out of memory)."""
    if isinstance(test, ast.excepthandler):
        return True
    for word in _words(test):
        parts = set(word.split("_"))
        if parts & _BAD_VALUE_WORDS or word.startswith(("isnan", "isinf", "isfinite")):
            return True
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare):
            continue
        if any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in ast.walk(node)):
            continue  # `(i + 1) % accum != 0`: the accumulation counter itself
        for word in _words(node):
            if any(v in word for v in _VALUE_WORDS) and not any(c in word for c in _COUNTER_WORDS):
                return True
            if word == "item":
                return True  # `loss.item() > 1e4`: a value of a tensor compared with a threshold
    return False


def _accumulates(tests: list, block: list, cont: ast.Continue) -> bool:
    """Does the guard read as "not enough batches yet"? A modulo (`(i + 1) % accum != 0`), a name of an
    accumulation setting or flag (`acc_batches > 1`, `not should_update`, `not sync_gradients`), or the guard's
    counter moved right before the `continue` (`acc_left -= 1`). Other skips (`epoch < freeze_epochs`, `dry_run`) may
    drop the gradients on purpose and are left alone."""
    for test in tests:
        if any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in ast.walk(test)):
            return True
        for word in _words(test):
            parts = word.split("_")
            if any(p in _ACCUMULATION_WORDS or p.startswith("accum") for p in parts):
                return True
    # The counter must be the guard's own (`if left > 1: left -= 1`): `skipped += 1` only counts dropped batches.
    tested = {dotted_name(n) for test in tests for n in ast.walk(test) if isinstance(n, (ast.Name, ast.Attribute))}
    before = block[:block.index(cont)] if cont in block else []
    return any(isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, (ast.Add, ast.Sub))
               and dotted_name(stmt.target) in tested - {None} for stmt in before)


class ContinueDiscardsAccumulatedGrads(Rule):
    code = "GS514"
    name = "continue-discards-accumulated-grads"
    severity = Severity.WARNING
    summary = ("A loop zeroes the gradients at the start of every iteration and `continue`s past `step()` to "
               "accumulate: the next iteration's `zero_grad()` discards what was accumulated.")
    events = (FileEvent,)
    what_it_does = ("Flags an unconditional `opt.zero_grad()` (or `model.zero_grad()`) in a loop's body that comes "
                    "before a `backward()` of the same iteration, when a `continue` of that loop after the backward "
                    "skips the optimizer's `step()` further down and its guard reads as gradient accumulation: a "
                    "modulo (`(i + 1) % accum != 0`), a name such as `acc_batches`, `accum_steps`, `do_update`, "
                    "`sync_gradients`, or the guard's own counter moved just before the `continue` "
                    "(`if left > 1: left -= 1`). Not flagged: a "
                    "`zero_grad()` inside an `if` (zeroing only when an accumulation window starts), a step before "
                    "the `continue` (the skip only skips logging), a backward in a nested loop (it may not run at "
                    "all), a `continue` in an `except` clause (a batch that ran out of memory) or after its branch zeroes "
                    "the gradients itself, a guard that tests "
                    "for non-finite values (`isnan`, `isinf`, `isfinite`, an AMP overflow) or compares the loss, a "
                    "gradient norm or a tensor's `.item()` with a threshold, and other skips (`epoch < warmup`): "
                    "those drop a batch's gradients on purpose.")
    why_bad = ("`backward()` adds into `.grad`; accumulating over several batches means calling `step()` once "
               "after several backwards, and zeroing only after that step. When `zero_grad()` stays at the top of "
               "the loop, each skipped iteration's gradients are wiped by the next iteration's `zero_grad()` "
               "before any step uses them, so every step follows the last batch's gradient alone (scaled by the "
               "accumulation divisor, if any). The effective batch size is not what the accumulation setting "
               "says, the step is noisier and no error is raised.")
    example = ("for i, (x, y) in enumerate(loader):\n    opt.zero_grad()\n    loss = loss_fn(model(x), y) / accum\n"
               "    loss.backward()\n    if (i + 1) % accum != 0:\n        continue\n    opt.step()")
    use_instead = ("for i, (x, y) in enumerate(loader):\n    loss = loss_fn(model(x), y) / accum\n    loss.backward()\n"
                   "    if (i + 1) % accum != 0:\n        continue\n    opt.step()\n    opt.zero_grad()")
    fix_safety = ("This rule offers no automatic fix: moving `zero_grad()` after `step()` changes every step's "
                  "gradient (that is the point) and the first step's, if gradients were left from before the loop.")
    references = ("https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html",
                  "https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-accumulation",
                  "https://pytorch.org/tutorials/recipes/recipes/zeroing_out_gradients.html")

    _head = ("import torch\n\nnet = torch.nn.Linear(1, 1, bias=False)\nopt = torch.optim.SGD(net.parameters(), lr=0.0)\n"
             "batches = [torch.tensor([[1.0]]), torch.tensor([[3.0]]), torch.tensor([[5.0]]), torch.tensor([[7.0]])]\n"
             "accum = 2\nstepped_with = []\n")
    # Per-batch gradients 1, 3, 5, 7 (divided by `accum`): accumulating pairs steps with 2.0 and 6.0.
    valid = (
        Valid(_head + "for i, x in enumerate(batches):\n    loss = net(x).sum() / accum\n    loss.backward()\n"
              "    if (i + 1) % accum != 0:\n        continue\n    stepped_with.append(net.weight.grad.item())\n"
              "    opt.step()\n    opt.zero_grad()\nassert stepped_with == [2.0, 6.0]\n"),
        # Zeroing only when a window starts: the iterations in between keep the gradients.
        Valid(_head + "for i, x in enumerate(batches):\n    if i % accum == 0:\n        opt.zero_grad()\n"
              "    loss = net(x).sum() / accum\n    loss.backward()\n    if (i + 1) % accum != 0:\n        continue\n"
              "    stepped_with.append(net.weight.grad.item())\n    opt.step()\nassert stepped_with == [2.0, 6.0]\n"),
        # A bad batch is skipped on purpose: its gradients are meant to be dropped.
        Valid(_head + "for i, x in enumerate(batches):\n    opt.zero_grad()\n    loss = net(x).sum()\n    loss.backward()\n"
              "    grad_norm = torch.nn.utils.clip_grad_norm_(net.parameters(), 10.0)\n"
              "    if not torch.isfinite(grad_norm):\n        continue\n    opt.step()\n"),
        Valid(_head + "for i, x in enumerate(batches):\n    opt.zero_grad()\n    loss = net(x).sum()\n    loss.backward()\n"
              "    if loss.item() > 6.0:\n        continue\n    opt.step()\n"),
        # A batch that ran out of memory is dropped (s3prl's runner has this `except`).
        Valid(_head + "for i, x in enumerate(batches):\n    opt.zero_grad()\n    try:\n        loss = net(x).sum() / accum\n"
              "        loss.backward()\n    except RuntimeError as e:\n        if 'out of memory' in str(e):\n"
              "            continue\n        raise\n    opt.step()\n"),
        # A skip that is not accumulation: the first epochs only warm up statistics, their gradients unused.
        Valid(_head + "for epoch in range(3):\n    for x in batches:\n        opt.zero_grad()\n"
              "        loss = net(x).sum()\n        loss.backward()\n        if epoch < 1:\n            continue\n"
              "        opt.step()\n"),
        # The step comes before the `continue`, which only skips the logging.
        Valid(_head + "for i, x in enumerate(batches):\n    opt.zero_grad()\n    loss = net(x).sum()\n    loss.backward()\n"
              "    opt.step()\n    if (i + 1) % accum != 0:\n        continue\n    stepped_with.append(loss.item())\n"),
        # A critic trained every iteration, the generator every `n_critic`: each zeroes before its own backward.
        Valid("import torch\n\nD = torch.nn.Linear(2, 1)\nG = torch.nn.Linear(2, 2)\n"
              "opt_d = torch.optim.SGD(D.parameters(), lr=0.01)\nopt_g = torch.optim.SGD(G.parameters(), lr=0.01)\n"
              "n_critic = 2\nfor i in range(4):\n    z = torch.randn(4, 2)\n    D.zero_grad()\n"
              "    d_loss = D(G(z).detach()).mean() - D(torch.randn(4, 2)).mean()\n    d_loss.backward()\n"
              "    opt_d.step()\n    if i % n_critic != 0:\n        continue\n    G.zero_grad()\n"
              "    g_loss = -D(G(z)).mean()\n    g_loss.backward()\n    opt_g.step()\n"),
    )
    invalid = (
        Invalid(_head + "for i, x in enumerate(batches):\n    opt.zero_grad()\n    loss = net(x).sum() / accum\n"
                "    loss.backward()\n    if (i + 1) % accum != 0:\n        continue\n"
                "    stepped_with.append(net.weight.grad.item())\n    opt.step()\n",
                line=9, runtime="silent: stepped_with == [1.5, 3.5]"),
        # pytorch-cifar100's train.py (before 92a3323c): a countdown of the batches left to accumulate, and the
        # model's `zero_grad()`.
        Invalid("import torch\n\n\nclass Trainer:\n    def __init__(self, acc_b):\n"
                "        self.net = torch.nn.Linear(1, 1, bias=False)\n"
                "        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.0)\n        self.acc_b = acc_b\n"
                "        self.stepped_with = []\n\n    def epoch(self, batches):\n        acc_batches = self.acc_b\n"
                "        for images in batches:\n            self.net.zero_grad()\n"
                "            loss = self.net(images).sum()\n            loss.backward()\n"
                "            if acc_batches > 1:\n                acc_batches -= 1\n                continue\n"
                "            self.stepped_with.append(self.net.weight.grad.item())\n            self.optimizer.step()\n"
                "            acc_batches = self.acc_b\n\n\n"
                "t = Trainer(2)\nt.epoch([torch.tensor([[1.0]]), torch.tensor([[3.0]])])\n",
                line=14, runtime="silent: t.stepped_with == [3.0]"),
        # A flag computed ahead of the `continue`, a `while` loop and `set_to_none=True`.
        Invalid(_head + "step = 0\nit = iter(batches)\nwhile step < len(batches):\n    x = next(it)\n"
                "    opt.zero_grad(set_to_none=True)\n    (net(x).sum() / accum).backward()\n"
                "    do_update = (step + 1) % accum == 0\n    step += 1\n    if not do_update:\n        continue\n"
                "    stepped_with.append(net.weight.grad.item())\n    opt.step()\n",
                line=12, runtime="silent: stepped_with == [1.5, 3.5]"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        attrs = q.attrs
        if "zero_grad" not in attrs or "step" not in attrs or not ("backward" in attrs or "manual_backward" in attrs):
            return  # one pass over the attribute names; this rule runs on every keystroke
        zero_lines = [c.lineno for c in q.calls() if isinstance(c.func, ast.Attribute) and c.func.attr == "zero_grad"]
        if not zero_lines:
            return
        loops, continue_lines = [], []
        for n in q.nodes():
            t = type(n)
            if t is ast.Continue:
                continue_lines.append(n.lineno)
            elif t in LOOPS:
                loops.append(n)
        flagged: set = set()
        for loop in loops if continue_lines else ():
            # Only a loop that spans both a `zero_grad()` and a `continue` is read (two range tests).
            first, last = loop.lineno, loop.end_lineno or loop.lineno
            if not any(first < n <= last for n in zero_lines) or not any(first < n <= last for n in continue_lines):
                continue
            it = LoopIteration(loop)
            # A backward in a nested loop may not run at all (an empty group of batches, allennlp's trainer): only
            # this loop's own count.
            backwards = [b for b, _, nested in it.backwards if not nested]
            steps = [s for s, _ in it.steps]
            if not it.zeros or not it.continues or not backwards or not steps:
                continue
            for cont, guards, block in it.continues:
                # The tests of the `if`s guarding the `continue`, and the `except` clauses it stands in.
                tests = [g.test if isinstance(g, ast.If) else g for g, _ in guards]
                if any(_deliberate(t) for t in tests) or not _accumulates(tests, block, cont) \
                        or _clears_before(block, cont):
                    continue
                self._one(it.zeros, backwards, steps, cont, report, flagged)

    def _one(self, zeros: list, backwards: list, steps: list, cont: ast.Continue, report, flagged: set) -> None:
        at = pos(cont)
        for zero, owner in zeros:
            start = pos(zero)
            if start >= at or id(zero) in flagged:
                continue
            if not any(start < pos(b) < at for b in backwards):
                continue
            # A step between the zeroing and the `continue` used this iteration's gradients already.
            if any(start < pos(s) < at and _steps(s, owner, steps) for s in steps):
                continue
            later = next((s for s in steps if pos(s) > at and _steps(s, owner, steps)), None)
            if later is None:
                continue
            flagged.add(id(zero))
            c_line, c_col = report.source.span(cont)[:2]
            s_line, s_col = report.source.span(later)[:2]
            report.add(self, zero,
                       msg("This `zero_grad()` wipes the gradients kept by the `continue` at line ", c_line,
                           " before any step uses them. Zero after `step()` instead."),
                       related=[Note(c_line, c_col, "skips the step, keeping this iteration's gradients"),
                                Note(s_line, s_col, "the step then sees only the last iteration's gradients")])


def _clears_before(block: list, cont: ast.Continue) -> bool:
    """The `continue`'s own branch zeroes the gradients first (`opt.zero_grad(); continue`): dropped on purpose."""
    for stmt in block[:block.index(cont)] if cont in block else ():
        for node in ast.walk(stmt):
            if method_call(node, "zero_grad"):
                return True
            if isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.ctx, ast.Store):
                return True
    return False


def _steps(call: ast.Call, owner: str, steps: list) -> bool:
    """Does `call` step the optimizer whose gradients `owner.zero_grad()` clears? The same receiver, an AMP scaler
    or accelerator stepping it (`scaler.step(opt)`); for a model's `zero_grad()` (nothing stepped on that name),
    any `step` whose receiver or argument is spelled like an optimizer (never `env.step(action)`, `sched.step()`)."""
    receiver = dotted_name(call.func.value) or ""
    args = [dotted_name(a) or "" for a in call.args]
    if receiver == owner or owner in args:
        return True
    if any(dotted_name(s.func.value) == owner or owner in [dotted_name(a) for a in s.args] for s in steps):
        return False  # `owner` is an optimizer stepped in this loop; this call steps another one
    names = [receiver.rsplit(".", 1)[-1].lower()] + [a.rsplit(".", 1)[-1].lower() for a in args]
    return any("opt" in n and "sched" not in n for n in names)
