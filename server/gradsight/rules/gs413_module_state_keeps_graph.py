from __future__ import annotations

import ast

from ..engine.astwalk import walk
from ..engine.events import SelfStoreEvent
from ..engine.query import FileEvent
from ..findings import Severity
from ._syntax import imports_torch
from .base import Invalid, Rule, Valid, tree_query


def _self_attr(node: ast.AST) -> str | None:
    """`self.hidden` -> "hidden" (only a plain attribute of the instance)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _stored_attrs(target: ast.AST) -> set:
    """Attributes of the instance a target (or a tuple of targets) stores to."""
    if isinstance(target, (ast.Tuple, ast.List)):
        out: set = set()
        for elt in target.elts:
            out |= _stored_attrs(elt)
        return out
    name = _self_attr(target)
    return {name} if name else set()


def _self_call_locals(top) -> set:
    """Names a top-level statement's assignments bind from a call of a method or submodule of `self`."""
    return {t.id for a in top.assigns if isinstance(a.value, ast.Call) and _self_attr(a.value.func)
            for tt in a.targets for t in walk(tt) if isinstance(t, ast.Name)}


def _state_stores(top) -> list:
    """A top-level statement's assignments that store an attribute of `self` from a name or from an expression
    that calls a method or submodule of `self`: (assignment, attributes stored, those calls)."""
    out = []
    for stmt in top.assigns:
        if len(stmt.targets) == 1 and stmt.targets[0].__class__ is ast.Name:
            continue  # `x = ...` stores no attribute (most assignments: no call per statement for them)
        stored = set().union(*(_stored_attrs(t) for t in stmt.targets))
        if not stored:
            continue
        calls = [c for c in walk(stmt.value) if isinstance(c, ast.Call) and _self_attr(c.func)]
        if calls or isinstance(stmt.value, ast.Name):
            out.append((stmt, stored, calls))
    return out


def _submodules(cls: ast.ClassDef, q) -> set:
    """Attributes the class's methods bind to a module constructor (`self.lstm = nn.LSTM(...)`)."""
    out = set()
    for n in walk(cls):
        if isinstance(n, ast.Assign) and q.is_module_constructor(n.value):
            for t in n.targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
                    out.add(t.attr)
    return out


def _fed_arg(a: ast.AST) -> set:
    """The state one argument hands over: `self.h`, `self.h[0]`, either branch of `self.h if cond else None`, either
    operand of `self.h or init`."""
    if isinstance(a, ast.IfExp):
        return _fed_arg(a.body) | _fed_arg(a.orelse)
    if isinstance(a, ast.BoolOp) and isinstance(a.op, ast.Or):
        return set().union(*(_fed_arg(v) for v in a.values))
    name = _self_attr(a.value if isinstance(a, ast.Subscript) else a)
    return {name} if name else set()


def _fed_state(calls: list) -> set:
    """Attributes of `self` passed to these calls, directly, through a subscript (`self.hidden[0]`), a conditional
    (`self.cov if self.coverage else None`) or an `or` (`self.hidden or init`)."""
    out = set()
    for call in calls:
        for a in [*call.args, *(k.value for k in call.keywords)]:
            out |= _fed_arg(a)
    return out


def _binding_call(name: str, store: ast.Assign, forward: ast.FunctionDef, subs: set):
    """The submodule call that last bound the local `name` before `store` in `forward`
    (`a, cov = self.attention(enc, self.cov)` for `self.cov = cov`), or None when its last binding is anything
    else (`cov = cov.detach()`)."""
    last = None
    for n in walk(forward):
        if not isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.With)) \
                or n.lineno >= store.lineno:
            continue
        targets = (n.targets if isinstance(n, ast.Assign) else [i.optional_vars for i in n.items]
                   if isinstance(n, ast.With) else [n.target])
        if any(isinstance(t, ast.Name) and t.id == name for tt in targets if tt is not None for t in walk(tt)) \
                and (last is None or n.lineno >= last.lineno):
            last = n
    if isinstance(last, ast.Assign) and isinstance(last.value, ast.Call) and _self_attr(last.value.func) in subs:
        return last.value
    return None


