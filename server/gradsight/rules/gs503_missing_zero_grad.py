from __future__ import annotations

import ast
import re

from ..engine.astwalk import walk
from ..engine.report import Note
from ..engine.events import LoopEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid

_ZEROING_WORDS = ("zero_grad", "zero_", "set_to_none", "reset", "clear")


# An "EMA optimizer" (MixMatch's `WeightEMA`, `ema_optimizer.step()`) averages weights into a copy of the model and
# never reads `.grad`: there is nothing of its own to zero.
def _is_ema(name: str) -> bool:
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()
    return "ema" in re.split(r"[^a-z0-9]+", words)



class _LoopScan:
    """What GS503 reads from a loop, gathered in one walk of it (loops nest, so a walk per question per loop
    would cost the square of the nesting): its `.backward()` and `.step()` calls, the names it binds (assigned or
    bound by `with ... as`), whether it sets `x.grad = ...`, and its calls in order."""

    __slots__ = ("backwards", "steps", "bound", "sets_grad", "calls")

    def __init__(self, node: ast.AST):
        self.backwards: list = []
        self.steps: list = []
        self.bound: set = set()
        self.sets_grad = False
        self.calls: list = []
        for n in walk(node):
            t = type(n)
            if t is ast.Call:
                self.calls.append(n)
                f = n.func
                if type(f) is ast.Attribute:
                    if f.attr == "backward":
                        self.backwards.append(n)
                    elif f.attr == "step":
                        self.steps.append(n)
            elif t is ast.Assign:
                if _sets_grad(n):
                    self.sets_grad = True
                for target in n.targets:
                    self.bound.update(e.id for e in walk(target) if type(e) is ast.Name)
            elif t is ast.With or t is ast.AsyncWith:
                for item in n.items:
                    if item.optional_vars is not None:
                        self.bound.update(e.id for e in walk(item.optional_vars) if type(e) is ast.Name)


def _sets_grad(n: ast.AST) -> bool:
    """`x.grad = ...`: gradients set (or cleared) by hand."""
    return isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in n.targets)


def _call_name(n: ast.Call) -> str:
    f = n.func
    return f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else "")


def _zeroes(scan: "_LoopScan", defs: dict, scans, depth: int = 0) -> bool | None:
    """True if the code zeroes gradients, None if it calls something gradsight cannot see into. `scans(node)`
    gives a node's `_LoopScan` (kept per analysis)."""
    if scan.sets_grad:
        return True
    for n in scan.calls:
        name = _call_name(n)
        if any(w in name for w in _ZEROING_WORDS):
            return True
        if name in defs and depth < 3:
            inner = _zeroes(scans(defs[name]), defs, scans, depth + 1)
            if inner is not False:
                return inner
    return False


def _distributed_names(tree: ast.AST) -> frozenset:
    """Local names bound to `torch.distributed.autograd` (or any module under `torch.distributed`) by the file's
    top-level imports."""
    out = set()
    for n in getattr(tree, "body", ()):
        if isinstance(n, ast.Import):
            out.update(a.asname for a in n.names if a.asname and a.name.startswith("torch.distributed"))
        elif isinstance(n, ast.ImportFrom) and (n.module or "").startswith("torch.distributed"):
            out.update(a.asname or a.name for a in n.names if a.name == "autograd")
    return frozenset(out)


def _optimizer_step(call: ast.Call, tree) -> bool:
    """Whether `x.step(...)` is an optimizer's step: `opt.step()` / `scaler.step(opt)` on a name that says so, or on a
    name the file binds to a `torch.optim` optimizer or a call of something named like one (`get_optimizer(...)`).
    An environment's `env.step(action)`, a pruning importance's or a policy wrapper's `.step()` are not (AGNES,
    Torch-Pruning, autonomous-learning-library: three false alarms of the fourth fresh round)."""
    recv = ast.unparse(call.func.value)
    last = recv.rsplit(".", 1)[-1].lower()
    if "scaler" in last or "accelerator" in last:
        return bool(call.args) and any("opt" in ast.unparse(a).lower() for a in call.args)
    if call.args:
        return False
    if "opt" in last or "solver" in last or last in ("o", "trainer"):
        return True
    if tree is None:
        return False
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) \
                and any(ast.unparse(t) == recv for t in n.targets):
            callee = ast.unparse(n.value.func)
            if "optim" in callee.lower() or callee.rsplit(".", 1)[-1] in ("SGD", "Adam", "AdamW", "RMSprop",
                                                                          "Adagrad", "LBFGS"):
                return True
    return False


