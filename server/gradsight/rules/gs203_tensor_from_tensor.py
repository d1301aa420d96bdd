from __future__ import annotations

import ast

from ..engine import torchdb as db
from ..engine.report import text as msg
from ..engine.events import GraphCutEvent
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


class TensorFromTensor(Rule):
    code = "GS203"
    name = "tensor-from-grad-tensor"
    severity = Severity.WARNING
    summary = "`torch.tensor(t)` copies a tensor that requires grad without its history: gradients stop here."
    events = (GraphCutEvent,)
    what_it_does = ("Flags `torch.tensor(t)` where `t` requires grad, with grad mode on (typically inside a loss "
                    "or a forward pass), `torch.tensor([t1, t2, ...])` of a list (a literal or a list "
                    "comprehension) whose tensors require grad, and the pre-0.4 `torch.autograd.Variable(t)` of such a "
                    "tensor (under torch 2.x a new leaf without history, even with `requires_grad=True`). A "
                    "`torch.tensor()` copy whose values are only read as numbers is left alone: all-reduced, updated in place and turned "
                    "into Python numbers (`.item()`, `float()`, `.tolist()`), as a logging helper does with a loss; "
                    "so is a copy used only as a regression target (a loss's other argument, the other side of a "
                    "subtraction, or returned), and a `Variable(t)` (without `requires_grad=True`) that is a factor "
                    "of a product, difference or quotient, a stop-gradient by intent (`Variable(adv) * log_prob`), "
                    "and `Variable(t, requires_grad=False)`, a stop-gradient written as one. "
                    "`Variable(x, requires_grad=True)` of a value gradsight cannot see (a library model's "
                    "prediction) is flagged when the code shows it is a prediction to train: every use is the input "
                    "of a loss whose value reaches a backward in the function, and its `.grad` is never read "
                    "(evidence from use).")
    why_bad = ("The copy is a new leaf with `requires_grad=False`: nothing upstream of it receives a gradient. "
               "PyTorch only warns (\"To copy construct from a tensor, it is recommended to use "
               "sourceTensor.detach().clone()...\"), and `torch.tensor([a, b])` built from tensors does not even "
               "warn. `torch.as_tensor(t)` is different: it returns `t` itself, history included.")
    example = "scores = model(x)\nloss = torch.tensor(scores).pow(2).mean()"
    use_instead = ("scores = model(x)\nloss = scores.pow(2).mean()\n# a list of tensors: torch.stack(parts) keeps "
                   "their history")
    references = ("https://pytorch.org/docs/stable/generated/torch.tensor.html",)
    valid = (
        # `Variable(t, requires_grad=False)`: a stop-gradient written as one (TRADES' adversarial example).
        Valid('import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nfrom torch.autograd import Variable\n\nmodel = nn.Linear(4, 3)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nx_natural = torch.rand(2, 4)\ny = torch.tensor([0, 2])\ndelta = (0.001 * torch.randn(2, 4)).requires_grad_()\nfor _ in range(3):\n    loss_kl = F.kl_div(F.log_softmax(model(x_natural + delta), dim=1), F.softmax(model(x_natural), dim=1),\n                       reduction="sum")\n    grad = torch.autograd.grad(loss_kl, [delta])[0]\n    delta = (delta.detach() + 0.01 * grad.sign()).clamp(-0.03, 0.03).requires_grad_()\nx_adv = Variable(torch.clamp(x_natural + delta, 0.0, 1.0), requires_grad=False)\noptimizer.zero_grad()\nlogits_natural = model(x_natural)\nloss = F.cross_entropy(logits_natural, y) + F.kl_div(F.log_softmax(model(x_adv), dim=1),\n                                                     F.softmax(logits_natural, dim=1), reduction="batchmean")\nloss.backward()\noptimizer.step()\nassert not x_adv.requires_grad and model.weight.grad is not None\n'),
        # A prediction made a leaf to read its own gradient (a saliency map of the loss): nothing was to be trained.
        Valid("import torch\nimport torch.nn.functional as F\nfrom torch.autograd import Variable\n\n\n"
              "def loss_gradient(pred, target):\n    p = Variable(pred, requires_grad=True)\n"
              "    loss = F.mse_loss(p, target)\n    loss.backward()\n    return p.grad\n\n\n"
              "g = loss_gradient(torch.randn(2, 3), torch.randn(2, 3))\nassert g is not None\n"),
        # The new leaf is the model's input (an adversarial or saliency input), not the loss's prediction.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nfrom torch.autograd import Variable\n"
              "\n\ndef step(model, images, labels):\n    inp = Variable(images, requires_grad=True)\n"
              "    loss = F.cross_entropy(model(inp), labels)\n    loss.backward()\n    return loss\n\n\n"
              "net = nn.Linear(3, 4)\nstep(net, torch.randn(2, 3), torch.tensor([0, 1]))\n"
              "assert net.weight.grad is not None\n"),
        # The conversion only runs for a value that is not a tensor (torchrl's RBF controller `max_action`).
        Valid("import torch\n\n\ndef squash(x, max_action=1.0):\n    if not isinstance(max_action, torch.Tensor):\n"
              "        max_action = torch.tensor(max_action, dtype=x.dtype)\n    return torch.tanh(x) * max_action\n\n\n"
              "w = torch.randn(3, requires_grad=True)\nscale = torch.ones(3, requires_grad=True)\n"
              "squash(w, scale).sum().backward()\nsquash(w).sum().backward()\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.as_tensor(x * 2)\ny.sum().backward()\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    y = torch.tensor(x * 2)\n"),
        # `Variable` of data without history (the pre-0.4 idiom for inputs): nothing to cut.
        Valid("import torch\nimport torch.nn as nn\nfrom torch.autograd import Variable\nnet = nn.Linear(3, 3)\n"
              "x = Variable(torch.randn(2, 3))\nloss = net(x).pow(2).mean()\nloss.backward()\n"),
        Valid("import torch\nw = torch.randn(3, requires_grad=True)\nparts = [(w * i).sum() for i in range(3)]\n"
              "torch.stack(parts).sum().backward()\n"),
        Valid("import torch\nw = torch.randn(3, requires_grad=True)\nparts = [(w * i).sum().item() for i in range(3)]\n"
              "stats = torch.tensor(parts)\n"),
        # A TD target built from the target network's outputs, copied on purpose as a constant (philtabor's DDPG):
        # it is only a loss's other argument.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
              "critic, target_critic = nn.Linear(3, 1), nn.Linear(3, 1)\nstate, reward = torch.randn(4, 3), torch.ones(4)\n"
              "q_next = target_critic(state)\ntarget = [reward[j] + 0.99 * q_next[j] for j in range(4)]\n"
              "target = torch.tensor(target)\ntarget = target.view(4, 1)\n"
              "loss = F.mse_loss(target, critic(state))\nloss.backward()\n"),
        # Discounted returns from the critic's own bootstrap value, subtracted from its predictions (A3C).
        Valid("import torch\nimport torch.nn as nn\nv_net = nn.Linear(3, 1)\nstates = torch.randn(5, 3)\n"
              "v = v_net(states)\nR = v[-1]\nrets = []\nfor r in [1.0, 0.0, 1.0]:\n    R = r + 0.9 * R\n"
              "    rets.append(R)\nreturns = torch.tensor(rets)\ncritic_loss = ((returns - v[:3].squeeze(1)) ** 2).mean()\n"
              "critic_loss.backward()\n"),
        # A logging helper's copy of the loss (LLaMA-Adapter's `all_reduce_mean`): all-reduced, divided in place and
        # read with `.item()`. Only numbers leave it, and a number has no gradient to lose.
        Valid('import types\nimport torch\nimport torch.nn as nn\n\n'
              'dist = types.SimpleNamespace(all_reduce=lambda t: None, get_world_size=lambda: 2)\n\n\n'
              'def all_reduce_mean(x):\n    x_reduce = torch.tensor(x)\n    dist.all_reduce(x_reduce)\n'
              '    x_reduce /= dist.get_world_size()\n    return x_reduce.item()\n\n\nmodel = nn.Linear(3, 1)\n'
              'loss = model(torch.randn(4, 3)).pow(2).mean()\nloss.backward()\nprint(all_reduce_mean(loss))\n'),
        # `Variable(t)` as a stop-gradient by intent (post-0.4 code, where it is `t.detach()`): a policy-gradient
        # advantage weighting the log-probabilities (a VPG), and a Retrace target carried through a loop (ACER).
        # The losses still train the policy and the critic through their other operands.
        Valid("import torch\nimport torch.nn as nn\nfrom torch.autograd import Variable\n"
              "policy, critic = nn.Linear(3, 2), nn.Linear(3, 1)\ns = torch.randn(5, 3)\n"
              "logp = torch.log_softmax(policy(s), 1)[:, 0]\nvalues = critic(s).squeeze(1)\nreturns = torch.ones(5)\n"
              "loss = -(Variable(returns - values) * logp).mean() + (returns - values).pow(2).mean()\n"
              "loss.backward()\nassert policy.weight.grad is not None and critic.weight.grad is not None\n"),
        Valid("import torch\nimport torch.nn as nn\nfrom torch.autograd import Variable\ncritic = nn.Linear(3, 1)\n"
              "v = critic(torch.randn(4, 3)).squeeze(1)\nif v.shape[0] > 2:\n    q_ret = Variable(v[-1])\nelse:\n"
              "    q_ret = torch.zeros(())\ntargets = []\n"
              "for i in range(3):\n    q_ret = 1.0 + 0.9 * q_ret\n    targets.append(q_ret)\n"
              "    q_ret = Variable(0.5 * (q_ret - v[i]) + v[i])\n"
              "loss = (torch.stack(targets) - v[:3]).pow(2).mean()\nloss.backward()\n"
              "assert critic.weight.grad is not None\n"),
    )
    invalid = (
        # sd_dreambooth_extension: a library U-Net's prediction re-wrapped before the loss; the function cannot see
        # the model, but the prediction made to require grad and backwarded through a loss says it should train.
        Invalid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nfrom torch.autograd import Variable\n"
                "\n\ndef train_step(model, batch, optimizer):\n    pred = model(batch['x'])\n"
                "    pred = Variable(pred, requires_grad=True)\n    loss = F.mse_loss(pred.float(), batch['y'])\n"
                "    loss.backward()\n    optimizer.step()\n\n\n"
                "net = nn.Linear(3, 3)\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
                "train_step(net, {'x': torch.randn(2, 3), 'y': torch.randn(2, 3)}, opt)\n", line=9,
                runtime="silent: net.weight.grad is None"),
        Invalid("import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.tensor(x * 2)\n", line=3,
                runtime="silent: not y.requires_grad"),
        # The pre-0.4 `Variable` wrapper: under torch 2.x a new leaf without history, even with requires_grad=True
        # (sd_dreambooth_extension's U-Net prediction re-wrapped before the loss): the model gets no gradient.
        Invalid("import torch\nimport torch.nn as nn\nfrom torch.autograd import Variable\nnet = nn.Linear(3, 3)\n"
                "pred = Variable(net(torch.randn(2, 3)), requires_grad=True)\nloss = pred.pow(2).mean()\n"
                "loss.backward()\n", line=5, runtime="silent: net.weight.grad is None"),
        Invalid("import torch\nw = torch.randn(3, requires_grad=True)\nparts = [(w * i).sum() for i in range(3)]\n"
                "total = torch.tensor(parts).sum()\n", line=4, runtime="silent: not total.requires_grad"),
        # The same all-reduced copy added into the loss: the model's gradient is lost (silently: `reg` has one).
        Invalid('import types\nimport torch\nimport torch.nn as nn\n\n'
                'dist = types.SimpleNamespace(all_reduce=lambda t: None, get_world_size=lambda: 2)\n'
                'model = nn.Linear(3, 1)\nreg = torch.zeros(1, requires_grad=True)\n'
                'loss = model(torch.randn(4, 3)).pow(2).mean()\nloss_reduce = torch.tensor(loss)\n'
                'dist.all_reduce(loss_reduce)\nloss_reduce /= dist.get_world_size()\n'
                'total = loss_reduce + reg.sum()\ntotal.backward()\n',
                line=9, runtime="silent: model.weight.grad is None"),
        # `Variable(pred)` made a term of the loss, not a factor of a term that keeps its gradient: the model
        # gets none.
        Invalid("import torch\nimport torch.nn as nn\nfrom torch.autograd import Variable\nnet = nn.Linear(3, 1)\n"
                "reg = torch.zeros(1, requires_grad=True)\npred = net(torch.randn(4, 3))\n"
                "loss = Variable(pred).pow(2).mean() + reg.sum()\nloss.backward()\n", line=7,
                runtime="silent: net.weight.grad is None"),
    )

    def check(self, event: GraphCutEvent, report) -> None:
        if event.target.rg is not Tri.YES:
            # `Variable(pred, requires_grad=True)` of a value gradsight cannot see: reported where the code shows
            # that it is a prediction the author wants trained (evidence from use).
            if _backwarded_prediction(report.tree, event.node):
                report.add(self, event.node,
                           f"`Variable({event.expr}, requires_grad=True)` makes a new leaf without history: the "
                           "backward of this loss stops at it and never reaches what computed "
                           f"`{event.expr}`. Use the tensor itself.")
            return
        if _used_as_target(report.tree, event.node, prediction=event.api == "Variable" and _wants_grad(event.node)):
            return
        if event.api == "Variable" and _stop_gradient_factor(report.tree, event.node):
            return  # `Variable(adv) * log_prob`: the post-0.4 `Variable(t)` used on purpose as `t.detach()`
        if event.api == "Variable" and _refuses_grad(event.node):
            return  # `Variable(x_adv, requires_grad=False)`: a stop-gradient, written as one (TRADES' adversarial input)
        if event.api != "Variable" and _read_as_numbers(report.tree, event.node):
            return  # a `torch.tensor()` copy only read as numbers; `Variable(t)` is written to keep history
        origin = event.target.origin
        # A "from `expr`" fact names the expression itself: "the values come from `expr`", not "from from".
        where = f"`{origin.arg('expr')}`" if origin is not None and origin.kind == "from" and origin.arg("expr") \
            else origin.text if origin is not None else ""
        report.add(self, event.node,
                   f"`{event.api}()` copies values that require grad into a tensor without history: no gradient "
                   "flows back. Use the tensor itself (or `.detach().clone()` if a copy without gradient is "
                   "intended)" + (msg(f"; the values come from {where}, line ", origin.line, ".") if origin else "."),
                   related=[origin])


