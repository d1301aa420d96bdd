"""fresh36 repro 04 (harmless, GS303): keonlee9420/DiffGAN-TTS model/blocks.py:349.

fairseq-style MultiheadAttention.forward:
    if self.enable_torch_version and incremental_state is None and not static_kv and reset_attn_weight is None:
        if self.qkv_same_dim:
            return F.multi_head_attention_forward(query, key, value, ...)
    ...
    if self.self_attention:
        q, k, v = self.in_proj_qkv(query)       # self._in_proj(query).chunk(3, dim=-1)
    ...
    q *= self.scaling                            # line 349
`enable_torch_version` is True whenever `hasattr(F, "multi_head_attention_forward")` (every torch since 1.0),
and the only user, EncSALayer.forward, calls `self.self_attn(query=x, key=x, value=x,
key_padding_mask=encoder_padding_mask)`: incremental_state None, static_kv False, reset_attn_weight None, so it
always returns through F.multi_head_attention_forward and line 349 never runs.  The claim is true of the
statement (run B): in grad mode the in-place scaling of a chunk() output raises.
The class below keeps the file's __init__ parameters, _in_proj, in_proj_qkv and the head of forward.
"""
import torch
import torch.nn as nn
from torch.nn import functional as F


class MultiheadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, dropout=0., bias=True, self_attention=False):
        super().__init__()
        self.embed_dim = embed_dim
        self.qkv_same_dim = True
        self.num_heads = num_heads
        self.dropout = dropout
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.self_attention = self_attention
        self.in_proj_weight = nn.Parameter(torch.Tensor(3 * embed_dim, embed_dim))
        if bias:
            self.in_proj_bias = nn.Parameter(torch.Tensor(3 * embed_dim))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = False
        nn.init.xavier_uniform_(self.in_proj_weight)
        nn.init.xavier_uniform_(self.out_proj.weight)
        self.enable_torch_version = False
        if hasattr(F, "multi_head_attention_forward"):
            self.enable_torch_version = True
        else:
            self.enable_torch_version = False

    def forward(self, query, key, value, key_padding_mask=None, incremental_state=None, need_weights=True,
                static_kv=False, attn_mask=None, before_softmax=False, need_head_weights=False,
                enc_dec_attn_constraint_mask=None, reset_attn_weight=None):
        if self.enable_torch_version and incremental_state is None and not static_kv and reset_attn_weight is None:
            if self.qkv_same_dim:
                return F.multi_head_attention_forward(query, key, value,
                                                      self.embed_dim, self.num_heads,
                                                      self.in_proj_weight,
                                                      self.in_proj_bias, self.bias_k, self.bias_v,
                                                      self.add_zero_attn, self.dropout,
                                                      self.out_proj.weight, self.out_proj.bias,
                                                      self.training, key_padding_mask, need_weights,
                                                      attn_mask)
        if self.self_attention:
            q, k, v = self.in_proj_qkv(query)
        q *= self.scaling
        return q, None

    def in_proj_qkv(self, query):
        return self._in_proj(query).chunk(3, dim=-1)

    def _in_proj(self, input, start=0, end=None):
        weight = self.in_proj_weight
        bias = self.in_proj_bias
        weight = weight[start:end, :]
        if bias is not None:
            bias = bias[start:end]
        return F.linear(input, weight, bias)


torch.manual_seed(0)
attn = MultiheadAttention(16, 2, self_attention=True, dropout=0.1, bias=False)
x = torch.randn(5, 3, 16)                       # T x B x C, as EncSALayer passes it
encoder_padding_mask = torch.zeros(3, 5, dtype=torch.bool)
# run A: EncSALayer's call, in grad mode, train mode
assert attn.enable_torch_version
out, _, = attn(query=x, key=x, value=x, key_padding_mask=encoder_padding_mask)
out.sum().backward()
assert attn.in_proj_weight.grad is not None
print("A: the repository's call returns through F.multi_head_attention_forward; backward runs")
# run B: force the fairseq path (as on a torch without F.multi_head_attention_forward)
attn.enable_torch_version = False
try:
    attn(query=x, key=x, value=x, key_padding_mask=encoder_padding_mask)
    raise SystemExit("expected the view error")
except RuntimeError as e:
    assert "view" in str(e) and "inplace" in str(e), e
    print("B: line 349 raises when reached:", str(e).split(".")[0])
print("OK: true of the statement, but no caller in the repository reaches it")
