import sys, types, torch
import logging
pkg=types.ModuleType('torchmetrics'); pkg.__path__=[sys.argv[1]+'/torchmetrics']; pkg._logger=logging.getLogger('tm'); sys.modules['torchmetrics']=pkg
import torchmetrics.utilities
from torchmetrics.metric import Metric
src=open(sys.argv[1]+'/torchmetrics/image/lpip.py').read()
i=src.index('    def update('); j=src.index('\n    def ',i+10)
upd=src[i:j]
print(upd)
ns={'Tensor':torch.Tensor,'torch':torch}
class Net(torch.nn.Module):
    def __init__(s): super().__init__(); s.c=torch.nn.Conv2d(3,1,1)
    def forward(s,a,b,normalize=False): return (s.c(a)-s.c(b)).pow(2).mean(dim=(1,2,3))
def _lpips_update(img1,img2,net,normalize): l=net(img1,img2,normalize=normalize); return l, img1.shape[0]
ns['_lpips_update']=_lpips_update
exec('class L(Metric):\n    full_state_update=False\n    def __init__(self):\n        super().__init__(); self.net=Net(); self.normalize=False\n        self.add_state("sum_scores", torch.tensor(0.0), dist_reduce_fx="sum"); self.add_state("total", torch.tensor(0.0), dist_reduce_fx="sum")\n    def compute(self): return self.sum_scores/self.total\n'+upd, dict(ns, Metric=Metric, Net=Net), ns)
L=ns['L']
for how in ('forward','update'):
    m=L()
    for i in range(3):
        a=torch.rand(2,3,4,4,requires_grad=True); b=torch.rand(2,3,4,4)
        if how=='forward': m(a,b)
        else: m.update(a,b)
    print(how,'sum_scores requires_grad:', m.sum_scores.requires_grad, m.sum_scores.grad_fn)
m=L(); m._enable_grad=True
a=torch.rand(2,3,4,4,requires_grad=True); m.update(a,torch.rand(2,3,4,4))
print('control (_enable_grad forced True): requires_grad', m.sum_scores.requires_grad)
