from __future__ import annotations

from ..engine.events import NumpyEvent
from ..engine.report import insert_after, make_fix
from ..engine.values import Tri
from ..findings import Applicability, Severity
from .base import Invalid, Rule, Valid


class NumpyOnGradTensor(Rule):
    code = "GS201"
    name = "numpy-on-grad-tensor"
    severity = Severity.ERROR
    summary = "`.numpy()` (or `np.array(t)`) on a tensor that requires grad raises; detach it first."
    events = (NumpyEvent,)
    what_it_does = ("Flags `t.numpy()`, `np.array(t)` and `np.asarray(t)` where `t` requires grad (a model "
                    "output, a parameter, anything computed from one).")
    why_bad = ("PyTorch refuses: `RuntimeError: Can't call numpy() on Tensor that requires grad. Use "
               "tensor.detach().numpy() instead.` NumPy arrays cannot carry autograd history, so the conversion "
               "must be explicit about leaving the graph.")
    example = "pred = net(batch)\nhist = np.histogram(pred.numpy(), bins=3)"
    use_instead = "pred = net(batch)\nhist = np.histogram(pred.detach().numpy(), bins=3)"
    fix_safety = ("Safe: `.detach()` returns the same values without history, which is exactly what "
                  "`.numpy()` needs; the original tensor and its graph are untouched. (A CUDA tensor also needs "
                  "`.cpu()`; gradsight does not add it because it cannot see the device.)")
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.numpy.html",)
    _fid = 'import torch\nimport torch.nn as nn\n\n\nclass Inception(nn.Module):\n    def __init__(self, requires_grad=False):\n        super().__init__()\n        self.blocks = nn.Sequential(nn.Linear(3, 4), nn.ReLU())\n        for param in self.parameters():\n            param.requires_grad = requires_grad\n\n    def forward(self, x):\n        return self.blocks(x)\n\n\n'
    # pytorch-fid's own shape: the blocks kept in an `nn.ModuleList` the forward iterates, outputs collected in a list.
    _fid_list = 'import torch\nimport torch.nn as nn\n\n\nclass Inception(nn.Module):\n    def __init__(self, requires_grad=False):\n        super().__init__()\n        self.blocks = nn.ModuleList()\n        self.blocks.append(nn.Sequential(nn.Linear(3, 4), nn.ReLU()))\n        for param in self.parameters():\n            param.requires_grad = requires_grad\n\n    def forward(self, x):\n        outp = []\n        for block in self.blocks:\n            x = block(x)\n            outp.append(x)\n        return outp\n\n\n'
    _dist = 'import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass ActorCritic(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.mu = nn.Linear(2, 1)\n        self.value = nn.Linear(2, 1)\n        self.distribution = torch.distributions.Normal\n\n    def forward(self, x):\n        mu = torch.tanh(self.mu(x))\n        return self.distribution(mu, torch.ones_like(mu)), self.value(x)\n\n\nclass Policy:\n    def __init__(self):\n        self.model = ActorCritic()\n        self.optimizer = torch.optim.Adam(self.model.parameters(), 0.001)\n\n    def predict(self, s):\n        self.model.training = False\n        return self.model(torch.Tensor(s))\n\n    def get_action(self, s):\n        dist, value = self.predict(s)\n        return dist.sample().numpy(), value\n\n\n'
    valid = (
        # A distribution returned next to a value head (the RL cookbook's actor-critic): `sample()` runs under
        # `no_grad`, so its sample converts (bench/fresh28-false/02).
        Valid(_dist + "print(Policy().get_action([0.1, -0.2])[0])\n"),
        # pytorch-fid's InceptionV3 freezes itself, submodules included, with its default `requires_grad=False`.
        Valid(_fid + "print(Inception()(torch.randn(2, 3)).numpy())\n"),
        # The same with the frozen blocks iterated (`for block in self.blocks:`; bench/fresh29-false/02).
        Valid(_fid_list + "print(Inception()(torch.randn(2, 3))[0].numpy())\n"),
        # `torch.set_grad_enabled(False)` as a statement in the constructor turns grad mode off for the thread, so the
        # later method runs without grad (ABSA-PyTorch's `Inferer`; bench/fresh22-false/01).
        Valid('import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Inferer:\n    def __init__(self):\n        self.model = nn.Linear(4, 3)\n        self.model.eval()\n        torch.autograd.set_grad_enabled(False)\n\n    def evaluate(self, x):\n        out = self.model(x)\n        return F.softmax(out, dim=-1).cpu().numpy()\n\n\nprobs = Inferer().evaluate(torch.randn(2, 4))\n'),
        # A plotting helper that runs only as a callback the training loop calls inside `torch.no_grad()` (n-beats'
        # `on_save_callback`, handed `plot_model`, which calls `plot`): grad mode is off there.
        Valid('import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\ndef plot(net, x):\n    net.eval()\n    f = net(x)\n    print(f.cpu().numpy()[0])\n\n\ndef simple_fit(net, optimiser, batches, on_save_callback=None):\n    for step, (x, y) in enumerate(batches):\n        net.train()\n        loss = F.mse_loss(net(x), y)\n        optimiser.zero_grad()\n        loss.backward()\n        optimiser.step()\n        if step % 2 == 0:\n            with torch.no_grad():\n                if on_save_callback is not None:\n                    on_save_callback(x, step)\n\n\ndef main():\n    net = nn.Linear(4, 2)\n    optimiser = torch.optim.Adam(net.parameters())\n\n    def plot_model(x, step):\n        plot(net, x)\n\n    simple_fit(net, optimiser, [(torch.randn(3, 4), torch.randn(3, 2)) for _ in range(3)], plot_model)\n\n\nif __name__ == "__main__":\n    main()\n'),
        # The indices of `topk` (and of `sort`, `max(dim)`, ...) are integers without history: a recommender's
        # hit-rate metric maps the top-k positions back to item ids.
        Valid("import torch\n\nw = torch.randn(6, requires_grad=True)\nitems = torch.arange(6)\n"
              "_, indices = torch.topk(w * 2, 3)\nrecommends = torch.take(items, indices).numpy().tolist()\n"
              "best, where = (w * 3).max(0)\nprint(where.numpy(), best.item())\n"),
        # The same indices taken by subscript: a DQN's greedy actions `torch.max(qvals, dim=1)[1]` (element 1 of a
        # dim-wise max, `x.max(1)[1]`, `torch.topk(x, k)[1]`; bench/fresh16-false/01).
        Valid("import torch\nimport torch.nn as nn\nnet = nn.Linear(4, 3)\nqvals = net(torch.randn(5, 4))\n"
              "actions = torch.max(qvals, dim=1)[1].cpu().numpy()\nactions = actions.astype('int32')\n"
              "greedy = qvals.max(1)[1].numpy()\ntop = torch.topk(qvals, 2)[1].numpy()\n"
              "order = qvals.sort(dim=1)[-1].numpy()\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\ny = (x * 2).detach().numpy()\n"),
        Valid("import torch\nx = torch.randn(3)\ny = (x * 2).numpy()\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    y = (x * 2).numpy()\n"),
        # A backbone frozen by a loop over its parameters: its output has no graph.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.backbone = nn.Linear(4, 4)\n"
              "        for p in self.backbone.parameters():\n            p.requires_grad = False\n"
              "        self.head = nn.Linear(4, 1)\n\n    def forward(self, x):\n"
              "        return self.head(self.backbone(x))\n\n\nnet = Net()\nnet(torch.randn(2, 4)).sum().backward()\n"
              "features = net.backbone(torch.randn(2, 4)).numpy()\n"),
        # A cast to an integer or bool dtype has no gradient: the result does not require grad.
        Valid("import torch\nimport torch.nn as nn\nG = nn.Linear(4, 4)\nimg = G(torch.randn(2, 4))\n"
              "img = (img * 127.5 + 128).clamp(0, 255).to(torch.uint8)\narr = img[0].cpu().numpy()\n"
              "ids = G(torch.randn(2, 4)).to(dtype=torch.long).numpy()\n"
              "legacy = G(torch.randn(2, 4)).type(torch.LongTensor).numpy()\n"
              "flags = G(torch.randn(2, 4)).to(bool).numpy()\n"),
        # An entry read by a string key from an unseen model's output: the output is a mapping, not a tensor, and
        # its entries may be integers (a detector's "labels", built from `torch.arange`) without history.
        Valid("import torch\nimport torch.nn as nn\n\n\ndef get_classes(model, images):\n    model.eval()\n"
              "    pred = model(images)\n    classes = list(pred[0][\"labels\"].cpu().numpy())\n"
              "    scores = list(pred[0][\"scores\"].detach().cpu().numpy())\n    return classes, scores\n\n\n"
              "class Detector(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.head = nn.Linear(8, 5)\n\n    def forward(self, images):\n        results = []\n"
              "        for feats in images:\n            scores = self.head(feats).softmax(-1)\n"
              "            labels = torch.arange(5).view(1, -1).expand_as(scores)\n"
              "            results.append({\"scores\": scores.reshape(-1), \"labels\": labels.reshape(-1)})\n"
              "        return results\n\n\nmodels = {\"detector\": Detector}\n"
              "print(get_classes(models[\"detector\"](), [torch.randn(3, 8)]))\n"),
        # A helper run only by a method that every caller runs under `no_grad` (world-models' `rollout`): the
        # module's output there has no history (bench/fresh12-false/01).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Generator:\n    def __init__(self):\n"
              "        self.controller = nn.Linear(4, 2)\n\n    def act(self, obs):\n"
              "        action = self.controller(obs)\n        return action.squeeze().cpu().numpy()\n\n"
              "    def rollout(self, steps):\n        total = 0.0\n        for _ in range(steps):\n"
              "            total += float(self.act(torch.randn(1, 4)).sum())\n        return total\n\n\n"
              "gen = Generator()\nwith torch.no_grad():\n    print(gen.rollout(3))\n"),
    )
    invalid = (
        # The same step converting the value head's output instead.
        Invalid(_dist.replace("return dist.sample().numpy(), value", "return dist.sample(), value.numpy()")
                + "print(Policy().get_action([0.1, -0.2])[1])\n", line=29,
                runtime="raises: Can't call numpy() on Tensor that requires grad"),
        # The same network built with `requires_grad=True`.
        Invalid(_fid + "print(Inception(requires_grad=True)(torch.randn(2, 3)).numpy())\n", line=16,
                runtime="raises: Can't call numpy() on Tensor that requires grad"),
        Invalid(_fid_list + "print(Inception(requires_grad=True)(torch.randn(2, 3))[0].numpy())\n", line=21,
                runtime="raises: Can't call numpy() on Tensor that requires grad"),
        # The constructor switches grad mode off and back on (statements, in that order): the method runs with it on.
        Invalid('import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Inferer:\n    def __init__(self):\n        self.model = nn.Linear(4, 3)\n        self.model.eval()\n        torch.autograd.set_grad_enabled(False)\n        self.model(torch.zeros(1, 4))\n        torch.autograd.set_grad_enabled(True)\n\n    def evaluate(self, x):\n        out = self.model(x)\n        return F.softmax(out, dim=-1).cpu().numpy()\n\n\nprobs = Inferer().evaluate(torch.randn(2, 4))\n', line=16, runtime="raises: Can't call numpy() on Tensor that requires grad"),
        # The same constructor with `set_grad_enabled(False)` as a `with` block: grad mode comes back on after it.
        Invalid('import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Inferer:\n    def __init__(self):\n        self.model = nn.Linear(4, 3)\n        self.model.eval()\n        with torch.autograd.set_grad_enabled(False):\n            self.model(torch.zeros(1, 4))\n\n    def evaluate(self, x):\n        out = self.model(x)\n        return F.softmax(out, dim=-1).cpu().numpy()\n\n\nprobs = Inferer().evaluate(torch.randn(2, 4))\n', line=15, runtime="raises: Can't call numpy() on Tensor that requires grad"),
        # The same helper also called in grad mode, in the training loop: that call raises.
        Invalid('import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\ndef plot(net, x):\n    net.eval()\n    f = net(x)\n    print(f.cpu().numpy()[0])\n\n\ndef simple_fit(net, optimiser, batches, on_save_callback=None):\n    for step, (x, y) in enumerate(batches):\n        net.train()\n        loss = F.mse_loss(net(x), y)\n        optimiser.zero_grad()\n        loss.backward()\n        optimiser.step()\n        plot(net, x)\n        if step % 2 == 0:\n            with torch.no_grad():\n                if on_save_callback is not None:\n                    on_save_callback(x, step)\n\n\ndef main():\n    net = nn.Linear(4, 2)\n    optimiser = torch.optim.Adam(net.parameters())\n\n    def plot_model(x, step):\n        plot(net, x)\n\n    simple_fit(net, optimiser, [(torch.randn(3, 4), torch.randn(3, 2)) for _ in range(3)], plot_model)\n\n\nif __name__ == "__main__":\n    main()\n', line=9, runtime="raises: Can't call numpy() on Tensor that requires grad",
                fixed='import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\ndef plot(net, x):\n    net.eval()\n    f = net(x)\n    print(f.cpu().detach().numpy()[0])\n\n\ndef simple_fit(net, optimiser, batches, on_save_callback=None):\n    for step, (x, y) in enumerate(batches):\n        net.train()\n        loss = F.mse_loss(net(x), y)\n        optimiser.zero_grad()\n        loss.backward()\n        optimiser.step()\n        plot(net, x)\n        if step % 2 == 0:\n            with torch.no_grad():\n                if on_save_callback is not None:\n                    on_save_callback(x, step)\n\n\ndef main():\n    net = nn.Linear(4, 2)\n    optimiser = torch.optim.Adam(net.parameters())\n\n    def plot_model(x, step):\n        plot(net, x)\n\n    simple_fit(net, optimiser, [(torch.randn(3, 4), torch.randn(3, 2)) for _ in range(3)], plot_model)\n\n\nif __name__ == "__main__":\n    main()\n'),
        Invalid("import torch\nimport torch.nn as nn\nnet = nn.Linear(3, 1)\npred = net(torch.randn(4, 3))\n"
                "arr = pred.numpy()\n", line=5, runtime="raises: Can't call numpy() on Tensor that requires grad",
                fixed="import torch\nimport torch.nn as nn\nnet = nn.Linear(3, 1)\npred = net(torch.randn(4, 3))\n"
                      "arr = pred.detach().numpy()\n"),
        Invalid("import numpy as np\nimport torch\nw = torch.ones(2, requires_grad=True)\narr = np.array(w * 3)\n",
                line=4, runtime="raises: Can't call numpy() on Tensor that requires grad"),
        Invalid("import numpy as np\nimport torch\nw = torch.ones(2, requires_grad=True)\ny = w * 3\nm = np.exp(y)\n",
                line=5, runtime="raises: Can't call numpy() on Tensor that requires grad",
                fixed="import numpy as np\nimport torch\nw = torch.ones(2, requires_grad=True)\ny = w * 3\n"
                      "m = np.exp(y.detach())\n"),
        # Element 0 of a dim-wise max is the values, which keep the graph.
        Invalid("import torch\nimport torch.nn as nn\nnet = nn.Linear(4, 3)\nqvals = net(torch.randn(5, 4))\n"
                "best = torch.max(qvals, dim=1)[0].cpu().numpy()\n",
                line=5, runtime="raises: Can't call numpy() on Tensor that requires grad",
                fixed="import torch\nimport torch.nn as nn\nnet = nn.Linear(4, 3)\nqvals = net(torch.randn(5, 4))\n"
                      "best = torch.max(qvals, dim=1)[0].cpu().detach().numpy()\n"),
        # `torch.max(x, y)` of two tensors is one tensor: its row 1 keeps the graph.
        Invalid("import torch\nimport torch.nn as nn\nnet = nn.Linear(4, 3)\nqvals = net(torch.randn(5, 4))\n"
                "row = torch.max(qvals, torch.zeros(5, 3))[1].numpy()\n",
                line=5, runtime="raises: Can't call numpy() on Tensor that requires grad",
                fixed="import torch\nimport torch.nn as nn\nnet = nn.Linear(4, 3)\nqvals = net(torch.randn(5, 4))\n"
                      "row = torch.max(qvals, torch.zeros(5, 3))[1].detach().numpy()\n"),
        # A module's own method named `topk` returns its output: row 1 of it keeps the graph.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Ranker(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.fc = nn.Linear(4, 3)\n\n    def topk(self, x):\n"
                "        return self.fc(x)\n\n\nr = Ranker()\nrow = r.topk(torch.randn(5, 4))[1].numpy()\n",
                line=15, runtime="raises: Can't call numpy() on Tensor that requires grad",
                fixed="import torch\nimport torch.nn as nn\n\n\nclass Ranker(nn.Module):\n    def __init__(self):\n"
                      "        super().__init__()\n        self.fc = nn.Linear(4, 3)\n\n    def topk(self, x):\n"
                      "        return self.fc(x)\n\n\nr = Ranker()\nrow = r.topk(torch.randn(5, 4))[1].detach().numpy()\n"),
        # A cast to a floating dtype keeps the gradient.
        Invalid("import torch\nimport torch.nn as nn\nG = nn.Linear(4, 4)\n"
                "arr = G(torch.randn(2, 4)).to(torch.float16).numpy()\n",
                line=4, runtime="raises: Can't call numpy() on Tensor that requires grad",
                fixed="import torch\nimport torch.nn as nn\nG = nn.Linear(4, 4)\n"
                      "arr = G(torch.randn(2, 4)).to(torch.float16).detach().numpy()\n"),
    )

    def check(self, event: NumpyEvent, report) -> None:
        t = event.target
        if t.rg is not Tri.YES:
            return
        fix = None
        if event.insert_at is not None:
            fix = make_fix("Use `.detach().numpy()`", Applicability.SAFE,
                           insert_after(report.source, event.insert_at, ".detach()"))
        line = report.source.span(event.node)[0]
        # Known from use only (a model loaded by `torch.load`): a warning, since something may have frozen it.
        severity = Severity.WARNING if t.evidence else None
        report.add(self, event.node,
                   f"`{event.expr}` requires grad, so converting it to NumPy raises; call `.detach()` first.",
                   related=[t.origin] if t.origin is not None and t.origin.line != line else [], fix=fix,
                   severity=severity)
