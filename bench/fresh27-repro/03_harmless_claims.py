"""fresh27 harmless: what each true-but-harmless claim says, and the consequence that is missing. Runs A..E.

A  GlebSBrykin/SANET Eval.py:241 (GS212) `content.clamp(0, 255)` discarded.
B  MoonInTheRiver/DiffSinger modules/commons/common_layers.py:319 (GS303) `q *= self.scaling` on a chunk() view.
C  MoonInTheRiver/DiffSinger utils/pitch_utils.py:73, 75 (GS301) `f0[uv > 0] = 0`, `f0[pitch_padding] = 0` after
   `f0 = 2 ** f0`.
D  microsoft/ClimaX src/climax/arch.py:123, climate_projection/arch.py:63 (GS522) sin/cos table copied into an
   `nn.Parameter(..., requires_grad=True)`.
E  gaopengcuhk/Tip-Adapter main.py:126, main_imagenet.py:106 (GS504) `adapter.weight = torch.load(best)` after
   training.
"""
import os
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)

# ---- A: the result is thrown away (true), but the loop runs once and save_image clamps the same way -------------
# `parser.add_argument('--steps', type=str, default = 1)`: the default is the int 1, so `range(args.steps)` runs
# once; any `--steps N` given on the command line is the string 'N' and `range('N')` raises before the loop.
try:
    range("3")
except TypeError:
    pass
else:
    raise AssertionError
decoded = torch.randn(1, 3, 8, 8) * 0.6 + 0.5          # a decoder output: mostly in [0, 1], some outside


def save_image_bytes(t):
    """torchvision.utils.save_image for one image (make_grid returns it squeezed), as torchvision writes it."""
    grid = t.squeeze(0)
    return grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to("cpu", torch.uint8)


as_written = save_image_bytes(decoded)                  # clamp result discarded
if_assigned = save_image_bytes(decoded.clamp(0, 255))   # what the line meant
assert torch.equal(as_written, if_assigned)
print("A: the saved image is byte-for-byte the same with or without the clamp (loop runs once)")

# ---- B: in-place on a chunk() view raises under grad (true), but no call reaches that line ----------------------
w = torch.randn(12, 4, requires_grad=True)
q, k, v = F.linear(torch.randn(5, 2, 4), w).chunk(3, dim=-1)   # in_proj_qkv, line 423
try:
    q *= 0.5
except RuntimeError as e:
    assert "returns multiple views" in str(e)
else:
    raise AssertionError
enable_torch_version = hasattr(F, "multi_head_attention_forward")   # line 213


def takes_torch_path(incremental_state, static_kv, reset_attn_weight):        # line 273
    return enable_torch_version and incremental_state is None and not static_kv and reset_attn_weight is None


# The self-attention calls (EncSALayer, DecSALayer.self_attn): incremental_state None -> torch's function returns at
# 275; not None -> `exit()` at 296-298, before the chunk at 304. Only DecSALayer.encoder_attn passes static_kv=True /
# reset_attn_weight, and it is built with encoder_decoder_attention=True: q comes from in_proj_q (F.linear, no chunk).
assert takes_torch_path(None, False, None)
print("B: the chunked q path is unreachable while F.multi_head_attention_forward exists:", enable_torch_version)

# ---- C: the writes overwrite pow's saved result (true), but nothing backwards through f0_denorm ----------------
hparams = {"pitch_norm": "log", "use_uv": True}        # configs/tts/fs2.yaml


def denorm_f0(f0, uv, hparams, pitch_padding=None, min=None, max=None):      # utils/pitch_utils.py:63-76
    if hparams['pitch_norm'] == 'standard':
        f0 = f0 * hparams['f0_std'] + hparams['f0_mean']
    if hparams['pitch_norm'] == 'log':
        f0 = 2 ** f0
    if min is not None:
        f0 = f0.clamp(min=min)
    if max is not None:
        f0 = f0.clamp(max=max)
    if uv is not None and hparams['use_uv']:
        f0[uv > 0] = 0
    if pitch_padding is not None:
        f0[pitch_padding] = 0
    return f0


