"""fresh29 real: wgrathwohl/GWG_release samplers_old.py:75 (GS302).

`BinaryRelaxedModel.hmc_step(x, ...)` with the default `accept_dist="target"` calls `get_ebm_samples(...,
x.detach().requires_grad_(), ...)` (line 510); svgd_sample.py:172 calls it so. `get_ebm_samples` sets `current_x =
x_init` and, after each HMC proposal, writes the accepted rows in place: `current_x[ind, :] = x[ind, :]` (line 75),
inside `try: ... except: print('Samples were all rejected...skipping'); continue`. `current_x` is a leaf that
requires grad, so the write raises "a leaf Variable that requires grad is being used in an in-place operation"; the
bare `except` swallows it and `continue` skips the rest of the step, so no proposal is ever accepted, the step size
never adapts, and `samples` (filled only after the try) stays all zeros. Run below with the function's real
statements (a Gaussian energy stands in for the relaxed RBM): every step takes the except branch and the returned
samples are zeros; the same call with `x.detach()` (no requires_grad) accepts moves and returns non-zero samples.
"""
import torch


def _ebm_helper(netEBM, x):
    x = x.clone().detach().requires_grad_(True)
    E_x = netEBM(x)
    logjoint_vect = E_x.squeeze()
    logjoint = torch.sum(logjoint_vect)
    logjoint.backward()
    grad_logjoint = x.grad
    return logjoint_vect, logjoint, grad_logjoint


SKIPS = []


def get_ebm_samples(netEBM, x_init, burn_in, num_samples_posterior, leapfrog_steps, stepsize,
                    flag_adapt=1, hmc_learning_rate=.02, hmc_opt_accept=.67, acceptEBM=None):
    if type(stepsize) != float:
        assert flag_adapt == 0
        stepsize = stepsize[:, None]
    device = x_init.device
    bsz, x_size = x_init.size(0), x_init.size()[1:]
    n_steps = burn_in + num_samples_posterior
    acceptHist = torch.zeros(bsz, n_steps).to(device)
    samples = torch.zeros(bsz * num_samples_posterior, *x_size).to(device)
    current_x = x_init
    cnt = 0
    for i in range(n_steps):
        x = current_x
        p = torch.randn_like(current_x)
        current_p = p
        logjoint_vect, logjoint, grad_logjoint = _ebm_helper(netEBM, current_x)
        current_U = -logjoint_vect.view(-1, 1)
        if acceptEBM is None:
            current_U_A = current_U
        else:
            logjoint_vect_A, _, _ = _ebm_helper(acceptEBM, current_x)
            current_U_A = -logjoint_vect_A.view(-1, 1)
        grad_U = -grad_logjoint
        p = p - stepsize * grad_U / 2.0
        for j in range(leapfrog_steps):
            x = x + stepsize * p
            if j < leapfrog_steps - 1:
                logjoint_vect, logjoint, grad_logjoint = _ebm_helper(netEBM, x)
                grad_U = -grad_logjoint
                p = p - stepsize * grad_U
        logjoint_vect, logjoint, grad_logjoint = _ebm_helper(netEBM, x)
        proposed_U = -logjoint_vect.view(-1, 1)
        if acceptEBM is None:
            proposed_U_A = proposed_U
        else:
            logjoint_vect_A, _, _ = _ebm_helper(acceptEBM, x)
            proposed_U_A = -logjoint_vect_A.view(-1, 1)
        grad_U = -grad_logjoint
        p = p - stepsize * grad_U / 2.0
        p = -p
        current_K = 0.5 * (current_p ** 2).flatten(start_dim=1).sum(dim=1).view(-1, 1)
        proposed_K = 0.5 * (p ** 2).flatten(start_dim=1).sum(dim=1).view(-1, 1)
        unif = torch.rand(bsz).view(-1, 1).to(device)
        accept = unif.lt(torch.exp(current_U_A - proposed_U_A + current_K - proposed_K))
        accept = accept.float().squeeze()
        acceptHist[:, i] = accept
        ind = accept.nonzero().squeeze()
        try:
            len(ind) > 0
            current_x[ind, :] = x[ind, :]                       # line 75
            current_U[ind] = proposed_U[ind]
        except Exception as e:                                  # the file's bare `except:`
            SKIPS.append(str(e))
            continue
        if i < burn_in and flag_adapt == 1:
            stepsize = stepsize + hmc_learning_rate * (accept.float().mean() - hmc_opt_accept) * stepsize
        elif i >= burn_in:
            samples[cnt * bsz: (cnt + 1) * bsz, :] = current_x
            cnt += 1
    return samples, acceptHist.mean(dim=1), stepsize


energy = lambda x: -(x ** 2).sum(-1) / 2          # log-density of a standard Gaussian
torch.manual_seed(0)
x0 = torch.randn(16, 5)

# hmc_step's default path (accept_dist="target"): x.detach().requires_grad_()
samples, ar, ss = get_ebm_samples(energy, x0.detach().requires_grad_(), 20, 1, 5, 0.1, acceptEBM=energy)
print("requires_grad leaf: steps skipped", len(SKIPS), "of 21; first error:", SKIPS[0][:80])
print("  acceptance rate (computed before the write):", round(ar.mean().item(), 2), "| samples all zero:",
      bool((samples == 0).all()), "| step size adapted:", ss != 0.1)
assert len(SKIPS) == 21 and "leaf Variable" in SKIPS[0]
assert bool((samples == 0).all()) and ss == 0.1

SKIPS.clear()
torch.manual_seed(0)
samples, ar, ss = get_ebm_samples(energy, x0.detach().clone(), 20, 1, 5, 0.1, acceptEBM=energy)
print("plain tensor: steps skipped", len(SKIPS), "| samples all zero:", bool((samples == 0).all()))
assert len(SKIPS) == 0 and not bool((samples == 0).all())
