from __future__ import annotations

import ast
import re

from ..engine.astwalk import children, walk
from ..engine.report import Note
from ..engine.report import text as msg
from ..engine.events import LoopEvent
from ..findings import Severity
from ._calls import TORCH_OPTIMIZERS, call_word
from .base import Invalid, Rule, Valid

_ZEROING_WORDS = ("zero_grad", "zero_", "set_to_none", "reset", "clear")


# An "EMA optimizer" (MixMatch's `WeightEMA`, `ema_optimizer.step()`) averages weights into a copy of the model and
# never reads `.grad`: there is nothing of its own to zero.
def _is_ema(name: str) -> bool:
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()
    return "ema" in re.split(r"[^a-z0-9]+", words)



# A mean-teacher loop whose teacher "optimizer" is a plain class of the file, made only on some runs (`None`
# otherwise) and stepped under `if teacher_optim is not None:` (cutmix-semisup-seg; bench/fresh26-false/04). `{cls}`,
# `{body}`: its name and its `step()`'s loop body; `{freeze}`: what follows the nets' construction.
_TEACHER = ("import sys\n\nimport torch\nimport torch.nn as nn\n\n\nclass {cls}:\n"
            "    def __init__(self, target_net, source_net, alpha):\n"
            "        self.target_params = list(target_net.parameters())\n"
            "        self.source_params = list(source_net.parameters())\n        self.alpha = alpha\n"
            "\n    def step(self):\n"
            "        for tgt_p, src_p in zip(self.target_params, self.source_params):\n{body}\n\n\n"
            "student, teacher = nn.Linear(2, 1), nn.Linear(2, 1){freeze}\n"
            "student_optim = torch.optim.SGD(student.parameters(), lr=0.1)\n"
            "teacher_optim = {cls}(teacher, student, 0.99) if \"--no-teacher\" not in sys.argv else None\n"
            "for step in range(3):\n    student_optim.zero_grad()\n"
            "    loss = (student(torch.ones(3, 2)) + teacher(torch.ones(3, 2))).sum()\n"
            "    loss.backward()\n    student_optim.step()\n    if teacher_optim is not None:\n"
            "        teacher_optim.step()\n")


class _LoopScan:
    """What GS503 reads from a loop, gathered in one walk of it (loops nest, so a walk per question per loop
    would cost the square of the nesting): its `.backward()` and `.step()` calls, the names it binds (assigned or
    bound by `with ... as`), whether it sets `x.grad = ...`, and its calls in order."""

    __slots__ = ("backwards", "steps", "bound", "sets_grad", "calls", "branches", "contexts", "changed")

    def __init__(self, node: ast.AST, walker=walk):
        self.backwards: list = []
        self.steps: list = []
        self.bound: set = set()
        self.sets_grad = False
        self.calls: list = []
        self.branches: list = []  # its `if`s with an `else`, in walk order
        self.contexts: set = set()  # ids of the calls that make a `with` statement's context manager
        self.changed = None  # (names, attribute spellings) the loop may change: `_loop_changes`, computed once
        for n in walker(node):  # the analysis's shared walk of the loop (`Source.walk`)
            t = type(n)
            if t is ast.If:
                if n.orelse:
                    self.branches.append(n)
            elif t is ast.Call:
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
                    if type(target) is ast.Name:
                        self.bound.add(target.id)
                    else:
                        self.bound.update(e.id for e in walk(target) if type(e) is ast.Name)
            elif t is ast.With or t is ast.AsyncWith:
                for item in n.items:
                    if isinstance(item.context_expr, ast.Call):
                        self.contexts.add(id(item.context_expr))
                    if item.optional_vars is not None:
                        self.bound.update(e.id for e in walk(item.optional_vars) if type(e) is ast.Name)


def _sets_grad(n: ast.AST) -> bool:
    """`x.grad = ...`: gradients set (or cleared) by hand."""
    return isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in n.targets)


def _call_name(n: ast.Call) -> str:
    f = n.func
    return f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else "")


class _FileDefs:
    """The file's functions, collected in one walk per tree: every `def` by name (`funcs`, the first of a name),
    those not defined directly in a class body (`plain`: what a bare-name call can mean), the class each method is
    defined in (`owner`), and the attribute names the file stores on objects (`stored`: `self.model = ...` makes
    `self.model(x)` a call of a stored value, never an inherited method)."""

    __slots__ = ("funcs", "plain", "owner", "stored", "classes")

    def __init__(self, tree) -> None:
        self.funcs: dict = {}
        self.plain: dict = {}
        self.owner: dict = {}
        self.stored: set = set()
        self.classes: list = []
        if tree is None:
            return
        in_class = set()
        for n in walk(tree):
            t = type(n)
            if t is ast.ClassDef:
                self.classes.append(n)
                for f in n.body:
                    if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        in_class.add(id(f))
                        self.owner[id(f)] = n
            elif t is ast.FunctionDef or t is ast.AsyncFunctionDef:
                self.funcs.setdefault(n.name, n)
                if id(n) not in in_class:
                    self.plain.setdefault(n.name, n)
            elif t is ast.Attribute and type(n.ctx) is ast.Store:
                self.stored.add(n.attr)

    def resolve(self, call: ast.Call):
        """The file's function a call runs, by name: a bare name only a function outside class bodies (an imported
        `trades_loss(...)` is not the method `trades_loss` of a class), `x.name(...)` any `def` of that name."""
        f = call.func
        if isinstance(f, ast.Name):
            return self.plain.get(f.id)
        return self.funcs.get(f.attr) if isinstance(f, ast.Attribute) else None

    def enclosing_class(self, node: ast.AST):
        """The class whose body holds `node` (by line span), innermost; None outside classes."""
        best = None
        for c in self.classes:
            if c.lineno <= node.lineno <= (c.end_lineno or c.lineno) and (best is None or c.lineno > best.lineno):
                best = c
        return best


# Parts of a callee's name that say it does not zero gradients although it is handed the optimizer
# (`adjust_learning_rate(optimizer, epoch)`, `save_checkpoint(model, optimizer)`, `scaler.step(optimizer)`).
_NOT_ZEROING_PARTS = frozenset({"lr", "learning", "schedule", "scheduler", "warmup", "log", "logger", "print",
                                "save", "checkpoint", "summary", "writer", "unscale", "clip", "step", "scale",
                                "update", "state", "dict", "load"})
# Methods every `nn.Module` has, none of which zeroes an optimizer's gradients.
_MODULE_METHODS = frozenset({"train", "eval", "parameters", "named_parameters", "modules", "named_modules",
                             "children", "state_dict", "load_state_dict", "to", "cuda", "cpu", "forward", "float",
                             "half", "double", "apply", "requires_grad_", "register_buffer", "log", "log_dict"})
_PLAIN_BASES = frozenset({"object", "Module", "nn.Module", "torch.nn.Module"})


def _name_parts(name: str) -> set:
    return set(re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower())) - {""}


def _optimizer_like(node: ast.AST, opts: frozenset) -> bool:
    """An argument that is the optimizer: a spelling the loop steps (`self.optimizer`), or a name that says so."""
    if not isinstance(node, (ast.Name, ast.Attribute)):
        return False
    text = ast.unparse(node)
    if text in opts:
        return True
    last = text.rsplit(".", 1)[-1].lower()
    return "optim" in last or last == "opt" or last.startswith("opt_") or last.endswith("_opt")


