from __future__ import annotations

import ast
from typing import Iterator, Optional

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from ._syntax import first_param, own_nodes, self_attr
from .base import Invalid, Rule, Valid

# Tensor factories whose result, stored in `__init__`, starts a running total (`self.aux_loss = torch.zeros((1,))`).
_STARTS = frozenset({"torch.zeros", "torch.tensor", "torch.Tensor", "torch.FloatTensor"})
# In-place calls that reset or rescale a kept total (`self.total.zero_()`).
_RESETS = frozenset({"zero_", "fill_", "mul_", "copy_", "detach_"})


def _reads(node: ast.AST) -> set:
    return {x.id for x in ast.walk(node) if isinstance(x, ast.Name)}


def _added_term(value: ast.AST, me: str, attr: str) -> Optional[ast.AST]:
    """`v` of `self.x = self.x + v` (or `v + self.x`): an add into the attribute written as a rebinding."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        if self_attr(value.left, me) == attr:
            return value.right
        if self_attr(value.right, me) == attr:
            return value.left
    return None


def _from_params(own: list, params: set) -> set:
    """The arguments and the names the method binds from them, directly or through other such names
    (`reg = torch.zeros(1)`, `for w in weights: reg = reg + torch.norm(w)`, then
    `self.reg_loss = self.reg_loss + reg`)."""
    out, binds = set(params), []
    for n in own:
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and n.value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            binds.append(({x.id for t in targets for x in ast.walk(t) if isinstance(x, ast.Name)}, _reads(n.value)))
        elif isinstance(n, (ast.For, ast.AsyncFor)):
            binds.append(({x.id for x in ast.walk(n.target) if isinstance(x, ast.Name)}, _reads(n.iter)))
    grew = True
    while grew:
        grew = False
        for names, reads in binds:
            if reads & out and not names <= out:
                out |= names
                grew = True
    return out


def _backward_through(methods: list, attr: str) -> Optional[ast.Call]:
    """A backward in a loop of one of the class's methods on an expression that reads `self.<attr>`, directly or
    through a name the loop binds from it (`total_loss = loss + self.aux_loss`, `total_loss.backward()`)."""
    for fn in methods:
        me = first_param(fn)
        if me is None:
            continue
        for loop in own_nodes(fn, with_defs=False):
            if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
                continue
            body = list(ast.walk(loop))
            names = set()
            for s in body:
                if isinstance(s, ast.Assign) and any(self_attr(x, me) == attr for x in ast.walk(s.value)):
                    names |= {t.id for t in s.targets if isinstance(t, ast.Name)}
            for c in body:
                if not (isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "backward"):
                    continue
                read = [x for part in [c.func.value, *c.args] for x in ast.walk(part)]
                if any(self_attr(x, me) == attr or isinstance(x, ast.Name) and x.id in names for x in read):
                    return c
    return None


def _sites(cls: ast.ClassDef, q) -> Iterator[tuple]:
    """(statement `self.x += v` or `self.x = self.x + v`, attribute, the backward that reads it) in a class that
    starts `self.x` as a tensor in `__init__`, adds into it in a method that computes what it adds from its
    arguments, and never otherwise rebinds or resets it."""
    methods = [f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    started, reset, adds = set(), set(), []
    for fn in methods:
        me = first_param(fn)
        if me is None or any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list):
            continue
        params = {p.arg for p in fn.args.posonlyargs[1:] + fn.args.args[1:] + fn.args.kwonlyargs} \
            if fn.args.posonlyargs or fn.args.args else set()
        own = own_nodes(fn, with_defs=False)
        backwards = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward"
                        for n in own)
        derived = None  # the method's names made from its arguments, computed on the first add
        for n in own:
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    a = self_attr(t, me)
                    if a is None:
                        continue
                    if fn.name == "__init__" and isinstance(n.value, ast.Call) and q.call_name(n.value) in _STARTS:
                        started.add(a)
                        continue
                    term = _added_term(n.value, me, a) if len(n.targets) == 1 else None
                    if term is None:
                        reset.add(a)
                        continue
                    derived = _from_params(own, params) if derived is None else derived
                    if fn.name != "__init__" and not backwards and _reads(term) & derived:
                        adds.append((n, a))
            elif isinstance(n, ast.AugAssign):
                a = self_attr(n.target, me)
                if a is None:
                    continue
                if isinstance(n.op, ast.Add) and fn.name != "__init__" and not backwards:
                    derived = _from_params(own, params) if derived is None else derived
                    if _reads(n.value) & derived:
                        adds.append((n, a))
                elif not isinstance(n.op, ast.Add):
                    reset.add(a)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _RESETS:
                a = self_attr(n.func.value, me)
                if a is not None:
                    reset.add(a)
            elif isinstance(n, ast.Delete):
                reset |= {a for t in n.targets if (a := self_attr(t, me)) is not None}
    for stmt, a in adds:
        if a not in started or a in reset:
            continue
        bw = _backward_through(methods, a)
        if bw is not None:
            yield stmt, a, bw


class LossAttributeNeverReset(Rule):
    code = "GS426"
    name = "loss-attribute-never-reset"
    severity = Severity.WARNING
    summary = ("A loss term kept on the object that a method adds into and nothing resets chains every call's "
               "graph into each step's backward.")
    events = (FileEvent,)
    what_it_does = ("Flags `self.aux_loss += value * alpha` in a method that adds its argument into an attribute "
                    "that `__init__` starts as a tensor (`torch.zeros(...)`), when no method rebinds, resets "
                    "(`zero_()`, `fill_()`) or deletes it, and a loop in one of the class's methods backwards an "
                    "expression that reads it (`total_loss = loss + self.aux_loss`, `total_loss.backward()`).")
    why_bad = ("The attribute is a loss term of every step, but each call adds into the running sum instead of "
               "replacing it: the term keeps every earlier call's graph and value. Each backward runs through all "
               "of them again (their gradients are added once more every step), memory grows with the number of "
               "calls, and once an optimizer step has changed a weight an old graph saved, or once that graph was "
               "freed, the backward raises (DeepCTR-Torch's `add_auxiliary_loss`, retained with "
               "`backward(retain_graph=True)`).")
    example = ("def add_auxiliary_loss(self, aux_loss, alpha):\n    self.aux_loss += aux_loss * alpha\n\n"
               "def fit(self, loader):\n    for x, y in loader:\n        total_loss = self.loss_func(self(x), y) "
               "+ self.aux_loss\n        total_loss.backward(retain_graph=True)\n        self.optim.step()")
    use_instead = "def add_auxiliary_loss(self, aux_loss, alpha):\n    self.aux_loss = aux_loss * alpha"
    fix_safety = ("There is no automatic fix: whether the term should be replaced each call or reset once per step "
                  "is the author's choice.")
    references = ("https://pytorch.org/docs/stable/notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory",)
    _head = ("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
             "        super().__init__()\n        self.fc = nn.Linear(4, 1)\n        self.aux_loss = torch.zeros((1,))\n\n"
             "    def add_auxiliary_loss(self, aux_loss, alpha):\n")
    _tail = ("\n    def forward(self, x):\n        h = self.fc(x)\n        self.add_auxiliary_loss(h.pow(2).mean(), 0.1)\n"
             "        return h\n\n    def fit(self, xs, ys, optim):\n        for x, y in zip(xs, ys):\n"
             "            total_loss = ((self(x) - y) ** 2).mean() + self.aux_loss\n            optim.zero_grad()\n"
             "            total_loss.backward(retain_graph=True)\n            optim.step()\n\n\n"
             "def chained(t):\n    n, fn = 0, t.grad_fn\n    while fn is not None and fn.name().startswith('Add'):\n"
             "        n, fn = n + 1, fn.next_functions[0][0]\n    return n\n\n\nm = Model()\n"
             "m.fit([torch.randn(3, 4) for _ in range(3)], [torch.randn(3, 1) for _ in range(3)],\n"
             "      torch.optim.SGD(m.parameters(), lr=0.1))\n")
    _reg = ("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self, l2=1e-2):\n"
            "        super().__init__()\n        self.fc = nn.Linear(4, 1)\n        self.reg_loss = torch.zeros((1,))\n"
            "        self.add_regularization_loss(self.fc.parameters(), l2)\n\n"
            "    def add_regularization_loss(self, weights, decay):\n        reg = torch.zeros((1,))\n"
            "        for w in weights:\n            reg = reg + torch.norm(w)\n")
    _reg_fit = ("\n    def fit(self, xs, ys, optim):\n        for x, y in zip(xs, ys):\n"
                "            total_loss = ((self.fc(x) - y) ** 2).mean() + self.reg_loss\n"
                "            optim.zero_grad()\n            total_loss.backward(retain_graph=True)\n"
                "            optim.step()\n\n\nm = Model()\n"
                "m.fit([torch.randn(3, 4) for _ in range(2)], [torch.randn(3, 1) for _ in range(2)],\n"
                "      torch.optim.SGD(m.parameters(), lr=0.1))\n")
    valid = (
        # The fix of the regulariser built at construction: keep the weights, compute the term every step.
        Valid(_reg.replace("        self.reg_loss = torch.zeros((1,))\n", "")
              .replace("        self.add_regularization_loss(self.fc.parameters(), l2)\n",
                       "        self.reg_weights = [(list(self.fc.parameters()), l2)]\n")
              .replace("def add_regularization_loss(self, weights, decay):", "def regularization_loss(self):")
              .replace("        for w in weights:\n", "        for ws, decay in self.reg_weights:\n"
                       "            for w in ws:\n    ")
              + "        return decay * reg\n" + _reg_fit.replace("+ self.reg_loss", "+ self.regularization_loss()")),
        # The fix: the term of this call only.
        Valid(_head + "        self.aux_loss = aux_loss * alpha\n" + _tail + "assert chained(m.aux_loss) <= 1\n"),
        # A running number for logging, never read by the backward.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Trainer:\n    def __init__(self, model):\n"
              "        self.model = model\n        self.seen = torch.zeros(())\n        self.opt = torch.optim.SGD("
              "model.parameters(), lr=0.1)\n\n    def count(self, n):\n        self.seen += n\n\n"
              "    def fit(self, xs):\n        for x in xs:\n            loss = self.model(x).pow(2).mean()\n"
              "            self.opt.zero_grad()\n            loss.backward()\n            self.opt.step()\n"
              "            self.count(x.shape[0])\n\n\nTrainer(nn.Linear(4, 1)).fit([torch.randn(3, 4)])\n"),
        # Reset once per step (the method is for subclasses in other files).
        Valid(_head + "        self.aux_loss += aux_loss * alpha\n\n    def reset(self):\n"
              "        self.aux_loss = torch.zeros((1,))\n\n    def forward(self, x):\n        self.reset()\n"
              "        return self.fc(x)\n\n    def fit(self, xs, ys, optim):\n        for x, y in zip(xs, ys):\n"
              "            total_loss = ((self(x) - y) ** 2).mean() + self.aux_loss\n            optim.zero_grad()\n"
              "            total_loss.backward()\n            optim.step()\n\n\nm = Model()\n"
              "m.fit([torch.randn(3, 4)], [torch.randn(3, 1)], torch.optim.SGD(m.parameters(), lr=0.1))\n"),
    )
    invalid = (
        # GS420 also sees this call's graph written into the attribute; the rule needs no caller in the file.
        Invalid(_head + "        self.aux_loss += aux_loss * alpha\n" + _tail, line=12,
                runtime="silent: chained(m.aux_loss) == 3", also=(12,)),
        # A regulariser computed once from the weights at construction (DeepCTR-Torch's `add_regularization_loss`):
        # the second step backwards through the norm of weights the first optimizer step changed in place.
        Invalid(_reg + "        self.reg_loss = self.reg_loss + decay * reg\n" + _reg_fit, line=16,
                runtime="raises: modified by an inplace operation"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "backward" not in q.attrs:
            return  # the common case, checked first (this rule runs on every keystroke)
        if not any("self." in line and ("+=" in line or "+" in line and "= self." in line)
               for line in report.source.lines):
            return
        for cls in q.class_defs:
            for stmt, attr, bw in _sites(cls, q):
                report.add(self, stmt,
                           f"`self.{attr}` keeps the graph of every value added into it and is never reset. "
                           f"Each backward runs through all those graphs again: replace it with this call's term, "
                           f"or recompute or reset it every step.",
                           related=[Note(bw.lineno, bw.col_offset + 1, "backwarded here, every step")])
