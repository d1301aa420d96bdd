from __future__ import annotations

import ast

from ..engine.events import AccumulateEvent
from ..engine.report import insert_after, make_fix, Note, text as msg
from ..engine.values import Tri
from ..findings import Applicability, Severity
from ._gs404_bounds import bounded, is_step_call, over_positions, own_nodes, plain_names
from .base import Invalid, Rule, Valid


def _last_item(node: ast.AST, name: str) -> bool:
    """`name[-1]`: the last item of a list, not the list."""
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name \
        and isinstance(node.slice, ast.UnaryOp) and isinstance(node.slice.op, ast.USub) \
        and isinstance(node.slice.operand, ast.Constant) and node.slice.operand.value == 1


def _backwarded(tree: ast.AST | None, name: str, anywhere: bool = False, items: bool = False) -> bool:
    """Whether some backward runs on `name` (`name.backward()`, `name.sum().backward()`); with `anywhere`, also on
    an expression that reads it (`torch.stack(name).sum().backward()`). With `items` (a list that grows by
    `append`), a backward of its last item (`losses[-1].backward()`) is one step's, not a backward of the list."""
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "backward":
            if items and _last_item(node.func.value, name):
                continue
            if anywhere and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node)):
                return True
            base = node.func.value
            while isinstance(base, (ast.Call, ast.Attribute, ast.Subscript, ast.BinOp)):
                base = base.func if isinstance(base, ast.Call) else (base.left if isinstance(base, ast.BinOp) else base.value)
            if isinstance(base, ast.Name) and base.id == name:
                return True
    return False


def _after_loop(tree: ast.AST | None, node: ast.AST, name: str):
    """(root, the statements after the loop that keeps values in `name`, in its innermost function, and the names
    those values flow into there), or None. A name flows on when a later assignment reads it (`meta =
    torch.stack(task_losses).mean()`) or a later loop iterates over it (`for value, r in zip(values, rewards)`:
    the rollout an actor-critic update walks backwards)."""
    if tree is None:
        return None
    root = tree
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
             and n.lineno <= node.lineno <= (n.end_lineno or n.lineno)]
    if funcs:
        tree = max(funcs, key=lambda n: n.lineno)  # the innermost function holding the loop
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))
             and n.lineno <= node.lineno <= (n.end_lineno or n.lineno)]
    if not loops:
        return None
    end = max(loops, key=lambda n: n.lineno).end_lineno or 0
    after = [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and n.lineno > end]
    readers = {name}
    flows = sorted((s for s in after if isinstance(s, (ast.Assign, ast.AugAssign, ast.For, ast.AsyncFor))),
                   key=lambda s: s.lineno)
    for _ in range(2):  # twice: an assignment in a later loop may feed one above it in that loop
        for stmt in flows:
            source = stmt.iter if isinstance(stmt, (ast.For, ast.AsyncFor)) else stmt.value
            if any(isinstance(n, ast.Name) and n.id in readers for n in ast.walk(source)):
                targets = [stmt.target] if isinstance(stmt, (ast.For, ast.AsyncFor, ast.AugAssign)) else stmt.targets
                readers |= {n for t in targets for n in plain_names(t)}
    return root, after, readers


def _backwarded_after_loop(tree: ast.AST | None, node: ast.AST, name: str) -> bool:
    """Whether, after the loop that keeps values in `name`, a backward runs through them: on an expression that
    reads `name` (`torch.stack(losses).mean().backward()`) or on a name they flow into (`meta = torch.stack(
    task_losses).mean()` then `meta.backward()`, second-order MAML's meta-batch; `for value, r in zip(values,
    rewards): critic_loss = critic_loss + (R - value) ** 2` then `critic_loss.backward()`, A2C/A3C's update). The
    values are kept for that backward, as long as the loop that fills them."""
    found = _after_loop(tree, node, name)
    if found is None:
        return False
    root, after, readers = found
    helpers = None
    for stmt in after:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "backward" \
                and any(isinstance(n, ast.Name) and n.id in readers for n in ast.walk(stmt.value)):
            return True
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name):
            # `_update_networks(args, model, policy_loss + value_loss, optimiser)`: a function of the file that
            # backwards the parameter the kept values go into.
            helpers = _backwarding_helpers(root) if helpers is None else helpers
            params = helpers.get(stmt.value.func.id, ())
            if any(i in params and any(isinstance(n, ast.Name) and n.id in readers for n in ast.walk(a))
                   for i, a in enumerate(stmt.value.args)):
                return True
    return False


def _returned_after_loop(tree: ast.AST | None, node: ast.AST, name: str) -> bool:
    """Whether, after the loop that keeps values in `name`, the function returns or yields them or a value they flow
    into (`return torch.stack(outs, dim=1)`: an RNN unrolled step by step, a multi-agent network's per-step Q
    values): the caller decides whether a backward needs them."""
    found = _after_loop(tree, node, name)
    if found is None:
        return False
    _, after, readers = found
    return any(isinstance(s, (ast.Return, ast.Expr)) and s.value is not None
               and (isinstance(s, ast.Return) or isinstance(s.value, (ast.Yield, ast.YieldFrom)))
               and any(isinstance(n, ast.Name) and n.id in readers for n in ast.walk(s.value)) for s in after)


def _backwarding_helpers(tree: ast.AST) -> dict:
    """Module-level functions of the file -> the positions of their parameters that their body backwards
    (`loss.backward()` on the parameter `loss`)."""
    out: dict = {}
    for fn in getattr(tree, "body", ()):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        hit = {params.index(n.func.value.id) for n in ast.walk(fn) if isinstance(n, ast.Call)
               and isinstance(n.func, ast.Attribute) and n.func.attr == "backward"
               and isinstance(n.func.value, ast.Name) and n.func.value.id in params}
        if hit:
            out[fn.name] = hit
    return out


def _detached_where_backwarded(tree: ast.AST | None, event) -> bool:
    """`if with_backward: loss.backward(); loss = loss.detach()` then `losses.append(loss)`: on the path that calls
    backward the kept value is detached, and on the other path no backward runs in the loop, so the graphs are
    kept on purpose for a backward after it (sentence-transformers' cached losses). Told from the text: the
    backward and a `name = name.detach()` (or `.item()`) of the appended name sit in the same `if` body."""
    node = event.value_node
    if tree is None or not isinstance(node, ast.Name):
        return False
    line = event.backward_in_loop
    for stmt in ast.walk(tree):
        if not isinstance(stmt, ast.If) or not (stmt.lineno <= line <= stmt.end_lineno):
            continue
        for body in (stmt.body, stmt.orelse):
            if not body or not (body[0].lineno <= line <= body[-1].end_lineno):
                continue
            for s in body:
                if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == node.id for t in s.targets) \
                        and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute) \
                        and s.value.func.attr in ("detach", "item") and isinstance(s.value.func.value, ast.Name) \
                        and s.value.func.value.id == node.id:
                    return True
    return False


def _calls(node: ast.AST, fname: str) -> bool:
    """Whether `node` holds a call of a function or method named `fname` (`evaluate(...)`, `self.evaluate(...)`)."""
    return any(isinstance(n, ast.Call) and (isinstance(n.func, ast.Name) and n.func.id == fname
                                            or isinstance(n.func, ast.Attribute) and n.func.attr == fname)
               for n in ast.walk(node))


def _result_backwarded(tree: ast.AST | None, fname: str) -> bool:
    """Whether the file backwards what a function named `fname` returns: a backward on an expression that calls it
    (`eval_loss().backward()`), or on a name bound from such a call (`loss = evaluate(); loss.backward()`). A
    function named for evaluation may still compute a value to differentiate (`evaluate` as "compute")."""
    if tree is None:
        return False
    for scope in ast.walk(tree):
        if not isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        # The scope's own nodes (a name bound in one function and backwarded in another is another variable).
        own, todo = [], list(ast.iter_child_nodes(scope))
        while todo:
            node = todo.pop()
            own.append(node)
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                todo.extend(ast.iter_child_nodes(node))
        bound = set()
        for node in own:
            if isinstance(node, ast.Assign) and _calls(node.value, fname):
                bound |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        for node in own:
            if isinstance(node, ast.Call) and (isinstance(node.func, ast.Attribute) and node.func.attr == "backward"
                                               or isinstance(node.func, ast.Name) and node.func.id == "backward"):
                if _calls(node, fname) or any(isinstance(n, ast.Name) and n.id in bound for n in ast.walk(node)):
                    return True
    return False


# Methods of a tensor that a Python number does not have: a method calling one of them on its parameter is written
# for tensors (`self.sum += hvd.allreduce(val.cpu())`), so a tensor with a graph is what its callers hand it.
_TENSOR_ONLY_METHODS = frozenset({"cpu", "cuda", "to", "float", "double", "half", "clone", "view", "reshape",
                                  "mean", "sum", "numel", "size", "type", "type_as", "contiguous", "squeeze",
                                  "unsqueeze", "flatten"})


def _tensor_method_on(tree: ast.AST | None, line: int, param: str) -> bool:
    """Whether the innermost function of the file holding `line`, with a parameter `param`, calls a tensor-only
    method on that parameter (`param.cpu()`)."""
    if tree is None:
        return False
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
             and n.lineno <= line <= (n.end_lineno or n.lineno)]
    if not funcs:
        return False
    fn = max(funcs, key=lambda n: n.lineno)
    if param not in {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}:
        return False
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _TENSOR_ONLY_METHODS
               and isinstance(n.func.value, ast.Name) and n.func.value.id == param for n in ast.walk(fn))


def _within_one_step(tree: ast.AST | None, node: ast.AST, name: str) -> bool:
    """`for data, target in loader: losses = []; for chunk in chunks: ...; losses.append(loss); loss.backward()`,
    then `optimizer.step()` after the inner loop (hysts/pytorch_image_classification's sub-batches): the list is
    made anew on every iteration of an enclosing loop, the inner loop that fills it steps no optimizer, and that
    enclosing loop steps one after it. What is kept is the graphs of the sub-batches of one optimizer step, and
    they are dropped with the list at the next step: memory does not grow with training. The same nesting over
    an epoch's batches steps the optimizer inside the inner loop and stays flagged."""
    if tree is None:
        return False
    line = node.lineno
    loops = sorted((n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))
                    and n.lineno <= line <= (n.end_lineno or n.lineno)), key=lambda n: n.lineno)
    if len(loops) < 2:
        return False
    inner = loops[-1]
    if any(is_step_call(n) for n in ast.walk(inner)):
        return False
    for outer in reversed(loops[:-1]):
        outside = [s for s in ast.walk(outer) if isinstance(s, ast.stmt)
                   and not (inner.lineno <= s.lineno <= (inner.end_lineno or inner.lineno))]
        remade = any(isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)
                     and s.lineno < inner.lineno and isinstance(s.value, (ast.List, ast.Dict, ast.Constant))
                     for s in outside)
        stepped = any(is_step_call(n) for s in outside if s.lineno > (inner.end_lineno or inner.lineno)
                      for n in ast.walk(s))
        if remade and stepped:
            return True
        inner = outer
        if any(is_step_call(n) for n in ast.walk(inner)):
            return False
    return False


def _returned_freed(tree: ast.AST | None, event, buf: str) -> list:
    """The `return` statements after the write that hand `buf` itself (alone or in a tuple) to the caller, in a
    public function (no leading underscore: its callers are not only this module's own code) where the written value's
    graph was freed by the loop's backward (an attack's best-so-far images, computed before `cost.backward()`): the
    caller gets every step's graph, whose saved tensors are gone. A private helper's result goes to this file's own
    callers, analysed with it (pymarl2's `_train_critic` returns `q_vals` that its caller only reads detached)."""
    if tree is None or event.value.freed is None or not event.value.freed_sure or not buf.isidentifier():
        return []
    fn = None
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno <= event.node.lineno \
                <= getattr(n, "end_lineno", n.lineno) and (fn is None or n.lineno > fn.lineno):
            fn = n
    if fn is None or fn.name.startswith("_"):
        return []
    out = []
    for n in own_nodes(fn):
        if isinstance(n, ast.Return) and n.value is not None and n.lineno > event.node.lineno:
            vals = n.value.elts if isinstance(n.value, ast.Tuple) else [n.value]
            if any(isinstance(v, ast.Name) and v.id == buf for v in vals):
                out.append(n)
    return out


