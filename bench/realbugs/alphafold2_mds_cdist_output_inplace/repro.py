"""Reproduction for `alphafold2_mds_cdist_output_inplace`: lucidrains/alphafold2 8d5e9487 (solve inplace. sorry for masked_fills).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import numpy as np
import torch

torch.manual_seed(0)


def mds_torch(pre_dist_mat, fixed, iters=3):        # the loop of alphafold2_pytorch/utils.py's mds_torch
    weights = torch.ones_like(pre_dist_mat)
    batch, N, _ = pre_dist_mat.shape
    diag_idxs = np.arange(N)
    his = []
    best_3d_coords = 2 * torch.rand(batch, N, 3) - 1
    for i in range(iters):
        if fixed:
            dist_mat = torch.cdist(best_3d_coords, best_3d_coords, p=2).clone()
        else:
            dist_mat = torch.cdist(best_3d_coords, best_3d_coords, p=2)
        stress = (weights * (dist_mat - pre_dist_mat) ** 2).sum(dim=(-1, -2)) * 0.5
        if fixed:
            dist_mat[dist_mat == 0] = 1e-7
        else:
            dist_mat[dist_mat == 0] += 1e-7             # buggy: cdist saved its result
        ratio = weights * (pre_dist_mat / dist_mat)
        B = -ratio
        B[:, diag_idxs, diag_idxs] += ratio.sum(dim=-1)
        coords = (1. / N * torch.matmul(B, best_3d_coords))
        dis = torch.norm(coords, dim=(-1, -2))
        best_3d_coords = coords
        his.append(stress / dis)
    return torch.transpose(best_3d_coords, -1, -2), torch.cat(his)


logits = torch.randn(1, 6, 6, requires_grad=True)
pre = torch.nn.functional.softplus(logits + logits.transpose(-1, -2))     # a predicted distance matrix
try:
    coords, _ = mds_torch(pre, False)
    coords.pow(2).sum().backward()
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "inplace operation" in str(e), e
coords, _ = mds_torch(pre, True)
coords.pow(2).sum().backward()
print("CONFIRMED")
