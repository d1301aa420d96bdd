"""In-place writes into tensors a function made itself, read from its text (for `interp_util._graph_homes`).

`_graph_homes` gives up on a function that writes in place into anything but `self` or a `torch.*` temporary: such a
write may graft the function's graph into a tensor the caller holds (an argument, an alias of one) without the
tensor's graph segments showing it. A write into a tensor the function itself made out of place (`x = x / t`,
`tmp = torch.empty_like(x)`), while no other name, container or view refers to it, grafts the graph into that local
only: the graph outlives the call only through values computed from the local, which the exit state shows.
"""
from __future__ import annotations

import ast

from .astwalk import walk

# Methods and torch functions whose result may share the receiver's (first argument's) storage or autograd history:
# views, and conversions that hand back the tensor itself when nothing changes.
_ALIASING = frozenset((
    "view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "squeeze", "unsqueeze", "transpose",
    "permute", "t", "T", "mT", "H", "mH", "narrow", "select", "expand", "expand_as", "as_strided", "diagonal",
    "movedim", "moveaxis", "swapaxes", "swapdims", "unbind", "split", "chunk", "tensor_split", "hsplit", "vsplit",
    "detach", "real", "imag", "view_as_real", "view_as_complex", "unfold", "to", "float", "double", "half",
    "bfloat16", "int", "long", "bool", "cuda", "cpu", "contiguous", "type", "type_as", "requires_grad_", "as_tensor",
    "from_numpy", "asarray", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_to", "broadcast_tensors",
    "align_to", "rename", "refine_names", "data", "numpy", "storage", "untyped_storage", "set_", "share_memory_",
    "pin_memory", "coalesce", "values", "indices", "crow_indices", "col_indices", "dropout", "dropout1d",
    "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout", "identity",
))
# Out-of-place tensor methods whose result is a new tensor.
_NEW_METHODS = frozenset((
    "clone", "add", "sub", "mul", "div", "pow", "exp", "log", "sqrt", "abs", "neg", "sigmoid", "tanh", "softmax",
    "log_softmax", "scatter", "scatter_add", "masked_fill", "index_fill", "gather", "sum", "mean", "cumsum",
    "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor", "zeros_like", "ones_like",
))
_TORCH_ROOTS = ("torch", "F")


