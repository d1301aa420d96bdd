"""fresh31 real: g6ling/Reinforcement-Learning-Pytorch-Cartpole POMDP/1-DRQN/train.py:75 (GS404).

Per episode `hidden = None`, then per environment step `action, hidden = get_action(state, target_net, epsilon,
env, hidden)`, which runs `target_net.get_action(state, hidden)` -> `self.forward(state, hidden)` -> `self.lstm(x,
hidden)` with grad mode on (nothing in train.py or model.py uses no_grad; `target_net.train()`, its parameters
require grad, and the optimizer only steps `online_net`). The returned (h, c) carries the LSTM graph of this step
and of every earlier step of the episode (the next call's LSTM takes it as input), and nothing ever backwards it
(`train_model` builds its own graph from the replay batch). The chain grows by one LSTM step per environment step
until the episode ends (CartPole-v1: up to 500 steps). Run below with the real DRQN (same sizes, CPU): the number
of autograd nodes reachable from `hidden` grows at every step.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class DRQN(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super(DRQN, self).__init__()
        self.num_inputs = num_inputs
        self.num_outputs = num_outputs
        self.lstm = nn.LSTM(input_size=num_inputs, hidden_size=128, batch_first=True)
        self.fc1 = nn.Linear(128, 256)
        self.fc2 = nn.Linear(256, num_outputs)

    def forward(self, x, hidden=None):
        if hidden is not None:
            out, hidden = self.lstm(x, hidden)
        else:
            out, hidden = self.lstm(x)
        out = F.relu(self.fc1(out))
        qvalue = self.fc2(out)
        return qvalue, hidden

    def get_action(self, state, hidden):
        state = state.unsqueeze(0).unsqueeze(0)
        qvalue, hidden = self.forward(state, hidden)
        _, action = torch.max(qvalue, 2)
        return action.numpy()[0][0], hidden


def nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return len(seen)


torch.manual_seed(500)
target_net = DRQN(2, 2)
target_net.train()
state = torch.Tensor(np.random.rand(2))
hidden = None
counts = []
for step in range(6):
    action, hidden = target_net.get_action(state, hidden)     # get_action at line 75
    state = torch.Tensor(np.random.rand(2))
    counts.append(nodes(hidden[0]))
print("autograd nodes reachable from hidden[0] after each env step:", counts)
assert hidden[0].requires_grad
assert all(b > a for a, b in zip(counts, counts[1:]))
print("OK: the LSTM state's graph grows every step of the episode; nothing backwards it")
