"""fresh14 real 1 (GS402, kuangliu/pytorch-retinanet retinanet.py:53): the file's self-test `test()`.

`loc_preds` and `cls_preds` both come from the same FPN feature maps; `loc_preds.backward(g)` frees the trunk's saved
tensors, so `cls_preds.backward(g)` raises "Trying to backward through the graph a second time". (The real file
run with `test()` uncommented raises the same; here a small trunk stands in for FPN50.)
"""
import torch
import torch.nn as nn

trunk = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
loc_head, cls_head = nn.Conv2d(8, 4, 3, padding=1), nn.Conv2d(8, 5, 3, padding=1)
fms = trunk(torch.randn(2, 3, 16, 16))
loc_preds, cls_preds = loc_head(fms), cls_head(fms)
loc_preds.backward(torch.randn(loc_preds.size()))
try:
    cls_preds.backward(torch.randn(cls_preds.size()))
except RuntimeError as e:
    assert "backward through the graph a second time" in str(e)
    print("raises as reported:", str(e)[:60])
else:
    raise SystemExit("no error")
