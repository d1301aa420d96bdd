from __future__ import annotations

import ast
import re

from ..engine.report import text as msg
from ..engine.events import InplaceEvent
from ..engine.report import make_fix
from ..engine.values import Tri
from ..findings import Applicability, Edit, Severity
from . import _fixes
from ._syntax import enclosing_arms
from .base import Invalid, Rule, Valid, at, tree_query

_MSG = "\"one of the variables needed for gradient computation has been modified by an inplace operation\""


# A beam-search style sampling helper (greedy from `.data`, gumbel, top-k through an in-place `scatter_` into a
# tensor it made itself): the index is saved by a gather on some paths, at two sites. Shared by a VALID example (the
# caller never reads the gathered value) and an INVALID one (the caller adds it into the loss).
_SAMPLER = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
            "def sample_next(logprobs, method):\n    if method == \"greedy\":\n"
            "        sample_logprobs, it = torch.max(logprobs.data, 1)\n        it = it.view(-1).long()\n"
            "    elif method == \"gumbel\":\n"
            "        it = torch.max(logprobs.data - torch.log(-torch.log(torch.rand_like(logprobs))), 1)[1]\n"
            "        sample_logprobs = logprobs.gather(1, it.unsqueeze(1))\n    else:\n"
            "        logprobs = logprobs / 0.7\n        tmp = torch.empty_like(logprobs).fill_(float(\"-inf\"))\n"
            "        topk, indices = torch.topk(logprobs, 3, dim=1)\n"
            "        logprobs = tmp.scatter(1, indices, topk)\n"
            "        logprobs.scatter_(1, indices, topk * 2)\n"
            "        it = torch.distributions.Categorical(logits=logprobs.detach()).sample()\n"
            "        sample_logprobs = logprobs.gather(1, it.unsqueeze(1))\n    return it, sample_logprobs\n\n")


_DISPATCH = "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\nclass Cap(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.lin = nn.Linear(8, 11)\n\n    def forward(self, *args, **kwargs):\n        mode = kwargs.get('mode', 'forward')\n        if 'mode' in kwargs:\n            del kwargs['mode']\n        return getattr(self, '_' + mode)(*args, **kwargs)\n\n    def _forward(self, x):\n        return F.log_softmax(self.lin(x), dim=-1)\n\n    def _sample(self, x):\n        logprobs = F.log_softmax(self.lin(x), dim=-1)\n        logprobs[:, [1, 2]] = logprobs[:, [1, 2]] - 0.5\n        return logprobs.argmax(-1), logprobs\n\n\n"


