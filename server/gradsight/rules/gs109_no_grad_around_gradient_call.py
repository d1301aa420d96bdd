from __future__ import annotations

import ast

from ..engine.astwalk import dotted_name
from ..engine.paths import gates_update
from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid
from ._calls import own_name_calls

_OFF = ("torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
        "torch.autograd.grad_mode.inference_mode")
_GRAD = ("torch.autograd.grad", "autograd.grad")
# Spelled in a function that manages grad mode itself: what it differentiates may well have a graph.
_MANAGES = ("enable_grad", "set_grad_enabled")
_OFF_WORDS = ("no_grad", "inference_mode")
_OWN_OFF = "\0off"  # the guard `_guarded` gives statements inside the function's own `with torch.no_grad():`
_GATE = "\0gate"  # `(_GATE, if statement, branch)`: the guard of any `if`; it counts where it gates an update
_DEPTH = 4  # calls followed from the `with` body (StudioGAN: evaluation -> save_images -> generate -> optimise -> grad)
_BUDGET = 60  # functions read per analysis, at most


def _guarded(fn: ast.AST) -> list:
    """`(statement, guards)` for every statement of `fn`'s own body (not nested functions or classes), with the
    parameters that enclosing `if <parameter>:` tests name (the branch taken when it is true)."""
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    out: list = []
    todo = [(s, ()) for s in reversed(fn.body)]
    while todo:
        stmt, guards = todo.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        out.append((stmt, guards))
        if isinstance(stmt, ast.If):
            name = _tested(stmt.test)
            on = ((name, stmt.test, True),) if name in params else ()
            off = ((name, stmt.test, False),) if name in params else ()
            if isinstance(stmt.test, ast.BoolOp) and isinstance(stmt.test.op, ast.And):
                # `if is_train and opt is not None:`: the body runs only where every operand holds.
                on = tuple((n, t, True) for t in stmt.test.values if (n := _tested(t)) in params)
            # Every `if` may gate an optimizer update (`gates_update`, asked only where a guard is judged).
            on, off = on + ((_GATE, stmt, True),), off + ((_GATE, stmt, False),)
            todo.extend((s, guards + on) for s in reversed(stmt.body))
            todo.extend((s, guards + off) for s in reversed(stmt.orelse))
            continue
        inner = guards
        if isinstance(stmt, (ast.With, ast.AsyncWith)) and any(
                (dotted_name(i.context_expr.func if isinstance(i.context_expr, ast.Call) else i.context_expr) or "")
                .rsplit(".", 1)[-1] in _OFF_WORDS for i in stmt.items):
            inner = guards + (_OWN_OFF,)
        for field in ("body", "orelse", "finalbody"):
            todo.extend((s, inner) for s in reversed(getattr(stmt, field, [])) if isinstance(s, ast.stmt))
        for h in getattr(stmt, "handlers", []):
            todo.extend((s, guards) for s in reversed(h.body))
    return out


def _exprs(stmt: ast.stmt) -> list:
    """The expressions of `stmt` itself (not of the statements nested in it), lambdas left out."""
    return [c for c in ast.iter_child_nodes(stmt) if isinstance(c, ast.expr) and not isinstance(c, ast.Lambda)] \
        + [i.context_expr for i in getattr(stmt, "items", [])]


def _with_at(body: list, call: ast.Call):
    """The `with` statement whose item is `call`, found by line through the statements around it (no walk of their
    expressions, no parent map: the rule runs on every keystroke); None when `call` is not such an item."""
    line = call.lineno
    while body:
        stmt = next((s for s in body if s.lineno <= line <= (s.end_lineno or s.lineno)), None)
        if stmt is None:
            return None
        if isinstance(stmt, (ast.With, ast.AsyncWith)) and any(i.context_expr is call for i in stmt.items):
            return stmt
        body = [s for field in ("body", "orelse", "finalbody") for s in getattr(stmt, field, ())
                if isinstance(s, ast.stmt)] + [s for h in getattr(stmt, "handlers", ()) for s in h.body]
    return None


