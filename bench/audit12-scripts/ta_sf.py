import torch, torchattacks
torch.manual_seed(0)
m=torch.nn.Sequential(torch.nn.Flatten(),torch.nn.Linear(12,3))
with torch.no_grad(): m[1].weight.mul_(20)
x=0.4+0.2*torch.rand(2,3,2,2); y=torch.tensor([0,1])
try:
    adv=torchattacks.SparseFool(m,steps=5)(x,y); print('SparseFool ok')
except RuntimeError as e: print('RuntimeError',str(e)[:80])
