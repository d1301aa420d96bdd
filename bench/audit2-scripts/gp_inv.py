# real gpytorch (parent 8b155deb / fix ad622ebc): inv_matmul on a lazy kernel matrix larger than max_cholesky_size,
# then the caller reuses the same lazy tensor; does the hyper-parameter still get a gradient?
import torch, gpytorch
torch.manual_seed(0)
n = 120
x = torch.linspace(0, 1, n).unsqueeze(-1)
k = gpytorch.kernels.RBFKernel()
with gpytorch.settings.max_cholesky_size(50):
    K = k(x).add_diag(torch.tensor(0.1))
    rhs = torch.randn(n, 1)
    a = K.inv_matmul(rhs)                   # goes through _solve -> lazy_tsr.detach_() in the buggy file
    b = (K.evaluate() * 1.0).sum()          # the caller uses K again
    (a.sum() + b).backward()
print('lengthscale grad:', k.raw_lengthscale.grad)
k.raw_lengthscale.grad = None
with gpytorch.settings.max_cholesky_size(50):
    K = k(x).add_diag(torch.tensor(0.1))
    b = (K.evaluate() * 1.0).sum(); b.backward()
print('grad of the second term alone:', k.raw_lengthscale.grad)
