from __future__ import annotations

import ast

from ..engine.report import text as join
from ..engine.events import OptimizerEvent
from ..engine.report import Note, edit_for, make_fix
from ..engine.values import Tri
from ..findings import Applicability, Severity
from ._fixes import cst
from .base import Invalid, Rule, Valid

_DTYPE_METHODS = {"double": "torch.float64", "half": "torch.float16", "float": "torch.float32",
                  "bfloat16": "torch.bfloat16"}


def _creation_on_device(source, tree, line: int):
    """`torch.randn(..., requires_grad=True).to(dev, dtype=...)` -> `torch.randn(..., device=dev, dtype=..., requires_grad=True)`."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.lineno == line and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("to", "cuda", "double", "half", "float", "bfloat16")
                and isinstance(node.func.value, ast.Call)):
            continue
        inner = node.func.value
        if not any(kw.arg == "requires_grad" for kw in inner.keywords):
            continue
        try:
            outer = cst.parse_expression(source.segment(node))
        except cst.ParserSyntaxError:
            return None
        inner_cst = outer.func.value
        moved: list[cst.Arg] = []
        method = node.func.attr
        if method == "cuda":
            moved.append(cst.Arg(keyword=cst.Name("device"), value=cst.SimpleString('"cuda"')))
        elif method in _DTYPE_METHODS:
            moved.append(cst.Arg(keyword=cst.Name("dtype"), value=cst.parse_expression(_DTYPE_METHODS[method])))
        else:
            for arg in outer.args:
                if arg.keyword is not None:
                    if arg.keyword.value in ("device", "dtype"):
                        moved.append(arg.with_changes(equal=cst.AssignEqual(
                            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))))
                    continue
                code = cst.Module([]).code_for_node(arg.value)
                kw = "dtype" if code.startswith("torch.") and ("float" in code or "int" in code or "double" in code
                                                               or "half" in code or "bool" in code) else "device"
                moved.append(cst.Arg(keyword=cst.Name(kw), value=arg.value,
                                     equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                           whitespace_after=cst.SimpleWhitespace(""))))
        args = [a for a in inner_cst.args if not (a.keyword and a.keyword.value == "requires_grad")]
        rg = [a for a in inner_cst.args if a.keyword and a.keyword.value == "requires_grad"]
        new_args = []
        for a in args + moved + rg:
            new_args.append(a.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        new = inner_cst.with_changes(args=new_args)
        return edit_for(source, node, cst.Module([]).code_for_node(new))
    return None


class NonLeafOptimizerParam(Rule):
    code = "GS501"
    name = "nonleaf-optimizer-param"
    severity = Severity.ERROR
    summary = "Optimizers take leaf tensors; a tensor computed from a leaf (e.g. by `.to(device)`) is rejected."
    events = (OptimizerEvent,)
    what_it_does = ("Flags tensors handed to a `torch.optim` optimizer that are the result of an operation on a "
                    "tensor that requires grad: `torch.randn(..., requires_grad=True).to(device)`, `.cuda()`, "
                    "`.double()`, `w * 0.01`.")
    why_bad = ("PyTorch raises `ValueError: can't optimize a non-leaf Tensor`. The `.to()` copy has a grad_fn; "
               "the leaf that would receive gradients is the temporary before the copy, which nothing keeps. "
               "(`.to(device)` returns the same tensor when nothing changes, so the error can appear only on "
               "the GPU machine.)")
    example = "w = torch.randn(3, 1, requires_grad=True).to(device)\nopt = torch.optim.SGD([w], lr=0.01)"
    use_instead = "w = torch.randn(3, 1, device=device, requires_grad=True)\nopt = torch.optim.SGD([w], lr=0.01)"
    fix_safety = ("Unsafe: creating the tensor directly on the device (or in the dtype) gives a leaf as "
                  "intended, but random values drawn on a GPU differ from values drawn on the CPU and copied, so "
                  "seeded runs change.")
    references = ("https://pytorch.org/docs/stable/notes/autograd.html",
                  "https://pytorch.org/docs/stable/optim.html")
    valid = (
        Valid("import torch\nw = torch.randn(3, 1, dtype=torch.float64, requires_grad=True)\n"
              "opt = torch.optim.SGD([w], lr=0.01)\n"),
        Valid("import torch\nw = torch.randn(3, 1).double().requires_grad_()\nopt = torch.optim.SGD([w], lr=0.01)\n"),
    )
    invalid = (
        Invalid("import torch\nw = torch.randn(3, 1, requires_grad=True).to(\"cpu\", dtype=torch.float64)\n"
                "opt = torch.optim.SGD([w], lr=0.01)\n", line=2, runtime="raises: can't optimize a non-leaf Tensor",
                fixed="import torch\nw = torch.randn(3, 1, device=\"cpu\", dtype=torch.float64, requires_grad=True)\n"
                      "opt = torch.optim.SGD([w], lr=0.01)\n"),
        Invalid("import torch\nw = torch.randn(3, requires_grad=True)\nscaled = w * 0.01\n"
                "opt = torch.optim.Adam([scaled], lr=0.01)\n", line=3, runtime="raises: can't optimize a non-leaf Tensor"),
    )

    def check(self, event: OptimizerEvent, report) -> None:
        for node, t in event.params:
            if t.rg is not Tri.YES or t.leaf is Tri.YES:
                continue
            sure = t.leaf is Tri.NO
            if not sure and t.evidence:
                # Known to require grad from use only (`f(x).requires_grad_(True)` on a result gradsight cannot see):
                # whether it is a leaf is simply unknown, which says nothing about a `.to()` copy.
                continue
            fix = None
            if t.origin is not None and t.origin.path is None and report.tree is not None:
                edit = _creation_on_device(report.source, report.tree, t.origin.line)
                if edit is not None:
                    fix = make_fix("Create the tensor on the device/dtype with requires_grad=True",
                                   Applicability.UNSAFE, edit)
            expr = report.source.segment(node)
            here = report.source.span(node)
            moved = t.origin is not None and t.origin.path is None and isinstance(t.origin.line, int) \
                and t.origin.line != here[0] and 1 <= t.origin.line <= len(report.source.lines)
            span = None
            related = [t.origin]
            if moved:
                # The statement to change is where the tensor was made (`requires_grad_(True).to(device)`); the
                # optimizer's line, which raises, is the related note.
                text = report.source.line_text(t.origin.line)
                start = len(text) - len(text.lstrip()) + 1
                span = (t.origin.line, start, t.origin.line, len(text.rstrip()) + 1)
                related = [Note(here[0], here[1], "the optimizer raises here")]
                opt = join(" (line ", here[0], ")")
                if sure:
                    msg = join(f"This makes `{expr}` a non-leaf, so the optimizer{opt} raises. It is computed from a "
                               "tensor that requires grad; PyTorch says \"can't optimize a non-leaf Tensor\".")
                else:
                    msg = join(f"This may make `{expr}` a non-leaf: `.to()` returns a copy with history whenever the "
                               f"device or dtype changes (e.g. on a GPU), and then the optimizer{opt} raises "
                               "\"can't optimize a non-leaf Tensor\".")
            else:
                where = join(f" ({t.origin.text}, line ", t.origin.line, ")") if t.origin else ""
                if sure:
                    msg = join(f"`{expr}` is not a leaf, so the optimizer raises. It was computed from a tensor that "
                               "requires grad", where, "; PyTorch says \"can't optimize a non-leaf Tensor\".")
                else:
                    msg = join(f"`{expr}` may not be a leaf", where, ": `.to()` returns a copy with history whenever "
                               "the device or dtype changes (e.g. on a GPU), and then the optimizer raises \"can't "
                               "optimize a non-leaf Tensor\".")
            report.add(self, node, msg, severity=Severity.ERROR if sure else Severity.WARNING,
                       related=related, fix=fix, span=span)
