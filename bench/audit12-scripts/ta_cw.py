import torch, torchattacks
torch.manual_seed(0)
m=torch.nn.Sequential(torch.nn.Flatten(),torch.nn.Linear(12,3))
x=torch.rand(4,3,2,2); y=torch.tensor([0,1,2,0])
for A in ['CWL0','CWL2','CWLinf','CWBSL2']:
    atk=getattr(torchattacks,A)(m,steps=20)
    adv=atk(x,y)
    print('requires_grad',adv.requires_grad)
    try:
        torch.nn.functional.cross_entropy(m(adv),y).backward(); print(A,'ok')
    except RuntimeError as e: print(A,'RuntimeError',str(e)[:80])
