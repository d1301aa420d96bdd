from __future__ import annotations

from ..engine.events import ModuleMethodOnTensorEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


class ModuleMethodOnTensor(Rule):
    code = "GS519"
    name = "module-method-on-tensor"
    severity = Severity.ERROR
    summary = ("A method only modules or optimizers have (`zero_grad`, `parameters`, `eval`, ...) is called on a "
               "tensor: AttributeError.")
    events = (ModuleMethodOnTensorEvent,)
    what_it_does = ("Flags `t.zero_grad()`, `t.parameters()`, `t.eval()`, `t.train()`, `t.state_dict()`, `t.step()` "
                    "and the other methods of `nn.Module` / `torch.optim.Optimizer` that `torch.Tensor` lacks, where "
                    "`t` is a tensor (made by torch, or a value made to require grad). Typical: clearing an input's "
                    "gradient between backwards with `x.zero_grad()` after `torch.autograd.gradcheck.zero_gradients` "
                    "was removed.")
    why_bad = ("PyTorch raises `AttributeError: 'Tensor' object has no attribute 'zero_grad'` when the line runs. To "
               "clear a tensor's gradient, set `x.grad = None` (or `x.grad.zero_()` when it exists).")
    example = ("x = image.clone().requires_grad_(True)\nfor k in range(num_classes):\n    x.zero_grad()\n"
               "    logits[0, k].backward(retain_graph=True)")
    use_instead = ("x = image.clone().requires_grad_(True)\nfor k in range(num_classes):\n    x.grad = None\n"
                   "    logits[0, k].backward(retain_graph=True)")
    fix_safety = "There is no automatic fix: what the call meant (a module's, an optimizer's, the tensor's `.grad`) is the user's."
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.grad.html",)
    valid = (
        Valid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(3, 2)\nx = torch.randn(1, 3, requires_grad=True)\n"
              "out = model(x)\nfor k in range(2):\n    model.zero_grad()\n    x.grad = None\n"
              "    out[0, k].backward(retain_graph=True)\n"),
        # A module and an optimizer under names that say nothing.
        Valid("import torch\nimport torch.nn as nn\nx = nn.Linear(3, 2)\nt = torch.optim.SGD(x.parameters(), lr=0.1)\n"
              "x.eval()\nt.zero_grad()\nx.train()\n"),
        # DomainBed: a `@staticmethod` of a module called through `self` gets no `self`: `model` is the module.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Algo(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.clf = nn.Linear(3, 2)\n\n    @staticmethod\n"
              "    def neum(v, model, batch):\n        model.eval()\n        out = model(batch)\n        model.train()\n"
              "        return v + out.sum()\n\n    def update(self, x):\n"
              "        g = (self.clf(x) ** 2).sum().detach()\n        return self.neum(g, self.clf, x)\n\n\n"
              "Algo().update(torch.randn(4, 3))\n"),
        # Conv-TasNet: a classmethod's `cls(...)` builds the module; it does not run `forward`.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self, n):\n"
              "        super().__init__()\n        self.fc = nn.Linear(n, n)\n\n    def forward(self, x):\n"
              "        return self.fc(x)\n\n    @classmethod\n    def from_package(cls, package):\n"
              "        model = cls(package['n'])\n        model.load_state_dict(package['state_dict'])\n"
              "        return model\n\n\nNet.from_package({'n': 3, 'state_dict': Net(3).state_dict()})\n"),
        # hidden-networks: a loss module whose `forward` takes the network and sums a penalty over its parameters
        # (bench/fresh19-false/09); a loss module's first argument is a prediction only when used as one.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass L1RegLoss(nn.Module):\n"
              "    def forward(self, model, temperature=1.0):\n        l1 = 0.0\n"
              "        for n, p in model.named_parameters():\n            if n.endswith('weight'):\n"
              "                l1 += (p * temperature).sigmoid().sum()\n        return l1\n\n\n"
              "net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))\n"
              "(L1RegLoss()(net) * 1e-8).backward()\n"),
        # A factory looked up by name and called under the same name (`model = models.__dict__[arch]; model =
        # model(num_classes=10)`, itayhubara/BinaryNet.pytorch; bench/fresh35-false/07): the optimizer built after it
        # trains the module the call made.
        Valid('import torch\nimport torch.nn as nn\n\n\ndef build(num_classes):\n    return nn.Linear(4, num_classes)\n\n\nFACTORIES = {\'linear\': build}\n\n\ndef main(name):\n    model = FACTORIES[name]\n    model = model(num_classes=10)\n    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n    print("OK:", type(model).__name__)\n\n\nif __name__ == \'__main__\':\n    main(\'linear\')\n'),
        # A helper handed a parameter or a module, sorted by `isinstance(m, nn.Parameter)`: the module arm gets the
        # modules only (arthurdouillard/dytox's `freeze_parameters`; bench/fresh34-false/02).
        Valid('import torch\nfrom torch import nn\n\n\ndef freeze_parameters(m, requires_grad=False):\n    if m is None:\n        return\n\n    if isinstance(m, nn.Parameter):\n        m.requires_grad = requires_grad\n    else:\n        for p in m.parameters():\n            p.requires_grad = requires_grad\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.lin = nn.Linear(2, 2)\n        self.pos_embed = nn.Parameter(torch.zeros(1, 2))\n        self.task_tokens = nn.ParameterList([nn.Parameter(torch.zeros(1, 2))])\n\n    def freeze(self, name):\n        if name == \'a\':\n            freeze_parameters(self.lin)\n        elif name == \'b\':\n            freeze_parameters(self.pos_embed)\n        else:\n            pass\n\n\nif __name__ == "__main__":\n    net = Net()\n    for name in ("a", "b", "c"):\n        net.freeze(name)\n'),
    )
    invalid = (
        # The look-alike without the `isinstance` arm: the parameter reaches `m.parameters()`.
        Invalid('import torch\nfrom torch import nn\n\n\ndef freeze_parameters(m, requires_grad=False):\n    if m is None:\n        return\n\n    for p in m.parameters():\n        p.requires_grad = requires_grad\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.lin = nn.Linear(2, 2)\n        self.pos_embed = nn.Parameter(torch.zeros(1, 2))\n        self.task_tokens = nn.ParameterList([nn.Parameter(torch.zeros(1, 2))])\n\n    def freeze(self, name):\n        if name == \'a\':\n            freeze_parameters(self.lin)\n        elif name == \'b\':\n            freeze_parameters(self.pos_embed)\n        else:\n            pass\n\n\nif __name__ == "__main__":\n    net = Net()\n    for name in ("a", "b", "c"):\n        net.freeze(name)\n', line=9,
                runtime="raises: has no attribute 'parameters'", also=(10,)),
        # The look-alike: the optimizer built first, then the name rebound to the model's output.
        Invalid('import torch\nimport torch.nn as nn\n\n\ndef main(model, x):\n    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n    model = model(x)\n    model.zero_grad()\n    return optimizer\n\n\nmain(nn.Linear(4, 2), torch.randn(3, 4))\n', line=8,
                runtime="raises: has no attribute 'zero_grad'"),
        # DeepRobust's DeepFool: the input's gradient cleared between per-class backwards with a module method.
        Invalid("import copy\nimport torch\nimport torch.nn as nn\n\n\ndef deepfool(model, image, num_classes):\n"
                "    x = copy.deepcopy(image).requires_grad_(True)\n    fs = model.forward(x)\n"
                "    fs[0, 0].backward(retain_graph=True)\n    for k in range(1, num_classes):\n        x.zero_grad()\n"
                "        fs[0, k].backward(retain_graph=True)\n\n\n"
                "deepfool(nn.Linear(3, 4), torch.randn(1, 3), 4)\n",
                line=11, runtime="raises: 'Tensor' object has no attribute 'zero_grad'",
                severity=Severity.WARNING),
        Invalid("import torch\nw = torch.randn(3, requires_grad=True)\nw.eval()\n", line=3,
                runtime="raises: 'Tensor' object has no attribute 'eval'", severity=Severity.ERROR),
    )

    def check(self, event: ModuleMethodOnTensorEvent, report) -> None:
        t = event.receiver
        if event.method == "zero_grad":
            advice = f"To clear its gradient, set `{event.expr}.grad = None`."
        else:
            advice = f"Call `{event.method}()` on the module or optimizer instead."
        # A tensor known only from use (`f(...).requires_grad_(True)` on a call gradsight cannot see) gives a warning.
        report.add(self, event.node,
                   f"`{event.expr}` is a tensor, and tensors have no `{event.method}()`: this raises AttributeError. "
                   + advice, severity=Severity.WARNING if t.evidence else None)
