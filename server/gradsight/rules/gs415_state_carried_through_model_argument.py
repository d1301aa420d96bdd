from __future__ import annotations

import ast

from ..engine.astwalk import walk
from ..engine.query import FileEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


def _names(node: ast.AST) -> set:
    return {n.id for n in walk(node) if isinstance(n, ast.Name)}


def _backwards(loop: ast.AST) -> bool:
    return any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
               and c.func.attr in ("backward", "manual_backward") for c in walk(loop))


def _released(name: str, loop: ast.AST, carry: ast.Assign) -> bool:
    """Is `name` detached or rebound anywhere else in the loop (`h = h.detach()`, `h = repackage_hidden(h)`,
    `h.detach_()`, `h = None`, a loop target)?"""
    for n in walk(loop):
        if isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)) and name in _names(n.target):
            return True
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and n is not carry:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(name in _names(t) for t in targets):
                return True
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Attribute) and f.attr in ("detach", "detach_") and name in _names(f.value):
                return True
            spelled = ast.unparse(f).lower()
            if any(isinstance(a, ast.Name) and a.id == name for a in n.args) \
                    and any(w in spelled for w in ("detach", "repackage")):
                return True
    return False



_OPTIMIZER_USES = frozenset({"step", "zero_grad", "param_groups", "add_param_group"})


def _optimizers(fn: ast.AST) -> set:
    """Names `fn` uses as optimizers (`opt.zero_grad()`, `opt.step()`, `opt.param_groups`): `optimizer =
    lr_scheduler(optimizer, epoch, lr)` hands an optimizer back, no state of a model (MAS; bench/fresh34-false/01)."""
    return {n.value.id for n in ast.walk(fn) if isinstance(n, ast.Attribute) and n.attr in _OPTIMIZER_USES
            and isinstance(n.value, ast.Name)} if fn is not None else set()