def _later_uses(tree, call: ast.AST):
    """For a copy bound to one name in its function (`x = torch.tensor(...)`): `(name, its later loads, the
    function's parent map)`, or None when it has no later use or is not so bound; the `Return` statement when the
    copy is returned as it is made."""
    if tree is None:
        return None
    scope, parents = _scope_parents(tree, call)
    stmt = call
    while stmt in parents and not isinstance(stmt, ast.stmt):
        stmt = parents[stmt]
    if isinstance(stmt, ast.Return):
        return stmt
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    name = stmt.targets[0].id
    uses = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
            and (n.lineno, n.col_offset) > (stmt.end_lineno, stmt.end_col_offset)]
    return (name, uses, parents) if uses else None


def _used_as_target(tree, call: ast.AST, prediction: bool = False) -> bool:
    """Whether the copy is bound to a name that is only used as a regression target: opposite another value in a
    subtraction (`returns - values`), as an argument of a loss (`F.mse_loss(target, q)`, `criterion(q, target)`),
    or handed back to the caller (`return batch_return`). Cutting the graph there is what the code means (an RL
    return or a TD target built from the network's own outputs, as `.detach()` would); the bug this rule is for
    is a copy added into a loss as a term (`torch.tensor(parts).sum()`). With `prediction` (a copy made with
    `requires_grad=True`: the author wants gradients through it) the first argument of a loss is the loss's input,
    not its target (`F.mse_loss(Variable(pred, requires_grad=True), target)`: the model behind `pred` gets none)."""
    found = _later_uses(tree, call)
    if found is None or isinstance(found, ast.Return):
        return isinstance(found, ast.Return)
    name, uses, parents = found
    for use in uses:
        node = use
        # `target = target.view(b, 1)`, `.to(device)`: the same values under the same name.
        while isinstance(parents.get(node), ast.Attribute) and isinstance(parents.get(parents[node]), ast.Call) \
                and parents[node].attr in ("view", "reshape", "to", "unsqueeze", "squeeze", "float", "cuda",
                                           "detach", "clone", "type", "double"):
            node = parents[parents[node]]
        parent = parents.get(node)
        if isinstance(parent, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in parent.targets):
            continue  # rebinds the name; its later uses are checked with the rest
        if isinstance(parent, ast.Return):
            continue
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Sub):
            continue
        if isinstance(parent, ast.Call) and node in parent.args and len(parent.args) >= 2:
            func = parent.func
            fname = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if fname in db.LOSSES_WITH_TARGET or fname in db.LOSS_MODULES_WITH_TARGET or "loss" in fname.lower() \
                    or "criterion" in fname.lower():
                if prediction and node is parent.args[0]:
                    return False
                continue
        return False
    return True