def _may_zero_unseen(call: ast.Call, defs: "_FileDefs", opts: frozenset, owner, kind=None) -> bool:
    """A call gradsight cannot see into that may zero the optimizer's gradients: it is handed the optimizer
    (`trades_loss(self.model, x, y, self.optimizer)`, imported), or it is a method of the object that holds the
    stepped optimizer and defined nowhere in this file (`self.mart_loss(x, y)` inherited from a trainer base class in
    another file, with `self.optimizer.step()` in the loop). Names that say otherwise (`adjust_learning_rate`,
    `scaler.step`) and `nn.Module`'s own methods do not count. `kind`: what the engine found the call to be
    (`_classify`: "attribute", "known", "unseen"), None where the engine does not know the receiver."""
    name = _call_name(call)
    if not name or _name_parts(name) & _NOT_ZEROING_PARTS:
        return False
    if any(_optimizer_like(a, opts) for a in call.args) or any(_optimizer_like(k.value, opts) for k in call.keywords):
        return True
    f = call.func
    if kind in ("attribute", "known") or not isinstance(f, ast.Attribute) or name in _MODULE_METHODS:
        return False
    recv = ast.unparse(f.value)
    if not any(o.startswith(recv + ".") for o in opts):
        return False
    if kind == "unseen":
        return True  # the engine knows the object's class: `m` is neither stored on it nor defined in code it sees
    if recv != "self" or name in defs.stored:
        return False
    # Without the engine's word: only an inherited method, the class having a base not seen here (a trainer base).
    return owner is not None and any(ast.unparse(b) not in _PLAIN_BASES for b in owner.bases)


def _classify(call: ast.Call, objects: dict) -> tuple:
    """(kind, method node) of `r.m(...)` where the engine knows `r`'s object (`LoopEvent.receivers`): "attribute"
    (a value stored on it: `self.model(x)`), "method" (of its class or a base, also in another file), "unseen" (neither,
    and the class has a base gradsight cannot see), "known" (neither otherwise); (None, None) where it does not."""
    f = call.func
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in objects):
        return None, None
    attrs, methods, unseen = objects[f.value.id]
    if f.attr in attrs:
        return "attribute", None
    if f.attr in methods:
        return "method", methods[f.attr]
    return ("unseen" if unseen else "known"), None


def _steps_without_gradients(call: ast.Call, objects: dict) -> bool:
    """`r.step()` where the engine knows `r`'s class (`LoopEvent.receivers`, also from another file) and that class's
    own `step` reads no gradient: no `.grad`, no `zero_grad`, no other `.step(...)` and no `super()` call in it (a
    weight-averaging "optimizer" such as cutmix-semisup-seg's `EMAWeightOptimizer`, whose `step()` mixes the
    student's weights into the teacher's: bench/fresh26-false/04). It has no gradients to zero."""
    kind, method = _classify(call, objects)
    if kind != "method" or method is None:
        return False
    for n in walk(method):
        if isinstance(n, ast.Attribute) and n.attr in ("grad", "zero_grad", "step", "_grad"):
            return False
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "super":
            return False
    return True


def _same_object(call: ast.Call, target: ast.AST, objects: dict) -> dict:
    """What is known inside a method run on `r` (`r.m(...)`): its first parameter is that object."""
    params = target.args.posonlyargs + target.args.args
    return {params[0].arg: objects[call.func.value.id]} if params else {}


def _zeroes(scan: "_LoopScan", defs: "_FileDefs", scans, depth: int = 0, opts: frozenset = frozenset(),
            owner=None, objects: dict | None = None, loose: bool = False) -> bool | None:
    """True if the code zeroes gradients, None if it calls something gradsight cannot see into that may
    (`_may_zero_unseen`), else False. `scans(node)` gives a node's `_LoopScan` (kept per analysis); `opts` are the
    spellings of the optimizers the loop steps, `owner` the class the code stands in, `objects` what the engine knows
    of the objects it calls methods on (`LoopEvent.receivers`: name -> (stored attributes, methods by name, whether a
    base is unseen); a base class's method in another file is then read like one of this file). `loose` (where a
    `zero_grad()` before the loop shows the gradients are meant to be zeroed there): a module's own method on another
    object (`m.train()`) is not taken for the file's `def` of that name, a `with` statement's context manager
    (`with self.train_context(ctx):`) is not taken to zero gradients, and of the code it cannot see, only calls handed
    the optimizer are (not an inherited method of the object that holds it)."""
    if scan.sets_grad:
        return True
    objects = objects or {}
    unseen = False
    for n in scan.calls:
        name = _call_name(n)
        if any(w in name for w in _ZEROING_WORDS):
            return True
        kind, target = _classify(n, objects)
        inner_objects = _same_object(n, target, objects) if kind == "method" else {}
        if loose and (id(n) in scan.contexts or (kind is None and name in _MODULE_METHODS and _not_self(n))):
            continue
        if kind is None:
            target = defs.resolve(n)
        if target is not None:
            if depth < 3:
                inner = _zeroes(scans(target), defs, scans, depth + 1, opts, defs.owner.get(id(target), owner),
                                inner_objects, loose)
                if inner is True:
                    return True
                unseen = unseen or inner is None
        elif not unseen and (_handed_optimizer(n, opts) if loose else _may_zero_unseen(n, defs, opts, owner, kind)):
            unseen = True
    return None if unseen else False


def _handed_optimizer(call: ast.Call, opts: frozenset) -> bool:
    """A call gradsight cannot see into that is handed the optimizer (and is not named for something else)."""
    name = _call_name(call)
    if not name or _name_parts(name) & _NOT_ZEROING_PARTS:
        return False
    return any(_optimizer_like(a, opts) for a in call.args) or any(_optimizer_like(k.value, opts) for k in call.keywords)


def _not_self(call: ast.Call) -> bool:
    f = call.func
    return isinstance(f, ast.Attribute) and not (isinstance(f.value, ast.Name) and f.value.id == "self")


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


# "optim", "optimizer", "get_optim": a name for an optimizer; not the verb ("only_optimize_lora_parameters",
# "optimization": BELLE's LoRA helper returns the model; bench/fresh27-false/01).
_OPTIMIZER_WORD = re.compile(r"optim(?!i[sz](?!er))")


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
            if _OPTIMIZER_WORD.search(callee.lower()) or callee.rsplit(".", 1)[-1] in ("SGD", "Adam", "AdamW", "RMSprop",
                                                                          "Adagrad", "LBFGS"):
                return True
    return False


def _call_may_zero(n: ast.Call, objects, defs, scans, opts, owner) -> bool:
    """A call in the loop that may zero gradients this rule cannot attribute: a helper of this file that zeroes
    something (which optimizer it covers is not known here), or code gradsight cannot see that is handed the
    optimizer or holds it (it may zero any)."""
    kind, target = _classify(n, objects)
    inner_objects = _same_object(n, target, objects) if kind == "method" else {}
    if kind is None:
        target = defs.resolve(n)
    if target is not None and _zeroes(scans(target), defs, scans, 1, opts, defs.owner.get(id(target), owner),
                                      inner_objects) is not False:
        return True
    return target is None and _may_zero_unseen(n, defs, opts, owner, kind)


