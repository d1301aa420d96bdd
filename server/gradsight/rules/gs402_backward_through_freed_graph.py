from __future__ import annotations

import ast

from ..engine.report import text as msg
from ..engine.report import Note
from ..engine.events import BackwardEvent, CarryEvent, FreedElsewhereEvent
from ..engine.report import edit_for, insert_after, make_fix
from ..engine.values import USE, Tri
from ..findings import Applicability, Severity
from .base import Invalid, Rule, Valid

_MSG = "\"Trying to backward through the graph a second time\""


def _first_use(tree: ast.AST, name: str, after: int, before: int) -> ast.AST | None:
    """The first call argument `name` between two lines: where the discriminator step consumed `fake`."""
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and after < node.lineno <= before:
            for arg in node.args:
                if isinstance(arg, ast.Name) and arg.id == name:
                    if best is None or (arg.lineno, arg.col_offset) < (best.lineno, best.col_offset):
                        best = arg
    return best


# A PPO-style update loop whose later epochs re-run the model before the loss (Kaixhin's spinning-up-basic;
# bench/fresh23-false/01): `{test}` tells the first epoch, which uses the rollout's output, from the others.
_EPOCH_REFRESH = ("import torch\nimport torch.nn as nn\n\nnet, head = nn.Linear(3, 2), nn.Linear(2, 1)\n"
                  "opt = torch.optim.SGD(list(net.parameters()) + list(head.parameters()), lr=0.1)\n"
                  "for batch in range(2):\n"
                  "    x = torch.randn(4, 3)\n    out = net(x)\n    for epoch in range(5):\n"
                  "        if {test}:\n            out = net(x)\n        loss = head(out).pow(2).mean()\n"
                  "        opt.zero_grad()\n        loss.backward()\n        opt.step()\n")


# A SAC agent (a plain class; its driver lives in another file) whose `update` re-makes `self.alpha` from
# `log_alpha` after each step only `if self.auto_alpha:`, a setting `__init__` copies from its config and nothing
# changes: one agent takes the same branch on every step (rl-tutorials' SAC; bench/fresh25-false/02).
_SAC = ("import types\n\nimport torch\nimport torch.nn as nn\n\n\nclass Agent:\n"
        "    def __init__(self, cfg):\n        self.alpha = cfg.alpha\n"
        "        self.auto_alpha = cfg.auto_alpha\n        self.policy = nn.Linear(3, 2)\n"
        "        self.policy_optim = torch.optim.Adam(self.policy.parameters(), lr=1e-3)\n"
        "        if self.auto_alpha is True:\n"
        "            self.log_alpha = torch.zeros(1, requires_grad=True)\n"
        "            self.alpha_optim = torch.optim.Adam([self.log_alpha], lr=1e-3)\n\n"
        "    def update(self, states):\n        for state in states:\n"
        "            log_pi = torch.log_softmax(self.policy(state), -1)[:, 0]\n"
        "            policy_loss = (self.alpha * log_pi).mean()\n"
        "            self.policy_optim.zero_grad()\n            policy_loss.backward()\n"
        "            self.policy_optim.step()\n            if self.auto_alpha:\n"
        "                alpha_loss = -(self.log_alpha * (log_pi + 2.0).detach()).mean()\n"
        "                self.alpha_optim.zero_grad()\n                alpha_loss.backward()\n"
        "                self.alpha_optim.step()\n"
        "                self.alpha = self.log_alpha.exp()\n")


# GAN steps each in a `for i in range({n}):` (advGAN; bench/fresh25-false/03): with 1 the generator step runs once
# per batch; with 2 its second pass backwards `fake`'s freed graph.
_ONE_PASS = ("import torch\nimport torch.nn as nn\n\nG, D = nn.Linear(3, 3), nn.Linear(3, 1)\n"
             "opt_g = torch.optim.SGD(G.parameters(), lr=0.1)\n"
             "opt_d = torch.optim.SGD(D.parameters(), lr=0.1)\nfor step in range(3):\n"
             "    x = torch.randn(4, 3)\n    fake = G(x)\n    for i in range(1):\n"
             "        opt_d.zero_grad()\n        d_loss = D(fake.detach()).mean() - D(x).mean()\n"
             "        d_loss.backward()\n        opt_d.step()\n    for i in range({n}):\n"
             "        opt_g.zero_grad()\n        g_loss = -D(fake).mean()\n        g_loss.backward()\n"
             "        opt_g.step()\n")
# A Gibbs chain `for _ in range(N):` with `N` a module-level constant (gibbsnet; bench/fresh25-false/04): with
# N = 10 it always runs and re-makes `h`; with N = 0 the second step backwards the first's `h` again.
_CHAIN = ("import torch\nimport torch.nn as nn\n\nN = {n}\n"
          "P, Q, D = nn.Linear(3, 3), nn.Linear(3, 3), nn.Linear(3, 1)\n"
          "opt = torch.optim.SGD(D.parameters(), lr=0.1)\nh = P(torch.randn(4, 3))\n"
          "for it in range(3):\n    z = torch.randn(4, 3)\n    for _ in range(N):\n"
          "        h = P(z)\n        z = Q(h)\n    loss = D(h).mean()\n    opt.zero_grad()\n"
          "    loss.backward()\n    opt.step()\n")