# How a stop-gradient copy is combined with the values that keep their gradient: as a weight (`w * log_prob`), a
# baseline or target (`q - v`), or a divisor.
_FACTOR_OPS = (ast.Mult, ast.Sub, ast.Div)


def _stop_gradient_factor(tree, call: ast.Call) -> bool:
    """Whether `Variable(t)` (without `requires_grad=True`) is a constant factor by intent: an operand of a product,
    difference or quotient (`Variable(adv) * log_prob`, `(Variable(q_target) - v).pow(2)`), or bound to a name
    whose uses up to its next assignment (in a loop, also from the top of the loop body) are all such operands.
    Under torch >= 0.4 `Variable(t)` is `t.detach()`, and pre-0.4 code could not wrap a tensor with history at all
    (`Variable(Variable)` raised): code that does is post-0.4 code using it as a stop-gradient, the way ACER's
    Retrace targets, importance weights and policy-gradient advantages need one. The expression the factor joins
    keeps its gradient through the other operand. `Variable(pred, requires_grad=True)` (a new leaf the author
    wants gradients through) and a copy added into a loss (`Variable(loss) + reg`) stay findings."""
    if tree is None or any(k.arg == "requires_grad" for k in call.keywords):
        return False
    scope, parents = _scope_parents(tree, call)
    if _is_factor(parents, call):
        return True
    stmt = call
    while stmt in parents and not isinstance(stmt, ast.stmt):
        stmt = parents[stmt]
    if not (isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)):
        return False
    name = stmt.targets[0].id
    # The other branch of an `if` around the binding (`else: q = Tensor([0])`) never runs after it.
    skip, node = set(), stmt
    while node in parents:
        parent = parents[node]
        if isinstance(parent, ast.If):
            other = parent.orelse if node in parent.body else parent.body if node in parent.orelse else ()
            skip.update(n for branch in other for n in ast.walk(branch))
        node = parent
    names = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name and n not in skip]
    names.sort(key=lambda n: (n.lineno, n.col_offset))
    after = (stmt.end_lineno, stmt.end_col_offset)
    uses = _loads_until_store(names, lambda n: (n.lineno, n.col_offset) > after, parents)
    if not uses:
        loop = stmt
        while loop in parents and not isinstance(loop, (ast.For, ast.While)):
            loop = parents[loop]
        if isinstance(loop, (ast.For, ast.While)) and loop.body:
            start = (loop.body[0].lineno, loop.body[0].col_offset)
            uses = _loads_until_store(names, lambda n: (n.lineno, n.col_offset) >= start, parents)
    return bool(uses) and all(_is_factor(parents, use) for use in uses)