class StateCarriedThroughModelArgument(Rule):
    code = "GS415"
    name = "state-carried-through-model-argument"
    severity = Severity.WARNING
    summary = ("A training loop feeds a model's state output back into it (`out, hidden = model(x, hidden)`) "
               "without detaching it: the next iteration's backward goes into the freed graph.")
    events = (FileEvent,)
    what_it_does = ("Flags `out, hidden = model(x, hidden)` (any statement that passes a name to a call and binds "
                    "the call's result back to it) in a loop that calls backward, when the model is a parameter "
                    "of the function (`def train(model, loader, optimizer)`) or a model a trainer class was handed "
                    "(`self.model = model` in `__init__`, then `self.model(x, hidden)`), where gradsight cannot see "
                    "what it returns, and nothing in the loop detaches, repackages or resets the state. Where the model is "
                    "visible the interpreter follows the state itself and GS402 reports the carry.")
    why_bad = ("The state the model returns is part of this iteration's graph. `loss.backward()` frees that graph, "
               "and the next iteration's graph starts from the state, so its backward raises \"Trying to backward "
               "through the graph a second time\" (with `retain_graph=True` it instead backpropagates through every "
               "earlier batch, slower each step). Truncated backpropagation through time detaches the state at "
               "each step.")
    example = ("def train(model, loader, optimizer):\n    hidden = None\n    for x, y in loader:\n"
               "        out, hidden = model(x, hidden)\n        loss = F.cross_entropy(out, y)\n"
               "        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()")
    use_instead = ("def train(model, loader, optimizer):\n    hidden = None\n    for x, y in loader:\n"
                   "        out, hidden = model(x, hidden)\n        hidden = hidden.detach()  # keep the values, not the graph\n"
                   "        loss = F.cross_entropy(out, y)\n        optimizer.zero_grad()\n        loss.backward()\n"
                   "        optimizer.step()")
    fix_safety = ("This rule offers no automatic fix: an LSTM's state is a tuple (`tuple(h.detach() for h in "
                  "hidden)`), and whether to carry the detached state or start from a fresh one is a modelling "
                  "choice.")
    references = ("https://discuss.pytorch.org/t/solved-why-we-need-to-detach-variable-which-contains-hidden-representation/1426",)
    # The model class comes through `getattr`, so nothing but its use is visible (as with an imported model).
    _head = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
             "class Tagger(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.rnn = getattr(nn, 'GRU')(3, 4, batch_first=True)\n        self.head = nn.Linear(4, 2)\n\n"
             "    def forward(self, x, h=None):\n        out, h = self.rnn(x, h)\n        return self.head(out[:, -1]), h\n\n\n"
             "def train(model, loader, optimizer):\n    hidden = None\n    for x, y in loader:\n")
    _tail = ("        loss = F.cross_entropy(out, y)\n        optimizer.zero_grad()\n        loss.backward()\n"
             "        optimizer.step()\n\n\nmodel = Tagger()\n"
             "batches = [(torch.randn(2, 5, 3), torch.tensor([0, 1])) for _ in range(3)]\n"
             "train(model, batches, torch.optim.SGD(model.parameters(), lr=0.1))\n")
    valid = (
        Valid(_head + "        out, hidden = model(x, hidden)\n        hidden = hidden.detach()\n" + _tail),
        Valid(_head + "        out, hidden = model(x, None)\n" + _tail),
        # A new state for every batch.
        Valid(_head + "        hidden = None\n        out, hidden = model(x, hidden)\n" + _tail),
        # No backward in the loop: evaluation carries the state on purpose.
        Valid("import torch\n\n\ndef run(model, xs):\n    h = None\n    outs = []\n    for x in xs:\n"
              "        out, h = model(x, h)\n        outs.append(out)\n    return outs\n"),
        # A learning-rate helper handed in that returns the optimizer it was given (`optimizer =
        # lr_scheduler(optimizer, epoch, lr)`, MAS-Memory-Aware-Synapses; bench/fresh34-false/01): no model state.
        Valid('import torch\n\n\ndef exp_lr_scheduler(optimizer, epoch, init_lr=0.0004, lr_decay_epoch=54):\n    lr = init_lr * (0.1 ** (epoch // lr_decay_epoch))\n    for param_group in optimizer.param_groups:\n        param_group[\'lr\'] = lr\n    return optimizer\n\n\ndef train_model(model, criterion, optimizer, lr_scheduler, lr, loader, num_epochs):\n    for epoch in range(num_epochs):\n        optimizer = lr_scheduler(optimizer, epoch, lr)\n        for inputs, labels in loader:\n            optimizer.zero_grad()\n            loss = criterion(model(inputs), labels)\n            loss.backward()\n            optimizer.step()\n    return model\n\n\nif __name__ == "__main__":\n    net = torch.nn.Linear(3, 2)\n    opt = torch.optim.SGD(net.parameters(), lr=0.1)\n    data = [(torch.randn(4, 3), torch.randint(0, 2, (4,))) for _ in range(2)]\n    train_model(net, torch.nn.CrossEntropyLoss(), opt, exp_lr_scheduler, 0.1, data, 3)\n    print("runs: every backward in every epoch")\n'),
    )
    invalid = (
        # The look-alike: the callable handed in is a recurrent cell, and its state is carried.
        Invalid("import torch\n\n\ndef train_model(model, criterion, optimizer, cell, loader, num_epochs):\n    state = torch.zeros(4, 3)\n    for epoch in range(num_epochs):\n        for inputs, labels in loader:\n            optimizer.zero_grad()\n            state = cell(inputs, state)\n            loss = criterion(model(state), labels)\n            loss.backward()\n            optimizer.step()\n    return model\n\n\nnet, rnn = torch.nn.Linear(3, 2), getattr(torch.nn, 'RNNCell')(3, 3)\nopt = torch.optim.SGD(list(net.parameters()) + list(rnn.parameters()), lr=0.1)\ndata = [(torch.randn(4, 3), torch.randint(0, 2, (4,))) for _ in range(2)]\ntrain_model(net, torch.nn.CrossEntropyLoss(), opt, rnn, data, 3)\n", line=9,
                runtime="raises: backward through the graph a second time"),
        Invalid(_head + "        out, hidden = model(x, hidden)\n" + _tail, line=20,
                runtime="raises: backward through the graph a second time"),
        # The same in a trainer class that was handed the model.
        Invalid(_head.replace("def train(model, loader, optimizer):\n    hidden = None\n    for x, y in loader:\n",
                              "class Trainer:\n    def __init__(self, model, optimizer):\n        self.model = model\n"
                              "        self.optimizer = optimizer\n\n    def fit(self, loader):\n"
                              "        hidden = None\n        for x, y in loader:\n")
                + "            out, hidden = self.model(x, hidden)\n            loss = F.cross_entropy(out, y)\n"
                  "            self.optimizer.zero_grad()\n            loss.backward()\n            self.optimizer.step()\n\n\n"
                  "model = Tagger()\nbatches = [(torch.randn(2, 5, 3), torch.tensor([0, 1])) for _ in range(3)]\n"
                  "Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1)).fit(batches)\n", line=25,
                runtime="raises: backward through the graph a second time"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "backward" not in q.attrs and "manual_backward" not in q.attrs:
            return
        for stmt in q.assigns:
            call = stmt.value
            if not isinstance(call, ast.Call):
                continue
            bound = set().union(*(_names(t) for t in stmt.targets))
            fed = {a.id for a in [*call.args, *(k.value for k in call.keywords)] if isinstance(a, ast.Name)}
            carried = bound & fed
            if not carried:
                continue
            fn = q.enclosing_function(stmt)
            if not q.handed_in_call(call, fn):
                continue  # only `model(...)` / `self.model(...)` of a model the code was handed
            loop = q.enclosing(stmt, (ast.For, ast.AsyncFor, ast.While))
            if loop is None or q.enclosing_function(loop) is not fn or not _backwards(loop):
                continue
            for name in sorted(carried - _optimizers(fn)):
                if not _released(name, loop, stmt):
                    report.add(self, stmt,
                               f"`{name}` carries this step's graph into the next iteration, whose backward then "
                               f"raises; detach it after this call (`{name} = {name}.detach()`).")
