from __future__ import annotations

import ast

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid

# Reading these does not carry the graph on: `v.detach()`, `v.item()`, ... (and `v.data`, see `_loads`)
_CUTS = ("detach", "item", "tolist", "numpy")


def _loads(expr: ast.AST) -> set:
    """Names whose graph `expr` carries on: every name it loads, except through `.detach()`, `.item()`, `.data`,
    ... (their results have no history)."""
    out: set = set()
    todo = [expr]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _CUTS:
            todo.extend(n.args)
            todo.extend(k.value for k in n.keywords)
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
                    "(`self.G = G` in `__init__`, then `fake = self.G(z)`), neither loss reads it through "
                    "`.detach()`, and the first backward does not retain the graph. Where the models are visible "
                    "the interpreter follows the graphs and GS402 reports it.")
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
    valid = (
        Valid(_head + "        d_loss = F.softplus(-D(real)).mean() + F.softplus(D(fake.detach())).mean()\n" + _tail),
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
        # The output is made again before the second loss.
        Valid(_head + "        d_loss = F.softplus(-D(real)).mean() + F.softplus(D(fake)).mean()\n"
              + _tail.replace("        g_loss = F.softplus", "        fake = G(torch.randn(4, 8))\n        g_loss = F.softplus")),
    )
    invalid = (
        # The same step in a trainer class that was handed its models.
        Invalid('import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass GANTrainer:\n    def __init__(self, G, D, opt_g, opt_d):\n        self.G = G\n        self.D = D\n        self.opt_g = opt_g\n        self.opt_d = opt_d\n\n    def step(self, real):\n        fake = self.G(torch.randn(real.size(0), 8))\n        d_loss = F.softplus(-self.D(real)).mean() + F.softplus(self.D(fake)).mean()\n        self.opt_d.zero_grad()\n        d_loss.backward()\n        self.opt_d.step()\n        g_loss = F.softplus(-self.D(fake)).mean()\n        self.opt_g.zero_grad()\n        g_loss.backward()\n        self.opt_g.step()\n\n\nG, D = nn.Sequential(nn.Linear(8, 8), nn.Tanh()), nn.Linear(8, 1)\nGANTrainer(G, D, torch.optim.SGD(G.parameters(), lr=0.1), torch.optim.SGD(D.parameters(), lr=0.1)).step(torch.randn(4, 8))\n', line=15, runtime="raises: backward through the graph a second time", also=(21,)),
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
        for node in q.nodes():
            if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef)):
                fn = node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else q.enclosing_function(node)
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self._block(node.body, fn, q, report)

    def _block(self, body: list, fn, q, report) -> None:
        backwards = [(i, t) for i, s in enumerate(body) if (t := _backward_target(s)) is not None]
        if len(backwards) < 2:
            return
        # Straight-line data flow over the block: each name's version -> the model outputs its value carries.
        carries: dict = {}  # name -> frozenset of (output name, index of the statement that made it)
        bound_at: dict = {}  # name -> (index, statement) of the assignment that last bound it
        history: list = []  # per statement index: a copy of `carries` after it
        for i, stmt in enumerate(body):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
                value = stmt.value
                out = frozenset().union(*(carries.get(n, frozenset()) for n in _loads(value)))
                if isinstance(value, ast.Call) and q.handed_in_call(value, fn):
                    out = out | {(name, i)}  # `fake = G(z)` / `self.G(z)`: a model handed in makes a new output
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
            for j, (second, _) in backwards[k + 1:k + 2]:
                shared = history[i].get(first, frozenset()) & history[j].get(second, frozenset())
                if not shared:
                    continue
                out_name, _ = sorted(shared, key=lambda s: s[1])[-1]
                made, stmt = bound_at.get(first, (len(body), None))
                if made > i:
                    continue  # the first loss is not bound in this block before its backward
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
