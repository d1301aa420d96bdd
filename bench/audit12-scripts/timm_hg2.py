import torch, timm
from timm.models import hgnet
names=[n for n in hgnet.model_cfgs] if hasattr(hgnet,'model_cfgs') else []
print(names)
fns=sorted(n for n in dir(hgnet) if n.startswith('hgnet') and callable(getattr(hgnet,n)))
for n in fns:
    try: m=getattr(hgnet,n)(pretrained=False)
    except Exception as e: print(n,'build fail',e); continue
    m.train()
    try:
        m(torch.randn(2,3,64,64)).sum().backward(); print(n,'ok')
    except RuntimeError as e: print(n,'RuntimeError',str(e)[:90])