predictor = nn.Linear(6, 2)                              # PitchExtractor's pitch_predictor, training mode
mel = torch.randn(2, 10, 6)
mel[1, 7:] = 0
pitch_pred = predictor(mel)
pitch_padding = mel.abs().sum(-1) == 0
f0_denorm_pred = denorm_f0(pitch_pred[:, :, 0], pitch_pred[:, :, 1] > 0, hparams, pitch_padding=pitch_padding)
gt_f0, uv = torch.randn(2, 10), (torch.rand(2, 10) > 0.7).float()
nonpadding = (mel.abs().sum(-1) > 0).float()             # tasks/tts/fs2.py add_f0_loss
loss = (F.binary_cross_entropy_with_logits(pitch_pred[:, :, 1], uv, reduction='none') * nonpadding).sum() / nonpadding.sum()
loss = loss + (F.l1_loss(pitch_pred[:, :, 0], gt_f0, reduction='none') * nonpadding * (uv == 0)).sum() / nonpadding.sum()
loss.backward()                                          # the losses read pitch_pred, not f0_denorm_pred: runs
assert predictor.weight.grad is not None
coarse = (1127 * (1 + f0_denorm_pred / 700).log() + 0.5).long()   # f0_to_coarse: integer bins, no gradient
assert coarse.dtype == torch.long
try:
    f0_denorm_pred.sum().backward()                      # a backward through it would raise (the claim)
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e)
else:
    raise AssertionError
print("C: training backward runs; only a backward through f0_denorm would raise, and none is taken")

# ---- D: the table trains (true), and the author asked for it: requires_grad=True spelled out -------------------


def sincos_1d(dim, pos):                                 # get_1d_sincos_pos_embed_from_grid
    omega = 1.0 / 10000 ** (np.arange(dim // 2, dtype=np.float64) / (dim / 2.0))
    out = np.einsum("m,d->md", pos.reshape(-1), omega)
    return np.concatenate([np.sin(out), np.cos(out)], axis=1)


time_pos_embed = nn.Parameter(torch.zeros(1, 3, 8), requires_grad=True)      # climate_projection/arch.py:57
time_pos_embed.data.copy_(torch.from_numpy(sincos_1d(8, np.arange(3))).float().unsqueeze(0))
start = time_pos_embed.detach().clone()
opt = torch.optim.SGD([time_pos_embed], lr=0.1)
(torch.randn(2, 3, 8) + time_pos_embed).pow(2).sum().backward()
opt.step()
assert not torch.equal(start, time_pos_embed.detach())
print("D: the explicitly trainable sin/cos-initialised embedding is learned, as `requires_grad=True` says")

# ---- E: the optimizer holds the old weight (true), but no step follows the reload -------------------------------
cache_keys = F.normalize(torch.randn(16, 40), dim=0)     # [dim, shots*classes]
adapter = nn.Linear(cache_keys.shape[0], cache_keys.shape[1], bias=False)
adapter.weight = nn.Parameter(cache_keys.t())
optimizer = torch.optim.AdamW(adapter.parameters(), lr=1e-3, eps=1e-4)
path = os.path.join(tempfile.mkdtemp(), "best_F_1shots.pt")
best_acc, best_weight = -1.0, None
for epoch in range(3):
    feats, target = F.normalize(torch.randn(32, 16), dim=-1), torch.randint(40, (32,))
    loss = F.cross_entropy(adapter(feats) * 10, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    acc = float(epoch)                                   # stand-in for the test accuracy
    if acc > best_acc:
        best_acc = acc
        torch.save(adapter.weight, path)
        best_weight = adapter.weight.detach().clone()
adapter.weight = torch.load(path)                        # main.py:126: a Parameter, so the assignment is allowed
assert isinstance(adapter.weight, nn.Parameter)
assert all(p is not adapter.weight for g in optimizer.param_groups for p in g["params"])   # the claim
assert torch.equal(adapter.weight.detach(), best_weight)  # the rest of the function only evaluates these weights
print("E: the reloaded best weight is evaluated; the function has no step() after the reload")
