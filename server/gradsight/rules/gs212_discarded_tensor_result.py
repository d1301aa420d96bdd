from __future__ import annotations

import ast

from ..engine.events import DiscardEvent
from ..engine.report import make_fix
from ..engine.values import Tri
from ..findings import Applicability, Edit, Severity
from .base import dotted_name, Invalid, Rule, Valid


class DiscardedTensorResult(Rule):
    code = "GS212"
    name = "discarded-tensor-result"
    severity = Severity.WARNING
    summary = ("A statement calls an out-of-place tensor method (`x.detach()`, `p.grad.mul(-1)`, "
               "`x.masked_fill(m, 0)`) and throws the new tensor away: `x` is unchanged.")
    events = (DiscardEvent,)
    what_it_does = ("Flags an expression statement whose whole value is a new tensor made by an out-of-place method "
                    "of a tensor: arithmetic (`mul`, `add`, `clamp`, `masked_fill`, ...), `detach`, shape and dtype "
                    "methods, `.to()`/`.cpu()`, called on a name, an attribute or an item (`x`, `p.grad`, `xs[i]`), "
                    "or on in-place calls on one (`p.grad.mul_(a).add(b)`); a temporary such as `f(x).detach()` "
                    "is not reported. The receiver must be known to be a tensor: a module's `.float()` or "
                    "`.to(device)` works in place and is not reported, nor is a statement inside a `try` block or a "
                    "`with ...raises(...)` block (code that expects the call to fail). A dropped device move "
                    "(`x.to(device)`, `x.cuda()`, `x.cpu()`) is reported as information, not a warning: in public "
                    "code it was a no-op 8 times in 9 (the tensor was already there), and where it is not, the "
                    "next operation mixing devices raises at once. So is a dropped `x.detach()` where the code "
                    "shows no graph for `x` (the statement is dead code, not a graph kept by mistake), and a dropped "
                    "`x.expand(a, b)` (`view`, `reshape`) right after `x = torch.zeros(a, b)` with the same sizes "
                    "(`x` has that shape already), and a dropped `.float()` of a tensor the code shows is "
                    "floating point already (a `torch.zeros(...)` after an in-place `scatter_`).")
    why_bad = ("These methods return a new tensor and leave their receiver alone; the in-place forms end in `_` "
               "(`mul_`, `detach_`, `clamp_`). As a statement the result is lost: a gradient meant to be negated "
               "keeps its sign, so the optimizer steps the wrong way (ShangtongZhang/DeepRL's policy gradient), a "
               "tensor meant to be detached keeps its graph, a mask is never applied. Nothing raises.")
    example = "loss.backward()\npolicy.weight.grad.mul(-1)   # meant: ascend; the gradient is unchanged\nopt.step()"
    use_instead = "loss.backward()\npolicy.weight.grad = policy.weight.grad.mul(-1)\nopt.step()"
    fix_safety = ("Unsafe: the fix makes the line do what it says, which changes the program's values. Where the "
                  "receiver can be assigned (`x`, `self.x`, `p.grad`) the result is assigned back to it "
                  "(`x = x.detach()`); otherwise the in-place form is used where one exists (`.mul(-1)` becomes "
                  "`.mul_(-1)`). The two differ when other names share the old tensor: check which one is meant.")
    references = ("https://pytorch.org/docs/stable/tensors.html#in-place-operations",)
    valid = (
        Valid("import torch\nw = torch.ones(3, requires_grad=True)\n(w * 2).sum().backward()\nw.grad.mul_(-1)\n"
              "assert torch.equal(w.grad, torch.full((3,), -2.0))\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True) * 1\nx = x.detach()\nassert not x.requires_grad\n"),
        # A module's `.float()` and `.to()` work in place.
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 2).double()\nm.float()\n"
              "assert m.weight.dtype == torch.float32\n"),
        # Code that expects the call to fail.
        Valid("import torch\nx = torch.randn(2, 3)\ntry:\n    x.view(7)\nexcept RuntimeError:\n    print('no view')\n"),
    )
    invalid = (
        Invalid("import torch\nw = torch.ones(3, requires_grad=True)\n(w * 2).sum().backward()\nw.grad.mul(-1)\n",
                line=4, runtime="silent: torch.equal(w.grad, torch.full((3,), 2.0))",
                fixed="import torch\nw = torch.ones(3, requires_grad=True)\n(w * 2).sum().backward()\n"
                      "w.grad = w.grad.mul(-1)\n"),
        Invalid("import torch\nh = torch.zeros(2, requires_grad=True) * 1\nh.detach()\n", line=3,
                runtime="silent: h.requires_grad", fixed="import torch\nh = torch.zeros(2, requires_grad=True) * 1\n"
                                                        "h = h.detach()\n"),
        # A device move thrown away (information): the tensor stays where it was.
        Invalid("import torch\nx = torch.randn(2)\nx.to('meta')\n", line=3, runtime="silent: x.device.type == 'cpu'",
                fixed="import torch\nx = torch.randn(2)\nx = x.to('meta')\n"),
        # A chain: the last call's result is what is thrown away (ShangtongZhang/DeepRL, `MDP.py`).
        Invalid("import torch\nw = torch.ones(3, requires_grad=True)\n(w * 2).sum().backward()\n"
                "w.grad.mul_(0.5).add_(1.0).mul(-1)\n", line=4,
                runtime="silent: torch.equal(w.grad, torch.full((3,), 2.0))",
                fixed="import torch\nw = torch.ones(3, requires_grad=True)\n(w * 2).sum().backward()\n"
                      "w.grad.mul_(0.5).add_(1.0).mul_(-1)\n"),
        # A dropped `expand` whose receiver is then only compared with a tensor of the full shape (information): the
        # comparison broadcasts it anyway, so the mask is the same (SPIRAL's shift padding mask).
        Invalid("import torch\nlengths = torch.tensor([2, 4])\npositions = torch.arange(5)\n"
                "positions.expand(len(lengths), 5)\nmask = positions >= lengths.unsqueeze(1)\n", line=4,
                runtime="silent: positions.shape == (5,) and mask.shape == (2, 5)", severity=Severity.INFORMATION,
                fixed="import torch\nlengths = torch.tensor([2, 4])\npositions = torch.arange(5)\n"
                      "positions = positions.expand(len(lengths), 5)\nmask = positions >= lengths.unsqueeze(1)\n"),
        # The same dropped `expand` before a reduction over the expanded dimension: a warning.
        Invalid("import torch\n\n\ndef row_totals(lengths, max_len):\n"
                "    positions = torch.arange(max_len, dtype=torch.float32)\n"
                "    positions.expand(len(lengths), max_len)\n    return positions.sum(1)\n\n\n"
                "row_totals(torch.tensor([2, 4]), 5)\n", line=6, runtime="raises: Dimension out of range",
                severity=Severity.WARNING,
                fixed="import torch\n\n\ndef row_totals(lengths, max_len):\n"
                      "    positions = torch.arange(max_len, dtype=torch.float32)\n"
                      "    positions = positions.expand(len(lengths), max_len)\n    return positions.sum(1)\n\n\n"
                      "row_totals(torch.tensor([2, 4]), 5)\n"),
        # A dropped `detach()` of a value the code shows no graph for (a replay batch plus a detached term):
        # information, the statement is dead code (navneet-nmk/pytorch-rl's empowerment rewards). Its fix changes
        # nothing a probe could see, so the example gives none.
        Invalid("import torch\n\n\ndef shaped(rewards, bonus):\n    total = rewards + 0.1 * bonus.detach()\n"
                "    total.detach()\n    return total\n\n\nout = shaped(torch.randn(4), torch.randn(4))\n", line=6,
                severity=Severity.INFORMATION, runtime="silent: not out.requires_grad"),
        # The same statement on a value made by a module with parameters keeps the critic in the value loss's graph
        # (the same repository's SAC value target): a warning.
        Invalid("import torch\nimport torch.nn as nn\n\ncritic = nn.Linear(3, 1)\nvalue_net = nn.Linear(3, 1)\n\n\n"
                "def value_loss(states, log_probs):\n    target = critic(states) - log_probs\n"
                "    target.detach()\n    return ((value_net(states) - target) ** 2).mean()\n\n\n"
                "value_loss(torch.randn(4, 3), torch.randn(4, 1)).backward()\n", line=10,
                severity=Severity.WARNING, runtime="silent: critic.weight.grad is not None",
                fixed="import torch\nimport torch.nn as nn\n\ncritic = nn.Linear(3, 1)\nvalue_net = nn.Linear(3, 1)\n\n\n"
                      "def value_loss(states, log_probs):\n    target = critic(states) - log_probs\n"
                      "    target = target.detach()\n    return ((value_net(states) - target) ** 2).mean()\n\n\n"
                      "value_loss(torch.randn(4, 3), torch.randn(4, 1)).backward()\n"),
        # A dropped `expand` to the very shape the tensor was made with two lines up: information, a no-op
        # (lzx1413/PytorchSSD's detection post-processing).
        Invalid("import torch\n\n\nclass Detect:\n    def run(self, num, priors):\n"
                "        self.boxes = torch.zeros(num, priors, 4)\n        if num > 1:\n"
                "            self.boxes.expand(num, priors, 4)\n        return self.boxes\n\n\n"
                "out = Detect().run(2, 3)\n", line=8, severity=Severity.INFORMATION,
                runtime="silent: out.shape == (2, 3, 4)"),
    )

    def check(self, event: DiscardEvent, report) -> None:
        call = event.node
        if _expects_failure(report.tree, call):
            return
        recv = call.func.value
        base = recv
        while isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute) and base.func.attr.endswith("_") \
                and not base.func.attr.endswith("__"):
            base = base.func.value  # `p.grad.mul_(a).add_(b)` is `p.grad` itself
        if not _assignable(base):
            return  # a temporary (`f(x).detach()`): nothing the program can see was meant to change
        text = report.source.segment(recv)
        method = event.method
        fix = None
        if _assignable(recv) and "\n" not in text:
            line, col, _, _ = report.source.span(call)  # code-point columns (a non-ASCII name before it)
            fix = make_fix(f"Assign the result back to `{text}`", Applicability.UNSAFE,
                           Edit(line, col, line, col, f"{text} = "))
        elif method not in ("detach", "to", "cpu", "cuda", "type", "type_as", "float", "half", "double", "long",
                            "int", "bool", "view", "reshape", "t", "transpose", "permute", "squeeze", "unsqueeze",
                            "flatten", "expand", "repeat", "contiguous", "clone", "index_put"):
            _, _, end_line, end = report.source.span(call.func)
            fix = make_fix(f"Use the in-place `.{method}_()`", Applicability.UNSAFE,
                           Edit(end_line, end, end_line, end, "_"))
        if method == "detach" and event.receiver.rg is Tri.YES:
            what = f"`{text}.detach()` returns a detached copy and this statement throws it away: `{text}` keeps its graph"
        elif method == "detach":
            # What a dropped `detach()` costs is the graph the receiver keeps: where the code shows none (a value
            # made from a replay batch and detached terms), the statement is only dead code (no fix: assigning the
            # copy back would change nothing either).
            report.add(self, call, f"`{text}.detach()` returns a copy that this statement throws away; the code shows "
                                   f"no graph on `{text}`, so the statement does nothing. Remove it.",
                       severity=Severity.INFORMATION)
            return
        elif _already_shaped(report.tree, call):
            report.add(self, call, f"`.{method}()` returns a new tensor and this statement throws it away; `{text}` "
                                   f"already has that shape, so the statement does nothing. Remove it.",
                       severity=Severity.INFORMATION)
            return
        elif method == "float" and event.receiver.is_int is Tri.NO:
            # `x_onehot.scatter_(1, x, 1).float()` on a `torch.zeros(...)`: already floating point (float32 unless
            # made float64), so the conversion is a no-op almost always (erfnet's iouEval, fresh32).
            report.add(self, call, f"`.float()` returns a new tensor and this statement throws it away; `{text}` is "
                                   f"already floating point, so the conversion changes nothing unless it is float64.",
                       severity=Severity.INFORMATION)
            return
        else:
            what = (f"`.{method}()` returns a new tensor and this statement throws it away: `{text}` is unchanged")
        # A dropped device move (`x.to(device)`, `x.cuda()`) is most often a no-op (the tensor is already there;
        # 8 of 9 in two fresh rounds of public code), and where it is not, the next op on another device raises at
        # once: information, not a warning. A dropped dtype conversion or arithmetic changes values silently.
        severity = Severity.INFORMATION if _device_move(call) or _broadcast_anyway(report.tree, call) else None
        report.add(self, call, f"{what}. Assign the result or use the in-place form.", fix=fix, severity=severity)


