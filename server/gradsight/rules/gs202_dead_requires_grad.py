from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import DeadGradEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


class DeadRequiresGrad(Rule):
    code = "GS202"
    name = "requires-grad-never-flows"
    severity = Severity.INFORMATION
    summary = "A tensor asks for a gradient, but every path from it to the loss is cut, so `.grad` stays None."
    events = (DeadGradEvent,)
    what_it_does = ("Flags a tensor created with `requires_grad=True` (or `requires_grad_()`) when the file calls "
                    "backward, but every use of the tensor passes through a graph cut (`.detach()`, `.numpy()`, "
                    "`.tolist()`, `.item()`, `torch.tensor(t)`) before reaching the loss. The same for a module's "
                    "parameters, when an optimizer was built from them (or from a module holding them) and every "
                    "backward in the file that they feed is reached only through a cut: a helper or `forward` "
                    "returning `.detach()`, reading `.data`, or a NumPy round trip "
                    "(`torch.from_numpy(np.clip(h.detach().numpy(), 0, None))`). A module that any backward "
                    "reaches without a cut (a GAN's generator detached for the discriminator's loss, a network "
                    "detached to compute its own target) is fine, and so is one no optimizer trains (a target "
                    "network, a frozen teacher). Nothing is claimed in a file where a backward runs on a value "
                    "gradsight cannot follow back (a loss from a model it does not see), which may reach any tensor.")
    why_bad = ("Nothing fails: the backward runs and the model's weights get gradients, but this tensor's `.grad` "
               "stays `None`. If you meant to optimise it or read its gradient (saliency maps, adversarial "
               "inputs), the cut silently defeats that; if not, `requires_grad=True` is dead weight.")
    example = ("x = torch.randn(4, requires_grad=True)\nfeatures = torch.from_numpy(x.detach().numpy() * 2)\n"
               "loss = model(features).sum()\nloss.backward()  # x.grad is None")
    use_instead = "x = torch.randn(4, requires_grad=True)\nfeatures = x * 2\nloss = model(features).sum()\nloss.backward()"
    references = ("https://pytorch.org/docs/stable/notes/autograd.html",)
    valid = (
        # A fitting loop whose loss comes from a model gradsight cannot see (SMPLify's `self.smpl(global_orient=...)`,
        # revnets' `f_x2 = self.f_forward(x2)` then `x2.grad`): what that backward reaches is unknown, so a leaf fed
        # to the model is not "never reached", whatever other backwards of the file are seen in full.
        Valid('import torch\nimport torch.nn as nn\n\nbody = getattr(nn, "Linear")(3, 3)  # a model gradsight cannot see, as one from another library\n\n\ndef fit(init, target, steps=3):\n    orient = init.detach().clone()\n    shape = init.detach().clone()\n    orient.requires_grad = True\n    opt = torch.optim.Adam([orient], lr=0.01)\n    for _ in range(steps):\n        loss = (body(orient) - target).pow(2).sum()\n        opt.zero_grad()\n        loss.backward()\n        opt.step()\n    shape.requires_grad = True\n    opt2 = torch.optim.Adam([orient, shape], lr=0.01)\n    for _ in range(steps):\n        loss = (body(orient) - target).pow(2).sum() + shape.pow(2).sum()\n        opt2.zero_grad()\n        loss.backward()\n        opt2.step()\n    assert orient.grad is not None\n    return torch.cat([orient, shape], dim=-1).detach()\n\n\nfit(torch.randn(2, 3), torch.randn(2, 3))\n'),
        # SAC's temperature: another method writes the leaf's values through `.data` (loading a checkpoint), which
        # changes neither the tensor nor its grad state, so the alpha loss in `update` still reaches it
        # (tinkoff-ai/CORL's EDAC, SAC-N, LB-SAC).
        Valid('import torch\n\n\nclass Agent:\n    def __init__(self):\n        self.log_alpha = torch.tensor([0.0], requires_grad=True)\n        self.alpha_optimizer = torch.optim.Adam([self.log_alpha], lr=1e-3)\n        self.alpha = self.log_alpha.exp().detach()\n\n    def update(self, log_prob):\n        alpha_loss = (-self.log_alpha * (log_prob - 2.0).detach()).mean()\n        self.alpha_optimizer.zero_grad()\n        alpha_loss.backward()\n        self.alpha_optimizer.step()\n        self.alpha = self.log_alpha.exp().detach()\n\n    def load_state_dict(self, state):\n        self.log_alpha.data[0] = state["log_alpha"]\n        self.alpha = self.log_alpha.exp().detach()\n\n\ndef demo():\n    agent = Agent()\n    agent.load_state_dict({"log_alpha": 0.5})\n    agent.update(torch.randn(4))\n    assert agent.log_alpha.grad is not None\n\n\nif __name__ == "__main__":\n    demo()\n'),
        Valid("import torch\nx = torch.randn(4, requires_grad=True)\nloss = (x * 2).sum()\nloss.backward()\n"),
        Valid("import torch\nx = torch.randn(4, requires_grad=True)\ny = x.detach().numpy()\n"),
        Valid("import torch\nimport torch.nn as nn\nG = nn.Linear(2, 3)\nD = nn.Linear(3, 1)\n"
              "opt_g = torch.optim.SGD(G.parameters(), lr=0.1)\nopt_d = torch.optim.SGD(D.parameters(), lr=0.1)\n"
              "fake = G(torch.randn(4, 2))\nd_loss = D(fake.detach()).mean()\nd_loss.backward()\n"
              "g_loss = -D(fake).mean()\ng_loss.backward()\n"),
        Valid("import torch\nimport torch.nn as nn\nnet = nn.Linear(3, 1)\ntarget_net = nn.Linear(3, 1)\n"
              "opt = torch.optim.SGD(net.parameters(), lr=0.1)\ns = torch.randn(4, 3)\n"
              "target = target_net(s).detach()\nloss = (net(s) - target).pow(2).mean()\nloss.backward()\n"),
        Valid("import torch\nimport torch.nn as nn\nenc = nn.Linear(3, 3)\nopt = torch.optim.SGD(enc.parameters(), lr=0.1)\n"
              "z = enc(torch.randn(4, 3))\nq = z + (torch.round(z) - z).detach()\nq.pow(2).mean().backward()\n"),
    )
    invalid = (
        Invalid("import torch\nimport torch.nn as nn\nx = torch.randn(1, 4, requires_grad=True)\n"
                "feats = torch.from_numpy(x.detach().numpy() * 2)\nmodel = nn.Linear(4, 1)\n"
                "loss = model(feats).sum()\nloss.backward()\n", line=3,
                runtime="silent: x.grad is None and model.weight.grad is not None"),
        Invalid("import torch\nimport torch.nn as nn\nbackbone = nn.Linear(6, 4)\nhead = nn.Linear(4, 1)\n"
                "opt = torch.optim.SGD(list(backbone.parameters()) + list(head.parameters()), lr=0.1)\n\n\n"
                "def encode(x):\n    return torch.relu(backbone(x)).detach()\n\n\n"
                "loss = head(encode(torch.randn(5, 6))).pow(2).mean()\nloss.backward()\n", line=9,
                runtime="silent: backbone.weight.grad is None and head.weight.grad is not None"),
    )

    def check(self, event: DeadGradEvent, report) -> None:
        cut = event.cuts[0] if event.cuts else None
        if event.name.startswith(("the parameters of", "these parameters")) and cut is not None:
            # The module is in an optimizer and every backward reaches it only through this cut: certain, so a
            # warning (a tensor's cut below stays information: it may be deliberate).
            report.add(self, event.node,
                       f"This cuts {event.name} off every loss, so the optimizer never updates them. "
                       "If that is not deliberate, keep the tensor itself.", related=[event.created],
                       severity=Severity.WARNING)
            return
        line = report.source.span(event.node)[0]
        where = msg(f" The cut: {cut.text} (line ", cut.line, ").") if cut else ""
        report.add(self, event.node,
                   msg("This tensor requires grad, but every path to a backward is cut, so its `.grad` stays None.", where),
                   related=[cut] if cut is not None and cut.line != line else [])