class InplaceOnSavedTensor(Rule):
    code = "GS301"
    name = "inplace-on-saved-tensor"
    severity = Severity.WARNING
    summary = "An in-place op overwrites a tensor that an earlier op saved for backward; backward will raise."
    events = (InplaceEvent,)
    what_it_does = ("Flags in-place operations (`x += y`, `x.mul_()`, `x[mask] = v`, `nn.ReLU(inplace=True)`, "
                    "`F.relu(x, inplace=True)`) on a tensor whose current value an earlier op saved for its "
                    "backward: `sigmoid`, `tanh`, `exp`, `relu`, `softmax` save their output; `mul` and `matmul` "
                    "save their inputs when the other operand requires grad. A saved view (`x[0] * w` saves "
                    "`x[0]`) shares its base's version counter, so writing into the base (`x[0] = x[0] * w`) "
                    "counts too. gradsight knows which op saves what from a table derived by running torch "
                    "(`scripts/gen_optable.py`).")
    why_bad = ("Backward needs the saved value; the in-place op bumps the tensor's version counter and "
               f"backward raises {_MSG}. In-place ops are otherwise fine: `y = x * 2; y += 1` is correct because "
               "multiplying by a Python number saves nothing, and `nn.Linear`'s output is not saved either. A write in an "
               "arm only evaluation mode runs (`else:` of `if self.training:`, where models keep an in-place form "
               "to save memory under `no_grad`) is information: it raises only when a backward runs through the "
               "module in eval mode.")
    example = "g = torch.sigmoid(self.proj(x))\ng *= 2.0   # sigmoid saved g for its backward\nreturn x * g"
    use_instead = "g = torch.sigmoid(self.proj(x))\ng = g * 2.0\nreturn x * g"
    fix_safety = ("Safe for a plain local name: the out-of-place form computes the same values and leaves the "
                  "saved tensor untouched. Other references to the old tensor (an alias, a list holding it) no "
                  "longer see the update, which is why gradsight only offers the rewrite for `name op= value`, "
                  "`name.op_(...)` and `torch.op_(name)` statements (the argument is rebound: `t = torch.relu(t)`). "
                  "A bare `F.relu(t, inplace=True)` statement becomes `t = F.relu(t)` (safe), never "
                  "`inplace=False` alone, which would throw the result away. For an `inplace=True` module "
                  "(`nn.ReLU(inplace=True)`) the fix sets `inplace=False`: the module's output is the same, only "
                  "its input is no longer overwritten (safe in the usual `x = self.act(x)` and `nn.Sequential` "
                  "uses). Where the call's result is bound to another name (`y = F.relu(t, inplace=True)`) the "
                  "`inplace=False` fix is unsafe: `t` keeps its old values afterwards.")
    references = ("https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd",)
    valid = (
        # A store through a string key (`output[-1]['hm'] = ...`, pytorch-pose-hg-3d's flip test) rebinds a dict's
        # entry, though the output was read as a tensor elsewhere (fresh32-false/03).
        Valid('import torch\n\n\ndef step(split, model, data_loader, num_stacks, optimizer=None):\n    if split == \'train\':\n        model.train()\n    else:\n        model.eval()\n    crit = torch.nn.MSELoss()\n    for input, target in data_loader:\n        output = model(input)\n        loss = crit(output[-1][\'hm\'], target)\n        for k in range(num_stacks - 1):\n            loss += crit(output[k], target)\n        if split == \'train\':\n            optimizer.zero_grad()\n            loss.backward()\n            optimizer.step()\n        else:\n            output_flip = model(input.flip(3))[-1][\'hm\'].detach().flip(3)\n            output[-1][\'hm\'] = (output[-1][\'hm\'] + output_flip) / 2\n        print(loss.item())\n\n\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.hm = torch.nn.Conv2d(3, 2, 3, padding=1)\n\n    def forward(self, x):\n        ret = {\'hm\': self.hm(x)}\n        return [ret]\n\n\nif __name__ == "__main__":\n    torch.manual_seed(0)\n    net = Net()\n    data = [(torch.randn(2, 3, 8, 8), torch.rand(2, 2, 8, 8)) for _ in range(3)]\n    step(\'train\', net, data, 1, torch.optim.SGD(net.parameters(), lr=0.1))\n    step(\'val\', net, data, 1)\n    print("OK: train and val run; the val arm rebinds a dict entry")\n'),
        # One class built with `relu=True` and then `relu=False` (timm's RepGhost): the second has no ReLU.
        Valid('import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def __init__(self, relu=True):\n        super().__init__()\n        self.conv = nn.Conv2d(2, 2, 1)\n        if relu:\n            self.relu = nn.ReLU(inplace=False)\n        else:\n            self.relu = nn.Identity()\n\n    def forward(self, x):\n        x2 = self.conv(x) + 1\n        return self.relu(x2)\n\n\nclass B(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.g1 = M(relu=True)\n        self.g2 = M(relu=False)\n\n    def forward(self, x):\n        s = x\n        x = self.g1(x)\n        x = self.g2(x)\n        x += s\n        return x\n\n\nB()(torch.randn(1, 2, 3, 3, requires_grad=True)).sum().backward()\nprint("ok")\n'),
        # An in-place ReLU module, then a layer reading the same tensor: nothing writes it again.
        Valid("import torch\nimport torch.nn as nn\nw = torch.randn(2, 2, requires_grad=True)\n"
              "relu1 = nn.ReLU(inplace=True)\nlin = nn.Linear(2, 2)\nh = w * 2\na = relu1(h)\nb = lin(h)\n"
              "(a + b).sum().backward()\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ny += 1\ny.sum().backward()\n"),
        # The out-of-place twin of an in-place update adds out of place: nothing saved is overwritten.
        Valid("import torch\nfrom torch.utils._pytree import tree_map\n\n\ndef scale_by_rms(eps=1e-8):\n"
              "    def update(gs, ns, inplace=True):\n        if inplace:\n\n            def f(g, n):\n"
              "                return g.div_(n.sqrt().add(eps))\n\n        else:\n\n            def f(g, n):\n"
              "                return g.div(n.sqrt().add(eps))\n\n        return tree_map(f, gs, ns)\n\n"
              "    return update\n\n\nw = torch.rand(3, requires_grad=True)\nupdate = scale_by_rms()\n"
              "out = update([torch.randn(3)], [w * 2 + 1], inplace=False)\nout[0].sum().backward()\n"),
        # `sqrt_` on a fresh temporary, then out-of-place arithmetic: nothing saved is overwritten.
        Valid("import torch\nv = torch.rand(3, requires_grad=True)\nm = torch.randn(3)\n"
              "u = m / v.add(1e-8).sqrt_().add(1e-8)\nu.sum().backward()\n"),
        Valid("import torch\nimport torch.nn as nn\nlin = nn.Linear(2, 2)\nh = lin(torch.randn(1, 2))\nh *= 2.0\n"
              "h.sum().backward()\n"),
        Valid("import torch.nn as nn\nimport torch\nm = nn.Sequential(nn.Linear(4, 4), nn.ReLU(inplace=True))\n"
              "m(torch.randn(2, 4)).sum().backward()\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\ng = torch.sigmoid(x)\ng = g * 2\n"
              "g.sum().backward()\n"),
        Valid("import torch\nw = torch.randn(3, requires_grad=True)\nx = torch.randn(2, 3)\nx[0] = x[0] + w\n"
              "x.sum().backward()\n"),
        # An inference method: its graphs die with its locals (it hands back detached NumPy data), so writing into
        # a saved tensor there makes nothing raise (labelmodels' posteriors).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.w = nn.Parameter(torch.randn(3))\n\n"
              "    def posteriors(self, x):\n        p = torch.exp(x * self.w)\n        p /= p.sum()\n"
              "        return p.detach().numpy()\n\n\nprint(Model().posteriors(torch.randn(3)))\n"),
        # A fresh tensor filled in place each iteration (ART's GRAPHITE attack): last iteration's `rand_start`, saved by
        # `*`, is another tensor, even though the same expression allocated it.
        Valid("import torch\nmask = torch.rand(3, requires_grad=True)\nimg = torch.rand(3)\nadvs = []\n"
              "for _ in range(3):\n    rand_start = torch.FloatTensor(*img.size()).uniform_(0.0, 0.1).to(img.device)\n"
              "    adv = (img + mask * rand_start).detach()\n    advs.append(adv)\n"),
        # The same patched `forward` with the layer frozen: nothing saves `x`.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Adapter(nn.Module):\n    def __init__(self, org):\n"
              "        super().__init__()\n        self.down = nn.Linear(4, 4)\n"
              "        self.down.requires_grad_(False)\n        self.org_forward = org.forward\n"
              "        org.forward = self.forward\n\n    def forward(self, x):\n        x += self.down(x)\n"
              "        return self.org_forward(x)\n\n\norg = nn.Linear(4, 4)\nadapter = Adapter(org)\n"
              "org(torch.randn(2, 4)).sum().backward()\n"),
        # `x.abs()` saves `x`, but its result only feeds the comparison: that graph is freed at once.
        Valid("import torch\nw = torch.randn(3, requires_grad=True)\nx = w * 1\nmask = x.abs() < 0.5\n"
              "x[mask] = 0.0\nx.sum().backward()\n"),
        # The function tests `t.requires_grad` and writes in place only where it is false: nothing was saved there.
        Valid("import torch\n\n\ndef soft(t):\n    y = torch.exp(t)\n    if not t.requires_grad:\n        y.add_(1)\n"
              "    return y\n\n\nw = torch.randn(3, requires_grad=True)\nsoft(w * 1).sum().backward()\n"
              "soft(torch.randn(3))\n"),
        # A branch of the test leaves the function: the graph-carrying call returns before the write.
        Valid("import torch\n\n\ndef soft(t):\n    y = torch.exp(t)\n    if t.requires_grad:\n        return y\n"
              "    y += 1\n    return y\n\n\nw = torch.randn(3, requires_grad=True)\nsoft(w * 1).sum().backward()\n"
              "soft(torch.randn(3))\n"),
        # The test comes before the op: the graph-carrying call returns before `exp` runs.
        Valid("import torch\n\n\ndef soft(t):\n    if t.requires_grad:\n        return torch.exp(t) + 1\n"
              "    y = torch.exp(t)\n    y += 1\n    return y\n\n\nw = torch.randn(3, requires_grad=True)\n"
              "soft(w * 1).sum().backward()\nsoft(torch.randn(3))\n"),
        # A conditional expression: BatchNorm saves its input, and `bn` is that input only in the arm where
        # BatchNorm did not run, so the in-place ReLU on `bn` overwrites nothing saved.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Block(nn.Module):\n"
              "    def __init__(self, inp_dim, out_dim, use_norm=True):\n        super().__init__()\n"
              "        self.use_norm = use_norm\n        self.linear = nn.Linear(inp_dim, out_dim)\n"
              "        if self.use_norm:\n            self.bn = nn.BatchNorm1d(out_dim)\n"
              "        self.relu = nn.ReLU(inplace=True)\n\n    def forward(self, x):\n"
              "        linear = self.linear(x)\n        bn = self.bn(linear) if self.use_norm else linear\n"
              "        return self.relu(bn)\n\n\nfor use_norm in (True, False):\n"
              "    Block(4, 3, use_norm=use_norm)(torch.randn(8, 4)).sum().backward()\n"),
        # A `Sequential` whose first child gradsight cannot see (an activation chosen by name): nothing known saves `x`.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Enc(nn.Module):\n"
              '    def __init__(self, dim, act="Tanh"):\n        super().__init__()\n'
              "        self.proj = nn.Linear(dim, dim)\n"
              "        self.gate = nn.Sequential(getattr(nn, act)(), nn.Linear(dim, dim))\n\n"
              "    def forward(self, features):\n        x = self.proj(features)\n        x += self.gate(x)\n"
              "        return x\n\n\nEnc(4)(torch.randn(2, 5, 4)).sum().backward()\n"),
        # `nn.Identity` returns its input: Hardswish saved its own input, not the output the residual writes into.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass ConvAct(nn.Module):\n"
              "    def __init__(self, c, use_act=True):\n        super().__init__()\n"
              "        self.conv = nn.Conv2d(c, c, 1)\n"
              "        self.act = nn.Hardswish() if use_act else nn.Identity()\n"
              "        self.drop = nn.Identity()\n\n    def forward(self, x):\n"
              "        return self.drop(self.act(self.conv(x)))\n\n\nclass Block(nn.Module):\n"
              "    def __init__(self, c):\n        super().__init__()\n        self.agg = ConvAct(c)\n\n"
              "    def forward(self, x):\n        identity = x\n        x = self.agg(x)\n        x += identity\n"
              "        return x\n\n\nBlock(2)(torch.randn(1, 2, 3, 3)).sum().backward()\n"),
        # A sampling helper returns the sampled index and the gathered log-prob; the caller never reads the
        # gathered value, so no backward reaches the gather that saved the index, and writing into the index is fine
        # (ImageCaptioning.pytorch's decoding loop).
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
              "def sample_next(logprobs):\n"
              "    it = torch.distributions.Categorical(logits=logprobs.detach()).sample()\n"
              "    sample_logprobs = logprobs.gather(1, it.unsqueeze(1))\n    return it, sample_logprobs\n\n\n"
              "def decode(net, x, steps=3):\n    out = x.new_zeros(x.shape[0], steps, 6)\n"
              "    for t in range(steps):\n        logprobs = F.log_softmax(net(x + t), dim=1)\n"
              "        it, sample_logprobs = sample_next(logprobs)\n        it[it == 5] = 0\n"
              "        out[:, t] = logprobs\n    return out\n\n\n"
              "decode(nn.Linear(4, 6), torch.randn(3, 4)).sum().backward()\n"),
        # The same sampling helper with several sampling methods (greedy from `.data`, gumbel, top-k through an
        # in-place `scatter_` into a tensor the helper made itself): the index is saved on some paths, at two sites,
        # and the caller still never reads the gathered value, so no backward reaches either gather.
        Valid(_SAMPLER
              + "\ndef decode(net, x, method, steps=3):\n    out = x.new_zeros(x.shape[0], steps, 6)\n"
              "    for t in range(steps):\n        logprobs = F.log_softmax(net(x + t), dim=1)\n"
              "        it, sample_logprobs = sample_next(logprobs, method)\n        if t == 0:\n"
              "            unfinished = it != 5\n        else:\n            it[~unfinished] = 0\n"
              "            unfinished = unfinished & (it != 5)\n        out[:, t] = logprobs\n    return out\n\n"
              "\nfor method in (\"greedy\", \"gumbel\", \"top\"):\n"
              "    decode(nn.Linear(4, 6), torch.randn(3, 4), method).sum().backward()\n"),
        # Beam search writing `-inf` into the scores `topk` returned (aster's `beam_search`): `topk` (like `sort` and
        # `max`/`min` along a dim) saves only its indices, so the values may be written (bench/fresh19-false/05).
        Valid("import torch\nimport torch.nn.functional as F\n\n\n"
              "def beam(logits, width=3, eos=1):\n    b, n = logits.shape[1] // width, logits.shape[2]\n"
              "    scores = torch.zeros(b * width, 1)\n    kept = []\n    for step in logits:\n"
              "        s = scores.repeat(1, n)\n        s += F.log_softmax(step, dim=1)\n"
              "        top, cand = s.view(b, -1).topk(width, dim=1)\n        scores = top.view(b * width, 1)\n"
              "        kept.append(scores.clone())\n        best, _ = torch.max(s, 1)\n"
              "        best.mul_(0.5)\n        scores.masked_fill_((cand % n).view(-1, 1).eq(eos), -1e4)\n"
              "        kept.append(best.sum() + scores.sum())\n    return sum(k.sum() for k in kept)\n\n\n"
              "beam(torch.randn(4, 6, 5, requires_grad=True)).backward()\n"),
        # A Viterbi decode adding the emission scores in place to the values of `max(dim=-1)` (jidasheng/bi-lstm-crf's
        # CRF): a dim given by keyword picks the same overload as a positional one, which saves only the indices; so
        # does `median` along a dim (bench/fresh25-false/05).
        Valid("import torch\n\n\ndef viterbi(feats, trans):\n    score = torch.zeros(feats.shape[1])\n"
              "    for emit in feats:\n        acc = score.unsqueeze(1) + trans\n"
              "        acc, bp = acc.max(dim=-1)\n        acc += emit\n        mid, _ = acc.median(dim=0)\n"
              "        mid += 1\n        score = acc + mid\n    return score.max(dim=-1)\n\n\n"
              "best, tag = viterbi(torch.randn(4, 3, requires_grad=True), torch.randn(3, 3, requires_grad=True))\n"
              "best.backward()\n"),
        # `std_mean` saves the std it returns, not the mean: writing into the mean is harmless.
        Valid("import torch\nx = torch.randn(4, 3, requires_grad=True)\nstd, mean = torch.std_mean(x * 2, dim=0)\n"
              "mean += 1\n(std + mean).sum().backward()\n"),
        # A call whose result is thrown away (a statement, or a name never read): the graph it built, and what its
        # `*` saved of `x`, dies with it.
        Valid("import torch\n\n\ndef log_norm(x, w):\n    y = x * w\n    print(y.norm())\n    return y\n\n\n"
              "w = torch.randn(3, requires_grad=True)\n\n\ndef step(x):\n    log_norm(x, w)\n"
              "    unused = log_norm(x, w)\n    x.add_(1)\n    return (x * w).sum()\n\n\n"
              "step(torch.randn(3)).backward()\n"),
        # A residual `x += inp` after a submodule that ends in an in-place ReLU (which saves its output) only when
        # built with `activate_first=False`; every construction keeps the default, so the output is BatchNorm's, which
        # nothing saved (deeplabv3-plus-pytorch's Xception `Block`).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass SepConv(nn.Module):\n"
              "    def __init__(self, c, activate_first=True):\n        super().__init__()\n"
              "        self.relu0 = nn.ReLU()\n        self.conv = nn.Conv2d(c, c, 3, padding=1)\n"
              "        self.bn = nn.BatchNorm2d(c)\n        self.relu2 = nn.ReLU(inplace=True)\n"
              "        self.activate_first = activate_first\n\n    def forward(self, x):\n"
              "        if self.activate_first:\n            x = self.relu0(x)\n"
              "        x = self.bn(self.conv(x))\n        if not self.activate_first:\n"
              "            x = self.relu2(x)\n        return x\n\n\nclass Block(nn.Module):\n"
              "    def __init__(self, c, activate_first=True):\n        super().__init__()\n"
              "        self.sep = SepConv(c, activate_first=activate_first)\n\n    def forward(self, inp):\n"
              "        x = self.sep(inp)\n        x += inp\n        return x\n\n\n"
              "Block(2)(torch.randn(1, 2, 3, 3)).sum().backward()\n"),
        # ImageCaptioning.pytorch's and R2Gen's `forward` picks `_sample` by a string (`getattr(self, '_' + mode)`),
        # and every `mode='sample'` call runs under `no_grad`: the decoding's in-place writes free nothing needed.
        Valid(_DISPATCH + "model = Cap()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor _ in range(3):\n    loss = -model(torch.randn(4, 8), mode='forward')[:, 0].mean()\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n    with torch.no_grad():\n        seq, _ = model(torch.randn(4, 8), mode='sample')\n"),
        # A metric thresholds the model's output in place after the training step's backward, which runs only
        # `if model.training:` (McGregorWwww/UCTransNet's `_show_dice`; bench/fresh19-false/01): where the backward
        # ran, the saving graph is gone; where it did not, nothing differentiates that graph any more.
        Valid('import torch\nimport torch.nn as nn\n\n\nclass DiceLoss(nn.Module):\n    def _show_dice(self, inputs, targets):\n        inputs[inputs >= 0.5] = 1\n        inputs[inputs < 0.5] = 0\n        return (inputs * targets).sum() / targets.sum()\n\n    def forward(self, inputs, targets):\n        return ((inputs - targets) ** 2).mean()\n\n\ndef train_one_epoch(loader, model, criterion, optimizer):\n    dice_sum = 0.0\n    for images, masks in loader:\n        preds = model(images)\n        out_loss = criterion(preds, masks)\n        if model.training:\n            optimizer.zero_grad()\n            out_loss.backward()\n            optimizer.step()\n        train_dice = criterion._show_dice(preds, masks)\n        dice_sum += float(train_dice)\n    return dice_sum / len(loader)\n\n\nmodel = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid())\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nloader = [(torch.randn(3, 4), (torch.rand(3, 4) > 0.5).float()) for _ in range(2)]\nmodel.train()\nprint(train_one_epoch(loader, model, DiceLoss(), optimizer))\nmodel.eval()\nprint(train_one_epoch(loader, model, DiceLoss(), optimizer))\n'),
        # Two instances of one wrapper module (GS-WGAN's `SpectralNorm`, whose forward returns
        # `self.module.forward(*args)`): each call's output is a tensor of its own, no alias of the other's
        # (bench/fresh35-false/05).
        Valid('import torch\nimport torch.nn as nn\n\n\nclass Wrap(nn.Module):\n    def __init__(self, module):\n        super().__init__()\n        self.module = module\n\n    def forward(self, *args):\n        return self.module.forward(*args)\n\n\nclass Disc(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n        self.linear = Wrap(nn.Linear(8, 1))\n        self.linear_y = Wrap(nn.Embedding(10, 8))\n\n    def forward(self, x, y):\n        h = self.fc(x)\n        out = self.linear(h)\n        out += torch.sum(self.linear_y(y) * h, dim=1, keepdim=True)\n        return out.view(-1)\n\n\nDisc()(torch.randn(4, 8), torch.randint(0, 10, (4,))).sum().backward()\n'),
        # The product that saved the mask is kept only for a number (`after.sum().item()`): its graph dies with the
        # call, so the later write into the mask changes nothing a backward reads (DeLightCMU/RSC's
        # self-challenging mask; bench/fresh34-false/04).
        Valid('import torch\n\n\ndef mask_step(x, idx):\n    x_new = x.clone().detach().requires_grad_(True)\n    mask_all = torch.where(x_new > 0, torch.zeros(x.shape), torch.ones(x.shape))\n    after = x_new * mask_all\n    mask_all[idx, :] = 1\n    return x * mask_all, after.sum().item()\n\n\nif __name__ == "__main__":\n    w = torch.randn(4, 3, requires_grad=True)\n    out = mask_step(w * 2, torch.tensor([0, 2]))\n    out = out[0] if isinstance(out, tuple) else out\n    out.sum().backward()\n'),
    )
    invalid = (
        # The look-alike: the product is returned and backwarded with the masked input.
        Invalid('import torch\n\n\ndef mask_step(x, idx):\n    x_new = x.clone().detach().requires_grad_(True)\n    mask_all = torch.where(x_new > 0, torch.zeros(x.shape), torch.ones(x.shape))\n    after = x_new * mask_all\n    mask_all[idx, :] = 1\n    return x * mask_all, after.sum()\n\n\nif __name__ == "__main__":\n    w = torch.randn(4, 3, requires_grad=True)\n    out = mask_step(w * 2, torch.tensor([0, 2]))\n    (out[0].sum() + out[1]).backward()\n', line=8,
                runtime="raises: modified by an inplace operation"),
        # The look-alike: the embedding's own output is written after the product saved it.
        Invalid('import torch\nimport torch.nn as nn\n\n\nclass Wrap(nn.Module):\n    def __init__(self, module):\n        super().__init__()\n        self.module = module\n\n    def forward(self, *args):\n        return self.module.forward(*args)\n\n\nclass Disc(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n        self.linear = Wrap(nn.Linear(8, 1))\n        self.linear_y = Wrap(nn.Embedding(10, 8))\n\n    def forward(self, x, y):\n        h = self.fc(x)\n        out = self.linear(h)\n        emb = self.linear_y(y)\n        out = out + torch.sum(emb * h, dim=1, keepdim=True)\n        emb += 1\n        return out.view(-1)\n\n\nDisc()(torch.randn(4, 8), torch.randint(0, 10, (4,))).sum().backward()\n', line=26,
                runtime="raises: modified by an inplace operation"),
        # The same metric computed before the guarded backward: in training, the backward needs the Sigmoid's output.
        Invalid('import torch\nimport torch.nn as nn\n\n\nclass DiceLoss(nn.Module):\n    def _show_dice(self, inputs, targets):\n        inputs[inputs >= 0.5] = 1\n        inputs[inputs < 0.5] = 0\n        return (inputs * targets).sum() / targets.sum()\n\n    def forward(self, inputs, targets):\n        return ((inputs - targets) ** 2).mean()\n\n\ndef train_one_epoch(loader, model, criterion, optimizer):\n    dice_sum = 0.0\n    for images, masks in loader:\n        preds = model(images)\n        out_loss = criterion(preds, masks)\n        train_dice = criterion._show_dice(preds, masks)\n        if model.training:\n            optimizer.zero_grad()\n            out_loss.backward()\n            optimizer.step()\n        dice_sum += float(train_dice)\n    return dice_sum / len(loader)\n\n\nmodel = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid())\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nloader = [(torch.randn(3, 4), (torch.rand(3, 4) > 0.5).float()) for _ in range(2)]\nmodel.train()\nprint(train_one_epoch(loader, model, DiceLoss(), optimizer))\nmodel.eval()\nprint(train_one_epoch(loader, model, DiceLoss(), optimizer))\n', line=7,
                runtime="raises: modified by an inplace operation"),
        # The model's output a list of tensors, and the write into the last one before the backward.
        Invalid('import torch\n\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.hm = torch.nn.Conv2d(3, 2, 3, padding=1)\n\n    def forward(self, x):\n        return [torch.sigmoid(self.hm(x))]\n\n\nnet = Net()\nx, target = torch.randn(2, 3, 8, 8), torch.rand(2, 2, 8, 8)\noutput = net(x)\noutput[-1][:, 0] = 0.5\nloss = ((output[-1] - target) ** 2).mean()\nloss.backward()\n', line=16,
                runtime="raises: modified by an inplace operation"),
        # The same sampler run in grad mode (self-critical training) and backwarded through its log-probs.
        Invalid(_DISPATCH + "model = Cap()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor _ in range(3):\n    loss = -model(torch.randn(4, 8), mode='forward')[:, 0].mean()\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n    seq, logp = model(torch.randn(4, 8), mode='sample')\n    opt.zero_grad()\n    (-logp.max(-1)[0].mean()).backward()\n", line=22, runtime="raises: modified by an inplace operation"),
        # An L2-normalised embedding built on its base class's `forward` (through `super()`): `pow` saved the
        # output that the in-place division then overwrites.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Embedding(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n    def forward(self, x):\n"
                "        return self.fc(x)\n\n\nclass EmbeddingL2(Embedding):\n    def forward(self, x):\n"
                "        output = super().forward(x)\n        output /= output.pow(2).sum(1, keepdim=True).sqrt()\n"
                "        return output\n\n\nEmbeddingL2()(torch.randn(3, 4)).sum().backward()\n", line=17,
                runtime="raises: modified by an inplace operation"),
        # Two in-place ReLU modules on one tensor (weiaicunzai/pytorch-cifar100's NASNet cell): the first returns
        # its input, now saved as its output, and the second overwrites it. The fix goes on the second module.
        Invalid("import torch\nimport torch.nn as nn\nw = torch.randn(2, 2, requires_grad=True)\n"
                "relu1 = nn.ReLU(inplace=True)\nrelu2 = nn.ReLU(inplace=True)\nh = w * 2\na = relu1(h)\n"
                "b = relu2(h)\n(a + b).sum().backward()\n", line=5, runtime="raises: modified by an inplace operation"),
        # The same write in a method that returns the tensor: the caller may backward through it.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.w = nn.Parameter(torch.randn(3))\n\n"
                "    def posteriors(self, x):\n        p = torch.exp(x * self.w)\n        p /= p.sum()\n"
                "        return p\n\n\nModel().posteriors(torch.randn(3)).sum().backward()\n", line=12,
                runtime="raises: modified by an inplace operation"),
        # Saved on one path only: in eval mode `std` is still exp's saved output (MONAI's VAE reparameterisation).
        Invalid("import torch\n\n\ndef reparameterize(mu, logvar, training):\n    std = torch.exp(0.5 * logvar)\n"
                "    if training:\n        std = torch.randn_like(std).mul(std)\n    return std.add_(mu)\n\n\n"
                "w = torch.randn(3, requires_grad=True)\nreparameterize(w * 1, w * 2, False).sum().backward()\n",
                line=8, runtime="raises: modified by an inplace operation"),
        # The Viterbi look-alike with `max()` over the whole tensor: one tensor, saved as its own result.
        Invalid("import torch\n\n\ndef best_path(feats, trans):\n    acc = feats.unsqueeze(1) + trans\n"
                "    best = acc.max()\n    best += feats.sum()\n    return best\n\n\n"
                "best_path(torch.randn(3), torch.randn(3, 3, requires_grad=True)).backward()\n", line=7,
                runtime="raises: modified by an inplace operation"),
        # `std_mean`'s std is what its backward saved.
        Invalid("import torch\nx = torch.randn(4, 3, requires_grad=True)\nstd, mean = torch.std_mean(x * 2, dim=0)\n"
                "std += 1\n(std + mean).sum().backward()\n", line=4, runtime="raises: modified by an inplace operation"),
        Invalid("import torch\nx = torch.randn(3, requires_grad=True)\ng = torch.sigmoid(x)\ng *= 2.0\n"
                "g.sum().backward()\n", line=4, runtime="raises: modified by an inplace operation",
                fixed="import torch\nx = torch.randn(3, requires_grad=True)\ng = torch.sigmoid(x)\ng = g * 2.0\n"
                      "g.sum().backward()\n"),
        # An in-place op that saves its result like its out-of-place twin (`sqrt_`), then an in-place write into that
        # result (torchopt's differentiable Adam: `v.add(eps_root).sqrt_().add_(eps)`).
        Invalid("import torch\nv = torch.rand(3, requires_grad=True)\nm = torch.randn(3)\n"
                "u = m / v.add(1e-8).sqrt_().add_(1e-8)\nu.sum().backward()\n", line=4,
                runtime="raises: modified by an inplace operation"),
        Invalid("import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.exp(x)\ny.add_(1)\n"
                "y.sum().backward()\n", line=4, runtime="raises: modified by an inplace operation",
                fixed="import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.exp(x)\ny = y.add(1)\n"
                      "y.sum().backward()\n"),
        Invalid("import torch\nimport torch.nn as nn\nm = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), "
                "nn.ReLU(inplace=True))\nm(torch.randn(2, 4)).sum().backward()\n", line=3,
                runtime="raises: modified by an inplace operation",
                fixed="import torch\nimport torch.nn as nn\nm = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), "
                      "nn.ReLU(inplace=False))\nm(torch.randn(2, 4)).sum().backward()\n"),
        # Regressions: the fix once rebound the module name (`torch = torch.relu(t)`, `F = F.relu(t)`) and
        # turned a bare `F.relu(t, inplace=True)` into `F.relu(t, inplace=False)`, dropping the ReLU.
        Invalid("import torch\nw = torch.randn(4, requires_grad=True)\nt = torch.sigmoid(w)\ntorch.relu_(t)\n"
                "t.sum().backward()\n", line=4, runtime="raises: modified by an inplace operation",
                fixed="import torch\nw = torch.randn(4, requires_grad=True)\nt = torch.sigmoid(w)\nt = torch.relu(t)\n"
                      "t.sum().backward()\n"),
        Invalid("import torch\nimport torch.nn.functional as F\nw = torch.randn(4, requires_grad=True)\n"
                "t = torch.sigmoid(w)\nF.relu_(t)\nt.sum().backward()\n", line=5,
                runtime="raises: modified by an inplace operation",
                fixed="import torch\nimport torch.nn.functional as F\nw = torch.randn(4, requires_grad=True)\n"
                      "t = torch.sigmoid(w)\nt = F.relu(t)\nt.sum().backward()\n"),
        Invalid("import torch\nimport torch.nn.functional as F\nw = torch.randn(4, requires_grad=True)\n"
                "t = torch.sigmoid(w)\nF.relu(t, inplace=True)\nt.sum().backward()\n", line=5,
                runtime="raises: modified by an inplace operation",
                fixed="import torch\nimport torch.nn.functional as F\nw = torch.randn(4, requires_grad=True)\n"
                      "t = torch.sigmoid(w)\nt = F.relu(t)\nt.sum().backward()\n"),
        # No rewrite is offered for an indexed target: `g[0] = g[0] * 2.0` would still write into `g`.
        Invalid("import torch\nw = torch.randn(3, requires_grad=True)\ng = torch.sigmoid(w)\ng[0] *= 2.0\n"
                "g.sum().backward()\n", line=4, runtime="raises: modified by an inplace operation"),
        Invalid("import torch\nw = torch.randn(3, requires_grad=True)\nx = torch.randn(3)\ny = x * w\nx[0] = 5.0\n"
                "y.sum().backward()\n", line=5, runtime="raises: modified by an inplace operation"),
        Invalid("import torch\nw = torch.randn(3, requires_grad=True)\nx = torch.randn(2, 3)\nx[0] = x[0] * w\n"
                "x.sum().backward()\n", line=4, runtime="raises: modified by an inplace operation"),
        # Nothing shows what `root` is, but the function tests `root.requires_grad` after the decomposition read it:
        # it is called with a graph, and then `torch.linalg.qr` saved `R` (gpytorch's fantasy strategy).
        Invalid("import torch\n\n\ndef inv_root(root):\n    try:\n        Q, R = torch.linalg.qr(root)\n"
                "        Rdiag = torch.diagonal(R, dim1=-2, dim2=-1)\n        Rdiag[Rdiag.abs() < 1e-6] = 1e-6\n"
                "        return torch.linalg.solve_triangular(R, Q.mT, upper=True)\n    except RuntimeError:\n"
                "        if root.requires_grad:\n            raise\n        return torch.linalg.pinv(root)\n\n\n"
                "w = torch.randn(4, 3, requires_grad=True)\ninv_root(w * 1).sum().backward()\n", line=8,
                runtime="raises: modified by an inplace operation"),
        # The out-of-place twin of an in-place update (torchopt's `if inplace: def f ... else: def f ...`, handed to
        # `tree_map`): nothing shows what `n` is, but the twin exists for autograd, and `sqrt` saved its output.
        Invalid("import torch\nfrom torch.utils._pytree import tree_map\n\n\ndef scale_by_rms(eps=1e-8):\n"
                "    def update(gs, ns, inplace=True):\n        if inplace:\n\n            def f(g, n):\n"
                "                return g.div_(n.sqrt().add_(eps))\n\n        else:\n\n            def f(g, n):\n"
                "                return g.div(n.sqrt().add_(eps))\n\n        return tree_map(f, gs, ns)\n\n"
                "    return update\n\n\nw = torch.rand(3, requires_grad=True)\nupdate = scale_by_rms()\n"
                "out = update([torch.randn(3)], [w * 2 + 1], inplace=False)\nout[0].sum().backward()\n",
                line=15, runtime="raises: modified by an inplace operation"),
        # A decomposition saves its outputs; the diagonal is a view of `R` (gpytorch's fantasy-strategy fix).
        Invalid("import torch\na = torch.randn(4, 3, requires_grad=True)\nQ, R = torch.linalg.qr(a)\n"
                "d = torch.diagonal(R)\nd[0] = 1.0\n(Q.sum() + R.sum()).backward()\n", line=5,
                runtime="raises: modified by an inplace operation"),
        # A `forward` patched into another module's place (an adapter): nothing shows what `x` is, but the trainable
        # `Linear` saved it for its weight's gradient, whatever `x`'s own grad state.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Adapter(nn.Module):\n    def __init__(self, org):\n"
                "        super().__init__()\n        self.down = nn.Linear(4, 4)\n"
                "        self.org_forward = org.forward\n        org.forward = self.forward\n\n"
                "    def forward(self, x):\n        x += self.down(x)\n        return self.org_forward(x)\n\n\n"
                "org = nn.Linear(4, 4)\nadapter = Adapter(org)\norg(torch.randn(2, 4)).sum().backward()\n", line=13,
                 runtime="raises: modified by an inplace operation"),
        # The look-alike: the in-place ReLU on BatchNorm's input itself, saved where BatchNorm ran.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Block(nn.Module):\n"
                "    def __init__(self, inp_dim, out_dim, use_norm=True):\n        super().__init__()\n"
                "        self.use_norm = use_norm\n        self.linear = nn.Linear(inp_dim, out_dim)\n"
                "        if self.use_norm:\n            self.bn = nn.BatchNorm1d(out_dim)\n"
                "        self.relu = nn.ReLU(inplace=True)\n\n    def forward(self, x):\n"
                "        linear = self.linear(x)\n        bn = self.bn(linear) if self.use_norm else linear\n"
                "        self.relu(linear)\n        return bn\n\n\n"
                "Block(4, 3)(torch.randn(8, 4)).sum().backward()\n", line=12,
                runtime="raises: modified by an inplace operation"),
        # `weight_norm` returns the module it reparametrizes: the conv in the `Sequential` still saves its input,
        # a view of `x` (wav2vec-style positional convolutions).
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass SamePad(nn.Module):\n"
                "    def __init__(self, k):\n        super().__init__()\n"
                "        self.remove = 1 if k % 2 == 0 else 0\n\n    def forward(self, x):\n"
                "        if self.remove > 0:\n            x = x[:, :, :-self.remove]\n        return x\n\n"
                "\nclass Enc(nn.Module):\n    def __init__(self, dim, k):\n        super().__init__()\n"
                "        self.proj = nn.Linear(dim, dim)\n"
                "        self.pos_conv = nn.Conv1d(dim, dim, kernel_size=k, padding=k // 2, groups=4)\n"
                "        self.pos_conv = nn.utils.weight_norm(self.pos_conv, name=\"weight\", dim=2)\n"
                "        self.pos_conv = nn.Sequential(self.pos_conv, SamePad(k), nn.GELU())\n\n"
                "    def forward(self, features):\n        x = self.proj(features)\n"
                "        x_conv = self.pos_conv(x.transpose(1, 2))\n"
                "        x_conv = x_conv.transpose(1, 2)\n        x += x_conv\n        return x\n\n\n"
                "Enc(8, 4)(torch.randn(2, 5, 8)).sum().backward()\n",
                line=28, runtime="raises: modified by an inplace operation",
                fixed="import torch\nimport torch.nn as nn\n\n\nclass SamePad(nn.Module):\n"
                "    def __init__(self, k):\n        super().__init__()\n"
                "        self.remove = 1 if k % 2 == 0 else 0\n\n    def forward(self, x):\n"
                "        if self.remove > 0:\n            x = x[:, :, :-self.remove]\n        return x\n\n"
                "\nclass Enc(nn.Module):\n    def __init__(self, dim, k):\n        super().__init__()\n"
                "        self.proj = nn.Linear(dim, dim)\n"
                "        self.pos_conv = nn.Conv1d(dim, dim, kernel_size=k, padding=k // 2, groups=4)\n"
                "        self.pos_conv = nn.utils.weight_norm(self.pos_conv, name=\"weight\", dim=2)\n"
                "        self.pos_conv = nn.Sequential(self.pos_conv, SamePad(k), nn.GELU())\n\n"
                "    def forward(self, features):\n        x = self.proj(features)\n"
                "        x_conv = self.pos_conv(x.transpose(1, 2))\n"
                "        x_conv = x_conv.transpose(1, 2)\n        x = x + x_conv\n        return x\n\n\n"
                "Enc(8, 4)(torch.randn(2, 5, 8)).sum().backward()\n"),
        # A `Sequential` with a child gradsight cannot see (wav2vec's `SamePad` from another package): the conv before
        # it still ran first, and saved its input, a view of `x`.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Enc(nn.Module):\n"
                '    def __init__(self, dim, act="GELU"):\n        super().__init__()\n'
                "        self.proj = nn.Linear(dim, dim)\n"
                "        self.pos_conv = nn.Sequential(nn.Conv1d(dim, dim, 3, padding=1), getattr(nn, act)())\n\n"
                "    def forward(self, features):\n        x = self.proj(features)\n"
                "        x_conv = self.pos_conv(x.transpose(1, 2))\n        x += x_conv.transpose(1, 2)\n"
                "        return x\n\n\nEnc(4)(torch.randn(2, 5, 4)).sum().backward()\n", line=14,
                runtime="raises: modified by an inplace operation"),
        # The block ends in `nn.Identity` (no affine layer), which hands back ReLU's saved output itself (timm's HGNet
        # `ConvBNAct`); with the affine layer chosen instead nothing would be saved.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Affine(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.scale = nn.Parameter(torch.ones(1))\n\n"
                "    def forward(self, x):\n        return self.scale * x\n\n\nclass ConvAct(nn.Module):\n"
                "    def __init__(self, c, use_affine=False):\n        super().__init__()\n"
                "        self.conv = nn.Conv2d(c, c, 1)\n        self.act = nn.ReLU()\n"
                "        self.affine = Affine() if use_affine else nn.Identity()\n\n    def forward(self, x):\n"
                "        return self.affine(self.act(self.conv(x)))\n\n\nclass Block(nn.Module):\n"
                "    def __init__(self, c, use_affine=False):\n        super().__init__()\n"
                "        self.agg = nn.Sequential(ConvAct(c, use_affine), ConvAct(c, use_affine))\n\n"
                "    def forward(self, x):\n        identity = x\n        x = self.agg(x)\n        x += identity\n"
                "        return x\n\n\nBlock(2)(torch.randn(1, 2, 3, 3)).sum().backward()\n", line=33,
                runtime="raises: modified by an inplace operation"),
        # The same decoding loop where the gathered log-prob does reach the loss: the gather's backward reads the
        # index that was written in place.
        Invalid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
                "def sample_next(logprobs):\n"
                "    it = torch.distributions.Categorical(logits=logprobs.detach()).sample()\n"
                "    sample_logprobs = logprobs.gather(1, it.unsqueeze(1))\n    return it, sample_logprobs\n\n\n"
                "def decode(net, x, steps=3):\n    out = x.new_zeros(x.shape[0], steps, 6)\n"
                "    for t in range(steps):\n        logprobs = F.log_softmax(net(x + t), dim=1)\n"
                "        it, sample_logprobs = sample_next(logprobs)\n        it[it == 5] = 0\n"
                "        out[:, t] = logprobs + sample_logprobs\n    return out\n\n\n"
                "decode(nn.Linear(4, 6), torch.randn(3, 4)).sum().backward()\n", line=17,
                runtime="raises: modified by an inplace operation"),
        # The same block built with `activate_first=False`: its submodule now ends in the in-place ReLU.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass SepConv(nn.Module):\n"
                "    def __init__(self, c, activate_first=True):\n        super().__init__()\n"
                "        self.relu0 = nn.ReLU()\n        self.conv = nn.Conv2d(c, c, 3, padding=1)\n"
                "        self.bn = nn.BatchNorm2d(c)\n        self.relu2 = nn.ReLU(inplace=True)\n"
                "        self.activate_first = activate_first\n\n    def forward(self, x):\n"
                "        if self.activate_first:\n            x = self.relu0(x)\n"
                "        x = self.bn(self.conv(x))\n        if not self.activate_first:\n"
                "            x = self.relu2(x)\n        return x\n\n\nclass Block(nn.Module):\n"
                "    def __init__(self, c, activate_first=True):\n        super().__init__()\n"
                "        self.sep = SepConv(c, activate_first=activate_first)\n\n    def forward(self, inp):\n"
                "        x = self.sep(inp)\n        x += inp\n        return x\n\n\n"
                "Block(2, activate_first=False)(torch.randn(1, 2, 3, 3)).sum().backward()\n", line=30,
                runtime="raises: modified by an inplace operation"),
        # That helper's caller adding the gathered log-prob into the loss: the gather's backward reads the index.
        Invalid(_SAMPLER
                + "\ndef decode(net, x, method, steps=3):\n    out = x.new_zeros(x.shape[0], steps, 6)\n"
                "    for t in range(steps):\n        logprobs = F.log_softmax(net(x + t), dim=1)\n"
                "        it, sample_logprobs = sample_next(logprobs, method)\n        if t == 0:\n"
                "            unfinished = it != 5\n        else:\n            it[~unfinished] = 0\n"
                "            unfinished = unfinished & (it != 5)\n"
                "        out[:, t] = logprobs + sample_logprobs.view(-1, 1)\n    return out\n\n\n"
                "for method in (\"greedy\", \"gumbel\", \"top\"):\n"
                "    decode(nn.Linear(4, 6), torch.randn(3, 4), method).sum().backward()\n", line=32, runtime="raises: modified by an inplace operation"),
    )

    def check(self, event: InplaceEvent, report) -> None:
        saved = event.target.saved
        if saved is None or event.target.is_data:
            return  # `.data` writes do not bump the version counter: GS204 reports those
        if event.target.leaf is Tri.YES and event.target.rg is Tri.YES and event.grad_mode is not Tri.NO:
            return  # PyTorch raises the leaf error first (GS302)
        t = event.target
        if saved.path is None and _numbers_in_text(report.source, saved) and report.tree is not None \
                and _kept_for_numbers(tree_query(self, report.tree), saved):
            return  # the saving product is read only for numbers and indices: no backward ever runs through it
        if t.saved_gone is not None and not t.saved_sure and t.freed is not None and not t.freed_sure:
            # Written after a backward that consumed the saving graph on some path (`if model.training:
            # loss.backward()`, then a metric thresholds the output in place): the paths that still hold the save
            # are those that skipped the backward, where nothing in view differentiates that graph any more.
            return
        fix = None
        span = None
        src = report.source
        if event.module is not None and event.module.origin is not None and event.module.origin.path is None:
            # (An in-place module built in another file, a caller's: the write is reported where it runs.)
            origin = event.module.origin
            text = src.line_text(origin.line)
            idx = text.find("inplace=True", max(0, origin.column - 1))
            span = (origin.line, origin.column, origin.line, len(text) + 1)
            if idx >= 0:
                col = idx + len("inplace=") + 1
                fix = make_fix("Use `inplace=False`", Applicability.SAFE,
                               Edit(origin.line, col, origin.line, col + 4, "False"))
            what = msg(f"`{event.op}` (line ", origin.line, ")")
        else:
            stmt = event.stmt
            node = event.node
            if isinstance(node, ast.Call) and any(kw.arg == "inplace" for kw in node.keywords):
                if isinstance(stmt, ast.Expr) and stmt.value is node:
                    # A bare `F.relu(t, inplace=True)`: `inplace=False` alone would discard the result.
                    edit = _fixes.inplace_keyword_statement(src, stmt, event.expr)
                    if edit is not None:
                        fix = make_fix(f"Rebind `{event.expr}` to the out-of-place result", Applicability.SAFE, edit)
                else:
                    # `y = F.relu(t, inplace=True)`: `y` keeps its value, but `t` is no longer modified, so
                    # later reads of `t` see other values: not safe.
                    edit = _fixes.keyword_value(src, node, "inplace", "False")
                    if edit is not None:
                        fix = make_fix("Use `inplace=False`", Applicability.UNSAFE, edit)
            elif isinstance(stmt, (ast.AugAssign, ast.Expr)) and event.target.leaf is not Tri.YES \
                    and not (isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Subscript)):
                # Never rewrite a leaf out of place: `w = w - lr * w.grad` would stop being a leaf. Nor an indexed
                # target: `x[0] = x[0] + y` still writes into `x`.
                edit = _fixes.out_of_place(src, stmt, event.expr)
                if edit is not None:
                    fix = make_fix("Rewrite as an out-of-place operation", Applicability.SAFE, edit)
            text = src.segment(node)
            what = f"`{text}`" if len(text) < 60 and "\n" not in text else f"`{event.op}`"
        when = ""
        severity = None
        if event.module is None and _training_in_text(report.source, event.node) and report.tree is not None \
                and _eval_only_arm(tree_query(self, report.tree), event.node):
            # The write sits in an arm only evaluation mode runs (`else:` of `if self.training:`), the in-place form
            # a model keeps to save memory when it is not trained (MVSNet's cost volume): it raises only where a
            # backward runs through the model in eval mode.
            when = " when a backward runs through this module in eval mode"
            severity = Severity.INFORMATION
        elif "Dropout" in event.op or "dropout" in event.op:
            # Dropout only writes when it is active: training mode with p > 0.
            when = " when dropout is active (training mode, p > 0)"
        elif not event.target.saved_sure:
            # Saved on one path only (`std = exp(...)`, replaced by a fresh tensor in the other branch).
            when = " on the paths that save it"
        report.add(self, event.node,
                   msg(f"This in-place write overwrites a tensor saved for backward, so backward raises{when}. ", what,
                       f" modifies `{event.expr}`, {saved.text} at ", at(saved), f"; PyTorch says {_MSG}."),
                   related=[saved, saved.parent if saved.parent is not None
                            and saved.parent.kind in ("grad-tested", "out-of-place-twin") else None], fix=fix, span=span,
                   severity=severity)