_DTYPE_NAMES = frozenset({"float", "float16", "float32", "float64", "half", "double", "bfloat16", "int", "int8",
                          "int16", "int32", "int64", "long", "short", "uint8", "bool", "complex64", "complex128",
                          "cfloat", "cdouble"})


def _device_move(call: ast.Call) -> bool:
    """`.cpu()`, `.cuda(...)`, or `.to(...)` whose arguments name a device, not a dtype (`torch.float16`, a name
    with `dtype` in it, `dtype=`) nor another tensor to match (`.to(x)`, unknown: kept as a conversion)."""
    method = call.func.attr
    if method in ("cpu", "cuda"):
        return True
    if method != "to" or not call.args and not call.keywords:
        return False
    for kw in call.keywords:
        if kw.arg != "device" and kw.arg != "non_blocking":
            return False
    for arg in call.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            continue
        name = dotted_name(arg) if isinstance(arg, (ast.Name, ast.Attribute)) else None
        if name is None:
            return False
        last = name.rpartition(".")[2]
        if last in _DTYPE_NAMES or "dtype" in last.lower():
            return False
        if last != "device" and "device" not in last.lower() and last not in ("dev", "cuda", "cpu"):
            return False  # `.to(x)` may convert to another tensor's dtype too
    return True


_BROADCASTS = ("expand", "expand_as", "broadcast_to")


