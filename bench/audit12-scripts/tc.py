import torch, torch.nn as nn
from torchcam.cams import GradCAM
torch.manual_seed(0)
# a VGG-style net (torchvision's vgg layout: conv, ReLU(inplace=True), ..., pool, classifier)
m=nn.Sequential(nn.Conv2d(3,4,3,padding=1),nn.ReLU(inplace=True),nn.Conv2d(4,4,3,padding=1),nn.ReLU(inplace=True),nn.MaxPool2d(2),nn.Flatten(),nn.Linear(4*8*8,3)).eval()
for tl in [None,'2']:
    try:
        cam=GradCAM(m,target_layer=tl,input_shape=(3,16,16))
        print('layer',cam.target_layer)
        out=m(torch.rand(1,3,16,16)); cam(out.argmax().item(),out); print(tl,'ok')
    except Exception as e: print(tl,type(e).__name__,str(e)[:110])
    for h in cam.hook_handles: h.remove()
