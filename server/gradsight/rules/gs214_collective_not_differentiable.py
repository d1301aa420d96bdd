from __future__ import annotations

import ast

from ..engine.astwalk import walk
from ..engine.query import FileEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid, dotted_name

# c10d collectives (`torch.distributed.<op>`): for each, the positions and keyword names of the tensor (or list)
# it writes and of the tensor (or list) it reads. None of them is recorded by autograd.
_OPS = {
    "all_reduce": ((0, "tensor"), (0, "tensor")),
    "all_gather": ((0, "tensor_list"), (1, "tensor")),
    "all_gather_into_tensor": ((0, "output_tensor"), (1, "input_tensor")),
    "_all_gather_base": ((0, "output_tensor"), (1, "input_tensor")),
    "reduce_scatter": ((0, "output"), (1, "input_list")),
    "reduce_scatter_tensor": ((0, "output"), (1, "input")),
    "_reduce_scatter_base": ((0, "output"), (1, "input")),
    "all_to_all_single": ((0, "output"), (1, "input")),
    "all_to_all": ((0, "output_tensor_list"), (1, "input_tensor_list")),
}
_PREFIXES = ("torch.distributed.", "torch.distributed.distributed_c10d.")
_QUALIFIED = frozenset(p + op for p in _PREFIXES for op in _OPS)
_GATHERS = frozenset(op for op in _OPS if _OPS[op][0] != _OPS[op][1])
_OP_NAMES = frozenset(_OPS)
# The differentiable counterpart in `torch.distributed.nn.functional` (which has no `*_tensor` variants).
_DIFFERENTIABLE = {"all_gather_into_tensor": "all_gather", "reduce_scatter_tensor": "reduce_scatter",
                   "_reduce_scatter_base": "reduce_scatter"}

# Methods and attributes whose result carries no graph (or is not the tensor's data at all).
_CUT_METHODS = frozenset({"detach", "detach_", "item", "tolist", "numpy", "numel", "size", "dim", "data_ptr",
                          "get_device", "nelement", "element_size", "stride", "new_zeros", "new_ones", "new_empty",
                          "new_full", "new_tensor", "zero_"})
_CUT_ATTRS = frozenset({"data", "shape", "device", "dtype", "ndim", "is_cuda", "grad", "requires_grad", "layout"})
_CUT_CALLS = frozenset({"float", "int", "bool", "len", "str", "isinstance", "range", "print", "type"})
_NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                      "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode"})
# Factories: a tensor they build carries no graph.
_FACTORY_SUFFIXES = ("zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
                     "tensor", "as_tensor", "arange", "rand", "randn", "randint", "eye", "from_numpy", "Tensor",
                     "FloatTensor", "LongTensor")


# Operations that only make sense on differentiable float data (features, logits): a tensor computed with one of
# them carries a graph. Labels, masks and token counts never go through them.
_FLOAT_OPS = frozenset({"normalize", "mm", "matmul", "bmm", "einsum", "softmax", "log_softmax", "exp", "log",
                        "sigmoid", "tanh", "batch_norm", "layer_norm", "linear", "cosine_similarity", "relu", "gelu",
                        "cdist", "pairwise_distance", "sqrt", "pow", "div", "div_", "mul", "mul_", "addmm"})
_LOSS_WORDS = ("loss", "criterion")


def _param(call: ast.Call, where: tuple):
    pos, kw = where
    for k in call.keywords:
        if k.arg == kw:
            return k.value
    return call.args[pos] if len(call.args) > pos else None