def _scope_of(tree, call: ast.Call):
    """The innermost function holding `call`, or the module (module-level code: the rest of the module)."""
    scope = None
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno <= call.lineno <= n.end_lineno \
                and (scope is None or n.lineno >= scope.lineno):
            scope = n
    return scope or tree


def _broadcast_anyway(tree, call: ast.Call) -> bool:
    """A dropped `x.expand(...)` (`expand_as`, `broadcast_to`) on a name that the rest of its function (or module)
    only reads as an operand of arithmetic or a comparison with another tensor expression: those operations
    broadcast `x` themselves, so the expansion was redundant (`positions.expand(B, T)` then
    `positions >= lengths[:, None]`). Any other read (a reduction, a call, a return) keeps the warning."""
    if tree is None or call.func.attr not in _BROADCASTS or not isinstance(call.func.value, ast.Name):
        return False
    name = call.func.value.id
    scope = _scope_of(tree, call)
    parents = {c: n for n in ast.walk(scope) for c in ast.iter_child_nodes(n)}
    reads = 0
    for n in ast.walk(scope):
        if not isinstance(n, ast.Name) or n.id != name or n.lineno <= call.lineno:
            continue
        if not isinstance(n.ctx, ast.Load) or isinstance(parents.get(n), ast.Lambda):
            return False  # rebound or read by a closure after the statement
        parent = parents.get(n)
        if isinstance(parent, ast.BinOp):
            other = parent.right if parent.left is n else parent.left
        elif isinstance(parent, ast.Compare) and len(parent.comparators) == 1:
            other = parent.comparators[0] if parent.left is n else parent.left
        else:
            return False
        if isinstance(other, ast.Constant):
            return False  # `x * 2` keeps the unexpanded shape
        reads += 1
    return reads > 0