def _loads_until_store(names, starts, parents):
    """The loads among `names` (sorted by position) from the first one `starts` accepts up to the statement of the
    next store of the name (a store's own statement's loads included: `q = r + g * q`)."""
    uses, stop = [], None
    for n in names:
        if not starts(n):
            continue
        if stop is not None and (n.lineno, n.col_offset) > stop:
            break
        if isinstance(n.ctx, ast.Load):
            uses.append(n)
        elif stop is None:
            stmt = n
            while stmt in parents and not isinstance(stmt, ast.stmt):
                stmt = parents[stmt]
            stop = (stmt.end_lineno, stmt.end_col_offset)
    return uses


def _is_factor(parents, node) -> bool:
    parent = parents.get(node)
    return isinstance(parent, ast.BinOp) and isinstance(parent.op, _FACTOR_OPS)


def _scope_parents(tree, node):
    """The innermost function around `node` (or the module) and its parent map."""
    scope = tree
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno <= node.lineno <= (n.end_lineno or 0) \
                and n.lineno >= getattr(scope, "lineno", 0):
            scope = n
    return scope, {child: parent for parent in ast.walk(scope) for child in ast.iter_child_nodes(parent)}


# Calls that hand a tensor to the other processes (torch.distributed, horovod): they read and overwrite its values.
_COLLECTIVES = frozenset({"all_reduce", "reduce", "all_gather", "broadcast", "reduce_scatter", "allreduce",
                          "allreduce_", "allgather", "all_gather_into_tensor"})
