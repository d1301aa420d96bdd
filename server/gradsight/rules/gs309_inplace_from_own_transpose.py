from __future__ import annotations

import ast

from ..engine.events import InplaceEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid

# In-place ops whose first operand is read while the target is written.
_OPS = frozenset({"__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__ipow__", "add_", "sub_",
                  "mul_", "div_", "copy_", "pow_", "maximum_", "minimum_", "addcmul_", "addcdiv_", "lerp_"})
# Methods and attributes that return a view of the same memory with the elements in another order.
_REORDERING_METHODS = frozenset({"t", "transpose", "permute", "swapaxes", "swapdims", "movedim", "moveaxis"})
_REORDERING_ATTRS = frozenset({"T", "mT", "H", "mH"})


_SPELLING = {"__iadd__": "+", "add_": "+", "__isub__": "-", "sub_": "-", "__imul__": "*", "mul_": "*",
             "__itruediv__": "/", "div_": "/"}


def _reordered_base(node: ast.AST):
    """`x` of `x.t()`, `x.transpose(0, 1)`, `x.permute(1, 0)`, `x.T`, `x.mT`; else None."""
    if isinstance(node, ast.Attribute) and node.attr in _REORDERING_ATTRS:
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _REORDERING_METHODS:
        return node.func.value
    return None


def _operand(stmt: ast.AST):
    if isinstance(stmt, ast.AugAssign):
        return stmt.target, stmt.value
    if isinstance(stmt, ast.Call) and isinstance(stmt.func, ast.Attribute) and stmt.args:
        return stmt.func.value, stmt.args[0]
    return None, None


class InplaceFromOwnTranspose(Rule):
    code = "GS309"
    name = "inplace-from-own-transpose"
    severity = Severity.WARNING
    summary = "`x += x.t()` writes into a tensor while reading its own transposed view: PyTorch raises on the overlap."
    events = (InplaceEvent,)
    what_it_does = ("Flags an in-place op on a tensor (`x += ...`, `x.add_(...)`, `x.copy_(...)`) whose operand is a "
                    "reordering view of that same tensor: `x.t()`, `x.T`, `x.mT`, `x.transpose(...)`, "
                    "`x.permute(...)`, `x.swapaxes(...)`. The usual shape is symmetrising a matrix in place "
                    "(`L += L.t()`). A one-dimensional tensor, whose `.t()` is itself, is not flagged.")
    why_bad = ("The written elements and the read ones share memory in another order, so each write changes what a "
               "later read sees. For a strided (dense) tensor PyTorch refuses at once: `RuntimeError: unsupported "
               "operation: some elements of the input tensor and the written-to tensor refer to a single memory "
               "location. Please clone() the tensor before performing the operation.` A sparse tensor that requires "
               "grad is modified after its transpose saved it, so the backward raises `one of the variables needed "
               "for gradient computation has been modified by an inplace operation`.")
    example = "L = torch.zeros(3, 3)\nL[0, 1] = 1.0\nL += L.t()"
    use_instead = "L = torch.zeros(3, 3)\nL[0, 1] = 1.0\nL = L + L.t()"
    fix_safety = "There is no automatic fix: write the sum out of place (`L = L + L.t()`)."
    references = ("https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd",)
    valid = (
        Valid("import torch\nL = torch.zeros(3, 3)\nL[0, 1] = 1.0\nL = L + L.t()\n"),
        # The transpose of another tensor, or a copy of the transpose.
        Valid("import torch\nA = torch.ones(3, 3)\nB = torch.eye(3)\nA += B.t()\nA += A.t().clone()\n"),
        # A one-dimensional tensor's `.t()` is the tensor itself: the overlap is exact and allowed.
        Valid("import torch\nv = torch.ones(4)\nv += v.t()\n"),
        # A sparse matrix of unknown values symmetrised out of place.
        Valid("import torch\n\n\ndef laplacian(verts, faces):\n    w = verts[faces[:, 0], 0] * 2\n"
              "    idx = torch.stack([faces[:, 0], faces[:, 1]])\n    L = torch.sparse_coo_tensor(idx, w, (3, 3))\n"
              "    L = L + L.t()\n    return L\n\n\nv = torch.randn(3, 3, requires_grad=True)\n"
              "torch.sparse.sum(laplacian(v, torch.tensor([[0, 1], [1, 2]]))).backward()\n"),
        # NumPy arrays copy overlapping operands themselves.
        Valid("import numpy as np\nd = np.ones((3, 3))\nd += d.T\n"),
    )
    invalid = (
        # DeepRobust's likelihood-ratio filter: a mask made symmetric in place.
        Invalid("import torch\n\n\ndef filter_mask(n, edges, undirected=True):\n    allowed_mask = torch.zeros(n, n)\n"
                "    allowed_mask[edges.T] = 1\n    if undirected:\n        allowed_mask += allowed_mask.t()\n"
                "    return allowed_mask\n\n\nfilter_mask(4, torch.tensor([[0, 1], [2, 3]]))\n",
                line=8, runtime="raises: refer to a single memory location"),
        # pytorch3d's cotangent Laplacian: a sparse matrix built from values that require grad.
        Invalid("import torch\n\n\ndef laplacian(verts):\n    idx = torch.tensor([[0, 1], [1, 2]])\n"
                "    w = verts[:2, 0] * 2\n    L = torch.sparse_coo_tensor(idx, w, (3, 3))\n    L += L.t()\n"
                "    return L\n\n\nv = torch.randn(3, 3, requires_grad=True)\n"
                "torch.sparse.sum(laplacian(v)).backward()\n",
                line=8, runtime="raises: modified by an inplace operation"),
        # The same with every input a parameter of the function (analysed with unknown arguments): a sparse
        # constructor's result is a tensor whatever its values are.
        Invalid("import torch\n\n\ndef laplacian(verts, faces):\n    w = verts[faces[:, 0], 0] * 2\n"
                "    idx = torch.stack([faces[:, 0], faces[:, 1]])\n    L = torch.sparse_coo_tensor(idx, w, (3, 3))\n"
                "    L += L.t()\n    return L\n\n\nv = torch.randn(3, 3, requires_grad=True)\n"
                "torch.sparse.sum(laplacian(v, torch.tensor([[0, 1], [1, 2]]))).backward()\n",
                line=8, runtime="raises: modified by an inplace operation"),
        Invalid("import torch\nS = torch.randn(2, 3, 3)\nS.add_(S.transpose(1, 2))\n",
                line=3, runtime="raises: refer to a single memory location"),
    )

    def check(self, event: InplaceEvent, report) -> None:
        if event.op not in _OPS:
            return
        target, operand = _operand(event.node)
        base = _reordered_base(operand) if operand is not None else None
        if base is None or ast.unparse(base) != ast.unparse(target):
            return
        shape = event.target.shape
        if shape is not None and len(shape) < 2:
            return
        report.add(self, event.node,
                   f"`{ast.unparse(operand)}` is a view of the tensor this writes into, so the in-place op raises. "
                   f"Write it out of place: `{event.expr} = {event.expr} {_SPELLING.get(event.op, '+')} ...`.")
