"""Reproduction for `marl_rollout_hidden_keeps_graph`: starry-sky6688/MARL-Algorithms commit 31c8dcd ("Update rollout.py").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `generate_episode` runs the agents with grad enabled and `choose_action` writes the RNN output into
`self.policy.eval_hidden[:, agent_num, :]` in place, so the stored hidden state carries a graph that grows with
every environment step of the episode; the fix decorates `generate_episode` with `@torch.no_grad()`.
"""

import torch

torch.manual_seed(0)
rnn = torch.nn.GRUCell(4, 8)


def graph_depth(t):
    depth, fn = 0, t.grad_fn
    while fn is not None:
        depth += 1
        nxt = [f for f, _ in fn.next_functions if f is not None and type(f).__name__ != "AccumulateGrad"]
        fn = nxt[0] if nxt else None
    return depth


def generate_episode(steps):
    eval_hidden = torch.zeros((1, 2, 8))                # init_hidden
    for _ in range(steps):
        for agent_num in range(2):
            hidden_state = eval_hidden[:, agent_num, :]
            eval_hidden[:, agent_num, :] = rnn(torch.randn(1, 4), hidden_state)
    return eval_hidden


h10, h40 = generate_episode(10), generate_episode(40)
assert h10.requires_grad and graph_depth(h40) > graph_depth(h10) > 10   # buggy: the graph grows with the episode

fixed = torch.no_grad()(generate_episode)                # the fix: @torch.no_grad()
h = fixed(40)
assert not h.requires_grad and h.grad_fn is None
print("CONFIRMED")
