"""How far the analysis follows real project code (docs/heap.md): saves made inside calls, lists that grow,
`nn.ModuleList()` filled by `append`, packed sequences, decompositions, `new_*` factories, classes derived from
bases gradsight cannot see, and packages below the workspace root. Every program that the tests call buggy is
run under torch here and must fail (or misbehave) as stated; every clean one must run."""

from __future__ import annotations

import textwrap

import pytest

from gradsight import analysis
from gradsight.analysis import analyze_source
from gradsight.engine.workspace import Workspace
from gradsight.findings import Severity

from torch_runner import run_scripts

INPLACE = "modified by an inplace operation"

PROGRAMS_BLOCKS = '''\
        import torch
        import torch.nn as nn

        class Scale(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.w = nn.Parameter(torch.ones(c, 1))

            def forward(self, x):
                return x * torch.sigmoid(self.w)

        class Block(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.bn = nn.BatchNorm1d(c)
                self.conv = nn.Conv1d(c, c, 3, padding=1)
                self.scale = Scale(c)

            def forward(self, x):
                residual = x
                out = self.conv(torch.relu(self.bn(x)))
                out = self.scale(out)
                out += residual
                return out

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.Sequential(Block(2), Block(2), Block(2))

            def forward(self, x):
                return self.blocks(x)

        Net()(torch.randn(4, 2, 5)).sum().backward()
        '''

# A function the file runs under `no_grad` (two programs below: as it is, and also run in grad mode).
EVALUATE_UNDER_NO_GRAD = """\
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 2)

        def evaluate(loader):
            model.eval()
            return [model(x).numpy() for x in loader]

        loader = [torch.randn(3, 4) for _ in range(2)]
        with torch.no_grad():
            evaluate(loader)
        """

# name -> (program, expected (code, line) findings at warning or above, what torch does: "raises: <text>" or "ok")
# Shared by pairs of programs below (each pair: the shape as found in real code, and its counterpart).
TWIN_CRITIC = """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class QNetwork(nn.Module):
            def __init__(self):
                super().__init__()
                self.l1, self.l2 = nn.Linear(3, 8), nn.Linear(8, 1)
                self.l3, self.l4 = nn.Linear(3, 8), nn.Linear(8, 1)

            def forward(self, s, a):
                xu = torch.cat([s, a], 1)
                return self.l2(F.relu(self.l1(xu))), self.l4(F.relu(self.l3(xu)))

        critic = QNetwork()
        policy = nn.Linear(2, 1)
        critic_optim = torch.optim.Adam(critic.parameters())
        policy_optim = torch.optim.Adam(policy.parameters())
        s, a, target = torch.randn(4, 2), torch.randn(4, 1), torch.randn(4, 1)
        qf1, qf2 = critic(s, a)
        qf1_loss, qf2_loss = F.mse_loss(qf1, target), F.mse_loss(qf2, target)
        qf1_pi, qf2_pi = critic(s, policy(s))
        policy_loss = -torch.min(qf1_pi, qf2_pi).mean()
        critic_optim.zero_grad()
        qf1_loss.backward()
        critic_optim.step()
        critic_optim.zero_grad()
        qf2_loss.backward()
        critic_optim.step()
        """

EMA_COPY = """\
        import copy
        import torch
        import torch.nn as nn

        net = nn.Linear(2, 2)
        ema = copy.deepcopy(net).eval()FREEZE
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            net(torch.randn(3, 2)).pow(2).mean().backward()
            opt.step()
            for p_ema, p_net in zip(ema.parameters(), net.parameters()):
                p_ema.copy_(p_net.detach().lerp(p_ema, 0.9))
        """

LOSS_MODULE = """\
        import torch
        import torch.nn as nn

        class SmoothedFocalLoss(nn.Module):
            def __init__(self, eps=0.1):
                super().__init__()
                self.eps = eps

            def forward(self, logits, target):
                p = torch.softmax(logits, dim=-1)
                onehot = torch.zeros_like(logits).scatter_(1, target.unsqueeze(1), 1)
                weight = p * onehotCLONE
                onehot.mul_(1 - self.eps).add_(self.eps / logits.size(-1))
                return -(onehot * weight * torch.log(p)).sum(-1).mean()

        SmoothedFocalLoss()(torch.randn(4, 3, requires_grad=True), torch.tensor([0, 1, 2, 0])).backward()
        """

PROPERTY_AGENT = """\
        import numpy as np
        import torch

        class Agent(object):
            def __init__(self, init_temperature=0.1):
                self.log_alpha = torch.tensor(np.log(init_temperature)).to("cpu")
                self.log_alpha.requires_grad = True
                self.log_alpha_optimizer = torch.optim.Adam([self.log_alpha], lr=1e-3)

            @property
            def alpha(self):
                return self.log_alpha.exp()DETACH

            def update(self, log_pi):
                self.log_alpha_optimizer.zero_grad()
                alpha_loss = (self.alpha * (-log_pi + 2.0).detach()).mean()
                alpha_loss.backward()
                self.log_alpha_optimizer.step()

        Agent().update(torch.randn(4))
        """