def _unzeroed_optimizer(scan: _LoopScan, steps: list, backwards: list, defs: dict, scans):
    """(name, backward) when the loop steps several optimizers and zeroes only some, and nothing else in it
    zeroes gradients (no module `zero_grad()`, no `.grad = None`, no helper of the file that does): the first
    optimizer never zeroed, and the last backward before its step. None otherwise."""
    # Only what is surely an optimizer counts: `.step()` without positional arguments (an environment's
    # `env.step(action)` and AMP's `scaler.step(optimizer)` take one) on a name that says so (`optimizer_D`).
    steps = [c for c in steps if not c.args and "opt" in ast.unparse(c.func.value).lower()
             and not _is_ema(ast.unparse(c.func.value))]
    stepped = list(dict.fromkeys(ast.unparse(c.func.value) for c in steps))
    if len(stepped) < 2:
        return None
    zeroed = set()
    if scan.sets_grad:
        return None
    for n in scan.calls:
        name, f = _call_name(n), n.func
        if name in defs and _zeroes(scans(defs[name]), defs, scans, 1) is not False:
            return None  # a helper that zeroes something: which optimizer it covers is not known here
        if not any(w in name for w in _ZEROING_WORDS):
            continue
        if name != "zero_grad" or not isinstance(f, ast.Attribute) or ast.unparse(f.value) not in stepped:
            return None  # zeroed some other way: gradsight cannot tell which parameters that covers
        zeroed.add(ast.unparse(f.value))
    missing = [s for s in stepped if s not in zeroed]
    if not missing or len(missing) == len(stepped):
        return None
    step = min((c for c in steps if ast.unparse(c.func.value) == missing[0]), key=lambda c: c.lineno)
    before = [b for b in backwards if b.lineno <= step.lineno]
    backward = max(before, key=lambda b: b.lineno) if before else min(backwards, key=lambda b: b.lineno)
    return missing[0], backward


