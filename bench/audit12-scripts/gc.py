import sys, torch, torch.nn as nn, numpy as np
import cv2
cv2.resize=lambda img,size,*a,**k: np.resize(img,(size[1],size[0])) if img.ndim==2 else img
import pytorch_grad_cam as P
torch.manual_seed(0)
m=nn.Sequential(nn.Conv2d(3,4,3,padding=1),nn.ReLU(inplace=True),nn.Conv2d(4,4,3,padding=1),nn.ReLU(inplace=True),nn.AdaptiveAvgPool2d(1),nn.Flatten(),nn.Linear(4,3)).eval()
x=torch.rand(1,3,8,8)
for name in sys.argv[1:]:
    cls=getattr(P,name)
    try:
        kw={}
        cam=cls(model=m,target_layers=[m[2]],use_cuda=False) if 'use_cuda' in cls.__init__.__code__.co_varnames or 'use_cuda' in P.base_cam.BaseCAM.__init__.__code__.co_varnames else cls(model=m,target_layers=[m[2]])
        if name=='ScoreCAM': cam.batch_size=4
        r=cam(input_tensor=x); print(name,'ok',np.asarray(r).shape)
    except Exception as e: print(name,type(e).__name__,str(e)[:110])
