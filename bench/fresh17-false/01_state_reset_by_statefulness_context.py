"""fresh17 (false): GS413 meshed-memory-transformer `models/transformer/attention.py:167, 170`.

`MultiHeadAttention.forward` does `self.running_keys = torch.cat([self.running_keys, keys], 1)` (and the same for
`running_values`) only `if self.can_be_stateful and self._is_stateful`. `_is_stateful` is set only by
`Module.enable_statefulness`, which every caller reaches through the context manager `with self.statefulness(b_s):`
(beam_search.py:69, captioning_model.py:40, 56); its `finally` calls `disable_statefulness` ->
`_reset_states`, which replaces each state buffer by a `clone().detach()` of its default. So the graph chained
across the decoding steps of one caption (wanted: SCST backpropagates the beam's log-probs through them,
train.py:109-124) is dropped before the next training step, and the next backward does not raise. The program
below copies containers.Module's state machinery and MultiHeadAttention's stateful branch and runs the SCST loop.
"""
from contextlib import contextmanager

import torch
import torch.nn as nn


class Module(nn.Module):  # models/containers.py, trimmed
    def __init__(self):
        super().__init__()
        self._is_stateful = False
        self._state_names = []
        self._state_defaults = dict()

    def register_state(self, name, default):
        self._state_names.append(name)
        self._state_defaults[name] = default.clone().detach()
        self.register_buffer(name, default)

    def _init_states(self, batch_size):
        for name in self._state_names:
            self._buffers[name] = self._state_defaults[name].clone().detach().to(self._buffers[name].device)
            self._buffers[name] = self._buffers[name].unsqueeze(0)
            self._buffers[name] = self._buffers[name].expand([batch_size, ] + list(self._buffers[name].shape[1:]))
            self._buffers[name] = self._buffers[name].contiguous()

    def _reset_states(self):
        for name in self._state_names:
            self._buffers[name] = self._state_defaults[name].clone().detach().to(self._buffers[name].device)

    def enable_statefulness(self, batch_size):
        for m in self.children():
            if isinstance(m, Module):
                m.enable_statefulness(batch_size)
        self._init_states(batch_size)
        self._is_stateful = True

    def disable_statefulness(self):
        for m in self.children():
            if isinstance(m, Module):
                m.disable_statefulness()
        self._reset_states()
        self._is_stateful = False

    @contextmanager
    def statefulness(self, batch_size):
        self.enable_statefulness(batch_size)
        try:
            yield
        finally:
            self.disable_statefulness()


class MultiHeadAttention(Module):  # models/transformer/attention.py, the stateful branch as written
    def __init__(self, d_model):
        super().__init__()
        self.fc = nn.Linear(d_model, d_model)
        self.can_be_stateful = True
        self.register_state('running_keys', torch.zeros((0, d_model)))
        self.register_state('running_values', torch.zeros((0, d_model)))

    def forward(self, queries, keys, values):
        if self.can_be_stateful and self._is_stateful:
            self.running_keys = torch.cat([self.running_keys, keys], 1)
            keys = self.running_keys
            self.running_values = torch.cat([self.running_values, values], 1)
            values = self.running_values
        att = torch.softmax(queries @ keys.transpose(1, 2), -1)
        return att @ self.fc(values)


class Captioner(Module):
    def __init__(self, d=8, vocab=5):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.att = MultiHeadAttention(d)
        self.out = nn.Linear(d, vocab)

    def sample(self, b_s, max_len=4):  # like CaptioningModel.sample_rl / BeamSearch.apply: decode under statefulness
        log_probs, word = [], torch.zeros(b_s, 1, dtype=torch.long)
        with self.statefulness(b_s):
            for _ in range(max_len):
                x = self.emb(word)
                h = self.att(x, x, x)
                distr = torch.distributions.Categorical(logits=self.out(h)[:, 0])
                word = distr.sample().unsqueeze(1)
                log_probs.append(distr.log_prob(word.squeeze(1)))
        return torch.stack(log_probs, 1)


model = Captioner()
optim = torch.optim.Adam(model.parameters(), lr=1e-3)
for it in range(3):  # train.py train_scst: beam search with grad on, then one backward per step
    log_probs = model.sample(b_s=2)
    optim.zero_grad()
    reward = torch.rand(2, 1)
    loss = (-log_probs.mean(-1, keepdim=True) * (reward - reward.mean())).mean()
    loss.backward()
    optim.step()
    print(it, "backward ok; running_keys after the context:", tuple(model.att.running_keys.shape),
          "requires_grad:", model.att.running_keys.requires_grad)
