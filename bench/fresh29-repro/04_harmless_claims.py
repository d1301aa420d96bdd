"""fresh29 harmless claims: each claim is true, the consequence it implies is missing. Runs A, B, C.

A. GS510 eloialonso/iris src/models/slicer.py:46: `self.slicers = [Slicer(max_blocks, block_mask) ...]` is a plain
   list (true: not registered). `Slicer` has no parameters, only a buffer `indices` computed from its constructor
   arguments, so there is nothing for the optimizer to train; the embedding tables the Embedder does train arrive as
   an `nn.ModuleList` (world_model.py:43) and are registered. Run: the same Embedder with the list registered has
   the same parameters, the forward and a training step work, the only difference is the constant index buffer in
   state_dict.
B. GS404 TonghanWang/ROMA and wendelinboehmer/dcg src/learners/coma_learner.py:124: `_train_critic` makes
   `q_vals = th.zeros_like(target_q_vals)[:, :-1]` per call and, per time step `t` of the episode batch, writes
   `q_vals[:, t] = q_t.view(...)` (graph alive), then backwards the step's TD loss and steps the critic. The chain
   grows for the episode's T steps (true), but each backward frees the step's saved tensors, `train()` reads q_vals
   only into `.detach()`ed values (`baseline`, `advantages`), and q_vals dies when `train()` returns: nothing grows
   across calls. Run: a marker saved by every critic forward is alive while q_vals is, and all are gone after the
   call; the node count at the end of each call is the same.
C. GS511 rosinality/igebm-pytorch train.py:108: `parameters = model.parameters()`; `optim.Adam(parameters, ...)`
   exhausts the generator, so `requires_grad(parameters, False)` before the 60 Langevin steps (line 117) and
   `requires_grad(parameters, True)` after do nothing (true): each sampling backward also fills the weights' .grad.
   But `model.zero_grad()` runs before the training loss, and the gradient with respect to the negative images does
   not depend on the parameters' flag, so the samples and the trained weights are the same as with `list(...)`:
   wasted work only (as fresh15's RCAN GS512, harmless). Run: both versions, same seed, give equal weights.
"""
import gc
import math
import weakref

import torch
import torch.nn as nn

# ---- A ----------------------------------------------------------------------------------------------------------
class Slicer(nn.Module):
    def __init__(self, max_blocks, block_mask):
        super().__init__()
        self.block_size = block_mask.size(0)
        self.num_kept_tokens = block_mask.sum().long().item()
        kept_indices = torch.where(block_mask)[0].repeat(max_blocks)
        offsets = torch.arange(max_blocks).repeat_interleave(self.num_kept_tokens)
        self.register_buffer('indices', kept_indices + block_mask.size(0) * offsets)

    def compute_slice(self, num_steps, prev_steps=0):
        total_steps = num_steps + prev_steps
        num_blocks = math.ceil(total_steps / self.block_size)
        indices = self.indices[:num_blocks * self.num_kept_tokens]
        return indices[torch.logical_and(prev_steps <= indices, indices < total_steps)] - prev_steps


class Embedder(nn.Module):
    def __init__(self, max_blocks, block_masks, embedding_tables, register=False):
        super().__init__()
        self.embedding_dim = embedding_tables[0].embedding_dim
        self.embedding_tables = embedding_tables
        slicers = [Slicer(max_blocks, block_mask) for block_mask in block_masks]   # slicer.py:46
        self.slicers = nn.ModuleList(slicers) if register else slicers

    def forward(self, tokens, num_steps, prev_steps):
        output = torch.zeros(*tokens.size(), self.embedding_dim, device=tokens.device)
        for slicer, emb in zip(self.slicers, self.embedding_tables):
            s = slicer.compute_slice(num_steps, prev_steps)
            output[:, s] = emb(tokens[:, s])
        return output


act = torch.zeros(4); act[-1] = 1
obs = 1 - act
torch.manual_seed(0)
e_list = Embedder(3, [act, obs], nn.ModuleList([nn.Embedding(5, 8), nn.Embedding(7, 8)]))
e_reg = Embedder(3, [act, obs], nn.ModuleList([nn.Embedding(5, 8), nn.Embedding(7, 8)]), register=True)
assert sum(p.numel() for s in e_list.slicers for p in s.parameters()) == 0
assert len(list(e_list.parameters())) == len(list(e_reg.parameters())) == 2
tokens = torch.randint(0, 5, (2, 12))
opt = torch.optim.SGD(e_list.parameters(), lr=0.1)
before = [p.detach().clone() for p in e_list.parameters()]
e_list(tokens, 12, 0).pow(2).sum().backward()
opt.step()
assert all(not torch.equal(b, p) for b, p in zip(before, e_list.parameters()))
extra = sorted(set(e_reg.state_dict()) - set(e_list.state_dict()))
print("A: slicer parameters 0; trained tables 2 in both; registering adds only", extra)
assert extra == ['slicers.0.indices', 'slicers.1.indices']

