from __future__ import annotations

import ast

from ..engine.astwalk import dotted_name, walk
from ..engine.query import FileEvent
from ..engine.report import Note
from ..engine.report import text as msg
from ..findings import Severity
from .base import Invalid, Rule, Valid
from ._calls import own_name_calls

# Reading these does not carry the graph on: `v.detach()`, `v.item()`, ... (and `v.data`, see `_loads`)
_CUTS = ("detach", "item", "tolist", "numpy")
# Calls whose results are indices or truth values (no graph), whatever their arguments carry.
_INDEX_METHODS = frozenset({"argmax", "argmin", "argsort", "nonzero", "size", "dim", "numel"})
_INDEX_FUNCS = frozenset({"argmax", "argmin", "argsort", "nonzero", "where", "isnan", "isinf", "isfinite",
                          "eq", "ne", "lt", "le", "gt", "ge", "equal"})


def _indices(n: ast.AST) -> bool:
    """`torch.where(cond)` (one argument), `x.argmax(1)`, `torch.nonzero(m)`, `a < b`: no graph."""
    if isinstance(n, ast.Compare):
        return True
    if not isinstance(n, ast.Call) or not isinstance(n.func, ast.Attribute):
        return False
    if isinstance(n.func.value, ast.Name) and n.func.value.id == "torch" and n.func.attr in _INDEX_FUNCS:
        return n.func.attr != "where" or (len(n.args) == 1 and not n.keywords)
    return n.func.attr in _INDEX_METHODS


def _loads(expr: ast.AST) -> set:
    """Names whose graph `expr` carries on: every name it loads, except through `.detach()`, `.item()`, `.data`,
    ... and index or truth results (`torch.where(cond)`, `x.argmax(1)`, `a < b`), which have no history."""
    out: set = set()
    todo = [expr]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _CUTS:
            todo.extend(n.args)
            todo.extend(k.value for k in n.keywords)
            continue
        if _indices(n):
            continue
        if isinstance(n, ast.Attribute) and n.attr == "data":
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            out.add(n.id)
        if isinstance(n, (ast.Lambda, ast.FunctionDef)):
            continue
        todo.extend(ast.iter_child_nodes(n))
    return out


def _backward_target(stmt: ast.stmt):
    """(the name backwarded, whether `retain_graph=True` is passed) for `name.backward(...)` statements."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return None
    call = stmt.value
    f = call.func
    if not (isinstance(f, ast.Attribute) and f.attr == "backward" and isinstance(f.value, ast.Name)):
        return None
    retain = any(k.arg in ("retain_graph", "create_graph") and not (isinstance(k.value, ast.Constant)
                                                                    and k.value.value in (False, None))
                 for k in call.keywords)
    return f.value.id, retain


def _nested_backwards(stmt: ast.stmt) -> list:
    """`(name, retain)` of the `name.backward(...)` statements in the branches of the `if` statement `stmt`
    (nested `if`s included; not loops, `with` or `try`)."""
    out: list = []
    todo = [stmt] if isinstance(stmt, ast.If) else []
    while todo:
        node = todo.pop()
        for s in [*node.body, *node.orelse]:
            if isinstance(s, ast.If):
                todo.append(s)
            elif (t := _backward_target(s)) is not None:
                out.append(t)
    return out


def _backwarding_params(fn: ast.AST) -> list:
    """`(parameter index, parameter name, guard)` for each parameter of the function `fn` whose value reaches a
    `name.backward(...)` in its own body (through assignments, read as in `_loads`); `guard` is the parameter an
    enclosing `if <parameter>:` tests (`backward=True` options), else None."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    deps: dict = {p: {p} for p in params}
    assigns = [n for n in walk(fn) if isinstance(n, ast.Assign)]
    for _ in range(3):  # a few rounds reach the names bound after their use in `ast.walk`'s order
        changed = False
        for n in assigns:
            reach = set().union(*(deps.get(m, set()) for m in _loads(n.value)))
            if not reach:
                continue
            for t in n.targets:
                for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                    if isinstance(e, ast.Name) and not reach <= deps.get(e.id, set()):
                        deps[e.id] = deps.get(e.id, set()) | reach
                        changed = True
        if not changed:
            break
    out: list = []
    todo = [(s, None) for s in fn.body]
    while todo:
        s, guard = todo.pop()
        if isinstance(s, ast.If):
            test = s.test.id if isinstance(s.test, ast.Name) and s.test.id in params else None
            todo.extend((b, test or guard) for b in s.body)
            todo.extend((b, guard) for b in s.orelse)
            continue
        if isinstance(s, (ast.For, ast.While, ast.With, ast.Try)):
            todo.extend((b, guard) for b in [*s.body, *getattr(s, "orelse", []), *getattr(s, "finalbody", []),
                                             *[x for h in getattr(s, "handlers", []) for x in h.body]])
            continue
        target = _backward_target(s)
        if target is None:
            continue
        for p in sorted(deps.get(target[0], set()) - {"self", "cls"}):
            out.append((params.index(p), p, guard))
    return out