def _unzeroed_optimizer(scan: _LoopScan, steps: list, backwards: list, defs: _FileDefs, scans, opts: frozenset,
                        owner, objects: dict):
    """(name, backward) when the loop steps several optimizers and zeroes only some, and nothing else in it
    zeroes gradients (no module `zero_grad()`, no `.grad = None`, no helper of the file that does): the first
    optimizer never zeroed, and the last backward before its step. None otherwise."""
    # Only what is surely an optimizer counts: `.step()` without positional arguments (an environment's
    # `env.step(action)` and AMP's `scaler.step(optimizer)` take one) on a name that says so (`optimizer_D`).
    steps = [c for c in steps if not c.args and "opt" in ast.unparse(c.func.value).lower()
             and not _is_ema(ast.unparse(c.func.value)) and not _steps_without_gradients(c, objects)]
    stepped = list(dict.fromkeys(ast.unparse(c.func.value) for c in steps))
    if len(stepped) < 2:
        return None
    zeroed = set()
    if scan.sets_grad:
        return None
    for n in scan.calls:
        name, f = _call_name(n), n.func
        if _call_may_zero(n, objects, defs, scans, opts, owner):
            return None
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


def _steps_optimizer(call: ast.Call, opt: str) -> bool:
    """`opt.step()`, or AMP's `scaler.step(opt)`."""
    f = call.func
    if not (isinstance(f, ast.Attribute) and f.attr == "step"):
        return False
    return (not call.args and ast.unparse(f.value) == opt) or any(ast.unparse(a) == opt for a in call.args)


def _block_calls(stmts: list):
    """The calls of a branch's own statements, `with` bodies included: those that run whenever the branch does."""
    for st in stmts:
        if isinstance(st, (ast.With, ast.AsyncWith)):
            yield from _block_calls(st.body)
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            yield st.value


def _fixed_in_loop(test: ast.AST, loop: ast.AST, scan: _LoopScan) -> bool:
    """Whether an `if` test inside `loop` has the same value on every iteration: no call in it, and nothing it reads is
    the loop's target or assigned in the loop (`use_amp`, `self.scaler is not None`; not `i < n - 1`)."""
    if any(isinstance(n, ast.Call) for n in walk(test)):
        return False
    if scan.changed is None:
        scan.changed = _loop_changes(loop, scan)
    changed, stored = scan.changed
    for n in walk(test):
        if isinstance(n, ast.Name) and n.id in changed:
            return False
        if isinstance(n, ast.Attribute) and ast.unparse(n) in stored:
            return False
    return True


def _loop_changes(loop: ast.AST, scan: _LoopScan) -> tuple:
    """(names, attribute spellings) that `loop` may change on an iteration: its target, names it binds (assigned, by
    `with`, by an inner loop, by `+=`, by `:=`) and the attributes it assigns or augments."""
    names = set(scan.bound)
    stored = set()
    for n in walk(loop):
        t = type(n)
        if t is ast.Assign or t is ast.AugAssign or t is ast.AnnAssign:
            for target in (n.targets if t is ast.Assign else [n.target]):
                if type(target) is ast.Attribute:
                    stored.add(ast.unparse(target))
                elif t is not ast.Assign:
                    names.update(e.id for e in walk(target) if type(e) is ast.Name)
        elif t is ast.For or t is ast.AsyncFor or t is ast.NamedExpr:
            names.update(e.id for e in walk(n.target) if type(e) is ast.Name)
    return names, stored


def _one_branch_zero(loop: ast.AST, scan: _LoopScan, defs: _FileDefs, scans, opts: frozenset, owner, objects: dict):
    """(zero, step) when the loop's only zeroing is `opt.zero_grad()` after `opt.step()` on one branch of an
    `if`/`else` on a test fixed for the whole loop (`_fixed_in_loop`: a configuration, not the last iteration) whose
    other branch steps the same optimizer (`scaler.step(opt)` under AMP, `opt.step()` otherwise)
    and never zeroes: on that path the gradients pile up. Nothing else in the loop may zero gradients (no other
    zeroing call, no `.grad = ...`, no helper that zeroes, no code it cannot see handed the optimizer). None
    otherwise."""
    if scan.sets_grad:
        return None
    if not any(type(c.func) is ast.Attribute and c.func.attr == "zero_grad"
               for branch in scan.branches for here in (branch.body, branch.orelse) for c in _block_calls(here)):
        return None  # no `if`/`else` branch zeroes: nothing below can match (asked first: it is the cheap question)
    zeros = []
    for n in scan.calls:
        name = _call_name(n)
        if _call_may_zero(n, objects, defs, scans, opts, owner):
            return None
        if any(w in name for w in _ZEROING_WORDS):
            if name != "zero_grad" or not isinstance(n.func, ast.Attribute) or n.args or n.keywords:
                return None
            zeros.append(n)
    if not zeros or len({ast.unparse(z.func.value) for z in zeros}) != 1:
        return None
    opt = ast.unparse(zeros[0].func.value)
    for branch in scan.branches:
        if not _fixed_in_loop(branch.test, loop, scan):
            continue
        for here, other in ((branch.body, branch.orelse), (branch.orelse, branch.body)):
            own = list(_block_calls(here))
            if not all(any(z is c for c in own) for z in zeros):
                continue
            stepped = [c for c in own if _steps_optimizer(c, opt)]
            if not stepped or min(c.lineno for c in stepped) > min(z.lineno for z in zeros):
                continue
            if any(isinstance(st, (ast.Break, ast.Return, ast.Raise, ast.Continue)) for st in other):
                continue
            step = next((c for c in _block_calls(other) if _steps_optimizer(c, opt)), None)
            if step is not None:
                return min(zeros, key=lambda z: z.lineno), step
    return None


def _rebuilt_optimizers(region: ast.AST, loop: ast.AST, scan: _LoopScan, steps: list) -> dict:
    """Names the loop binds only to a new `torch.optim` optimizer (`optimizer = optim.SGD(list(f.parameters()) + ...)`)
    over the parameters of modules bound outside it, by name -> the constructor's statement. Such an optimizer is new
    each iteration, but the gradients live on the parameters, which outlive it: a fresh optimizer does not clear
    them (pytorch_DANN's source-only mode). An inner optimizer over a model the loop makes itself (a meta-learning
    task's copy) or bound by `with` is not one. `region`: the loop, or the statements one mode of it runs
    (`_unzeroed_mode`: the other modes' bindings do not matter there); `steps`: the `.step` calls of the region. The
    cheap questions first (the walks below read the whole region): a `.step()` without arguments on a name the loop
    binds, and a `torch.optim` constructor called in the loop."""
    if not any(type(c.func.value) is ast.Name and c.func.value.id in scan.bound and not c.args and not c.keywords
               for c in steps) or not any(call_word(c.func) in TORCH_OPTIMIZERS for c in scan.calls):
        return {}
    out: dict = {}
    bad: set = set()
    target = getattr(loop, "target", None)
    outer_bound = set(scan.bound) | ({n.id for n in walk(target) if type(n) is ast.Name} if target is not None else set())
    for n in walk(region):
        if type(n) is not ast.Assign:
            continue
        names = [t.id for t in n.targets if type(t) is ast.Name]
        value = n.value
        if not (len(n.targets) == 1 and names and type(value) is ast.Call and call_word(value.func) in TORCH_OPTIMIZERS):
            bad.update(e.id for t in n.targets for e in walk(t) if type(e) is ast.Name)
            continue
        owners = {a.func.value.id for a in walk(value) if type(a) is ast.Call and type(a.func) is ast.Attribute
                  and a.func.attr in ("parameters", "named_parameters") and type(a.func.value) is ast.Name}
        if not owners or owners & outer_bound:
            bad.add(names[0])
            continue
        out.setdefault(names[0], n)
    for n in walk(region):  # also bound by `with ... as`, a `for` target, an augmented assignment...
        if type(n) in (ast.For, ast.AsyncFor, ast.AugAssign, ast.AnnAssign, ast.NamedExpr) and n is not loop:
            bad.update(e.id for e in walk(n.target) if type(e) is ast.Name)
        elif type(n) in (ast.With, ast.AsyncWith):
            bad.update(e.id for item in n.items if item.optional_vars is not None
                       for e in walk(item.optional_vars) if type(e) is ast.Name)
    return {k: v for k, v in out.items() if k not in bad}


