"""fresh21 false: wouterkool/attention-learn-to-route nets/pointer_network.py:115 (GS301).

Shape: an in-place write on `probs = log_p.exp()`, whose only consumers are non-differentiable (`multinomial`/`max`
in `decode`), while the loss is built from `log_p` (`outputs.append(log_p)`). exp saved its output, but no backward
ever reaches the exp node, so the write is never checked. (Also, the branch runs only with `mask_logits=False`, and
no file constructs the Decoder with it.) Decoder.recurrence/decode/forward as in pointer_network.py:97-205, with
`mask_logits=False` to take the branch, sampling decode, and a REINFORCE-style loss from the returned log-probs.
"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class Decoder(nn.Module):
    def __init__(self, n, hidden_dim=8, mask_logits=False):
        super().__init__()
        self.mask_logits = mask_logits
        self.lstm = nn.LSTMCell(hidden_dim, hidden_dim)
        self.pointer = nn.Linear(hidden_dim, n)
        self.decode_type = "sampling"

    def update_mask(self, mask, selected):
        return mask.clone().scatter_(1, selected.unsqueeze(-1), True)

    def calc_logits(self, x, h_in, logit_mask):
        hy, cy = self.lstm(x, h_in)
        logits = self.pointer(hy)
        if self.mask_logits:
            logits[logit_mask] = -np.inf
        return logits, (hy, cy)

    def recurrence(self, x, h_in, prev_mask, prev_idxs):
        logit_mask = self.update_mask(prev_mask, prev_idxs) if prev_idxs is not None else prev_mask
        logits, h_out = self.calc_logits(x, h_in, logit_mask)
        log_p = torch.log_softmax(logits, dim=1)
        probs = log_p.exp()
        if not self.mask_logits:
            probs[logit_mask] = 0.                     # pointer_network.py:115
        return h_out, log_p, probs, logit_mask

    def decode(self, probs, mask):
        idxs = probs.multinomial(1).squeeze(1)
        while mask.gather(1, idxs.unsqueeze(-1)).data.any():
            idxs = probs.multinomial(1).squeeze(1)
        return idxs

    def forward(self, decoder_input, embedded_inputs, hidden):
        outputs, selections, idxs = [], [], None
        mask = torch.zeros(embedded_inputs.size(1), embedded_inputs.size(0), dtype=torch.bool)
        for i in range(embedded_inputs.size(0)):
            hidden, log_p, probs, mask = self.recurrence(decoder_input, hidden, mask, idxs)
            idxs = self.decode(probs, mask).detach()
            decoder_input = embedded_inputs[idxs, torch.arange(embedded_inputs.size(1))]
            outputs.append(log_p)
            selections.append(idxs)
        return torch.stack(outputs, 1), torch.stack(selections, 1)


n, B = 5, 3
dec = Decoder(n)
emb = torch.randn(n, B, 8, requires_grad=True)
h0 = (torch.zeros(B, 8), torch.zeros(B, 8))
log_ps, sel = dec(torch.zeros(B, 8), emb, h0)
ll = log_ps.gather(2, sel.unsqueeze(-1)).squeeze(-1).sum(1)
cost = torch.randn(B)
(cost * ll).mean().backward()                  # REINFORCE loss from the log-probs: no error
assert dec.pointer.weight.grad is not None
print("OK: the in-place write on probs is never on a backward path; the training backward runs")
