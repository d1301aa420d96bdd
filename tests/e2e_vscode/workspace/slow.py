# A script that takes a minute before its first backward: the end-to-end test starts a trace of it
# and cancels it (the Cancel button of the progress notification must stop the script).
import time

import torch

time.sleep(60)
w = torch.randn(3, requires_grad=True)
(w * 2).sum().backward()