PROGRAMS = {
    # Conv1d inside the user module saves `mel`; the caller then writes into `mel` (speechbrain's Tacotron2).
    "saved_inside_call": ("""\
        import torch
        import torch.nn as nn

        class Post(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv1d(2, 2, 3, padding=1)

            def forward(self, x):
                return self.conv(x)

        post = Post()
        w = torch.randn(1, 2, 5, requires_grad=True)
        mel = w * 2
        out = post(mel)
        mel.masked_fill_(mel > 0, 0.0)
        (out.sum() + mel.sum()).backward()
        """, [("GS301", 16)], "raises: " + INPLACE),
    # The same, but the backward inside the helper consumed the graph that saved `x`: writing into it is fine.
    "saved_inside_call_then_freed": ("""\
        import torch
        import torch.nn as nn

        lin = nn.Linear(3, 1)

        def step(x):
            loss = lin(x).sum()
            loss.backward()
            return loss.item()

        x = torch.randn(2, 3)
        for _ in range(2):
            step(x)
            x.mul_(2)
        """, [], "ok"),
    # A function the file runs only under `no_grad` is analysed with grad mode unknown: its outputs are not said to
    # require grad (before, `.numpy()` here was an error on a program that runs).
    "called_only_under_no_grad": (EVALUATE_UNDER_NO_GRAD, [], "ok"),
    # The same function also run in grad mode: that call raises, and its own run still says so.
    "called_under_no_grad_and_in_grad_mode": (EVALUATE_UNDER_NO_GRAD + "evaluate(loader)\n", [("GS201", 8)],
                                              "raises: Can't call numpy() on Tensor that requires grad"),
    # A method the file calls from a `@torch.no_grad()` method, the same way.
    "method_called_from_no_grad_method": ("""\
        import torch
        import torch.nn as nn

        class Runner:
            def __init__(self):
                self.model = nn.Linear(4, 2)

            def predict(self, x):
                return self.model(x).numpy()

            @torch.no_grad()
            def run(self, xs):
                return [self.predict(x) for x in xs]

        print(Runner().run([torch.randn(3, 4)]))
        """, [], "ok"),
    # A loop over a one-element literal runs its body once: its backward frees nothing a later round uses (before,
    # the fixpoint's second round claimed a second backward, GS402, on a program that runs).
    "loop_over_one_element": ("""\
        import torch
        w = torch.randn(3, requires_grad=True)
        h = w * 2
        a = h.exp().sum()
        for loss in [a]:
            loss.backward()
        """, [], "ok"),
    # Two losses sharing `h`'s graph, backwarded one after the other by the loop: the second raises.
    "loop_over_two_losses": ("""\
        import torch
        w = torch.randn(3, requires_grad=True)
        h = w * 2
        a = h.exp().sum()
        b = h.sin().sum()
        for loss in [a, b]:
            loss.backward()
        """, [("GS402", 7)], "raises: Trying to backward through the graph a second time"),
    # A dict literal's entries are tracked like `d["a"] = x` stores: backwarding each of two losses that share a
    # graph raises at the second (torchvision-detection-shaped `for loss in loss_dict.values()`).
    "dict_literal_backward_each": ("""\
        import torch
        w = torch.randn(3, requires_grad=True)
        h = w * 2
        losses = {"a": h.exp().sum(), "b": h.sin().sum()}
        for name, loss in losses.items():
            loss.backward()
        """, [("GS402", 6)], "raises: Trying to backward through the graph a second time"),
    # One entry: the body runs once, nothing is backwarded twice.
    "dict_literal_one_entry": ("""\
        import torch
        w = torch.randn(3, requires_grad=True)
        losses = {"a": (w * 2).exp().sum()}
        for loss in losses.values():
            loss.backward()
        """, [], "ok"),
    # An entry read back by its constant key keeps its grad state.
    "dict_literal_entry_numpy": ("""\
        import torch
        w = torch.randn(3, requires_grad=True)
        out = {"pred": w * 2, "n": 3}
        arr = out["pred"].numpy()
        """, [("GS201", 4)], "raises: Can't call numpy() on Tensor that requires grad"),
    # A ModuleList built empty and filled by append: its layers are known, so the Conv1d's save is seen.
    "modulelist_append": ("""\
        import torch
        import torch.nn as nn

        class Post(nn.Module):
            def __init__(self, n=3):
                super().__init__()
                self.convs = nn.ModuleList()
                for _ in range(n):
                    self.convs.append(nn.Conv1d(2, 2, 3, padding=1))

            def forward(self, x):
                for conv in self.convs:
                    x = torch.tanh(conv(x))
                return x

        post = Post()
        w = torch.randn(1, 2, 5, requires_grad=True)
        mel = w * 2
        out = post(mel)
        mel.mul_(0.5)
        (out.sum() + mel.sum()).backward()
        """, [("GS301", 20)], "raises: " + INPLACE),
    # `outs` grows in the loop; the stacked result carries the graph, so `.numpy()` on it raises.
    "list_summary": ("""\
        import torch
        w = torch.randn(3, requires_grad=True)
        outs = []
        for i in range(3):
            outs += [w * i]
        stacked = torch.stack(outs)
        arr = stacked.numpy()
        """, [("GS201", 7)], "raises: Can't call numpy() on Tensor that requires grad"),
    # A summarised list of different modules is not unpacked into nn.Sequential as one layer (timm's dla
    # `_make_conv_level`): the inplace ReLU there writes into the BatchNorm output, which nothing saved.
    "sequential_of_grown_list": ("""\
        import torch
        import torch.nn as nn

        def level(c, n):
            modules = []
            for _ in range(n):
                modules.extend([nn.Conv1d(c, c, 3, padding=1), nn.BatchNorm1d(c), nn.ReLU(inplace=True)])
            return nn.Sequential(*modules)

        stem = nn.Sequential(nn.Conv1d(2, 2, 3, padding=1), nn.ReLU(inplace=True))
        body = level(2, 2)
        x = stem(torch.randn(4, 2, 5))
        x = body(x)
        x.sum().backward()
        """, [], "ok"),
    # `nn.Sequential(OrderedDict(pairs))` with the pairs appended in a loop (avalanche's `MLP`): the layers'
    # order is not known, but a `Linear` among them has parameters, so the output has a graph.
    "sequential_of_grown_ordered_dict": ("""\
        from collections import OrderedDict
        import torch
        import torch.nn as nn

        def mlp(sizes):
            q = []
            for i in range(len(sizes) - 1):
                q.append(("Linear_%d" % i, nn.Linear(sizes[i], sizes[i + 1])))
                if i < len(sizes) - 2:
                    q.append(("ReLU_%d" % i, nn.ReLU(inplace=True)))
            return nn.Sequential(OrderedDict(q))

        net = mlp([2, 8, 3])
        out = net(torch.randn(4, 2))
        arr = out.numpy()
        """, [("GS201", 15)], "raises: Can't call numpy() on Tensor that requires grad"),
    # The literal pairs are the layers, in order; under no_grad the output has no graph.
    "sequential_of_ordered_dict_literal": ("""\
        import collections
        import torch
        import torch.nn as nn

        net = nn.Sequential(collections.OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.Tanh())]))
        out = net(torch.randn(4, 2))
        arr = out.detach().numpy()
        with torch.no_grad():
            arr = net(torch.randn(4, 2)).numpy()
        probs = out.numpy()
        """, [("GS201", 10)], "raises: Can't call numpy() on Tensor that requires grad"),
    # pack/pad keep the grad state: the LSTM output unpacked from a PackedSequence has a graph.
    "packed_sequence": ("""\
        import torch
        import torch.nn as nn
        from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

        lstm = nn.LSTM(2, 3, batch_first=True)
        x = torch.randn(2, 4, 2)
        packed = pack_padded_sequence(x, torch.tensor([4, 3]), batch_first=True)
        out, _ = lstm(packed)
        padded, lengths = pad_packed_sequence(out, batch_first=True)
        arr = padded.numpy()
        """, [("GS201", 10)], "raises: Can't call numpy() on Tensor that requires grad"),
    # Residual blocks applied one after the other: each block's output is a new tensor, although it was allocated at the
    # same site as the previous block's output (its input here). `out += residual` writes into the conv output,
    # not into `x`, which BatchNorm saved (speechbrain's ResNet blocks).
    "blocks_in_sequence": (PROGRAMS_BLOCKS, [], "ok"),
    # The same blocks whose output comes straight from their last layer (the statement allocates it itself).
    "blocks_in_sequence_direct": (PROGRAMS_BLOCKS.replace("                out = self.scale(out)\n", ""), [], "ok"),
    # Blocks whose `nn.Sequential(Conv2d, BatchNorm2d, ReLU(inplace=True))` runs at one source line for every
    # block: the ReLU writes into this block's BatchNorm output, not into the previous block's output that
    # Conv2d saved, although both were allocated at that line (kornia's XFeat `BasicLayer`).
    "inplace_relu_blocks_in_sequence": ("""\
        import torch
        from torch import nn

        class BasicLayer(nn.Module):
            def __init__(self, cin, cout):
                super().__init__()
                self.layer = nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False),
                                           nn.BatchNorm2d(cout, affine=False), nn.ReLU(inplace=True))

            def forward(self, x):
                return self.layer(x)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = nn.Sequential(BasicLayer(1, 4), BasicLayer(4, 4), BasicLayer(4, 8))

            def forward(self, x):
                return self.block(x)

        Net()(torch.randn(2, 1, 8, 8)).sum().backward()
        """, [], "ok"),
    # The same network called in a loop, each result kept: the next call's ReLU writes into the new BatchNorm
    # output, not into last iteration's result (kornia's DeFMO renderer).
    "inplace_relu_sequential_in_loop": ("""\
        import torch
        from torch import nn

        net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
                            nn.Conv2d(4, 4, 3, padding=1))
        latent = torch.randn(2, 2, 5, 5, requires_grad=True)
        renders = []
        for k in range(3):
            result = net(torch.cat((torch.full((2, 1, 5, 5), float(k)), latent), 1))
            renders.append(result)
        torch.stack(renders, 1).sum().backward()
        """, [], "ok"),
    # But an in-place module on last iteration's result, which an op saved, is still the bug it was.
    "inplace_relu_on_kept_result": ("""\
        import torch
        from torch import nn

        lin = nn.Linear(4, 4)
        act = nn.ReLU(inplace=True)
        h = lin(torch.randn(2, 4))
        outs = []
        for _ in range(2):
            outs.append(lin(h))
            h = act(h)
        torch.stack(outs).sum().backward()
        """, [("GS301", 5)], "raises: " + INPLACE),
    # A test function under pytest decorators is analysed like any other: the marks leave its body and grad mode
    # as they are (mosaicml/composer@d628fbbd fixed exactly this `.numpy()` in a parametrized test).
    "pytest_decorated_test_function": ("""\
        import pytest
        import torch
        import torch.nn as nn

        @pytest.mark.parametrize("n", [2])
        def test_export(n):
            model = nn.Linear(3, n)
            model.eval()
            assert model(torch.randn(1, 3)).numpy().shape == (1, n)

        test_export(2)
        """, [("GS201", 9)], "raises: Can't call numpy() on Tensor that requires grad"),
    # A decorator of the project's own may enter `no_grad` around the body (lucidrains' `eval_decorator`): the
    # function is not analysed on its own, so nothing is claimed about its outputs.
    "own_decorator_may_disable_grad": ("""\
        import functools
        import torch
        import torch.nn as nn

        def no_grad_call(fn):
            @functools.wraps(fn)
            def inner(model, x):
                with torch.no_grad():
                    return fn(model, x)
            return inner

        @no_grad_call
        def sample(model, x):
            model.eval()
            return model(x).numpy()

        print(sample(nn.Linear(3, 2), torch.randn(1, 3)))
        """, [], "ok"),
    # The pre-0.4 `Variable(t, requires_grad=True)` is a leaf that requires grad (MorvanZhou's PyTorch-Tutorial
    # `202_variable.py`: GS401 said "raises", an error, on a program that runs).
    "variable_requires_grad": ("""\
        import torch
        from torch.autograd import Variable

        tensor = torch.FloatTensor([[1, 2], [3, 4]])
        variable = Variable(tensor, requires_grad=True)
        v_out = torch.mean(variable * variable)
        v_out.backward()
        print(variable.grad)
        """, [], "ok"),
    # Without the flag it is the tensor's values, which need no gradient: that backward does raise.
    "variable_without_requires_grad": ("""\
        import torch
        from torch.autograd import Variable

        tensor = torch.FloatTensor([[1, 2], [3, 4]])
        variable = Variable(tensor)
        v_out = torch.mean(variable * variable)
        v_out.backward()
        """, [("GS401", 7)], "raises: does not require grad"),
    # Twin critics: two instances of one class build two graphs at the same lines of `forward`; backwarding one
    # frees nothing of the other (SAC's and TD3's `qf1_loss.backward()` then `qf2_loss.backward()`: GS402 said
    # "raises", an error, on TianhongDai's SAC and on this program, which runs).
    "twin_critics": ("""\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Q(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(5, 8)
                self.out = nn.Linear(8, 1)

            def forward(self, obs, action):
                x = F.relu(self.fc1(torch.cat([obs, action], dim=1)))
                return self.out(x)

        qf1, qf2 = Q(), Q()
        o1, o2 = torch.optim.Adam(qf1.parameters()), torch.optim.Adam(qf2.parameters())
        obs, act, target = torch.randn(4, 3), torch.randn(4, 2), torch.zeros(4, 1)
        l1 = (qf1(obs, act) - target).pow(2).mean()
        l2 = (qf2(obs, act) - target).pow(2).mean()
        o1.zero_grad()
        l1.backward()
        o1.step()
        o2.zero_grad()
        l2.backward()
        o2.step()
        """, [], "ok"),
    # But the actor loss built through `qf1` before the critic's step still saved qf1's weights: that backward
    # raises (the order in TianhongDai's SAC `_update_newtork`, found once the false alarm above was gone).
    "actor_loss_after_critic_step": ("""\
        import torch
        import torch.nn as nn

        actor, qf1 = nn.Linear(3, 2), nn.Linear(5, 1)
        oq, oa = torch.optim.Adam(qf1.parameters()), torch.optim.Adam(actor.parameters())
        obs, act = torch.randn(4, 3), torch.randn(4, 2)
        actor_loss = -qf1(torch.cat([obs, torch.tanh(actor(obs))], 1)).mean()
        q_loss = qf1(torch.cat([obs, act], 1)).pow(2).mean()
        oq.zero_grad()
        q_loss.backward()
        oq.step()
        oa.zero_grad()
        actor_loss.backward()
        oa.step()
        """, [("GS308", 11), ("GS308", 13)], "raises: " + INPLACE),  # on the critic's step and the backward
    # A flag parameter tested twice in one loop (`if icm:` computes `L_I`, a later `if icm:` backwards it) is on one
    # side for the whole call: the function is analysed once per value, so `L_I` is never last iteration's
    # (philtabor's ICM worker: two GS402 on a program that runs).
    "flag_parameter_tested_twice": ("""\
        import torch
        import torch.nn as nn


        class ICM(nn.Module):
            def __init__(self):
                super().__init__()
                self.f = nn.Linear(3, 3)

            def calc_loss(self, s, s_):
                pred = self.f(s)
                r_i = (pred - s_).pow(2).mean(dim=1)
                return r_i, nn.MSELoss()(pred, s_), pred.pow(2).mean()


        def worker(agent, optimizer, icm_optimizer, env, icm=False):
            if icm:
                local_icm = ICM()
                icm_optimizer = torch.optim.SGD(local_icm.parameters(), lr=0.1)
            else:
                intrinsic_reward = torch.zeros(1)
            episode = 0
            while episode < 10:
                done = False
                steps = 0
                while not done:
                    s, s_, done = env.step()
                    value = agent(s)
                    steps += 1
                    if steps % 5 == 0 or done:
                        if icm:
                            intrinsic_reward, L_I, L_F = local_icm.calc_loss(s, s_)
                        loss = (value.squeeze(1) - torch.tensor(intrinsic_reward.detach().numpy())).pow(2).mean()
                        optimizer.zero_grad()
                        if icm:
                            icm_optimizer.zero_grad()
                            (L_I + L_F).backward()
                        loss.backward()
                        optimizer.step()
                episode += 1


        class Env:
            def __init__(self):
                self.t = 0

            def step(self):
                self.t += 1
                return torch.randn(4, 3), torch.randn(4, 3), self.t % 7 == 0


        for flag in (True, False):
            agent = nn.Linear(3, 1)
            worker(agent, torch.optim.SGD(agent.parameters(), lr=0.1), torch.optim.SGD([torch.zeros(1)], lr=0.1), Env(),
                   icm=flag)
        """, [], "ok"),
    # The same split keeps what one side does wrong: with `carry=True` the loop carries a freed graph.
    "flag_parameter_side_with_a_bug": ("""\
        import torch
        import torch.nn as nn


        def train(model, batches, carry=False):
            h = torch.zeros(4, 1)
            for x in batches:
                out = model(x)
                if carry:
                    out = out + h
                loss = out.pow(2).mean()
                loss.backward()
                if carry:
                    h = out


        train(nn.Linear(3, 1), [torch.randn(4, 3) for _ in range(3)], carry=True)
        """, [("GS402", 10)], "raises: Trying to backward through the graph a second time"),
    # `accelerator.backward(loss)` on a helper gradsight cannot see backwards the loss; the helper is not a tensor
    # (lucidrains' audiolm trainers: "`clip_grad_norm_` modifies `self.accelerator`, saved by `.log()`", 5 times).
    "training_helper_backward": ("""\
        import torch
        import torch.nn as nn

        class Helper:
            def backward(self, loss):
                loss.backward()

            def clip_grad_norm_(self, params, max_norm):
                return torch.nn.utils.clip_grad_norm_(params, max_norm)

            def log(self, values, step=0):
                print(step, values)

        class Trainer:
            def __init__(self, model, accelerator):
                self.model = model
                self.accelerator = accelerator
                self.opt = torch.optim.SGD(model.parameters(), lr=0.1)

            def train_step(self, x, step):
                loss = self.model(x).pow(2).mean()
                self.accelerator.backward(loss)
                self.accelerator.clip_grad_norm_(self.model.parameters(), 1.0)
                self.opt.step()
                self.opt.zero_grad()
                self.accelerator.log({"loss": loss.item()}, step=step)

            def train(self, steps):
                for i in range(steps):
                    self.train_step(torch.randn(4, 3), i)

        Trainer(nn.Linear(3, 1), Helper()).train(2)
        """, [], "ok"),
    # A line search: the ratio is read only in a comparison, so the graph that saved `expected` dies unused, and
    # scaling `expected` in place next round is fine (dongminlee94's TRPO). The backward before the loop ran on
    # another graph. (Inside a function: module-level names are not surveyed, see `only_discarded`.)
    "ratio_read_only_in_comparison": ("""\
        import torch

        def line_search(w):
            old_loss = (w ** 2).sum()
            g, = torch.autograd.grad(old_loss, [w])
            expected = (g * w).sum(0, keepdim=True)
            for i in range(3):
                new_loss = ((w * 0.5 ** i) ** 2).sum()
                expected *= 0.5
                ratio = (new_loss - old_loss) / expected
                if ratio > 0.1:
                    break

        line_search(torch.randn(3, requires_grad=True))
        """, [], "ok"),
    # The same ratio also backwarded: the in-place scaling of the divisor it saved raises.
    "ratio_backwarded_after_scaling": ("""\
        import torch

        w = torch.randn(3, requires_grad=True)
        expected = w * 2
        ratio = w.sum() / expected
        expected *= 0.5
        if (ratio > 0.1).any():
            print("improved")
        ratio.sum().backward()
        """, [("GS301", 6)], "raises: " + INPLACE),
    # A bool parameter the call leaves at its default takes one branch: `ret_np=False` never converts.
    "bool_default_branch": ('''\
        import torch

        def grad_of(utility, ret_np=False):
            if ret_np:
                utility = torch.tensor(utility)
            return utility * 2

        w = torch.randn(3, requires_grad=True)
        grad_of(w * 1).sum().backward()
        ''', [], "ok"),
    # ... and the other branch when the call passes True.
    "bool_argument_branch": ('''\
        import torch

        def to_numpy(t, ret_np=False):
            if ret_np:
                return t.numpy()
            return t

        w = torch.randn(3, requires_grad=True)
        arr = to_numpy(w * 2, ret_np=True)
        ''', [("GS201", 5)], "raises: Can't call numpy() on Tensor that requires grad"),
    # `new_full` makes a new tensor without history: backward through it alone raises.
    "new_full_has_no_history": ("""\
        import torch
        w = torch.randn(3, requires_grad=True)
        ones = w.new_full((3,), 1.0)
        ones.sum().backward()
        """, [("GS401", 4)], "raises: does not require grad"),
    # `torch.autograd.grad(loss, fast_weights)` runs (and frees) only the nodes between the loss and the fast weights:
    # the shared encoder output, which does not depend on them, keeps its graph for the outer backward
    # (meta-transfer-learning's `meta_forward`; the fast weights come from MAML's `list(map(lambda ..., zip(...)))`).
    "maml_inner_grad_keeps_encoder_graph": ("""\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Learner(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.randn(3, 4))
                self.b = nn.Parameter(torch.zeros(3))

            def forward(self, x, weights=None):
                w, b = weights if weights is not None else (self.w, self.b)
                return F.linear(x, w, b)

        encoder = nn.Linear(4, 4)
        learner = Learner()
        shot, query, label = torch.randn(5, 4), torch.randn(5, 4), torch.randint(0, 3, (5,))
        emb_shot, emb_query = encoder(shot), encoder(query)
        loss = F.cross_entropy(learner(emb_shot), label)
        grad = torch.autograd.grad(loss, learner.parameters())
        fast = list(map(lambda p: p[1] - 0.1 * p[0], zip(grad, learner.parameters())))
        for _ in range(3):
            loss = F.cross_entropy(learner(emb_shot, fast), label)
            grad = torch.autograd.grad(loss, fast)
            fast = [p[1] - 0.1 * p[0] for p in zip(grad, fast)]
        F.cross_entropy(learner(emb_query, fast), label).backward()
        """, [], "ok"),
    # The same inner step, but the value used again depends on the inputs of `autograd.grad`: the nodes between them
    # were run and freed, so the second pass raises.
    "inner_grad_frees_what_depends_on_inputs": ("""\
        import torch

        w = torch.randn(3, requires_grad=True)
        h = (w * 2).exp()
        g = torch.autograd.grad(h.sum(), [w])
        h.prod().backward()
        """, [("GS402", 6)], "raises: Trying to backward through the graph a second time"),
    # `torch.max(a, b)` (elementwise, the "other" overload) saves its inputs, not its output: writing into the
    # output is harmless (fast_adversarial's `clamp(X, lo, hi) = torch.max(torch.min(X, hi), lo)`) ...
    "binary_max_does_not_save_its_output": ("""\
        import torch

        d = torch.zeros(3, requires_grad=True)
        out = torch.max(torch.min(d * 2, torch.ones(3)), -torch.ones(3))
        out[:1] = 0
        out.sum().backward()
        """, [], "ok"),
    # ... while the full reduction `torch.max(x)` saves its output.
    "reduction_max_saves_its_output": ("""\
        import torch

        d = torch.randn(3, requires_grad=True)
        m = torch.max(d * 2)
        m.mul_(2)
        m.backward()
        """, [("GS301", 5)], "raises: " + INPLACE),
    # Nor does `autograd.grad(f(t), t)` run the history of `t` itself: rebuilding `t` from the old one each step keeps
    # a graph that is never freed (outlier-exposure's temperature search). The chain does grow by two nodes a step.
    "grad_does_not_free_the_inputs_history": ("""\
        import torch
        import torch.nn.functional as F

        logits, labels = torch.randn(20, 4), torch.randint(0, 4, (20,))
        lower, upper = 0.2, 5.0
        t = torch.FloatTensor([0.5 * (lower + upper)]).requires_grad_()
        while upper - lower > 1e-4:
            if torch.autograd.grad(F.cross_entropy(logits / t, labels), t)[0] > 0:
                upper = 0.5 * (lower + upper)
            else:
                lower = 0.5 * (lower + upper)
            t = t * 0 + 0.5 * (lower + upper)
        """, [("GS404", 12)], "ok"),
    # Two heads of one critic, one optimizer: after `zero_grad()` and the first head's backward, `step()` updates only
    # the parameters that have a gradient (the first head's), so the second head's graph is intact and its backward
    # runs; two outputs of one call keep separate graph segments (pranz24's SAC) ...
    "twin_heads_stepped_one_at_a_time": (TWIN_CRITIC, [], "ok"),
    # ... but the policy loss, built through both heads before either step, raises.
    "policy_backward_after_both_critic_steps": (TWIN_CRITIC + """\
policy_optim.zero_grad()
        policy_loss.backward()
        """, [("GS308", 26), ("GS308", 31)], "raises: " + INPLACE),  # the critic step, the backward
    # An EMA copy frozen by `requires_grad_(False)` (NVlabs/edm): its parameters do not require grad, so copying into
    # them in place is fine ...
    "ema_copy_frozen_by_requires_grad_": (EMA_COPY.replace("FREEZE", ".requires_grad_(False)"), [], "ok"),
    # ... while the same copy left trainable raises on the in-place write into a leaf.
    "ema_copy_left_trainable": (EMA_COPY.replace("FREEZE", ""), [("GS302", 13)], "raises: a leaf Variable that requires grad is being used in an in-place operation"),
    # Evidence from use: a loss module's `forward` gets the prediction, which has a graph, so a write into a tensor
    # an op saved from it is reported (a warning) although the file never calls the loss (timm's asymmetric loss) ...
    "loss_module_writes_into_saved_target": (LOSS_MODULE.replace("CLONE", ""), [("GS301", 13)], "raises: " + INPLACE),
    # ... and quiet when the weight is computed from a copy.
    "loss_module_smooths_a_copy": (LOSS_MODULE.replace("CLONE", ".clone()"), [], "ok"),
    # A `@property` read as an attribute is its value (curl's `self.alpha`, `log_alpha.exp()`): the loss has a graph ...
    "property_value_has_a_graph": (PROPERTY_AGENT.replace("DETACH", ""), [], "ok"),
    # ... unless the property detaches it.
    "property_value_detached": (PROPERTY_AGENT.replace("DETACH", ".detach()"), [("GS401", 17)], "raises: does not require grad"),
    # Networks that build their own optimizer (`self.optimizer = Adam(self.parameters())`, philtabor's TD3 and SAC):
    # every instance is trained, also when a second instance's attributes come from the first one's `__init__`
    # run. A critic loss written `mse_loss(target, q)` is no target network's output.
    "networks_with_their_own_optimizer": ("""\
        import torch as T
        import torch.nn as nn
        import torch.nn.functional as F
        import torch.optim as optim

        class Critic(nn.Module):
            def __init__(self, lr, name):
                super().__init__()
                self.q = nn.Linear(3, 1)
                self.optimizer = optim.Adam(self.parameters(), lr=lr)

            def forward(self, s, a):
                return self.q(T.cat([s, a], 1))

        class Agent:
            def __init__(self):
                self.critic_1 = Critic(1e-3, name="critic_1")
                self.critic_2 = Critic(1e-3, name="critic_2")
                self.target_critic = Critic(1e-3, name="target")

            def learn(self, s, a, r):
                target = r + 0.99 * self.critic_1.forward(s, a)
                q1 = self.critic_1.forward(s, a)
                q2 = self.critic_2.forward(s, a)
                self.critic_1.optimizer.zero_grad()
                self.critic_2.optimizer.zero_grad()
                loss = F.mse_loss(target, q1) + F.mse_loss(target, q2)
                loss.backward()
                self.critic_1.optimizer.step()
                self.critic_2.optimizer.step()

        Agent().learn(T.randn(4, 2), T.randn(4, 1), T.randn(4, 1))
        """, [], "ok"),
    # `enumerate` over a loader gradsight cannot see gives an index and an unknown item (as `for x, y in loader`
    # does), not plain Python data: the model applied to the item still has a graph. Until 2026-11-26 the items were
    # taken for numbers and `model(x)` was unknown in every `for i, (x, y) in enumerate(loader)` loop.
    "enumerate_over_unknown_loader": ("""\
        import torch
        import torch.nn as nn

        model = nn.Linear(3, 3)


        def train(loader):
            for i, (x, y) in enumerate(loader):
                out = model(x).sigmoid()
                out.add_(1)
                out.sum().backward()


        train(torch.utils.data.TensorDataset(torch.randn(4, 3), torch.randn(4)))
        """, [("GS301", 10)], "raises: " + INPLACE),
    # `zip` of iterables gradsight cannot see gives unknown items (as `enumerate` does), not plain Python data:
    # `model(x)` still has a graph. Until 2026-11-26 the items were taken for numbers.
    "zip_over_unknown_iterables": ("""\
        import torch
        import torch.nn as nn

        model = nn.Linear(3, 3)


        def train(inputs, targets):
            for x, y in zip(inputs, targets):
                out = model(x).sigmoid()
                out.add_(1)
                out.sum().backward()


        train(list(torch.randn(4, 3)), list(torch.randn(4)))
        """, [("GS301", 10)], "raises: " + INPLACE),
    # `zip` of two parameter lists (a target network's soft update) pairs their parameters.
    "soft_update_over_zip": ("""\
        import copy
        import torch
        import torch.nn as nn

        net = nn.Linear(2, 2)
        target = copy.deepcopy(net)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for _ in range(2):
            loss = (net(torch.randn(4, 2)) - target(torch.randn(4, 2)).detach()).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            for tp, p in zip(target.parameters(), net.parameters()):
                tp.data.copy_(0.9 * tp.data + 0.1 * p.data)
        """, [], "ok"),
}


