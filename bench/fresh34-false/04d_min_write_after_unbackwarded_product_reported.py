import torch


def mask_step(x, idx):
    x_new = x.clone().detach().requires_grad_(True)
    mask_all = torch.where(x_new > 0, torch.zeros(x.shape), torch.ones(x.shape))
    after = x_new * mask_all
    mask_all[idx, :] = 1
    return x * mask_all, after.sum().item()


if __name__ == "__main__":
    w = torch.randn(4, 3, requires_grad=True)
    out = mask_step(w * 2, torch.tensor([0, 2]))
    out = out[0] if isinstance(out, tuple) else out
    out.sum().backward()
    print("runs: the product that saved mask_all is never backwarded; the returned one is")
