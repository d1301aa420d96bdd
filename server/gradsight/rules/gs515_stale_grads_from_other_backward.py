from __future__ import annotations

import ast

from ..engine.astwalk import children
from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid, msg, dotted_name

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
# Calls and attributes that freeze a module for a phase: the other phase's backward then leaves nothing on it.
_FREEZE_WORDS = ("requires_grad", "toggle_optimizer", "toggle_grad", "freeze")
# Objects whose `.backward(loss)` backwards `loss` (Accelerate, Fabric, DeepSpeed, ColossalAI).
_BACKWARD_OWNERS = frozenset({"accelerator", "fabric", "engine", "model_engine", "booster"})
# Methods on a value that hand back something without a graph: what they are called on is cut from the loss.
_CUTS = frozenset({"detach", "detach_", "item", "tolist", "numpy", "size", "dim", "numel", "argmax", "argmin",
                   "argsort", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "len", "isinstance"})
# Attributes that are no tensor with a graph (`x.shape`, `x.data`).
_CUT_ATTRS = frozenset({"data", "shape", "device", "dtype", "requires_grad", "grad"})
# `model.discr_parameters()` of lucidrains' VQ-GANs: the discriminator's parameters.
_DISCR_PARAMS = frozenset({"discr_parameters", "discriminator_parameters"})
# Optimizer classes that do not say "optim" in their name (torch.optim's and common third-party ones).
_OPTIMIZERS = frozenset({"SGD", "Adam", "AdamW", "Adamax", "Adagrad", "Adadelta", "RMSprop", "Rprop", "NAdam", "RAdam",
                         "ASGD", "LBFGS", "SparseAdam", "Adafactor", "Lion", "Lamb", "LAMB", "AdaBelief", "Adan",
                         "Ranger", "AdamW8bit", "Adam8bit", "FusedAdam", "SophiaG"})
# Statements that may stand between `O.step()` and `O.zero_grad()` in "step, then zero" (a scaler's update,
# another optimizer's step or zeroing, a scheduler's step).
_BETWEEN = frozenset({"step", "update", "zero_grad"})
_DEPTH = 6




def _method(node: ast.AST, names) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names


def _end(node: ast.AST) -> tuple:
    return node.end_lineno, node.end_col_offset


def _pos(node: ast.AST) -> tuple:
    return node.lineno, node.col_offset


def _related(a: str, b: str) -> bool:
    """One module path is the other or holds it (`self.vae` and `self.vae.discr`)."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def _runs(call: ast.Call, callee: str, module: str) -> bool:
    """Does calling `callee` run `module`'s parameters? Calling it, or a module holding it (`self.vae(...)` runs
    `self.vae.discr`), except a holder called for its discriminator's loss (`self.vae(x, return_discr_loss=True)`),
    which by that convention sees detached fakes: it reaches only the discriminator's parameters."""
    if module == callee:
        return True
    # `self(x)` in a module that holds both networks often runs only the generator (Lightning's GANs).
    if callee == "self" or not module.startswith(callee + "."):
        return False
    discr_mode = any(k.arg and "discr" in k.arg and not (isinstance(k.value, ast.Constant) and not k.value.value)
                     for k in call.keywords)
    return not discr_mode or "discr" in module[len(callee):].lower()


class _Bind:
    __slots__ = ("end", "value", "no_grad", "aug")

    def __init__(self, end, value, no_grad, aug=False):
        self.end, self.value, self.no_grad, self.aug = end, value, no_grad, aug