def _root(node: ast.AST):
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _torch_call(node: ast.AST) -> bool:
    """A call of a `torch.*` / `F.*` function that makes a new tensor (not a view or an as-is conversion)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _root(node.func) in _TORCH_ROOTS \
        and isinstance(node.func.value, (ast.Name, ast.Attribute)) and node.func.attr not in _ALIASING


def _makes_new(value: ast.AST) -> bool:
    """Whether the expression certainly evaluates to a tensor (or other value) no other reference holds."""
    if isinstance(value, (ast.BinOp, ast.UnaryOp)):
        return True
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return False
    if any(kw.arg == "inplace" for kw in value.keywords):
        return False  # `F.relu(x, inplace=True)` returns `x`
    if _torch_call(value):
        return True
    return value.func.attr in _NEW_METHODS


def _aliasing_read(node: ast.Name, parent: ast.AST, stmt: ast.AST) -> bool:
    """Whether this read of a name may make another reference to its tensor (a view, the tensor itself stored or
    handed somewhere), rather than reading values out of it."""
    if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.FormattedValue)):
        return False
    if isinstance(parent, ast.Attribute):
        if parent.attr in _ALIASING:
            return True
        if parent.attr.endswith("_") and not parent.attr.endswith("__"):
            # An in-place method returns its receiver: only a bare statement drops that reference.
            return not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and stmt.value.func is parent)
        return False
    if isinstance(parent, ast.Call) and node is not parent.func:
        if _torch_call(parent):
            return False
        return not (isinstance(parent.func, ast.Name) and parent.func.id in ("len", "int", "float", "bool", "print"))
    return True


class _Scan:
    def __init__(self):
        self.ok: set = set()  # ids of in-place calls and subscript stores whose receiver is a fresh local
        self.never: frozenset = frozenset()  # names never fresh: closures' references, names nothing writes into
        self.parents: dict = {}

    def block(self, body: list, fresh: frozenset) -> frozenset:
        for stmt in body:
            fresh = self.stmt(stmt, fresh)
        return fresh

    def stmt(self, stmt: ast.AST, fresh: frozenset) -> frozenset:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return fresh - {n.id for n in walk(stmt) if isinstance(n, ast.Name)}
        if isinstance(stmt, ast.If):
            fresh = self.reads(stmt.test, stmt, fresh)
            return self.block(stmt.body, fresh) & self.block(stmt.orelse, fresh)
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            head = stmt.iter if isinstance(stmt, (ast.For, ast.AsyncFor)) else stmt.test
            fresh = _minus_stored(self.reads(head, stmt, fresh), stmt)
            noted = set(self.ok)
            while True:
                # Again until what is fresh at the head of an iteration is fresh at its end too: a reference
                # taken late in one iteration (`kept.append(x)`) is there when the next one writes into `x`.
                self.ok = set(noted)
                after = fresh & self.block(stmt.body, fresh)
                if after == fresh:
                    break
                fresh = after
            self.block(stmt.orelse, fresh)
            return fresh
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                fresh = self.reads(item.context_expr, stmt, fresh)
                if item.optional_vars is not None:
                    fresh -= _stored(item.optional_vars)
            return self.block(stmt.body, fresh)
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            rest = _minus_stored(fresh, stmt)
            self.block(stmt.body, fresh)
            for handler in stmt.handlers:
                self.block(handler.body, rest)
            self.block(stmt.orelse, rest)
            self.block(stmt.finalbody, rest)
            return rest
        if any(isinstance(getattr(stmt, f, None), list) for f in ("body", "orelse", "cases")):
            return _minus_stored(fresh, stmt)  # another compound statement (`match`): nothing in it is noted
        # A simple statement: its reads first (in-place calls on fresh locals are noted there), then its stores.
        value = getattr(stmt, "value", None)
        fresh = self.reads(stmt, stmt, fresh)
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                base = target
                while isinstance(base, ast.Subscript):
                    base = base.value
                if base is not target and isinstance(base, ast.Name) and base.id in fresh:
                    self.ok.add(id(target))  # `x[i] = v` into a fresh local
            names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
            if fresh:
                fresh -= _stored(stmt) - set(names)
            if len(stmt.targets) == 1 and names and _makes_new(value) and names[0] not in self.never:
                return fresh | {names[0]}
            return fresh - set(names)
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            return fresh  # `x += y` writes into the fresh tensor itself (or rebinds a number)
        return _minus_stored(fresh, stmt)

    def reads(self, node: ast.AST, stmt: ast.AST, fresh: frozenset) -> frozenset:
        """Drops the fresh names `node` reads in an aliasing way; notes in-place calls on fresh locals."""
        if not fresh:
            return fresh
        parents = self.parents
        dropped = set()
        for n in walk(node):
            if type(n) is ast.Name and n.id in fresh and type(n.ctx) is ast.Load:
                parent = parents.get(n)
                if isinstance(parent, ast.Subscript) and parent.value is n and isinstance(parent.ctx, ast.Store):
                    continue  # `x[i] = v`: a write into it, not a reference to it
                if isinstance(parent, ast.Attribute) and parent.attr.endswith("_") \
                        and not parent.attr.endswith("__") and isinstance(parents.get(parent), ast.Call) \
                        and parents[parent].func is parent and not _aliasing_read(n, parent, stmt):
                    self.ok.add(id(parents[parent]))
                    continue
                if _aliasing_read(n, parent, stmt):
                    dropped.add(n.id)
        return fresh - dropped if dropped else fresh


def _minus_stored(fresh: frozenset, node: ast.AST) -> frozenset:
    return fresh - _stored(node) if fresh else fresh


def _stored(node: ast.AST) -> frozenset:
    return frozenset(n.id for n in walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))


def fresh_writes(fn: ast.AST) -> frozenset:
    """Ids of the in-place method calls and subscript-store targets in `fn` that write into a tensor `fn` made out of
    place on every path to the write, while no other reference to it can exist (no view, alias, container or
    closure took it). Its parameters are never fresh until rebound so."""
    nodes = walk(fn)
    # Only a name that an in-place method or an item store writes into matters; none: nothing to note.
    targets = {r.id for n in nodes for r in _written_roots(n)}
    # `torch.empty_like(x).fill_(v)`: into what the receiver just made.
    made = [id(n) for n in nodes if type(n) is ast.Call and type(n.func) is ast.Attribute
            and n.func.attr.endswith("_") and not n.func.attr.endswith("__") and _makes_new(n.func.value)]
    if not targets:
        return frozenset(made)
    scan = _Scan()
    scan.ok.update(made)
    scan.parents = {c: n for n in nodes for c in ast.iter_child_nodes(n)}
    closures = set()
    for inner in nodes:
        if inner is fn or not isinstance(inner, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        # A nested function holding a reference may hand it out (its body's reads, seen from inside it).
        closures |= {n.id for n in walk(inner) if isinstance(n, ast.Name)
                     and (not isinstance(n.ctx, ast.Load) or _aliasing_read(n, scan.parents.get(n), None))}
    scan.never = frozenset(closures) | frozenset(n.id for n in nodes if type(n) is ast.Name) - targets
    scan.block(fn.body, frozenset())
    return frozenset(scan.ok)


def _written_roots(n: ast.AST) -> list:
    """The name an in-place method call (`x.add_(y)`) or an item store (`x[i] = v`) writes into."""
    if type(n) is ast.Call and type(n.func) is ast.Attribute and n.func.attr.endswith("_") \
            and not n.func.attr.endswith("__") and type(n.func.value) is ast.Name:
        return [n.func.value]
    if type(n) is ast.Subscript and type(n.ctx) is ast.Store:
        base = n.value
        while type(base) is ast.Subscript:
            base = base.value
        return [base] if type(base) is ast.Name else []
    return []