# Gradient accumulation: a total made anew by the step loop, summed over its micro-batch loop, which backwards each
# piece; the step loop steps after it (mini_edm; bench/fresh24-repro/03). `{before}`/`{inside}`: where the total is made.
_EDM = ("import torch\nimport torch.nn as nn\n\n"
        "net = nn.Sequential(nn.Linear(8, 16), nn.SiLU(), nn.Linear(16, 8))\n"
        "optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)\naccumulation_steps = 4\n"
        "train_loss = 0.0\n{before}for step in range(3):\n    optimizer.zero_grad()\n"
        "{inside}    for _ in range(accumulation_steps):\n        batch = torch.randn(4, 8)\n"
        "        loss = ((net(batch + torch.randn_like(batch)) - batch) ** 2).mean()\n"
        "        loss /= accumulation_steps\n        loss.backward()\n"
        "        batch_loss += loss\n    optimizer.step()\n"
        "    train_loss += batch_loss.detach().item()\n")


# The backwarded name rebound to arithmetic on its `.item()` and a config attribute (zhykoties/TimeSeries;
# bench/fresh23-false/02): a number from then on. `{rebind}`: `loss.item()` there, `loss` in the look-alike.
_ITEM_OVER_CONFIG = ("import types\n\nimport torch\nimport torch.nn as nn\n\n"
                     "params = types.SimpleNamespace(window=4)\nmodel = nn.Linear(3, 1)\n"
                     "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nhistory = []\nfor step in range(3):\n"
                     "    opt.zero_grad()\n    loss = model(torch.randn(params.window, 3)).pow(2).sum()\n"
                     "    loss.backward()\n    opt.step()\n    loss = {rebind} / params.window\n"
                     "    history.append(loss)\n")