# Reading `report.tree` makes the unit depend on the whole file's text (re-run on every keystroke): the syntax checks
# below run only where the text around the write can hold what they look for.
_NUMBER_USE = r"\b{name}\b[\w.\[\]()]*\.(?:item|tolist|numpy|nonzero|arg(?:max|min|sort)|numel|size|long|int|bool|byte" \
              r"|gt|lt|ge|le|eq|ne|any|all|multinomial)\(|\b{name}\b\s*(?:[<>]=?|[!=]=)"
_ASSIGNED = re.compile(r"\s*([A-Za-z_]\w*)\s*=(?!=)")


def _training_in_text(source, node: ast.AST) -> bool:
    """Whether `self.training` is spelled in the 200 lines above the write."""
    line = getattr(node, "lineno", 0)
    return any("training" in source.line_text(n) for n in range(max(1, line - 200), line + 1))


def _numbers_in_text(source, saved) -> bool:
    """Whether the saving line binds a name that some later line (within 300) reads for numbers or compares."""
    m = _ASSIGNED.match(source.line_text(saved.line))
    if m is None:
        return False
    use = re.compile(_NUMBER_USE.format(name=re.escape(m.group(1))))
    last = min(len(source.lines), saved.line + 300)
    return any(use.search(source.line_text(n)) for n in range(saved.line, last + 1))