@pytest.fixture(scope="module")
def torch_results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reach")
    jobs = []
    for name, (src, _, _) in PROGRAMS.items():
        path = folder / f"{name}.py"
        path.write_text(textwrap.dedent(src))
        jobs.append((str(path), None))
    return dict(zip(PROGRAMS, run_scripts(jobs)))


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_engine_reach(name, torch_results):
    src, expected, runtime = PROGRAMS[name]
    analysis.ENGINE.units.clear()
    result = analyze_source(textwrap.dedent(src), f"/reach/{name}.py")
    got = [(f.code, f.line) for f in result.findings if f.severity.rank >= Severity.WARNING.rank]
    assert got == expected
    ran = torch_results[name]
    if runtime == "ok":
        assert ran["raised"] is None, ran["raised"]
    else:
        assert ran["raised"] and runtime.split(": ", 1)[1] in ran["raised"], ran["raised"]


def test_decomposition_outputs_are_each_saved():
    src = """\
    import torch
    a = torch.randn(4, 3, requires_grad=True)
    Q, R = torch.linalg.qr(a)
    Q.mul_(2)
    """
    result = analyze_source(textwrap.dedent(src), "/reach/qr.py")
    assert [(f.code, f.line) for f in result.findings] == [("GS301", 4)]
    assert "torch.linalg.qr" in result.findings[0].message


