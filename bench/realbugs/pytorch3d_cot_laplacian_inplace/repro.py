"""Reproduction for `pytorch3d_cot_laplacian_inplace`: facebookresearch/pytorch3d 3b5ab51d (Fix backprop through cot_laplacian).

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
"""

import warnings

import torch

warnings.filterwarnings("ignore")


def cot_laplacian(verts, faces, fixed, eps=1e-12):
    V, F = verts.shape[0], faces.shape[0]
    face_verts = verts[faces]
    v0, v1, v2 = face_verts[:, 0], face_verts[:, 1], face_verts[:, 2]
    A = (v1 - v2).norm(dim=1)
    B = (v0 - v2).norm(dim=1)
    C = (v0 - v1).norm(dim=1)
    s = 0.5 * (A + B + C)
    area = (s * (s - A) * (s - B) * (s - C)).clamp(min=eps).sqrt()
    A2, B2, C2 = A * A, B * B, C * C
    cot = torch.stack([(B2 + C2 - A2) / area, (A2 + C2 - B2) / area, (A2 + B2 - C2) / area], dim=1) / 4.0
    ii = faces[:, [1, 2, 0]]
    jj = faces[:, [2, 0, 1]]
    idx = torch.stack([ii, jj], dim=0).view(2, F * 3)
    L = torch.sparse_coo_tensor(idx, cot.view(-1), (V, V), dtype=torch.float32)
    if fixed:
        L = L + L.t()
    else:
        L += L.t()                      # buggy
    return L


verts = torch.randn(5, 3, requires_grad=True)
faces = torch.tensor([[0, 1, 2], [1, 2, 3], [2, 3, 4]])
try:
    torch.sparse.sum(cot_laplacian(verts, faces, False)).backward()
    raise SystemExit("buggy form did not raise")
except RuntimeError as e:
    assert "modified by an inplace operation" in str(e), e
torch.sparse.sum(cot_laplacian(verts, faces, True)).backward()
assert verts.grad is not None
print("CONFIRMED")
