from __future__ import annotations

import ast

from ..engine.query import FileEvent
from ..findings import Severity
from ._syntax import own_nodes
from .base import Invalid, Rule, Valid, dotted_name

_ERROR = "Trying to backward through the graph a second time"


def _tainted(func: ast.FunctionDef, seeds: set | None = None, before: int | None = None) -> set:
    """Names in `forward` computed from its inputs (or from `seeds`) without `.detach()`: a backward through them
    reaches the caller's graph. A plain forward walk in statement order (loops once) is enough for this question."""
    if seeds is None:
        names = {a.arg for a in func.args.args[1:] + func.args.kwonlyargs}
        if func.args.vararg:
            names.add(func.args.vararg.arg)
        names -= _made_leaf(func)
    else:
        names = set(seeds)
    ints = _integer_names(func)
    for node in ast.walk(func):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None \
                and (before is None or node.lineno < before):
            if _reads(node.value, names) and not _detached(node.value) and not _integer(node.value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in ints:
                        continue  # written into an integer tensor: indices carry no graph
                    names |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


_INT_METHODS = frozenset({"long", "int", "bool", "byte", "short", "argmax", "argmin", "argsort", "nonzero"})
_INT_FUNCS = frozenset({"one_hot", "argmax", "argmin", "argsort", "nonzero", "randint", "randperm"})
_INT_DTYPES = frozenset({"long", "int", "int64", "int32", "int16", "int8", "uint8", "bool"})


def _integer(expr: ast.AST) -> bool:
    """An expression that makes an integer (or bool) tensor, which never carries a graph, or a float copy of one:
    `x.long()`, `F.one_hot(gt).float()`, `torch.ones(n, dtype=torch.long)`, `a > b`."""
    if isinstance(expr, ast.Compare):
        return True
    if not isinstance(expr, ast.Call):
        return False
    f = expr.func
    if isinstance(f, ast.Attribute) and f.attr in ("float", "double", "half", "to", "type") and _integer(f.value):
        return True  # `F.one_hot(gt, 3).float()`: a float copy of integers still has no graph
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    if isinstance(f, ast.Attribute) and name in _INT_METHODS or name in _INT_FUNCS:
        return True
    return any(k.arg == "dtype" and isinstance(k.value, ast.Attribute) and k.value.attr in _INT_DTYPES
               for k in expr.keywords)


def _integer_names(func: ast.FunctionDef) -> set:
    """Names every plain assignment of `func` binds to an integer tensor (`sp_i = torch.ones([2, n]).long()`)."""
    ints, other = set(), set()
    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    (ints if _integer(node.value) else other).add(t.id)
    return ints - other


def _made_leaf(func: ast.FunctionDef) -> set:
    """Inputs `forward` sets `x.requires_grad = ...` on in a statement of its own body that always runs (an
    adversarial attack making its input a leaf to take its gradient). Torch allows that assignment only on a leaf
    ("you can only change requires_grad flags of leaf variables"), so such an input carries no caller graph. The
    method `x.requires_grad_()` is allowed on any tensor and proves nothing. A name bound again from the caller's
    graph is tainted again by `_tainted`'s walk."""
    return {t.value.id for stmt in func.body if isinstance(stmt, ast.Assign) for t in stmt.targets
            if isinstance(t, ast.Attribute) and t.attr == "requires_grad" and isinstance(t.value, ast.Name)}


def _retains(call: ast.Call) -> bool:
    """`retain_graph=True` (or `create_graph=True`, which retains by default) written as a constant: such a backward
    frees no saved tensor, so a later backward through the same graph still runs."""
    return any(k.arg in ("retain_graph", "create_graph") and isinstance(k.value, ast.Constant) and k.value.value is True
               for k in call.keywords)


_NO_GRAPH_METHODS = {"detach", "item", "size", "dim", "tolist", "numpy", "numel", "stride", "data_ptr",
                     # `torch.rand_like(x)` and friends take only the shape, dtype and device of `x`.
                     "rand_like", "randn_like", "randint_like", "zeros_like", "ones_like", "empty_like", "full_like"}
_NO_GRAPH_ATTRS = {"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "data"}
_NO_GRAPH_FUNCS = {"len", "int", "float", "bool", "str", "isinstance", "type"}


def _detached(expr: ast.AST) -> bool:
    """Whether `expr` carries no autograd graph whatever its operands (`.detach()`, `.item()`, `.shape`, ...)."""
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Attribute):
            return expr.func.attr in _NO_GRAPH_METHODS
        return isinstance(expr.func, ast.Name) and expr.func.id in _NO_GRAPH_FUNCS
    return isinstance(expr, ast.Attribute) and expr.attr in _NO_GRAPH_ATTRS


def _reads(expr: ast.AST, names: set) -> bool:
    """Whether `expr` reads one of `names` outside a `.detach()` / `.item()` call."""
    if _detached(expr):
        return False
    if isinstance(expr, ast.Name):
        return expr.id in names and isinstance(expr.ctx, ast.Load)
    return any(_reads(child, names) for child in ast.iter_child_nodes(expr))


def _separates_inputs(func: ast.FunctionDef, target: ast.AST) -> bool:
    """Whether `forward` detaches one of its inputs (`fake.detach()`, anywhere in it) and the value backwarded does
    not read that input except through the detach: the author cut the graph that input carries, and the other inputs
    the backward reads are data (a GAN loss module updating its discriminator on `fake.detach()` and `real`)."""
    inputs = {a.arg for a in func.args.args[1:] + func.args.kwonlyargs}
    detached = {n.func.value.id for n in ast.walk(func)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "detach"
                and isinstance(n.func.value, ast.Name) and n.func.value.id in inputs}
    return bool(detached) and not _reads(target, _tainted(func, detached, before=target.lineno))


def _probe(func: ast.FunctionDef, call: ast.Call, target: ast.AST) -> bool:
    """Whether the backward at `call` is taken for the gradient of a tensor `forward` makes itself: a local name (not
    a parameter) marked there as requiring grad (`d.requires_grad_()`, `d.requires_grad = True`) before the
    backward, read by the backwarded value, and whose `.grad` is read after it (a virtual-adversarial direction's
    power iteration, an adversarial perturbation). Such a forward perturbs the input it is handed, data fed to the
    network; a caller of this file that hands it a value with a graph is still reported (`_graph_given`)."""
    params = {a.arg for a in func.args.args + func.args.kwonlyargs}
    marked = set()
    for n in ast.walk(func):
        if n is call or getattr(n, "lineno", call.lineno) >= call.lineno:
            continue
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "requires_grad_" \
                and isinstance(n.func.value, ast.Name) and not n.args and not n.keywords:
            marked.add(n.func.value.id)
        elif isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and n.value.value is True:
            marked |= {t.value.id for t in n.targets if isinstance(t, ast.Attribute) and t.attr == "requires_grad"
                       and isinstance(t.value, ast.Name)}
    marked -= params
    if not marked or not _reads(target, _tainted(func, marked, before=call.lineno)):
        return False
    return any(isinstance(n, ast.Attribute) and n.attr == "grad" and isinstance(n.value, ast.Name)
               and n.value.id in marked and isinstance(n.ctx, ast.Load) and n.lineno > call.lineno
               for n in ast.walk(func))


# Tensor methods that hand on their receiver's graph without making one (`x.cuda()`, `x.float()`).
_PASS_METHODS = {"to", "cuda", "cpu", "float", "half", "double", "view", "reshape", "contiguous", "unsqueeze",
                 "squeeze", "permute", "transpose", "flatten", "clone", "type", "expand"}


def _makes_graph(q, expr: ast.AST, scope, depth: int = 1) -> bool:
    """Whether `expr` shows a value with a graph: a call of a network or of a function of the project (`encoder(x)`,
    `self.enc(x)`), not of torch, NumPy or a builtin, directly or through a name `scope` binds to one."""
    for n in ast.walk(expr):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Attribute) and f.attr in _PASS_METHODS | _NO_GRAPH_METHODS:
                continue
            qual = q.call_name(n) or ""
            if qual.split(".")[0] in ("torch", "numpy", "builtins") or \
                    (isinstance(f, ast.Name) and f.id in _NO_GRAPH_FUNCS | {"next", "iter", "list", "tuple"}):
                continue
            return True
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and depth > 0 \
                and isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            values = [a.value for a in own_nodes(scope, with_defs=False) if isinstance(a, ast.Assign)
                      and any(isinstance(t, ast.Name) and t.id == n.id for t in a.targets)]
            if any(_makes_graph(q, v, scope, depth - 1) for v in values):
                return True
    return False