CLASS_WITH_UNSEEN_BASE = """\
import torch
from somelib.models import Model


class Net(Model):
    def __init__(self, vocab):
        super().__init__(vocab)
        self.proj = torch.nn.Linear(3, 3)

    def score(self, h):
        g = torch.sigmoid(self.proj(h))
        g *= 2.0
        return g
"""


def test_class_with_unseen_base_that_builds_layers_is_a_module():
    # `self.proj = nn.Linear(...)` only registers a layer on an nn.Module: evidence that `Model` is one. The
    # sigmoid output (saved for its backward) is then modified in place.
    result = analyze_source(CLASS_WITH_UNSEEN_BASE, "/reach/unseen_base.py")
    assert [(f.code, f.line) for f in result.findings] == [("GS301", 12)]


def test_class_with_unseen_base_and_no_layers_stays_unknown():
    src = CLASS_WITH_UNSEEN_BASE.replace("self.proj = torch.nn.Linear(3, 3)", "self.proj = make_proj()")
    result = analyze_source(src, "/reach/unseen_base_plain.py")
    assert result.findings == []


def test_package_below_the_workspace_root_and_submodule_attribute(tmp_path):
    # The package sits in vendor/ below the workspace root; `from pkg.nn import util` then `util.lsm(...)`
    # reaches the function through its package (allennlp's `util.masked_log_softmax`).
    pkg = tmp_path / "vendor" / "pkg"
    (pkg / "nn").mkdir(parents=True)
    (pkg / "models").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "nn" / "__init__.py").write_text("from pkg.nn.other import Missing\n")
    (pkg / "nn" / "util.py").write_text("import torch\n\n\ndef lsm(v):\n    return torch.log_softmax(v, dim=-1)\n")
    main = ("import torch\nfrom pkg.nn import util\n\nw = torch.randn(3, requires_grad=True)\n"
            "lp = util.lsm(w * 2)\nlp.add_(1.0)\nlp.sum().backward()\n")
    path = pkg / "models" / "main.py"
    path.write_text(main)
    result = analyze_source(main, str(path), workspace=Workspace(tmp_path))
    assert [(f.code, f.line) for f in result.findings] == [("GS301", 6)]
    assert str((pkg / "nn" / "util.py").resolve()) in result.dependencies


