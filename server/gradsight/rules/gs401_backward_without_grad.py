from __future__ import annotations

from ..engine.report import text as msg
from ..engine.report import Note
from ..engine.events import BackwardEvent
from ..engine.values import GRAD_MODE_OFF, ONLY_FROM_NO_GRAD, Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid, at

_ERROR = "element 0 of tensors does not require grad and does not have a grad_fn"


def root_cause(fact):
    """The earliest fact in a chain that names a real cause (a detach, a no_grad block, a round trip)."""
    chain = fact.chain() if fact is not None else []
    for f in chain:
        if f.kind not in (ONLY_FROM_NO_GRAD, GRAD_MODE_OFF):
            return f
    return chain[0] if chain else None


_GATED_NET = ("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.gen = nn.Linear(4, 4)\n\n    def tune(self):\n"
              "        w = torch.randn(3, 4, requires_grad=True)\n        loss = self.gen(w).pow(2).sum()\n"
              "        loss.backward()\n\n    def forward(self, z):\n        if self.training and z.size(0) > 0:\n"
              "            self.tune()\n        return self.gen(z).sum()\n\n\n")


# A critic update whose loss module takes the target (computed under `no_grad`) first and the prediction of a
# network handed in second (DeepRL_Algorithms' TD3; bench/fresh21-false/01). `{pred}` is the prediction argument.
_CRITIC = ("import torch\nimport torch.nn as nn\n\n\n"
           "def critic_step(net, target_1, target_2, optimizer, s, a, rewards, next_s, gamma):\n"
           "    with torch.no_grad():\n"
           "        target = rewards + gamma * torch.min(target_1(next_s, a), target_2(next_s, a))\n"
           "    values = net(s, a)\n    loss = nn.MSELoss()(target, {pred})\n"
           "    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n\n\n"
           "class Value(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
           "        self.fc = nn.Linear(4, 1)\n\n    def forward(self, s, a):\n"
           "        return self.fc(torch.cat([s, a], 1))\n\n\nnet = Value()\n"
           "critic_step(net, Value(), Value(), torch.optim.SGD(net.parameters(), lr=0.1), torch.randn(8, 3),\n"
           "            torch.randn(8, 1), torch.randn(8, 1), torch.randn(8, 3), 0.99)\n")


# Shared train/eval code: the update (zero_grad, backward, step) runs only `if is_train:`, and the evaluation call
# under `no_grad` passes a flag the analysis cannot decide (from the command line): a gate, not a claim.
_GATED_EPOCH = ("import sys\n\nimport torch\nimport torch.nn as nn\n\n\n"
                 "def run_epoch(model, loader, loss_fn, optimizer, is_train):\n    total = 0.0\n"
                 "    for x, y in loader:\n        loss = loss_fn(model(x), y)\n        if is_train:\n"
                 "            optimizer.zero_grad()\n            loss.backward()\n            optimizer.step()\n"
                 "        total += loss.item()\n    return total\n\n\n"
                 "model = nn.Linear(4, 2)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                 "loader = [(torch.randn(3, 4), torch.tensor([0, 1, 0]))]\nflag = \"--train-in-eval\" in sys.argv\n"
                 "run_epoch(model, loader, nn.CrossEntropyLoss(), optimizer, True)\nwith torch.no_grad():\n"
                 "    run_epoch(model, loader, nn.CrossEntropyLoss(), optimizer, {flag})\n")