class _Scope:
    """What one function (or the module's top level) does, in source order, without entering nested scopes:
    its `.step()` / `.zero_grad()` calls with their receivers, its backward calls with the loss they backward,
    what each name or dotted name is bound to (and whether under `torch.no_grad()`), and whether it freezes a
    module or writes `.grad` itself."""

    def __init__(self, q, body: list):
        self.q = q
        self.steps: list = []  # (call, optimizer spelling, statement)
        self.zeros: list = []  # (call, receiver spelling or None, statement)
        self.backwards: list = []  # (call, loss expression)
        self.binds: dict = {}  # spelling -> [_Bind]
        self.place: dict = {}  # id(statement) -> (block, index)
        self.loops: dict = {}  # id(step or backward call) -> the loops of this scope around it
        self.loop_names: dict = {}  # name a `for` of this scope binds -> what it iterates (`for opt in optimizers`)
        self.frozen = False
        self.grad_writes = False
        self._stack: list = []
        self._block(body, False)

    # -- the walk ----------------------------------------------------------------------------------------
    def _block(self, stmts: list, no_grad: bool) -> None:
        for i, s in enumerate(stmts):
            if isinstance(s, _SCOPES):
                continue
            self.place[id(s)] = (stmts, i)
            if isinstance(s, (ast.With, ast.AsyncWith)):
                inner = no_grad
                for item in s.items:
                    self._expr(item.context_expr, s)
                    inner = inner or self._no_grad(item.context_expr)
                    if item.optional_vars is not None:
                        self._bind(item.optional_vars, item.context_expr, _end(item.context_expr), no_grad)
                self._block(s.body, inner)
            elif isinstance(s, (ast.For, ast.AsyncFor)):
                self._expr(s.iter, s)
                self._bind(s.target, s.iter, _end(s.iter), no_grad)
                self.loop_names.update((n.id, s.iter) for n in ast.walk(s.target) if isinstance(n, ast.Name))
                self._stack.append(id(s))
                self._block(s.body, no_grad)
                self._stack.pop()
                self._block(s.orelse, no_grad)
            elif isinstance(s, ast.While):
                self._expr(s.test, s)
                self._stack.append(id(s))
                self._block(s.body, no_grad)
                self._stack.pop()
                self._block(s.orelse, no_grad)
            elif isinstance(s, ast.If):
                self._expr(s.test, s)
                self._block(s.body, no_grad)
                self._block(s.orelse, no_grad)
            elif isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
                self._block(s.body, no_grad)
                for h in s.handlers:
                    self._block(h.body, no_grad)
                self._block(s.orelse, no_grad)
                self._block(s.finalbody, no_grad)
            elif type(s).__name__ == "Match":
                self._expr(s.subject, s)
                for case in s.cases:
                    self._block(case.body, no_grad)
            else:
                self._expr(s, s)
                self._simple(s, no_grad)

    def _simple(self, s: ast.stmt, no_grad: bool) -> None:
        if isinstance(s, ast.Assign):
            for t in s.targets:
                self._bind(t, s.value, _end(s), no_grad)
        elif isinstance(s, ast.AnnAssign) and s.value is not None:
            self._bind(s.target, s.value, _end(s), no_grad)
        elif isinstance(s, ast.AugAssign):
            self._bind(s.target, s.value, _end(s), no_grad, aug=True)
        if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Attribute) and n.attr == "requires_grad":
                        self.frozen = True
                    if isinstance(n, ast.Attribute) and n.attr == "grad":
                        self.grad_writes = True

    def _bind(self, target: ast.AST, value: ast.AST, end: tuple, no_grad: bool, aug: bool = False) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._bind(elt, value, end, no_grad, aug)
            return
        if isinstance(target, ast.Starred):
            target = target.value
        name = dotted_name(target)
        if name is not None:
            self.binds.setdefault(name, []).append(_Bind(end, value, no_grad, aug))

    def _expr(self, node: ast.AST, stmt: ast.stmt) -> None:
        """The calls of one statement's own expressions (not of nested blocks or scopes)."""
        todo = [node]
        while todo:
            n = todo.pop()
            if isinstance(n, _SCOPES) or (n is not node and isinstance(n, ast.stmt)):
                continue
            if isinstance(n, ast.Call):
                self._call(n, stmt)
            todo.extend(children(n))

    def _call(self, call: ast.Call, stmt: ast.stmt) -> None:
        f = call.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if any(w in name for w in _FREEZE_WORDS):
            self.frozen = True
        if "zero_grad" in name:
            receiver = dotted_name(f.value) if isinstance(f, ast.Attribute) else None
            self.zeros.append((call, receiver, stmt))
        elif name == "zero_" and isinstance(f, ast.Attribute) and "grad" in (dotted_name(f.value) or "").split("."):
            self.grad_writes = True
        elif name == "step" and isinstance(f, ast.Attribute):
            # `opt.step()`, `opt.step(closure)`, or `scaler.step(opt)` (AMP): the stepped optimizer. Not
            # `env.step(action)`, which would cut a phase in two.
            owner = dotted_name(f.value) or ""
            if "scaler" in owner.rsplit(".", 1)[-1].lower():
                target = call.args[0] if len(call.args) == 1 else None
            elif not call.args or "opt" in owner.rsplit(".", 1)[-1].lower():
                target = f.value
            else:
                target = None
            spelled = dotted_name(target) if target is not None else None
            if spelled is not None:
                self.steps.append((call, spelled, stmt))
                self.loops[id(call)] = frozenset(self._stack)
        elif name in ("backward", "manual_backward"):
            loss = self._loss(call) if isinstance(f, ast.Attribute) else call.args[0] if call.args else None
            if loss is not None and not any(k.arg == "inputs" for k in call.keywords):
                self.backwards.append((call, loss))
                self.loops[id(call)] = frozenset(self._stack)

    @staticmethod
    def _loss(call: ast.Call):
        """The loss a backward call backwards: `loss.backward()`, `scaler.scale(loss).backward()`,
        `accelerator.backward(loss / n)`, `self.manual_backward(loss)`."""
        f = call.func
        owner = f.value
        spelled = dotted_name(owner) or ""
        if f.attr == "manual_backward" or spelled.rsplit(".", 1)[-1] in _BACKWARD_OWNERS:
            return call.args[0] if call.args else None
        if _method(owner, ("scale",)) and len(owner.args) == 1:
            return owner.args[0]
        return owner

    def _no_grad(self, expr: ast.AST) -> bool:
        name = self.q.call_name(expr) if isinstance(expr, ast.Call) else None
        if name in ("torch.no_grad", "torch.inference_mode"):
            return True
        if isinstance(expr, ast.Call) and name == "torch.set_grad_enabled":
            return bool(expr.args) and isinstance(expr.args[0], ast.Constant) and expr.args[0].value is False
        return False

    # -- questions ---------------------------------------------------------------------------------------
    def adjacent(self, step_stmt: ast.stmt, zero_stmt: ast.stmt) -> bool:
        """`zero_stmt` follows `step_stmt` in the same block, with only steps, updates and zeroings between."""
        a, b = self.place.get(id(step_stmt)), self.place.get(id(zero_stmt))
        if a is None or b is None or a[0] is not b[0] or not a[1] < b[1]:
            return False
        between = a[0][a[1] + 1:b[1]]
        return all(isinstance(s, ast.Expr) and _method(s.value, _BETWEEN) for s in between)

    def reaches(self, expr: ast.AST, modules: set, seen: set | None = None, depth: int = 0):
        """The call of one of `modules` (or a module holding one) that `expr` directly makes or takes a value
        from through names bound in this scope, outside `.detach()` and `torch.no_grad()`; None if none."""
        seen = set() if seen is None else seen
        todo = [expr]
        while todo:
            n = todo.pop()
            if isinstance(n, _SCOPES):
                continue
            if isinstance(n, ast.Call):
                f = n.func
                last = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                # `x.detach()`, `x.size()`, `torch.randn_like(x)`: nothing of `x`'s graph goes on.
                if last in _CUTS or last.endswith("_like"):
                    continue
                callee = f.value if isinstance(f, ast.Attribute) and f.attr == "forward" else f
                spelled = dotted_name(callee)
                if spelled is not None and any(_runs(n, spelled, m) for m in modules):
                    return n
            if isinstance(n, ast.Attribute) and n.attr in _CUT_ATTRS:
                continue
            if isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Load) and depth < _DEPTH:
                hit = self._through(n, modules, seen, depth)
                if hit is not None:
                    return hit
            todo.extend(ast.iter_child_nodes(n))
        return None

    def _through(self, use: ast.AST, modules: set, seen: set, depth: int):
        spelled = dotted_name(use)
        binds = self.binds.get(spelled) if spelled is not None else None
        if not binds:
            return None
        at = _pos(use)
        earlier = [b for b in binds if b.end <= at]
        for b in reversed(earlier):
            if id(b) not in seen:
                seen.add(id(b))
                if not b.no_grad:
                    hit = self.reaches(b.value, modules, seen, depth + 1)
                    if hit is not None:
                        return hit
            if not b.aug:
                break
        return None