SPLIT_SCATTER = """\
import torch
w = torch.randn(2, 5, requires_grad=True)
lp = torch.log_softmax(w, -1)
a, b = lp.split([3, 2], dim=-1)
a.scatter_(-1, torch.tensor([[0], [1]]), torch.zeros(2, 1))
(a.sum() + b.sum()).backward()
"""


def test_multi_view_write_is_reported_once(tmp_path):
    # `a` is a view of log_softmax's saved output (GS301) and one of several views `split` returned (GS303): torch
    # raises the multi-view error at the write, before any backward, so GS303 alone is shown (allennlp's CopyNet).
    from gradsight.findings import drop_restated

    result = analyze_source(SPLIT_SCATTER, "/reach/split.py")
    assert sorted((f.code, f.line) for f in result.findings) == [("GS301", 5), ("GS303", 5)]
    assert [(f.code, f.line) for f in drop_restated(result.findings)] == [("GS303", 5)]
    path = tmp_path / "split.py"
    path.write_text(SPLIT_SCATTER)
    ran = run_scripts([(str(path), None)])[0]
    assert ran["raised"] and "is a view and is being modified inplace" in ran["raised"] and ran["line"] == 5


BOTORCH_HELPERS = """\
import torch


def columnwise_clamp(X, lower=None, upper=None):
    return X.clamp(lower, upper)


def fix_features(X, fixed_features=None):
    if not fixed_features:
        return X
    return torch.cat([X[..., :1] * 0, X[..., 1:]], dim=-1)
"""

