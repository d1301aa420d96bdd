"""fresh25 false: jidasheng/bi-lstm-crf bi_lstm_crf/model/crf.py:117 (GS301, "`acc_score_t += emit_score_t` modifies
`acc_score_t`, saved for backward by `.max()` at line 116").

`CRF.__viterbi_decode` runs, per time step, `acc_score_t = max_score.unsqueeze(1) + self.transitions`,
`acc_score_t, bps[:, t, :] = acc_score_t.max(dim=-1)` (116), `acc_score_t += emit_score_t` (117). `max(dim=...)`
returns (values, indices), and its backward saves the *indices* (and the input's size), not the values: writing
into the values in place leaves nothing it saved modified. (The decode path is also only used for prediction;
the loss uses `__forward_algorithm`.) Run below with the same statements, and a backward through the decoded best
score: no error, and the gradient reaches the transitions and the features. `Tensor.max()` without `dim` (which
does save its result) is what raises under the same in-place add.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
IMPOSSIBLE = -1e4


class CRF(nn.Module):
    def __init__(self, in_features, num_tags):
        super().__init__()
        self.num_tags = num_tags + 2
        self.start_idx = self.num_tags - 2
        self.stop_idx = self.num_tags - 1
        self.fc = nn.Linear(in_features, self.num_tags)
        self.transitions = nn.Parameter(torch.randn(self.num_tags, self.num_tags), requires_grad=True)
        self.transitions.data[self.start_idx, :] = IMPOSSIBLE
        self.transitions.data[:, self.stop_idx] = IMPOSSIBLE

    def forward(self, features, masks):
        features = self.fc(features)
        return self._viterbi_decode(features, masks[:, :features.size(1)].float())

    def _viterbi_decode(self, features, masks):
        B, L, C = features.shape
        bps = torch.zeros(B, L, C, dtype=torch.long, device=features.device)
        max_score = torch.full((B, C), IMPOSSIBLE, device=features.device)
        max_score[:, self.start_idx] = 0
        for t in range(L):
            mask_t = masks[:, t].unsqueeze(1)
            emit_score_t = features[:, t]
            acc_score_t = max_score.unsqueeze(1) + self.transitions
            acc_score_t, bps[:, t, :] = acc_score_t.max(dim=-1)              # crf.py:116
            acc_score_t += emit_score_t                                       # crf.py:117
            max_score = acc_score_t * mask_t + max_score * (1 - mask_t)
        max_score += self.transitions[self.stop_idx]
        best_score, best_tag = max_score.max(dim=-1)
        return best_score, best_tag


crf = CRF(8, 3)
features = torch.randn(2, 5, 8, requires_grad=True)
best_score, _ = crf(features, torch.ones(2, 5))
best_score.sum().backward()
print("backward through the decode ran; transitions.grad norm:", crf.transitions.grad.norm().item())
assert crf.transitions.grad is not None and features.grad is not None

x = torch.randn(3, 4, requires_grad=True)
v = (x * 1).max()
v += 1
try:
    v.backward()
except RuntimeError as e:
    print("max() without dim saves its result; the same in-place add then raises:", str(e)[:60])
else:
    raise AssertionError("max() without dim did not raise")