class MissingZeroGrad(Rule):
    code = "GS503"
    name = "missing-zero-grad"
    severity = Severity.WARNING
    summary = "A training loop calls backward and step but never zeroes gradients: they accumulate across iterations."
    events = (LoopEvent,)
    what_it_does = ("Flags a loop that calls `.backward()` and an optimizer's `.step()` but never calls "
                    "`zero_grad()` (or sets `.grad = None`) anywhere in the loop, including in helpers it calls. "
                    "Deliberate gradient accumulation (zeroing every k steps inside the loop) is not flagged. "
                    "A loop that steps several optimizers (argument-less `.step()` on names such as `optimizer_D`) "
                    "and zeroes only some of them, with no other zeroing, is flagged for the one never zeroed. "
                    "The finding stands on the backward before which `zero_grad()` belongs, or, when that backward "
                    "is in an inner loop that accumulates gradients over micro-batches and steps nothing, on that "
                    "inner loop's header.")
    why_bad = ("Nothing raises: backward adds into `.grad`, so each step uses the sum of all gradients so far and "
               "training diverges or crawls.")
    example = "for x, y in loader:\n    loss = criterion(model(x), y)\n    loss.backward()\n    optimizer.step()"
    use_instead = ("for x, y in loader:\n    optimizer.zero_grad()\n    loss = criterion(model(x), y)\n"
                   "    loss.backward()\n    optimizer.step()")
    references = ("https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html",)
    valid = (
        Valid("import torch\nimport torch.nn as nn\na, b = nn.Linear(2, 1), nn.Linear(2, 1)\n"
              "opt_a = torch.optim.SGD(a.parameters(), lr=0.1)\nopt_b = torch.optim.SGD(b.parameters(), lr=0.1)\n"
              "for i in range(3):\n    opt_a.zero_grad()\n    a(torch.ones(3, 2)).sum().backward()\n    opt_a.step()\n"
              "    b.zero_grad()\n    loss_b = b(torch.ones(3, 2)).sum()\n    loss_b.backward()\n    opt_b.step()\n"),
        # The second optimizer is zeroed by a helper of the file.
        Valid("import torch\nimport torch.nn as nn\na, b = nn.Linear(2, 1), nn.Linear(2, 1)\n"
              "opt_a = torch.optim.SGD(a.parameters(), lr=0.1)\nopt_b = torch.optim.SGD(b.parameters(), lr=0.1)\n\n\n"
              "def step_b():\n    opt_b.zero_grad()\n    b(torch.ones(3, 2)).sum().backward()\n\n\n"
              "for i in range(3):\n    opt_a.zero_grad()\n    a(torch.ones(3, 2)).sum().backward()\n    opt_a.step()\n"
              "    step_b()\n    opt_b.step()\n"),
        # Zeroed once per optimizer step, before the micro-batches whose gradients it accumulates.
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
              "for i in range(3):\n    opt.zero_grad()\n    for k in range(2):\n"
              "        loss = m(torch.ones(3, 2)).sum() / 2\n        loss.backward()\n    opt.step()\n"),
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
              "for i in range(4):\n    m(torch.randn(3, 2)).pow(2).mean().backward()\n    if i % 2 == 1:\n"
              "        opt.step()\n        opt.zero_grad()\n"),
        # An environment's or a pruning importance's `.step()` is not an optimizer's (AGNES' Grad-CAM loop reads
        # the input's gradient through a hook; nothing is stepped).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Env:\n    def step(self, action):\n"
              "        return torch.randn(1, 4)\n\n\nmodel = nn.Linear(4, 2)\nenv = Env()\nobs = torch.randn(1, 4)\n"
              "for t in range(3):\n    x = obs.clone().requires_grad_()\n    out = model(x)\n"
              "    out[0, out.argmax()].backward()\n    saliency = x.grad.abs()\n"
              "    obs = env.step(out.argmax().item())\n"),
        # An "EMA optimizer" (MixMatch's `WeightEMA`) steps beside the real one and never reads `.grad`.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass WeightEMA:\n    def __init__(self, model, ema_model):\n"
              "        self.params = list(model.parameters())\n        self.ema_params = list(ema_model.parameters())\n\n"
              "    def step(self):\n        with torch.no_grad():\n"
              "            for p, e in zip(self.params, self.ema_params):\n                e.mul_(0.9).add_(p * 0.1)\n\n\n"
              "model, ema_model = nn.Linear(2, 1), nn.Linear(2, 1)\n"
              "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nema_optimizer = WeightEMA(model, ema_model)\n"
              "for i in range(3):\n    loss = model(torch.randn(3, 2)).pow(2).mean()\n    optimizer.zero_grad()\n"
              "    loss.backward()\n    optimizer.step()\n    ema_optimizer.step()\n"),
        # A meta-learning inner optimizer bound by `with` is new for each task; it never touches `.grad`.
        Valid("import contextlib\nimport torch\n\n\nclass Inner:\n    def __init__(self, w):\n        self.w = w\n\n"
              "    def step(self, loss):\n        (g,) = torch.autograd.grad(loss, [self.w], create_graph=True)\n"
              "        self.w = self.w - 0.1 * g\n\n\n@contextlib.contextmanager\ndef inner(w):\n    yield Inner(w)\n\n\n"
              "w = torch.ones(2, requires_grad=True)\nfor task in range(3):\n    with inner(w) as opt:\n"
              "        opt.step((opt.w * 2).sum())\n        (opt.w ** 2).sum().backward()\n"),
    )
    invalid = (
        # Two optimizers, only one zeroed (idinvert's real bug): the other's gradients pile up.
        Invalid("import torch\nimport torch.nn as nn\na, b = nn.Linear(2, 1), nn.Linear(2, 1)\n"
                "opt_a = torch.optim.SGD(a.parameters(), lr=0.1)\nopt_b = torch.optim.SGD(b.parameters(), lr=0.1)\n"
                "for i in range(3):\n    opt_a.zero_grad()\n    a(torch.ones(3, 2)).sum().backward()\n    opt_a.step()\n"
                "    loss_b = b(torch.ones(3, 2)).sum()\n    loss_b.backward()\n    opt_b.step()\n",
                line=11, runtime="silent: bool((b.bias.grad == 9).all())"),
        Invalid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
                "for i in range(3):\n    loss = m(torch.ones(3, 2)).sum()\n    loss.backward()\n    opt.step()\n",
                line=7, runtime="silent: bool((m.bias.grad == 9).all())"),
        # Gradients accumulated over micro-batches by an inner loop: the `zero_grad()` goes before that loop (one
        # before the backward would keep only the last micro-batch), so the finding stands on its header.
        Invalid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
                "for i in range(3):\n    for k in range(2):\n        loss = m(torch.ones(3, 2)).sum() / 2\n"
                "        loss.backward()\n    opt.step()\n",
                line=6, runtime="silent: bool((m.bias.grad == 9).all())"),
    )

    def __init__(self) -> None:
        # A loop is reported on every reporting pass that reaches it (once per call context): the verdict depends
        # only on the syntax, so it is computed once per analysis (rule instances live for one analysis).
        # id(loop) -> (loop, verdict, whether the verdict read the whole tree); the node is kept so a reused id
        # never matches. A reused verdict reads the tree again where it did, so the driver's record of which
        # units depend on the whole tree stays exact.
        self._seen: dict = {}
        self._defs: dict = {}  # id(tree) -> (tree, {function name: node})
        self._scans: dict = {}  # id(node) -> (node, _LoopScan) of loops and helper functions

    def _scan(self, node: ast.AST) -> _LoopScan:
        hit = self._scans.get(id(node))
        if hit is None or hit[0] is not node:
            hit = self._scans[id(node)] = (node, _LoopScan(node))
        return hit[1]

    def check(self, event: LoopEvent, report) -> None:
        loop = event.node
        hit = self._seen.get(id(loop))
        if hit is not None and hit[0] is loop:
            verdict, read = hit[1], hit[2]
            if read:
                _ = report.tree
        else:
            before = report.tree_reads
            verdict = self._verdict(loop, report)
            self._seen[id(loop)] = (loop, verdict, report.tree_reads != before)
        if verdict is None:
            return
        name, backward = verdict
        if name is not None:
            # One of several optimizers is never zeroed: `name`, with the backward before its step.
            line = backward.lineno
            text = report.source.line_text(line)
            start = len(text) - len(text.lstrip()) + 1
            report.add(self, loop,
                       f"`{name}` is stepped but never zeroed in this loop, so this backward adds to its earlier "
                       f"gradients. Call `{name}.zero_grad()` before it.",
                       span=(line, start, line, len(text.rstrip()) + 1))
            return
        # The fix goes next to the backward (a `zero_grad()` just before it, or just after the step): the finding
        # stands on the loop's first backward statement, with the loop in `related`. Where that backward is in a
        # loop of its own inside this one that steps nothing (gradients accumulated over micro-batches), a
        # `zero_grad()` before the backward would discard the accumulation: it goes before that inner loop, and the
        # finding stands on the inner loop's header.
        inner = self._accumulation_loop(loop, backward)
        line = backward.lineno if inner is None else inner.lineno
        text = report.source.line_text(line)
        start = len(text) - len(text.lstrip()) + 1
        loop_line, loop_col, _, _ = report.source.span(loop)
        message = ("Gradients are never zeroed in this loop, so this backward adds to all earlier steps' gradients. "
                   "Call `optimizer.zero_grad()` before it.") if inner is None else (
                   "Gradients are never zeroed in the enclosing loop, so this loop's backwards add to earlier steps' "
                   "gradients. Call `optimizer.zero_grad()` before this loop.")
        report.add(self, loop, message,
                   related=[Note(loop_line, loop_col, "the loop that never zeroes the gradients")],
                   span=(line, start, line, len(text.rstrip()) + 1))

    def _accumulation_loop(self, loop: ast.AST, backward: ast.Call):
        """The outermost loop inside `loop` that holds `backward` and no `.step()` call, or None."""
        block = loop.body
        while block:
            holder = next((s for s in block if s.lineno <= backward.lineno <= (s.end_lineno or s.lineno)
                           and any(n is backward for n in walk(s))), None)
            if holder is None or isinstance(holder, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return None
            if isinstance(holder, (ast.For, ast.AsyncFor, ast.While)):
                return None if self._scan(holder).steps else holder
            blocks = [getattr(holder, f, None) or [] for f in ("body", "orelse", "finalbody")]
            blocks += [h.body for h in getattr(holder, "handlers", ())] + [c.body for c in getattr(holder, "cases", ())]
            block = next((b for b in blocks if any(n is backward for s in b for n in walk(s))), None)
        return None

    def _verdict(self, loop: ast.AST, report):
        """(None, the first backward): nothing in the loop zeroes gradients; (optimizer name, the backward before
        its step): that optimizer is never zeroed while others are; None: nothing to report."""
        # `dist_autograd.backward(ctx, ...)` writes gradients into a per-iteration context, never into `.grad`.
        scan = self._scan(loop)
        backwards = scan.backwards
        # Only a call on a plain name with a context argument can be distributed: read the imports only then.
        if any(isinstance(c.func.value, ast.Name) and len(c.args) >= 2 for c in backwards) and report.tree is not None:
            distributed = _distributed_names(report.tree)
            backwards = [c for c in backwards
                         if not (isinstance(c.func.value, ast.Name) and c.func.value.id in distributed)]
        if not backwards:
            return None
        # The optimizer must outlive the iteration: one built inside the loop (assigned, or bound by a `with`
        # such as a meta-learning inner optimizer) is a fresh optimizer each time.
        built_inside = scan.bound
        steps = [c for c in scan.steps if isinstance(c.func.value, (ast.Name, ast.Attribute))
                 and not (isinstance(c.func.value, ast.Name) and c.func.value.id in built_inside)
                 and "sched" not in ast.unparse(c.func.value).lower() and _optimizer_step(c, report.tree)]
        if not steps:
            return None
        tree = report.tree
        defs = {}
        if tree is not None:
            # The file's functions by name, collected once per tree (one walk, not one per loop).
            hit = self._defs.get(id(tree))
            if hit is None or hit[0] is not tree:
                found: dict = {}
                for n in walk(tree):
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        found.setdefault(n.name, n)
                hit = self._defs[id(tree)] = (tree, found)
            defs = hit[1]
        if _zeroes(scan, defs, self._scan) is False:
            return None, min(backwards, key=lambda c: (c.lineno, c.col_offset))
        return _unzeroed_optimizer(scan, steps, backwards, defs, self._scan)