class BackwardWithoutGrad(Rule):
    code = "GS401"
    name = "backward-without-grad"
    severity = Severity.ERROR
    summary = "backward() on a tensor with no autograd history raises 'element 0 of tensors does not require grad'."
    events = (BackwardEvent,)
    what_it_does = ("Flags `t.backward()`, `torch.autograd.backward(t)` and `torch.autograd.grad(t, ...)` where `t` "
                    "certainly does not require grad, and names the cause: a `.detach()`, a forward pass under "
                    "`torch.no_grad()`, a round trip through `.tolist()`/`.item()`/NumPy rebuilt with "
                    "`torch.tensor()`, or inputs that never required grad.")
    why_bad = ("PyTorch raises `RuntimeError: element 0 of tensors does not require grad and does not have a "
               "grad_fn`. Popular explanations blame \"backward twice\" or the target tensor; the real cause is "
               "always upstream, where the history was cut or never started.")
    example = "with torch.no_grad():\n    pred = model(x)\nloss = ((pred - y) ** 2).mean()\nloss.backward()"
    use_instead = "pred = model(x)\nloss = ((pred - y) ** 2).mean()\nloss.backward()"
    references = ("https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation",)
    valid = (
        Valid(_GATED_EPOCH.format(flag="flag")),
        # Torch differentiates every argument of a loss module: the prediction second still gives the loss history.
        Valid(_CRITIC.format(pred="values")),
        # A boosting ensemble's output converted with `torch.as_tensor(out, dtype=...)` where `out` comes from a
        # method whose first return is a plain constant (rtdl's GrowNet; bench/fresh19-false/08): as_tensor of a
        # tensor keeps its history, so the loss has a graph.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Ensemble:\n    def __init__(self, c0):\n"
              "        self.models = []\n        self.c0 = c0\n        self.boost = nn.Parameter(torch.tensor(0.5))\n\n"
              "    def forward_grad(self, x):\n        if len(self.models) == 0:\n            return None, self.c0\n"
              "        pred = sum(m(x) for m in self.models)\n        return pred, self.c0 + self.boost * pred\n\n\n"
              "net = Ensemble(0.1)\nnet.models.append(nn.Linear(3, 1))\n_, out = net.forward_grad(torch.randn(4, 3))\n"
              "out = torch.as_tensor(out, dtype=torch.float32).view(-1, 1)\n"
              "loss = nn.functional.mse_loss(out, torch.randn(4, 1))\nloss.backward()\n"),
        # A zeros accumulator plus the `create_graph=True` gradients of parameters handed in (a tuple of tensors
        # with history), zipped with another list: it has history at the backward (a Hessian-vector product).
        Valid("import torch\nimport torch.nn as nn\n\n\n"
              "def hess_vec_prod(vec, params, net, criterion, inputs, targets):\n    net.zero_grad()\n"
              "    loss = criterion(net(inputs), targets)\n"
              "    grad_f = torch.autograd.grad(loss, inputs=params, create_graph=True)\n"
              "    prod = torch.zeros(1)\n    for g, v in zip(grad_f, vec):\n"
              "        prod = prod + (g * v).sum()\n    prod.backward()\n\n\n"
              "net = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 3))\n"
              "params = [p for p in net.parameters() if p.dim() > 1]\n"
              "vec = [torch.randn_like(p) for p in params]\n"
              "hess_vec_prod(vec, params, net, nn.CrossEntropyLoss(), torch.randn(8, 4), torch.randint(0, 3, (8,)))\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\ny = (x * 2).sum()\ny.backward()\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    s = x * 2\n"
              "y = (x * s).sum()\ny.backward()\n"),
        Valid("import torch\n\ndef f(t):\n    return t.sum()\n\nf(torch.randn(3)).detach()\n"),
        # Values with history written element by element through an unnamed view (`fx[i][j] = ...`): CopySlices.
        Valid("import torch\nx = torch.randn(2, 2, requires_grad=True)\nfx = torch.zeros_like(x)\nfor i in range(2):\n"
              "    for j in range(2):\n        fx[i][j] = x[i][j] * 2\nfx.sum().backward()\n"),
        # Frozen, then a parameter made trainable again: the output requires grad.
        Valid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 1)\nfor p in model.parameters():\n"
              "    p.requires_grad = False\nmodel.weight.requires_grad_()\nloss = model(torch.randn(2, 4)).sum()\n"
              "loss.backward()\n"),
        # A module argument that defaults to None but is used as an object: calling its attribute would raise on
        # None, so where the code goes on the caller passed a model (the function analysed on its own).
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
              "def train_discriminator(x, autoencoder=None):\n    out = autoencoder.discriminator(x)\n"
              "    loss = F.binary_cross_entropy_with_logits(out, torch.ones_like(out))\n"
              "    loss.backward()\n\n\nclass AE(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.discriminator = nn.Linear(3, 1)\n\n\n"
              "train_discriminator(torch.randn(4, 3), AE())\n"),
        # The no_grad call passes `optimizer=None`: `if optimizer:` is false there, its backward never runs.
        Valid("import torch\nimport torch.nn as nn\n\n\n"
              "def run_epoch(model, loader, loss_fn, optimizer):\n    total = 0.0\n"
              "    for x, y in loader:\n        loss = loss_fn(model(x), y)\n        if optimizer:\n"
              "            optimizer.zero_grad()\n            loss.backward()\n"
              "            optimizer.step()\n        total += loss.item()\n    return total\n\n\n"
              "model = nn.Linear(4, 2)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
              "loader = [(torch.randn(3, 4), torch.tensor([0, 1, 0]))]\n"
              "run_epoch(model, loader, nn.CrossEntropyLoss(), optimizer)\nwith torch.no_grad():\n"
              "    run_epoch(model, loader, nn.CrossEntropyLoss(), None)\n"),
        # The guard written `is False`: the no_grad call passes `evaluate=True`, so its backward never runs.
        Valid("import torch\nimport torch.nn as nn\n\n\n"
              "def run_epoch(model, loader, loss_fn, optimizer, evaluate=False):\n"
              "    for x, y in loader:\n        loss = loss_fn(model(x), y)\n        if evaluate is False:\n"
              "            optimizer.zero_grad()\n            loss.backward()\n            optimizer.step()\n\n\n"
              "model = nn.Linear(4, 2)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
              "loader = [(torch.randn(3, 4), torch.tensor([0, 1, 0]))]\n"
              "run_epoch(model, loader, nn.CrossEntropyLoss(), optimizer, evaluate=False)\nwith torch.no_grad():\n"
              "    run_epoch(model, loader, nn.CrossEntropyLoss(), optimizer, evaluate=True)\n"),
        # A string mode guard: the no_grad call passes "valid", so `if mode == "train":` keeps its backward out.
        Valid("import torch\nimport torch.nn as nn\n\n\n"
              "def procedure(loader, model, loss_fn, optimizer, mode):\n    for x, y in loader:\n"
              "        loss = loss_fn(model(x), y)\n        if mode == \"train\":\n            optimizer.zero_grad()\n"
              "            loss.backward()\n            optimizer.step()\n    return loss.item()\n\n\n"
              "model = nn.Linear(4, 2)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
              "loader = [(torch.randn(3, 4), torch.tensor([0, 1, 0]))]\n"
              "procedure(loader, model, nn.CrossEntropyLoss(), optimizer, \"train\")\nwith torch.no_grad():\n"
              "    procedure(loader, model, nn.CrossEntropyLoss(), None, \"valid\")\n"),
        # `set_grad_enabled(phase == "train")` where every call passes "train".
        Valid("import torch\nimport torch.nn as nn\n\n\n"
              "def step(model, x, phase):\n    with torch.set_grad_enabled(phase == \"train\"):\n"
              "        loss = model(x).pow(2).mean()\n    loss.backward()\n\n\n"
              "step(nn.Linear(4, 2), torch.randn(3, 4), \"train\")\n"),
        # `set_grad_enabled(not volatile)` with `volatile` left False: grad is on (a TRPO loss, evaluated again
        # with `volatile=True` for the line search only).
        Valid("import torch\nimport torch.nn as nn\n\n\ndef trpo_step(policy, states, advantages, old_logp):\n"
              "    def get_loss(volatile=False):\n        with torch.set_grad_enabled(not volatile):\n"
              "            logp = torch.log_softmax(policy(states), -1)[:, 0]\n"
              "            return (-advantages * torch.exp(logp - old_logp)).mean()\n\n"
              "    grads = torch.autograd.grad(get_loss(), list(policy.parameters()))\n"
              "    return grads, get_loss(True).item()\n\n\n"
              "trpo_step(nn.Linear(3, 2), torch.randn(4, 3), torch.randn(4), torch.randn(4))\n"),
        # The backward runs only `if self.training`, and the no_grad call comes right after `net.eval()`
        # (StyleGAN-nada's layer selection in `forward`): it is skipped there.
        Valid(_GATED_NET + "net = Net()\nnet(torch.randn(2, 4)).backward()\nnet.eval()\nwith torch.no_grad():\n"
              "    net(torch.randn(2, 4))\n"),
    )
    invalid = (
        # The look-alike of the undecided update gate: the evaluation call passes `True`, so the update runs there.
        Invalid(_GATED_EPOCH.format(flag="True"), line=10, also=(24,),
                runtime="raises: element 0 of tensors does not require grad"),
        # The look-alike: both arguments of the loss module are without history.
        Invalid(_CRITIC.format(pred="values.detach()"), line=7,
                runtime="raises: element 0 of tensors does not require grad"),
        # The same accumulator over gradients taken without `create_graph=True`: none has history.
        Invalid("import torch\nimport torch.nn as nn\n\n\n"
                "def grad_norm_penalty(params, net, criterion, inputs, targets):\n    net.zero_grad()\n"
                "    loss = criterion(net(inputs), targets)\n"
                "    grads = torch.autograd.grad(loss, inputs=params)\n    penalty = torch.zeros(1)\n"
                "    for g in grads:\n        penalty = penalty + g.pow(2).sum()\n    penalty.backward()\n\n\n"
                "net = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 3))\n"
                "params = [p for p in net.parameters() if p.dim() > 1]\n"
                "grad_norm_penalty(params, net, nn.CrossEntropyLoss(), torch.randn(8, 4), torch.randint(0, 3, (8,)))\n",
                line=12, runtime="raises: element 0 of tensors does not require grad"),
        # The model is a parameter (nothing known about it), but a torch op run under `no_grad` has no history.
        Invalid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
                "def train(model, loader, optimizer):\n    for x, y in loader:\n        with torch.no_grad():\n"
                "            loss = F.cross_entropy(model(x), y)\n        optimizer.zero_grad()\n        loss.backward()\n"
                "        optimizer.step()\n\n\nnet = nn.Linear(3, 2)\n"
                "train(net, [(torch.randn(4, 3), torch.tensor([0, 1, 0, 1]))], torch.optim.SGD(net.parameters(), lr=0.1))\n",
                line=9, runtime="raises: does not require grad"),
        Invalid("import torch\nx = torch.randn(3, requires_grad=True)\nz = (x * 2).detach()\nw = (z + 3).sum()\n"
                "w.backward()\n", line=5, runtime="raises: element 0 of tensors does not require grad"),
        Invalid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(3, 1)\nwith torch.no_grad():\n"
                "    pred = model(torch.randn(4, 3))\nloss = pred.pow(2).mean()\nloss.backward()\n", line=5,
                runtime="raises: element 0 of tensors does not require grad"),
        Invalid("import torch\nimport torch.nn as nn\n\n\ndef normalise(t):\n    values = t.tolist()\n"
                "    return torch.tensor(values) / 2\n\n\nlayer = nn.Linear(4, 3)\n"
                "loss = normalise(layer(torch.randn(2, 4))).sum()\nloss.backward()\n", line=12,
                runtime="raises: element 0 of tensors does not require grad"),
        # Every parameter frozen by a loop, and the input needs no grad: nothing in the loss does.
        Invalid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 1)\nfor p in model.parameters():\n"
                "    p.requires_grad = False\nloss = model(torch.randn(2, 4)).sum()\nloss.backward()\n", line=7,
                runtime="raises: element 0 of tensors does not require grad"),
        # The look-alikes: the model argument that defaults to None is run under no_grad; the no_grad call
        # passes the optimizer, so `if optimizer:` runs the backward there.
        Invalid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
                "def train_discriminator(x, autoencoder=None):\n    with torch.no_grad():\n"
                "        out = autoencoder.discriminator(x)\n"
                "    loss = F.binary_cross_entropy_with_logits(out, torch.ones_like(out))\n"
                "    loss.backward()\n\n\nclass AE(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.discriminator = nn.Linear(3, 1)\n\n\n"
                "train_discriminator(torch.randn(4, 3), AE())\n",
                line=8, runtime="raises: element 0 of tensors does not require grad"),
        Invalid("import torch\nimport torch.nn as nn\n\n\n"
                "def run_epoch(model, loader, loss_fn, optimizer):\n    total = 0.0\n"
                "    for x, y in loader:\n        loss = loss_fn(model(x), y)\n        if optimizer:\n"
                "            optimizer.zero_grad()\n            loss.backward()\n"
                "            optimizer.step()\n        total += loss.item()\n    return total\n\n\n"
                "model = nn.Linear(4, 2)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "loader = [(torch.randn(3, 4), torch.tensor([0, 1, 0]))]\n"
                "run_epoch(model, loader, nn.CrossEntropyLoss(), optimizer)\nwith torch.no_grad():\n"
                "    run_epoch(model, loader, nn.CrossEntropyLoss(), optimizer)\n",
                line=8, runtime="raises: element 0 of tensors does not require grad", also=(21,)),
        # The look-alike of the `is False` guard: the no_grad call passes `evaluate=False` too.
        Invalid("import torch\nimport torch.nn as nn\n\n\n"
                "def run_epoch(model, loader, loss_fn, optimizer, evaluate=False):\n"
                "    for x, y in loader:\n        loss = loss_fn(model(x), y)\n        if evaluate is False:\n"
                "            optimizer.zero_grad()\n            loss.backward()\n            optimizer.step()\n\n\n"
                "model = nn.Linear(4, 2)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "loader = [(torch.randn(3, 4), torch.tensor([0, 1, 0]))]\n"
                "run_epoch(model, loader, nn.CrossEntropyLoss(), optimizer, evaluate=False)\nwith torch.no_grad():\n"
                "    run_epoch(model, loader, nn.CrossEntropyLoss(), optimizer, evaluate=False)\n",
                line=7, runtime="raises: element 0 of tensors does not require grad", also=(18,)),
        # The look-alike of the string guard: the no_grad call passes "train" too.
        Invalid("import torch\nimport torch.nn as nn\n\n\n"
                "def procedure(loader, model, loss_fn, optimizer, mode):\n    for x, y in loader:\n"
                "        loss = loss_fn(model(x), y)\n        if mode == \"train\":\n            optimizer.zero_grad()\n"
                "            loss.backward()\n            optimizer.step()\n    return loss.item()\n\n\n"
                "model = nn.Linear(4, 2)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "loader = [(torch.randn(3, 4), torch.tensor([0, 1, 0]))]\n"
                "procedure(loader, model, nn.CrossEntropyLoss(), optimizer, \"train\")\nwith torch.no_grad():\n"
                "    procedure(loader, model, nn.CrossEntropyLoss(), optimizer, \"train\")\n",
                line=7, runtime="raises: element 0 of tensors does not require grad", also=(19,)),
        # `set_grad_enabled(phase == "train")` called with "val", then a backward.
        Invalid("import torch\nimport torch.nn as nn\n\n\n"
                "def step(model, x, phase):\n    with torch.set_grad_enabled(phase == \"train\"):\n"
                "        loss = model(x).pow(2).mean()\n    loss.backward()\n\n\n"
                "step(nn.Linear(4, 2), torch.randn(3, 4), \"val\")\n",
                line=7, runtime="raises: element 0 of tensors does not require grad"),
        # The look-alikes of the `self.training` guard: a function handed the model puts it back in training
        # mode before the no_grad call; the model is put in eval mode on one path only.
        Invalid(_GATED_NET + "def fit(model):\n    model.train()\n\n\nnet = Net()\nnet.eval()\nfit(net)\n"
                "with torch.no_grad():\n    net(torch.randn(2, 4))\n",
                line=12, runtime="raises: element 0 of tensors does not require grad"),
        Invalid(_GATED_NET + "def run(model, x, evaluate):\n    if evaluate:\n        model.eval()\n"
                "    with torch.no_grad():\n        return model(x)\n\n\nrun(Net(), torch.randn(2, 4), False)\n",
                line=12, runtime="raises: element 0 of tensors does not require grad"),
    )

    def check(self, event: BackwardEvent, report) -> None:
        t = event.target
        if t.rg is not Tri.NO or event.guarded_off:
            return
        cause = root_cause(t.nograd)
        chain = t.nograd.chain() if t.nograd is not None else []
        related = [f for f in chain if f.kind != ONLY_FROM_NO_GRAD]
        line = report.source.span(event.node)[0]
        api = event.api.split(".")[-1]
        raises = Note(line, report.source.span(event.node)[1],
                      f"raises here: \"{_ERROR}\"")
        # The statement to change is the computation that ran with grad mode off, when it is in this file and not
        # the backward's own line: report there, with the failing backward in `related`.
        root = next((f for f in chain if f.kind == GRAD_MODE_OFF
                     and f.path is None and f.line != line), None)
        if root is not None:
            text = report.source.line_text(root.line)
            start = len(text) - len(text.lstrip()) + 1
            report.add(self, event.node,
                       msg(f"This runs with grad mode disabled, so `{event.expr}.{api}()` at line ", line, " raises."),
                       related=[f for f in related if f is not root] + [raises],
                       span=(root.line, start, root.line, len(text) + 1))
            return
        why = msg(f" {cause.text[0].upper()}{cause.text[1:]} (", at(cause), ").") if cause else ""
        report.add(self, event.node, msg(f"`{event.expr}` has no autograd history, so `{api}` raises.", why),
                   related=related)