BOTORCH_GEN = """\
import torch

from helpers import columnwise_clamp, fix_features


def gen_candidates(initial_conditions, acquisition_function, lower=None, upper=None):
    clamped = columnwise_clamp(initial_conditions, lower, upper).requires_grad_(True)
    candidates = fix_features(clamped, None)
    opt = torch.optim.Adam([clamped], lr=0.025)
    trajectory = {"candidates": []}
    for _ in range(3):
        loss = -acquisition_function(candidates).sum()
        trajectory["candidates"].append(candidates.clone())
        opt.zero_grad()
        loss.backward()
        opt.step()
        candidates = fix_features(clamped, None)
    return candidates, trajectory
"""


def assert_runs_with(folder, program: str, probe: str) -> None:
    """`program`, saved as run.py in `folder` (next to the modules it imports), runs under torch without raising
    and leaves `probe` true."""
    run = folder / "run.py"
    run.write_text(program)
    ran = run_scripts([(str(run), probe)], cwd=str(folder))[0]
    assert not ran["raised"] and ran["probe"] is True


def test_requires_grad_on_an_unseen_result_is_evidence(tmp_path):
    # botorch's `columnwise_clamp(X).requires_grad_(True)` with X a parameter: whatever it returned, the result now
    # requires grad (evidence of use), so keeping `candidates.clone()` each step keeps a graph (botorch@b20eee7e).
    (tmp_path / "helpers.py").write_text(BOTORCH_HELPERS)
    gen = tmp_path / "gen.py"
    gen.write_text(BOTORCH_GEN)
    result = analyze_source(BOTORCH_GEN, str(gen), workspace=Workspace(tmp_path))
    found = [(f.code, f.line, f.severity) for f in result.findings]
    assert found == [("GS404", 13, Severity.WARNING)]
    assert_runs_with(tmp_path, "import torch\nfrom gen import gen_candidates\n"
                     "c, t = gen_candidates(torch.rand(2, 3), lambda x: (x ** 2).sum(-1), 0.0, 1.0)\n",
                     "all(x.grad_fn is not None for x in t['candidates'])")
    # The same tensor detached before it is kept: nothing to report.
    clean = BOTORCH_GEN.replace("candidates.clone()", "candidates.clone().detach()")
    assert [f.code for f in analyze_source(clean, str(gen), workspace=Workspace(tmp_path)).findings] == []


EVAL_FUNCTION = """\
import torch
import torch.nn.functional as F


def evaluate(model, batches):
    model.eval()
    scores, total = [], 0
    for x, y in batches:
        out = model(x)
        scores.append(out)
        total += F.mse_loss(out, y)
    return torch.cat(scores), total
"""


def test_eval_mode_on_an_unseen_model_is_evidence(tmp_path):
    # `model.eval()` on a parameter says it is a module, whose parameters require grad unless frozen: the loop keeps
    # every batch's graph, in grad mode, with nothing backwarding them (OpenNMT's and ParlAI's no_grad fixes).
    path = tmp_path / "evaluate.py"
    path.write_text(EVAL_FUNCTION)
    result = analyze_source(EVAL_FUNCTION, str(path))
    loud = [(f.code, f.line, f.severity) for f in result.findings if f.severity in (Severity.WARNING, Severity.ERROR)]
    assert loud == [("GS404", 10, Severity.WARNING), ("GS404", 11, Severity.WARNING)]
    assert_runs_with(tmp_path, "import torch\nimport torch.nn as nn\nfrom evaluate import evaluate\n"
                     "s, total = evaluate(nn.Linear(3, 1), [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)])\n",
                     "s.grad_fn is not None and total.grad_fn is not None")
    # Under no_grad, or called only under no_grad by the file: quiet.
    wrapped = EVAL_FUNCTION.replace("    for x, y in batches:", "    with torch.no_grad():\n      for x, y in batches:")
    wrapped = wrapped.replace("\n        ", "\n          ")
    assert analyze_source(wrapped, str(path)).findings == []
    called = EVAL_FUNCTION + "\n\nwith torch.no_grad():\n    evaluate(torch.nn.Linear(3, 1), [])\n"
    assert analyze_source(called, str(path)).findings == []


def test_eval_mode_loop_in_a_function_that_backwards_stays_information(tmp_path):
    # Batch norm frozen with `.eval()` while fine-tuning: the kept outputs may be what the function's later backward
    # needs (here they are), so the escalation to a warning does not apply.
    code = ("import torch\n\n\ndef finetune(model, loader, opt):\n    model.eval()\n    feats = []\n"
            "    for x in loader:\n        feats.append(model(x))\n    loss = torch.cat(feats).pow(2).mean()\n"
            "    opt.zero_grad()\n    loss.backward()\n    opt.step()\n")
    found = [(f.code, f.severity) for f in analyze_source(code, str(tmp_path / "ft.py")).findings]
    assert ("GS404", Severity.WARNING) not in found
    path = tmp_path / "ft.py"
    path.write_text(code + "\n\nm = torch.nn.Linear(3, 2)\n"
                    "finetune(m, [torch.randn(4, 3)] * 2, torch.optim.SGD(m.parameters(), lr=0.1))\n")
    ran = run_scripts([(str(path), "m.weight.grad is not None")])[0]
    assert not ran["raised"] and ran["probe"] is True


@pytest.mark.parametrize("name, expected", [("loss_module_writes_into_saved_target", [("GS301", 13, "warning")]),
                                            ("loss_module_smooths_a_copy", [])])
def test_loss_module_prediction_is_evidence_without_a_call(name, expected):
    """The class alone, as a loss library file holds it: the prediction's graph is evidence from use (a warning)."""
    src = textwrap.dedent(PROGRAMS[name][0]).rsplit("\n\n", 1)[0] + "\n"
    assert "SmoothedFocalLoss()(" not in src
    analysis.ENGINE.units.clear()
    result = analyze_source(src, f"/reach/{name}_alone.py")
    got = [(f.code, f.line, f.severity.value) for f in result.findings if f.severity.rank >= Severity.WARNING.rank]
    assert got == expected


CAST_HELPER = """\
import numpy as np
import torch


def cast(x):
    if isinstance(x, np.ndarray):
        return torch.from_numpy(x)
    return x


w = torch.randn(3, requires_grad=True)
x = cast(w * 2)
x.requires_grad = True
"""


def test_isinstance_of_a_non_tensor_class_on_a_tensor_is_false(tmp_path):
    # ART's `cast_inputs_to_pt`: `isinstance(x, np.ndarray)` is False for a tensor, so `cast` hands back its
    # argument (a non-leaf here) and setting `requires_grad` on it raises.
    found = [(f.code, f.line, f.severity) for f in analyze_source(CAST_HELPER, "cast.py").findings]
    assert found == [("GS209", 13, Severity.ERROR)]
    ran = run_scripts([(str(_write(tmp_path, "cast.py", CAST_HELPER)), None)])[0]
    assert "only change requires_grad flags of leaf variables" in ran["raised"]
    clean = CAST_HELPER.replace("cast(w * 2)", "cast((w * 2).detach())")
    assert analyze_source(clean, "cast.py").findings == []
    assert not run_scripts([(str(_write(tmp_path, "clean.py", clean)), None)])[0]["raised"]


