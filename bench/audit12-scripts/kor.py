import torch, kornia.augmentation as K
torch.manual_seed(0)
names=[n for n in dir(K) if 'Mix' in n or 'CutMix' in n]
print(names)
for n in ['RandomMixUpV2','RandomCutMixV2']:
    if not hasattr(K,n): print('no',n); continue
    aug=getattr(K,n)(p=1.0, data_keys=['input','class']) if 'data_keys' in getattr(K,n).__init__.__code__.co_varnames else getattr(K,n)(p=1.0)
    for kind in ('leaf','nonleaf'):
        x=torch.rand(4,3,8,8,requires_grad=True); inp = x if kind=='leaf' else x*1
        before=inp.detach().clone()
        try:
            out=aug(inp, torch.tensor([0,1,2,3])) 
            o=out[0] if isinstance(out,(list,tuple)) else out
            o.sum().backward()
            print(n,kind,'ok; input changed:', not torch.equal(before, inp.detach()))
        except Exception as e: print(n,kind,type(e).__name__,str(e)[:100])
