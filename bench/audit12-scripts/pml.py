import torch
from pytorch_metric_learning.losses import ManifoldLoss
torch.manual_seed(0)
loss_fn=ManifoldLoss(l=8, K=3)
emb=torch.randn(12,8,requires_grad=True)
try:
    loss_fn(emb).backward(); print('ok')
except RuntimeError as e: print('RuntimeError',str(e)[:100])
