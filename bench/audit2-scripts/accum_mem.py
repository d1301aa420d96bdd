# does `total += loss` AFTER loss.backward() keep saved activations alive? (saved tensors are freed by backward)
import sys, torch, gc, resource, weakref
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(512, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1))
opt = torch.optim.SGD(net.parameters(), lr=1e-3)
total = 0.0; refs = []
mode = sys.argv[1]
for i in range(30):
    x = torch.randn(1024, 512)
    h = net[1](net[0](x)); refs.append(weakref.ref(h))   # 16 MiB activation saved by ReLU/Linear
    loss = net[2](h).mean()
    opt.zero_grad(); loss.backward(); opt.step()
    total = total + (loss if mode == 'tensor' else loss.item())
    del h, x
gc.collect()
print(mode, 'activations still alive:', sum(r() is not None for r in refs), 'of 30; total.grad_fn:', getattr(total, 'grad_fn', None) is not None)