def _falsy(node) -> bool:
    return isinstance(node, ast.Constant) and not node.value


def _passed(call: ast.Call, fn: ast.AST, index: int, name: str):
    """The argument `call` passes for parameter `name` (at `index`) of `fn`, its default when it passes none
    (an `ast.Constant(True)` stands for "unknown"), or None when it cannot be told (`*args`, `**kwargs`)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    if index < len(call.args):
        return call.args[index]
    kw = next((k.value for k in call.keywords if k.arg == name), None)
    if kw is not None:
        return kw
    positional = fn.args.posonlyargs + fn.args.args
    defaults = fn.args.defaults
    first = len(positional) - len(defaults)
    return defaults[index - first] if index >= first else None


def _unpacked_together(bound_at: dict, first: str, second: str) -> bool:
    """`g_loss, d_loss, info = self.criterion(...)`: both losses unpacked from one call handed in. A call that
    returns its losses one by one, each backwarded on its own, was written for separate backwards (VIBE's loss
    detaches the discriminator's input inside); whether they share a node is not visible here."""
    stmt = bound_at.get(first, (None, None))[1]
    return stmt is not None and bound_at.get(second, (None, None))[1] is stmt \
        and isinstance(stmt.targets[0], ast.Tuple)


def _steps(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
        and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "step" and not stmt.value.args


class SharedOutputBackwardedTwice(Rule):
    code = "GS416"
    name = "shared-output-backwarded-twice"
    severity = Severity.WARNING
    summary = ("Two losses built from one model output are backwarded one after the other without "
               "`retain_graph=True`: the first backward frees the model's graph and the second one raises.")
    events = (FileEvent,)
    what_it_does = ("In a loop body (or a function body), flags the loss of a first `a.backward()` when a later "
                    "`b.backward()` in the same straight-line block reaches the same output of a model passed in "
                    "as a parameter (`fake = G(z)`, `feats = model(x)`) or handed to a trainer class "
                    "(`self.G = G` in `__init__`, or `self.netD = self.getNetD()` from a method left to "
                    "subclasses; outputs returned together, `pred, feats = self.netD(x)`, share one graph), neither "
                    "loss reads it through `.detach()`, and the first backward does not retain the graph. The second "
                    "backward may stand in an `if` branch, or inside a plain function the block calls (this file's, "
                    "or imported from another workspace file) that backwards a value it computes from the argument "
                    "given that output (`feature_loss(phi_real, phi_fake, backward=True)`; a call passing a false "
                    "constant to the parameter that guards the helper's backward is left alone): then the finding "
                    "stands on the first backward, where `retain_graph=True` goes. Where the models are visible "
                    "the interpreter follows the graphs and GS402 reports it. Two losses unpacked one by one from "
                    "one call handed in (`g_loss, d_loss, info = self.criterion(...)`, each backwarded on its own) "
                    "are not taken for one graph: such a loss object was written for separate backwards (VIBE's "
                    "detaches the discriminator's input inside), and what it shares is not visible.")
    why_bad = ("The model's part of the graph (the activations its layers saved) belongs to its output. The first "
               "backward frees those saved tensors; the second backward needs them again and raises \"Trying to "
               "backward through the graph a second time\". In a GAN the discriminator's step should see "
               "`fake.detach()`; two losses on one output are usually summed and backwarded once.")
    example = ("def train(G, D, loader, opt_g, opt_d):\n    for real in loader:\n        fake = G(torch.randn(64, 8))\n"
               "        d_loss = F.softplus(-D(real)).mean() + F.softplus(D(fake)).mean()\n"
               "        opt_d.zero_grad()\n        d_loss.backward()\n        opt_d.step()\n"
               "        g_loss = F.softplus(-D(fake)).mean()\n        opt_g.zero_grad()\n        g_loss.backward()  # raises\n"
               "        opt_g.step()")
    use_instead = ("        d_loss = F.softplus(-D(real)).mean() + F.softplus(D(fake.detach())).mean()")
    fix_safety = ("This rule offers no automatic fix: `.detach()` in the first loss, summing the losses, or "
                  "`retain_graph=True` change what trains, and which one is meant depends on the model.")
    references = ("https://pytorch.org/tutorials/beginner/dcgan_faces_tutorial.html",
                  "https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html")
    _head = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
             "def train(G, D, loader, opt_g, opt_d):\n    for real in loader:\n        fake = G(torch.randn(4, 8))\n")
    _tail = ("        opt_d.zero_grad()\n        d_loss.backward()\n        opt_d.step()\n"
             "        g_loss = F.softplus(-D(fake)).mean()\n        opt_g.zero_grad()\n        g_loss.backward()\n"
             "        opt_g.step()\n\n\nG, D = nn.Sequential(nn.Linear(8, 8), nn.Tanh()), nn.Linear(8, 1)\n"
             "train(G, D, [torch.randn(4, 8)], torch.optim.SGD(G.parameters(), lr=0.1), "
             "torch.optim.SGD(D.parameters(), lr=0.1))\n")
    # A base GAN whose networks come from hooks its subclasses fill in (`self.netD = self.getNetD()`), and a
    # helper that backwards a loss of the discriminator's features itself (`backward=True`), as GAN zoo's GDPP.
    _gan = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
            "def feature_loss(phi_real, phi_fake, backward=True):\n"
            "    loss = F.mse_loss(phi_fake.mean(0), phi_real.mean(0))\n    if backward:\n"
            "        loss.backward(retain_graph=True)\n    return loss.item()\n\n\n"
            "class Disc(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.body = nn.Sequential(nn.Linear(4, 8), nn.Tanh())\n        self.head = nn.Linear(8, 1)\n\n"
            "    def forward(self, x, features=False):\n        phi = self.body(x)\n"
            "        return (self.head(phi), phi) if features else self.head(phi)\n\n\n"
            "class BaseGAN:\n    def __init__(self):\n        self.netG = self.getNetG()\n"
            "        self.netD = self.getNetD()\n\n    def getNetG(self):\n        \"\"\"The generator.\"\"\"\n\n"
            "    def getNetD(self):\n        \"\"\"The discriminator.\"\"\"\n\n"
            "    def generator_step(self, z, real, gdpp):\n        fake = self.netG(z)\n"
            "        pred, phi_fake = self.netD(fake, True)\n        loss = F.softplus(-pred).mean()\n"
            "        loss.backward()\n        if gdpp:\n            _, phi_real = self.netD(real, True)\n"
            "            feature_loss(phi_real, phi_fake, backward=True)\n\n\n"
            "class GAN(BaseGAN):\n    def getNetG(self):\n        return nn.Linear(4, 4)\n\n"
            "    def getNetD(self):\n        return Disc()\n\n\n"
            "GAN().generator_step(torch.randn(3, 4), torch.randn(3, 4), True)\n")
    _aux = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
            "def train(model, head_a, head_b, loader, opt, aux):\n    for x, y in loader:\n        feats = model(x)\n"
            "        loss_a = F.cross_entropy(head_a(feats), y)\n        loss_b = F.cross_entropy(head_b(feats), y)\n"
            "        opt.zero_grad()\n        loss_a.backward()\n        if aux:\n            loss_b.backward()\n"
            "        opt.step()\n\n\n"
            "m, a, b = nn.Sequential(nn.Linear(3, 3), nn.Tanh()), nn.Linear(3, 2), nn.Linear(3, 2)\n"
            "train(m, a, b, [(torch.randn(4, 3), torch.tensor([0, 1, 0, 1]))], "
            "torch.optim.SGD(list(m.parameters()) + list(a.parameters()) + list(b.parameters()), lr=0.1), True)\n")
    _vibe = ("import torch\nimport torch.nn as nn\n\n\nclass Trainer:\n"
             "    def __init__(self, gen, disc, criterion, gen_opt, dis_opt):\n"
             "        self.gen, self.disc, self.criterion = gen, disc, criterion\n"
             "        self.gen_opt, self.dis_opt = gen_opt, dis_opt\n\n    def step(self, x, real):\n"
             "        preds = self.gen(x)\n        g_loss, d_loss, info = self.criterion(preds, real, self.disc)\n"
             "        self.gen_opt.zero_grad()\n        g_loss.backward()\n        self.gen_opt.step()\n"
             "        self.dis_opt.zero_grad()\n        d_loss.backward()\n        self.dis_opt.step()\n\n\n"
             "def criterion(preds, real, disc):\n    g_loss = ((disc(preds) - 1) ** 2).mean()\n"
             "    d_loss = (disc(preds.detach()) ** 2).mean() + ((disc(real) - 1) ** 2).mean()\n"
             "    return g_loss, d_loss, {}\n\n\n"
             "gen, disc = nn.Linear(4, 6), nn.Linear(6, 1)\n"
             "Trainer(gen, disc, criterion, torch.optim.SGD(gen.parameters(), lr=0.1), "
             "torch.optim.SGD(disc.parameters(), lr=0.1)).step(torch.randn(3, 4), torch.randn(3, 6))\n")
    valid = (
        Valid(_head + "        d_loss = F.softplus(-D(real)).mean() + F.softplus(D(fake.detach())).mean()\n" + _tail),
        # The generator's backward keeps the graph the helper backwards again.
        Valid(_gan.replace("        loss.backward()\n", "        loss.backward(retain_graph=True)\n")),
        # The helper is asked not to backward (`backward=False`): it only measures.
        Valid(_gan.replace("phi_fake, backward=True)\n\n\nclass GAN", "phi_fake, backward=False)\n\n\nclass GAN")),
        # The second loss backwarded under `if aux:` on its own graph (the first loss's features detached).
        Valid(_aux.replace("head_a(feats)", "head_a(feats.detach())")),
        # Two heads on one output, summed and backwarded once.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
              "def train(model, head_a, head_b, loader, opt):\n    for x, y in loader:\n        feats = model(x)\n"
              "        loss = F.cross_entropy(head_a(feats), y) + F.cross_entropy(head_b(feats), y)\n"
              "        opt.zero_grad()\n        loss.backward()\n        opt.step()\n"),
        # The first backward keeps the graph.
        Valid("import torch\nimport torch.nn.functional as F\n\n\n"
              "def train(model, head_a, head_b, loader, opt):\n    for x, y in loader:\n        feats = model(x)\n"
              "        loss_a = F.cross_entropy(head_a(feats), y)\n        loss_b = F.cross_entropy(head_b(feats), y)\n"
              "        opt.zero_grad()\n        loss_a.backward(retain_graph=True)\n        loss_b.backward()\n"
              "        opt.step()\n"),
        # A loss object handed in returns the generator's and the discriminator's losses separately (VIBE's
        # `VIBELoss` runs the discriminator again on `pred.detach()`): written for two backwards, also when the
        # discriminator's step runs only every k steps.
        Valid(_vibe),
        Valid(_vibe.replace("        self.dis_opt.zero_grad()\n        d_loss.backward()\n        self.dis_opt.step()\n",
                            "        if self.k:\n            self.dis_opt.zero_grad()\n            d_loss.backward()\n"
                            "            self.dis_opt.step()\n").replace("self.dis_opt = gen_opt, dis_opt\n",
                                                              "self.dis_opt = gen_opt, dis_opt\n        self.k = 1\n")),
        # The output is made again before the second loss.
        Valid(_head + "        d_loss = F.softplus(-D(real)).mean() + F.softplus(D(fake)).mean()\n"
              + _tail.replace("        g_loss = F.softplus", "        fake = G(torch.randn(4, 8))\n        g_loss = F.softplus")),
        # The second loss indexed by `torch.where(...)` of the first's entropies: indices carry no graph (SAR's
        # sharpness-aware adaptation; bench/fresh34-false/03).
        Valid('import torch\n\n\ndef softmax_entropy(x: torch.Tensor) -> torch.Tensor:\n    return -(x.softmax(1) * x.log_softmax(1)).sum(1)\n\n\ndef forward_and_adapt(x, model, optimizer, margin):\n    optimizer.zero_grad()\n    outputs = model(x)\n    entropys = softmax_entropy(outputs)\n    filter_ids_1 = torch.where(entropys < margin)\n    entropys = entropys[filter_ids_1]\n    loss = entropys.mean(0)\n    loss.backward()\n\n    optimizer.step()\n    entropys2 = softmax_entropy(model(x))\n    entropys2 = entropys2[filter_ids_1]\n    loss_second = entropys2.mean(0)\n    loss_second.backward()\n    optimizer.step()\n    return outputs\n\n\nif __name__ == "__main__":\n    model = torch.nn.Linear(5, 4)\n    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n    for _ in range(3):\n        forward_and_adapt(torch.randn(6, 5), model, optimizer, 100.0)\n'),
    )
    invalid = (
        # The look-alike: the second loss computed from the first forward's output.
        Invalid('import torch\n\n\ndef softmax_entropy(x: torch.Tensor) -> torch.Tensor:\n    return -(x.softmax(1) * x.log_softmax(1)).sum(1)\n\n\ndef forward_and_adapt(x, model, optimizer, margin):\n    optimizer.zero_grad()\n    outputs = model(x)\n    entropys = softmax_entropy(outputs)\n    filter_ids_1 = torch.where(entropys < margin)\n    entropys = entropys[filter_ids_1]\n    loss = entropys.mean(0)\n    loss.backward()\n\n    optimizer.step()\n    entropys2 = softmax_entropy(outputs)\n    entropys2 = entropys2[filter_ids_1]\n    loss_second = entropys2.mean(0)\n    loss_second.backward()\n    optimizer.step()\n    return outputs\n\n\nif __name__ == "__main__":\n    model = getattr(torch.nn, \'Linear\')(5, 4)\n    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n    for _ in range(3):\n        forward_and_adapt(torch.randn(6, 5), model, optimizer, 100.0)\n', line=14,
                runtime="raises: backward through the graph a second time"),
        Invalid(_gan, line=39, runtime="raises: backward through the graph a second time", also=(9,)),
        Invalid(_aux, line=9, runtime="raises: backward through the graph a second time", also=(14,)),
        # The same step in a trainer class that was handed its models.
        Invalid('import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass GANTrainer:\n    def __init__(self, G, D, opt_g, opt_d):\n        self.G = G\n        self.D = D\n        self.opt_g = opt_g\n        self.opt_d = opt_d\n\n    def step(self, real):\n        fake = self.G(torch.randn(real.size(0), 8))\n        d_loss = F.softplus(-self.D(real)).mean() + F.softplus(self.D(fake)).mean()\n        self.opt_d.zero_grad()\n        d_loss.backward()\n        self.opt_d.step()\n        g_loss = F.softplus(-self.D(fake)).mean()\n        self.opt_g.zero_grad()\n        g_loss.backward()\n        self.opt_g.step()\n\n\nG, D = nn.Sequential(nn.Linear(8, 8), nn.Tanh()), nn.Linear(8, 1)\nGANTrainer(G, D, torch.optim.SGD(G.parameters(), lr=0.1), torch.optim.SGD(D.parameters(), lr=0.1)).step(torch.randn(4, 8))\n', line=15, runtime="raises: backward through the graph a second time", also=(21,)),
        # The same trainer storing what it is handed by one tuple assignment.
        Invalid('import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass GANTrainer:\n    def __init__(self, G, D, opt_g, opt_d):\n        self.G, self.D = G, D\n        self.opt_g = opt_g\n        self.opt_d = opt_d\n\n    def step(self, real):\n        fake = self.G(torch.randn(real.size(0), 8))\n        d_loss = F.softplus(-self.D(real)).mean() + F.softplus(self.D(fake)).mean()\n        self.opt_d.zero_grad()\n        d_loss.backward()\n        self.opt_d.step()\n        g_loss = F.softplus(-self.D(fake)).mean()\n        self.opt_g.zero_grad()\n        g_loss.backward()\n        self.opt_g.step()\n\n\nG, D = nn.Sequential(nn.Linear(8, 8), nn.Tanh()), nn.Linear(8, 1)\nGANTrainer(G, D, torch.optim.SGD(G.parameters(), lr=0.1), torch.optim.SGD(D.parameters(), lr=0.1)).step(torch.randn(4, 8))\n', line=14, runtime="raises: backward through the graph a second time", also=(20,)),
        # A DCGAN-style step without `fake.detach()` in the discriminator's loss.
        Invalid(_head + "        d_loss = F.softplus(-D(real)).mean() + F.softplus(D(fake)).mean()\n" + _tail, line=9,
                runtime="raises: backward through the graph a second time", also=(15,)),
        Invalid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
                "def train(model, head_a, head_b, loader, opt):\n    for x, y in loader:\n        feats = model(x)\n"
                "        loss_a = F.cross_entropy(head_a(feats), y)\n        loss_b = F.cross_entropy(head_b(feats), y)\n"
                "        opt.zero_grad()\n        loss_a.backward()\n        loss_b.backward()\n        opt.step()\n\n\n"
                "m, a, b = nn.Sequential(nn.Linear(3, 3), nn.Tanh()), nn.Linear(3, 2), nn.Linear(3, 2)\n"
                "train(m, a, b, [(torch.randn(4, 3), torch.tensor([0, 1, 0, 1]))], "
                "torch.optim.SGD(list(m.parameters()) + list(a.parameters()) + list(b.parameters()), lr=0.1))\n",
                line=9, runtime="raises: backward through the graph a second time", also=(13,)),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "backward" not in q.attrs:
            return
        self._helpers: dict = {}
        for node in q.nodes():
            if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef)):
                fn = node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else q.enclosing_function(node)
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self._block(node.body, fn, q, report)

    def _helper(self, q, name: str):
        """`(def, _backwarding_params(def))` for a plain function (this file's, or imported from another workspace
        file: `Query.function_def`) that backwards a value made from one of its parameters; None otherwise. Read
        once per analysis and name; another file's function is walked only where its lines spell `backward`."""
        if name in self._helpers:
            return self._helpers[name]
        self._helpers[name] = None
        found = q.function_def(name)
        if found is None:
            return None
        fn, _, source = found
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        if source is not None and not any("backward" in source.line_text(n)
                                          for n in range(fn.lineno, fn.end_lineno + 1)):
            return None
        reach = _backwarding_params(fn)
        if reach:
            self._helpers[name] = (fn, reach)
        return self._helpers[name]

    def _later_backward(self, body: list, i: int, q) -> tuple:
        """The first statement after `body[i]` that runs a backward, as `(index, kind, what)`: kind "top" (a
        `name.backward()` statement of the block, handled by the caller), "nested" (`what`: the `(name, retain)`
        backwards in the branches of an `if`), or "helper" (`what`: `(call, def, argument)` for each argument of a
        helper call that the helper backwards, under a guard the call does not turn off); None when none."""
        for j in range(i + 1, len(body)):
            stmt = body[j]
            if _backward_target(stmt) is not None:
                return j, "top", None
            nested = _nested_backwards(stmt)
            if nested:
                return j, "nested", nested
            reached = []
            for call in own_name_calls([stmt]):
                helper = self._helper(q, call.func.id)
                if helper is None:
                    continue
                fdef, reach = helper
                params = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
                for index, name, guard in reach:
                    if guard is not None:
                        on = _passed(call, fdef, params.index(guard), guard)
                        if on is None or _falsy(on):
                            continue
                    arg = _passed(call, fdef, index, name)
                    if arg is not None and not isinstance(arg, ast.Constant):
                        reached.append((call, fdef, arg))
            if reached:
                return j, "helper", reached
        return None

    def _block(self, body: list, fn, q, report) -> None:
        backwards = [(i, t) for i, s in enumerate(body) if (t := _backward_target(s)) is not None]
        if not backwards:
            return
        # What follows each backward, asked before the data-flow pass below: most blocks backward once, at
        # their end, and need no pass at all (it walks every statement of the block).
        later_of = {i: self._later_backward(body, i, q) if len(body) > i + 1 else None
                    for i, (_, retain) in backwards if not retain}
        if not any(later_of.values()):
            return
        # Straight-line data flow over the block: each name's version -> the model outputs its value carries.
        carries: dict = {}  # name -> frozenset of (output name, index of the statement that made it)
        bound_at: dict = {}  # name -> (index, statement) of the assignment that last bound it
        history: list = []  # per statement index: a copy of `carries` after it
        for i, stmt in enumerate(body):
            target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
            unpacked = isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts) \
                and isinstance(stmt.value, ast.Call) and q.handed_in_call(stmt.value, fn)
            if isinstance(target, ast.Name) or unpacked:
                names = [target.id] if isinstance(target, ast.Name) else [e.id for e in target.elts]
                value = stmt.value
                out = frozenset().union(*(carries.get(n, frozenset()) for n in _loads(value)))
                if isinstance(value, ast.Call) and q.handed_in_call(value, fn):
                    # `fake = G(z)` / `self.G(z)`: a model handed in makes a new output; the outputs it returns
                    # as a tuple (`pred, feats = D(x)`) share one graph, named by the call.
                    label = names[0] if len(names) == 1 else f"{dotted_name(value.func)}(...)"
                    out = out | {(label, i)}
                for name in names:
                    carries[name] = out
                    bound_at[name] = (i, stmt)
            elif isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.While, ast.If, ast.With,
                                   ast.Try)):
                for t in ast.walk(stmt):
                    if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store):
                        carries.pop(t.id, None)  # bound in a way this straight-line reading does not follow
            history.append(dict(carries))
        for k, (i, (first, retain)) in enumerate(backwards):
            if retain:
                continue
            later = later_of[i]
            if later is not None and later[1] != "top":
                self._elsewhere(body, i, first, later, history, bound_at, report)
                continue
            for j, (second, _) in backwards[k + 1:k + 2]:
                shared = history[i].get(first, frozenset()) & history[j].get(second, frozenset())
                if not shared:
                    continue
                out_name, _ = sorted(shared, key=lambda s: s[1])[-1]
                made, stmt = bound_at.get(first, (len(body), None))
                if made > i:
                    continue  # the first loss is not bound in this block before its backward
                if _unpacked_together(bound_at, first, second):
                    continue
                stepped = any(_steps(s) for s in body[i + 1:j])
                advice = (f"use `{out_name}.detach()` in `{first}` if it should not train the model that made "
                          f"`{out_name}`" if stepped else f"sum the losses and backward once, or pass "
                          f"`retain_graph=True` to `{first}.backward()`")
                line, col, _, _ = report.source.span(body[j])
                report.add(self, stmt,
                           f"`{first}` and `{second}` both backward through `{out_name}`'s graph, so the second "
                           f"backward raises; {advice}.",
                           related=[Note(line, col, "raises here: \"Trying to backward through the graph a second "
                                                    "time\"")])
                break

    def _elsewhere(self, body: list, i: int, first: str, later: tuple, history: list, bound_at: dict,
                   report) -> None:
        """The next backward after `first.backward()` (`body[i]`) stands in an `if` branch, or in a helper function
        the block calls (`GDPPLoss(phi_fake, phi_real, backward=True)`, which backwards what it computes from its
        arguments): the same finding when it reaches an output `first` reached. Through a helper, the statement to
        change is this block's backward (`retain_graph=True`), and the finding stands there."""
        j, kind, what = later
        mine = history[i].get(first, frozenset())
        made, stmt = bound_at.get(first, (len(body), None))
        if not mine or made > i:
            return
        if kind == "nested":
            for second, kept in what:
                shared = mine & history[j].get(second, frozenset())
                if not shared or _unpacked_together(bound_at, first, second):
                    continue
                out_name = sorted(shared, key=lambda s: s[1])[-1][0]
                node = next(n for n in walk(body[j])
                            if isinstance(n, ast.Expr) and _backward_target(n) == (second, kept))
                line, col, _, _ = report.source.span(node)
                report.add(self, stmt,
                           f"`{first}` and `{second}` both backward through `{out_name}`'s graph, so the second "
                           f"backward raises; sum the losses and backward once, or pass `retain_graph=True` to "
                           f"`{first}.backward()`.",
                           related=[Note(line, col, "raises here: \"Trying to backward through the graph a second "
                                                    "time\"")])
                return
            return
        for call, fdef, arg in what:
            shared = mine & frozenset().union(*(history[j].get(n, frozenset()) for n in _loads(arg)))
            if not shared:
                continue
            out_name = sorted(shared, key=lambda s: s[1])[-1][0]
            line, col, _, _ = report.source.span(call)
            name = call.func.id
            report.add(self, body[i],
                       msg(f"This backward frees `{out_name}`'s graph, which `{name}` (line ", line,
                           ") backwards again, so that raises. Pass `retain_graph=True` here, or detach what "
                           f"`{name}` should not train; PyTorch says \"Trying to backward through the graph a "
                           "second time\"."),
                       related=[Note(line, col, f"`{name}` backwards through the freed graph again here: raises")])
            return