_NUMBER_CALLS = frozenset({"float", "int", "print", "round"})


def _read_as_numbers(tree, call: ast.AST) -> bool:
    """Whether the copy is bound to a name whose values are only ever read as numbers: all-reduced across processes
    (`dist.all_reduce(x)`), updated in place (`x /= world_size`), and turned into Python numbers (`x.item()`,
    `float(x)`, `x.cpu().tolist()`), as a logging helper does with a loss (`all_reduce_mean`: `torch.tensor(x)
    .cuda()`, all-reduce, `.item()`). A number has no gradient to lose: the copy cuts nothing anyone wanted."""
    found = _later_uses(tree, call)
    if found is None or isinstance(found, ast.Return):
        return False
    name, uses, parents = found
    for use in uses:
        node = use
        # `x.cpu()`, `x.detach()`, `x.div_(n)`: the same values, then read on.
        while isinstance(parents.get(node), ast.Attribute) and isinstance(parents.get(parents[node]), ast.Call) \
                and parents[node].attr in (db.COPY_METHODS | {"detach", "div_", "mul_", "add_", "sub_"} | set(db.CUT_METHODS)):
            attr = parents[node].attr
            node = parents[parents[node]]
            if attr in db.CUT_METHODS:
                break
        else:
            attr = None
        parent = parents.get(node)
        if attr in db.CUT_METHODS:
            continue  # a Python number or array: no history to lose
        if isinstance(parent, ast.Call) and node in parent.args:
            func = parent.func
            fname = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if fname in _COLLECTIVES or fname in _NUMBER_CALLS:
                continue
        if isinstance(parent, ast.Expr):
            continue  # `x.div_(world_size)` as a statement: updated in place, read later
        if isinstance(parent, ast.AugAssign) and parent.target is node:
            continue
        return False
    return True