class StaleGradsFromOtherBackward(Rule):
    code = "GS515"
    name = "stale-grads-from-other-backward"
    severity = Severity.WARNING
    summary = ("An optimizer zeroed only right after its own step keeps the gradients another phase's backward "
               "(a generator loss through the discriminator) left on its parameters, and its next step applies "
               "them.")
    events = (FileEvent,)
    what_it_does = (
        "In one function (a GAN or VQ-GAN train step, or the module's top level), flags `opt.zero_grad()` when:\n\n"
        "- `opt` is zeroed only right after its own step (`opt.step()` or `scaler.step(opt)`, then "
        "`opt.zero_grad()`), with no other zeroing of it in the function (nor `model.zero_grad()` on the module "
        "it trains, nor a `.grad` write);\n"
        "- the module `opt` trains is known from its construction in the file: `Adam(D.parameters())`, "
        "`get_optimizer(vae.discr.parameters(), ...)`, `Adam(set(X.discr.parameters()))`, "
        "`X.discr_parameters()`, or a name bound to such a parameter set; a constructor's parameter stored "
        "with `self.vae = vae` maps `vae.discr` to `self.vae.discr`; an optimizer read back with "
        "`getattr(self, f\"discr_optim_{i}\")` is followed to the class's `setattr(self, key, Adam(d.parameters()))` "
        "in a loop `for key, d in self.discr_iter()` whose generator method yields `(f\"discr_optim_{i}\", d)` for "
        "`d` in `enumerate(self.codec.discriminators)` (through a property returning `unwrap_model(self.codec)`);\n"
        "- another backward of the function (not one of `opt`'s own phase, the backwards since the previous "
        "optimizer step) backwards a loss that calls that module, or a module holding it (`self.vae(...)` "
        "runs `self.vae.discr`), directly or through names bound in the function, not cut by `.detach()` and "
        "not under `torch.no_grad()`. Backward spellings: `loss.backward()`, `accelerator.backward(loss)`, "
        "`scaler.scale(loss).backward()`, `self.manual_backward(loss)`.\n\n"
        "Not flagged: backwards whose gradients another optimizer over the same modules (or modules holding "
        "them) clears right after its own step (`cf_opt` and `kg_opt` both built from `model.parameters()`, each "
        "zeroed after its step), functions that freeze a module for a phase (`requires_grad_(...)`, "
        "`.requires_grad = ...`, `set_requires_grad(...)`, Lightning's `toggle_optimizer`), backwards with "
        "`inputs=`, and optimizers whose construction the file does not show.")
    why_bad = (
        "`backward()` adds into `.grad` of every parameter the loss reaches, whatever optimizer owns it. The "
        "generator's loss runs through the discriminator, so its backward also fills the discriminator's "
        "gradients. An optimizer that is zeroed only right after its step does not clear them before its own "
        "backward: its next step applies the sum of its own loss's gradient and the other phase's (for a "
        "discriminator, the gradient of the generator's objective, which points the opposite way). Nothing "
        "raises; training is just wrong. lucidrains' muse-maskgit, audiolm and magvit2 trainers had this bug.")
    example = ("d_loss = D(G(z).detach()).mean() - D(real).mean()\nd_loss.backward()\nopt_d.step()\n"
               "opt_d.zero_grad()\n\ng_loss = -D(G(z)).mean()  # also fills D's .grad\nopt_g.zero_grad()\n"
               "g_loss.backward()\nopt_g.step()")
    use_instead = ("opt_d.zero_grad()\nd_loss = D(G(z).detach()).mean() - D(real).mean()\nd_loss.backward()\n"
                   "opt_d.step()\n\ng_loss = -D(G(z)).mean()\nopt_g.zero_grad()\ng_loss.backward()\n"
                   "opt_g.step()")
    fix_safety = ("This rule offers no automatic fix: moving `zero_grad()` before the optimizer's own backward "
                  "changes what its step applies, and where that backward starts (gradient accumulation "
                  "loops) is left to you.")
    references = ("https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html",
                  "https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html",
                  "https://pytorch.org/tutorials/beginner/dcgan_faces_tutorial.html")

    _gan = ("import torch\nimport torch.nn as nn\n\ntorch.manual_seed(0)\nG = nn.Linear(2, 2)\nD = nn.Linear(2, 1)\n"
            "opt_g = torch.optim.SGD(G.parameters(), lr=0.1)\nopt_d = torch.optim.SGD(D.parameters(), lr=0.1)\n"
            "used, own = [], []\n\nfor step in range(2):\n    real, z = torch.randn(8, 2), torch.randn(8, 2)\n")
    # The discriminator's own loss, its gradient alone, and the gradient its step applies.
    _d_phase = ("    d_loss = D(G(z).detach()).mean() - D(real).mean()\n"
                "    own.append(torch.autograd.grad(d_loss, D.weight, retain_graph=True)[0])\n"
                "    d_loss.backward()\n    used.append(D.weight.grad.clone())\n    opt_d.step()\n")
    _g_phase = "    g_loss = -D(G(z)).mean()\n    opt_g.zero_grad()\n    g_loss.backward()\n    opt_g.step()\n"
    # lucidrains' VQ-GAN trainers: one module holds the discriminator; its call returns the generator loss
    # (through the discriminator) or the discriminator loss (on detached reconstructions).
    _vae = ("import torch\nimport torch.nn as nn\n\n\nclass VAE(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.enc = nn.Linear(2, 2)\n        self.discr = nn.Linear(2, 1)\n\n"
            "    def forward(self, x, return_discr_loss=False):\n        fake = self.enc(x)\n"
            "        if return_discr_loss:\n"
            "            return self.discr(fake.detach()).mean() - self.discr(x).mean()\n"
            "        return (fake - x).pow(2).mean() - self.discr(fake).mean()\n\n\n"
            "class Trainer:\n    def __init__(self, vae):\n        self.vae = vae\n"
            "        discr_parameters = set(vae.discr.parameters())\n"
            "        self.optim = torch.optim.SGD(vae.enc.parameters(), lr=0.1)\n"
            "        self.discr_optim = torch.optim.SGD(discr_parameters, lr=0.1)\n"
            "        self.used, self.own = [], []\n\n"
            "    def train_step(self, img):\n")
    _vae_gen = ("        loss = self.vae(img)\n        loss.backward()\n        self.optim.step()\n"
                "        self.optim.zero_grad()\n\n")
    _vae_discr = ("        loss = self.vae(img, return_discr_loss=True)\n"
                  "        self.own.append(torch.autograd.grad(loss, self.vae.discr.weight, retain_graph=True)[0])\n"
                  "        loss.backward()\n        self.used.append(self.vae.discr.weight.grad.clone())\n"
                  "        self.discr_optim.step()\n")
    _vae_run = ("\n\ntorch.manual_seed(0)\ntrainer = Trainer(VAE())\nfor _ in range(2):\n"
                "    trainer.train_step(torch.randn(8, 2))\n")

    # audiolm's SoundStream trainer: one optimizer per multi-scale discriminator, stored under computed names.
    _multi = ("import torch\nimport torch.nn as nn\n\n\nclass Codec(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.enc = nn.Linear(2, 2)\n"
              "        self.discriminators = nn.ModuleList([nn.Linear(2, 1) for _ in range(2)])\n\n"
              "    def forward(self, x, return_discr_loss=False):\n        fake = self.enc(x)\n"
              "        if return_discr_loss:\n"
              "            return sum(d(fake.detach()).mean() - d(x).mean() for d in self.discriminators)\n"
              "        return (fake - x).pow(2).mean() - sum(d(fake).mean() for d in self.discriminators)\n\n\n"
              "class Trainer:\n    def __init__(self, codec):\n        self.codec = codec\n"
              "        self.optim = torch.optim.SGD(codec.enc.parameters(), lr=0.1)\n"
              "        for key, discr in self.discr_iter():\n"
              "            setattr(self, key, torch.optim.SGD(discr.parameters(), lr=0.1))\n"
              "        self.used, self.own = [], []\n\n    def discr_iter(self):\n"
              "        for ind, discr in enumerate(self.codec.discriminators):\n"
              "            yield f\"discr_optim_{ind}\", discr\n\n    def train_step(self, x):\n"
              "        loss = self.codec(x)\n        loss.backward()\n        self.optim.step()\n"
              "        self.optim.zero_grad()\n")
    _multi_discr = ("        loss = self.codec(x, return_discr_loss=True)\n"
                    "        w = self.codec.discriminators[0].weight\n"
                    "        self.own.append(torch.autograd.grad(loss, w, retain_graph=True)[0])\n"
                    "        loss.backward()\n        self.used.append(w.grad.clone())\n"
                    "        for ind in range(len(self.codec.discriminators)):\n"
                    "            opt = getattr(self, f\"discr_optim_{ind}\")\n            opt.step()\n")
    _multi_run = ("\n\ntorch.manual_seed(0)\ntrainer = Trainer(Codec())\nfor _ in range(2):\n"
                  "    trainer.train_step(torch.randn(8, 2))\n")

    valid = (
        # The fixed multi-scale trainer: every discriminator optimizer zeroed before the discriminator backward.
        Valid(_multi + "        for ind in range(len(self.codec.discriminators)):\n"
              "            getattr(self, f\"discr_optim_{ind}\").zero_grad()\n" + _multi_discr + _multi_run
              + "assert torch.allclose(trainer.used[1], trainer.own[1])\n"),
        # The standard loop: each optimizer zeroed before its own backward.
        Valid(_gan + "    opt_d.zero_grad()\n" + _d_phase + _g_phase
              + "\nassert torch.allclose(used[1], own[1])\n"),
        # The generator phase freezes the discriminator: its backward leaves nothing on it.
        Valid(_gan + _d_phase + "    opt_d.zero_grad()\n    D.requires_grad_(False)\n" + _g_phase
              + "    D.requires_grad_(True)\n\nassert torch.allclose(used[1], own[1])\n"),
        # The generator is zeroed only after its step, but the discriminator's loss sees `G(z).detach()`.
        Valid(_gan + "    g_loss = -D(G(z)).mean()\n"
              "    g_own = torch.autograd.grad(g_loss, G.weight, retain_graph=True)[0]\n"
              "    g_loss.backward()\n    g_used = G.weight.grad.clone()\n    opt_g.step()\n    opt_g.zero_grad()\n"
              "    opt_d.zero_grad()\n" + _d_phase + "    assert torch.allclose(g_used, g_own)\n"),
        # The same with the fake made under `torch.no_grad()`.
        Valid(_gan + "    g_loss = -D(G(z)).mean()\n    g_loss.backward()\n    opt_g.step()\n    opt_g.zero_grad()\n"
              "    with torch.no_grad():\n        fake = G(z)\n    opt_d.zero_grad()\n"
              "    d_loss = D(fake).mean() - D(real).mean()\n    d_loss.backward()\n    opt_d.step()\n"),
        # Two independent models, each zeroed after its step: neither loss calls the other model.
        Valid("import torch\nimport torch.nn as nn\n\ntorch.manual_seed(0)\nactor = nn.Linear(2, 1)\n"
              "critic = nn.Linear(2, 1)\nopt_a = torch.optim.SGD(actor.parameters(), lr=0.1)\n"
              "opt_c = torch.optim.SGD(critic.parameters(), lr=0.1)\n\nfor step in range(2):\n"
              "    x = torch.randn(8, 2)\n    c_loss = (critic(x) - 1).pow(2).mean()\n"
              "    c_own = torch.autograd.grad(c_loss, critic.weight, retain_graph=True)[0]\n"
              "    c_loss.backward()\n    assert torch.allclose(critic.weight.grad, c_own)\n    opt_c.step()\n"
              "    opt_c.zero_grad()\n    a_loss = actor(x).pow(2).mean()\n    a_loss.backward()\n    opt_a.step()\n"
              "    opt_a.zero_grad()\n"),
        # The fixed VQ-GAN trainer: the discriminator's optimizer is zeroed before its own backward.
        Valid(_vae + _vae_gen + "        self.discr_optim.zero_grad()\n" + _vae_discr + _vae_run
              + "assert torch.allclose(trainer.used[1], trainer.own[1])\n"),
        # KGAT's two phases: two optimizers over the same parameters, each zeroed right after its step, so either
        # zeroing clears what the other phase's backward left.
        Valid("import torch\nimport torch.nn as nn\n\ntorch.manual_seed(0)\nmodel = nn.Linear(2, 1)\n"
              "cf_opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
              "kg_opt = torch.optim.SGD(model.parameters(), lr=0.1)\n\nfor epoch in range(2):\n"
              "    for it in range(2):\n        x = torch.randn(8, 2)\n        cf_loss = model(x).pow(2).mean()\n"
              "        own = torch.autograd.grad(cf_loss, model.weight, retain_graph=True)[0]\n"
              "        cf_loss.backward()\n        assert torch.allclose(model.weight.grad, own)\n"
              "        cf_opt.step()\n        cf_opt.zero_grad()\n    for it in range(2):\n"
              "        x = torch.randn(8, 2)\n        kg_loss = (model(x) - 1).abs().mean()\n"
              "        own = torch.autograd.grad(kg_loss, model.weight, retain_graph=True)[0]\n"
              "        kg_loss.backward()\n        assert torch.allclose(model.weight.grad, own)\n"
              "        kg_opt.step()\n        kg_opt.zero_grad()\n"),
    )
    invalid = (
        # The generator's backward fills D's `.grad`; D is zeroed only after its step, so its second step
        # applies the generator's gradient too.
        Invalid(_gan + _d_phase + "    opt_d.zero_grad()\n" + _g_phase, line=18,
                runtime="silent: not torch.allclose(used[1], own[1])"),
        # muse-maskgit's VQ-GAN trainer: the generator loss from `self.vae(img)` runs through `self.vae.discr`.
        Invalid(_vae + _vae_gen + _vae_discr + "        self.discr_optim.zero_grad()\n" + _vae_run, line=37,
                runtime="silent: not torch.allclose(trainer.used[1], trainer.own[1])"),
        # With AMP's scaler (`scaler.step(opt)`), the discriminator phase first and the generator phase after.
        Invalid(_gan.replace("used, own = [], []\n", "scaler = torch.amp.GradScaler('cpu', enabled=False)\n"
                             "used, own = [], []\n")
                + _d_phase.replace("    d_loss.backward()\n", "    scaler.scale(d_loss).backward()\n")
                .replace("    opt_d.step()\n", "    scaler.step(opt_d)\n    scaler.update()\n")
                + "    opt_d.zero_grad()\n    g_loss = -D(G(z)).mean()\n    opt_g.zero_grad()\n"
                  "    g_loss.backward()\n    scaler.step(opt_g)\n    scaler.update()\n",
                line=20, runtime="silent: not torch.allclose(used[1], own[1])"),
        # Optimizers stored with `setattr(self, key, ...)` and read back with `getattr(self, f"discr_optim_{ind}")`:
        # each is zeroed only after its step, and the generator loss runs through every discriminator.
        Invalid(_multi + _multi_discr + "            opt.zero_grad()\n" + _multi_run, line=43,
                runtime="silent: not torch.allclose(trainer.used[1], trainer.own[1])"),
        # An optimizer over both networks also holds D's parameters, but it is zeroed before its backward, not
        # after its step: the generator's backward still leaves D's gradient for opt_d's next step.
        Invalid(_gan.replace("opt_g = torch.optim.SGD(G.parameters(), lr=0.1)\n",
                             "opt_g = torch.optim.SGD(list(G.parameters()) + list(D.parameters()), lr=0.1)\n")
                + _d_phase + "    opt_d.zero_grad()\n" + _g_phase, line=18,
                runtime="silent: not torch.allclose(used[1], own[1])"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        attrs = q.attrs
        if "zero_grad" not in attrs or "step" not in attrs or not ("backward" in attrs or "manual_backward" in attrs):
            return  # no step, zeroing and backward in the file (this rule runs on every keystroke)
        # Only the functions (or the module's top level) that call `zero_grad()`: the innermost function around
        # each such call, found by lines (parent links for a large class would cost more than the whole check).
        lines = sorted({c.lineno for c in q.calls() if _method(c, ("zero_grad",))})
        if not lines:
            return
        functions = [n for n in q.nodes() if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        scopes: dict = {}
        for line in lines:
            around = [f for f in functions if f.lineno <= line <= f.end_lineno]
            fn = max(around, key=lambda f: f.lineno) if around else None
            scopes.setdefault(id(fn), fn)
        for fn in scopes.values():
            self._check_scope(q, fn, q.tree.body if fn is None else fn.body, report)

    def _check_scope(self, q, fn, body: list, report) -> None:
        scope = _Scope(q, body)
        if len(scope.backwards) < 2 or not scope.steps or scope.frozen or scope.grad_writes:
            return
        stepped = {s for _, s, _ in scope.steps}
        for call, receiver, stmt in scope.zeros:
            if receiver is None or receiver not in stepped:
                continue
            mine = [z for z in scope.zeros if z[1] == receiver]
            if len(mine) != 1:
                continue
            step = next((s for s in scope.steps if s[1] == receiver and scope.adjacent(s[2], stmt)), None)
            # `opt.step(closure)`: the closure (a nested function) may zero the gradients itself.
            if step is None or _method(step[0], ("step",)) and step[0].args and dotted_name(step[0].func.value) == receiver:
                continue
            modules = _trained_modules(q, fn, receiver)
            if not modules:
                continue
            if self._zeroed_otherwise(q, scope, receiver, modules, stepped):
                continue
            own = self._own_phase(scope, step[0])
            if not own:
                continue
            cleared = self._cleared_by_sharers(q, fn, scope, receiver, modules)
            for other, loss in scope.backwards:
                if id(other) in own or id(other) in cleared or not self._before_a_step(scope, fn, other, step[0]):
                    continue
                if scope.reaches(loss, modules) is None:
                    continue
                line, col = report.source.span(other)[:2]
                report.add(self, stmt,
                           msg("The backward at line ", line, " leaves gradients on this optimizer's parameters "
                               "that its next step applies. Call `", receiver, ".zero_grad()` before its own "
                               "backward, not only after its step."),
                           related=[Note(line, col, "this backward also fills the `.grad` of the parameters `"
                                         + receiver + "` steps")])
                break

    @staticmethod
    def _zeroed_otherwise(q, scope: _Scope, receiver: str, modules: set, stepped: set) -> bool:
        """Another zeroing in the function may clear the optimizer's parameters: `model.zero_grad()` on the module
        it trains or one holding it, or a zeroing of something that is neither another optimizer nor a module
        known to be unrelated."""
        for _, other, _ in scope.zeros:
            if other == receiver:
                continue
            if other is None or other in scope.loop_names and _may_hold(q, scope.loop_names[other], receiver):
                return True
            if other in stepped and not any(_related(other, m) for m in modules):
                continue
            if any(_related(other, m) for m in modules) or "." not in other and other not in stepped:
                return True
        return False

    @staticmethod
    def _cleared_by_sharers(q, fn, scope: _Scope, receiver: str, modules: set) -> set:
        """The backwards whose gradients on the optimizer's parameters another optimizer clears first: one built
        from the same modules or ones holding them (`cf_opt = Adam(model.parameters())`,
        `kg_opt = Adam(model.parameters())`), zeroed right after its own step, clears every parameter of
        `receiver` too, so the backwards of its own phase leave nothing for `receiver`'s next step."""
        cleared: set = set()
        for _, other, stmt in scope.zeros:
            if other is None or other == receiver:
                continue
            step = next((s for s in scope.steps if s[1] == other and scope.adjacent(s[2], stmt)), None)
            if step is None:
                continue
            held = _trained_modules(q, fn, other)
            if not held or not all(any(m == h or m.startswith(h + ".") for h in held) for m in modules):
                continue
            cleared |= StaleGradsFromOtherBackward._own_phase(scope, step[0])
        return cleared

    @staticmethod
    def _before_a_step(scope: _Scope, fn, other: ast.Call, step: ast.Call) -> bool:
        """Does a step of the optimizer run after `other`? Surely when `other` comes first; after the step, when a
        loop of the scope holds both, or the scope is a function (a train step, called again) whose step is in no
        loop of its own (a backward after a training loop, for saliency or a final evaluation, is not)."""
        if _pos(other) < _pos(step):
            return True
        around = scope.loops.get(id(step), frozenset())
        if around & scope.loops.get(id(other), frozenset()):
            return True
        return fn is not None and not around

    @staticmethod
    def _own_phase(scope: _Scope, step: ast.Call) -> set:
        """The backwards of the optimizer's own phase: going back from its step over the steps just before it
        (`opt_a.step(); opt_b.step()`), the backwards up to the previous optimizer step."""
        events = sorted([(_pos(c), "b", c) for c, _ in scope.backwards]
                        + [(_pos(c), "s", c) for c, _, _ in scope.steps if c is not step], key=lambda e: e[0])
        at = _pos(step)
        own: set = set()
        for pos, kind, call in reversed([e for e in events if e[0] < at]):
            if kind == "b":
                own.add(id(call))
            elif own:
                break
        return own


def _mentions(node: ast.AST, spelled: str) -> bool:
    return any(isinstance(n, (ast.Name, ast.Attribute)) and dotted_name(n) == spelled for n in ast.walk(node))


def _may_hold(q, iterable: ast.AST, receiver: str) -> bool:
    """May `for opt in iterable` visit the optimizer `receiver`? Yes when the iterable names it, or is a call or
    container the file fills elsewhere with it (`self.optimizers = [self.opt_g, self.opt_d]`,
    `self.opts.append(self.opt_d)`); not for a list the file fills only with other optimizers
    (`self.multiscale_discr_optimizers.append(opt)`)."""
    if _mentions(iterable, receiver):
        return True
    container = dotted_name(iterable)
    if container is None:
        return True
    for a in q.assigns:
        if any(dotted_name(t) == container for t in a.targets) and _mentions(a.value, receiver):
            return True
    for call in q.calls():
        f = call.func
        if isinstance(f, ast.Attribute) and f.attr in ("append", "extend", "insert") and dotted_name(f.value) == container \
                and any(_mentions(x, receiver) for x in call.args):
            return True
    return False


def _trained_modules(q, fn, receiver: str) -> set | None:
    """The module paths (as the train function spells them) whose parameters the optimizer `receiver` was built
    from; None when any of its constructions in the file cannot be traced."""
    sites = []
    if receiver.startswith("self."):
        cls = q.enclosing(fn, (ast.ClassDef,)) if fn is not None else None
        if cls is None:
            return None
        places = [m for m in ast.walk(cls) if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    else:
        places, f = [], fn
        while f is not None:
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
                places.append(f)
            f = q.enclosing_function(f)
        places.append(None)
    for place in places:
        for a in _assigns(q, place):
            targets = a.targets if isinstance(a, ast.Assign) else [a.target]
            if any(dotted_name(t) == receiver for t in targets):
                sites.append((a, place))
    modules: set = set()
    for a, place in sites:
        value = a.value
        if value is None or isinstance(value, ast.Constant):
            continue
        # `self.optim = accelerator.prepare(self.optim)` and other wrappers of the same optimizer.
        handed = [*value.args, *(k.value for k in value.keywords)] if isinstance(value, ast.Call) else []
        if any(dotted_name(x) == receiver for x in handed):
            continue
        found = _dynamic_attr_modules(q, value, fn)
        if found is None:
            found = _from_constructor(q, value, a, place, fn)
        if found is None:
            return None
        modules |= found
    return modules or None


def _prefix(key: ast.AST) -> str | None:
    """The constant start of an attribute name: `f"discr_optim_{i}"` -> "discr_optim_"; None if none."""
    if isinstance(key, ast.JoinedStr) and key.values and isinstance(key.values[0], ast.Constant) \
            and isinstance(key.values[0].value, str) and len(key.values) > 1:
        return key.values[0].value or None
    return None


def _dynamic_attr_modules(q, value: ast.AST, fn) -> set | None:
    """`getattr(self, f"multiscale_discr_optimizer_{i}")`: the modules of the optimizers the class stores under
    names with that start, `setattr(self, key, get_optimizer(discr.parameters()))` in a loop
    `for key, discr in self.discr_iter()` whose generator method yields `(f"multiscale_discr_optimizer_{i}", discr)`
    for `discr` in `enumerate(self.codec.discriminators)`: {"self.codec.discriminators"}. None when any store
    of that family cannot be followed (wrappers of the same optimizer, `accelerator.prepare(getattr(self, key))`,
    are skipped)."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "getattr"
            and len(value.args) == 2 and isinstance(value.args[0], ast.Name) and value.args[0].id == "self"):
        return None
    prefix = _prefix(value.args[1])
    cls = q.enclosing(fn, (ast.ClassDef,)) if fn is not None and prefix else None
    if cls is None:
        return None
    methods = {m.name: m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
    modules: set = set()
    for m in methods.values():
        loops = [n for n in ast.walk(m) if isinstance(n, (ast.For, ast.AsyncFor))]
        for call in ast.walk(m):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "setattr"
                    and len(call.args) == 3 and isinstance(call.args[0], ast.Name) and call.args[0].id == "self"):
                continue
            key, stored = call.args[1], call.args[2]
            loop, index = None, None
            if _prefix(key) is not None:
                if not _prefix(key).startswith(prefix) and not prefix.startswith(_prefix(key)):
                    continue
            elif isinstance(key, ast.Name):
                loop, index = _keyed_loop(loops, call, key.id)
                if loop is None:
                    return None
                yielded = _yielded(methods, loop.iter)
                if yielded is None:
                    return None
                if not any(len(t) > index and _prefix(t[index]) is not None and _prefix(t[index]).startswith(prefix)
                           for t, _ in yielded):
                    continue
            else:
                return None
            ctor = _bound_value(m, stored, call)
            if ctor is None:
                return None
            if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "getattr"
                   for n in ast.walk(ctor)) or _wraps_getattr(m, ctor, call):
                continue  # `accelerator.prepare(getattr(self, key))`: the same optimizer, wrapped
            if not _optimizer_call(q, ctor) or not ctor.args:
                return None
            found = _param_modules(q, ctor.args[0], call, m, 0)
            if found is None:
                return None
            for mod in found:
                head, _, rest = mod.partition(".")
                if loop is not None and isinstance(loop.target, ast.Tuple):
                    names = [e.id if isinstance(e, ast.Name) else None for e in loop.target.elts]
                    if head in names:
                        path = _yielded_module(methods, loop.iter, names.index(head))
                        if path is None:
                            return None
                        modules.add(path + ("." + rest if rest else ""))
                        continue
                if head != "self":
                    return None
                modules.add(mod)
    return {_unwrapped(methods, m) for m in modules} or None


def _keyed_loop(loops: list, call: ast.Call, name: str):
    """The `for` around `call` whose tuple target binds `name`, and its position in the tuple."""
    for loop in loops:
        if loop.lineno <= call.lineno <= loop.end_lineno and isinstance(loop.target, ast.Tuple):
            for i, e in enumerate(loop.target.elts):
                if isinstance(e, ast.Name) and e.id == name:
                    return loop, i
    return None, None


def _yielded(methods: dict, it: ast.AST):
    """`self.m()` where `m` is a generator method of the class: its yielded tuples with the method."""
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and isinstance(it.func.value, ast.Name)
            and it.func.value.id == "self" and it.func.attr in methods):
        return None
    m = methods[it.func.attr]
    out = [(n.value.elts, m) for n in ast.walk(m) if isinstance(n, ast.Yield) and isinstance(n.value, ast.Tuple)]
    return out or None


def _yielded_module(methods: dict, it: ast.AST, index: int) -> str | None:
    """The module container the generator's `index`-th yielded element comes from: `discr` of
    `for i, discr in enumerate(self.codec.discriminators)` -> "self.codec.discriminators"."""
    yielded = _yielded(methods, it)
    if not yielded:
        return None
    paths = set()
    for elts, m in yielded:
        if len(elts) <= index or not isinstance(elts[index], ast.Name):
            return None
        name = elts[index].id
        src = None
        for loop in (n for n in ast.walk(m) if isinstance(n, (ast.For, ast.AsyncFor))):
            target, container = loop.target, loop.iter
            if isinstance(container, ast.Call) and isinstance(container.func, ast.Name) \
                    and container.func.id == "enumerate" and container.args and isinstance(target, ast.Tuple) \
                    and len(target.elts) == 2:
                target, container = target.elts[1], container.args[0]
            if isinstance(target, ast.Name) and target.id == name:
                src = dotted_name(container)
        if src is None or not src.startswith("self."):
            return None
        paths.add(src)
    return paths.pop() if len(paths) == 1 else None


def _unwrapped(methods: dict, path: str) -> str:
    """`self.unwrapped_codec.discrs` -> `self.codec.discrs` when `unwrapped_codec` is a property returning
    `self.codec` or `<x>.unwrap_model(self.codec)`."""
    head, _, rest = path[len("self."):].partition(".")
    m = methods.get(head)
    if m is None or not any(dotted_name(d) == "property" for d in m.decorator_list):
        return path
    rets = [n.value for n in ast.walk(m) if isinstance(n, ast.Return) and n.value is not None]
    if len(rets) != 1:
        return path
    r = rets[0]
    if isinstance(r, ast.Call) and "unwrap" in (dotted_name(r.func) or "") and len(r.args) == 1:
        r = r.args[0]
    inner = dotted_name(r)
    if inner is None or not inner.startswith("self."):
        return path
    return inner + ("." + rest if rest else "")


def _bound_value(m, stored: ast.AST, at: ast.Call):
    """What `stored` is: itself when a call, else the one value a name is bound to in `m` before `at`."""
    if isinstance(stored, ast.Call):
        return stored
    if not isinstance(stored, ast.Name):
        return None
    bound = [a.value for a in ast.walk(m) if isinstance(a, ast.Assign) and a.lineno < at.lineno
             and any(isinstance(t, ast.Name) and t.id == stored.id for t in a.targets)]
    return bound[-1] if bound and isinstance(bound[-1], ast.Call) else None


def _wraps_getattr(m, ctor: ast.Call, at: ast.Call) -> bool:
    """`optimizer = getattr(self, name); optimizer = prepare(optimizer)`: the wrapped value is read back."""
    names = {n.id for n in ast.walk(ctor) if isinstance(n, ast.Name)}
    for a in ast.walk(m):
        if isinstance(a, ast.Assign) and a.lineno < at.lineno and isinstance(a.value, ast.Call) \
                and isinstance(a.value.func, ast.Name) and a.value.func.id == "getattr" \
                and any(isinstance(t, ast.Name) and t.id in names for t in a.targets):
            return True
    return False


def _assigns(q, place) -> list:
    """Assignments of a function (not of nested scopes), or of the module's top level when `place` is None."""
    body = q.tree.body if place is None else place.body
    out, todo = [], list(body)
    while todo:
        n = todo.pop()
        if isinstance(n, _SCOPES):
            continue
        if isinstance(n, (ast.Assign, ast.AnnAssign)):
            out.append(n)
        if isinstance(n, ast.stmt):
            todo.extend(c for c in ast.iter_child_nodes(n) if isinstance(c, (ast.stmt, ast.excepthandler)))
        elif isinstance(n, ast.excepthandler):
            todo.extend(n.body)
    return out


def _optimizer_call(q, call: ast.AST) -> bool:
    if not isinstance(call, ast.Call):
        return False
    qual = q.call_name(call) or ""
    f = call.func
    last = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return qual.startswith("torch.optim.") or last in _OPTIMIZERS or "optim" in last.lower()


def _from_constructor(q, value: ast.AST, site: ast.stmt, place, fn) -> set | None:
    if not _optimizer_call(q, value):
        return None
    params = value.args[0] if value.args else next(
        (k.value for k in value.keywords if k.arg in ("params", "parameters")), None)
    if params is None:
        return None
    found = _param_modules(q, params, site, place, 0)
    if found is None:
        return None
    return _as_seen_from(q, found, place, fn)


def _param_modules(q, expr: ast.AST, site: ast.stmt, place, depth: int) -> set | None:
    """`D.parameters()` -> {"D"}; `set(vae.discr.parameters())`, `chain(a.parameters(), b.parameters())`,
    `list(a.parameters()) + list(b.parameters())`, `[*a.parameters()]`, `vae.discr_parameters()`, and names
    bound to these in the constructing function; None for anything else."""
    if depth > 4:
        return None
    if isinstance(expr, ast.Call):
        f = expr.func
        if isinstance(f, ast.Attribute) and not expr.args and not expr.keywords:
            owner = dotted_name(f.value)
            if f.attr == "parameters" and owner is not None:
                return {owner}
            if f.attr in _DISCR_PARAMS and owner is not None:
                return {owner + ".discr"}
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name in ("set", "list", "tuple", "chain") and expr.args and not expr.keywords:
            return _union(q, expr.args, site, place, depth)
        if name == "filter" and len(expr.args) == 2:
            return _param_modules(q, expr.args[1], site, place, depth + 1)
        return None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _union(q, [expr.left, expr.right], site, place, depth)
    if isinstance(expr, (ast.List, ast.Tuple)) and expr.elts:
        return _union(q, [e.value if isinstance(e, ast.Starred) else e for e in expr.elts], site, place, depth)
    if isinstance(expr, ast.Name):
        bound = [a for a in _assigns(q, place) if _pos(a) < _pos(site)
                 and any(isinstance(t, ast.Name) and t.id == expr.id for t in
                         (a.targets if isinstance(a, ast.Assign) else [a.target]))]
        if len(bound) != 1 or bound[0].value is None:
            return None
        return _param_modules(q, bound[0].value, bound[0], place, depth + 1)
    return None


def _union(q, parts: list, site, place, depth: int) -> set | None:
    out: set = set()
    for p in parts:
        found = _param_modules(q, p, site, place, depth + 1)
        if found is None:
            return None
        out |= found
    return out or None


def _as_seen_from(q, modules: set, place, fn) -> set | None:
    """Module paths as the train function `fn` spells them: a constructor's `vae.discr` becomes
    `self.vae.discr` when `__init__` stores `self.vae = vae`; a path of another function that does not store its
    head in `self` cannot be followed."""
    if place is None or place is fn:
        return modules
    enclosing, f = set(), fn
    while f is not None:
        enclosing.add(id(f))
        f = q.enclosing_function(f)
    if id(place) in enclosing:
        return modules
    stores: dict = {}
    for a in _assigns(q, place):
        if isinstance(a, ast.Assign) and isinstance(a.value, ast.Name):
            for t in a.targets:
                spelled = dotted_name(t)
                if spelled is not None and spelled.startswith("self.") and spelled.count(".") == 1:
                    stores.setdefault(a.value.id, spelled)
    out = set()
    for m in modules:
        head, _, rest = m.partition(".")
        if head == "self":
            out.add(m)
        elif head in stores:
            out.add(stores[head] + ("." + rest if rest else ""))
        else:
            return None
    return out