def _lazy_init(state: str, stmt: ast.stmt, q) -> bool:
    """Is `stmt` in the body of an `if self.<state> is None:` (or `if ... and self.<state> is None:`,
    `if not hasattr(self, "<state>"):`)? That initialises the state once; it does not reset it."""
    child, node = stmt, q.parent(stmt)
    while isinstance(node, ast.If):
        if any(child is b for b in node.body):
            tests = node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And) \
                else [node.test]
            if any(_is_unset_test(state, t) for t in tests):
                return True
        child, node = node, q.parent(node)
    return False


def _is_unset_test(state: str, t: ast.AST) -> bool:
    if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Is) \
            and _self_attr(t.left) == state and isinstance(t.comparators[0], ast.Constant) \
            and t.comparators[0].value is None:
        return True
    if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not) and isinstance(t.operand, ast.Call):
        call = t.operand
        return isinstance(call.func, ast.Name) and call.func.id == "hasattr" and len(call.args) == 2 \
            and isinstance(call.args[0], ast.Name) and call.args[0].id == "self" \
            and isinstance(call.args[1], ast.Constant) and call.args[1].value == state
    return False


def _flag(node: ast.AST) -> str | None:
    """`self.is_training` as a test: the attribute's name."""
    return _self_attr(node)


def _off_if_true(test: ast.AST) -> set:
    """Flags of `self` that are surely falsy where `test` is true: `not self.F`, `self.F is False`, `self.F == False`,
    or a conjunct of an `and`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _off_if_false(test.operand)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return set().union(*(_off_if_true(v) for v in test.values))
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.Eq)) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is False:
        flag = _flag(test.left)
        return {flag} if flag else set()
    return set()


def _off_if_false(test: ast.AST) -> set:
    """Flags of `self` that are surely falsy where `test` is false: `self.F`, a term of an `or`, `not <test true>`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _off_if_true(test.operand)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return set().union(*(_off_if_false(v) for v in test.values))
    flag = _flag(test)
    return {flag} if flag else set()


def _read_guards(node: ast.AST, state: str, off: frozenset, out: list) -> None:
    """For every read of `self.<state>` under `node`: the flags of `self` surely falsy where it runs (the tests of the
    `if`s, conditional expressions and short-circuit operands around it). Nested definitions run elsewhere: a read in
    one counts as unguarded."""
    if isinstance(node, (ast.If, ast.IfExp)):
        _read_guards(node.test, state, off, out)
        body = node.body if isinstance(node.body, list) else [node.body]
        orelse = node.orelse if isinstance(node.orelse, list) else [node.orelse]
        for n in body:
            _read_guards(n, state, off | _off_if_true(node.test), out)
        for n in orelse:
            _read_guards(n, state, off | _off_if_false(node.test), out)
        return
    if isinstance(node, ast.BoolOp):
        acc = off
        for v in node.values:
            _read_guards(v, state, acc, out)
            acc = acc | (_off_if_true(v) if isinstance(node.op, ast.And) else _off_if_false(v))
        return
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        off = frozenset()
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and _self_attr(node) == state:
        out.append(off)
        return
    for child in ast.iter_child_nodes(node):
        _read_guards(child, state, off, out)


def _forward_calls(fn: ast.FunctionDef) -> list:
    """The indices of `fn`'s top-level statements that run the module's `forward` (`self.forward(...)`, `self(...)`)."""
    return [i for i, stmt in enumerate(fn.body) for c in walk(stmt) if isinstance(c, ast.Call)
            and (_self_attr(c.func) == "forward" or isinstance(c.func, ast.Name) and c.func.id == "self")]


def _flag_stores(fn: ast.AST, flag: str) -> list:
    return [n for n in walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete))
            and any(_self_attr(t) == flag for tt in (n.targets if isinstance(n, (ast.Assign, ast.Delete))
                                                     else [n.target]) for t in walk(tt))]