def _refuses_grad(call: ast.Call) -> bool:
    """`Variable(t, requires_grad=False)` (keyword or second argument), written so: the author asks for a tensor
    without a gradient, which is what it gives."""
    flag = next((k.value for k in call.keywords if k.arg == "requires_grad"),
                call.args[1] if len(call.args) > 1 else None)
    return isinstance(flag, ast.Constant) and flag.value is False


def _wants_grad(call: ast.Call) -> bool:
    """`Variable(t, requires_grad=True)` (keyword or second argument), written so."""
    flag = next((k.value for k in call.keywords if k.arg == "requires_grad"),
                call.args[1] if len(call.args) > 1 else None)
    return isinstance(flag, ast.Constant) and flag.value is True


_SAME_VALUES = ("view", "reshape", "to", "unsqueeze", "squeeze", "float", "cuda", "type", "double", "half",
                "bfloat16", "contiguous")


def _loss_call(func: ast.AST) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in db.LOSSES_WITH_TARGET or name in db.LOSS_MODULES_WITH_TARGET or "loss" in name.lower() \
        or "criterion" in name.lower()


def _backwarded_prediction(tree, call: ast.Call) -> bool:
    """`v = Variable(x, requires_grad=True)` whose every later use is as the input (first argument) of a loss
    (`F.mse_loss(v.float(), target)`, `criterion(v, y)`), bound to a name from which, through the function's
    assignments, a value reaches a backward (`loss.backward()`, `accelerator.backward(loss)`), and whose `.grad`
    the function never reads: the author made the prediction require grad for this backward, so `x` is what should
    have been trained (a gradient check or a saliency map reads `v.grad`)."""
    found = _later_uses(tree, call)
    if found is None or isinstance(found, ast.Return):
        return False
    name, uses, parents = found
    scope, _ = _scope_parents(tree, call)
    nodes = list(ast.walk(scope))
    if any(isinstance(n, ast.Attribute) and n.attr == "grad" and isinstance(n.value, ast.Name) and n.value.id == name
           for n in nodes):
        return False
    tainted: set = set()
    for use in uses:
        node = use
        while isinstance(parents.get(node), ast.Attribute) and isinstance(parents.get(parents[node]), ast.Call) \
                and parents[node].attr in _SAME_VALUES:
            node = parents[parents[node]]
        parent = parents.get(node)
        if isinstance(parent, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in parent.targets):
            continue  # `v = v.float()`: the same values; the later uses are checked with the rest
        if not (isinstance(parent, ast.Call) and parent.args and node is parent.args[0] and _loss_call(parent.func)):
            return False
        stmt = parents.get(parent)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            tainted.add(stmt.targets[0].id)
        else:
            return False
    assigns = [n for n in nodes if isinstance(n, (ast.Assign, ast.AugAssign))]
    changed = bool(tainted)
    while changed:
        changed = False
        for a in assigns:
            if any(isinstance(m, ast.Name) and m.id in tainted for m in ast.walk(a.value)):
                for t in (a.targets if isinstance(a, ast.Assign) else [a.target]):
                    if isinstance(t, ast.Name) and t.id not in tainted:
                        tainted.add(t.id)
                        changed = True
    for n in nodes:
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward":
            recv = n.func.value
            if isinstance(recv, ast.Name) and recv.id in tainted \
                    or any(isinstance(a, ast.Name) and a.id in tainted for a in n.args):
                return True
    return False
