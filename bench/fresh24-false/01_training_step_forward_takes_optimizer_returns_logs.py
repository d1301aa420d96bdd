"""fresh24 false: stevenygd/PointFlow models/networks.py:167 (GS410).

`PointFlow.forward(self, x, opt, step, writer=None)` is a whole training step: `opt.zero_grad()`, encoder,
reparameterisation, latent and point CNFs, `loss = entropy_loss + prior_loss + recon_loss`, `loss.backward()`,
`opt.step()`, then logging values computed from the same graph (`recon = -log_px.mean()`, `recon_nats = recon /
float(...)`, `prior_nats = prior / float(self.zdim)`), returned in a dict with `entropy_log...item()`. Its only
caller, train.py:176, passes `inputs = tr_batch.cuda(args.gpu, non_blocking=True)` (a data-loader batch, no graph)
and the optimizer, and only reads the dict's entries into meters; nothing backwards them. So the backward inside
`forward` frees no graph of the caller, and no later backward runs through it. Run below with the same statements
(CNFs replaced by small flows): many steps run, the parameters change, and the input never had a graph.
"""
import math

import torch
from torch import nn

torch.manual_seed(0)


def standard_normal_logprob(z):
    return -0.5 * math.log(2 * math.pi) - z.pow(2) / 2


class Flow(nn.Module):                               # stands in for the CNFs: returns (y, delta_logp)
    def __init__(self, d, ctx):
        super().__init__()
        self.net = nn.Linear(d + ctx, d)

    def forward(self, x, context, logpx):
        inp = x if context is None else torch.cat([x, context.unsqueeze(1).expand(-1, x.size(1), -1)], -1)
        y = x + torch.tanh(self.net(inp))
        return y, logpx + y.abs().mean(-1, keepdim=True) * 0.1


class PointFlow(nn.Module):
    def __init__(self, zdim=4):
        super().__init__()
        self.zdim = zdim
        self.encoder = nn.Linear(3, 2 * zdim)
        self.point_cnf = Flow(3, zdim)
        self.latent_cnf = Flow(zdim, 0)
        self.entropy_weight = self.recon_weight = self.prior_weight = 1.0

    def forward(self, x, opt, step, writer=None):
        opt.zero_grad()
        batch_size = x.size(0)
        num_points = x.size(1)
        h = self.encoder(x).mean(1)
        z_mu, z_sigma = h[:, :self.zdim], h[:, self.zdim:]
        z = z_mu + torch.exp(0.5 * z_sigma) * torch.randn_like(z_mu)
        entropy = 0.5 * z_sigma.sum(dim=1) + 0.5 * self.zdim * (1. + math.log(math.pi * 2))
        w, delta_log_pw = self.latent_cnf(z.unsqueeze(1), None, torch.zeros(batch_size, 1, 1))
        log_pw = standard_normal_logprob(w).view(batch_size, -1).sum(1, keepdim=True)
        log_pz = log_pw - delta_log_pw.view(batch_size, 1)
        z_new = z + (log_pz * 0.).mean()
        y, delta_log_py = self.point_cnf(x, z_new, torch.zeros(batch_size, num_points, 1))
        log_py = standard_normal_logprob(y).view(batch_size, -1).sum(1, keepdim=True)
        log_px = log_py - delta_log_py.view(batch_size, num_points, 1).sum(1)
        entropy_loss = -entropy.mean() * self.entropy_weight
        recon_loss = -log_px.mean() * self.recon_weight
        prior_loss = -log_pz.mean() * self.prior_weight
        loss = entropy_loss + prior_loss + recon_loss
        loss.backward()                               # networks.py:167
        opt.step()
        entropy_log = entropy.mean()
        recon = -log_px.mean()
        prior = -log_pz.mean()
        recon_nats = recon / float(x.size(1) * x.size(2))
        prior_nats = prior / float(self.zdim)
        return {
            'entropy': entropy_log.cpu().detach().item()
            if not isinstance(entropy_log, float) else entropy_log,
            'prior_nats': prior_nats,
            'recon_nats': recon_nats,
        }


class AverageValueMeter(object):                     # utils.py:15-34
    def __init__(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0.0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def n_nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return len(seen)


point_nats_avg_meter = AverageValueMeter()            # made once, before the epoch loop (train.py:152)
counts = []
model = PointFlow()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
before = [p.detach().clone() for p in model.parameters()]
for step in range(5):                                 # train.py:167-179
    tr_batch = torch.randn(2, 16, 3)
    inputs = tr_batch.to('cpu', non_blocking=True)
    assert inputs.grad_fn is None and not inputs.requires_grad
    out = model(inputs, optimizer, step, None)
    entropy, prior_nats, recon_nats = out['entropy'], out['prior_nats'], out['recon_nats']
    point_nats_avg_meter.update(recon_nats)           # train.py:179
    counts.append(n_nodes(point_nats_avg_meter.sum))
    print(f"step {step}: entropy {entropy:.3f} prior_nats {prior_nats.detach().item():.3f} recon_nats {recon_nats.detach().item():.3f}")
assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
print("5 training steps ran; the input carried no graph, so the backward in forward freed nothing of the caller's")

# Not the reported line, but seen while reading: the caller's meters (never reset) sum the returned tensors with
# their graphs, a leak over the whole run that gradsight does not report (a GS404 miss at train.py:179-180).
print("nodes reachable from point_nats_avg_meter.sum per step:", counts)
assert all(b > a for a, b in zip(counts, counts[1:]))