def _breaks_after(loop: ast.AST, call: ast.Call) -> bool:
    """Whether the statement holding `call` is followed, in its own block, by a `break` of `loop` (not of a loop
    nested in it): `opt.step(); break` steps once per entry into the loop."""
    todo = [loop.body]
    while todo:
        block = todo.pop()
        for i, stmt in enumerate(block):
            if stmt.lineno <= call.lineno <= (stmt.end_lineno or stmt.lineno) and not isinstance(
                    stmt, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if any(isinstance(later, ast.Break) for later in block[i + 1:]):
                    return True
            if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef,
                                 ast.ClassDef)):
                continue  # a `break` there ends another loop
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(stmt, field, None)
                if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                    todo.append(sub)
            for h in getattr(stmt, "handlers", ()):
                todo.append(h.body)
    return False


def _arms(stmts: list, loop: ast.AST, scan: _LoopScan):
    """(`if` statement, arm, how the arm's condition reads) for each arm of the `if`/`elif`/`else` chains among `stmts` (a loop's own statements)
    whose tests are fixed for the whole loop (`_fixed_in_loop`: a mode, a configuration): every iteration runs the
    same arm. An `elif` chain gives one arm per test and its final `else`."""
    for st in stmts:
        if type(st) is not ast.If or not _fixed_in_loop(st.test, loop, scan):
            continue
        node = st
        while True:
            yield st, node.body, f"`{ast.unparse(node.test)}`"
            rest = node.orelse
            if len(rest) == 1 and type(rest[0]) is ast.If and _fixed_in_loop(rest[0].test, loop, scan):
                node = rest[0]
                continue
            if rest:
                yield st, rest, f"the `else` of `{ast.unparse(node.test)}`"
            break


def _reach(scan: "_LoopScan", defs: "_FileDefs", scans, owner, objects: dict, opt: str, depth: int = 0,
           seen: frozenset = frozenset()) -> tuple:
    """(backward call, step call) the code runs, itself or through the functions of the file it calls (up to three
    calls down), each None where none: any `.backward()`, and `opt.step()` (or `scaler.step(opt)`) where `opt` is
    spelled `self.X` and the call is in a method reached from `owner`'s code through `self.m(...)` only (the same
    object: another function's `self.X` may be another optimizer)."""
    back = scan.backwards[0] if scan.backwards else None
    step = next((c for c in scan.steps if _steps_optimizer(c, opt)), None)
    if (back is not None and step is not None) or depth >= 3:
        return back, step
    for n in scan.calls:
        kind, target = _classify(n, objects)
        inner_objects = _same_object(n, target, objects) if kind == "method" else {}
        if kind is None:
            target = defs.resolve(n)
        if target is None or id(target) in seen:
            continue
        f = n.func
        same = isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" \
            and (kind == "method" or defs.owner.get(id(target)) is owner)
        b, s = _reach(scans(target), defs, scans, owner if same else None, inner_objects, opt if same else "",
                      depth + 1, seen | {id(target)})
        back = back or (b and n)
        step = step or (s and n)
        if back is not None and step is not None:
            break
    return back, step


def _discarded_training(loop: ast.AST, steps: list, tree) -> bool:
    """Whether the loop trains only what its function builds and then throws away: every optimizer it steps is a
    local made once from `m.parameters()` of modules `m` the function itself builds, and after the loop nothing reads
    those names, while before it they are only called or asked for attributes (`m(x)`, `m.to(dev)`,
    `m.parameters()`): not returned, stored, handed on or closed over. A timing or memory benchmark (Pyraformer's
    attention tests: forward, backward, step, a thousand times): the accumulated gradients change weights that
    nobody sees. A model that is a parameter, an attribute or a global is never such a case."""
    if tree is None:
        return False
    fns = [n for n in walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
           and n.lineno <= loop.lineno <= (n.end_lineno or n.lineno)]
    if not fns:
        return False
    fn = max(fns, key=lambda n: n.lineno)
    if not all(isinstance(c.func.value, ast.Name) for c in steps):
        return False
    opts = {c.func.value.id for c in steps}
    args = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
    nodes = walk(fn)

    parents = {id(c): n for n in nodes for c in children(n)}

    def made_once(name: str):
        """The call the function binds `name` to, when that is its only binding (`m = Net(...)`)."""
        stores = [n for n in nodes if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)]
        if len(stores) != 1:
            return None
        stmt = parents.get(id(stores[0]))
        if not (isinstance(stmt, ast.Assign) and stmt.targets == [stores[0]] and isinstance(stmt.value, ast.Call)):
            return None
        return stmt.value

    owners = set()
    for opt in opts:
        call = made_once(opt)
        if call is None or opt in args:
            return False
        found = {n.value.id for n in walk(call) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                 and n.attr in ("parameters", "named_parameters")}
        if not found:
            return False
        owners |= found
    if owners & args or any(made_once(o) is None for o in owners):
        return False
    names = owners | opts
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) and names & set(n.names) for n in nodes):
        return False
    end = loop.end_lineno or loop.lineno
    for n in nodes:
        if not (isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load)):
            continue
        if n.lineno > end:
            return False  # read after the loop: what it trained may be used
        parent = parents.get(id(n))
        if not (isinstance(parent, ast.Attribute) or isinstance(parent, ast.Call) and parent.func is n):
            return False  # handed on, stored, returned
        up = parent
        while up is not None and up is not fn:
            if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return False  # closed over
            up = parents.get(id(up))
    return True


def _zero_grad_before(loop: ast.AST, tree, wanted, stop_at_work: bool = False) -> "ast.Call | None":
    """The last `X.zero_grad()` statement before `loop` in the same block whose receiver's spelling `wanted`
    accepts, with no loop between them (and, with `stop_at_work`, no backward or step either); None otherwise."""
    for node in walk(tree) if tree is not None else ():
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list) or not any(st is loop for st in block):
                continue
            k = next(i for i, st in enumerate(block) if st is loop)
            for st in reversed(block[:k]):
                if isinstance(st, (ast.For, ast.AsyncFor, ast.While)):
                    return None
                if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
                    f = st.value.func
                    if isinstance(f, ast.Attribute) and f.attr == "zero_grad" and not st.value.args \
                            and wanted(ast.unparse(f.value)):
                        return st.value
                # A backward or step between them (a warm-up step) is what that `zero_grad()` was for.
                if stop_at_work and any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                                        and n.func.attr in ("backward", "step") for n in walk(st)):
                    return None
            return None
    return None


def _zeroed_before(loop: ast.AST, tree) -> "ast.Call | None":
    """The `self.X.zero_grad()` statement that comes before `loop` in the same block, the last one, where no other
    statement between them is a loop; None otherwise."""
    return _zero_grad_before(loop, tree, lambda spelled: spelled.startswith("self."))


