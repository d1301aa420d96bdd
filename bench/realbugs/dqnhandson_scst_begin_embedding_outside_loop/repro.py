"""Reproduction for `dqnhandson_scst_begin_embedding_outside_loop`: PacktPublishing/Deep-Reinforcement-Learning-Hands-On e1c6a043 (Fix emb gradients).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)
        self.rnn = nn.LSTM(8, 8, batch_first=True)
        self.out = nn.Linear(8, 10)

    def decode_chain(self, hid, begin_emb, steps=3):
        cur, res = begin_emb, []
        for _ in range(steps):
            o, hid = self.rnn(cur.unsqueeze(0), hid)
            logits = self.out(o.squeeze(0))
            res.append(logits)
            cur = self.emb(logits.argmax(dim=-1))
        return torch.cat(res)


def train(fixed, batches=3):
    net = Net()
    optimiser = torch.optim.Adam(net.parameters(), lr=1e-3)
    beg_token = torch.LongTensor([1])
    if not fixed:
        beg_embedding = net.emb(beg_token)          # buggy: once, before the loop
    for _ in range(batches):
        optimiser.zero_grad()
        if fixed:
            beg_embedding = net.emb(beg_token)
        hid = (torch.zeros(1, 1, 8), torch.zeros(1, 1, 8))
        loss_v = net.decode_chain(hid, beg_embedding).logsumexp(-1).mean()
        loss_v.backward()
        optimiser.step()


try:
    train(False)
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "second time" in str(e), e
train(True)
print("CONFIRMED")