def _computed(expr: ast.AST) -> bool:
    """Does `expr` compute a new tensor (a call or arithmetic) rather than name one (`x`, `out[0]`, `self.loss`)?"""
    return isinstance(expr, (ast.Call, ast.BinOp, ast.UnaryOp))


def _tested(test: ast.AST):
    """The name an `if` test compares with constants only (`flag`, `not flag`, `opt is not None`, `mode == "train"`,
    `phase in ("train",)`), else None."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.Name):
        return test.id
    if isinstance(test, ast.Attribute) and test.attr == "training" and isinstance(test.value, ast.Name):
        return test.value.id  # `if model.training:` on a module handed in (decided by `_eval_before`)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name) \
            and isinstance(test.comparators[0], (ast.Constant, ast.Tuple, ast.List, ast.Set)) \
            and all(isinstance(e, ast.Constant) for e in getattr(test.comparators[0], "elts", ())):
        return test.left.id
    return None


def _holds(test: ast.AST, value: ast.Constant):
    """The truth of `test` (a `_tested` shape) with its name bound to the constant `value`; None when unknown."""
    if isinstance(test, ast.UnaryOp):
        inner = _holds(test.operand, value)
        return None if inner is None else not inner
    if isinstance(test, ast.Name):
        return bool(value.value)
    right = test.comparators[0]
    other = right.value if isinstance(right, ast.Constant) else [e.value for e in right.elts]
    op = test.ops[0]
    compare = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Is: lambda a, b: a is b,
               ast.IsNot: lambda a, b: a is not b, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
    fn = compare.get(type(op))
    try:
        return None if fn is None else bool(fn(value.value, other))
    except TypeError:
        return None


def _eval_before(block: list, call: ast.Call, module: str) -> bool:
    """`module.eval()` (or `.train(False)`) is a statement of `block` before the one holding `call`, and no statement
    between names `module` again (which might put it back in training mode)."""
    evaluated = False
    for stmt in block:
        if stmt.lineno <= call.lineno <= (stmt.end_lineno or stmt.lineno):
            return evaluated
        c = stmt.value if isinstance(stmt, ast.Expr) else None
        if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and dotted_name(c.func.value) == module \
                and (c.func.attr == "eval" or c.func.attr == "train" and c.args
                     and isinstance(c.args[0], ast.Constant) and c.args[0].value is False):
            evaluated = True
        elif module in {dotted_name(n) for n in ast.walk(stmt) if isinstance(n, (ast.Name, ast.Attribute))}:
            evaluated = False
    return False


def _given(call: ast.Call, name: str, params: list, defaults: dict, kwdefaults: dict):
    """The expression `call` passes for parameter `name` (or the default it leaves), None when not known."""
    index = params.index(name) if name in params else len(call.args)
    if index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == name), defaults.get(name, kwdefaults.get(name)))


def _decided_on(call, fn, guards, test, branch, params, defaults, kwdefaults) -> bool:
    """Whether `call`'s arguments make the `if` test `test` take `branch`: a parameter guard on it among `guards`
    with a constant that decides it (each operand of an `and`, for its body), or a class instance passed where the
    test asks `is not None` (`optimizer=object()`)."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and branch else [test]
    for part in parts:
        found = False
        for other in guards:
            if other == _OWN_OFF or other[0] == _GATE or other[1] is not part or other[2] is not branch:
                continue
            given = _given(call, other[0], params, defaults, kwdefaults)
            if isinstance(given, ast.Constant) and _holds(part, given) is branch \
                    or _instance(given) and _none_test(part) is (not branch):
                found = True
                break
        if not found:
            return False
    return True


def _instance(node) -> bool:
    """A constructor call (`object()`, `torch.optim.SGD(...)`, `Adam(...)`): surely not `None`."""
    if not isinstance(node, ast.Call):
        return False
    name = dotted_name(node.func) or ""
    last = name.rsplit(".", 1)[-1]
    return last == "object" or last[:1].isupper()


