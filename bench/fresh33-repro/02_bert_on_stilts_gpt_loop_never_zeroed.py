"""fresh33 real: zphang/bert_on_stilts examples/run_openai_gpt.py:203 (GS503).

The ROCStories fine-tuning loop (`if args.do_train:`) runs, per batch,
`losses = model(...); loss = args.lm_coef * losses[0] + losses[1]; loss.backward(); optimizer.step()`, and nothing
in the file zeroes gradients (no `optimizer.zero_grad()`, no `model.zero_grad()`); `OpenAIAdam.step`
(pytorch_pretrained_bert/optimization_openai.py:80-) reads `p.grad.data` and never clears it. So step k applies
the sum of the gradients of batches 1..k. (The file is a copy of pytorch-pretrained-bert's example of early 2019,
which had the same omission.) Run below: the same loop with a tiny model and torch's Adam standing in for
OpenAIAdam (neither zeroes); the gradient the optimizer sees at step 3 is the sum of the three batch gradients.
"""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(6, 2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batches = [(torch.randn(4, 6), torch.randint(0, 2, (4,))) for _ in range(3)]

seen, per_batch = [], []
model.train()
for step, batch in enumerate(batches):
    x, y = batch
    # each batch's own gradient at the current weights, computed on a copy
    ref = nn.Linear(6, 2); ref.load_state_dict(model.state_dict())
    nn.functional.cross_entropy(ref(x), y).backward()
    per_batch.append(ref.weight.grad.clone())
    loss = nn.functional.cross_entropy(model(x), y)     # run_openai_gpt.py:201-202
    loss.backward()                                      # :203
    seen.append(model.weight.grad.clone())
    optimizer.step()                                     # :204, no zero_grad anywhere

print("grad seen at step 3:", seen[2].norm().item(), " that batch's own grad:", per_batch[2].norm().item())
assert torch.allclose(seen[2], per_batch[0] + per_batch[1] + per_batch[2], atol=1e-6)
assert not torch.allclose(seen[2], per_batch[2], atol=1e-3)
print("OK: the gradients of all earlier batches are still in .grad at each step")