def _flag_set_around_forward(flag: str, cls: ast.ClassDef) -> bool:
    """Does every method of the class that changes `self.<flag>` (`__init__` apart) run `forward` and set the flag to a
    constant in its own body, on before its first `forward` (`self.is_training = True`, then `self.forward(adj)`) or
    off after its last (`self.forward(adj)`, then `self.is_training = False`), and does one set it on? Then a
    `forward` that runs with the flag off comes after a method that turned it off right after its own `forward`:
    what it reads back is the state that method's call stored, never a training step's; and every method that turns
    the flag on recomputes before its `forward` reads anything."""
    turned_on = False
    for fn in cls.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name == "__init__":
            continue
        stores = _flag_stores(fn, flag)
        if not stores:
            continue
        runs = _forward_calls(fn)
        if not runs:
            return False
        for store in stores:
            at = next((i for i, stmt in enumerate(fn.body) if stmt is store), None)
            if at is None or not isinstance(store, ast.Assign) or len(store.targets) != 1 \
                    or not isinstance(store.value, ast.Constant) or not isinstance(store.value.value, bool):
                return False
            if store.value.value and at >= min(runs) or not store.value.value and at <= max(runs):
                return False
            turned_on = turned_on or store.value.value
    return turned_on


def _read_only_with_flag_off(state: str, forward: ast.FunctionDef, cls: ast.ClassDef, q) -> bool:
    """Is `self.<state>` read only in `forward`, each read under a test that needs one flag of `self` off
    (`if not self.is_training: return self.final_embeds[:n], ...`), a flag every method that turns it on does so before
    its `forward`, and that is turned off only after a `forward` (`_flag_set_around_forward`)? A training step (a
    method that turns the flag on) then never reads the state an earlier step stored: RLMRec's recommenders cache the
    propagated embeddings for the evaluation batches that follow `full_predict`. Stores of the flag outside the class
    (in this file or in the callers' files) leave its value unknown."""
    guards: list = []
    for fn in cls.body:
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found: list = []
            _read_guards(fn, state, frozenset(), found)
            if found and fn is not forward:
                return False
            guards += found
    if not guards:
        return False
    inside = {id(n) for n in walk(cls)}
    for flag in sorted(frozenset.intersection(*guards)):
        if flag == state or q.stored_by_callers(flag):
            continue
        outside = [n for n in q.nodes() if isinstance(n, ast.Attribute) and n.attr == flag
                   and isinstance(n.ctx, (ast.Store, ast.Del)) and id(n) not in inside]
        if not outside and _flag_set_around_forward(flag, cls):
            return True
    return False


# nn.Module's own methods that take an attribute's name: registering a buffer that way resets nothing.
_TORCH_BY_NAME = frozenset(("register_buffer", "register_parameter", "register_module", "add_module", "get_buffer",
                            "get_parameter", "get_submodule", "__getattr__", "__getattribute__", "__setattr__"))


def _registers_by_name(call: ast.Call, state: str) -> bool:
    """`self.register_state("running_keys", default)`: a method of the class (not one of nn.Module's own) handed
    the state's name as its first argument. The class then keeps the state by name, as an incremental-decoding
    cache does whose `statefulness()` context writes every registered name back to its default
    (`self._buffers[name] = default.clone()`) when the sequence ends."""
    f = call.func
    return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" \
        and f.attr not in _TORCH_BY_NAME and bool(call.args) and isinstance(call.args[0], ast.Constant) \
        and call.args[0].value == state


def _no_grad_decorated(fn: ast.FunctionDef, q) -> bool:
    for d in fn.decorator_list:
        name = q.qualname(d.func if isinstance(d, ast.Call) else d) or ""
        if name in ("torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad"):
            return True
    return False