# ---- B ----------------------------------------------------------------------------------------------------------
MARKS = []


class Mark(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        m = type("M", (), {})()
        ctx.m = m
        MARKS.append(weakref.ref(m))
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g


def count_nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return len(seen)


torch.manual_seed(0)
bs, T, n_agents, n_actions = 4, 6, 2, 3
critic = nn.Linear(5, n_actions)
target_critic = nn.Linear(5, n_actions)
critic_opt = torch.optim.RMSprop(critic.parameters(), lr=1e-3)
pi_net = nn.Linear(5, n_actions)
agent_opt = torch.optim.RMSprop(pi_net.parameters(), lr=1e-3)
ends = []


def _train_critic(states, actions, targets):
    target_q_vals = target_critic(states)
    q_vals = torch.zeros_like(target_q_vals)[:, :-1]
    for t in reversed(range(T)):
        q_t = Mark.apply(critic(states[:, t]))
        q_vals[:, t] = q_t.view(bs, n_agents, n_actions)                           # coma_learner.py:124
        q_taken = torch.gather(q_t, dim=2, index=actions[:, t].unsqueeze(-1)).squeeze(-1)
        loss = ((q_taken - targets[:, t].detach()) ** 2).mean()
        critic_opt.zero_grad()
        loss.backward()
        critic_opt.step()
    return q_vals


def train(states, actions, targets):
    q_vals = _train_critic(states, actions, targets)
    alive_inside = sum(r() is not None for r in MARKS)
    ends.append(count_nodes(q_vals))
    pi = torch.softmax(pi_net(states[:, :-1]), -1).reshape(-1, n_actions)
    q_vals = q_vals.reshape(-1, n_actions)
    baseline = (pi * q_vals).sum(-1).detach()
    q_taken = torch.gather(q_vals, 1, actions.reshape(-1, 1)).squeeze(1)
    pi_taken = torch.gather(pi, 1, actions.reshape(-1, 1)).squeeze(1)
    advantages = (q_taken - baseline).detach()
    coma_loss = -(advantages * torch.log(pi_taken)).mean()
    agent_opt.zero_grad()
    coma_loss.backward()
    agent_opt.step()
    return alive_inside


for call in range(3):
    MARKS.clear()
    states = torch.randn(bs, T + 1, n_agents, 5)
    actions = torch.randint(0, n_actions, (bs, T, n_agents))
    targets = torch.randn(bs, T, n_agents)
    inside = train(states, actions, targets)
    gc.collect()
    after = sum(r() is not None for r in MARKS)
    print(f"B: call {call}: critic graphs alive inside train() {inside}, after it {after}")
    assert inside == T and after == 0
print("B: nodes reachable from q_vals at the end of each call:", ends)
assert len(set(ends)) == 1

# ---- C ----------------------------------------------------------------------------------------------------------
def requires_grad(parameters, flag=True):
    for p in parameters:
        p.requires_grad = flag


def run(as_list):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
    parameters = model.parameters()
    if as_list:
        parameters = list(parameters)
    optimizer = torch.optim.Adam(parameters, lr=1e-3, betas=(0.0, 0.999))
    grads_in_sampling = 0
    for i in range(3):
        pos = torch.randn(8, 6)
        neg = torch.rand(8, 6)
        neg.requires_grad = True
        pre = [None if p.grad is None else p.grad.clone() for p in model.parameters()]
        requires_grad(parameters, False)                                             # train.py:117
        for k in range(5):
            neg_out = model(neg)
            neg_out.sum().backward()
            neg.grad.data.clamp_(-0.01, 0.01)
            neg.data.add_(neg.grad.data, alpha=-10)
            neg.grad.detach_()
            neg.grad.zero_()
            neg.data.clamp_(0, 1)
        grads_in_sampling += sum(p.grad is not None and (a is None or not torch.equal(a, p.grad))
                                 for a, p in zip(pre, model.parameters()))
        neg = neg.detach()
        requires_grad(parameters, True)
        model.zero_grad()
        loss = (model(pos) ** 2 + model(neg) ** 2 + model(pos) - model(neg)).mean()
        loss.backward()
        optimizer.step()
    return [p.detach().clone() for p in model.parameters()], grads_in_sampling


w_gen, g_gen = run(False)
w_list, g_list = run(True)
print(f"C: weight .grad changed by the sampling backwards: generator {g_gen}, list {g_list}; same final weights:",
      all(torch.equal(a, b) for a, b in zip(w_gen, w_list)))
assert g_gen > 0 and g_list == 0
assert all(torch.allclose(a, b) for a, b in zip(w_gen, w_list))