def _none_test(test: ast.AST):
    """True for `x is None`, False for `x is not None`, None for any other test."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        return isinstance(test.ops[0], ast.Is)
    return None


def _guard_off(call: ast.Call, fn: ast.AST, guards: list, block: list = ()) -> bool:
    """Does `call` pass constants (or leave defaults) for the parameters of `fn` that `guards` (`(name, test, branch)`
    for the `if` tests on parameters around the differentiation) test, such that some test takes the other branch?
    `if model.training:` is off where `block` (the `with` body holding `call`) puts the module passed as `model` in
    eval mode before the call (UCTransNet's `model.eval()`, then `train_one_epoch(val_loader, model, ...)`)."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    defaults = dict(zip(params[len(params) - len(fn.args.defaults):], fn.args.defaults))
    kwdefaults = {a.arg: d for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None}
    if any(g != _OWN_OFF and g[0] != _GATE for g in guards) and (any(isinstance(a, ast.Starred) for a in call.args)
                                              or any(k.arg is None for k in call.keywords)):
        return True  # `f(*args, **options)`: which arguments the guards see cannot be told, so nothing is claimed
    for guard in guards:
        if guard == _OWN_OFF:
            continue
        name, test, branch = guard
        if name == _GATE:
            # An update gate (`if mode == "train": ...; loss.backward(); optimizer.step()`) is how code shared by
            # training and evaluation keeps the update out of evaluation: unless this call's constants make its
            # test take the differentiating branch, nothing is claimed.
            if gates_update(test) and not _decided_on(call, fn, guards, test.test, branch, params, defaults,
                                                      kwdefaults):
                return True
            continue
        given = _given(call, name, params, defaults, kwdefaults)
        if isinstance(given, ast.Constant) and _holds(test, given) is (not branch):
            return True
        plain = test.operand if isinstance(test, ast.UnaryOp) else test
        if isinstance(plain, ast.Attribute) and given is not None and dotted_name(given) \
                and _eval_before(block, call, dotted_name(given)) and (plain is not test) is (not branch):
            return True  # `model.training` is False there: the test takes the other branch
    return False


def _lifted(call: ast.Call, inner: ast.AST, guards: tuple, fn: ast.AST) -> tuple:
    """The guards of `inner` (called by `call` in `fn`) on parameters that `call` hands a parameter of `fn`
    unchanged (`inner(model, x, eval_only)` in `step(model, x, eval_only)`), as guards of `fn` on that parameter: a
    constant given to `fn` then decides them as if given to `inner` (adaptive-span's `eval_only=True`, fresh32)."""
    mine = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    params = [a.arg for a in inner.args.posonlyargs + inner.args.args]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return ()
    out = []
    for guard in guards:
        if guard == _OWN_OFF or guard[0] == _GATE:
            continue
        name, test, branch = guard
        given = _given(call, name, params, {}, {})
        if isinstance(given, ast.Name) and given.id in mine:
            out.append((given.id, test, branch))
    return tuple(out)


def _manager(func: ast.AST) -> bool:
    """`torch.enable_grad`, `enable_grad`, `torch.set_grad_enabled`, `torch.autograd.set_grad_enabled`, ..."""
    spelled = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return spelled in _MANAGES


def _nested_withs(body: list) -> list:
    """The `with` statements under `body` (not in nested functions or classes)."""
    out, todo = [], list(body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.With, ast.AsyncWith)):
            out.append(n)
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(c for c in ast.iter_child_nodes(n) if isinstance(c, ast.stmt))
    return out


def _off_calls(top) -> list:
    """A top-level statement's calls spelled like a grad-mode switch (`no_grad()`, `torch.inference_mode()`)."""
    out = []
    for call in top.calls:
        f = call.func
        spelled = f.attr if type(f) is ast.Attribute else f.id if type(f) is ast.Name else None
        if spelled in _OFF_WORDS:
            out.append(call)
    return out


_EPOCH = ("import torch\nimport torch.nn as nn\n\n\ndef epoch(model, opt):\n    loss = model(torch.randn(4, 3)).pow(2).mean()\n"
          "    if model.training:\n        opt.zero_grad()\n        loss.backward()\n        opt.step()\n"
          "    return loss.item()\n\n\n")