class LossAccumulatesGraph(Rule):
    code = "GS404"
    name = "loss-accumulates-graph"
    severity = Severity.WARNING
    summary = "Summing or collecting loss tensors across iterations keeps every step's graph alive."
    events = (AccumulateEvent,)
    what_it_does = ("Flags `total += loss`, `total = total + loss` and `losses.append(loss)` inside a training "
                    "loop (one that calls backward each iteration) when `loss` still carries its autograd graph "
                    "and the accumulator outlives the iteration and is never backwarded itself. Accumulators kept "
                    "in containers count too: `stats[k] += loss`, `stats[k] = stats.get(k, 0) + loss`, "
                    "`history['loss'].append(loss)`, `self.losses.append(loss)`, when the dict, list or object was "
                    "made before the loop. An index-assignment into a tensor made before the loop (`losses[i] = loss` into "
                    "`losses = torch.zeros(n)`, in grad mode) keeps them whatever the index: autograd records the write "
                    "on the buffer, which chains every step's graph. A loss the loop calls `backward()` on surely carries a graph, even when "
                    "the model is a function argument gradsight cannot see. Outside loops, a method that calls "
                    "backward and adds its loss into an attribute of `self` (`self.running_loss += loss`, "
                    "`self.losses.append(loss)` in a `train_step`) is flagged too: the object outlives the call, "
                    "so each call of the training step leaves its graph there. A method call counts as "
                    "accumulation when the method adds that argument into an attribute of its object "
                    "(`meter.update(loss, n)` with `self.sum += val * n`) and the object was made before the loop; where the "
                    "method is written for tensors (it calls `val.cpu()` or another tensor-only method on the "
                    "argument), the finding stands on its statement that keeps the argument, where the detach goes. "
                    "So does a call whose function writes a tensor with its graph in place into a tensor it is handed "
                    "(`self.update_best(dist, best)` doing `best[mask] = dist[mask]`) made before the loop. "
                    "When a public function (no leading underscore) returns such a buffer and the loop's backward "
                    "freed the graph of what was written into it, the `return` is flagged too: the caller gets every "
                    "step's graph, and a backward through it raises (torchattacks' CW attacks). "
                    "Loops without backward are flagged when nothing can ever backward what they keep: in an "
                    "evaluation function (the model put in eval mode, or a function named `evaluate`, `validate`, "
                    "`val_step`, ... whose result the file never backwards), or in a function that never backwards "
                    "and lets no graph out (it returns numbers, stores nothing outside itself, hands no tensor to "
                    "code gradsight cannot see). There a state fed back into the next iteration "
                    "(`logits, hidden = self.forward(inp, hidden)` in a generation loop: one that samples or decodes "
                    "each step, or a function named `generate`, `sample`, `translate`, ...) is flagged too: each "
                    "step's graph hangs off the next one's. A backward of the last item of a history "
                    "(`losses[-1].backward()`) does not backward the history. An accumulation bounded by the code "
                    "rather than by the data is true but harmless, and left alone: a total made anew on every step of "
                    "a loop that itself calls backward (k discriminator steps summed per batch), or a list or total "
                    "made anew per call or per batch whose loop walks the model's parts (`model.parameters()`, a "
                    "module or optimizer it calls or steps: one loss per head, per agent), or, without backward, "
                    "combines per item values made before it without running a model (`reg += m.sum()` over the "
                    "layers' masks), or is a local kept across loops the code counts (`range(n_tasks)`, `range(N)` "
                    "then `range(K)`) whose own backward (`inner_loss.backward(create_graph=True)`, "
                    "`loss.backward(retain_graph=True)`, `torch.autograd.grad`) runs through something else than what "
                    "is kept: an unrolled computation (MAML's meta-batch losses, fast weights) whose graphs are the "
                    "call's result or die with it. So is an accumulator that an `if` in the loop, whose test changes "
                    "between iterations (`if step % 3 == 0:`), first backwards or hands to a call before an "
                    "optimizer step and then makes anew (`optimizer.pc_backward(losses)`, `optimizer.step()`, "
                    "`losses = []`: PCGrad's loss buffer), where the `if`s around that drain also hold the "
                    "accumulation: it keeps the graphs since the last drain, for the drain's backward. A total made before the batch loop, or anew only per epoch, grows with the "
                    "data and stays flagged. Other loops without backward that append values with their graphs get "
                    "an information note, unless the values go on to a backward after the loop (also through a loop "
                    "over them: an actor-critic update walking the rollout backwards) or the function returns them "
                    "or what they flow into (per-step outputs of an unrolled network, for the caller's loss).")
    why_bad = ("Nothing raises, but the accumulator holds a reference to each step's graph, so memory grows with "
               "every iteration (on a GPU, until it runs out). Logging needs the number, not the graph.")
    example = "total_loss = 0\nfor x in data:\n    loss = model(x).mean()\n    loss.backward()\n    total_loss += loss"
    use_instead = "total_loss = 0\nfor x in data:\n    loss = model(x).mean()\n    loss.backward()\n    total_loss += loss.item()"
    fix_safety = ("Unsafe: `.item()` turns the accumulator into a Python float (printing shows `0.5`, not "
                  "`tensor(0.5, grad_fn=...)`) and synchronises with the GPU each step; use `.detach()` instead "
                  "if you need a tensor. A piece of a tensor written into a buffer (`best[mask] = adv[mask]`) gets "
                  "`.detach()`: the same values, but the buffer no longer requires grad, which code that relied "
                  "on it (a backward through the buffer) notices.")
    references = ("https://pytorch.org/docs/stable/notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory",)
    _dctts = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\ndef train(model, optimizer, batches, phase='train'):\n    running_loss = 0.0\n    for x, y in batches:\n        loss = F.l1_loss(model(x), y)\n        if phase == 'train':\n            optimizer.zero_grad()\n            loss.backward()\n            optimizer.step()\n{}        running_loss += loss\n    return running_loss\n\n\nm = nn.Linear(3, 1)\ntotal = train(m, torch.optim.SGD(m.parameters(), lr=0.1), [(torch.randn(4, 3), torch.randn(4, 1))] * 3)\n"
    _e3bm = 'import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Meta(nn.Module):\n    def __init__(self, steps=3):\n        super().__init__()\n        self.enc = nn.Linear(4, 3)\n        self.comb = nn.Parameter(torch.ones(steps))\n        self.lr = nn.Parameter(torch.full((steps,), 0.1))\n        self.update_step = steps\n{}\n    def forward(self, x_shot, y_shot, x_query):\n        emb_s, emb_q = self.enc(x_shot), self.enc(x_query)\n        w = torch.zeros(3, 3, requires_grad=True)\n{}        total_logits = 0.0 * F.linear(emb_q, w)\n        for k in range(0, self.update_step):\n            loss = F.cross_entropy(F.linear(emb_s, w), y_shot)\n            grad = torch.autograd.grad(loss, w)[0]\n            w = w - self.lr[k] * grad\n            total_logits += self.comb[k] * F.linear(emb_q, w)\n{}        return total_logits\n\n\nm = Meta()\n{}'
    valid = (
        Valid(_ITEM_OVER_CONFIG.format(rebind="loss.item()")),
        Valid(_EDM.format(before="", inside="    batch_loss = torch.tensor(0.0)\n")),
        # The fix: the meters are handed Python numbers.
        Valid('import torch\nimport torch.nn as nn\nfrom collections import OrderedDict\n\n\nclass AverageMeter:\n    def __init__(self, name):\n        self.name = name\n        self.sum = 0\n        self.count = 0\n\n    def update(self, val, n=1):\n        self.sum += val * n\n        self.count += n\n\n\ndef criterion(out):\n    loss = (out ** 2).mean()\n    return {"loss": loss, "l1": out.abs().mean()}\n\n\ndef train(model, loader, optimizer):\n    metrics = OrderedDict([(name, AverageMeter(name)) for name in ("loss", "l1")])\n    for x in loader:\n        loss_dict = criterion(model(x))\n        loss = loss_dict["loss"]\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        for k in loss_dict:\n            metrics[k].update(loss_dict[k].item(), x.size(0))\n    return metrics\n\n\nmodel = nn.Linear(3, 1)\nmetrics = train(model, [torch.randn(4, 3) for _ in range(3)], torch.optim.SGD(model.parameters(), lr=0.1))\n'),
        # A loss dict whose every entry is replaced by its `.item()` in a loop over `items()` before the epoch sum
        # reads one (DBNet's trainer; bench/fresh19-false/04): the sum adds floats.
        Valid("import torch\nimport torch.nn as nn\n\nmodel = nn.Linear(3, 1)\n"
              "opt = torch.optim.SGD(model.parameters(), lr=0.1)\ntrain_loss = 0.0\nfor i in range(3):\n"
              "    pred = model(torch.randn(4, 3))\n"
              "    loss_dict = {'loss': (pred ** 2).mean(), 'loss_l1': pred.abs().mean()}\n    opt.zero_grad()\n"
              "    loss_dict['loss'].backward()\n    opt.step()\n"
              "    for idx, (key, value) in enumerate(loss_dict.items()):\n        loss_dict[key] = value.item()\n"
              "    train_loss += loss_dict['loss']\nassert isinstance(train_loss, float)\n"),
        # Statistics written into a tensor under `torch.no_grad()`: the tensor takes a copy, no graph.
        Valid("import torch\nimport torch.nn as nn\n\n\ndef train(model, opt, batches):\n"
              "    loss_stats = torch.zeros(len(batches))\n    for i, x in enumerate(batches):\n"
              "        loss = model(x).mean()\n        opt.zero_grad()\n        loss.backward()\n        opt.step()\n"
              "        with torch.no_grad():\n            loss_stats[i] = loss\n    return loss_stats\n\n\n"
              "net = nn.Linear(4, 1)\nstats = train(net, torch.optim.SGD(net.parameters(), lr=0.1), "
              "[torch.randn(8, 4) for _ in range(3)])\nassert stats.grad_fn is None\n"),
        # ACER's n-step loop (Kaixhin/ACER): the losses summed over the steps go, after the loop, to a function of
        # the file that backwards them.
        Valid("import torch\nimport torch.nn as nn\n\nnet = nn.Linear(4, 1)\n"
              "opt = torch.optim.SGD(net.parameters(), lr=0.1)\n\n\n"
              "def _update(loss, optimiser):\n    optimiser.zero_grad()\n    loss.backward()\n    optimiser.step()\n\n\n"
              "def _train(xs):\n    value_loss = 0\n    for x in xs:\n        value_loss += (net(x) ** 2).mean()\n"
              "    _update(value_loss, opt)\n\n\n_train([torch.randn(2, 4) for _ in range(3)])\n"),
        # A demo unrolling a few teacher-forced steps and printing shapes: nothing sampled or decoded, and a name
        # that does not say it generates, so the state fed back is not flagged.
        Valid('import torch\nimport torch.nn as nn\n\ndecoder = nn.GRUCell(4, 8)\n\n\ndef demo(steps):\n    hidden = torch.zeros(1, 8)\n    target = torch.randn(steps, 1, 4)\n    for c in range(steps):\n        hidden = decoder(target[c], hidden)\n        print(hidden.size())\n\n\ndemo(3)\n'),
        # The same generation loop under `@torch.no_grad()`; an unrolled recurrence whose result the caller
        # backwards; a total returned for a backward; an evaluation summing numbers; one pass through layers; a
        # function named for evaluation whose result the file backwards ("evaluate" as "compute").
        Valid('import torch\nimport torch.nn as nn\n\n\ndef eval_loss(model, batches):\n    total = 0\n    for x, y in batches:\n        total += nn.functional.mse_loss(model(x), y)\n    return total\n\n\nmodel = nn.Linear(3, 1)\nloss = eval_loss(model, [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)])\nloss.backward()\n'),
        Valid('import torch\nimport torch.nn as nn\n\n\nclass CharLM(nn.Module):\n'
              '    def __init__(self):\n        super().__init__()\n'
              '        self.emb = nn.Embedding(10, 8)\n        self.rnn = nn.GRU(8, 8)\n'
              '        self.out = nn.Linear(8, 10)\n\n    def forward(self, inp, hidden):\n'
              '        o, hidden = self.rnn(self.emb(inp), hidden)\n        return self.out(o), hidden\n'
              '\n    @torch.no_grad()\n    def generate(self, n):\n'
              '        hidden = torch.zeros(1, 1, 8)\n        inp = torch.zeros(1, 1, dtype=torch.long)\n'
              '        chars = []\n        for _ in range(n):\n'
              '            logits, hidden = self.forward(inp, hidden)\n'
              '            inp = torch.multinomial(logits.view(-1).softmax(0), 1).view(1, 1)\n'
              '            chars.append(int(inp))\n        return chars\n\n\n'
              'chars = CharLM().generate(20)\n'),
        Valid('import torch\nimport torch.nn as nn\n\n\ndef unroll(cell, xs, h):\n    for x in xs:\n'
              '        h = cell(x, h)\n    return h\n\n\ncell = nn.GRUCell(3, 4)\n'
              'h = unroll(cell, torch.randn(5, 2, 3), torch.zeros(2, 4))\nh.pow(2).sum().backward()\n'),
        Valid('import torch\nimport torch.nn as nn\n\n\ndef total_loss(model, batches):\n    total = 0\n'
              '    for x, y in batches:\n        total += nn.functional.mse_loss(model(x), y)\n'
              '    return total\n\n\nmodel = nn.Linear(3, 1)\n'
              'total_loss(model, [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]).backward()\n'),
        Valid('import torch\nimport torch.nn as nn\n\n\ndef evaluate(model, batches):\n    total = 0.0\n'
              '    for x, y in batches:\n        total += nn.functional.mse_loss(model(x), y).item()\n'
              '    return total / len(batches)\n\n\n'
              'val = evaluate(nn.Linear(3, 1), [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)])\n'),
        Valid('import torch\nimport torch.nn as nn\n\n\ndef feature_norm(layers, x):\n'
              '    for layer in layers:\n        x = layer(x)\n    return x.norm().item()\n\n\n'
              'norm = feature_norm(nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 3)]), torch.randn(2, 3))\n'),
        # An unrolled inner optimisation (pyg's EquilibriumAggregation, MAML's inner loop): `autograd.grad` with
        # `create_graph=True` builds the graph the outer backward differentiates, so each step's graph is kept on
        # purpose.
        Valid("import torch\n\n\ndef unrolled(y, func, steps=3):\n    buf = torch.zeros_like(y)\n"
              "    for _ in range(steps):\n        g = torch.autograd.grad(func(y), y, create_graph=True)[0]\n"
              "        buf = 0.9 * buf - 0.1 * g\n        y = y + buf\n    return y\n\n\n"
              "w = torch.randn(3, requires_grad=True)\n"
              "out = unrolled(torch.zeros(3, requires_grad=True), lambda y: ((y - w) ** 2).sum())\n"
              "out.sum().backward()\n"),
        # A module's forward collecting per-step outputs: the backward through its result needs those graphs.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Multi(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.convs = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])\n\n"
              "    def forward(self, x):\n        outs = []\n        for conv in self.convs:\n"
              "            outs.append(conv(x))\n        return torch.stack(outs).sum(0)\n\n\n"
              "Multi()(torch.randn(2, 4)).sum().backward()\n"),
        # Parameters collected in a loop are leaves: there is no graph to keep.
        Valid("import torch\nimport torch.nn as nn\nsrc = [torch.randn(4), torch.randn(2)]\nmaster = []\n"
              "for p in src:\n    master.append(nn.Parameter(p.detach().float()))\n"),
        # The same entry every step keeps only the last step's graph (no growth), and a number keeps none.
        Valid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 1)\nlog = {}\nstep = 0\n"
              "for x in [torch.randn(2, 4) for _ in range(3)]:\n    loss = model(x).pow(2).mean()\n"
              "    loss.backward()\n    log['last'] = loss\n    log[step] = loss.item()\n    step += 1\n"),
        Valid("import torch\nfrom torch.autograd import backward\n\n\ndef fit(f, y, steps):\n    history = []\n"
              "    for _ in range(steps):\n        err = torch.norm(f(y))\n        history.append(err.detach())\n"
              "        backward(err)\n    return history\n\n\n"
              "history = fit(torch.nn.Linear(3, 3), torch.randn(3, requires_grad=True), 3)\n"),
        # The loss is detached on the path that calls backward; on the other path the graphs are kept for a
        # backward of their sum after the loop (sentence-transformers' cached losses).
        Valid("import torch\nimport torch.nn as nn\n\n\ndef run(model, batches, with_backward):\n    losses = []\n"
              "    for x in batches:\n        loss = model(x).pow(2).mean()\n        if with_backward:\n"
              "            loss.backward()\n            loss = loss.detach()\n        losses.append(loss)\n"
              "    return sum(losses)\n\n\nm = nn.Linear(3, 1)\n"
              "total = run(m, [torch.randn(2, 3) for _ in range(3)], False)\ntotal.backward()\n"
              "run(m, [torch.randn(2, 3) for _ in range(3)], True)\n"),
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\ntotal = 0.0\nfor _ in range(3):\n"
              "    loss = m(torch.randn(4, 2)).pow(2).mean()\n    loss.backward()\n    total += loss.item()\n"),
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\ntotal = 0\nfor _ in range(3):\n"
              "    total = total + 0\n    total += m(torch.randn(4, 2)).pow(2).mean()\ntotal.backward()\n"),
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nstats = {'loss': 0.0}\nhistory = {'loss': []}\n"
              "for _ in range(3):\n    loss = m(torch.randn(4, 2)).pow(2).mean()\n    loss.backward()\n"
              "    stats['loss'] += loss.item()\n    stats['n'] = stats.get('n', 0) + loss.detach()\n"
              "    history['loss'].append(loss.item())\n"),
        Valid("import torch\nimport torch.nn as nn\n\n\ndef fit(model, batches, opt):\n    losses = []\n"
              "    for x in batches:\n        loss = model(x).pow(2).mean()\n        opt.zero_grad()\n"
              "        loss.backward()\n        opt.step()\n        losses.append(loss.detach())\n    return losses\n\n\n"
              "m = nn.Linear(2, 1)\nfit(m, [torch.randn(4, 2)] * 3, torch.optim.SGD(m.parameters(), lr=0.1))\n"),
        Valid("import torch\nimport torch.nn as nn\n\n\nclass AverageMeter:\n    def __init__(self):\n"
              "        self.sum = 0\n        self.count = 0\n\n    def update(self, val, n=1):\n"
              "        self.sum += val * n\n        self.count += n\n\n\n"
              "model = nn.Linear(2, 1)\nmeter = AverageMeter()\nfor _ in range(3):\n"
              "    loss = model(torch.randn(4, 2)).pow(2).mean()\n    loss.backward()\n    meter.update(loss.item(), 4)\n"),
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Trainer:\n    def __init__(self, model):\n"
              "        self.model = model\n        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
              "        self.running_loss = 0.0\n\n    def train_step(self, x):\n"
              "        loss = self.model(x).pow(2).mean()\n        self.opt.zero_grad()\n        loss.backward()\n"
              "        self.opt.step()\n        self.running_loss += loss.item()\n\n\n"
              "trainer = Trainer(nn.Linear(2, 1))\nfor _ in range(3):\n    trainer.train_step(torch.randn(4, 2))\n"),
        # An evaluation function run only under `no_grad` (its own analysis does not assume grad mode is on).
        Valid("import torch\nimport torch.nn as nn\n\n\ndef evaluate(model, batches):\n    model.eval()\n"
              "    scores = []\n    for x in batches:\n        scores.append(model(x))\n    return torch.cat(scores)\n\n\n"
              "with torch.no_grad():\n    out = evaluate(nn.Linear(3, 2), [torch.randn(4, 3) for _ in range(3)])\n"),
        # The same loop under `@torch.no_grad()`, and an eval-mode loop whose sum is backwarded after it (batch norm
        # kept frozen while fine-tuning): nothing is kept for nothing.
        Valid("import torch\nimport torch.nn as nn\n\n\n@torch.no_grad()\ndef evaluate(model, batches):\n"
              "    model.eval()\n    scores = []\n    for x in batches:\n        scores.append(model(x))\n"
              "    return torch.cat(scores)\n"),
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
              "def finetune(model, batches):\n    model.eval()\n    total = 0\n    for x, y in batches:\n"
              "        total += F.mse_loss(model(x), y)\n    total.backward()\n"),
        # Sub-batches of one optimizer step (hysts/pytorch_image_classification): the list is made anew each step
        # and the optimizer steps after the inner loop, so only one step's graphs are ever kept.
        Valid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 1)\n"
              "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor step in range(3):\n    opt.zero_grad()\n"
              "    losses = []\n    for chunk in torch.randn(8, 4).chunk(2):\n"
              "        loss = model(chunk).pow(2).mean()\n        losses.append(loss)\n        loss.backward()\n"
              "    opt.step()\n    print(sum(losses).item())\n"),
        # Second-order MAML: each task's query loss is kept for the meta-batch backward after the loop
        # (oscarknagg/few-shot's `meta_gradient_step`), although each iteration also backwards.
        Valid("import torch\nimport torch.nn as nn\n\n\ndef meta_step(model, tasks, opt):\n    task_losses = []\n"
              "    for x in tasks:\n        loss = model(x).pow(2).mean()\n        loss.backward(retain_graph=True)\n"
              "        task_losses.append(loss)\n    opt.zero_grad()\n    meta = torch.stack(task_losses).mean()\n"
              "    meta.backward()\n    opt.step()\n\n\nnet = nn.Linear(3, 1)\n"
              "meta_step(net, [torch.randn(2, 3) for _ in range(3)], torch.optim.SGD(net.parameters(), lr=0.1))\n"),
        # A tensor made anew each iteration (`tout = out + 0`) and updated in place by slices: it dies with the
        # iteration, however many rounds of the outer loop ran before (mammoth's BiC bias correction).
        Valid("import torch\nimport torch.nn.functional as F\n\n\ndef calibrate(model, batches, epochs=2):\n"
              "    corr = torch.tensor([0., 1.], requires_grad=True)\n    opt = torch.optim.Adam([corr], lr=0.001)\n"
              "    for _ in range(epochs):\n        for x, y in batches:\n            opt.zero_grad()\n"
              "            with torch.no_grad():\n                out = model(x)\n            tout = out + 0\n"
              "            tout[:, 2:4] *= corr[1].repeat_interleave(2)\n"
              "            tout[:, 2:4] += corr[0].repeat_interleave(2)\n"
              "            F.cross_entropy(tout, y).backward()\n            opt.step()\n    return corr\n\n\n"
              "calibrate(torch.nn.Linear(4, 6), [(torch.randn(3, 4), torch.randint(0, 6, (3,))) for _ in range(3)])\n"),
        # A metric whose method detaches a tensor argument in a conditional expression before keeping it
        # (torchsde's `EMAMetric.step`).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass EMAMetric:\n    def __init__(self, gamma=0.99):\n"
              "        self._val = 0.0\n        self._gamma = gamma\n\n    def step(self, x):\n"
              "        x = x.detach().cpu().numpy() if torch.is_tensor(x) else x\n"
              "        self._val = self._gamma * self._val + (1 - self._gamma) * x\n        return self._val\n\n\n"
              "model = nn.Linear(3, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nmetric = EMAMetric()\n"
              "for _ in range(3):\n    opt.zero_grad()\n    loss = model(torch.randn(2, 3)).pow(2).mean()\n"
              "    loss.backward()\n    opt.step()\n    metric.step(loss)\n"),
        # The same metric detaching what it keeps (horovod's fix).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Metric:\n    def __init__(self):\n"
              "        self.sum = torch.tensor(0.)\n        self.n = torch.tensor(0.)\n\n    def update(self, val):\n"
              "        self.sum += val.detach().cpu()\n        self.n += 1\n\n\nmodel = nn.Linear(4, 1)\n"
              "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nmeter = Metric()\nfor _ in range(3):\n"
              "    opt.zero_grad()\n    loss = model(torch.randn(2, 4)).pow(2).mean()\n    loss.backward()\n"
              "    opt.step()\n    meter.update(loss)\n"),
        # A library call gradsight cannot see (horovod's allreduce; a stand-in where it is not installed) handed the
        # argument detached: what the metric adds has no graph (once-for-all's DistributedMetric).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass DistributedMetric:\n"
              "    def __init__(self, name):\n        self.name = name\n        self.sum = torch.zeros(1)[0]\n"
              "        self.count = torch.zeros(1)[0]\n\n    def update(self, val, delta_n=1):\n        try:\n"
              "            import horovod.torch as hvd\n        except ImportError:\n            import types\n"
              "            hvd = types.SimpleNamespace(allreduce=lambda tensor, name=None: tensor.clone())\n"
              "        self.sum += hvd.allreduce(val.detach().cpu() * delta_n, name=self.name)\n"
              "        self.count += delta_n\n\n\nnet = nn.Linear(4, 1)\n"
              "opt = torch.optim.SGD(net.parameters(), lr=0.1)\nlosses = DistributedMetric(\"train_loss\")\n"
              "for step in range(3):\n    loss = net(torch.randn(8, 4)).pow(2).mean()\n    opt.zero_grad()\n"
              "    loss.backward()\n    opt.step()\n    losses.update(loss, 8)\n"),
        # Metric buffers made once before the loop and filled under `torch.no_grad()` (open-instruct's fix), or with a
        # detached value: the buffers keep numbers, not graphs.
        Valid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(8, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.01)\n"
              "losses = torch.zeros(2)\nrewards = torch.zeros(2)\nidx = 0\nfor step in range(6):\n"
              "    reward = model(torch.randn(4, 8))\n    loss = -nn.functional.logsigmoid(reward).mean()\n"
              "    loss.backward()\n    opt.step()\n    opt.zero_grad()\n    with torch.no_grad():\n"
              "        losses[idx] = loss\n        rewards[idx] = reward.mean()\n    idx = (idx + 1) % 2\n"
              "assert losses.grad_fn is None and rewards.grad_fn is None\n"),
        Valid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(8, 1)\nlosses = torch.zeros(6)\n"
              "for step in range(6):\n    loss = model(torch.randn(4, 8)).pow(2).mean()\n    loss.backward()\n"
              "    losses[step] = loss.detach()\nassert losses.grad_fn is None\n"),
        # A buffer the loop detaches after writing: the chain is cut every iteration.
        Valid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 1)\nlosses = torch.zeros(2)\n"
              "for step in range(4):\n    loss = model(torch.randn(2, 4)).pow(2).mean()\n    loss.backward()\n"
              "    losses[step % 2] = loss\n    losses = losses.detach()\nassert losses.grad_fn is None\n"),
        # A buffer made anew each iteration and backwarded in it, and one filled by a loop without backward and
        # backwarded after it: each step's graph is used, then dropped with the buffer.
        Valid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(8, 3)\nfor step in range(3):\n"
              "    out = torch.zeros(3)\n    for k in range(3):\n        out[k] = model(torch.randn(8))[k]\n"
              "    out.sum().backward()\n"),
        Valid("import torch\nimport torch.nn as nn\ncell = nn.GRUCell(4, 4)\nouts = torch.zeros(5, 2, 4)\n"
              "h = torch.zeros(2, 4)\nfor t in range(5):\n    h = cell(torch.randn(2, 4), h)\n    outs[t] = h\n"
              "outs.pow(2).mean().backward()\n"),
        # The same helper called under `torch.no_grad()`, and one that writes the detached distance.
        Valid("import torch\n\n\nclass EAD:\n    def update_best(self, dist, best):\n        mask = dist < best\n"
              "        best[mask] = dist[mask]\n\n    def perturb(self, x):\n        w = x.clone().requires_grad_()\n"
              "        best = torch.full((len(x),), 1e10)\n        for _ in range(4):\n"
              "            dist = (w - x).pow(2).sum(1) + 0.1\n            dist.sum().backward()\n"
              "            w.data -= 0.01 * w.grad\n            w.grad = None\n            with torch.no_grad():\n"
              "                self.update_best(dist, best)\n        return best\n\n\nresult = EAD().perturb(torch.rand(3, 5))\n"),
        Valid("import torch\n\n\nclass EAD:\n    def update_best(self, dist, best):\n        mask = dist < best\n"
              "        best[mask] = dist.detach()[mask]\n\n    def perturb(self, x):\n        w = x.clone().requires_grad_()\n"
              "        best = torch.full((len(x),), 1e10)\n        for _ in range(4):\n"
              "            dist = (w - x).pow(2).sum(1) + 0.1\n            dist.sum().backward()\n"
              "            w.data -= 0.01 * w.grad\n            w.grad = None\n            self.update_best(dist, best)\n"
              "        return best\n\n\nresult = EAD().perturb(torch.rand(3, 5))\n"),
        # A helper that fills a buffer it made itself: nothing of the caller's gains a graph.
        Valid("import torch\n\n\ndef scores(dist):\n    out = torch.zeros(len(dist))\n    out[:] = dist\n    return out.sum().item()\n\n\n"
              "w = torch.rand(3, 5, requires_grad=True)\nbest = torch.zeros(3)\nfor _ in range(3):\n"
              "    dist = w.pow(2).sum(1)\n    dist.sum().backward()\n    best += scores(dist)\n"),
        # One gradient-accumulation step per call (deep-daze's `train_step`): a local total over `range(k)` micro-batches,
        # each backwarded, and one optimizer step after the loop: k graphs at most, whatever the data.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Trainer:\n    def __init__(self, accumulate=4):\n"
              "        self.model = nn.Linear(4, 1)\n"
              "        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)\n"
              "        self.accumulate = accumulate\n\n    def train_step(self):\n        total_loss = 0\n"
              "        for _ in range(self.accumulate):\n"
              "            loss = self.model(torch.randn(8, 4)).pow(2).mean() / self.accumulate\n"
              "            total_loss += loss\n            loss.backward()\n        self.opt.step()\n"
              "        self.opt.zero_grad()\n        return total_loss\n\n\ntrainer = Trainer()\n"
              "for i in range(3):\n    print(i, trainer.train_step().item())\n"),
        # A loss buffer drained every third step (the multitask BERT's PCGrad loop, fresh28): appended on one arm of a
        # flag whose other arm backwards each loss directly, handed to `pc_backward` (one backward per loss) and made
        # anew in the `if step % 3 == 0:` that steps the optimizer: it never holds more than three graphs.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass PCGrad:\n"
              "    def __init__(self, optimizer):\n        self._optim = optimizer\n\n    def step(self):\n"
              "        return self._optim.step()\n\n    def zero_grad(self):\n"
              "        return self._optim.zero_grad()\n\n    def pc_backward(self, objectives):\n"
              "        for obj in objectives:\n            obj.backward(retain_graph=True)\n\n\n"
              "def train(model, optimizer, batches, pcgrad):\n    if pcgrad:\n"
              "        optimizer = PCGrad(optimizer)\n    step = 1\n    losses = []\n    for x, y in batches:\n"
              "        loss = F.mse_loss(model(x), y)\n        if pcgrad:\n            losses.append(loss)\n"
              "        else:\n            loss.backward()\n        if pcgrad:\n            if step % 3 == 0:\n"
              "                optimizer.pc_backward(losses)\n                optimizer.step()\n"
              "                optimizer.zero_grad()\n                losses = []\n        else:\n"
              "            optimizer.step()\n            optimizer.zero_grad()\n        step += 1\n"
              "    return len(losses)\n\n\nmodel = nn.Linear(4, 1)\n"
              "data = [(torch.randn(2, 4), torch.randn(2, 1)) for _ in range(7)]\n"
              "assert train(model, torch.optim.SGD(model.parameters(), lr=0.1), data, True) == 1\n"
              "train(model, torch.optim.SGD(model.parameters(), lr=0.1), data, False)\n"),
        # Bounded accumulations (fresh rounds' "true but harmless" GS404s): what is kept is bounded by the code, not by
        # the data. A total made anew on every step of a loop that itself backwards, summing k discriminator steps
        # (melgan's `loss_d_sum`); a list made anew per batch holding one loss per linear head (ibot's
        # eval_linear_multi), or per call holding one loss per agent (pytorch-maddpg's `update_policy`); a regulariser
        # summed over the gate masks of the layers made before the loop, in an evaluation pass (HAT's `criterion`).
        Valid('import torch\nimport torch.nn as nn\n\n\ndef train(loader, g, d, opt_g, opt_d, rep):\n'
              '    for x, real in loader:\n        opt_g.zero_grad()\n        fake = g(x)\n'
              '        d(fake).pow(2).mean().backward()\n        opt_g.step()\n        fake = fake.detach()\n'
              '        loss_d_sum = 0.0\n        for _ in range(rep):\n            opt_d.zero_grad()\n'
              '            loss_d = (d(real) - 1).pow(2).mean() + d(fake).pow(2).mean()\n'
              '            loss_d.backward()\n            opt_d.step()\n            loss_d_sum += loss_d\n'
              '        print((loss_d_sum / rep).item())\n\n\ng, d = nn.Linear(4, 4), nn.Linear(4, 1)\n'
              'train([(torch.randn(8, 4), torch.randn(8, 4)) for _ in range(3)], g, d,\n'
              '      torch.optim.SGD(g.parameters(), lr=0.1), torch.optim.SGD(d.parameters(), lr=0.1), 2)\n'),
        Valid('import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n'
              'def train(loader, heads, optimizers):\n    for x, y in loader:\n        losses = []\n'
              '        for head, opt in zip(heads, optimizers):\n            loss = F.cross_entropy(head(x), y)\n'
              '            opt.zero_grad()\n            loss.backward()\n            opt.step()\n'
              '            losses.append(loss)\n        print([loss.item() for loss in losses])\n\n\n'
              'heads = [nn.Linear(4, 3) for _ in range(2)]\n'
              'train([(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(3)], heads,\n'
              '      [torch.optim.SGD(h.parameters(), lr=0.1) for h in heads])\n'),
        Valid('import torch\nimport torch.nn as nn\n\n\nclass MADDPG:\n    def __init__(self, n_agents):\n'
              '        self.n_agents = n_agents\n'
              '        self.critics = [nn.Linear(4, 1) for _ in range(n_agents)]\n'
              '        self.optims = [torch.optim.SGD(c.parameters(), lr=0.1) for c in self.critics]\n\n'
              '    def update_policy(self, batch):\n        c_loss = []\n'
              '        for agent in range(self.n_agents):\n            self.optims[agent].zero_grad()\n'
              '            loss_q = self.critics[agent](batch).pow(2).mean()\n            loss_q.backward()\n'
              '            self.optims[agent].step()\n            c_loss.append(loss_q)\n        return c_loss\n'
              '\n\nmaddpg = MADDPG(3)\nfor step in range(3):\n'
              '    c_loss = maddpg.update_policy(torch.randn(8, 4))\n'),
        Valid('import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc1 = nn.Linear(4, 4)\n        self.fc2 = nn.Linear(4, 3)\n        self.e1 = nn.Embedding(2, 4)\n        self.e2 = nn.Embedding(2, 3)\n\n    def forward(self, t, x):\n        g1 = torch.sigmoid(self.e1(t))\n        g2 = torch.sigmoid(self.e2(t))\n        return self.fc2(self.fc1(x) * g1) * g2, [g1, g2]\n\n\nclass Appr:\n    def __init__(self, model):\n        self.model = model\n        self.ce = nn.CrossEntropyLoss()\n\n    def criterion(self, outputs, targets, masks):\n        reg = 0\n        count = 0\n        for m in masks:\n            reg += m.sum()\n            count += m.numel()\n        reg /= count\n        return self.ce(outputs, targets) + 0.75 * reg, reg\n\n    def eval(self, t, batches):\n        total_loss = 0\n        self.model.eval()\n        for x, y in batches:\n            output, masks = self.model(t, x)\n            loss, _ = self.criterion(output, y, masks)\n            total_loss += loss.item()\n        return total_loss / len(batches)\n\n\na = Appr(Net())\nprint(a.eval(torch.tensor([0]), [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(3)]))\n'),
        # The same attack writing detached values: the buffer it returns has no graph.
        Valid('import torch\nimport torch.nn as nn\n\n\nclass CW:\n    def __init__(self, model):\n        self.model = model\n\n    def perturb(self, images, labels):\n        w = images.clone().requires_grad_()\n        best = images.clone().detach()\n        opt = torch.optim.Adam([w], lr=0.01)\n        for _ in range(3):\n            adv = 0.5 * (torch.tanh(w) + 1)\n            cost = (adv - images).pow(2).sum() + nn.functional.cross_entropy(self.model(adv), labels)\n            opt.zero_grad()\n            cost.backward()\n            opt.step()\n            mask = adv.detach().sum(1) > 0\n            best[mask] = adv.detach()[mask]\n        return best\n\n\nmodel = nn.Linear(4, 3)\nx, y = torch.rand(2, 4), torch.tensor([0, 1])\nadv = CW(model).perturb(x, y)\nnn.functional.cross_entropy(model(adv), y).backward()\n'),
        # An old meter whose `add` takes `.data` of a `Variable`: `isinstance(t, Variable)` holds for every tensor,
        # so the sum keeps no graph (chenjun2hao/Attention_ocr.pytorch's `averager`).
        Valid('import torch\nimport torch.nn as nn\nfrom torch.autograd import Variable\n\n\nclass averager(object):\n    def __init__(self):\n        self.n_count, self.sum = 0, 0\n\n    def add(self, v):\n        if isinstance(v, Variable):\n            count = v.data.numel()\n            v = v.data.sum()\n        elif isinstance(v, torch.Tensor):\n            count = v.numel()\n            v = v.sum()\n        self.n_count += count\n        self.sum += v\n\n    def val(self):\n        return self.sum / max(self.n_count, 1)\n\n\nmodel = nn.Linear(4, 1)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nloss_avg = averager()\nfor step in range(3):\n    loss = model(torch.randn(2, 4)).pow(2).mean()\n    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n    loss_avg.add(loss)\nassert loss_avg.sum.grad_fn is None\n'),
        # An actor-critic rollout kept in lists, then walked backwards into the loss that is backwarded (A3C's
        # `for value, log_policy, ... in list(zip(values, ...))[::-1]`): the graphs are kept for that backward.
        Valid('import torch\nimport torch.nn as nn\n\nmodel = nn.Linear(4, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n\n\ndef local_train(steps):\n    values, rewards = [], []\n    for t in range(steps):\n        values.append(model(torch.randn(1, 4)))\n        rewards.append(1.0)\n    R = torch.zeros(1, 1)\n    critic_loss = 0\n    for value, reward in list(zip(values, rewards))[::-1]:\n        R = R * 0.9 + reward\n        critic_loss = critic_loss + (R - value) ** 2 / 2\n    opt.zero_grad()\n    critic_loss.backward()\n    opt.step()\n\n\nlocal_train(5)\n'),
        # Per-step outputs of an unrolled cell returned to the caller, whose backward needs them.
        Valid('import torch\nimport torch.nn as nn\n\n\ndef unroll(cell, xs, h):\n    outs = []\n    for x in xs:\n        h = cell(x, h)\n        outs.append(h)\n    return torch.stack(outs, dim=1)\n\n\ncell = nn.GRUCell(4, 8)\nout = unroll(cell, torch.randn(5, 2, 4), torch.zeros(2, 8))\nout.pow(2).mean().backward()\n'),
        # The loss's name rebound to its number after a backward under an `if` (pytorch-dc-tts's train-ssrn).
        Valid(_dctts.format("        loss = loss.item()\n")),
        # An unrolled inner loop in `forward` (e3bm's MAML steps with `torch.autograd.grad`): its total is the output.
        # An unrolled computation whose kept graphs are the call's result: MAML's meta-batch losses after an inner
        # adaptation by `backward(create_graph=...)` and a differentiable step, stacked into the returned loss;
        # MetaNet's fast weights over N ways times K shots, with `backward(retain_graph=True)` per example.
        Valid('import torch\nfrom torch import nn\n\n\nclass DifferentiableSGD:\n    def __init__(self, model, lr=0.1):\n        self.model, self.lr = model, lr\n\n    def step(self):\n        for name, param in list(self.model.named_parameters()):\n            if param.grad is None:\n                continue\n            new_param = param.add(param.grad, alpha=-self.lr)\n            del self.model._parameters[name]\n            setattr(self.model, name, new_param)\n            self.model._parameters[name] = new_param\n\n    def zero_grad(self):\n        for param in self.model.parameters():\n            param.grad = None\n\n\npolicy = nn.Linear(4, 2)\ninner_optimizer = DifferentiableSGD(policy)\nmeta_batch_size, num_adapt_epochs = 3, 2\n\n\ndef restore(module, params):\n    for name, p in params.items():\n        del module._parameters[name]\n        setattr(module, name, p)\n        module._parameters[name] = p\n\n\ndef meta_surrogate_loss(set_grad):\n    losses = []\n    backup_params = dict(policy.named_parameters())\n    for cur_task in range(meta_batch_size):\n        for cur_adapt in range(num_adapt_epochs):\n            require_grad = cur_adapt < num_adapt_epochs - 1 or set_grad\n            inner_loss = (policy(torch.randn(8, 4)) ** 2).mean()\n            inner_optimizer.zero_grad()\n            inner_loss.backward(create_graph=require_grad)\n            with torch.set_grad_enabled(require_grad):\n                inner_optimizer.step()\n        loss = (policy(torch.randn(8, 4)) - 1).pow(2).mean()\n        losses.append(loss)\n        restore(policy, backup_params)\n    return torch.stack(losses).mean()\n\n\ngrads = torch.autograd.grad(meta_surrogate_loss(True), list(policy.parameters()))\nassert all(g.abs().sum() > 0 for g in grads)\n'),
        Valid('import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass MetaNet(nn.Module):\n    def __init__(self, d=8, n=3):\n        super().__init__()\n        self.enc, self.fc = nn.Linear(d, d), nn.Linear(d, n, bias=False)\n        self.learner = nn.Linear(1, 1)\n\n    def forward(self, support, query, N, K):\n        logits = self.fc(self.enc(support))\n        fast = []\n        for i in range(N):\n            for j in range(K):\n                self.zero_grad()\n                loss = F.cross_entropy(logits[i * K + j:i * K + j + 1], torch.tensor([i]))\n                loss.backward(retain_graph=True)\n                grad = self.fc.weight.grad\n                fast.append(self.learner(grad.reshape(-1, 1)).reshape(-1))\n        fast = torch.stack(fast, 0).mean(0).view_as(self.fc.weight)\n        q = self.enc(query)\n        return self.fc(q) + F.linear(q, fast)\n\n\nnet = MetaNet()\nout = net(torch.randn(6, 8), torch.randn(4, 8), 3, 2)\nnet.zero_grad()\nF.cross_entropy(out, torch.randint(0, 3, (4,))).backward()\nassert net.learner.weight.grad.abs().sum() > 0\n'),
        Valid(_e3bm.format("", "        combination_value_list = []\n", "            combination_value_list.append(self.comb[k] * 1.0)\n", "out = m(torch.randn(3, 4), torch.arange(3), torch.randn(5, 4))\nF.cross_entropy(out, torch.arange(5) % 3).backward()\nassert m.comb.grad is not None and m.lr.grad is not None and m.enc.weight.grad is not None\n")),
    )
    invalid = (
        Invalid(_ITEM_OVER_CONFIG.format(rebind="loss"), line=16, runtime="silent: history[0].grad_fn is not None"),
        # A loss the analysis cannot follow (a criterion it does not resolve), scaled by a constant: still the tensor
        # that is backwarded, not a number (the lightly examples' `0.5 * (criterion(p0, z1) + criterion(p1, z0))`).
        Invalid("import torch\nimport torch.nn as nn\n\nmodel = nn.Linear(3, 3)\ncriterion = getattr(nn, \"MSELoss\")()\n"
                "optimizer = torch.optim.SGD(model.parameters(), lr=0.06)\nfor epoch in range(2):\n    total_loss = 0\n"
                "    for x0, x1 in [(torch.randn(4, 3), torch.randn(4, 3))]:\n"
                "        loss = 0.5 * (criterion(model(x0), x1) + criterion(model(x1), x0))\n        total_loss += loss\n"
                "        loss.backward()\n        optimizer.step()\n        optimizer.zero_grad()\n", line=11,
                runtime="silent: total_loss.grad_fn is not None"),
        # The look-alike: the total is made once, before the step loop, and keeps every step's graphs.
        Invalid(_EDM.format(before="batch_loss = torch.tensor(0.0)\n", inside=""), line=16,
                runtime="silent: (lambda g: g(g, batch_loss.grad_fn))(lambda g, f: 0 if f is None else 1 + "
                "g(g, f.next_functions[0][0])) > 4"),  # more additions than one step's four
        # The same loop without the rebinding: every step's graph is kept in the total.
        Invalid(_dctts.format(""), line=14, runtime="silent: total.grad_fn is not None"),
        # The same loop keeping each step in a list attribute made in `__init__`: every call adds its graphs to it.
        # Their look-alikes: each task's loss backwarded in the loop before it is kept (its graph is what that
        # backward ran through), and outputs kept over nested step loops whose retained backward runs through them.
        Invalid('import torch\nfrom torch import nn\n\n\nclass DifferentiableSGD:\n    def __init__(self, model, lr=0.1):\n        self.model, self.lr = model, lr\n\n    def step(self):\n        for name, param in list(self.model.named_parameters()):\n            if param.grad is None:\n                continue\n            new_param = param.add(param.grad, alpha=-self.lr)\n            del self.model._parameters[name]\n            setattr(self.model, name, new_param)\n            self.model._parameters[name] = new_param\n\n    def zero_grad(self):\n        for param in self.model.parameters():\n            param.grad = None\n\n\npolicy = nn.Linear(4, 2)\ninner_optimizer = DifferentiableSGD(policy)\nmeta_batch_size, num_adapt_epochs = 3, 2\n\n\ndef restore(module, params):\n    for name, p in params.items():\n        del module._parameters[name]\n        setattr(module, name, p)\n        module._parameters[name] = p\n\n\ndef meta_surrogate_loss(set_grad):\n    losses = []\n    backup_params = dict(policy.named_parameters())\n    for cur_task in range(meta_batch_size):\n        for cur_adapt in range(num_adapt_epochs):\n            require_grad = cur_adapt < num_adapt_epochs - 1 or set_grad\n            inner_loss = (policy(torch.randn(8, 4)) ** 2).mean()\n            inner_optimizer.zero_grad()\n            inner_loss.backward(create_graph=require_grad)\n            with torch.set_grad_enabled(require_grad):\n                inner_optimizer.step()\n        loss = (policy(torch.randn(8, 4)) - 1).pow(2).mean()\n        loss.backward()\n        losses.append(loss)\n        restore(policy, backup_params)\n    return losses\n\n\nlosses = meta_surrogate_loss(True)\n',
                line=48, runtime="silent: all(l.grad_fn is not None for l in losses)"),
        Invalid('import torch\nimport torch.nn as nn\n\n\ndef train(model, opt, epochs, batches):\n    outs = []\n    for epoch in range(epochs):\n        for b in range(batches):\n            out = model(torch.randn(8, 4)).mean()\n            loss = out.pow(2)\n            opt.zero_grad()\n            loss.backward(retain_graph=True)\n            opt.step()\n            outs.append(out)\n    return outs\n\n\nmodel = nn.Linear(4, 1)\nouts = train(model, torch.optim.SGD(model.parameters(), lr=0.1), 2, 3)\n',
                line=14, runtime="silent: all(o.grad_fn is not None for o in outs)"),
        Invalid(_e3bm.format("        self.values = []\n", "", "            self.values.append(self.comb[k] * F.linear(emb_q, w))\n", "x = (torch.randn(3, 4), torch.arange(3), torch.randn(5, 4))\nm(*x)\nm(*x)\n"), line=24, runtime="silent: len(m.values) == 6 and m.values[0].grad_fn is not None"),
        # A dict of meters updated with every entry of the step's loss dict, the backwarded loss among them (SLIP's
        # `for k in loss_dict: metrics[k].update(loss_dict[k], n)`): the meter's running sum chains every step's graph.
        Invalid('import torch\nimport torch.nn as nn\nfrom collections import OrderedDict\n\n\nclass AverageMeter:\n    def __init__(self, name):\n        self.name = name\n        self.sum = 0\n        self.count = 0\n\n    def update(self, val, n=1):\n        self.sum += val * n\n        self.count += n\n\n\ndef criterion(out):\n    loss = (out ** 2).mean()\n    return {"loss": loss, "l1": out.abs().mean()}\n\n\ndef train(model, loader, optimizer):\n    metrics = OrderedDict([(name, AverageMeter(name)) for name in ("loss", "l1")])\n    for x in loader:\n        loss_dict = criterion(model(x))\n        loss = loss_dict["loss"]\n        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n        for k in loss_dict:\n            metrics[k].update(loss_dict[k], x.size(0))\n    return metrics\n\n\nmodel = nn.Linear(3, 1)\nmetrics = train(model, [torch.randn(4, 3) for _ in range(3)], torch.optim.SGD(model.parameters(), lr=0.1))\n',
                line=31, runtime="silent: metrics['loss'].sum.grad_fn is not None"),
        # An attack's best-so-far buffer (advertorch's EAD): a helper method writes the step's distance into the
        # buffer it is handed, in grad mode; the call, in the loop, hands it over every step.
        Invalid("import torch\n\n\nclass EAD:\n    def update_best(self, dist, best):\n        mask = dist < best\n"
                "        best[mask] = dist[mask]\n\n    def perturb(self, x):\n        w = x.clone().requires_grad_()\n"
                "        best = torch.full((len(x),), 1e10)\n        for _ in range(4):\n"
                "            dist = (w - x).pow(2).sum(1) + 0.1\n            dist.sum().backward()\n"
                "            w.data -= 0.01 * w.grad\n            w.grad = None\n            self.update_best(dist, best)\n"
                "        return best\n\n\nresult = EAD().perturb(torch.rand(3, 5))\n",
                line=17, runtime="silent: result.grad_fn is not None"),
        # A class whose base gradsight cannot see (here `abc.ABC`; torchattacks' `Attack` in another package): its
        # own helper method (`self.tanh_space(w)`) is still the class's, so the buffer write is seen.
        Invalid("import abc\nimport torch\n\n\nclass CW(abc.ABC):\n    def tanh_space(self, x):\n"
                "        return 0.5 * (torch.tanh(x) + 1)\n\n    def attack(self, images):\n"
                "        w = images.clone().requires_grad_()\n        best = images.clone().detach()\n"
                "        opt = torch.optim.Adam([w], lr=0.01)\n        for _ in range(3):\n"
                "            adv = self.tanh_space(w)\n            cost = adv.pow(2).sum()\n            opt.zero_grad()\n"
                "            cost.backward()\n            opt.step()\n            mask = adv.detach() > 0.5\n"
                "            best[mask] = adv[mask]\n        return best\n\n\nresult = CW().attack(torch.rand(2, 4))\n",
                line=20, runtime="silent: result.grad_fn is not None"),
        # torchattacks' CW: the best-so-far buffer is returned, and what was written into it was computed before the
        # step's backward, which freed its graph: the caller's backward through the result raises (line 21).
        Invalid('import torch\nimport torch.nn as nn\n\n\nclass CW:\n    def __init__(self, model):\n        self.model = model\n\n    def perturb(self, images, labels):\n        w = images.clone().requires_grad_()\n        best = images.clone().detach()\n        opt = torch.optim.Adam([w], lr=0.01)\n        for _ in range(3):\n            adv = 0.5 * (torch.tanh(w) + 1)\n            cost = (adv - images).pow(2).sum() + nn.functional.cross_entropy(self.model(adv), labels)\n            opt.zero_grad()\n            cost.backward()\n            opt.step()\n            mask = adv.detach().sum(1) > 0\n            best[mask] = adv[mask]\n        return best\n\n\nmodel = nn.Linear(4, 3)\nx, y = torch.rand(2, 4), torch.tensor([0, 1])\nadv = CW(model).perturb(x, y)\nnn.functional.cross_entropy(model(adv), y).backward()\n',
                line=21, runtime="raises: Trying to backward through the graph a second time"),
        # Metric buffers made once before the training loop (open-instruct's reward model): each index-assignment of
        # the loss is recorded on the buffer, which chains every step's graph, whichever slot it overwrites.
        Invalid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(8, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.01)\n"
                "losses = torch.zeros(2)\nidx = 0\nfor step in range(6):\n"
                "    loss = -nn.functional.logsigmoid(model(torch.randn(4, 8))).mean()\n    loss.backward()\n"
                "    opt.step()\n    opt.zero_grad()\n    losses[idx] = loss\n    idx = (idx + 1) % 2\n",
                line=12, runtime="silent: losses.grad_fn is not None and "
                "len(losses.grad_fn.next_functions[0][0].next_functions) > 0"),
        # Summed into a slot of a stats tensor: the same in-place write, recorded on the buffer.
        Invalid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 1)\nstats = torch.zeros(2)\n"
                "for step in range(3):\n    loss = model(torch.randn(2, 4)).pow(2).mean()\n    loss.backward()\n"
                "    stats[0] += loss\n", line=8, runtime="silent: stats.grad_fn is not None"),
        # The loss is the model's, which gradsight cannot see; the backward says it has a graph.
        Invalid("import torch\nimport torch.nn as nn\n\n\ndef train(model, opt, batches):\n    kl_stats = torch.zeros(len(batches))\n"
                "    for i, x in enumerate(batches):\n        opt.zero_grad()\n        loss = model(x).pow(2).mean()\n"
                "        loss.backward()\n        opt.step()\n        kl_stats[i] = loss\n    return kl_stats\n\n\n"
                "m = nn.Linear(3, 1)\nstats = train(m, torch.optim.SGD(m.parameters(), lr=0.1), [torch.randn(4, 3)] * 3)\n",
                line=12, runtime="silent: stats.grad_fn is not None"),
        # The same call handed the loss itself: what comes back keeps its graph.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass DistributedMetric:\n"
                "    def __init__(self, name):\n        self.name = name\n"
                "        self.sum = torch.zeros(1)[0]\n        self.count = torch.zeros(1)[0]\n\n"
                "    def update(self, val, delta_n=1):\n        try:\n            import horovod.torch as hvd\n"
                "        except ImportError:\n            import types\n"
                "            hvd = types.SimpleNamespace(allreduce=lambda tensor, name=None: tensor.clone())\n"
                "        self.sum += hvd.allreduce(torch.as_tensor(val) * delta_n, name=self.name)\n"
                "        self.count += delta_n\n\n\nnet = nn.Linear(4, 1)\n"
                "opt = torch.optim.SGD(net.parameters(), lr=0.1)\nlosses = DistributedMetric(\"train_loss\")\n"
                "for step in range(3):\n    loss = net(torch.randn(8, 4)).pow(2).mean()\n    opt.zero_grad()\n"
                "    loss.backward()\n    opt.step()\n    losses.update(loss, 8)\n",
                line=29, runtime="silent: losses.sum.grad_fn is not None"),
        # The metric's method is written for tensors (`val.cpu()`, horovod's example `Metric`): every caller hands it
        # one, so the finding stands where it keeps the argument (the fix detaches there), the call in `related`.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Metric:\n    def __init__(self):\n"
                "        self.sum = torch.tensor(0.)\n        self.n = torch.tensor(0.)\n\n    def update(self, val):\n"
                "        self.sum += val.cpu()\n        self.n += 1\n\n\nmodel = nn.Linear(4, 1)\n"
                "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nmeter = Metric()\nfor _ in range(3):\n"
                "    opt.zero_grad()\n    loss = model(torch.randn(2, 4)).pow(2).mean()\n    loss.backward()\n"
                "    opt.step()\n    meter.update(loss)\n",
                line=11, runtime="silent: meter.sum.grad_fn is not None"),
        # A generation loop feeding its state back (flair's `generate_text`): each step's graph hangs off the next,
        # the method never backwards, and only numbers leave it, so the chain grows with every step for nothing.
        Invalid('import torch\nimport torch.nn as nn\n\n\nclass CharLM(nn.Module):\n'
                '    def __init__(self):\n        super().__init__()\n'
                '        self.emb = nn.Embedding(10, 8)\n        self.rnn = nn.GRU(8, 8)\n'
                '        self.out = nn.Linear(8, 10)\n\n    def forward(self, inp, hidden):\n'
                '        o, hidden = self.rnn(self.emb(inp), hidden)\n        return self.out(o), hidden\n'
                '\n    def generate(self, n):\n        hidden = torch.zeros(1, 1, 8)\n'
                '        inp = torch.zeros(1, 1, dtype=torch.long)\n        chars = []\n'
                '        for _ in range(n):\n            logits, hidden = self.forward(inp, hidden)\n'
                '            inp = torch.multinomial(logits.detach().view(-1).softmax(0), 1).view(1, 1)\n'
                '            chars.append(int(inp))\n        return chars, hidden.grad_fn is not None\n\n\n'
                'chars, kept = CharLM().generate(20)\n',
                line=21, runtime="silent: kept"),
        # A running total in a function that never backwards and returns a number: every batch's graph is kept
        # until the loop ends, for nothing.
        Invalid('import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n'
                'def mean_loss(model, batches):\n    total = 0\n    for x, y in batches:\n'
                '        total += F.mse_loss(model(x), y)\n'
                '    return total.item() / len(batches), total.grad_fn is not None\n\n\n'
                'loss, kept = mean_loss(nn.Linear(3, 1), [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)])\n',
                line=9, runtime="silent: kept"),
        # An evaluation method (by its name) summing the loss another method backwards (flair's trainer): the
        # trained model's loss has a graph in grad mode, and every batch's is kept in the total it returns.
        Invalid('import torch\nimport torch.nn as nn\n\n\nclass Classifier(nn.Module):\n'
                '    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(3, 2)\n\n'
                '    def forward(self, x):\n        return self.fc(x)\n\n'
                '    def calculate_loss(self, scores, y):\n'
                '        return nn.functional.cross_entropy(scores, y)\n\n\nclass Trainer:\n'
                '    def __init__(self, model):\n        self.model = model\n\n'
                '    def train(self, batches):\n'
                '        optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)\n'
                '        for x, y in batches:\n'
                '            loss = self.model.calculate_loss(self.model.forward(x), y)\n'
                '            optimizer.zero_grad()\n            loss.backward()\n'
                '            optimizer.step()\n\n    def evaluate(self, batches):\n        eval_loss = 0\n'
                '        for x, y in batches:\n'
                '            loss = self.model.calculate_loss(self.model.forward(x), y)\n'
                '            eval_loss += loss\n        return eval_loss / len(batches)\n\n\n'
                'data = [(torch.randn(4, 3), torch.randint(0, 2, (4,))) for _ in range(3)]\n'
                'trainer = Trainer(Classifier())\ntrainer.train(data)\nval = trainer.evaluate(data)\n',
                line=33, runtime="silent: val.grad_fn is not None"),
        # A meter fed the loss in an evaluation loop without `no_grad`: the object keeps every batch's graph.
        Invalid('import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Meter:\n    def __init__(self):\n        self.total = 0\n        self.n = 0\n\n    def update(self, val, n=1):\n        self.total += val * n\n        self.n += n\n\n\ndef evaluate(model, batches):\n    model.eval()\n    meter = Meter()\n    for x, y in batches:\n        loss = F.mse_loss(model(x), y)\n        meter.update(loss, len(x))\n    return meter\n\n\nmeter = evaluate(nn.Linear(3, 1), [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)])\n',
                line=21, runtime="silent: meter.total.grad_fn is not None"),
        # A history whose last item is backwarded (tntorch's loss history): the list keeps every step's graph.
        Invalid('import torch\n\n\ndef fit(loss_function, params, steps):\n'
                '    optimizer = torch.optim.SGD(params, lr=0.1)\n    losses = []\n'
                '    for _ in range(steps):\n        optimizer.zero_grad()\n'
                '        terms = loss_function(*params)\n        losses.append(sum(terms))\n'
                '        losses[-1].backward(retain_graph=True)\n        optimizer.step()\n'
                '    return losses\n\n\nw = torch.randn(3, requires_grad=True)\n'
                'losses = fit(lambda p: [p.pow(2).sum(), p.abs().sum()], [w], 3)\n',
                line=10, runtime="silent: all(l.grad_fn is not None for l in losses)"),
        # An evaluation function (the model put in eval mode) that keeps outputs in grad mode: nothing backwards
        # them, so every batch's graph is kept for nothing (OpenNMT's and ParlAI's fixes). The model is the
        # function's parameter: that `.eval()` was called on it is the evidence that it is a module.
        Invalid("import torch\nimport torch.nn as nn\n\n\ndef evaluate(model, batches):\n    model.eval()\n"
                "    scores = []\n    for x in batches:\n        scores.append(model(x))\n    return torch.cat(scores)\n\n\n"
                "out = evaluate(nn.Linear(3, 2), [torch.randn(4, 3) for _ in range(3)])\n",
                line=9, runtime="silent: out.grad_fn is not None"),
        Invalid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
                "def evaluate(model, batches):\n    model.eval()\n    total = 0\n    for x, y in batches:\n"
                "        total += F.mse_loss(model(x), y)\n    return total / len(batches)\n\n\n"
                "val = evaluate(nn.Linear(3, 1), [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)])\n",
                line=10, runtime="silent: val.grad_fn is not None"),
        # An evaluation loop without `torch.no_grad()` keeping outputs: every batch's graph stays alive (information:
        # a later backward could still want them).
        Invalid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 2)\npreds = []\nfor step in range(3):\n"
                "    preds.append(model(torch.randn(8, 4)))\n", line=6, severity=Severity.INFORMATION,
                runtime="silent: all(p.grad_fn is not None for p in preds)"),
        # A new dict entry every step (caikit's real bug): the dict keeps every step's graph.
        Invalid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 1)\nlog = {}\nstep = 0\n"
                "for x in [torch.randn(2, 4) for _ in range(3)]:\n    loss = model(x).pow(2).mean()\n"
                "    loss.backward()\n    log[step] = loss\n    step += 1\n",
                line=9, runtime="silent: len(log) == 3 and all(v.grad_fn is not None for v in log.values())"),
        # The backward spelled as a function (kymatio's real bug): the loss still surely has a graph.
        Invalid("import torch\nfrom torch.autograd import backward\n\n\ndef fit(f, y, steps):\n    history = []\n"
                "    for _ in range(steps):\n        err = torch.norm(f(y))\n        history.append(err)\n"
                "        backward(err)\n    return history\n\n\n"
                "history = fit(torch.nn.Linear(3, 3), torch.randn(3, requires_grad=True), 3)\n",
                line=9, runtime="silent: all(h.grad_fn is not None for h in history)"),
        # A loss from a model gradsight cannot see, with a number added in place (labelmodels' real bug): still
        # the loss the loop backwards, so still a tensor with a graph.
        Invalid("import torch\nimport torch.nn as nn\n\n\ndef fit(model, batches, opt):\n    running_loss = 0.0\n"
                "    for x in batches:\n        opt.zero_grad()\n        loss = -1 * torch.mean(model(x))\n"
                "        loss += 0.0\n        loss.backward()\n        opt.step()\n        running_loss += loss\n"
                "    return running_loss\n\n\nmodel = nn.Linear(3, 1)\n"
                "total = fit(model, [torch.randn(4, 3) for _ in range(3)], torch.optim.SGD(model.parameters(), lr=0.1))\n",
                line=13, runtime="silent: total.grad_fn is not None"),
        Invalid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(10, 1)\ntotal_loss = 0\nfor step in range(5):\n"
                "    loss = model(torch.randn(4, 10)).pow(2).mean()\n    loss.backward()\n    total_loss += loss\n",
                line=8, runtime="silent: total_loss.requires_grad and total_loss.grad_fn is not None",
                fixed="import torch\nimport torch.nn as nn\nmodel = nn.Linear(10, 1)\ntotal_loss = 0\nfor step in range(5):\n"
                      "    loss = model(torch.randn(4, 10)).pow(2).mean()\n    loss.backward()\n    total_loss += loss.item()\n"),
        Invalid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(10, 1)\nlosses = []\nfor step in range(5):\n"
                "    loss = model(torch.randn(4, 10)).pow(2).mean()\n    loss.backward()\n    losses.append(loss)\n",
                line=8, runtime="silent: all(l.grad_fn is not None for l in losses)"),
        Invalid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(10, 1)\nstats = {'loss': 0.0}\n"
                "for step in range(5):\n    loss = model(torch.randn(4, 10)).pow(2).mean()\n    loss.backward()\n"
                "    stats['loss'] += loss\n", line=8, runtime="silent: stats['loss'].grad_fn is not None"),
        Invalid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(10, 1)\nstats = {}\n"
                "for step in range(5):\n    loss = model(torch.randn(4, 10)).pow(2).mean()\n    loss.backward()\n"
                "    for k in ['total']:\n        pass\n    stats[k] = stats.get(k, 0) + loss\n", line=10,
                runtime="silent: stats['total'].grad_fn is not None"),
        # The list is made anew each epoch, but the optimizer steps inside the batch loop: an epoch of graphs.
        Invalid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 1)\n"
                "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor epoch in range(2):\n    losses = []\n"
                "    for x in torch.randn(3, 8, 4):\n        opt.zero_grad()\n        loss = model(x).pow(2).mean()\n"
                "        loss.backward()\n        opt.step()\n        losses.append(loss)\n", line=12,
                runtime="silent: all(l.grad_fn is not None for l in losses)"),
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Trainer:\n    def __init__(self, model):\n"
                "        self.model = model\n        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "        self.running_loss = 0.0\n\n    def train_step(self, x):\n"
                "        loss = self.model(x).pow(2).mean()\n        self.opt.zero_grad()\n        loss.backward()\n"
                "        self.opt.step()\n        self.running_loss += loss\n\n\n"
                "trainer = Trainer(nn.Linear(2, 1))\nfor _ in range(3):\n    trainer.train_step(torch.randn(4, 2))\n",
                line=16, runtime="silent: trainer.running_loss.grad_fn is not None"),
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass AverageMeter:\n    def __init__(self):\n"
                "        self.sum = 0\n        self.count = 0\n\n    def update(self, val, n=1):\n"
                "        self.sum += val * n\n        self.count += n\n\n\n"
                "model = nn.Linear(2, 1)\nmeter = AverageMeter()\nfor _ in range(3):\n"
                "    loss = model(torch.randn(4, 2)).pow(2).mean()\n    loss.backward()\n    meter.update(loss, 4)\n",
                line=20, runtime="silent: meter.sum.grad_fn is not None"),
        Invalid("import torch\nimport torch.nn as nn\n\n\ndef fit(model, batches, opt, history):\n"
                "    for x in batches:\n        loss = model(x).pow(2).mean()\n        opt.zero_grad()\n"
                "        loss.backward()\n        opt.step()\n        history['loss'].append(loss)\n\n\n"
                "m = nn.Linear(2, 1)\nhist = {'loss': []}\n"
                "fit(m, [torch.randn(4, 2)] * 3, torch.optim.SGD(m.parameters(), lr=0.1), hist)\n", line=11,
                runtime="silent: all(l.grad_fn is not None for l in hist['loss'])"),
        # The same metric keeping the tensor itself when it is one: the conditional takes that branch.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass EMAMetric:\n    def __init__(self, gamma=0.99):\n"
                "        self._val = 0.0\n        self._gamma = gamma\n\n    def step(self, x):\n"
                "        x = x if torch.is_tensor(x) else torch.tensor(x)\n"
                "        self._val = self._gamma * self._val + (1 - self._gamma) * x\n        return self._val\n\n\n"
                "model = nn.Linear(3, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nmetric = EMAMetric()\n"
                "for _ in range(3):\n    opt.zero_grad()\n    loss = model(torch.randn(2, 3)).pow(2).mean()\n"
                "    loss.backward()\n    opt.step()\n    metric.step(loss)\n",
                line=24, runtime="silent: metric._val.grad_fn is not None"),
        # A total made before both loops, in a nested loop: kept across every round.
        Invalid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 1)\ntotal = torch.zeros(())\n"
                "for epoch in range(2):\n    for x in torch.randn(3, 8, 4):\n        out = model(x)\n"
                "        loss = out.pow(2).mean()\n        loss.backward()\n        total += loss\n", line=10,
                runtime="silent: total.grad_fn is not None"),
        # The accumulation step's look-alike over a whole loader (one step per epoch): one graph per batch of the data.
        Invalid("import torch\nimport torch.nn as nn\n\n\ndef train_epoch(model, opt, loader):\n"
                "    total_loss = 0\n    for x in loader:\n        loss = model(x).pow(2).mean()\n"
                "        total_loss += loss\n        loss.backward()\n    opt.step()\n    return total_loss\n\n\n"
                "model = nn.Linear(4, 1)\n"
                "total = train_epoch(model, torch.optim.SGD(model.parameters(), lr=0.1), torch.randn(3, 8, 4))\n", line=9, runtime="silent: total.grad_fn is not None"),
        # Their look-alikes that grow with the data: a total made anew per epoch (the scheduler's `step()` is no
        # backward), a per-call list over `range(n_updates)` whose loop variable selects no model part, and one
        # graph per head kept across every batch of the loader.
        Invalid('import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 1)\n'
                'opt = torch.optim.SGD(model.parameters(), lr=0.1)\n'
                'sched = torch.optim.lr_scheduler.StepLR(opt, 1)\nfor epoch in range(2):\n    total_loss = 0\n'
                '    for x in torch.randn(3, 8, 4):\n        opt.zero_grad()\n'
                '        loss = model(x).pow(2).mean()\n        loss.backward()\n        opt.step()\n'
                '        total_loss = total_loss + loss\n    sched.step()\n',
                line=13, runtime="silent: total_loss.grad_fn is not None"),
        Invalid('import torch\nimport torch.nn as nn\n\n\nclass Agent:\n    def __init__(self):\n'
                '        self.critic = nn.Linear(4, 1)\n'
                '        self.opt = torch.optim.SGD(self.critic.parameters(), lr=0.1)\n\n'
                '    def update(self, n_updates):\n        c_loss = []\n        for i in range(n_updates):\n'
                '            self.opt.zero_grad()\n'
                '            loss = self.critic(torch.randn(8, 4)).pow(2).mean()\n            loss.backward()\n'
                '            self.opt.step()\n            c_loss.append(loss)\n        return c_loss\n\n\n'
                'c_loss = Agent().update(3)\n',
                line=17, runtime="silent: all(l.grad_fn is not None for l in c_loss)"),
        Invalid('import torch\nimport torch.nn as nn\n\n\ndef train(loader, heads, optimizers):\n    losses = []\n'
                '    for x in loader:\n        for head, opt in zip(heads, optimizers):\n'
                '            opt.zero_grad()\n            loss = head(x).pow(2).mean()\n'
                '            loss.backward()\n            opt.step()\n            losses.append(loss)\n'
                '    return losses\n\n\nheads = [nn.Linear(4, 1) for _ in range(2)]\n'
                'losses = train([torch.randn(8, 4) for _ in range(3)], heads, [torch.optim.SGD(h.parameters(), lr=0.1) for h in heads])\n',
                line=13, runtime="silent: all(l.grad_fn is not None for l in losses)"),
        # The buffer's look-alike that is never emptied: every third step backwards the whole list again, through
        # the graphs the last drain freed (and keeps every step's graph alive until then).
        Invalid("import torch\nimport torch.nn as nn\n\nmodel = nn.Linear(4, 1)\n"
                "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nstep = 1\nlosses = []\n"
                "for x in torch.randn(6, 2, 4):\n    losses.append(model(x).pow(2).mean())\n    if step % 3 == 0:\n"
                "        sum(losses).backward()\n        opt.step()\n        opt.zero_grad()\n    step += 1\n",
                line=9, runtime="raises: Trying to backward through the graph a second time"),
        # An epoch whose second batch loop backwards: the epoch is still no training step, the total grows with it.
        Invalid('import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 1)\n'
                'opt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor epoch in range(2):\n    total_loss = 0\n'
                '    for x in torch.randn(3, 8, 4):\n        opt.zero_grad()\n'
                '        loss = model(x).pow(2).mean()\n        loss.backward()\n        opt.step()\n'
                '        total_loss += loss\n    for x in torch.randn(2, 8, 4):\n        opt.zero_grad()\n'
                '        model(x).abs().mean().backward()\n        opt.step()\n',
                line=12, runtime="silent: total_loss.grad_fn is not None"),
    )

    def check(self, event: AccumulateEvent, report) -> None:
        name = event.target_expr.split(".")[0].split("[")[0]
        if event.backward_in_loop is None:
            # A loop with no backward that keeps values with their graphs. A leaf (`nn.Parameter(...)`,
            # `.requires_grad_()`) has no graph to keep, a module's method that collects per-step outputs feeds
            # them to the module's result (which a backward needs), and a kept value a later backward reads is
            # kept for it.
            if event.per_call or event.in_module or event.value.leaf is Tri.YES \
                    or _backwarded(report.tree, name, anywhere=True) \
                    or _backwarded_after_loop(report.tree, event.node, name):
                return
            if bounded(report.tree, event, name) is not None:
                return  # true, but what it keeps is bounded by the code, not by the data: no growth to report
            if event.dropped:
                # The function never backwards and every graph it builds dies with its locals: what the loop keeps
                # grows with every iteration, and nothing can ever use it.
                severity = None
                if event.how == "carry" and over_positions(report.tree, event.node):
                    # A chain over the positions of one input (a Viterbi decode): it grows with that input's length
                    # and dies with the call, like any forward over a sequence; only the work is wasted.
                    text = (f"`{event.target_expr}` chains a graph through this loop that nothing backwards; it "
                            f"lives until the function returns. Run the loop under `torch.no_grad()` to save it.")
                    severity = Severity.INFORMATION
                elif event.how == "carry":
                    text = (f"`{event.target_expr}` feeds its graph into the next step for nothing: memory grows "
                            f"every step. Nothing backwards it; run the loop under `torch.no_grad()`.")
                else:
                    text = (f"`{event.target_expr}` keeps every iteration's graph for nothing: memory grows every "
                            f"step. Nothing backwards it; run the loop under `torch.no_grad()`.")
                origin = event.value.origin
                report.add(self, event.node, text, severity=severity,
                           related=[origin] if origin is not None
                           and origin.line != report.source.span(event.node)[0] else [])
            elif event.eval_at is not None and event.eval_at.kind == "evaluation-function":
                if event.how not in ("append", "+=", "keeps") \
                        or _result_backwarded(report.tree, event.eval_at.arg("name")):
                    return
                # An evaluation function (by its name) that keeps every batch's graph: nothing backwards them.
                report.add(self, event.node,
                           f"`{event.target_expr}` keeps every batch's graph for nothing: memory grows every step. "
                           f"`{event.eval_at.arg('name')}` evaluates and never backwards it; run the loop under "
                           f"`torch.no_grad()`.",
                           related=[event.value.origin] if event.value.origin is not None
                           and event.value.origin.line != report.source.span(event.node)[0] else [])
            elif event.eval_at is not None and event.how in ("append", "+=", "keeps"):
                # The model was put in eval mode: an evaluation loop without `torch.no_grad()` that keeps every
                # batch's graph (OpenNMT's and ParlAI's fixes add the no_grad).
                report.add(self, event.node,
                           msg(f"`{event.target_expr}` keeps every step's graph: the model is in eval mode (line ",
                               event.eval_at.line, ") but grad mode is on. Nothing backwards them, so memory grows "
                               "every iteration; run the loop under `torch.no_grad()`."),
                           related=[event.eval_at])
            elif event.how == "append" and not _returned_after_loop(report.tree, event.node, name):
                # Memory grows with the batches, but a later backward could want them: only information. Not when
                # the function hands them (or what they flow into) to its caller, whose backward may need them:
                # per-step outputs collected and returned are how unrolled networks and rollouts are written.
                report.add(self, event.node,
                           f"`{event.target_expr}` keeps each iteration's graph; run this loop under "
                           f"`torch.no_grad()` if no backward needs it.", severity=Severity.INFORMATION,
                           related=[event.value.origin] if event.value.origin is not None
                           and event.value.origin.line != report.source.span(event.node)[0] else [])
            return
        if _backwarded(report.tree, name, items=event.how == "append") \
                or _backwarded_after_loop(report.tree, event.node, name):
            return
        if _detached_where_backwarded(report.tree, event) or (
                event.how == "append" and _within_one_step(report.tree, event.node, name)):
            return
        if bounded(report.tree, event, name) is not None:
            return  # one step's inner loop, or one graph per model part: bounded, not a leak
        fix = None
        if event.how == "write" and isinstance(event.value_node, ast.Subscript):
            # `best[mask] = adv[mask]`: a piece of a tensor, seldom one number (`.item()` would raise); the buffer
            # takes the same values without the graph.
            fix = make_fix("Write `.detach()` (the same values, no graph) instead", Applicability.UNSAFE,
                           insert_after(report.source, event.value_node, ".detach()"))
        elif isinstance(event.value_node, (ast.Name, ast.Attribute, ast.Subscript)):
            fix = make_fix("Accumulate `.item()` (a Python number) instead", Applicability.UNSAFE,
                           insert_after(report.source, event.value_node, ".item()"))
        verb = {"+=": "adds", "append": "appends"}.get(event.how, "keeps")
        line = report.source.span(event.node)[0]
        origin = event.value.origin
        related = [origin] if origin is not None and origin.line != line else []
        if event.kept_at is not None and event.kept_at.path is not None:
            # The method that keeps the argument is in another file: the statement to change is there (detach
            # what it adds), and this file's call is the place that feeds it a graph every step.
            line, col, _, _ = report.source.span(event.node)
            call = Note(line, col, f"`{event.target_expr}` passes a tensor with its graph here every step")
            if report.add_in(self, event.kept_at,
                             "This adds a tensor with its graph into the object on every call, so memory grows "
                             "every step.",
                             related=[call] + related + [Note(event.backward_in_loop, 1,
                                                              "the loop calls backward here")]):
                return
        if event.kept_at is not None and event.kept_at.path is None and isinstance(event.kept_at.line, int):
            # The method is in this file and treats the argument as a tensor (`val.cpu()`): every caller hands it a
            # tensor, so the statement to change is the one that adds it into the object (detach it there).
            param = event.kept_at.arg("name")
            if param and _tensor_method_on(report.tree, event.kept_at.line, param):
                line, col, _, _ = report.source.span(event.node)
                report.add(self, event.node,
                           f"`{param}` is kept here with its graph, and the training loop passes a new one every "
                           f"step: memory grows. Detach `{param}` here.",
                           related=[Note(line, col, f"`{event.target_expr}` passes a tensor with its graph here "
                                                    f"every step")] + related
                           + [Note(event.backward_in_loop, 1, "the loop calls backward here")],
                           span=report.source.line_span(event.kept_at.line))
                return
        if event.how == "write" and isinstance(event.value_node, ast.Call):
            # `self.update_best(dist, best)`: the helper writes into the buffer it is handed (`call_writes`).
            report.add(self, event.node,
                       f"This call writes a graph into `{event.target_expr}` each step, so memory grows every "
                       f"iteration. Call it under `torch.no_grad()` or write a `.detach()`ed value.",
                       related=related + [Note(event.backward_in_loop, 1, "the loop calls backward here")]
                       if event.backward_in_loop != line else related)
            return
        if event.how == "write":
            # `losses[i] = loss` into a tensor made before the loop: autograd records the write on the buffer.
            buf = event.target_expr.split("[")[0]
            report.add(self, event.node,
                       f"Writing a tensor with its graph into `{buf}` chains every step's graph, so memory "
                       f"grows every iteration. Write `.detach()` or `.item()`, or write it under `torch.no_grad()`.",
                       related=related + [Note(event.backward_in_loop, 1, "the loop calls backward here")]
                       if event.backward_in_loop != line else related, fix=fix)
            for ret in _returned_freed(report.tree, event, buf):
                # The caller gets the buffer with its chained graph, whose saved tensors the loop's backward freed.
                report.add(self, ret,
                           msg(f"`{buf}` is returned with a graph the backward at line ", event.value.freed.line,
                               f" freed, so a caller's backward through it raises. It also keeps every step's "
                               f"graph alive; return `{buf}.detach()`."),
                           related=[Note(line, 1, f"`{buf}` takes a tensor with its graph here every step")])
            return
        if event.per_call:
            report.add(self, event.node,
                       f"`{event.target_expr}` {verb} a tensor with its graph; the object keeps every call's graph.",
                       related=related, fix=fix)
            return
        report.add(self, event.node,
                   f"`{event.target_expr}` {verb} a tensor with its graph each step, so memory grows every iteration.",
                   related=related + [Note(event.backward_in_loop, 1, "the loop calls backward here")]
                   if event.backward_in_loop != line else related, fix=fix)
