# real gpytorch (parent 3c69f8a0 / fix ead5e85f): SVGP with VariationalStrategy on the CG path (num_induc > max_cholesky_size),
# which builds CachedCGLazyTensor (the detach_() calls); compare the gradients of every parameter between the two trees
import sys, torch, gpytorch
torch.manual_seed(0)
class GP(gpytorch.models.AbstractVariationalGP):
    def __init__(self, z):
        vd = gpytorch.variational.CholeskyVariationalDistribution(z.size(0))
        super().__init__(gpytorch.variational.VariationalStrategy(self, z, vd, learn_inducing_locations=True))
        self.mean_module = gpytorch.means.ConstantMean(); self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())
    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))
x = torch.linspace(0, 1, 40).unsqueeze(-1); y = torch.sin(6 * x).squeeze(-1)
m = GP(torch.linspace(0, 1, 12).unsqueeze(-1)); lik = gpytorch.likelihoods.GaussianLikelihood()
mll = gpytorch.mlls.VariationalELBO(lik, m, num_data=40)
m.train(); lik.train()
with gpytorch.settings.max_cholesky_size(4):
    loss = -mll(m(x), y); loss.backward()
for n, p in list(m.named_parameters()) + list(lik.named_parameters()):
    print(n, None if p.grad is None else round(float(p.grad.norm()), 5))