# Shared train/eval code whose update (zero_grad, backward, step) runs only under a mode test: the evaluation call
# passes "val", which `mode in TRAIN_MODES` turns away (a test this rule does not evaluate, so nothing is claimed);
# `mode == "train"` with "train" passed runs the update under no_grad.
_MODE_STEP = ("import torch\nimport torch.nn as nn\n\nTRAIN_MODES = (\"train\", \"finetune\")\n\n\n"
             "def step(model, batch, optimizer, mode):\n    x, y = batch\n"
             "    loss = nn.functional.mse_loss(model(x), y)\n    if {test}:\n"
             "        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n"
             "    return loss.item()\n\n\nmodel = nn.Linear(3, 1)\n"
             "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
             "batch = (torch.randn(4, 3), torch.randn(4, 1))\nstep(model, batch, opt, \"train\")\n"
             "with torch.no_grad():\n    val = step(model, batch, opt, {mode})\n")


class NoGradAroundGradientCall(Rule):
    code = "GS109"
    name = "no-grad-around-gradient-call"
    severity = Severity.WARNING
    summary = ("A function called inside `with torch.no_grad():` differentiates a value it computes itself "
               "(`torch.autograd.grad`, `.backward()`), which has no graph there: it raises.")
    events = (FileEvent,)
    what_it_does = ("Flags `with torch.no_grad():` (or `torch.inference_mode()`) whose body calls a plain function "
                    "(this file's, or imported from another workspace file, followed through up to four calls) that "
                    "runs `torch.autograd.grad(out, ...)` or `out.backward()` on a value it computes itself (a call "
                    "or arithmetic: `out = D(G(z))`, `loss.sum()`). Functions that switch grad mode themselves "
                    "(`torch.enable_grad()`, `set_grad_enabled`) are not followed, nor calls the block makes inside its "
                    "own `with torch.enable_grad():` (or `set_grad_enabled`), nor calls inside a callee's own "
                    "`no_grad` block (that block is what to change, in its file); a call whose constant arguments "
                    "make an `if` test on a parameter around the differentiation false (`train=False`, `opt=None` "
                    "for `if opt is not None:`, `mode=\"val\"` for `if mode == \"train\":`, either operand of "
                    "an `and`) is left alone, and so is a call that unpacks its arguments (`f(**options)`) into a "
                    "function whose differentiation is guarded.")
    why_bad = ("Under `no_grad` no operation records a graph, whatever its inputs: the value the function "
               "differentiates has no `grad_fn`, and PyTorch raises \"element 0 of tensors does not require grad "
               "and does not have a grad_fn\". Evaluation code wrapped in `no_grad` that samples through a "
               "gradient-based step (latent optimisation, an adversarial attack, a gradient penalty) fails only "
               "when that option is on.")
    example = ("with torch.no_grad():\n    images = sample(G, D, z, latent_op=True)   # sample() takes "
               "autograd.grad of D(G(z)) w.r.t. z")
    use_instead = ("with torch.enable_grad():   # or no no_grad around it\n"
                   "    images = sample(G, D, z, latent_op=True)")
    references = ("https://pytorch.org/docs/stable/generated/torch.no_grad.html",
                  "https://pytorch.org/docs/stable/generated/torch.enable_grad.html")
    _helpers = ("import torch\nimport torch.nn as nn\nfrom torch import autograd\n\n\n"
                "def latent_step(z, G, D):\n    z = z.clone().requires_grad_(True)\n    score = D(G(z)).sum()\n"
                "    grad = autograd.grad(outputs=score, inputs=z)[0]\n    return (z + 0.1 * grad).detach()\n\n\n"
                "def sample(G, D, z, latent_op):\n    if latent_op:\n        z = latent_step(z, G, D)\n"
                "    return G(z)\n\n\n"
                "G, D = nn.Linear(4, 4), nn.Linear(4, 1)\n")
    valid = (
        Valid(_MODE_STEP.format(test="mode in TRAIN_MODES", mode='"val"')),
        # The sampler switches grad mode back on for its own step.
        Valid(_helpers.replace("    z = z.clone().requires_grad_(True)\n    score = D(G(z)).sum()\n"
                               "    grad = autograd.grad(outputs=score, inputs=z)[0]\n",
                               "    with torch.enable_grad():\n        z = z.clone().requires_grad_(True)\n"
                               "        score = D(G(z)).sum()\n"
                               "        grad = autograd.grad(outputs=score, inputs=z)[0]\n")
              + "with torch.no_grad():\n    images = sample(G, D, torch.randn(2, 4), True)\n"),
        # The option is off in the no_grad call: the gradient step never runs there.
        Valid(_helpers + "images = sample(G, D, torch.randn(2, 4), True)\n"
              "with torch.no_grad():\n    images = sample(G, D, torch.randn(2, 4), False)\n"),
        # A helper that backwards a loss it was handed (built with grad mode on) works under no_grad.
        Valid("import torch\nimport torch.nn as nn\n\n\ndef apply(loss, opt):\n    opt.zero_grad()\n"
              "    loss.backward()\n    opt.step()\n\n\nm = nn.Linear(3, 1)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
              "loss = m(torch.randn(2, 3)).pow(2).mean()\nwith torch.no_grad():\n    apply(loss, opt)\n"),
        # The optimizer left out (`None`) and a string mode: the guards around the backward are off in the call.
        Valid("import torch\nimport torch.nn as nn\n\n\ndef run(model, x, opt=None, mode=\"train\"):\n"
              "    loss = model(x).pow(2).mean()\n    if opt is not None:\n        if mode == \"train\":\n"
              "            loss.backward()\n            opt.step()\n    return loss.item()\n\n\nm = nn.Linear(3, 1)\n"
              "with torch.no_grad():\n    run(m, torch.randn(2, 3))\n"
              "    run(m, torch.randn(2, 3), torch.optim.SGD(m.parameters(), lr=0.1), mode=\"val\")\n"),
        # A call that passes False for the flag guarding the backward.
        Valid("import torch\nimport torch.nn as nn\n\n\ndef run(model, x, train):\n    loss = model(x).pow(2).mean()\n"
              "    if train:\n        loss.backward()\n    return loss.item()\n\n\nm = nn.Linear(3, 1)\n"
              "with torch.no_grad():\n    run(m, torch.randn(2, 3), False)\n"),
        # The flag handed on unchanged by a pass-through function (adaptive-span's `eval_only=True`, fresh32).
        Valid('import torch\nimport torch.nn as nn\n\n\ndef inner(model, x, eval_only):\n    loss = model(x).pow(2).mean()\n    if not eval_only:\n        loss.backward()\n    return loss.item()\n\n\ndef step(model, x, eval_only):\n    return inner(model, x, eval_only)\n\n\nm = nn.Linear(3, 1)\nwith torch.no_grad():\n    step(m, torch.randn(2, 3), True)\n'),
        # One function for the training and the validation pass, backwarding only `if model.training:`; the no_grad
        # block puts the model in eval mode first (UCTransNet; bench/fresh19-false/01).
        Valid(_EPOCH + "model = nn.Linear(3, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
              "model.train(True)\nepoch(model, opt)\nwith torch.no_grad():\n    model.eval()\n"
              "    val = epoch(model, opt)\n"),
        # `torch.enable_grad()` inside the `no_grad` block turns grad mode back on for the call (eth-sri/colt's
        # verifier; bench/fresh35-false/04).
        Valid('import torch\nimport torch.nn as nn\n\n\ndef run(model, x, train):\n    loss = model(x).pow(2).mean()\n    if train:\n        loss.backward()\n    return loss.item()\n\n\nm = nn.Linear(3, 1)\nwith torch.no_grad():\n    x = torch.randn(2, 3) * 2\n    with torch.enable_grad():\n        run(m, x, True)\n'),
    )
    invalid = (
        # The sampler called after an `enable_grad` block, still under `no_grad`.
        Invalid(_helpers + "with torch.no_grad():\n    with torch.enable_grad():\n        z = torch.randn(2, 4)\n"
                "    images = sample(G, D, z, True)\n", line=20,
                runtime="raises: does not require grad", also=(8,)),
        # The same pass-through called with the flag that runs the backward.
        Invalid('import torch\nimport torch.nn as nn\n\n\ndef inner(model, x, eval_only):\n    loss = model(x).pow(2).mean()\n    if not eval_only:\n        loss.backward()\n    return loss.item()\n\n\ndef step(model, x, eval_only):\n    return inner(model, x, eval_only)\n\n\nm = nn.Linear(3, 1)\nwith torch.no_grad():\n    step(m, torch.randn(2, 3), False)\n', line=17,
                runtime="raises: element 0 of tensors does not require grad", also=(6,)),
        Invalid(_MODE_STEP.format(test='mode == "train"', mode='"train"'), line=21, also=(9,),
                runtime="raises: element 0 of tensors does not require grad"),
        # The same function called under no_grad with the model still in training mode.
        Invalid(_EPOCH + "model = nn.Linear(3, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "model.train(True)\nwith torch.no_grad():\n    val = epoch(model, opt)\n", line=17,
                runtime="raises: element 0 of tensors does not require grad", also=(6,)),
        Invalid(_helpers + "with torch.no_grad():\n    images = sample(G, D, torch.randn(2, 4), True)\n", line=20,
                runtime="raises: element 0 of tensors does not require grad", also=(8,)),
        Invalid("import torch\nimport torch.nn as nn\n\n\ndef run(model, x, train):\n    loss = model(x).pow(2).mean()\n"
                "    if train:\n        loss.backward()\n    return loss.item()\n\n\nm = nn.Linear(3, 1)\n"
                "with torch.no_grad():\n    run(m, torch.randn(2, 3), True)\n", line=13,
                runtime="raises: element 0 of tensors does not require grad", also=(6,)),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if not q.attrs & {"no_grad", "inference_mode"} and not any(
                (q.qualname(ast.Name(id=n)) or "") in _OFF for n in ("no_grad", "inference_mode")):
            return
        self._summaries: dict = {}
        self._budget = _BUDGET
        self._src = report.source
        # The calls spelled like `torch.no_grad()` (each statement's list kept while it is unchanged), then their
        # `with`s: this rule runs on every keystroke, so it never walks every node of the file.
        for call in q.surveyed("GS109.off-calls", _off_calls):
            if q.call_name(call) not in _OFF:
                continue
            node = _with_at(q.tree.body, call)
            if node is not None:
                self._with(node, q, report)

    def _with(self, node, q, report) -> None:
        # A `with torch.enable_grad():` (or `set_grad_enabled(...)`) inside the block sets grad mode again for what
        # it holds (colt's attack under the verifier's no_grad).
        reset = [(w.body[0].lineno, w.end_lineno or w.lineno) for w in _nested_withs(node.body)
                 if any(isinstance(i.context_expr, ast.Call) and _manager(i.context_expr.func) for i in w.items)]
        for call in own_name_calls([*node.body]):
            if any(first <= call.lineno <= last for first, last in reset):
                continue
            found = q.function_def_in(call.func.id, None)
            if found is None:
                continue
            chain = self._needs_grad(q, found, 1)
            if chain is None:
                continue
            fn = found[0]
            if chain[0] and _guard_off(call, fn, chain[0], node.body):
                continue
            where, line, col, api = chain[1]
            names = [call.func.id] + list(chain[2])
            via = f" It does so through `{'` -> `'.join(names[1:])}`." if len(names) > 1 else ""
            notes = [Note(call.lineno, call.col_offset + 1, f"`{names[0]}` is called here with grad mode off")]
            notes.append(Note(line, col, f"`{api}` here raises: \"element 0 of tensors does not require grad\"",
                              where))
            report.add(self, node,
                       f"This `no_grad` block calls `{names[0]}`, which differentiates a value it computes, so "
                       f"that raises.{via} Run that call with grad mode on (`torch.enable_grad()`), or outside "
                       f"the block.",
                       related=notes,
                       span=(node.lineno, node.col_offset + 1, node.lineno,
                             len(report.source.line_text(node.lineno).rstrip()) + 1))
            return

    def _needs_grad(self, q, found: tuple, depth: int):
        """`(guards, (path, line, column, api), names)` when the function `found` (a `function_def_in` answer)
        differentiates a value it computes, or calls (up to `_DEPTH` deep) a function that does: `guards` the
        parameters `if` tests around that (only for its own differentiation), `names` the functions called on the
        way. None otherwise; memoised per analysis."""
        fn, _, source, scope = found
        key = (id(fn), depth)
        if key in self._summaries:
            return self._summaries[key]
        self._summaries[key] = None
        if self._budget <= 0 or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        self._budget -= 1
        lines = range(fn.lineno, (fn.end_lineno or fn.lineno) + 1)
        text = source if source is not None else self._src
        if any(d for d in fn.decorator_list):
            return None  # a decorator may switch grad mode (or wrap the function in anything)
        body = [text.line_text(n) for n in lines]
        if any(w in line for line in body for w in _MANAGES):
            return None
        where = getattr(scope, "path", None) if scope is not None else None
        own = self._own_grad(fn)
        if own is not None:
            guards, node, api = own
            self._summaries[key] = (guards, (where, node.lineno, node.col_offset + 1, api), ())
            return self._summaries[key]
        if depth >= _DEPTH:
            return None
        for stmt, guards in _guarded(fn):
            if _OWN_OFF in guards:
                continue  # under the function's own `no_grad`: that block is what to change, in its file
            for call in own_name_calls(_exprs(stmt)):
                inner = q.function_def_in(call.func.id, scope)
                if inner is None or inner[0] is fn:
                    continue
                chain = self._needs_grad(q, inner, depth + 1)
                if chain is None or chain[0] and _guard_off(call, inner[0], chain[0]):
                    continue
                self._summaries[key] = (guards + _lifted(call, inner[0], chain[0], fn), chain[1],
                                        (call.func.id,) + tuple(chain[2]))
                return self._summaries[key]
        return None

    @staticmethod
    def _own_grad(fn: ast.AST):
        """`(guards, call, api)` for the first `autograd.grad(out, ...)` / `out.backward()` in `fn`'s own body whose
        `out` it computes (the expression itself, or a name every assignment in `fn` binds to a computed value)."""
        params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        binds: dict = {}
        sites: list = []
        for stmt, guards in _guarded(fn):
            if _OWN_OFF in guards:
                continue
            if isinstance(stmt, ast.Assign):
                for t in stmt.targets:
                    for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                        if isinstance(e, ast.Name):
                            binds.setdefault(e.id, []).append(_computed(stmt.value))
            elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
                for e in ast.walk(stmt.target):
                    if isinstance(e, ast.Name):
                        binds.setdefault(e.id, []).append(False)
            for sub in _exprs(stmt):
                for call in ast.walk(sub):
                    if not isinstance(call, ast.Call):
                        continue
                    f = call.func
                    if isinstance(f, ast.Attribute) and f.attr == "backward":
                        sites.append((guards, call, "backward", f.value))
                    elif (dotted_name(f) or "") in _GRAD or isinstance(f, ast.Attribute) and f.attr == "grad" \
                            and (dotted_name(f.value) or "").endswith("autograd"):
                        out = call.args[0] if call.args else next(
                            (k.value for k in call.keywords if k.arg == "outputs"), None)
                        if out is not None:
                            sites.append((guards, call, "autograd.grad", out))
        for guards, call, api, out in sorted(sites, key=lambda s: (s[1].lineno, s[1].col_offset)):
            if isinstance(out, ast.Name):
                seen = binds.get(out.id)
                if out.id in params or not seen or not all(seen):
                    continue
            elif not _computed(out):
                continue
            return guards, call, api
        return None