def _graph_given(q, cls: ast.ClassDef, func: ast.FunctionDef) -> bool:
    """Whether this file calls an instance of `cls` (`Cls(...)(x)`, or a name or `self.` attribute bound to
    `Cls(...)`) with an argument that shows a graph (`_makes_graph`), for a parameter of `forward` that it does not
    call (a network handed in, `model(x)`, is not a tensor)."""
    params = [a.arg for a in func.args.args[1:]]
    called = {n.func.id for n in ast.walk(func) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    holders = set()
    for a in q.assigns:
        if isinstance(a.value, ast.Call) and isinstance(a.value.func, ast.Name) and a.value.func.id == cls.name:
            holders |= {dotted_name(t) for t in a.targets} - {None}
    for c in q.calls():
        f = c.func
        made_here = isinstance(f, ast.Call) and isinstance(f.func, ast.Name) and f.func.id == cls.name
        if not made_here and dotted_name(f) not in holders:
            continue
        scope = q.enclosing_function(c) or q.tree
        given = [*zip(params, c.args), *((k.arg, k.value) for k in c.keywords)]
        if any(name not in called and _makes_graph(q, arg, scope) for name, arg in given):
            return True
    return False


class BackwardInForward(Rule):
    code = "GS410"
    name = "backward-in-forward"
    severity = Severity.WARNING
    summary = "`.backward()` inside a module's `forward` frees the caller's graph that its input came from."
    events = (FileEvent,)
    what_it_does = ("Flags a `.backward()` (or `torch.autograd.backward`) call inside the `forward` of an "
                    "`nn.Module`, on a value computed from `forward`'s inputs without `.detach()`. A backward with "
                    "`retain_graph=True` frees nothing and is left alone, and so is an input `forward` sets "
                    "`x.requires_grad = True` on (torch allows that only on a leaf, which has no caller graph). A backward "
                    "taken for the gradient of a tensor `forward` makes and marks as requiring grad itself (`d."
                    "requires_grad_()`, then `d.grad`: a virtual-adversarial or adversarial perturbation of the input) "
                    "is left alone too, unless a call in the file hands the module a value with a graph "
                    "(`vat(model, encoder(x))`).")
    why_bad = ("The input of `forward` usually carries the caller's graph (an encoder's output). A backward "
               "inside `forward` runs through that graph and frees its saved tensors; the training loop's own "
               f"`loss.backward()` then raises \"{_ERROR}\" on the first step. It also puts gradients into the "
               "encoder that the training loss never asked for.")
    example = ("def forward(self, x):\n    commit = ((self.codes[idx] - x) ** 2).mean()\n    commit.backward()\n"
               "    return x + (self.codes[idx] - x).detach()")
    use_instead = ("def forward(self, x):\n    commit = ((self.codes[idx] - x.detach()) ** 2).mean()\n"
                   "    self.commit_loss = commit   # added to the training loss by the caller\n"
                   "    return x + (self.codes[idx] - x).detach()")
    references = ("https://pytorch.org/docs/stable/notes/autograd.html",)
    # lyakaap/VAT-pytorch's VATLoss: the power iteration's backward is taken for the gradient of a direction `d`
    # that `forward` makes and marks as requiring grad itself.
    _VAT = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
            "def _l2_normalize(d):\n    d_reshaped = d.view(d.shape[0], -1)\n"
            "    d /= torch.norm(d_reshaped, dim=1, keepdim=True) + 1e-8\n    return d\n\n\n"
            "class VATLoss(nn.Module):\n    def __init__(self, xi=10.0, eps=1.0, ip=1):\n"
            "        super().__init__()\n        self.xi, self.eps, self.ip = xi, eps, ip\n\n"
            "    def forward(self, model, x):\n        with torch.no_grad():\n"
            "            pred = F.softmax(model(x), dim=1)\n"
            "        d = torch.rand(x.shape).sub(0.5).to(x.device)\n        d = _l2_normalize(d)\n"
            "        for _ in range(self.ip):\n            d.requires_grad_()\n"
            "            pred_hat = model(x + self.xi * d)\n"
            "            adv_distance = F.kl_div(F.log_softmax(pred_hat, dim=1), pred, reduction=\"batchmean\")\n"
            "            adv_distance.backward()\n            d = _l2_normalize(d.grad)\n"
            "            model.zero_grad()\n        pred_hat = model(x + d * self.eps)\n"
            "        return F.kl_div(F.log_softmax(pred_hat, dim=1), pred, reduction=\"batchmean\")\n\n\n")
    valid = (
        # A forward that is a whole training step with an optimizer the caller hands in, returning logging values
        # (stevenygd/PointFlow; bench/fresh24-false/01).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Flow(nn.Module):\n"
              "    def __init__(self):\n        super().__init__()\n"
              "        self.encoder = nn.Linear(3, 4)\n        self.decoder = nn.Linear(4, 3)\n\n"
              "    def forward(self, x, opt, step):\n        opt.zero_grad()\n"
              "        z = self.encoder(x)\n        recon = self.decoder(z)\n"
              "        loss = (recon - x).pow(2).mean() + 0.1 * z.pow(2).mean()\n"
              "        loss.backward()\n        opt.step()\n"
              "        return {\"step\": step, \"recon\": (recon - x).abs().mean()}\n\n\n"
              "model = Flow()\noptimizer = torch.optim.Adam(model.parameters(), lr=1e-3)\n"
              "for step in range(3):\n    out = model(torch.randn(8, 3), optimizer, step)\n"
              "    print(out[\"step\"], out[\"recon\"].item())\n"),
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Q(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.codes = nn.Parameter(torch.randn(4, 3))\n\n"
              "    def forward(self, x):\n        commit = ((self.codes[0] - x.detach()) ** 2).mean()\n"
              "        commit.backward()\n        return x + self.codes[0].detach()\n\n\n"
              "enc = nn.Linear(3, 3)\nout = Q()(enc(torch.randn(2, 3)))\nout.sum().backward()\n"),
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.fc = nn.Linear(3, 1)\n\n    def forward(self, x):\n"
              "        return self.fc(x)\n\n    def train_step(self, x):\n        loss = self(x).sum()\n"
              "        loss.backward()\n        return loss\n\n\nNet().train_step(torch.randn(2, 3))\n"),
        # A meta-learner whose forward runs its own optimisation and returns only numbers (maml-pytorch).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Meta(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.net = nn.Linear(3, 1)\n"
              "        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)\n\n    def forward(self, x, y):\n"
              "        loss = ((self.net(x) - y) ** 2).mean()\n        self.opt.zero_grad()\n        loss.backward()\n"
              "        self.opt.step()\n        return loss.item()\n\n\nacc = Meta()(torch.randn(4, 3), torch.randn(4, 1))\n"),
        # A training step written as `forward` that returns the loss it backwarded, for logging (FUNIT).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.net = nn.Linear(3, 1)\n\n    def forward(self, data, mode):\n"
              "        x, y = data\n        if mode == 'update':\n            rec = ((self.net(x) - y) ** 2).mean()\n"
              "            total = 2 * rec\n            total.backward()\n            return total, rec\n\n\n"
              "model = Model()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
              "total, rec = model((torch.randn(4, 3), torch.randn(4, 1)), 'update')\nopt.step()\nprint(total.item())\n"),
        # `inputs.requires_grad = True` is allowed only on a leaf, so the input carries no caller graph (an
        # adversarial attack written as a module, perceptual-advex).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass GradSignAttack(nn.Module):\n"
              "    def __init__(self, model):\n        super().__init__()\n        self.model = model\n\n"
              "    def forward(self, inputs, labels):\n        inputs.requires_grad = True\n"
              "        loss = nn.functional.cross_entropy(self.model(inputs), labels)\n"
              "        loss.backward()\n        return inputs + 0.01 * inputs.grad.sign()\n\n\n"
              "model = nn.Linear(4, 3)\nx, y = torch.randn(8, 4), torch.randint(0, 3, (8,))\n"
              "adv = GradSignAttack(model)(x, y)\nmodel.zero_grad()\n"
              "nn.functional.cross_entropy(model(adv), y).backward()\n"),
        # A loss module that updates its own discriminator inside `forward` on the detached fake and the data (EDSR's
        # adversarial loss): the caller's graph is not in that backward.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Critic(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.dis = nn.Linear(4, 1)\n"
              "        self.optimizer = torch.optim.Adam(self.dis.parameters(), lr=1e-4)\n\n"
              "    def forward(self, fake, real):\n        self.optimizer.zero_grad()\n"
              "        loss_d = (self.dis(fake.detach()) - self.dis(real)).mean()\n        loss_d.backward()\n"
              "        self.optimizer.step()\n        return self.dis(fake).mean()\n\n\n"
              "generator = nn.Linear(4, 4)\ncritic = Critic()\n"
              "loss = critic(generator(torch.randn(2, 4)), torch.randn(2, 4))\nloss.backward()\n"),
        # The same with the detached fake bound first, a gradient penalty on a mix made with `rand_like(fake)`, and the
        # generator's loss after the loop re-using the names (EDSR-PyTorch's `Adversarial.forward`).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Critic(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.dis = nn.Linear(4, 1)\n"
              "        self.optimizer = torch.optim.Adam(self.dis.parameters(), lr=1e-4)\n\n"
              "    def forward(self, fake, real):\n        fake_detach = fake.detach()\n        for _ in range(2):\n"
              "            self.optimizer.zero_grad()\n            d_fake = self.dis(fake_detach)\n"
              "            epsilon = torch.rand_like(fake)\n"
              "            hat = (fake_detach * (1 - epsilon) + real * epsilon).requires_grad_()\n"
              "            loss_d = (d_fake - self.dis(real)).mean() + self.dis(hat).pow(2).mean()\n"
              "            loss_d.backward()\n            self.optimizer.step()\n"
              "        d_fake = self.dis(fake)\n        loss_d = -d_fake.mean()\n        return loss_d\n\n\n"
              "generator = nn.Linear(4, 4)\ncritic = Critic()\n"
              "loss = critic(generator(torch.randn(2, 4)), torch.randn(2, 4))\nloss.backward()\n"),
        # `retain_graph=True` frees nothing: the caller's backward through the same graph still runs.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass DeepSupervision(nn.Module):\n"
              "    def __init__(self):\n        super().__init__()\n        self.aux = nn.Linear(3, 1)\n"
              "        self.head = nn.Linear(3, 1)\n\n    def forward(self, feats):\n"
              "        aux_loss = self.aux(feats).pow(2).mean()\n        aux_loss.backward(retain_graph=True)\n"
              "        return self.head(feats)\n\n\nenc = nn.Linear(3, 3)\n"
              "out = DeepSupervision()(enc(torch.randn(2, 3)))\nout.sum().backward()\n"),
        # The network and its input handed to a loss module whose backward probes a local perturbation's gradient;
        # the caller's data carries no graph and its loss is built after the call (bench/fresh26-false/03).
        Valid(_VAT + "model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))\n"
              "optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)\nvat_loss = VATLoss()\n"
              "for step in range(3):\n"
              "    x_l, y_l, x_ul = torch.randn(4, 8), torch.randint(0, 4, (4,)), torch.randn(6, 8)\n"
              "    optimizer.zero_grad()\n    lds = vat_loss(model, x_ul)\n"
              "    loss = F.cross_entropy(model(x_l), y_l) + lds\n    loss.backward()\n"
              "    optimizer.step()\n"),
        # A backward inside `forward` on a fresh leaf (`x.clone().detach().requires_grad_(True)`), weighted by a
        # one-hot of the integer labels: nothing reaches the caller's graph (DeLightCMU/RSC; bench/fresh34-false/04).
        Valid('import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.class_classifier = nn.Linear(4, 3)\n\n    def forward(self, x, gt=None, flag=None):\n        if flag:\n            x_new = x.clone().detach().requires_grad_(True)\n            output = self.class_classifier(x_new)\n            one_hot_sparse = torch.nn.functional.one_hot(gt, 3).float()\n            one_hot = torch.sum(output * one_hot_sparse)\n            self.zero_grad()\n            one_hot.backward()\n            self.zero_grad()\n        return self.class_classifier(x)\n\n\nif __name__ == "__main__":\n    net = Net()\n    opt = torch.optim.SGD(net.parameters(), lr=0.1)\n    for _ in range(2):\n        x = torch.nn.Linear(4, 4)(torch.randn(5, 4))   # the caller\'s graph, as the backbone\'s output would be\n        gt = torch.randint(0, 3, (5,))\n        opt.zero_grad()\n        torch.nn.functional.cross_entropy(net(x, gt, True), gt).backward()\n        opt.step()\n'),
    )
    invalid = (
        # The look-alike: the classifier runs on the input itself, whose graph the inner backward frees.
        Invalid('import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.class_classifier = nn.Linear(4, 3)\n\n    def forward(self, x, gt=None, flag=None):\n        if flag:\n            x_new = x.clone().detach().requires_grad_(True)\n            output = self.class_classifier(x)\n            one_hot_sparse = torch.nn.functional.one_hot(gt, 3).float()\n            one_hot = torch.sum(output * one_hot_sparse)\n            self.zero_grad()\n            one_hot.backward()\n            self.zero_grad()\n        return self.class_classifier(x)\n\n\nif __name__ == "__main__":\n    net = Net()\n    opt = torch.optim.SGD(net.parameters(), lr=0.1)\n    for _ in range(2):\n        x = torch.nn.Linear(4, 4)(torch.randn(5, 4))   # the caller\'s graph, as the backbone\'s output would be\n        gt = torch.randint(0, 3, (5,))\n        opt.zero_grad()\n        torch.nn.functional.cross_entropy(net(x, gt, True), gt).backward()\n        opt.step()\n', line=17,
                runtime="raises: backward through the graph a second time", also=(29,)),
        # The look-alike: the same loss module handed an encoder's features. Its backward frees the encoder's graph,
        # which the returned loss also runs through.
        Invalid(_VAT + "encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())\nmodel = nn.Linear(16, 4)\n"
                "optimizer = torch.optim.Adam([*encoder.parameters(), *model.parameters()], lr=1e-3)\n"
                "vat_loss = VATLoss()\nfor step in range(3):\n"
                "    x_l, y_l, x_ul = torch.randn(4, 8), torch.randint(0, 4, (4,)), torch.randn(6, 8)\n"
                "    optimizer.zero_grad()\n    lds = vat_loss(model, encoder(x_ul))\n"
                "    loss = F.cross_entropy(model(encoder(x_l)), y_l) + lds\n    loss.backward()\n"
                "    optimizer.step()\n",
                line=26, also=(24, 42), runtime="raises: Trying to backward through the graph a second time"),
        # The look-alike: the optimizer is the module's own, and the caller backwards the returned score through
        # the encoder graph the inner backward freed.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Critic(nn.Module):\n"
                "    def __init__(self):\n        super().__init__()\n"
                "        self.net = nn.Linear(3, 1)\n"
                "        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)\n\n"
                "    def forward(self, feats):\n        self.opt.zero_grad()\n"
                "        loss = self.net(feats).pow(2).mean()\n        loss.backward()\n"
                "        self.opt.step()\n        return self.net(feats).mean()\n\n\n"
                "encoder = nn.Linear(3, 3)\ncritic = Critic()\n"
                "score = critic(encoder(torch.randn(2, 3)))\nscore.backward()\n",
                line=14, also=(22,), runtime="raises: Trying to backward through the graph a second time"),
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Q(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.codes = nn.Parameter(torch.randn(4, 3))\n\n"
                "    def forward(self, x):\n        commit = ((self.codes[0] - x) ** 2).mean()\n"
                "        commit.backward()\n        return x + self.codes[0]\n\n\n"
                "enc = nn.Linear(3, 3)\nout = Q()(enc(torch.randn(2, 3)))\nout.sum().backward()\n",
                line=12, also=(18,), runtime="raises: Trying to backward through the graph a second time"),
        # `x.requires_grad_()` is allowed on a tensor that is not a leaf: it proves nothing about the caller's graph.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass GradSign(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.critic = nn.Linear(3, 1)\n\n"
                "    def forward(self, x):\n        x.requires_grad_()\n        score = self.critic(x).sum()\n"
                "        score.backward()\n        return x * 2\n\n\nenc = nn.Linear(3, 3)\n"
                "out = GradSign()(enc(torch.randn(2, 3)))\nout.sum().backward()\n",
                line=13, also=(19,), runtime="raises: Trying to backward through the graph a second time"),
        # The assignment under `if not x.requires_grad` is skipped for an input that carries a graph.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass GradSign(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.critic = nn.Linear(3, 1)\n\n"
                "    def forward(self, x):\n        if not x.requires_grad:\n"
                "            x.requires_grad = True\n        score = self.critic(x).sum()\n"
                "        score.backward()\n        return x * 2\n\n\nenc = nn.Linear(3, 3)\n"
                "out = GradSign()(enc(torch.randn(2, 3)))\nout.sum().backward()\n",
                line=14, also=(20,), runtime="raises: Trying to backward through the graph a second time"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "backward" not in q.attrs:
            return  # the common case, checked in one pass (this rule runs on every keystroke)
        for cls in q.nodes():
            if not (isinstance(cls, ast.ClassDef) and q.is_module_class(cls)):
                continue
            for func in cls.body:
                if isinstance(func, ast.FunctionDef) and func.name == "forward" and len(func.args.args) > 1:
                    self._check_forward(cls, func, q, report)

    def _check_forward(self, cls: ast.ClassDef, func: ast.FunctionDef, q, report) -> None:
        tainted = _tainted(func)
        returns = [r.value for r in ast.walk(func) if isinstance(r, ast.Return) and r.value is not None
                   and q.enclosing_function(r) is func]
        if not any(_reads(v, tainted) for v in returns):
            return  # nothing from the input's graph goes back to the caller (e.g. a meta-learner's forward)
        returned = {n.id for r in returns for n in ast.walk(r) if isinstance(n, ast.Name)}
        given = {a.arg for a in func.args.args[1:] + func.args.kwonlyargs}
        training_step = any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and isinstance(
            c.func.value, ast.Name) and (c.func.attr == "backward" and c.func.value.id in returned
                                         # `opt.step()` on an optimizer the caller hands in: `model(x, opt, step)`
                                         # runs a whole training step, and its caller backwards nothing again.
                                         or c.func.attr == "step" and c.func.value.id in given)
                            for c in ast.walk(func))
        for call in ast.walk(func):
            if not isinstance(call, ast.Call):
                continue
            if isinstance(call.func, ast.Attribute) and call.func.attr == "backward" and q.call_name(call) is None:
                target = call.func.value
            elif q.call_name(call) == "torch.autograd.backward" and call.args:
                target = call.args[0]
            else:
                continue
            if not _reads(target, tainted) or _retains(call):
                continue
            if _separates_inputs(func, target):
                # `(self.dis(fake.detach()) - self.dis(real)).mean()`: the loss detaches one input and reads another
                # plainly, so the author cut the graph that input carries; the other is data (a loss module that
                # updates its discriminator inside `forward`, EDSR's adversarial loss).
                continue
            if _probe(func, call, target) and not _graph_given(q, cls, func):
                # `d.requires_grad_()`, a backward, then `d.grad`: the backward is taken for the gradient of a
                # perturbation the forward makes and adds to the input it is handed, data fed to the network it is
                # handed (lyakaap/VAT-pytorch's VATLoss; bench/fresh26-false/03). The caller's loss is built from
                # what the forward returns, after the call.
                continue
            if training_step:
                # The forward is a training step that hands back a loss it backwarded (NVlabs' FUNIT:
                # `l_total.backward(); return l_total, l_adv, ...` for the trainer to log, one branch per mode), or
                # that steps an optimizer its caller hands in (PointFlow's `forward(self, x, opt, step)`, returning
                # logging values; bench/fresh24-false/01): nothing says a caller backwards again.
                continue
            stmt = q.statement(call) or call
            report.add(self, stmt, "This backward inside `forward` frees the caller's graph; its own backward "
                                   "then raises.")
            return