def _write(folder, name: str, text: str):
    path = folder / name
    path.write_text(text)
    return path


OWN_CALL = """\
import torch
import torch.nn as nn


class STFT(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4))

    @torch.no_grad()
    def __call__(self, x):
        return (x * self.w).abs()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.stft = STFT()

    def forward(self, x):
        return self.stft(self.lin(x))


net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
loss = net(torch.randn(2, 4)).mean()
loss.backward()
"""


def test_module_with_its_own_call_runs_it(tmp_path):
    # A module class that overrides `__call__` (coqui TTS's `TorchSTFT` under `@torch.no_grad()`) runs that, not
    # `forward`: here every output loses its graph, so the backward raises.
    found = [(f.code, f.line, f.severity) for f in analyze_source(OWN_CALL, "call.py").findings]
    assert found == [("GS401", 12, Severity.ERROR)]
    ran = run_scripts([(str(_write(tmp_path, "call.py", OWN_CALL)), None)])[0]
    assert "does not require grad" in ran["raised"]
    clean = OWN_CALL.replace("    @torch.no_grad()\n", "")
    assert analyze_source(clean, "call.py").findings == []
    assert not run_scripts([(str(_write(tmp_path, "clean.py", clean)), None)])[0]["raised"]


HELPER_STEP = """\
import torch
import torch.nn as nn


class Trainer:
    def __init__(self):
        self.model = nn.Linear(4, 2)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def train_one_batch(self, images, targets):
        self.optimizer.zero_grad()
        loss = (self.model(images) - targets).pow(2).mean()
        loss.backward()
        self.optimizer.step()
        return loss

    def train_one_epoch(self, loader):
        total = 0
        for images, targets in loader:
            total += self.train_one_batch(images, targets)
        return total


total = Trainer().train_one_epoch([(torch.randn(3, 4), torch.randn(3, 2)) for _ in range(3)])
"""


def test_accumulating_what_a_training_step_helper_returns(tmp_path):
    # MultimediaTechLab/YOLO's `train_one_epoch`: the helper backwards the loss it returns, so the loop sums graphs.
    found = [(f.code, f.line, f.severity) for f in analyze_source(HELPER_STEP, "solver.py").findings]
    assert found == [("GS404", 20, Severity.WARNING)]
    ran = run_scripts([(str(_write(tmp_path, "solver.py", HELPER_STEP)), "total.grad_fn is not None")])[0]
    assert not ran["raised"] and ran["probe"] is True
    clean = HELPER_STEP.replace("self.train_one_batch(images, targets)\n", "self.train_one_batch(images, targets).item()\n")
    assert analyze_source(clean, "solver.py").findings == []
    ran = run_scripts([(str(_write(tmp_path, "clean.py", clean)), "isinstance(total, float)")])[0]
    assert not ran["raised"] and ran["probe"] is True


IDENTITY_DECORATOR = """\
import torch
import torch.nn as nn


def lab_api(fn):
    return fn


class Agent:
    def __init__(self):
        self.net = nn.Linear(3, 1)

    @lab_api
    def act(self, x):
        out = self.net(x)
        return out.numpy()


Agent().act(torch.randn(2, 3))
"""


def test_method_under_an_identity_decorator_is_analysed(tmp_path):
    # SLM-Lab's `@lab_api` returns the function it is given: the method is the method.
    found = [(f.code, f.line) for f in analyze_source(IDENTITY_DECORATOR, "agent.py").findings]
    assert found == [("GS201", 16)]
    ran = run_scripts([(str(_write(tmp_path, "agent.py", IDENTITY_DECORATOR)), None)])[0]
    assert "Can't call numpy() on Tensor that requires grad" in ran["raised"]
    # A decorator that wraps the function (it may enter no_grad) keeps the method unanalysed.
    wrapping = IDENTITY_DECORATOR.replace("def lab_api(fn):\n    return fn\n",
                                          "def lab_api(fn):\n    def inner(*a, **k):\n        with torch.no_grad():\n"
                                          "            return fn(*a, **k)\n    return inner\n")
    assert analyze_source(wrapping, "agent.py").findings == []
    assert not run_scripts([(str(_write(tmp_path, "wrapping.py", wrapping)), None)])[0]["raised"]


# Three false-alarm shapes from the fourth fresh round (docs/precision.md, sixth session), each run under torch.
FLOAT_PROMOTION = """\
import torch

x = torch.randn(4)
mask = 1.0 * (x > 0)
mask.requires_grad = True
sign = 1.0 * ((2.0 * (x > 0)) - 1.0)
sign.requires_grad = True
bad = (x > 0) * 1
bad.requires_grad = True
"""
INIT_FAN = """\
import numpy as np
import torch
import torch.nn as nn

w = nn.Parameter(torch.empty(4, 3))
fan_in = nn.init._calculate_correct_fan(w, "fan_in")
bound = np.sqrt(3.0 / fan_in)
nn.init.uniform_(w, -bound, bound)
fi, fo = nn.init._calculate_fan_in_and_fan_out(w)
print(np.sqrt(fi), bound)
"""
REQUIRES_GRAD_TEST = """\
import torch
import torch.nn as nn


def to_numpy(tensor):
    if tensor.requires_grad:
        return tensor.detach().cpu().numpy()
    else:
        return tensor.cpu().numpy()


def bad(tensor):
    return tensor.cpu().numpy()


out = nn.Linear(3, 2)(torch.randn(4, 3))
print(to_numpy(out).shape)
bad(out)
"""


def test_a_python_float_promotes_a_bool_tensor(tmp_path):
    # icefall's `1.0 * (x > 0)` is float32 (requires_grad on it works); `(x > 0) * 1` stays integer and raises.
    found = [(f.code, f.line) for f in analyze_source(FLOAT_PROMOTION, "promo.py").findings]
    assert found == [("GS207", 9)]
    ran = run_scripts([(str(_write(tmp_path, "promo.py", FLOAT_PROMOTION)), None)])[0]
    assert "only Tensors of floating point" in ran["raised"] and ran["line"] == 9


def test_init_helpers_that_return_numbers(tmp_path):
    # pfrl's NoisyLinear: `torch.nn.init._calculate_correct_fan(w, mode)` is an int, not the parameter.
    assert analyze_source(INIT_FAN, "fan.py").findings == []
    assert not run_scripts([(str(_write(tmp_path, "fan.py", INIT_FAN)), None)])[0]["raised"]


def test_a_requires_grad_test_decides_the_branch(tmp_path):
    # wenet's `to_numpy`: `.numpy()` only on the branch where the tensor does not require grad; the helper without
    # the test raises.
    found = [(f.code, f.line) for f in analyze_source(REQUIRES_GRAD_TEST, "tonp.py").findings]
    assert found == [("GS201", 13)]
    ran = run_scripts([(str(_write(tmp_path, "tonp.py", REQUIRES_GRAD_TEST)), None)])[0]
    assert "Can't call numpy()" in ran["raised"] and ran["line"] == 13


def test_retain_variables_is_the_old_name_of_retain_graph(tmp_path):
    """pytorch-beginner's `z.backward(g, retain_variables=True)` then a second backward: the first keeps the graph
    (under torch 2 it raises a TypeError at once, never the freed-graph error GS402 would claim)."""
    source = textwrap.dedent("""\
        import torch
        x = torch.randn(3, requires_grad=True)
        z = (x * 2).sum()
        z.backward(retain_variables=True)
        z.backward()
    """)
    script = tmp_path / "old.py"
    script.write_text(source)
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert "unexpected keyword argument 'retain_variables'" in proc.stderr
    assert [f.code for f in analyze_source(source, "/reach/old.py").findings] == []
    # With retain_graph=False the same program does free the graph.
    freed = source.replace("retain_variables=True", "retain_graph=False")
    assert "GS402" in [f.code for f in analyze_source(freed, "/reach/old2.py").findings]


