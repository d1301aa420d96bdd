"""Reproduction for `litgpt_lora_ind_inference_buffer`: Lightning-AI/litgpt commit b06b5e94 ("LoRAQKVLinear.lora_ind does not cache index").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `lora_ind` lazily registers the index tensor as a buffer on first use; when the first use is under
`torch.inference_mode()` the buffer is an inference tensor, and later training uses it in `index_copy_`, which saves
the index for backward, so torch raises "Inference tensors cannot be saved for backward"; the fix builds the index
on every call.
"""

import torch


class QKV(torch.nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.fixed = fixed
        self.lora_B = torch.nn.Parameter(torch.ones(2, 1))

    @property
    def lora_ind(self):
        if self.fixed:
            return torch.tensor([0, 2])
        if not hasattr(self, "_lora_ind"):
            self.register_buffer("_lora_ind", torch.tensor([0, 2]), persistent=False)
        return self._lora_ind

    def forward(self, x):
        source = (x @ self.lora_B.t())                      # (1, 2), requires grad
        result = x.new_zeros(1, 4)
        return result.index_copy_(dim=-1, index=self.lora_ind, source=source)


for fixed in (False, True):
    m = QKV(fixed)
    with torch.inference_mode():
        m(torch.ones(1, 1))                                 # first used for inference
    try:
        m(torch.ones(1, 1)).sum().backward()                # then for training
        raised = None
    except RuntimeError as e:
        raised = str(e)
    if fixed:
        assert raised is None and m.lora_B.grad is not None
    else:
        assert raised is not None and "Inference tensors cannot be saved for backward" in raised, raised

print("CONFIRMED")
