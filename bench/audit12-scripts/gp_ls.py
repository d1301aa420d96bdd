import torch, gpytorch
from gpytorch.constraints import Positive, Interval
for name,kw in [('default',{}),('unenforced',{'lengthscale_constraint':Positive(transform=None)})]:
    k=gpytorch.kernels.RBFKernelGrad(**kw)
    x=torch.randn(5,2)
    for mode in ('grad','no_grad'):
        before=k.raw_lengthscale.detach().clone()
        try:
            ctx=torch.no_grad() if mode=='no_grad' else torch.enable_grad()
            with ctx:
                d=k(x,x,diag=True)
                if mode=='grad': d.sum().backward()
            print(name,mode,'ok; raw changed:',not torch.equal(before,k.raw_lengthscale.detach()))
        except Exception as e: print(name,mode,type(e).__name__,str(e)[:90])