# Closures a factory hands back, called only by the factory's caller (here another file): each is analysed as a unit
# of its own, reading the factory's locals as they are at the `return` that hands it back.
CLOSURE_FACTORIES = """\
import torch
import torch.nn as nn


def make_step(dim):
    net = nn.Linear(dim, dim)

    def step(x):
        h = torch.sigmoid(net(x))
        h.mul_(2)
        h.sum().backward()

    return step


def make_probe(dim):
    net = nn.Linear(dim, dim)

    def probe(x):
        h = torch.sigmoid(net(x))
        h.mul_(2)
        return h

    net.requires_grad_(False)
    return probe


def make_probe_unfrozen(dim):
    net = nn.Linear(dim, dim)

    def probe(x):
        h = torch.sigmoid(net(x))
        h.mul_(2)
        return h

    return probe
"""

# A training step built by a factory (BigGAN's `GAN_training_function`): micro-batches accumulate gradients in an
# inner loop, and nothing zeroes them between optimizer steps.
CLOSURE_TRAIN_STEP = """\
def make_train(model, opt, n_acc):
    def train(batches):
        for xs in batches:
            for x in xs:
                loss = model(x).sum() / n_acc
                loss.backward()
            opt.step()
    return train
"""


def test_closures_a_factory_hands_back_are_analysed(tmp_path):
    (tmp_path / "steps.py").write_text(CLOSURE_FACTORIES)
    (tmp_path / "fns.py").write_text(CLOSURE_TRAIN_STEP)
    analysis.ENGINE.units.clear()
    found = [(f.code, f.line) for f in analyze_source(CLOSURE_FACTORIES, str(tmp_path / "steps.py")).findings
             if f.severity.rank >= Severity.WARNING.rank]
    # `make_probe` freezes `net` before it returns `probe`: that is the `net` every call of `probe` sees.
    assert found == [("GS301", 10), ("GS301", 33)]
    found = [(f.code, f.line) for f in analyze_source(CLOSURE_TRAIN_STEP, str(tmp_path / "fns.py")).findings]
    assert found == [("GS503", 4)]
    mains = {
        "main_step.py": "import torch\nfrom steps import make_step\nmake_step(3)(torch.randn(2, 3))\n",
        "main_unfrozen.py": ("import torch\nfrom steps import make_probe_unfrozen\n"
                             "make_probe_unfrozen(3)(torch.randn(2, 3)).sum().backward()\n"),
        "main_probe.py": "import torch\nfrom steps import make_probe\nout = make_probe(3)(torch.randn(2, 3))\n",
        "main_train.py": ("import torch\nimport torch.nn as nn\nfrom fns import make_train\nmodel = nn.Linear(2, 1)\n"
                          "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                          "make_train(model, opt, 2)([[torch.ones(3, 2)] * 2] * 3)\n"),
    }
    for name, text in mains.items():
        (tmp_path / name).write_text(text)
    ran = run_scripts([(str(tmp_path / "main_step.py"), None), (str(tmp_path / "main_unfrozen.py"), None),
                       (str(tmp_path / "main_probe.py"), "out.grad_fn is None"),
                       (str(tmp_path / "main_train.py"), "bool((model.bias.grad == 9).all())")], cwd=str(tmp_path))
    assert INPLACE in ran[0]["raised"] and INPLACE in ran[1]["raised"]
    assert not ran[2]["raised"] and ran[2]["probe"] is True
    assert not ran[3]["raised"] and ran[3]["probe"] is True


# A tensor hook: a closure handed to autograd, which runs it during backward with grad mode off (as it does without
# `create_graph`). Its grad mode is unknown to its own analysis, so `(g * w).numpy()` is not called an error.
CLOSURE_HOOK = """\
import torch

w = torch.ones(3, requires_grad=True)
seen = []


def attach(x):
    def hook(g):
        seen.append((g * w).numpy())
        return g

    x.register_hook(hook)
    return x


x = torch.randn(3, requires_grad=True)
attach(x * 2).sum().backward()
"""


def test_closure_handed_on_runs_with_grad_mode_unknown(tmp_path):
    analysis.ENGINE.units.clear()
    found = [(f.code, f.line) for f in analyze_source(CLOSURE_HOOK, "hook.py").findings
             if f.severity.rank >= Severity.WARNING.rank]
    assert found == []
    ran = run_scripts([(str(_write(tmp_path, "hook.py", CLOSURE_HOOK)), "len(seen) == 1")])[0]
    assert not ran["raised"] and ran["probe"] is True


def test_edits_in_a_factory_reach_the_closure_it_hands_back():
    path = "/reach/closures.py"
    analysis.ENGINE.units.clear()
    analyze_source(CLOSURE_FACTORIES, path)
    for edited in (CLOSURE_FACTORIES.replace("    net.requires_grad_(False)\n", ""),
                   CLOSURE_FACTORIES.replace("        h.mul_(2)\n        h.sum()", "        h = h * 2\n        h.sum()"),
                   CLOSURE_FACTORIES.replace("    return step\n", "    step(torch.ones(2, dim))\n    return step\n")):
        warm = [(f.code, f.line, f.message) for f in analyze_source(edited, path).findings]
        analysis.ENGINE.clear()
        cold = [(f.code, f.line, f.message) for f in analyze_source(edited, path).findings]
        assert warm == cold
        analyze_source(CLOSURE_FACTORIES, path)
    unfrozen = CLOSURE_FACTORIES.replace("    net.requires_grad_(False)\n", "")
    assert [(f.code, f.line) for f in analyze_source(unfrozen, path).findings] == [
        ("GS301", 10), ("GS301", 21), ("GS301", 32)]


def test_torchvision_normalize_keeps_history(tmp_path):
    """`transforms.Normalize` is a parameterless `nn.Module` computing `(x.clone() - mean) / std`, which autograd
    follows (torchvision's `F.normalize`; torchvision is not installed here, so the test runs that computation
    itself); `Compose` of such transforms runs them in order. Other transforms (`ToTensor`) stay unknown."""
    src = textwrap.dedent("""\
        import torch
        import torch.nn as nn
        from torchvision import transforms

        decoder = nn.Linear(2, 4)
        inv = transforms.Compose([transforms.Normalize((0.13,), (0.31,))])
        samples = inv(decoder(torch.randn(3, 2)).view(-1, 1, 2, 2))
        arr = samples.cpu().numpy()
        other = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.13,), (0.31,))])
        arr2 = other(decoder(torch.randn(3, 2))).numpy()
        norm = transforms.Normalize((0.13,), (0.31,), inplace=True)
        arr3 = norm(decoder(torch.randn(3, 2)).view(-1, 1, 2, 2)).numpy()
        """)
    analysis.ENGINE.units.clear()
    result = analyze_source(src, str(tmp_path / "gen.py"))
    assert [(f.code, f.line) for f in result.findings if f.severity.rank >= Severity.WARNING.rank] == [("GS201", 8)]
    stand_in = textwrap.dedent("""\
        import torch
        import torch.nn as nn

        decoder = nn.Linear(2, 4)
        x = decoder(torch.randn(3, 2)).view(-1, 1, 2, 2)
        mean, std = torch.as_tensor((0.13,)).view(-1, 1, 1), torch.as_tensor((0.31,)).view(-1, 1, 1)
        samples = x.clone().sub_(mean).div_(std)
        arr = samples.cpu().numpy()
        """)
    path = tmp_path / "stand_in.py"
    path.write_text(stand_in)
    ran = run_scripts([(str(path), None)])[0]
    assert ran["raised"] and "Can't call numpy() on Tensor that requires grad" in ran["raised"]
