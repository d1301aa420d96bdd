import torch, gpytorch
class M(gpytorch.models.ApproximateGP if hasattr(gpytorch.models,'ApproximateGP') else gpytorch.models.AbstractVariationalGP):
    def __init__(self, z):
        d=gpytorch.variational.CholeskyVariationalDistribution(z.size(0))
        s=gpytorch.variational.VariationalStrategy(self,z,d,learn_inducing_locations=True)
        super().__init__(s)
        self.mean_module=gpytorch.means.ConstantMean(); self.covar_module=gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())
    def forward(self,x):
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x),self.covar_module(x))
torch.manual_seed(0)
m=M(torch.rand(5,1))
lik=gpytorch.likelihoods.GaussianLikelihood()
X=torch.rand(20,1); Y=torch.sin(6*X).squeeze()
mll=gpytorch.mlls.VariationalELBO(lik,m,num_data=20)
opt=torch.optim.Adam(list(m.parameters())+list(lik.parameters()),lr=0.05)
m.train()
for i in range(3):
    opt.zero_grad(); (-mll(m(X),Y)).backward(); opt.step()
print('train ok')
m.eval()
with gpytorch.settings.skip_posterior_variances(True):
    for i in range(2):
        x=torch.rand(3,1,requires_grad=True)
        try:
            m(x).mean.sum().backward(); print('eval step',i,'ok')
        except RuntimeError as e: print('eval step',i,'RuntimeError',str(e)[:90])