def _call_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _live(expr: ast.AST):
    """The nodes of `expr` whose value its result carries on with a graph: not under `x.detach()`, `x.item()`,
    `x.shape`, `len(x)`, `float(x)`, nor a comprehension's source when the element does not use it."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield node
        if isinstance(node, ast.Call):
            name = _call_name(node)
            if name in _CUT_CALLS and isinstance(node.func, ast.Name):
                continue
            if name in _CUT_METHODS and isinstance(node.func, ast.Attribute):
                stack.extend(node.args)
                stack.extend(k.value for k in node.keywords)
                continue
        if isinstance(node, ast.Attribute) and node.attr in _CUT_ATTRS:
            continue
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            stack.extend(elts)
            targets = {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
            if any(_flows(e, targets) for e in elts):
                stack.extend(g.iter for g in node.generators)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _flows(expr: ast.AST, names: set) -> bool:
    """Does the value of `expr` depend, through operations that keep a graph, on one of `names`?"""
    for node in _live(expr):
        if isinstance(node, ast.Name) and node.id in names:
            return True
        if isinstance(node, ast.Attribute) and dotted_name(node) in names:
            return True
    return False


def _live_names(expr: ast.AST) -> set:
    """The names (and dotted `self.x` spellings) whose value `expr` carries on with its graph."""
    out = set()
    for node in _live(expr):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            spelled = dotted_name(node)
            if spelled:
                out.add(spelled)
    return out


def _no_graph(expr: ast.AST) -> bool:
    """A constant, a factory (`torch.zeros(...)`, `torch.tensor(...)`), or `x.detach()` / `x.item()` / `len(x)`."""
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.Call):
        name = _call_name(expr)
        return name in _CUT_METHODS or name in _CUT_CALLS or name in _FACTORY_SUFFIXES
    return False


def _targets(stmt: ast.AST) -> list:
    if isinstance(stmt, ast.Assign):
        out = []
        for t in stmt.targets:
            out.extend(t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])
        return out
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        return [stmt.target]
    return []


def _lossy(name: str) -> bool:
    low = name.lower()
    return any(w in low for w in _LOSS_WORDS)


def _collective_shaped(top) -> list:
    """A top-level statement's calls that may be a collective or a gather helper, by spelling alone: a plain name
    (an imported op or a helper) or an attribute named like an op (`dist.all_gather`)."""
    return [call for call in top.calls if type(call.func) is ast.Name
            or type(call.func) is ast.Attribute and call.func.attr in _OP_NAMES]


class CollectiveNotDifferentiable(Rule):
    code = "GS214"
    name = "collective-not-differentiable"
    severity = Severity.WARNING
    summary = ("A `torch.distributed` collective (`all_reduce`, `all_gather`, ...) on a tensor that carries a graph "
               "acts outside autograd: the loss built from its result gets only part of its gradient.")
    events = (FileEvent,)
    what_it_does = ("Flags a c10d collective of `torch.distributed` (`all_reduce`, `all_gather`, "
                    "`all_gather_into_tensor`, `reduce_scatter`, `all_to_all`, ...) whose input is computed in the "
                    "same function by differentiable float operations (a matmul, `normalize`, `softmax`, a module "
                    "call) with no `detach()` on the way, and whose result flows, without `detach()`, into a loss: a "
                    "variable named `*loss*`, a `backward()` call, or the value a loss function returns (a function "
                    "or `Loss`/`Criterion` class named so). Not flagged: collectives under `torch.no_grad()` (block "
                    "or decorator), on detached values, `.item()` metrics, masks, labels or gradients (`p.grad`); "
                    "inside a custom `autograd.Function` (where differentiable collectives are built); a gathered "
                    "list into which the local tensor is put back (`gathered[rank] = z`); an `all_reduce` of the "
                    "loss value itself (averaging it over ranks); `broadcast`; and the differentiable "
                    "`torch.distributed.nn.functional` versions. A plain helper function (of the same file or "
                    "imported from another file of the workspace) that gathers one of its parameters into buffers it "
                    "made and returns them, outside `no_grad`, counts as a gather at the line that calls it.")
    why_bad = ("The c10d collectives have no autograd formula. `all_reduce` sums the tensor across ranks in place, "
               "but autograd keeps treating it as this rank's local value: backward differentiates only the local "
               "share, so after DDP averages the gradients they are `1/world_size` of the global-batch gradient (and "
               "the terms that reach other ranks' inputs are lost). `all_gather` writes copies that have no "
               "`grad_fn`: no gradient flows back through the gathered side at all. PyTorch only warns at backward "
               "time (\"an autograd kernel was not registered to the Autograd key(s) but we are trying to backprop "
               "through it. This may lead to silently incorrect behavior\"), or not at all for the gathered copies.")
    example = ("c = z_a.T @ z_b / n\ndist.all_reduce(c)          # outside autograd\n"
               "loss = (torch.diagonal(c) - 1).pow(2).sum()")
    use_instead = ("import torch.distributed.nn.functional as dist_fn\n\nc = z_a.T @ z_b / n\n"
                   "c = dist_fn.all_reduce(c)    # backward all-reduces the gradient too\n"
                   "loss = (torch.diagonal(c) - 1).pow(2).sum()")
    fix_safety = ("This rule offers no automatic fix: the differentiable collectives return a new tensor instead of "
                  "writing in place, and whether other ranks' features should get gradients is a modelling choice.")
    references = ("https://pytorch.org/docs/stable/distributed.html#collective-functions",
                  "https://pytorch.org/docs/stable/distributed.html#autograd-enabled-communication-primitives")

    _store = ("import os\nimport tempfile\n\nimport torch\nimport torch.distributed as dist\n"
              "import torch.nn.functional as F\nimport torch.distributed.nn.functional as dist_fn\n\n"
              "dist.init_process_group(\"gloo\", init_method=\"file://\" + os.path.join(tempfile.mkdtemp(), \"s\"),\n"
              "                        rank=0, world_size=1)\ntorch.manual_seed(0)\n"
              "x, labels = torch.randn(8, 4), torch.arange(8)\nnet = torch.nn.Linear(4, 4)\n")
    # Two CPU processes (gloo, forked), each with half of the batch, against one process on the whole batch.
    _barlow = ("import tempfile\n\nimport torch\nimport torch.distributed as dist\n"
               "import torch.multiprocessing as mp\n\n"
               "WS = 2\ntorch.manual_seed(0)\nza_all, zb_all = torch.randn(8, 3), torch.randn(8, 3)\n"
               "out = tempfile.mkdtemp()\n\n\ndef barlow_loss(za, zb):\n    c = za.T @ zb / za.shape[0]\n"
               "    c = c / dist.get_world_size()\n    dist.all_reduce(c)\n"
               "    return (torch.diagonal(c) - 1).pow(2).sum()\n\n\ndef worker(rank):\n"
               "    dist.init_process_group(\"gloo\", init_method=\"file://\" + out + \"/store\", rank=rank,\n"
               "                            world_size=WS)\n"
               "    w = torch.nn.Parameter(torch.eye(3))\n    half = slice(4 * rank, 4 * rank + 4)\n"
               "    barlow_loss(za_all[half] @ w, zb_all[half] @ w).backward()\n"
               "    dist.all_reduce(w.grad)  # what DDP does\n    torch.save(w.grad / WS, out + \"/grad.pt\")\n"
               "    dist.destroy_process_group()\n\n\nmp.start_processes(worker, nprocs=WS, start_method=\"fork\")\n"
               "w = torch.nn.Parameter(torch.eye(3))\nza, zb = za_all @ w, zb_all @ w\n"
               "c = (za[:4].T @ zb[:4] / 4 + za[4:].T @ zb[4:] / 4) / WS\n"
               "(torch.diagonal(c) - 1).pow(2).sum().backward()\nddp_grad = torch.load(out + \"/grad.pt\")\n")
    # The reference gradient, through the differentiable gather.
    _reference = ("net.zero_grad()\nz = F.normalize(net(x), dim=1)\n"
                  "F.cross_entropy(z @ torch.cat(dist_fn.all_gather(z)).T / 0.1, labels).backward()\n"
                  "dist.destroy_process_group()\n")
    # MoCo's gather helper without its `@torch.no_grad()` (fast-reid's `concat_all_gather`).
    _helper = ("\n\ndef concat_all_gather(t):\n"
                 "    gathered = [torch.ones_like(t) for _ in range(dist.get_world_size())]\n"
                 "    dist.all_gather(gathered, t)\n    return torch.cat(gathered, dim=0)\n")
    valid = (
        # A gather helper on labels only: the features keep their graph on both sides of the similarity.
        Valid(_store + _helper + "\n\ndef supcon_loss(z):\n    z = F.normalize(z, dim=1)\n"
              "    all_labels = concat_all_gather(labels)\n"
              "    return F.cross_entropy(z @ z.T / 0.1, all_labels)\n\n\n"
              "supcon_loss(net(x)).backward()\ndist.destroy_process_group()\n"),
        # The fix: the autograd-aware all_reduce.
        Valid(_store + "\n\ndef barlow_loss(za, zb):\n    c = za.T @ zb / za.shape[0]\n"
              "    c = c / dist.get_world_size()\n    c = dist_fn.all_reduce(c)\n"
              "    return (torch.diagonal(c) - 1).pow(2).sum()\n\n\n"
              "barlow_loss(net(x), net(x + 1)).backward()\ndist.destroy_process_group()\n"),
        # The loss averaged over ranks for logging only: a detached copy.
        Valid(_store + "\n\ndef train_step(opt):\n    opt.zero_grad()\n    loss = F.cross_entropy(net(x), labels % 4)\n"
              "    loss.backward()\n    opt.step()\n    reduced = loss.detach().clone()\n    dist.all_reduce(reduced)\n"
              "    return reduced / dist.get_world_size()\n\n\n"
              "print(train_step(torch.optim.SGD(net.parameters(), lr=0.1)).item())\ndist.destroy_process_group()\n"),
        # Manual data parallelism: gradients are reduced, not the graph.
        Valid(_store + "\n\ndef train_step(opt):\n    opt.zero_grad()\n    loss = F.cross_entropy(net(x), labels % 4)\n"
              "    loss.backward()\n    for p in net.parameters():\n        dist.all_reduce(p.grad)\n"
              "        p.grad /= dist.get_world_size()\n    opt.step()\n    return loss\n\n\n"
              "train_step(torch.optim.SGD(net.parameters(), lr=0.1))\ndist.destroy_process_group()\n"),
        # MoCo: the keys come from the momentum encoder under no_grad and are gathered as constants on purpose.
        Valid(_store + "key_net = torch.nn.Linear(4, 4)\n\n\n@torch.no_grad()\ndef concat_all_gather(t):\n"
              "    gathered = [torch.zeros_like(t) for _ in range(dist.get_world_size())]\n"
              "    dist.all_gather(gathered, t)\n    return torch.cat(gathered)\n\n\ndef moco_loss(q):\n"
              "    q = F.normalize(q, dim=1)\n    with torch.no_grad():\n        k = F.normalize(key_net(x), dim=1)\n"
              "        k = concat_all_gather(k)\n    return F.cross_entropy(q @ k.T / 0.1, labels)\n\n\n"
              "moco_loss(net(x)).backward()\ndist.destroy_process_group()\n"),
        # The gathered list gets this rank's own (graph-carrying) features back: the gradient through them flows.
        Valid(_store + "\n\ndef info_nce_loss(z):\n    z = F.normalize(z, dim=1)\n"
              "    gathered = [torch.zeros_like(z) for _ in range(dist.get_world_size())]\n"
              "    dist.all_gather(gathered, z)\n    gathered[dist.get_rank()] = z\n"
              "    return F.cross_entropy(z @ torch.cat(gathered).T / 0.1, labels)\n\n\n"
              "info_nce_loss(net(x)).backward()\ndist.destroy_process_group()\n"),
        # Other ranks' features used as constant negatives on purpose, detached where they are used.
        Valid(_store + "\n\ndef info_nce_loss(z):\n    z = F.normalize(z, dim=1)\n"
              "    gathered = [torch.zeros_like(z) for _ in range(dist.get_world_size())]\n"
              "    dist.all_gather(gathered, z)\n    negatives = torch.cat(gathered).detach()\n"
              "    return F.cross_entropy(z @ negatives.T / 0.1, labels)\n\n\n"
              "info_nce_loss(net(x)).backward()\ndist.destroy_process_group()\n"),
    )
    invalid = (
        # fast-reid's triplet loss: the gathered embeddings (from a helper in another module) stand on both sides of
        # the distance matrix, so no gradient reaches the local ones through it.
        Invalid(_store + _helper + "\n\ndef info_nce_loss(z):\n    z = F.normalize(z, dim=1)\n"
                "    all_z = concat_all_gather(z)\n"
                "    return F.cross_entropy(z @ all_z.T / 0.1, labels)\n\n\n"
                "info_nce_loss(net(x)).backward()\ngot = net.weight.grad.clone()\n" + _reference,
                line=24, runtime="silent: not torch.allclose(got, net.weight.grad)"),
        # lightly's BarlowTwinsLoss (the cross-correlation matrix summed over ranks in place): the gradient each
        # rank computes is 1/world_size of the gradient on the global batch.
        Invalid(_barlow, line=16,
                runtime="silent: torch.allclose(ddp_grad * WS, w.grad) and not torch.allclose(ddp_grad, w.grad)"),
        # SimCLR on gathered embeddings (vissl's SimclrInfoNCECriterion): the gathered side gets no gradient.
        Invalid(_store + "\n\ndef info_nce_loss(z):\n    z = F.normalize(z, dim=1)\n"
                "    gathered = [torch.zeros_like(z) for _ in range(dist.get_world_size())]\n"
                "    dist.all_gather(gathered, z)\n"
                "    return F.cross_entropy(z @ torch.cat(gathered).T / 0.1, labels)\n\n\n"
                "info_nce_loss(net(x)).backward()\ngot = net.weight.grad.clone()\n" + _reference,
                line=19, runtime="silent: not torch.allclose(got, net.weight.grad)"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        spelled = bool(q.attrs & _OP_NAMES or q.imported & _QUALIFIED)
        # A loss the result could reach: a `backward()`, or a variable named `*loss*`; else only a loss function's
        # return value (checked per call, from names alone).
        sinks = "backward" in q.attrs or any(_lossy(n) for n in q.name_stores) or any(_lossy(n) for n in q.attr_stores)
        if not spelled and not sinks:
            # Neither a collective nor a loss is spelled (one pass; this rule runs on every keystroke). A loss
            # function (by name) calling a gather helper imported from another file is asked per call below.
            if not any(_lossy(f.name) for f in q.functions) and not any(_lossy(c.name) for c in q.class_defs):
                return
        self._walked: dict = {}
        self._helpers: dict = {}
        for call in q.surveyed("GS214.collective-shaped", _collective_shaped):
            qual = q.call_name(call)
            helper = None
            if qual in _QUALIFIED:
                op = qual.rsplit(".", 1)[-1]
            elif isinstance(call.func, ast.Name) and (qual is None or not qual.startswith("torch.")) \
                    and self._gather_helper(q, call.func.id) is not None:
                helper = call.func.id
            else:
                continue
            fn = q.enclosing_function(call)
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or self._in_autograd_function(q, fn):
                continue
            if not (sinks or self._is_loss_function(q, fn)) or self._no_grad(q, call):
                continue
            stmt = q.statement(call)
            if helper is not None:
                # `all_x = concat_all_gather(x)`: a plain function of this file or another that gathers one of
                # its parameters into fresh buffers and returns them.
                found = self._gather_helper(q, helper)
                if found is None or not isinstance(stmt, ast.Assign) or stmt.value is not call \
                        or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
                    continue
                op, index, name = found
                read = call.args[index] if index < len(call.args) else next(
                    (k.value for k in call.keywords if k.arg == name), None)
                out = stmt.targets[0].id
                if read is None or isinstance(read, ast.Starred):
                    continue
            else:
                written, read = (_param(call, w) for w in _OPS[op])
                out = dotted_name(written) if written is not None else None
                if out is None or read is None:
                    continue
            # All-reducing the loss value itself (to average it over ranks) only scales its gradient by a constant
            # whose right value depends on how the gradients are averaged later: left alone.
            if op not in _GATHERS and _lossy(out):
                continue
            if not self._carries_graph(q, read, fn, stmt):
                continue
            if op in _GATHERS and self._local_put_back(fn, out, stmt):
                continue
            if not self._feeds_loss(q, fn, out, stmt):
                continue
            src = dotted_name(read)
            src = f"`{src}`" if src and len(src) <= 20 else "its input"
            if helper is not None:
                message = (f"`{helper}` gathers {src} with `{op}`, outside autograd: its output carries no gradient "
                           f"back. Gather with `torch.distributed.nn.functional.{_DIFFERENTIABLE.get(op, op)}` in it "
                           f"(differentiable), or detach the output on purpose.")
            elif op in _GATHERS:
                message = (f"`{op}` of {src} runs outside autograd: its output carries no gradient back. "
                           f"Use `torch.distributed.nn.functional.{_DIFFERENTIABLE.get(op, op)}`, which is "
                           f"differentiable, or detach the output on purpose.")
            else:
                message = (f"`{op}` changes {src} outside autograd: backward sees only this rank's local value. "
                           f"Use the differentiable `torch.distributed.nn.functional.{op}`, which returns the result.")
            report.add(self, stmt, message)

    # -- gather helpers ----------------------------------------------------------------------------------
    def _gather_helper(self, q, name: str):
        """`(op, index, parameter)` when `name` is a plain function (this file's or imported from another file of
        the workspace) that runs outside `no_grad` a gather collective (`all_gather`, ...) reading one of its
        parameters into buffers it made itself (`[torch.ones_like(t) for _ in ...]`) and returns what it gathered
        without putting the local tensor back: MoCo's `concat_all_gather` without its `@torch.no_grad()`."""
        if name in self._helpers:
            return self._helpers[name]
        self._helpers[name] = None
        found = q.function_def(name)
        if found is None:
            return None
        fn, imports, source = found
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        # Spelled at all? This file's attribute names, or the other file's lines of the function (no walk).
        if source is None:
            if not q.attrs & _GATHERS:
                return None
        elif not any(op in source.line_text(n) for n in range(fn.lineno, fn.end_lineno + 1) for op in _GATHERS):
            return None
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        for dec in fn.decorator_list:
            spelled = dotted_name(dec.func if isinstance(dec, ast.Call) else dec) or ""
            root, _, rest = spelled.partition(".")
            qual = imports.get(root, root) + ("." + rest if rest else "")
            if qual in _NO_GRAD or spelled.rsplit(".", 1)[-1] in ("no_grad", "inference_mode"):
                return None
        body = list(walk(fn))
        made: set = set()  # buffers the helper made itself, with no graph in them
        for node in body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value = node.value
                elts = [value.elt] if isinstance(value, ast.ListComp) else list(value.elts) \
                    if isinstance(value, (ast.List, ast.Tuple)) else []
                if elts and all(_no_graph(e) for e in elts):
                    made.add(node.targets[0].id)
        for node in body:
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            op = node.func.attr
            spelled = dotted_name(node.func) or ""
            root, _, rest = spelled.partition(".")
            qual = imports.get(root, root) + ("." + rest if rest else "")
            if op not in _GATHERS or qual not in _QUALIFIED:
                continue
            written, read = (_param(node, w) for w in _OPS[op])
            if not isinstance(read, ast.Name) or read.id not in params or not isinstance(written, ast.Name) \
                    or written.id not in made:
                continue
            stmt = next((s for s in body if isinstance(s, ast.stmt) and s.lineno <= node.lineno <= s.end_lineno
                         and not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.If, ast.For,
                                                ast.While, ast.With, ast.Try))), None)
            if stmt is None or self._local_put_back(fn, written.id, stmt):
                continue
            names = {written.id}
            for s in body:
                if isinstance(s, ast.Assign) and s.lineno > stmt.lineno and _flows(s.value, names):
                    names |= {t.id for t in s.targets if isinstance(t, ast.Name)}
            if any(isinstance(r, ast.Return) and r.value is not None and _flows(r.value, names) for r in body):
                self._helpers[name] = (op, params.index(read.id), read.id)
                return self._helpers[name]
        return None

    # -- where the call stands -----------------------------------------------------------------------------
    @staticmethod
    def _in_autograd_function(q, fn: ast.AST) -> bool:
        """`forward` / `backward` of a custom `autograd.Function`: the place a differentiable collective is built."""
        args = fn.args.posonlyargs + fn.args.args
        if args and args[0].arg == "ctx":
            return True
        cls = q.enclosing(fn, (ast.ClassDef,))
        return cls is not None and any((q.qualname(b) or dotted_name(b) or "").endswith("Function") for b in cls.bases)

    @staticmethod
    def _no_grad(q, call: ast.Call) -> bool:
        node = q.parent(call)
        while node is not None:
            if isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    ctx = item.context_expr
                    if (q.call_name(ctx) if isinstance(ctx, ast.Call) else q.qualname(ctx)) in _NO_GRAD:
                        return True
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for dec in node.decorator_list:
                    if (q.call_name(dec) if isinstance(dec, ast.Call) else q.qualname(dec)) in _NO_GRAD:
                        return True
            node = q.parent(node)
        return False

    # -- dataflow inside the function, by statement order ----------------------------------------------------
    def _statements(self, fn: ast.AST) -> list:
        """The statements of `fn` (nested blocks included), walked once per `check`."""
        hit = self._walked.get(id(fn))
        if hit is None or hit[0] is not fn:
            hit = (fn, [n for n in ast.walk(fn) if isinstance(n, ast.stmt) and n is not fn])
            self._walked[id(fn)] = hit
        return hit[1]

    def _carries_graph(self, q, read: ast.AST, fn: ast.AST, stmt: ast.stmt) -> bool:
        """Is the tensor the collective reads computed in `fn` by differentiable float operations (a matmul,
        `normalize`, `softmax`, a module call...), with no `detach()`, `.item()` or factory on the way? Follows
        each name to its last assignment before the use."""
        assigns = [s for s in self._statements(fn) if _targets(s)]
        methods = self._own_methods(q, fn)
        seen: set = set()
        frontier = [(read, stmt.lineno)]
        while frontier:
            expr, line = frontier.pop()
            if _no_graph(expr):
                continue
            if self._evidence(q, expr, fn, methods):
                return True
            for name in _live_names(expr):
                if (name, line) in seen:
                    continue
                seen.add((name, line))
                defs = [s for s in assigns if s.lineno < line and any(dotted_name(t) == name for t in _targets(s))]
                if not defs:
                    continue
                last = max(defs, key=lambda s: s.lineno)
                if isinstance(last, ast.AugAssign):
                    # `c /= n`: the value before it, combined with the right-hand side.
                    frontier.append((ast.Name(id=name, ctx=ast.Load()), last.lineno))
                if last.value is not None:
                    frontier.append((last.value, last.lineno))
        return False

    @staticmethod
    def _own_methods(q, fn: ast.AST) -> set:
        cls = q.enclosing(fn, (ast.ClassDef,))
        if cls is None:
            return set()
        return {m.name for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}

    def _evidence(self, q, expr: ast.AST, fn: ast.AST, methods: set) -> bool:
        """A differentiable float operation in the live part of `expr`: `a @ b`, `F.normalize(...)`, a call of a
        module attribute (`self.bn(z)`, not one of the class's own methods), or of a function of this file that
        does one of these."""
        for node in _live(expr):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                return True
            if not isinstance(node, ast.Call):
                continue
            name = _call_name(node)
            if name in _FLOAT_OPS:
                return True
            f = node.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" \
                    and f.attr not in methods and q.qualname(f) is None:
                return True
            if isinstance(f, ast.Name) and self._local_function_evidence(q, f.id):
                return True
        return False

    @staticmethod
    def _local_function_evidence(q, name: str) -> bool:
        """`_normalize(z)` where the file's own `def _normalize` returns `F.batch_norm(...)` (one level deep)."""
        for node in q.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Return) and sub.value is not None and any(
                            isinstance(n, ast.Call) and _call_name(n) in _FLOAT_OPS
                            or isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult) for n in _live(sub.value)):
                        return True
        return False

    @staticmethod
    def _local_put_back(fn: ast.AST, out: str, stmt: ast.stmt) -> bool:
        """`gathered[rank] = z` after the gather: the local slot carries the graph again (open_clip's pattern)."""
        for s in ast.walk(fn):
            if isinstance(s, ast.Assign) and s.lineno > stmt.lineno:
                for t in s.targets:
                    if isinstance(t, ast.Subscript) and dotted_name(t.value) == out:
                        return True
        return False

    def _feeds_loss(self, q, fn: ast.AST, out: str, stmt: ast.stmt) -> bool:
        """Does the collective's result flow (no detach) into a loss: a name with "loss" in it, a `backward()`
        call, or what a loss function (by its name or its class's) returns?"""
        after = sorted((s for s in self._statements(fn) if s.lineno > stmt.end_lineno), key=lambda s: s.lineno)
        names = {out}
        for s in after:
            if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and s.value is not None \
                    and _flows(s.value, names):
                new = {r for r in (dotted_name(t) for t in _targets(s)) if r}
                if any(_lossy(n) for n in new):
                    return True
                names |= new
            if isinstance(s, ast.Return) and s.value is not None and _flows(s.value, names) \
                    and self._is_loss_function(q, fn):
                return True
            for n in ast.walk(s):
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward" \
                        and _flows(n.func.value, names):
                    return True
        return False

    @staticmethod
    def _is_loss_function(q, fn: ast.AST) -> bool:
        if _lossy(fn.name):
            return True
        cls = q.enclosing(fn, (ast.ClassDef,))
        return cls is not None and fn.name in ("forward", "__call__") and _lossy(cls.name)