def _zeroed_just_before(loop: ast.AST, report, opts: frozenset) -> "ast.Call | None":
    """`opt.zero_grad()` (an optimizer the loop steps) as a statement before `loop` in the same block, with no loop,
    backward or step between them; None otherwise. The lines before the loop are looked at first, so the tree is
    searched only where such a statement may stand."""
    lines = report.source.lines
    indent = len(lines[loop.lineno - 1]) - len(lines[loop.lineno - 1].lstrip())
    prev = loop.lineno - 2
    while prev >= 0:
        text = lines[prev]
        if text.strip() and not text.lstrip().startswith("#"):
            if len(text) - len(text.lstrip()) < indent:
                return None  # the start of the loop's block
            if "zero_grad" in text:
                break
        prev -= 1
    else:
        return None
    return _zero_grad_before(loop, report.tree, lambda spelled: spelled in opts, stop_at_work=True)


def _rebuilt_before(steps: list, backward: ast.Call, rebuilt: dict):
    """The statement that makes the first stepped optimizer anew in the loop (`_rebuilt_optimizers`), where it comes
    before `backward`; None otherwise."""
    for c in sorted(steps, key=lambda c: (c.lineno, c.col_offset)):
        recv = c.func.value
        ctor = rebuilt.get(recv.id) if type(recv) is ast.Name else None
        if ctor is not None and ctor.lineno <= backward.lineno:
            return ctor
    return None


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
                    "inner loop's header. A loop whose only zeroing is `opt.zero_grad()` after `opt.step()` on one "
                    "branch of an `if`/`else` on a configuration (a test nothing in the loop changes) whose other branch "
                    "also steps `opt` (`scaler.step(opt)` under AMP) is flagged on that `zero_grad()`. "
                    "`self.opt.zero_grad()` called once just before a loop that itself calls no backward, but whose "
                    "iterations backward and step `self.opt` through methods of the same object (`self.train_step(b)`, "
                    "up to three calls down), with nothing in the loop zeroing, is flagged on that `zero_grad()`. "
                    "A loop in a function that builds its model and optimizer itself and throws both away after the "
                    "loop (read by nothing after it, never returned, stored or handed on: a timing benchmark) is "
                    "left alone: the weights it trains are never seen. An optimizer the loop makes anew each "
                    "iteration (`opt = optim.SGD(model.parameters())`) over modules that outlive the iteration does not "
                    "count as fresh: the gradients live on the parameters; the finding stands on that constructor. "
                    "Where the loop zeroes (or may) but one arm of an `if`/`elif` on a test nothing in the loop "
                    "changes (a training mode) backwards and steps while neither it nor the loop's other statements "
                    "zero anything, that arm is flagged on its constructor or first backward.")
    why_bad = ("Nothing raises: backward adds into `.grad`, so each step uses the sum of all gradients so far and "
               "training diverges or crawls.")
    example = "for x, y in loader:\n    loss = criterion(model(x), y)\n    loss.backward()\n    optimizer.step()"
    use_instead = ("for x, y in loader:\n    optimizer.zero_grad()\n    loss = criterion(model(x), y)\n"
                   "    loss.backward()\n    optimizer.step()")
    references = ("https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html",)
    valid = (
        # Its `step()` averages weights and reads no gradient (the teacher is frozen): nothing to zero.
        Valid(_TEACHER.format(cls="EMAWeightOptimizer", freeze="\nteacher.requires_grad_(False)",
                              body="            tgt_p.data.mul_(self.alpha).add_(src_p.data * (1 - self.alpha))")),
        # A timing benchmark: the layer and its optimizer are made here and thrown away after the loop, so the
        # accumulated gradients change weights nobody sees (Pyraformer's attention tests).
        Valid('import time\n\nimport torch\nimport torch.nn as nn\nfrom torch import optim\n\n\ndef test_layer(repeat_times=5):\n    layer = nn.Linear(8, 8)\n    optimizer = optim.Adam(layer.parameters(), 1e-4)\n    optimizer.zero_grad()\n    hidden = torch.ones(4, 8)\n    target = torch.zeros(4, 8)\n    start = time.time()\n    for i in range(repeat_times):\n        result = layer(hidden)\n        loss = ((target - result) ** 2).mean()\n        loss.backward()\n        optimizer.step()\n    print("average time: {} s".format(round((time.time() - start) / repeat_times, 4)))\n\n\ntest_layer()\n'),
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
        # The loop's loss comes from a method of a base class gradsight cannot read (built at run time here; in another
        # file of the project in adversarial_robustness_pytorch's trainer), which zeroes the optimizer it holds.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
              "def zeroing_loss(self, x, y):\n    self.optimizer.zero_grad()\n"
              "    return F.mse_loss(self.model(x), y)\n\n\n"
              "Base = type(\"Base\", (), {\"standard_loss\": zeroing_loss})\n\n\nclass WATrainer(Base):\n"
              "    def __init__(self):\n        self.model = nn.Linear(3, 1)\n"
              "        nn.init.zeros_(self.model.weight)\n        nn.init.zeros_(self.model.bias)\n"
              "        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)\n\n"
              "    def train(self, loader):\n        for x, y in loader:\n"
              "            loss = self.standard_loss(x, y)\n            loss.backward()\n"
              "            self.optimizer.step()\n\n\ntrainer = WATrainer()\n"
              "trainer.train([(torch.ones(4, 3), torch.ones(4, 1))] * 3)\n"),
        # The fix: zeroed after either branch's step.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Scaler:\n    def scale(self, loss):\n        return loss\n\n"
              "    def step(self, opt):\n        opt.step()\n\n    def update(self):\n        pass\n\n\n"
              "m = nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.0)\nscaler = Scaler()\nuse_amp = True\n"
              "for i in range(3):\n    loss = m(torch.ones(3, 2)).sum()\n    if use_amp:\n"
              "        scaler.scale(loss).backward()\n    else:\n        loss.backward()\n"
              "    if use_amp:\n        scaler.step(opt)\n        scaler.update()\n    else:\n"
              "        opt.step()\n    opt.zero_grad()\n"),
        # Zeroed at the top of every iteration as well: the branch's own zero_grad is only redundant.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Scaler:\n    def scale(self, loss):\n        return loss\n\n"
              "    def step(self, opt):\n        opt.step()\n\n    def update(self):\n        pass\n\n\n"
              "m = nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.0)\nscaler = Scaler()\nuse_amp = True\n"
              "for i in range(3):\n    opt.zero_grad()\n    loss = m(torch.ones(3, 2)).sum()\n    if use_amp:\n"
              "        scaler.scale(loss).backward()\n    else:\n        loss.backward()\n"
              "    if use_amp:\n        scaler.step(opt)\n        scaler.update()\n    else:\n"
              "        opt.step()\n        opt.zero_grad()\n"),
        # The fix: each step zeroes first (the `zero_grad()` before the loop is then only redundant).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Recipe:\n    def __init__(self):\n"
              "        self.model = nn.Linear(2, 1)\n"
              "        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.0)\n        self.done = 0\n\n"
              "    def forward_backward(self, x):\n        loss = self.model(x).sum()\n        loss.backward()\n"
              "        return loss\n\n    def train_step(self, x):\n        self.optimizer.zero_grad()\n        self.forward_backward(x)\n"
              "        self.optimizer.step()\n\n    def train(self, steps):\n        self.optimizer.zero_grad()\n"
              "        while self.done < steps:\n            self.train_step(torch.ones(3, 2))\n"
              "            self.done += 1\n\n\nrecipe = Recipe()\nrecipe.train(3)\n"),
        # Zeroed once before a loop whose iterations step but never backward: nothing piles up.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Recipe:\n    def __init__(self):\n"
              "        self.model = nn.Linear(2, 1)\n"
              "        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.0)\n        self.done = 0\n\n"
              "    def forward_backward(self, x):\n        loss = self.model(x).sum()\n        loss.backward()\n"
              "        return loss\n\n    def train_step(self, x):\n        self.model(x)\n"
              "        self.optimizer.step()\n\n    def train(self, steps):\n        self.optimizer.zero_grad()\n"
              "        while self.done < steps:\n            self.train_step(torch.ones(3, 2))\n"
              "            self.done += 1\n\n\nrecipe = Recipe()\nrecipe.train(3)\n"),
        # The fix: an optimizer made anew each iteration, zeroed right after it is built.
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nfor i in range(3):\n"
              "    opt = torch.optim.SGD(m.parameters(), lr=0.0)\n    opt.zero_grad()\n"
              "    loss = m(torch.ones(3, 2)).sum()\n    loss.backward()\n    opt.step()\n"),
        # An inner optimizer over a copy the loop makes itself (a meta-learning task): each copy starts without
        # gradients, so nothing piles up.
        Valid("import copy\nimport torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nfor task in range(3):\n"
              "    fast = copy.deepcopy(m)\n    inner = torch.optim.SGD(fast.parameters(), lr=0.1)\n"
              "    fast(torch.ones(3, 2)).sum().backward()\n    inner.step()\n"),
        # Every mode of the loop zeroes (pytorch_DANN after its fix).
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.0)\n"
              "mode = \"source\"\nfor i in range(3):\n    if mode == \"dann\":\n        opt.zero_grad()\n"
              "        m(torch.ones(3, 2)).sum().backward()\n        opt.step()\n    elif mode == \"source\":\n"
              "        opt = torch.optim.SGD(m.parameters(), lr=0.0)\n        opt.zero_grad()\n"
              "        m(torch.ones(3, 2)).sum().backward()\n        opt.step()\n"),
        # The last iteration steps without zeroing: nothing backwards after it.
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
              "n = 3\nfor i in range(n):\n    m(torch.ones(3, 2)).sum().backward()\n    if i < n - 1:\n"
              "        opt.step()\n        opt.zero_grad()\n    else:\n        opt.step()\n"),
        # The inner loop steps once and leaves (`opt.step(); break`), after the outer iteration's `zero_grad()`
        # (eth-sri/colt's learner; bench/fresh35-false/03).
        Valid('import torch\n\n\ndef learn(w, blocks, x, refine):\n    opt = torch.optim.SGD([w], lr=0.0)\n    for it in range(3):\n        cur = x\n        opt.zero_grad()\n        for j, layer in enumerate(blocks):\n            if j >= refine:\n                (cur.detach().sum() + w.sum()).backward()\n                opt.step()\n                break\n            cur = layer(cur)\n\n\nblocks = [torch.nn.Linear(3, 3) for _ in range(4)]\nw = torch.zeros(3, requires_grad=True)\nlearn(w, blocks, torch.randn(2, 3), 2)\n'),
    )
    invalid = (
        # The look-alike without the `break`: two steps per `zero_grad()`, the second on both backwards' gradients.
        Invalid('import torch\n\n\ndef learn(w, blocks, x, refine):\n    opt = torch.optim.SGD([w], lr=0.0)\n    for it in range(3):\n        cur = x\n        opt.zero_grad()\n        for j, layer in enumerate(blocks):\n            if j >= refine:\n                (cur.detach().sum() + w.sum()).backward()\n                opt.step()\n            cur = layer(cur)\n\n\nblocks = [torch.nn.Linear(3, 3) for _ in range(4)]\nw = torch.zeros(3, requires_grad=True)\nlearn(w, blocks, torch.randn(2, 3), 2)\n', line=8,
                runtime="silent: bool((w.grad == 2).all())"),
        # The look-alike: its `step()` reads the teacher's gradients, which nothing zeroes.
        Invalid(_TEACHER.format(cls="MirrorDescent", freeze="",
                                body="            tgt_p.data.add_(tgt_p.grad, alpha=-0.0)"), line=24,
                runtime="silent: bool((teacher.bias.grad == 9).all())"),
        # The same loop in a function that returns what it trained: the gradients pile up in the weights it hands out.
        Invalid('import torch\nimport torch.nn as nn\n\n\ndef fit(steps=3):\n    m = nn.Linear(2, 1)\n    opt = torch.optim.SGD(m.parameters(), lr=0.0)\n    for _ in range(steps):\n        m(torch.ones(3, 2)).sum().backward()\n        opt.step()\n    return m\n\n\nm = fit()\n', line=9, runtime="silent: bool((m.bias.grad == 9).all())"),
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
        # The look-alike: the same trainer whose loop computes its loss from the model it stores itself, never
        # calling code it cannot see.
        Invalid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
                "def plain_loss(self, x, y):\n    return F.mse_loss(self.model(x), y)\n\n\n"
                "Base = type(\"Base\", (), {\"standard_loss\": plain_loss})\n\n\nclass WATrainer(Base):\n"
                "    def __init__(self):\n        self.model = nn.Linear(3, 1)\n"
                "        nn.init.zeros_(self.model.weight)\n        nn.init.zeros_(self.model.bias)\n"
                "        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.0)\n\n"
                "    def train(self, loader):\n        for x, y in loader:\n"
                "            loss = F.mse_loss(self.model(x), y)\n            loss.backward()\n"
                "            self.optimizer.step()\n\n\ntrainer = WATrainer()\n"
                "trainer.train([(torch.ones(4, 3), torch.ones(4, 1))] * 3)\n",
                line=23, runtime="silent: bool((trainer.model.bias.grad == -6).all())"),
        # `zero_grad()` once, before a loop whose iterations backward and step through methods of the same object
        # (torchforge's SFT recipe): the finding stands on that `zero_grad()`.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Recipe:\n    def __init__(self):\n"
                "        self.model = nn.Linear(2, 1)\n"
                "        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.0)\n        self.done = 0\n\n"
                "    def forward_backward(self, x):\n        loss = self.model(x).sum()\n        loss.backward()\n"
                "        return loss\n\n    def train_step(self, x):\n        self.forward_backward(x)\n"
                "        self.optimizer.step()\n\n    def train(self, steps):\n        self.optimizer.zero_grad()\n"
                "        while self.done < steps:\n            self.train_step(torch.ones(3, 2))\n"
                "            self.done += 1\n\n\nrecipe = Recipe()\nrecipe.train(3)\n",
                line=21, runtime="silent: bool((recipe.model.bias.grad == 9).all())"),
        # AMP's branch steps through the scaler and never zeroes; only the plain branch does (LAVIS' trainer).
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Scaler:\n    def scale(self, loss):\n        return loss\n\n"
                "    def step(self, opt):\n        opt.step()\n\n    def update(self):\n        pass\n\n\n"
                "m = nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.0)\nscaler = Scaler()\nuse_amp = True\n"
                "for i in range(3):\n    loss = m(torch.ones(3, 2)).sum()\n    if use_amp:\n"
                "        scaler.scale(loss).backward()\n    else:\n        loss.backward()\n"
                "    if use_amp:\n        scaler.step(opt)\n        scaler.update()\n    else:\n"
                "        opt.step()\n        opt.zero_grad()\n",
                line=31, runtime="silent: bool((m.bias.grad == 9).all())"),
        # An optimizer made anew each iteration does not clear the gradients, which live on the parameters
        # (pytorch_DANN's source-only mode): the finding stands on the constructor, after which `zero_grad()` goes.
        Invalid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nfor i in range(3):\n"
                "    opt = torch.optim.SGD(m.parameters(), lr=0.0)\n    loss = m(torch.ones(3, 2)).sum()\n"
                "    loss.backward()\n    opt.step()\n",
                line=5, runtime="silent: bool((m.bias.grad == 9).all())"),
        # One mode of the loop (a test fixed for every iteration) zeroes, the other never does.
        Invalid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.0)\n"
                "mode = \"source\"\nfor i in range(3):\n    if mode == \"dann\":\n        opt.zero_grad()\n"
                "        m(torch.ones(3, 2)).sum().backward()\n        opt.step()\n    elif mode == \"source\":\n"
                "        loss = m(torch.ones(3, 2)).sum()\n        loss.backward()\n        opt.step()\n",
                line=13, runtime="silent: bool((m.bias.grad == 9).all())"),
        # The optimizer's only zero_grad runs once, before the loop: the finding stands on it (the line to move).
        Invalid("import torch\nmodel = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.0)\n"
                "grads = []\nopt.zero_grad()\nfor _ in range(3):\n    loss = model(torch.ones(1, 2)).sum()\n"
                "    loss.backward()\n    grads.append(model.weight.grad.clone())\n    opt.step()\n",
                line=5, runtime="silent: torch.allclose(grads[2], 3 * grads[0])"),
    )

    def __init__(self) -> None:
        # A loop is reported on every reporting pass that reaches it (once per call context): the verdict depends
        # only on the syntax, so it is computed once per analysis (rule instances live for one analysis).
        # id(loop) -> (loop, verdict, whether the verdict read the whole tree); the node is kept so a reused id
        # never matches. A reused verdict reads the tree again where it did, so the driver's record of which
        # units depend on the whole tree stays exact.
        self._seen: dict = {}
        self._defs: dict = {}  # id(tree) -> (tree, _FileDefs)
        self._scans: dict = {}  # id(node) -> (node, _LoopScan) of loops and helper functions
        self._walker = walk  # the analysed source's memoised walk once `check` has run (`Source.walk`)

    def _scan(self, node: ast.AST) -> _LoopScan:
        hit = self._scans.get(id(node))
        if hit is None or hit[0] is not node:
            hit = self._scans[id(node)] = (node, _LoopScan(node, self._walker))
        return hit[1]

    def check(self, event: LoopEvent, report) -> None:
        loop = event.node
        self._walker = getattr(getattr(report, "source", None), "walk", walk)
        # What the engine knows of the objects whose methods the loop calls is part of the verdict's input.
        seen_calls = tuple((r, attrs, tuple((m, id(n)) for m, n in methods), unseen)
                           for r, attrs, methods, unseen in event.receivers)
        hit = self._seen.get(id(loop))
        if hit is not None and hit[0] is loop and hit[1] == seen_calls:
            verdict, read = hit[2], hit[3]
            if read:
                _ = report.tree
        else:
            before = report.tree_reads
            verdict = self._verdict(loop, report, {r: (attrs, dict(methods), unseen)
                                                   for r, attrs, methods, unseen in event.receivers})
            self._seen[id(loop)] = (loop, seen_calls, verdict, report.tree_reads != before)
        if verdict is None:
            return
        if verdict[0] == "once":
            _, zero, back, step = verdict
            line = zero.lineno
            text = report.source.line_text(line)
            start = len(text) - len(text.lstrip()) + 1
            opt = ast.unparse(zero.func.value)
            report.add(self, loop,
                       msg("This `zero_grad()` runs once, before the loop; each iteration backwards and steps, so "
                           "gradients pile up. The backward is reached at line ", back.lineno,
                           f"; call `{opt}.zero_grad()` at the start of each iteration."),
                       related=[Note(back.lineno, back.col_offset + 1, "backward runs here on every iteration"),
                                Note(step.lineno, step.col_offset + 1, f"`{opt}` steps here on every iteration")],
                       span=(line, start, line, len(text.rstrip()) + 1))
            return
        if verdict[0] == "branch":
            _, zero, step = verdict
            line = zero.lineno
            text = report.source.line_text(line)
            start = len(text) - len(text.lstrip()) + 1
            report.add(self, loop,
                       msg("Gradients are zeroed on this branch only; the other branch's step (line ", step.lineno,
                           ") never zeroes, so they pile up. Call `", ast.unparse(zero.func.value),
                           ".zero_grad()` after the `if`/`else`."),
                       related=[Note(step.lineno, step.col_offset + 1, "steps without zeroing")],
                       span=(line, start, line, len(text.rstrip()) + 1))
            return
        if verdict[0] == "rebuilt":
            self._report_unzeroed(None, verdict[2], verdict[1], loop, report)
            return
        if verdict[0] == "modes":
            for cond, backward, ctor in verdict[1]:
                self._report_unzeroed(cond, backward, ctor, loop, report)
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

    def _report_unzeroed(self, cond, backward: ast.Call, ctor, loop: ast.AST, report) -> None:
        """A loop mode that never zeroes (`_unzeroed_mode`) or an optimizer made anew each iteration with nothing
        zeroing (`_rebuilt_optimizers`): on the constructor where there is one (the fix, `zero_grad()`, goes right
        after it: a new optimizer is what the author took for a reset), else on the arm's first backward."""
        where = f" When {cond} (the same every iteration), nothing zeroes them." if cond else ""
        if ctor is not None:
            opt = ast.unparse(ctor.targets[0])
            node, message = ctor, (f"A new optimizer does not clear the gradients: they live on the parameters and "
                                   f"pile up.{where} Call `{opt}.zero_grad()` after building it.")
        else:
            node, message = backward, (f"Gradients are never zeroed when {cond}, so this backward adds to all "
                                       f"earlier steps' gradients. Call `optimizer.zero_grad()` before it.")
        line = node.lineno
        text = report.source.line_text(line)
        start = len(text) - len(text.lstrip()) + 1
        related = [Note(backward.lineno, backward.col_offset + 1, "the gradients pile up here")] \
            if node is not backward else []
        loop_line, loop_col, _, _ = report.source.span(loop)
        report.add(self, loop, message,
                   related=related + [Note(loop_line, loop_col, "the loop that never zeroes them")],
                   span=(line, start, line, len(text.rstrip()) + 1))

    def _once_before(self, loop: ast.AST, scan: _LoopScan, report, objects: dict):
        """("once", zero_grad, call to the backward, call to the step): `self.opt.zero_grad()` runs once, just before a
        loop of a method whose own statements call no backward but whose iterations do, through methods of the same
        object (`self.train_step(batch)`), and step `self.opt` there too, with nothing in the loop zeroing gradients."""
        if not any(isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name)
                   and c.func.value.id == "self" for c in scan.calls):
            return None
        # A cheap look at the line before the loop first: reading `report.tree` makes the analysis unit depend on the
        # whole file's text (re-run on every keystroke), so it is read only where a `zero_grad` may stand there.
        lines = report.source.lines
        indent = len(lines[loop.lineno - 1]) - len(lines[loop.lineno - 1].lstrip())
        prev, seen = loop.lineno - 2, False
        while prev >= 0:
            text = lines[prev]
            if text.strip() and not text.lstrip().startswith("#"):
                if len(text) - len(text.lstrip()) < indent:
                    break  # the start of the loop's block
                if "zero_grad" in text:
                    seen = True
                    break
            prev -= 1
        if not seen:
            return None
        tree = report.tree
        if tree is None:
            return None
        zero = _zeroed_before(loop, tree)
        if zero is None:
            return None
        hit = self._defs.get(id(tree))
        if hit is None or hit[0] is not tree:
            hit = self._defs[id(tree)] = (tree, _FileDefs(tree))
        defs = hit[1]
        owner = defs.enclosing_class(loop)
        opt = ast.unparse(zero.func.value)
        if owner is None or _is_ema(opt):
            return None
        back, step = _reach(scan, defs, self._scan, owner, objects, opt)
        if back is None or step is None:
            return None
        if _zeroes(scan, defs, self._scan, 0, frozenset({opt}), owner, objects, loose=True) is not False:
            return None
        return "once", zero, back, step

    def _unzeroed_mode(self, loop: ast.AST, scan: _LoopScan, defs: _FileDefs, opts: frozenset, owner,
                       objects: dict, optimizer_steps, tree):
        """("modes", [(condition, first backward, constructor or None), ...]) where the loop zeroes gradients
        somewhere (or may), but an arm
        of an `if`/`elif`/`else` on a test fixed for the whole loop (a training mode: every iteration runs that arm)
        backwards and steps an optimizer while neither the arm nor the loop's other statements zero anything
        (pytorch_DANN: the `dann` mode zeroes, the `source` and `target` modes never do). The constructor is the
        arm's `opt = optim.SGD(...)` when the stepped optimizer is made anew there (`_rebuilt_optimizers`). None when
        no arm is such."""
        # Only an `if` that holds both a backward and a step of the loop can hold such an arm: looked for by lines
        # first (most training loops zero, so this runs for most of them; the arms are read only where it matters).
        ifs = [st for st in loop.body if type(st) is ast.If
               and any(st.lineno <= c.lineno <= (st.end_lineno or st.lineno) for c in scan.backwards)
               and any(st.lineno <= c.lineno <= (st.end_lineno or st.lineno) for c in scan.steps)]
        if not ifs:
            return None
        found = []
        for stmt, arm, cond in _arms(ifs, loop, scan):
            if any(type(st) in (ast.Break, ast.Return, ast.Raise) for st in arm):
                continue
            arm_scan = _LoopScan(ast.Module(body=arm, type_ignores=[]))
            if not arm_scan.backwards:
                continue
            others = [st for st in loop.body if st is not stmt]
            rebuilt = _rebuilt_optimizers(ast.Module(body=others + arm, type_ignores=[]), loop, scan, arm_scan.steps)
            steps = optimizer_steps(arm_scan.steps, rebuilt)
            if not steps:
                continue
            rest = _LoopScan(ast.Module(body=others, type_ignores=[]))
            if any(_zeroes(s, defs, self._scan, 0, opts, owner, objects) is not False for s in (arm_scan, rest)):
                continue
            if _discarded_training(loop, steps, tree):
                return None
            first = min(arm_scan.backwards, key=lambda c: (c.lineno, c.col_offset))
            found.append((cond, first, _rebuilt_before(steps, first, rebuilt)))
        return ("modes", found) if found else None

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

    def _verdict(self, loop: ast.AST, report, objects: dict):
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
            return self._once_before(loop, scan, report, objects)
        # The optimizer must outlive the iteration: one built inside the loop (assigned, or bound by a `with`
        # such as a meta-learning inner optimizer) is a fresh optimizer each time.
        built_inside = scan.bound
        # ... unless it is a `torch.optim` optimizer made anew over modules that outlive the iteration: the
        # gradients live on their parameters (`_rebuilt_optimizers`). (It says early where there is none.)
        rebuilt = _rebuilt_optimizers(loop, loop, scan, scan.steps)

        def optimizer_steps(calls: list, rebuilt: dict) -> list:
            return [c for c in calls if isinstance(c.func.value, (ast.Name, ast.Attribute))
                    and not (isinstance(c.func.value, ast.Name) and c.func.value.id in built_inside
                             and c.func.value.id not in rebuilt)
                    and "sched" not in ast.unparse(c.func.value).lower() and _optimizer_step(c, report.tree)]

        steps = optimizer_steps(scan.steps, rebuilt)
        rebound = not steps and any(type(c.func.value) is ast.Name and c.func.value.id in built_inside
                                    and not c.args for c in scan.steps)
        if not steps and not rebound:
            return None
        tree = report.tree
        # The file's functions, collected once per tree (one walk, not one per loop).
        hit = self._defs.get(id(tree))
        if hit is None or hit[0] is not tree:
            hit = self._defs[id(tree)] = (tree, _FileDefs(tree))
        defs = hit[1]
        if rebound:
            # The only steps are of names the loop binds in several ways: one mode of it may make the optimizer
            # anew and never zero (`_unzeroed_mode` reads each mode's own bindings).
            opts = frozenset(c.func.value.id for c in scan.steps if type(c.func.value) is ast.Name)
            return self._unzeroed_mode(loop, scan, defs, opts, defs.enclosing_class(loop), objects, optimizer_steps,
                                       tree)
        opts = frozenset(ast.unparse(c.func.value) for c in steps) | frozenset(
            ast.unparse(a) for c in steps for a in c.args if isinstance(a, (ast.Name, ast.Attribute)))
        owner = defs.enclosing_class(loop)
        zeroes = _zeroes(scan, defs, self._scan, 0, opts, owner, objects)
        if zeroes is False:
            if _discarded_training(loop, steps, tree):
                return None  # a benchmark: what the loop trains is thrown away with the function's locals
            if all(_breaks_after(loop, c) for c in steps):
                return None  # each step ends the loop (`opt.step(); break`): one step per entry, zeroed before it
            first = min(backwards, key=lambda c: (c.lineno, c.col_offset))
            # The optimizer's only `zero_grad()` stands before the loop (it was meant to run every iteration): the
            # fix moves that statement, so the finding stands on it. Not where the backward sits in an accumulation
            # loop of its own: the missing `zero_grad()` goes before that inner loop (below).
            zero = None if self._accumulation_loop(loop, first) is not None else _zeroed_just_before(loop, report, opts)
            if zero is not None:
                return "once", zero, first, min(steps, key=lambda c: (c.lineno, c.col_offset))
            ctor = _rebuilt_before(steps, first, rebuilt)
            if ctor is not None:
                return "rebuilt", ctor, first
            return None, first
        # Zeroed somewhere, or code it cannot see may zero: one mode of the loop may still never zero.
        mode = self._unzeroed_mode(loop, scan, defs, opts, owner, objects, optimizer_steps, tree)
        if mode is not None:
            return mode
        if zeroes is None:
            return None  # code it cannot see may zero the gradients
        branch = _one_branch_zero(loop, scan, defs, self._scan, opts, owner, objects)
        if branch is not None:
            return ("branch",) + branch
        return _unzeroed_optimizer(scan, steps, backwards, defs, self._scan, opts, owner, objects)