class ModuleStateKeepsGraph(Rule):
    code = "GS413"
    name = "module-state-keeps-graph"
    severity = Severity.WARNING
    summary = ("A module's `forward` feeds a submodule's output back into it through an attribute "
               "(`out, self.hidden = self.lstm(x, self.hidden)`): the next call builds on a graph the last "
               "backward freed.")
    events = (FileEvent, SelfStoreEvent)
    what_it_does = ("Flags a statement in an `nn.Module`'s `forward` that passes `self.<state>` to a submodule "
                    "of the class (`self.lstm`, `self.rnn`, ...; also as `self.<state> if cond else None` or "
                    "`self.<state> or init`) and stores that call's result back into `self.<state>`, directly or "
                    "through the local the call bound (`a, cov = self.attention(enc, self.cov)`, then "
                    "`self.cov = cov`), when nothing detaches or resets the state: no `.detach()` of it in the "
                    "class, no other method or statement of `forward` assigning it (a `reset_hidden()`; a lazy "
                    "initialisation under `if self.<state> is None:` or `if not hasattr(self, ...)` is no reset), "
                    "no `x.<state> = ...` elsewhere in the file or in another workspace file that imports it (or "
                    "that such a file imports: the training helper it hands the model to), no method of the class "
                    "(other than nn.Module's "
                    "own `register_buffer`...) handed the state's name (`self.register_state(\"keys\", ...)`: a "
                    "cache its own machinery resets by name, like an incremental decoder's), and `forward` is not run under "
                    "`torch.no_grad()`. It stays quiet in a file that calls "
                    "backward itself: there the training loop is visible and GS402 follows the state through it "
                    "and reports this statement when the carry really happens. Nor does it report a state "
                    "read back only under a flag of the module that must be off (`if not self.is_training: return "
                    "self.final_embeds[:n], ...`), where every method of the class that changes the flag runs "
                    "`forward` and sets it to a constant in its own body, on before its first `forward` (the "
                    "training entry) and off only after its last (`full_predict`), with no store of the flag "
                    "outside the class: a training step never reads what an earlier one stored, only the "
                    "evaluation batches after `full_predict` reuse its result.")
    why_bad = ("The stored state is the submodule's output, with the graph of this call. The next `forward` "
               "starts from it, so the next loss's graph reaches back into this step's graph, whose saved "
               "tensors the first `backward()` freed: the second training step raises \"Trying to backward "
               "through the graph a second time\" (and until then every step's graph stays alive).")
    example = ("class Tagger(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
               "        self.lstm = nn.LSTM(3, 4, batch_first=True)\n        self.hidden = None\n\n"
               "    def forward(self, x):\n        out, self.hidden = self.lstm(x, self.hidden)\n        return out")
    use_instead = ("class Tagger(nn.Module):\n    ...\n    def forward(self, x):\n"
                   "        out, hidden = self.lstm(x, self.hidden)\n"
                   "        self.hidden = tuple(h.detach() for h in hidden)  # carry the values, not the graph\n"
                   "        return out")
    fix_safety = ("This rule offers no automatic fix: whether to carry the detached state (truncated BPTT) or to "
                  "start each batch from a fresh state is a modelling choice.")
    references = ("https://pytorch.org/tutorials/beginner/former_torchies/autograd_tutorial_old.html",
                  "https://discuss.pytorch.org/t/solved-why-we-need-to-detach-variable-which-contains-hidden-representation/1426")

    _head = ("import torch\nimport torch.nn as nn\n\n\nclass Tagger(nn.Module):\n    def __init__(self):\n"
             "        super().__init__()\n        self.lstm = nn.LSTM(3, 4, batch_first=True)\n"
             "        self.hidden = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))\n\n")
    # What a training step leaves on the module: a state with a graph (the next step's backward raises).
    _probe = ("silent: (m := Tagger()) is not None and m(torch.randn(2, 5, 3)).sum().backward() is None "
              "and m.hidden[0].grad_fn is not None")
    # A decoder that carries an attention coverage vector on the module (stanza's summarisation decoder).
    _att = ("import torch\nimport torch.nn as nn\n\n\nclass Attention(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.score = nn.Linear(4, 1)\n\n"
            "    def forward(self, enc, cov=None):\n        e = self.score(enc).squeeze(-1)\n"
            "        a = torch.softmax(e if cov is None else e + cov, -1)\n"
            "        return a, (a if cov is None else cov + a)\n\n\nclass Decoder(nn.Module):\n"
            "    def __init__(self, coverage=True):\n        super().__init__()\n        self.attention = Attention()\n"
            "        self.coverage = coverage\n        self.cov = None\n\n")
    _ret = "        return (a.unsqueeze(-1) * enc).sum(1)\n"
    # RLMRec's graph recommenders: `forward` caches the propagated embeddings and returns them while a flag is off.
    _cache = ("import torch\nimport torch.nn as nn\n\n\nclass GCCF(nn.Module):\n    def __init__(self, n=5, d=4):\n"
              "        super().__init__()\n        self.adj = torch.rand(n, n)\n"
              "        self.embeds = nn.Parameter(torch.randn(n, d))\n        self.layer = nn.Linear(d, d)\n"
              "        self.is_training = True\n\n    def forward(self):\n        if not self.is_training:\n"
              "            return self.final_embeds\n"
              "        embeds = torch.cat([self.embeds, self.layer(self.adj @ self.embeds)], -1)\n"
              "        self.final_embeds = embeds\n        return embeds\n\n    def cal_loss(self, idx):\n"
              "        self.is_training = True\n        embeds = self.forward()\n"
              "        return embeds[idx].square().sum()\n\n    def full_predict(self, idx):\n"
              "        embeds = self.forward()\n        self.is_training = False\n"
              "        return embeds[idx] @ embeds.T\n")
    _att_probe = ("silent: (m := Decoder()) is not None and m(torch.randn(2, 5, 4)).sum().backward() is None "
                  "and m.cov.grad_fn is not None")
    valid = (
        # The same history kept detached.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass HistLoss(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.hist = torch.rand(10, 1)\n\n"
              "    def forward(self, outputs, targets):\n"
              "        loss = ((outputs - self.hist[-outputs.size(0):]) ** 2).mean()\n"
              "        self.hist = torch.cat((self.hist[outputs.size(0):], outputs.detach()))\n        return loss\n\n\n"
              "crit = HistLoss()\nw = torch.randn(4, 1, requires_grad=True)\nfor _ in range(2):\n"
              "    crit(w * 2, None)\nassert crit.hist.grad_fn is None\n"),
        # The carried coverage is stored detached (the fix of stanza's decoder).
        Valid(_att + "    def forward(self, enc):\n        a, cov = self.attention(enc, self.cov)\n"
              "        self.cov = cov.detach()\n" + _ret),
        Valid(_att + "    def forward(self, enc):\n        if self.coverage and self.cov is None:\n"
              "            self.cov = torch.zeros(enc.shape[0], enc.shape[1])\n"
              "        a, cov = self.attention(enc, cov=self.cov if self.coverage else None)\n"
              "        if self.coverage:\n            self.cov = cov.detach()\n" + _ret),
        Valid(_att + "    def forward(self, enc):\n        a, cov = self.attention(enc, self.cov)\n"
              "        cov = cov.detach()\n        self.cov = cov\n" + _ret),
        # `forward` starts every call from a fresh state: the carry stays inside one graph.
        Valid(_att + "    def forward(self, enc):\n        self.cov = torch.zeros(enc.shape[0], enc.shape[1])\n"
              "        for _ in range(3):\n            a, cov = self.attention(enc, self.cov)\n"
              "            self.cov = cov\n" + _ret),
        # Kept for inspection, never fed back.
        Valid(_att + "    def forward(self, enc):\n        a, cov = self.attention(enc)\n"
              "        self.cov = cov\n" + _ret),
        Valid(_head + "    def forward(self, x):\n        out, hidden = self.lstm(x, self.hidden)\n"
              "        self.hidden = tuple(h.detach() for h in hidden)\n        return out[:, -1, :]\n"),
        Valid(_head + "    def forward(self, x):\n        out, _ = self.lstm(x)\n        return out[:, -1, :]\n"),
        # The state is reset by a method the training loop calls each batch.
        Valid(_head + "    def reset(self):\n        self.hidden = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))\n\n"
              "    def forward(self, x):\n        out, self.hidden = self.lstm(x, self.hidden)\n        return out[:, -1, :]\n"),
        # The caller resets it (the PyTorch tutorial's `model.hidden = model.init_hidden()`).
        Valid(_head + "    def forward(self, x):\n        out, self.hidden = self.lstm(x, self.hidden)\n"
              "        return out[:, -1, :]\n\n\ndef step(model, x):\n"
              "    model.hidden = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))\n    return model(x)\n"),
        # An incremental-decoding key cache kept under a name the class registers (meshed-memory-transformer's
        # `register_state`): the `statefulness()` context that turns it on writes every registered state back to
        # its detached default when the sequence ends, so the next step starts from no graph.
        Valid("from contextlib import contextmanager\n\nimport torch\nimport torch.nn as nn\n\n\n"
              "class Stateful(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self._is_stateful = False\n        self._state_names = []\n        self._state_defaults = {}\n\n"
              "    def register_state(self, name, default):\n        self._state_names.append(name)\n"
              "        self._state_defaults[name] = default.clone().detach()\n"
              "        self.register_buffer(name, default)\n\n    @contextmanager\n    def statefulness(self):\n"
              "        self._is_stateful = True\n        try:\n            yield\n        finally:\n"
              "            for name in self._state_names:\n"
              "                self._buffers[name] = self._state_defaults[name].clone()\n"
              "            self._is_stateful = False\n\n\nclass CachedAttention(Stateful):\n"
              "    def __init__(self, d=4):\n        super().__init__()\n        self.fc = nn.Linear(d, d)\n"
              "        self.register_state(\"running_keys\", torch.zeros(1, 0, d))\n\n    def forward(self, q, k):\n"
              "        if self._is_stateful:\n            self.running_keys = torch.cat([self.running_keys, k], 1)\n"
              "            k = self.running_keys\n"
              "        return torch.softmax(q @ k.transpose(1, 2), -1) @ self.fc(k)\n\n\n"
              "att = CachedAttention()\nx = nn.Parameter(torch.randn(1, 1, 4))\nwith att.statefulness():\n"
              "    for _ in range(3):\n        y = att(x, x * 2)\n"
              "assert y.grad_fn is not None and att.running_keys.grad_fn is None\n"),
        # Read back only while the flag is off: the training entry turns it on before its `forward`, the evaluation
        # entry off after its own (run under no_grad by the trainer), so no training step reads a stored graph.
        Valid(_cache + "\n\nm = GCCF()\nloss = m.cal_loss(torch.arange(2))\nwith torch.no_grad():\n"
              "    for users in (torch.arange(2), torch.arange(2, 4)):\n        preds = m.full_predict(users)\n"
              "assert m.final_embeds.grad_fn is None and m.cal_loss(torch.arange(2)).grad_fn is not None\n"),
        # Inference only.
        Valid(_head + "    @torch.no_grad()\n    def forward(self, x):\n        out, self.hidden = self.lstm(x, self.hidden)\n"
              "        return out[:, -1, :]\n"),
    )
    invalid = (
        # A loss module keeping a history of its predictions (catalyst's RocStarLoss): known by value, not by a
        # submodule call. The next call's loss reads the previous call's graph.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass HistLoss(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.hist = torch.rand(10, 1)\n\n"
                "    def forward(self, outputs, targets):\n"
                "        loss = ((outputs - self.hist[-outputs.size(0):]) ** 2).mean()\n"
                "        self.hist = torch.cat((self.hist[outputs.size(0):], outputs))\n        return loss\n\n\n"
                "crit = HistLoss()\nw = torch.randn(4, 1, requires_grad=True)\nfor _ in range(2):\n"
                "    crit(w * 2, None)\n", line=12, runtime="silent: crit.hist.grad_fn is not None"),
        # Stored from the local the call bound (tuple unpacking).
        Invalid(_att + "    def forward(self, enc):\n        a, cov = self.attention(enc, self.cov)\n"
                "        self.cov = cov\n" + _ret, line=25, runtime=_att_probe),
        # Fed through a conditional.
        Invalid(_att + "    def forward(self, enc):\n"
                "        a, self.cov = self.attention(enc, cov=self.cov if self.coverage else None)\n" + _ret,
                line=24, runtime=_att_probe),
        # stanza's summarisation decoder (fixed by storing `coverage_vec.detach()`): a lazy initialisation, a
        # conditional argument and a local.
        Invalid(_att + "    def forward(self, enc):\n        if self.coverage and self.cov is None:\n"
                "            self.cov = torch.zeros(enc.shape[0], enc.shape[1])\n"
                "        a, cov = self.attention(enc, cov=self.cov if self.coverage else None)\n"
                "        if self.coverage:\n            self.cov = cov\n" + _ret, line=28, runtime=_att_probe),
        # Initialised once, under `hasattr`.
        Invalid(_att.replace("        self.cov = None\n", "") + "    def forward(self, enc):\n"
                "        if not hasattr(self, \"cov\"):\n"
                "            self.cov = torch.zeros(enc.shape[0], enc.shape[1])\n"
                "        a, self.cov = self.attention(enc, self.cov)\n" + _ret, line=25, runtime=_att_probe),
        # The training entry never turns the flag back on: after an evaluation, every training step reads the
        # embeddings the evaluation stored, whose graph the first backward frees (the second raises).
        Invalid(_cache.replace("        self.is_training = True\n        embeds", "        embeds"), line=17,
                runtime="silent: (m := GCCF()) is not None and m.full_predict(torch.arange(2)) is not None "
                        "and m.cal_loss(torch.arange(2)).backward() is None and not m.is_training "
                        "and m.final_embeds.grad_fn is not None"),
        # cnslab_fmri's fMRI_LSTM had this shape (its training loop was in another file).
        Invalid(_head + "    def forward(self, x):\n        out, self.hidden = self.lstm(x, self.hidden)\n"
                "        return out[:, -1, :]\n", line=12, runtime=_probe),
        Invalid(_head.replace("self.hidden = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))",
                              "self.cell = nn.GRUCell(3, 4)\n        self.hidden = (torch.zeros(2, 4),)")
                + "    def forward(self, x):\n        h = self.cell(x[:, 0, :], self.hidden[0])\n"
                "        self.hidden = (self.cell(x[:, 1, :], h),)\n        return self.hidden[0]\n", line=14,
                runtime="silent: (m := Tagger()) is not None and m(torch.randn(2, 5, 3)).sum().backward() is None "
                        "and m.hidden[0].grad_fn is not None"),
    )

    def check(self, event, report) -> None:
        if isinstance(event, SelfStoreEvent):
            self.check_store(event, report)
            return
        q = event.query
        if "backward" in q.attrs:
            return  # the training loop is in this file: the interpreter follows the state (GS402)
        if not q.attr_stores or not imports_torch(q):
            return  # no attribute is stored, or no submodule can be built (`nn.LSTM(...)` needs torch)
        # Every keystroke runs this: look only at assignments that store into an attribute of `self` and call a
        # method or submodule of `self` on their right-hand side, or store a local bound in the function (a
        # handful per file), walking nothing else.
        subs_of: dict = {}
        # Locals some statement binds from a call of a method or submodule of `self` (`a, cov = self.attention(..)`).
        # (both surveys are kept per top-level statement while it is unchanged: `Query.per_statement`)
        locals_ = set().union(*q.per_statement("GS413.self-call-locals", _self_call_locals))
        for stmt, stored, self_calls in q.surveyed("GS413.state-stores", _state_stores):
            local = stmt.value.id if isinstance(stmt.value, ast.Name) and stmt.value.id in locals_ else None
            calls = [] if local else self_calls
            if not calls and not local:
                continue
            forward = q.enclosing_function(stmt)
            if not isinstance(forward, ast.FunctionDef) or forward.name != "forward" or not forward.args.args \
                    or forward.args.args[0].arg != "self" or _no_grad_decorated(forward, q):
                continue
            cls = q.enclosing(forward, (ast.ClassDef,))
            if cls is None or not q.is_module_class(cls):
                continue
            if id(cls) not in subs_of:
                subs_of[id(cls)] = _submodules(cls, q)
            subs = subs_of[id(cls)]
            if local:
                # Stored from a local the submodule call just bound (`a, cov = self.attention(enc, self.cov)`,
                # then `self.cov = cov`): the state must be fed to that very call.
                bound = _binding_call(local, stmt, forward, subs)
                if bound is None:
                    continue
                fed = _fed_state([bound])
            else:
                calls = [c for c in calls if _self_attr(c.func) in subs]
                if not calls:
                    continue
                # Fed to the submodule in this statement (`out, self.h = self.lstm(x, self.h)`), or in an earlier
                # one of the same `forward` (a cell run twice: `h = self.cell(x0, self.h)`, `self.h = self.cell(x1,
                # h)`).
                fed = _fed_state(calls) if stmt.value in calls else _fed_state(
                    [c for c in walk(forward) if isinstance(c, ast.Call) and _self_attr(c.func) in subs])
            for state in sorted(stored & fed):
                if not self._released(state, stmt, cls, q) and not _read_only_with_flag_off(state, forward, cls, q):
                    report.add(self, stmt,
                               f"`self.{state}` keeps this call's graph for the next `forward`, so the next "
                               f"step's backward raises. Store it detached (`.detach()`) or reset it each batch.")

    def check_store(self, event: SelfStoreEvent, report) -> None:
        """`self.history = torch.cat((self.history[n:], outputs))` in `forward` (catalyst's `RocStarLoss`), the
        stored value surely carrying a graph (known by value, not by the shape of a submodule call), and `forward`
        reading the attribute: the next call builds on this call's graph."""
        tree = report.tree
        if tree is None or not isinstance(event.node, ast.Assign):
            return
        q = tree_query(self, tree)
        if "backward" in q.attrs:
            return  # the training loop is in this file: GS402 reports the kept graph at this assignment
        state = event.key.split(".", 1)[1]
        forward = q.enclosing_function(event.node)
        cls = q.enclosing(forward, (ast.ClassDef,)) if forward is not None else None
        if not isinstance(forward, ast.FunctionDef) or cls is None or _no_grad_decorated(forward, q):
            return
        end = event.node.end_lineno or event.node.lineno
        reads = [n for n in walk(forward) if isinstance(n, ast.Attribute) and n.attr == state
                 and isinstance(n.value, ast.Name) and n.value.id == "self" and isinstance(n.ctx, ast.Load)
                 and n.lineno <= end]
        if not reads or self._released(state, event.node, cls, q) or _read_only_with_flag_off(state, forward, cls, q):
            return
        report.add(self, event.node,
                   f"`self.{state}` keeps this call's graph for the next `forward`, so the next step's backward "
                   f"raises. Store it detached (`.detach()`) or reset it each batch.")

    @staticmethod
    def _released(state: str, carry: ast.Assign, cls: ast.ClassDef, q) -> bool:
        """Does anything detach or reset the state: `.detach()`/`.detach_()` on it in the class, another method
        (not `__init__`) or another statement of `forward` assigning it (except a lazy initialisation under
        `if self.<state> is None:`), or `x.<state> = ...` outside the class, in this file or in the workspace files
        around its callers (`Query.stored_by_callers`)? (`del self.<state>` counts as an assignment: it resets a state
        initialised under `if not hasattr(self, ...)`.)"""
        inside = {id(n) for n in walk(cls)}
        for n in q.nodes():
            if isinstance(n, ast.Call) and id(n) in inside and _registers_by_name(n, state):
                return True  # the class manages the state by name (a cache its own machinery resets)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("detach", "detach_"):
                for sub in walk(n.func.value):
                    if isinstance(sub, ast.Attribute) and sub.attr == state:
                        return True
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)) and n is not carry:
                targets = n.targets if isinstance(n, (ast.Assign, ast.Delete)) else [n.target]
                stores = {t.attr for tt in targets for t in walk(tt)
                          if isinstance(t, ast.Attribute) and isinstance(t.ctx, (ast.Store, ast.Del))}
                if state not in stores:
                    continue
                if id(n) not in inside:
                    return True  # the caller resets it
                fn = q.enclosing_function(n)
                if fn is None or getattr(fn, "name", "") != "__init__" and not _lazy_init(state, n, q):
                    return True
        # The callers in other workspace files, read the same way: the file that builds the model (imports this one)
        # or a helper it hands the model to stores the attribute on it (`model.hidden = model.init_hidden()`).
        return q.stored_by_callers(state)
