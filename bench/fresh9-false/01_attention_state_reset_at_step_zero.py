# From fatchord/WaveRNN models/tacotron.py:203 (fresh9, first try of the merged engine /tmp/snap10b); the same
# class is copied in as-ideas/ForwardTacotron models/tacotron.py:203.
# Finding: GS420 "This writes a tensor with a graph into `self.cumulative`, so the buffer keeps this step's graph.
# Each later write chains the next step's graph onto it; ..."
# Why wrong: `self.cumulative` is the location-sensitive attention's running sum, and `forward(..., t)` re-makes it
# (`if t == 0: self.init_attention(...)`, fresh zeros) at the first decoder step of every utterance. Within one
# decoder loop the chaining is the model's own differentiable computation (the loss backwards through it, once);
# across training steps nothing chains, because step 0 of the next batch replaces the attribute. At most one
# batch's last graph is held until the next forward. This program trains three steps and backwards each once.
import torch
import torch.nn as nn


class LSA(nn.Module):
    def __init__(self, attn_dim, kernel_size=31, filters=32):
        super().__init__()
        self.conv = nn.Conv1d(2, filters, padding=(kernel_size - 1) // 2, kernel_size=kernel_size, bias=False)
        self.L = nn.Linear(filters, attn_dim, bias=True)
        self.W = nn.Linear(attn_dim, attn_dim, bias=True)
        self.v = nn.Linear(attn_dim, 1, bias=False)
        self.cumulative = None
        self.attention = None

    def init_attention(self, encoder_seq_proj):
        b, t, c = encoder_seq_proj.size()
        self.cumulative = torch.zeros(b, t)
        self.attention = torch.zeros(b, t)

    def forward(self, encoder_seq_proj, query, t):
        if t == 0:
            self.init_attention(encoder_seq_proj)
        processed_query = self.W(query).unsqueeze(1)
        location = torch.cat([self.cumulative.unsqueeze(1), self.attention.unsqueeze(1)], dim=1)
        processed_loc = self.L(self.conv(location).transpose(1, 2))
        u = self.v(torch.tanh(processed_query + encoder_seq_proj + processed_loc)).squeeze(-1)
        scores = torch.sigmoid(u) / torch.sigmoid(u).sum(dim=1, keepdim=True)
        self.attention = scores
        self.cumulative += self.attention
        return scores.unsqueeze(-1).transpose(1, 2)


attn = LSA(16)
opt = torch.optim.SGD(attn.parameters(), lr=0.1)
for step in range(3):
    enc = torch.randn(2, 7, 16)
    query = torch.randn(2, 16)
    out = 0
    for t in range(5):
        out = out + attn(enc, query, t).sum()
    opt.zero_grad()
    out.backward()
    opt.step()
print("ok")