class BackwardThroughFreedGraph(Rule):
    code = "GS402"
    name = "backward-through-freed-graph"
    severity = Severity.ERROR
    summary = "A second backward runs through a graph whose saved tensors an earlier backward already freed."
    events = (BackwardEvent, CarryEvent, FreedElsewhereEvent)
    what_it_does = ("Flags a backward whose graph shares saved tensors with a graph an earlier backward freed: "
                    "calling `loss.backward()` twice, a loss built from a tensor (a GAN's `fake`) whose graph an "
                    "earlier loss already consumed, and hidden state carried across loop iterations without "
                    "`.detach()`. A method a class inherits (from a base in this file or another workspace file) "
                    "and does not define is run on the class's instances when it calls a method the class overrides: "
                    "an override that backwards the loss it returns to a base class that backwards it again is "
                    "flagged on the override's backward. Where what carries the freed graph into a step is made "
                    "anew each iteration (a list of outputs), and the graph comes from the one tensor computed before "
                    "the loop that feeds every step (an embedding of a begin token), the finding stands on that "
                    "tensor's statement: it belongs inside the loop.")
    why_bad = (f"PyTorch raises `RuntimeError: {_MSG[1:-1]} ...`: backward frees the tensors each op saved "
               "unless `retain_graph=True`. Adding `retain_graph=True` hides the error but usually keeps memory "
               "growing; the real fix is to cut the shared part (`.detach()`) or backward once.")
    example = ("hidden = torch.zeros(1, 2, 8)\nfor chunk in data:\n    out, hidden = rnn(chunk, hidden)\n"
               "    loss = criterion(out)\n    loss.backward()")
    use_instead = ("hidden = torch.zeros(1, 2, 8)\nfor chunk in data:\n    out, hidden = rnn(chunk, hidden.detach())\n"
                   "    loss = criterion(out)\n    loss.backward()")
    fix_safety = ("Unsafe: `.detach()` stops gradients from flowing into the earlier graph. That is what "
                  "truncated backpropagation through time and a GAN's discriminator step intend, but it changes "
                  "which parameters receive gradients, so review it.")
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html",)
    valid = (
        # Every arm of an `if`/`elif` chain over the batch layout binds the prediction, and nothing did before the
        # loop: a run taking no arm would raise NameError first (kratzert/ealstm_regional_modeling, fresh31-false/01).
        Valid('import torch\nimport torch.nn as nn\n\nmodel = nn.Linear(3, 1)\nhead = nn.Linear(2, 1)\nopt = torch.optim.SGD(list(model.parameters()) + list(head.parameters()), lr=0.1)\nloader = [(torch.randn(4, 3), torch.randn(4, 1)), (torch.randn(4, 3), torch.randn(4, 2), torch.randn(4, 1))] * 2\nfor data in loader:\n    opt.zero_grad()\n    if len(data) == 2:\n        x, y = data\n        predictions = model(x)\n    elif len(data) == 3:\n        x, extra, y = data\n        predictions = model(x) + head(extra)\n    loss = ((predictions - y) ** 2).mean()\n    loss.backward()\n    opt.step()\n'),
        # A name bound under a setting the loop never changes, read later in its own block and under another
        # setting: every iteration binds it before reading it (consistency-regularization; bench/fresh26-false/02).
        Valid("import types\n\nimport torch\nimport torch.nn as nn\n\n\ndef fit(cfg, model, data):\n"
              "    opt = torch.optim.SGD(model.parameters(), lr=0.01)\n"
              "    for i in range(cfg.iterations):\n        loss = model(data).pow(2).mean()\n"
              "        if cfg.coef > 0:\n            aux = model(data + 0.1)\n"
              "            loss = loss + cfg.coef * aux.pow(2).mean()\n        if cfg.extra > 0:\n"
              "            loss = loss + cfg.extra * aux.mean()\n        opt.zero_grad()\n"
              "        loss.backward()\n        opt.step()\n\n\n"
              "fit(types.SimpleNamespace(iterations=3, coef=1.0, extra=0.5), nn.Linear(3, 3), torch.randn(4, 3))\n"),
        Valid(_ONE_PASS.format(n=1)),
        Valid(_CHAIN.format(n=10)),
        Valid(_SAC),
        Valid(_EPOCH_REFRESH.format(test="epoch > 0")),
        Valid(_EPOCH_REFRESH.format(test="True")),
        # The fix: computed inside the loop, each step's graph is its own.
        Valid('import torch\nimport torch.nn as nn\nemb = nn.Embedding(3, 4)\nlin = nn.Linear(4, 1)\nopt = torch.optim.SGD(list(emb.parameters()) + list(lin.parameters()), lr=0.1)\nfor step in range(3):\n    begin = emb(torch.tensor([0]))\n    outs = []\n    for k in range(2):\n        outs.append(lin(begin * (k + 1)))\n    loss = torch.cat(outs).sum()\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n'),
        # The fix: the override only computes the loss; the base class backwards it once.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.fc = nn.Linear(3, 1)\n"
              "        self.optimizer = torch.optim.SGD(self.fc.parameters(), lr=0.1)\n\n"
              "    def train_model(self, x):\n        loss = self.compute_loss(x)\n"
              "        self.optimizer.zero_grad()\n        loss.backward()\n        self.optimizer.step()\n\n"
              "    def compute_loss(self, x):\n        return self.fc(x).pow(2).mean()\n\n\nclass Bayes(Model):\n"
              "    def compute_loss(self, x):\n        loss = self.fc(x).pow(2).mean()\n        return loss\n\n\n"
              "def runs():\n    Bayes().train_model(torch.ones(2, 3))\n"),
        Valid('import torch\nimport torch.nn as nn\n\n\nclass Cell(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n        self.state = {"h": torch.zeros(2, 4)}\n\n    def forward(self, x):\n        h = torch.tanh(self.fc(x) + self.state["h"])\n        self.state["h"] = h.detach()\n        return h\n\n\nmodel = Cell()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor step in range(3):\n    opt.zero_grad()\n    loss = model(torch.randn(2, 4)).pow(2).mean()\n    loss.backward()\n    opt.step()\n'),
        # Truncated BPTT through a helper that detaches the carried state (recursively over a tuple).
        Valid("import torch\nimport torch.nn as nn\n\n\ndef cut(state):\n    return tuple(s.detach() for s in state)\n\n\n"
              "rnn = nn.LSTM(2, 3)\nstate = (torch.zeros(1, 1, 3), torch.zeros(1, 1, 3))\nfor _ in range(3):\n"
              "    state = cut(state)\n    out, state = rnn(torch.randn(4, 1, 2), state)\n    out.sum().backward()\n"),
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nfor _ in range(3):\n"
              "    loss = m(torch.randn(4, 2)).pow(2).mean()\n    loss.backward()\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\ny = (x + 2).sum()\ny.backward()\ny.backward()\n"),
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nloss = m(torch.randn(4, 2)).pow(2).mean()\n"
              "loss.backward(retain_graph=True)\nloss.backward()\n"),
        # An `if/elif` without `else` on a test the loop never changes (Beta-VAE's `self.objective`): every
        # iteration takes the same branch, so the loss is always new (neither branch: a NameError, no old loss).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Solver:\n    def __init__(self, objective):\n"
              "        self.objective = objective\n        self.net = nn.Linear(3, 1)\n"
              "        self.optim = torch.optim.SGD(self.net.parameters(), lr=0.1)\n\n    def train(self, loader):\n"
              "        for x in loader:\n            out = self.net(x).sum() ** 2\n"
              "            if self.objective == \"H\":\n                loss = out * 2\n"
              "            elif self.objective == \"B\":\n                loss = out * 3\n"
              "            self.optim.zero_grad()\n            loss.backward()\n            self.optim.step()\n\n\n"
              "Solver(\"B\").train([torch.randn(2, 3)] * 3)\n"),
        # The same with tests that call a string method of the unchanged value (EDSR/RCAN's discriminator loop:
        # `elif self.gan_type.find("WGAN") >= 0:`, `if "GP" in self.gan_type:`): still one branch for every round.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
              "class Adversarial(nn.Module):\n    def __init__(self, gan_type, gan_k):\n"
              "        super().__init__()\n        self.gan_type = gan_type\n        self.gan_k = gan_k\n"
              "        self.discriminator = nn.Linear(4, 1)\n"
              "        self.optimizer = torch.optim.SGD(self.discriminator.parameters(), lr=0.1)\n\n"
              "    def forward(self, fake, real):\n        fake_detach = fake.detach()\n"
              "        for _ in range(self.gan_k):\n            self.optimizer.zero_grad()\n"
              "            d_fake = self.discriminator(fake_detach)\n"
              "            d_real = self.discriminator(real)\n            if self.gan_type == \"GAN\":\n"
              "                loss_d = F.softplus(d_fake).mean() + F.softplus(-d_real).mean()\n"
              "            elif self.gan_type.find(\"WGAN\") >= 0:\n"
              "                loss_d = (d_fake - d_real).mean()\n                if \"GP\" in self.gan_type:\n"
              "                    loss_d += fake_detach.pow(2).mean()\n            loss_d.backward()\n"
              "            self.optimizer.step()\n        return -self.discriminator(fake).mean()\n\n\n"
              "for gan_type in (\"GAN\", \"WGAN\", \"WGAN_GP\"):\n"
              "    Adversarial(gan_type, 3)(torch.randn(2, 4, requires_grad=True), torch.randn(2, 4)).backward()\n"),
        # Two `if`s on one value nothing between them changes (an offline-RL agent's `self.mode`): the second
        # backward runs only where the first kept the graph (`split_tail`).
        Valid('import torch\nimport torch.nn as nn\n\n\nclass Agent:\n    def __init__(self, mode):\n        self.mode = mode\n        self.actor = nn.Linear(3, 1)\n        self.lam = torch.zeros(1, requires_grad=True)\n\n    def train(self, x):\n        mmd = (self.actor(x) ** 2).mean()\n        loss = self.lam.exp() * mmd\n        if self.mode == "auto":\n            loss.backward(retain_graph=True)\n        else:\n            loss.backward()\n        if self.mode == "auto":\n            (-(self.lam.exp() * mmd)).backward()\n\n\nfor mode in ("auto", "fixed"):\n    Agent(mode).train(torch.randn(4, 3))\n'),
        # A PGD attack's two `if`s on the loss name (never changed in the loop): the same one binds every step.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
              "def pgd(model, data, target, step_size, num_steps, loss_fn):\n    x_adv = data.detach()\n"
              "    for k in range(num_steps):\n        x_adv.requires_grad_()\n        output = model(x_adv)\n"
              "        model.zero_grad()\n        with torch.enable_grad():\n            if loss_fn == \"cent\":\n"
              "                loss_adv = F.cross_entropy(output, target)\n            if loss_fn == \"cw\":\n"
              "                loss_adv = -output.gather(1, target[:, None]).sum()\n        loss_adv.backward()\n"
              "        x_adv = x_adv.detach() + step_size * x_adv.grad.sign()\n    return x_adv\n\n\n"
              "pgd(nn.Linear(4, 3), torch.randn(2, 4), torch.tensor([0, 2]), 0.01, 3, \"cw\")\n"),
        # `torch.autograd.grad(loss, [x_adv])` runs only the nodes on paths to `x_adv`: the clean branch `p_natural`,
        # built before the loop from the model and data, is not on one, so its graph is never freed (TRADES' attack;
        # `x_adv` is made a leaf by `requires_grad_()`, whatever `x_natural` was).
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
              "def attack(model, x_natural, steps):\n    model.eval()\n    kl = nn.KLDivLoss(reduction='sum')\n"
              "    x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape)\n"
              "    p_natural = F.softmax(model(x_natural), dim=1)\n    for _ in range(steps):\n"
              "        x_adv.requires_grad_()\n        loss_kl = kl(F.log_softmax(model(x_adv), dim=1), p_natural)\n"
              "        grad = torch.autograd.grad(loss_kl, [x_adv])[0]\n"
              "        x_adv = x_adv.detach() + 0.01 * torch.sign(grad)\n"
              "    return x_adv\n\n\nattack(nn.Linear(4, 3), torch.randn(5, 4), 3)\n"),
        # One backward per output through one graph, kept while `i < n - 1` and freed on the last iteration only:
        # no iteration follows the one that frees it.
        Valid("import torch\nimport torch.nn as nn\n\n\ndef input_gradients(model, x0):\n"
              "    x = x0.clone().requires_grad_(True)\n    y = model(x).view(-1)\n    grads = []\n"
              "    for i in range(y.size(0)):\n        x.grad = None\n        goal = torch.abs(y[i])\n"
              "        if i < y.size(0) - 1:\n"
              "            goal.backward(retain_graph=True)\n        else:\n            goal.backward()\n"
              "        grads.append(x.grad.clone())\n    return grads\n\n\n"
              "input_gradients(nn.Linear(4, 5), torch.randn(1, 4))\n"),
        # An inner loop over `range(4)` surely runs, so `y` after it is this outer iteration's, never the one the
        # previous outer iteration's backward freed (icefall's `_test_whiten` shape, nested loops).
        Valid("import torch\n\nfor p in [0.1, 0.2, 0.3]:\n    x = torch.randn(3, requires_grad=True)\n"
              "    for _ in range(4):\n        y = (x * p).sum()\n    y.backward()\n"),
        # An inner loop over `range(trajs.size(1))` of a tensor the outer loop never rebinds runs as often in every
        # iteration, and `out` is bound only there (none at all: a NameError in the first iteration), so the read
        # after it is this iteration's output (torchdiffeq's latent ODE recognition RNN, run backwards in time).
        Valid("import torch\nimport torch.nn as nn\n\nrnn = nn.RNNCell(2, 4)\nhead = nn.Linear(4, 2)\n"
              "opt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)\n"
              "trajs = torch.randn(8, 5, 2)\nfor itr in range(3):\n    opt.zero_grad()\n    h = torch.zeros(8, 4)\n"
              "    for t in reversed(range(trajs.size(1))):\n        h = rnn(trajs[:, t, :], h)\n"
              "        out = head(h)\n    mean, logvar = out[:, :1], out[:, 1:]\n"
              "    loss = (mean.pow(2) + logvar.exp()).mean()\n    loss.backward()\n    opt.step()\n"),
    )
    invalid = (
        # The same chain after a warm-up bound the prediction before the loop: a batch that takes no arm
        # backwards the last one again.
        Invalid('import torch\nimport torch.nn as nn\n\nmodel = nn.Linear(3, 1)\nhead = nn.Linear(1, 1)\nopt = torch.optim.SGD(list(model.parameters()) + list(head.parameters()), lr=0.1)\nloader = [(torch.randn(4, 3), torch.randn(4, 1)), (torch.randn(4, 3), torch.randn(4, 2), torch.randn(4, 1)),\n          (torch.randn(4, 3),)]\npredictions = model(loader[0][0])\nfor data in loader:\n    opt.zero_grad()\n    if len(data) == 2:\n        x, y = data\n        predictions = model(x)\n    elif len(data) == 3:\n        x, extra, y = data\n        predictions = model(x)\n    loss = ((head(predictions) - y) ** 2).mean()\n    loss.backward()\n    opt.step()\n', line=18,
                runtime="raises: backward through the graph a second time"),
        # The look-alike: read before it is rebound, and rebound only every other iteration.
        Invalid("import types\n\nimport torch\nimport torch.nn as nn\n\n\ndef fit(cfg, model, data):\n"
                "    opt = torch.optim.SGD(model.parameters(), lr=0.01)\n    aux = model(data)\n"
                "    for i in range(cfg.iterations):\n        loss = model(data).pow(2).mean()\n"
                "        if cfg.coef > 0:\n            loss = loss + cfg.coef * aux.pow(2).mean()\n"
                "            if i % 2 == 1:\n                aux = model(data + 0.1)\n"
                "        opt.zero_grad()\n        loss.backward()\n        opt.step()\n\n\n"
                "fit(types.SimpleNamespace(iterations=3, coef=1.0), nn.Linear(3, 3), torch.randn(4, 3))\n",
                line=13, runtime="raises: Trying to backward through the graph a second time"),
        Invalid(_ONE_PASS.format(n=2), line=17, runtime="raises: Trying to backward through the graph a second time"),
        Invalid(_CHAIN.format(n=0), line=13, runtime="raises: Trying to backward through the graph a second time"),
        # The look-alike: a method turns the setting off, so a later step backwards the last `self.alpha` again.
        Invalid(_SAC + "\n    def fix_alpha(self):\n        self.auto_alpha = False\n\n\n"
                "agent = Agent(types.SimpleNamespace(alpha=0.2, auto_alpha=True))\n"
                "for _ in range(3):\n    agent.update(torch.randn(3, 4, 3))\n"
                "agent.fix_alpha()\nagent.update(torch.randn(3, 4, 3))\n", line=29,
                runtime="raises: Trying to backward through the graph a second time"),
        # The look-alike: the second epoch still uses the rollout's output, whose graph the first freed.
        Invalid(_EPOCH_REFRESH.format(test="epoch > 1"), line=12,
                runtime="raises: Trying to backward through the graph a second time"),
        # A tensor computed once before the loop feeds every step's graph through a list made anew each step
        # (Deep-Reinforcement-Learning-Hands-On's SCST `beg_embedding`): the finding stands on that statement.
        Invalid('import torch\nimport torch.nn as nn\nemb = nn.Embedding(3, 4)\nlin = nn.Linear(4, 1)\nopt = torch.optim.SGD(list(emb.parameters()) + list(lin.parameters()), lr=0.1)\nbegin = emb(torch.tensor([0]))\nfor step in range(3):\n    outs = []\n    for k in range(2):\n        outs.append(lin(begin * (k + 1)))\n    loss = torch.cat(outs).sum()\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n', line=6, runtime="raises: Trying to backward through the graph a second time"),
        # A subclass's override backwards the loss it hands back to the base class's `train_model`, which
        # backwards it again (genrl's bandit model shape). With the base class in another file the finding stands
        # on the override's backward, with the base class's in `related`.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.fc = nn.Linear(3, 1)\n"
                "        self.optimizer = torch.optim.SGD(self.fc.parameters(), lr=0.1)\n\n"
                "    def train_model(self, x):\n        loss = self.compute_loss(x)\n"
                "        self.optimizer.zero_grad()\n        loss.backward()\n        self.optimizer.step()\n\n"
                "    def compute_loss(self, x):\n        return self.fc(x).pow(2).mean()\n\n\nclass Bayes(Model):\n"
                "    def compute_loss(self, x):\n        loss = self.fc(x).pow(2).mean()\n        loss.backward()\n"
                "        return loss\n\n\ndef second_backward_raises():\n    try:\n"
                "        Bayes().train_model(torch.ones(2, 3))\n    except RuntimeError as e:\n"
                "        return \"second time\" in str(e)\n    return False\n",
                line=14, runtime="silent: second_backward_raises()"),
        # Recurrent state kept in a dict attribute of the module (`self.state["h"] = h`): the statement to change
        # is that store, not the training loop's call of the model.
        Invalid('import torch\nimport torch.nn as nn\n\n\nclass Cell(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n        self.state = {"h": torch.zeros(2, 4)}\n\n    def forward(self, x):\n        h = torch.tanh(self.fc(x) + self.state["h"])\n        self.state["h"] = h\n        return h\n\n\nmodel = Cell()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor step in range(3):\n    opt.zero_grad()\n    loss = model(torch.randn(2, 4)).pow(2).mean()\n    loss.backward()\n    opt.step()\n', line=13, runtime="raises: backward through the graph a second time", also=(21, 22)),
        # A graph cached on a module in forward: the second call's backward goes through the first one's graph.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Lut(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.w = nn.Parameter(torch.randn(4))\n        self.cached = None\n\n"
                "    def forward(self, i):\n        if self.cached is None:\n"
                "            self.cached = torch.tanh(self.w) * 2\n        return self.cached[i]\n\n\nlut = Lut()\n"
                "for _ in range(2):\n    lut(torch.tensor([0, 1])).sum().backward()\n", line=13,
                runtime="raises: backward through the graph a second time", also=(13,)),
        Invalid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\nloss = m(torch.randn(4, 2)).pow(2).mean()\n"
                "loss.backward()\nloss.backward()\n", line=6, runtime="raises: backward through the graph a second time"),
        Invalid("import torch\nimport torch.nn as nn\nrnn = nn.GRU(4, 8, batch_first=True)\n"
                "hidden = torch.zeros(1, 2, 8)\nfor step in range(3):\n"
                "    out, hidden = rnn(torch.randn(2, 5, 4), hidden)\n    loss = out.pow(2).mean()\n"
                "    loss.backward()\n", line=6, runtime="raises: backward through the graph a second time",
                fixed="import torch\nimport torch.nn as nn\nrnn = nn.GRU(4, 8, batch_first=True)\n"
                      "hidden = torch.zeros(1, 2, 8)\nfor step in range(3):\n"
                      "    out, hidden = rnn(torch.randn(2, 5, 4), hidden.detach())\n    loss = out.pow(2).mean()\n"
                      "    loss.backward()\n"),
        # The same without `else`, on a test that changes between iterations: the odd ones backward the old loss.
        Invalid("import torch\nimport torch.nn as nn\nnet = nn.Linear(3, 1)\n"
                "opt = torch.optim.SGD(net.parameters(), lr=0.1)\nfor i in range(3):\n"
                "    out = net(torch.randn(2, 3)).sum() ** 2\n    if i % 2 == 0:\n        loss = out * 2\n"
                "    opt.zero_grad()\n    loss.backward()\n    opt.step()\n", line=10,
                runtime="raises: backward through the graph a second time"),
        # A string-method test on a name the loop rebinds changes between iterations: the second backwards the old loss.
        Invalid("import torch\nimport torch.nn as nn\nnet = nn.Linear(3, 1)\n"
                "for name in (\"wgan\", \"gan\", \"wgan\"):\n    out = net(torch.randn(2, 3)).sum() ** 2\n"
                "    if name.startswith(\"w\"):\n        loss = out * 2\n    loss.backward()\n", line=8,
                runtime="raises: backward through the graph a second time"),
        # An invariant string-method test, but the loss was bound before the loop: every round backwards that one.
        Invalid("import torch\nimport torch.nn as nn\nnet = nn.Linear(3, 1)\nmode = \"gan\"\n"
                "loss = net(torch.randn(2, 3)).sum() ** 2\nfor step in range(3):\n"
                "    out = net(torch.randn(2, 3)).sum() ** 2\n    if mode.startswith(\"w\"):\n"
                "        loss = out * 2\n    loss.backward()\n", line=10,
                runtime="raises: backward through the graph a second time"),
        Invalid("import torch\nimport torch.nn as nn\nG = nn.Linear(2, 2)\nD = nn.Linear(2, 1)\n"
                "fake = G(torch.randn(8, 2))\nd_loss = D(fake).mean()\nd_loss.backward()\n"
                "g_loss = -D(fake).mean()\ng_loss.backward()\n", line=9,
                runtime="raises: backward through the graph a second time",
                fixed="import torch\nimport torch.nn as nn\nG = nn.Linear(2, 2)\nD = nn.Linear(2, 1)\n"
                      "fake = G(torch.randn(8, 2))\nd_loss = D(fake.detach()).mean()\nd_loss.backward()\n"
                      "g_loss = -D(fake).mean()\ng_loss.backward()\n"),
        # The look-alike: `p_natural` is built from `x_adv` itself, so each `autograd.grad` runs (and frees) its graph.
        Invalid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
                "def attack(model, x_natural, steps):\n    kl = nn.KLDivLoss(reduction='sum')\n"
                "    x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape)\n"
                "    x_adv.requires_grad_()\n    p_natural = F.softmax(model(x_adv), dim=1)\n"
                "    for _ in range(steps):\n        loss_kl = kl(F.log_softmax(model(x_adv * 2), dim=1), p_natural)\n"
                "        grad = torch.autograd.grad(loss_kl, [x_adv])[0]\n    return grad\n\n\n"
                "attack(nn.Linear(4, 3), torch.randn(5, 4), 3)\n",
                line=12, runtime="raises: backward through the graph a second time"),
        # The look-alike: the branch that keeps the graph is the one where the second backward does not run.
        Invalid('import torch\nimport torch.nn as nn\n\n\nclass Agent:\n    def __init__(self, mode):\n        self.mode = mode\n        self.actor = nn.Linear(3, 1)\n        self.lam = torch.zeros(1, requires_grad=True)\n\n    def train(self, x):\n        mmd = (self.actor(x) ** 2).mean()\n        loss = self.lam.exp() * mmd\n        if self.mode == "auto":\n            loss.backward()\n        else:\n            loss.backward(retain_graph=True)\n        if self.mode == "auto":\n            (-(self.lam.exp() * mmd)).backward()\n\n\nfor mode in ("auto", "fixed"):\n    Agent(mode).train(torch.randn(4, 3))\n',
                line=19, runtime="raises: backward through the graph a second time"),
        # The look-alike: the last iteration frees the graph, and a backward after the loop goes through it again.
        Invalid("import torch\nimport torch.nn as nn\n\n\ndef input_gradients(model, x0):\n"
                "    x = x0.clone().requires_grad_(True)\n    y = model(x).view(-1)\n    grads = []\n"
                "    for i in range(y.size(0)):\n        x.grad = None\n        goal = torch.abs(y[i])\n"
                "        if i < y.size(0) - 1:\n"
                "            goal.backward(retain_graph=True)\n        else:\n            goal.backward()\n"
                "        grads.append(x.grad.clone())\n    y.sum().backward()\n    return grads\n\n\n"
                "input_gradients(nn.Linear(4, 5), torch.randn(1, 4))\n",
                line=17, runtime="raises: backward through the graph a second time"),
        # An iterator made before the loop is empty from the second round on: `y` is then the first round's.
        Invalid("import torch\n\nx = torch.randn(3, requires_grad=True)\nbatches = iter([1.0, 2.0])\n"
                "for epoch in range(2):\n    for b in batches:\n        y = (x * b).sum()\n    y.backward()\n",
                line=8, runtime="raises: backward through the graph a second time"),
        # An inner `range` that the outer loop's variable shrinks: the last round runs it zero times.
        Invalid("import torch\n\nx = torch.randn(3, requires_grad=True)\nfor i in range(3):\n"
                "    for _ in range(2 - i):\n        y = (x * 2).sum()\n    y.backward()\n",
                line=7, runtime="raises: backward through the graph a second time"),
    )

    def check(self, event, report) -> None:
        if isinstance(event, CarryEvent):
            self._carry(event, report)
            return
        if isinstance(event, FreedElsewhereEvent):
            self._elsewhere(event, report)
            return
        t = event.target
        # retain_graph on *this* call does not help: the earlier backward already freed the buffers.
        if t.freed is None or t.rg is Tri.NO or t.carried is not None:
            return
        freed = t.freed
        via = t.via
        fix = None
        through = ""
        name = via.arg("expr", "") if via is not None and via.kind == USE else ""
        if name.isidentifier() and report.tree is not None and via.path is None and freed.path is None \
                and via.line > freed.line:
            through = f" through `{name}`"
            use = _first_use(report.tree, name, 0, freed.line)
            if use is not None:
                fix = make_fix(f"Detach `{name}` where the earlier loss used it", Applicability.UNSAFE,
                               insert_after(report.source, use, ".detach()"))
        sev = Severity.ERROR if t.freed_sure else Severity.WARNING
        report.add(self, event.node,
                   msg(f"This backward goes{through} into a graph an earlier backward freed, so it raises. "
                       "The earlier backward is at line ", freed.line, f"; PyTorch says {_MSG}."), severity=sev,
                   related=[freed, via and Note(via.line, via.column, f"`{via.text}` is used again here, after its graph was freed")],
                   fix=fix)

    def _elsewhere(self, event: FreedElsewhereEvent, report) -> None:
        """The class's override frees a graph that an inherited method (in a base class, often in another file)
        backwards again: the finding stands on this file's backward that frees it, the failing one in `related`."""
        freed, at = event.target.freed, event.at
        text = report.source.line_text(freed.line)
        start = len(text) - len(text.lstrip()) + 1
        where = f"line {at.line}" if at.path is None else f"{at.path.rsplit('/', 1)[-1]}:{at.line}"
        report.add(self, event.node,
                   f"This backward frees a graph that the inherited `{event.method}` backwards again ({where}), so "
                   f"that backward raises. Leave the backward to `{event.method}` or pass `retain_graph=True`; "
                   f"PyTorch says {_MSG}.",
                   severity=Severity.ERROR if event.target.freed_sure else Severity.WARNING,
                   related=[Note(at.line, at.column, f"the inherited `{event.method}` backwards it again here: raises",
                                 at.path)],
                   span=(freed.line, start, freed.line, len(text.rstrip()) + 1))

    def _carry(self, event: CarryEvent, report) -> None:
        freed = event.value.freed
        stored = event.value.stored
        if stored is not None and stored.path is not None and freed.path is None:
            # Kept on an object by code in another file (a buffer updated in a module's forward): that assignment
            # is what to change, so the finding goes there, with this file's backward as the failing line.
            line, col, _, _ = report.source.span(event.node)
            if report.add_in(self, stored,
                             "This keeps a graph on the object across steps, so the next step's backward "
                             "raises; keep it detached (`.detach()`) or reset it each step.",
                             severity=Severity.WARNING,
                             related=[freed, Note(line, col, f"the kept graph is used again here; the backward "
                                                             f"raises {_MSG}")]):
                return
            # That file's text is not at hand: point at this file's backward, which frees the graph.
            text = report.source.line_text(freed.line)
            start = len(text) - len(text.lstrip()) + 1
            report.add(self, event.node,
                       "This backward frees a graph an object keeps across steps, so the next step's backward raises.",
                       severity=Severity.WARNING, related=[stored],
                       span=(freed.line, start, freed.line, len(text) + 1))
            return
        if stored is not None and stored.path is None:
            # The graph is kept on an object (`self.cached = ...` in a method): that assignment is what to change.
            text = report.source.line_text(stored.line)
            start = len(text) - len(text.lstrip()) + 1
            line, col, _, _ = report.source.span(event.node)
            report.add(self, event.node,
                       msg("This keeps a graph on the object; the next backward through it (after line ", freed.line,
                           "'s) raises. Keep it detached (`.detach()`) or reset it each step."),
                       severity=Severity.WARNING,
                       related=[freed, Note(line, col, f"the kept graph is used again here; the backward raises {_MSG}")],
                       span=(stored.line, start, stored.line, len(text) + 1))
            return
        source = event.source
        if source is not None and source.path is None and freed.path is None:
            # The carried container is made anew each step; what holds the stale graph is a tensor computed once,
            # before the loop (`beg_embedding = net.emb(tok)`) and fed into every step: that statement moves into the
            # loop (or is detached, if no gradient should reach what made it).
            name = source.arg("expr")
            text = report.source.line_text(source.line)
            start = len(text) - len(text.lstrip()) + 1
            line, col, _, _ = report.source.span(event.node)
            report.add(self, event.node,
                       msg(f"`{name}` is computed once, before the loop; the backward at line ", freed.line,
                           f" frees its graph, so the next iteration's backward raises {_MSG}. Compute it inside "
                           "the loop."),
                       severity=Severity.WARNING,
                       related=[freed, Note(line, col, f"`{event.expr}` brings `{name}`'s freed graph into this step")],
                       span=(source.line, start, source.line, len(text.rstrip()) + 1))
            return
        if isinstance(event.arg, ast.Call):
            # The graph comes out of a call (state a module or helper keeps across calls, in a form gradsight does
            # not follow to its store): detaching the call's result would cut the model off its loss, so there is
            # no fix to offer here, only where the state is kept.
            report.add(self, event.node,
                       msg(f"`{event.expr}` returns a tensor built on the previous iteration's graph (state kept "
                           "across calls), which the backward at line ", freed.line,
                           f" frees; the next iteration's backward raises {_MSG}. Detach that state where it is "
                           "stored."),
                       severity=Severity.WARNING, related=[freed], span=report.source.span(event.arg))
            return
        if event.is_tuple:
            detached = f"tuple(t.detach() for t in {event.expr})"
            fix = make_fix(f"Detach every tensor of `{event.expr}` at each step", Applicability.UNSAFE,
                           edit_for(report.source, event.arg, detached))
        else:
            detached = f"{event.expr}.detach()"
            fix = make_fix(f"Detach `{event.expr}` at each step", Applicability.UNSAFE,
                           insert_after(report.source, event.arg, ".detach()"))
        report.add(self, event.node,
                   msg("This carries the previous iteration's graph, which the backward at line ", freed.line,
                       f" frees. The next iteration's backward then raises {_MSG}; pass `{detached}`."),
                   severity=Severity.WARNING, related=[freed], fix=fix,
                   span=report.source.span(event.arg))