_SIZED_FACTORIES = frozenset({"zeros", "ones", "empty", "randn", "rand", "Tensor", "FloatTensor", "LongTensor"})


def _already_shaped(tree, call: ast.Call) -> bool:
    """A dropped `x.expand(a, b, c)` (or `x.view(...)`, `x.reshape(...)`) whose receiver, a name or `self.name`, is
    bound once in the function, by an earlier statement of a block holding the call, to `torch.zeros(a, b, c)`
    (another factory of a size) with the very same size expressions: the tensor has that shape already, so even an
    assigned result would change nothing (`self.boxes = torch.zeros(num, P, 4)`, then `self.boxes.expand(num, P,
    4)`)."""
    recv = call.func.value
    if tree is None or call.func.attr not in ("expand", "view", "reshape") or not call.args or call.keywords \
            or not (isinstance(recv, ast.Name) or isinstance(recv, ast.Attribute)
                    and isinstance(recv.value, ast.Name)):
        return False
    scope = _scope_of(tree, call)
    name = dotted_name(recv)
    stores = [n for n in ast.walk(scope) if isinstance(n, (ast.Name, ast.Attribute))
              and isinstance(n.ctx, (ast.Store, ast.Del)) and dotted_name(n) == name]
    if len(stores) != 1:
        return False  # bound more than once (or not here): which value reaches the call is not clear
    made = None
    for block in (getattr(n, f, None) for n in ast.walk(scope) for f in ("body", "orelse", "finalbody")):
        if not isinstance(block, list):
            continue
        for k, stmt in enumerate(block):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is stores[0] \
                    and any(sub is call for later in block[k + 1:] for sub in ast.walk(later)):
                made = stmt.value
    if not (isinstance(made, ast.Call) and isinstance(made.func, ast.Attribute)
            and made.func.attr in _SIZED_FACTORIES and isinstance(made.func.value, ast.Name)
            and made.func.value.id == "torch") \
            or any(kw.arg not in ("dtype", "device", "requires_grad") for kw in made.keywords):
        return False
    sizes = made.args[0].elts if len(made.args) == 1 and isinstance(made.args[0], (ast.Tuple, ast.List)) \
        else made.args
    wanted = call.args[0].elts if len(call.args) == 1 and isinstance(call.args[0], (ast.Tuple, ast.List)) \
        else call.args
    return bool(sizes) and len(sizes) == len(wanted) and not any(isinstance(a, ast.Starred) for a in sizes) \
        and all(ast.dump(a) == ast.dump(b) for a, b in zip(sizes, wanted))


def _assignable(node: ast.AST) -> bool:
    """`x`, `self.x`, `p.grad`, `xs[i]`: a target the result can be assigned back to (no call on the way)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript) and any(isinstance(n, ast.Call) for n in ast.walk(node.slice)):
            return False
        node = node.value
    return isinstance(node, ast.Name)


def _expects_failure(tree, call: ast.AST) -> bool:
    """The statement sits in a `try` body or a `with` block whose context mentions `raises` (`pytest.raises`,
    `self.assertRaises`): code written to see the call fail."""
    if tree is None:
        return False
    for n in ast.walk(tree):
        if isinstance(n, ast.Try) and n.handlers:
            body = n.body
        elif isinstance(n, (ast.With, ast.AsyncWith)) and any(
                "raises" in ast.unparse(item.context_expr).lower() for item in n.items):
            body = n.body
        else:
            continue
        if any(sub is call for stmt in body for sub in ast.walk(stmt)):
            return True
    return False