def _training_test(test: ast.AST):
    """True for `self.training` (and `self.training is True` / `== True`), False for `not self.training` (and
    `is False` / `== False`); None for any other test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _training_test(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.Eq)) \
            and isinstance(test.comparators[0], ast.Constant) and isinstance(test.comparators[0].value, bool):
        inner = _training_test(test.left)
        return None if inner is None else inner == test.comparators[0].value
    if isinstance(test, ast.Attribute) and test.attr == "training" and isinstance(test.value, ast.Name) \
            and test.value.id == "self":
        return True
    return None


def _eval_only_arm(q, node: ast.AST) -> bool:
    """Whether `node` runs only while its module is in evaluation mode: it lies in the arm of an `if` on
    `self.training` that the test sends evaluation to, within the same function (the body of `if not
    self.training:`, the `else` of `if self.training:`)."""
    return any(sense is not None and in_body != sense
               for stmt, in_body in enclosing_arms(q, node) for sense in (_training_test(stmt.test),))


# A chain reaching one of these methods (or a comparison) makes numbers or indices: no graph goes on.
_NUMBER_METHODS = frozenset({"item", "tolist", "numpy", "nonzero", "argmax", "argmin", "argsort", "numel", "size",
                             "any", "all", "gt", "lt", "ge", "le", "eq", "ne", "long", "int", "bool", "byte",
                             "multinomial"})
_MAX_NAMES = 24  # names followed from the saving product before giving up (a long function stays cheap)


def _kept_for_numbers(q, saved) -> bool:
    """Whether the op that saved the tensor is the whole value of `name = <op>` in a function, and what flows from
    `name` there (through calls, arithmetic and names bound from it) ends only in numbers, indices or truth values
    (`after.sum().item()`, `change.gt(th).long()`, `(p > t).nonzero()`): that graph is never differentiated, so a
    write in place into what it saved changes nothing a backward reads (DeLightCMU/RSC's self-challenging masks;
    bench/fresh34-false/04). Anything returned, stored, handed to `backward` or bound otherwise keeps the finding."""
    stmt = next((n for n in q.assigns if n.lineno == saved.line and len(n.targets) == 1
                 and isinstance(n.targets[0], ast.Name) and n.value.lineno == saved.line
                 and n.value.col_offset in (saved.column, saved.column - 1)), None)
    fn = q.enclosing_function(stmt) if stmt is not None else None
    if fn is None:
        return False
    loop = q.enclosing(stmt, (ast.For, ast.AsyncFor, ast.While))
    if loop is not None and q.enclosing_function(loop) is fn:
        # In a loop, the next iteration reads what this one bound, above the binding too.
        todo, seen = [(stmt.targets[0].id, loop.lineno - 1)], set()
    else:
        todo, seen = [(stmt.targets[0].id, stmt.lineno)], set()
    while todo:
        name, since = todo.pop()
        if (name, since) in seen:
            continue
        seen.add((name, since))
        if len(seen) > _MAX_NAMES:
            return False
        reads = [n for n in q.names_loaded(fn, name) if n.lineno > since]
        for n in reads:
            node, numbers, handed = n, False, False
            while not numbers:
                up = q.parent(node)
                if isinstance(up, ast.Call) and up.func is not node:
                    handed = True  # an argument: the callee could keep it (`outs.append(after)`)
                if isinstance(up, ast.Call) and up.func is node:
                    numbers = isinstance(node, ast.Attribute) and node.attr in _NUMBER_METHODS
                    if isinstance(node, ast.Attribute) and node.attr in ("backward", "register_hook"):
                        return False
                elif isinstance(up, ast.keyword):
                    up = q.parent(up)
                elif not (isinstance(up, (ast.Attribute, ast.Subscript, ast.BinOp, ast.UnaryOp, ast.Call))
                          or isinstance(up, (ast.Tuple, ast.List)) and isinstance(up.ctx, ast.Load)):
                    break
                node = up
            up = q.parent(node)
            if numbers or isinstance(up, ast.Compare) or isinstance(up, ast.Expr) and not handed \
                    or isinstance(up, ast.If) and up.test is node:
                continue
            if isinstance(up, ast.Assign) and up.value is node and all(isinstance(t, ast.Name) for t in up.targets):
                todo.extend((t.id, up.lineno) for t in up.targets)
                continue
            return False
    return True
