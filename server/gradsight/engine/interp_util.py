"""Helpers of the abstract interpreter: limits, the scope of a file, reference keys, and pure functions over the
syntax and over abstract values."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

from .astwalk import children, sub_blocks, walk
from .fresh_locals import fresh_writes
from .guarded_reads import binding_layout, note_chain, reads_after_binding
from .loop_counts import SHAPE_QUERIES, same_count
from . import torchdb as db
from .report import Source, text
from .state import State
from .values import (UNKNOWN, ClassInfo, Fact, FuncVal, ModuleVal, ObjectVal, ParamsVal, PyVal, SeqVal, TensorVal,
                     Tri, Value)


MAX_LOOP_ITERS = 4
MAX_LOOP_NESTING = 4  # loops nested deeper than this run once, from a widened state (see `Interpreter.loop`)
MAX_CALL_DEPTH = 6
MAX_FACTS = 20000
MAX_PCUT = 16


@dataclass
class LoopCtx:
    node: ast.AST
    entry_keys: frozenset
    has_backward: Optional[int]
    breaks: list = field(default_factory=list)
    continues: list = field(default_factory=list)
    lasts: list = field(default_factory=list)  # the last iteration's end states (`split_last`): they leave the loop
    first: Optional[State] = None  # the first iteration's top state, where `split_first` needs it


@dataclass
class ModuleScope:
    """One analysed file: its imports, top-level functions and classes."""

    path: str
    tree: ast.Module
    source: Source
    imports: dict = field(default_factory=dict)  # local name -> qualified name
    functions: dict = field(default_factory=dict)  # name -> FuncVal
    classes: dict = field(default_factory=dict)  # name -> ClassInfo
    env: dict = field(default_factory=dict)  # module-level values (as last seen)
    import_records: tuple = ()  # ("import" | "from", module, level, names) per import statement
    package: str = ""
    star_imports: tuple = ()  # `from pkg.mod import *`: the module names (with leading dots when relative)


def _has_backward(node: ast.AST, nodes: Optional[list] = None) -> Optional[int]:
    """The line of the first backward under `node`. A call with `create_graph=True` does not count: it keeps the
    graph (retain_graph defaults to create_graph) and builds one to be differentiated later, the unrolled inner loop
    of meta-learning or of an equilibrium layer, whose per-step graphs are kept on purpose. `nodes`: `walk(node)`,
    where the caller has it (`Interpreter.nodes`)."""
    for sub in (walk(node) if nodes is None else nodes):
        if isinstance(sub, ast.Call):
            if any(kw.arg == "create_graph" and isinstance(kw.value, ast.Constant) and kw.value.value is True
                   for kw in sub.keywords):
                continue
            f = sub.func
            if isinstance(f, ast.Attribute) and f.attr in ("backward", "grad", "manual_backward") and not (
                    isinstance(f.value, ast.Name) and f.attr == "grad" and f.value.id not in ("autograd",)):
                return sub.lineno
            if isinstance(f, ast.Name) and f.id == "backward" and sub.args:  # `from torch.autograd import backward`
                return sub.lineno
    return None


def _const_key(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)) and not isinstance(node.value, bool):
        return repr(node.value)
    return None


def key_of(node: ast.AST) -> Optional[str]:
    """Reference key for a Name / Attribute chain / constant subscript, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = key_of(node.value)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Subscript):
        base = key_of(node.value)
        k = _const_key(node.slice)
        return f"{base}[{k}]" if base and k else None
    return None


def kwarg(call: ast.Call, name: str) -> Optional[ast.expr]:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def const_bool(node: Optional[ast.AST]) -> Optional[bool]:
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return node.value
    return None


_OP_NAMESPACES = ("torch.nn.functional.", "torch.linalg.", "torch.special.", "torch.fft.")


def string_compare(op: ast.cmpop, val, right: ast.AST) -> Optional[bool]:
    """`mode == "train"`, `mode != "valid"`, `phase in ("train", "finetune")` where `val`, the compared value, is
    surely one string (`PyVal.string`: a constant, or one a call passed): the outcome. Else None (a string the
    engine does not know exactly may be anything)."""
    known = getattr(val, "string", None)
    if known is None:
        return None
    if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(right, ast.Constant) and isinstance(right.value, str):
        equal = known == right.value
        return equal if isinstance(op, ast.Eq) else not equal
    if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)) and right.elts \
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in right.elts):
        inside = known in {e.value for e in right.elts}
        return inside if isinstance(op, ast.In) else not inside
    return None


def compared_value(node: ast.AST, state: State) -> Optional[Value]:
    """The value a test compares, read without evaluating: a name, or an attribute of a known object."""
    key = key_of(node)
    val = state.get(key) if key is not None else None
    if val is None and isinstance(node, ast.Attribute):
        base_key = key_of(node.value)
        base = state.get(base_key) if base_key is not None else None
        if isinstance(base, (ModuleVal, ObjectVal)):
            val = base.attr(node.attr)
    return val


def bool_compare_truth(test: ast.AST, state: State) -> Optional[bool]:
    """`flag is False` / `flag == True` / `flag is not False` where `flag` is surely truthy or surely falsy:
    `if evaluate is False:` under a call that passed `evaluate=True` is not taken. Decided only where the truth of
    `flag` settles it: a truthy value is never `False`, a falsy one never `True`, and a falsy one is `False` only if
    surely a bool (`PyVal.boolean`: not `None` or `0`). Also `mode == "train"` / `mode in ("train", "finetune")`
    where `mode` is surely one string (`string_compare`)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Constant) and isinstance(test.ops[0], (ast.Eq, ast.NotEq)):
        left, right = right, left  # `"train" == mode`
    string = string_compare(test.ops[0], compared_value(left, state), right)
    if string is not None:
        return string
    if not (isinstance(test.ops[0], (ast.Is, ast.IsNot, ast.Eq, ast.NotEq))
            and isinstance(test.comparators[0], ast.Constant) and isinstance(test.comparators[0].value, bool)):
        return None
    val = compared_value(test.left, state)
    if not isinstance(val, PyVal) or val.truth is None:
        return None
    wanted = test.comparators[0].value
    if val.truth != wanted:
        equal = False
    elif wanted is True or val.boolean:  # surely `True` / surely the bool `False` (`PyVal.boolean`)
        equal = True
    else:
        return None
    return equal if isinstance(test.ops[0], (ast.Is, ast.Eq)) else not equal


def _is_tensor_function(qual: str) -> bool:
    """torch functions that compute tensors from tensors. Classes (`torch.distributed.rpc.RRef`) and
    other namespaces (`torch.cuda.*`, `torch.distributed.*`, `torch.jit.*`) are not modelled: UNKNOWN."""
    short = qual.rsplit(".", 1)[-1]
    if not short or short[0].isupper():
        return False
    if qual.count(".") == 1 and qual.startswith("torch."):
        return True
    return qual.startswith(_OP_NAMESPACES) or db.op_entry(qual) is not None and qual.startswith("torch.")


def param_defaults(args: ast.arguments) -> dict:
    """Parameter name -> its default's node, positional and keyword-only alike."""
    positional = args.posonlyargs + args.args
    defaults = dict(zip([p.arg for p in positional[len(positional) - len(args.defaults):]], args.defaults))
    defaults.update({p.arg: d for p, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return defaults


def _constant_default(node: Optional[ast.AST], called: bool = False) -> Value:
    """The value of a parameter left to its default: a constant's is known (`smooth=1.0`, `cache=None`). A bool
    default's truth (and a None default's falsity) only when a real call left it (`called`): a function analysed on
    its own has callers that may pass anything, and both sides of `if ret_np:` / `if optimizer:` must be analysed."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    if isinstance(node, ast.Constant):
        return PyVal(scalar=isinstance(node.value, (int, float)) and not isinstance(node.value, bool),
                     is_none=node.value is None,
                     truth=(node.value if isinstance(node.value, bool) else False if node.value is None else None)
                     if called else None,
                     string=node.value if called and isinstance(node.value, str) else None,
                     boolean=called and isinstance(node.value, bool))
    return UNKNOWN


def _reduced_shape(shape: Optional[tuple], args, kwargs) -> Optional[tuple]:
    """The shape after reducing over one constant dim (`x.mean(dim=0)`, `x.sum(1)`) without keepdim."""
    if shape is None or "?" in shape or (kwargs and "keepdim" in kwargs and const_bool(kwargs["keepdim"][0]) is not False):
        return None
    dim_node = args[1][0] if len(args) > 1 else (kwargs or {}).get("dim", (None, None))[0]
    if len(args) > 2:
        return None
    if isinstance(dim_node, ast.UnaryOp) and isinstance(dim_node.op, ast.USub) and isinstance(dim_node.operand, ast.Constant):
        dim = -dim_node.operand.value if type(dim_node.operand.value) is int else None
    elif isinstance(dim_node, ast.Constant) and type(dim_node.value) is int:
        dim = dim_node.value
    else:
        return None
    if dim is None or not -len(shape) <= dim < len(shape):
        return None
    dim %= len(shape)
    return shape[:dim] + shape[dim + 1:]


def _int_index(slice_node: ast.AST, index: Value) -> bool:
    """An index made of Python numbers (and slices of them) only: basic indexing, which makes a view."""
    if isinstance(slice_node, ast.Tuple):
        return False  # the tuple's value is not tracked per element: stay with the syntactic rule
    return isinstance(index, PyVal) and index.scalar


def _basic_index(node: ast.AST) -> bool:
    """`x[0]`, `x[1:3]`, `x[:, None]`, `x[..., 0]` make views; indexing with tensors or lists copies."""
    if not isinstance(node, ast.Subscript):
        return False
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    for p in parts:
        if isinstance(p, ast.Slice):
            continue
        if isinstance(p, ast.Constant) and (p.value is None or p.value is Ellipsis or type(p.value) is int):
            continue
        if isinstance(p, ast.UnaryOp) and isinstance(p.operand, ast.Constant):
            continue
        return False
    return True


def _sets_grads(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.ctx, ast.Store):
        return True
    if isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else "")
        return name in ("backward", "step") or ("grad" in name and "clip_grad" not in name)
    return False


def _stmt_method(stmt: ast.stmt) -> Optional[str]:
    """`backward` for `loss.backward()` (also `scaler.scale(loss).backward()`), `zero_grad` for
    `opt.zero_grad()`, `step` for `opt.step()` / `scaler.step(opt)`, as whole expression statements; else None."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute)):
        return None
    name = stmt.value.func.attr
    return name if name in ("backward", "zero_grad", "step") else None


def _backward_names(loop: ast.AST) -> frozenset:
    """The names the loop runs a backward through: `name.backward()`, and the spellings that call it for the
    user: `torch.autograd.backward(name)` (or `backward(name)` imported from there), `accelerator.backward(name)`
    and `fabric.backward(name)`, Lightning's `self.manual_backward(name)`, AMP's `scaler.scale(name).backward()`.
    Each raises unless `name` has a graph, as `name.backward()` does."""
    out = set()
    for sub in walk(loop):
        if not isinstance(sub, ast.Call):
            continue
        func = sub.func
        if isinstance(func, ast.Attribute) and func.attr == "backward":
            if isinstance(func.value, ast.Name):
                if not sub.args:
                    out.add(func.value.id)  # `loss.backward()`
                elif isinstance(sub.args[0], ast.Name):
                    out.add(sub.args[0].id)  # `torch.autograd.backward(loss)`, `accelerator.backward(loss)`
            elif isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Attribute) \
                    and func.value.func.attr == "scale" and func.value.args \
                    and isinstance(func.value.args[0], ast.Name):
                out.add(func.value.args[0].id)  # `scaler.scale(loss).backward()`
            elif isinstance(func.value, ast.Attribute) and sub.args and isinstance(sub.args[0], ast.Name):
                out.add(sub.args[0].id)  # `self.accelerator.backward(loss)`, `torch.autograd.backward(loss)`
        elif isinstance(func, (ast.Name, ast.Attribute)) and sub.args and isinstance(sub.args[0], ast.Name) \
                and (func.id if isinstance(func, ast.Name) else func.attr) in ("backward", "manual_backward"):
            out.add(sub.args[0].id)  # `backward(loss)` from torch.autograd, `self.manual_backward(loss)`
    return frozenset(out)


def _loop_store_counts(loop: ast.AST) -> dict:
    """How many statements in the loop bind each reference key (assignments, augmented assignments, loop targets)."""
    out: dict = {}
    for n in walk(loop):
        if isinstance(n, ast.Assign):
            targets = n.targets
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
            targets = [n.target]
        elif isinstance(n, (ast.For, ast.AsyncFor)) and n is not loop:
            targets = [n.target]
        else:
            continue
        keys = set()
        for t in targets:
            for sub in walk(t):
                k = key_of(sub) if isinstance(getattr(sub, "ctx", None), ast.Store) else None
                if k is not None:
                    keys.add(k)
        for k in keys:
            out[k] = out.get(k, 0) + 1
    return out


def _remade_before(loop: ast.AST, node: ast.AST, name: str) -> bool:
    """Whether every path from the top of `loop`'s body to `node` first binds `name` to a new object (`tout = out +
    0`, `stats = {}`): what `node` adds into (`tout[:, a:b] += x`, `stats[k] += x`) is then made anew each iteration
    and dropped at the next, however many rounds of an enclosing loop bound it before this loop. A plain alias
    (`s = stats`, `s = self.stats`) is not a new object. Statements before `node` in each block that holds it
    count; a nested function or class does not hold it."""
    block = getattr(loop, "body", None) or []
    while True:
        for s in block:
            if not (s.lineno <= node.lineno <= (s.end_lineno or s.lineno) and _holds(s, node)):
                if _binds_new(s, name):
                    return True
                continue
            if s is node or isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                return False
            blocks = sub_blocks(s)
            inner = next((b for b in blocks if any(_holds(t, node) for t in b)), None)
            if inner is None:
                return False  # in the statement's own expressions (an `if` test, a loop's iterable)
            block = inner
            break
        else:
            return False


def _holds(stmt: ast.AST, node: ast.AST) -> bool:
    return stmt is node or any(n is node for n in walk(stmt))


def _binds_new(stmt: ast.AST, name: str) -> bool:
    """`name = <expression>` (or annotated) where the expression is not a bare reference to another object."""
    if isinstance(stmt, ast.Assign):
        targets, value = stmt.targets, stmt.value
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        targets, value = [stmt.target], stmt.value
    else:
        return False
    return any(isinstance(t, ast.Name) and t.id == name for t in targets) \
        and not isinstance(value, (ast.Name, ast.Attribute, ast.Subscript, ast.Starred, ast.NamedExpr))


def _params_accumulated_into_self(fn: ast.AST) -> dict:
    """Parameters of method `fn` that it adds into an attribute of `self` (`self.sum += val * n`,
    `self.total = self.total + val`, `self.history.append(val)`), each with the first node that adds it."""
    params = [p.arg for p in fn.args.posonlyargs + fn.args.args]
    if not params:
        return {}
    me, rest = params[0], set(params[1:])
    out: dict = {}

    def add(node: ast.AST, where: ast.AST) -> None:
        if _cuts_graph(node):
            return  # `val.detach()`, `val.item()`: what is added has no graph of `val`, whatever takes it next
        if isinstance(node, ast.Name) and node.id in rest:
            out.setdefault(node.id, where)
        for child in ast.iter_child_nodes(node):
            add(child, where)

    for n in walk(fn):
        if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add) and _self_attr(n.target, me):
            add(n.value, n)
        elif isinstance(n, ast.Assign) and len(n.targets) == 1 and _self_attr(n.targets[0], me):
            added = _accumulated_operand(n.targets[0], n.value)
            if added is not None:
                add(added, n)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("append", "extend") \
                and _self_attr(n.func.value, me) and n.args:
            add(n.args[0], n)
    return out


def _cuts_graph(node: ast.AST) -> bool:
    """An expression that has no graph of its operand, syntactically: `x.detach()`, `x.item()` / `x.tolist()` /
    `x.numpy()`, `x.data`, `float(x)` / `int(x)`. A call gradsight cannot see that is handed such an expression
    (`hvd.allreduce(val.detach().cpu())`) is not handed the graph."""
    if isinstance(node, ast.Attribute):
        return node.attr == "data" and isinstance(node.ctx, ast.Load)
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Attribute):
        return node.func.attr == "detach" or node.func.attr in db.CUT_METHODS
    return isinstance(node.func, ast.Name) and node.func.id in ("float", "int")


def _is_static(fn: ast.AST) -> bool:
    return any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in fn.decorator_list)


def _is_staticmethod(fn: ast.AST) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)


# Calls on an attribute (`self.x.m(...)`) that leave what gradsight knows about `x` as it was; any other method
# may change it. (`train`/`eval` change only a module's mode: recorded as "x:mode".)
_KEEPING_METHODS = {"parameters", "named_parameters", "state_dict", "load_state_dict", "children", "modules", "named_modules",
                    "buffers", "named_buffers", "forward", "zero_grad", "step", "to", "cuda", "cpu", "float", "double",
                    "half", "size", "dim", "numel", "item", "tolist", "numpy", "detach", "clone", "get", "keys",
                    "values", "items", "copy", "format", "view", "reshape", "flatten", "unsqueeze", "squeeze",
                    "permute", "transpose", "contiguous", "sum", "mean", "max", "min", "argmax", "argmin", "abs",
                    "exp", "log", "sigmoid", "softmax", "log_softmax", "matmul", "mm", "norm", "pow", "sqrt",
                    "expand", "repeat", "gather", "index_select", "masked_fill", "split", "chunk", "long", "int",
                    "bool", "type", "eq", "ne", "gt", "lt", "ge", "le", "mul", "add", "sub", "div"}


def _plain_class(info: ClassInfo, bases_of=None) -> bool:
    """A class without decorators or metaclass whose bases are all such classes of the analysed code (`bases_of`,
    when given, also resolves bases defined in other workspace files)."""
    todo, seen = [info], 0
    while todo:
        cur = todo.pop()
        seen += 1
        if seen > 10 or cur.node.decorator_list or cur.node.keywords:
            return False
        for b in (bases_of(cur) if bases_of is not None else cur.bases):
            if isinstance(b, ClassInfo):
                todo.append(b)
            elif b not in ("object", "builtins.object"):
                return False
    return True


def _class_methods(info: ClassInfo, bases_of=None) -> dict:
    """name -> FuncVal over the class and its bases (the nearest definition wins)."""
    out: dict = {}
    todo, seen = [info], 0
    while todo and seen < 10:
        cur = todo.pop(0)
        seen += 1
        for name, meth in cur.methods.items():
            out.setdefault(name, meth)
        todo.extend(b for b in (bases_of(cur) if bases_of is not None else cur.bases) if isinstance(b, ClassInfo))
    return out


# Builtins that only read the object they are given: `type(self)(...)` builds another instance.
_READING_BUILTINS = frozenset({"type", "isinstance", "id", "hasattr", "repr", "str", "hash", "callable"})


def own_mutations(fn: ast.AST) -> tuple:
    """For `Interpreter.method_mutations`: (the attributes of `self` that method `fn` itself may rebind or change:
    `self.x = ...`, `self.x += ...`, `self.x[k] = ...`, `self.x.append(...)`, `self.x.add_(...)`, "x:mode" for
    `self.x.eval()`/`.train()`, "x:data" for `self.x.data[k] = ...`/`self.x.data.copy_(...)`, "*" when it hands
    `self` to other code or uses `__dict__`; the names it calls on `self` as `self.name(...)`, which the caller
    keeps when they are the class's methods, not callable attributes such as submodules). Pure syntax."""
    params = fn.args.posonlyargs + fn.args.args
    if not params or _is_static(fn):
        return frozenset(), ()
    me = params[0].arg
    out: set = set()
    calls: list = []
    for n in walk(fn):
        if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del)):
            data = _data_attr(n, me) if isinstance(n.ctx, ast.Store) else None  # `self.x.data[0] = v`
            attr = f"{data}:data" if data else _self_attr(n, me)
            if attr:
                out.add(attr)
        elif isinstance(n, ast.Call):
            f = n.func
            data = _data_attr(f.value, me) if isinstance(f, ast.Attribute) and f.attr.endswith("_") \
                and not f.attr.endswith("__") else None
            if data:
                out.add(f"{data}:data")  # `self.x.data.copy_(v)`
            elif isinstance(f, ast.Attribute):
                if isinstance(f.value, ast.Name) and f.value.id == me:
                    calls.append(f.attr)  # self.other_method(...), or a callable attribute (a module)
                else:
                    attr = _self_attr(f.value, me)
                    if attr and f.attr in ("train", "eval"):
                        out.add(f"{attr}:mode")
                    elif attr and not f.attr.endswith("_") and f.attr not in _KEEPING_METHODS \
                            and isinstance(f.value, ast.Attribute) and isinstance(f.value.value, ast.Name) \
                            and f.value.value.id == me:
                        # `self.x.method(...)`: it may change `x`'s contents, not what `self.x` is bound to. A
                        # module stays that module (`self.q.loss(a, b)` calls a submodule); other values are
                        # taken as changed ("x:call", see `ObjectVal.attr`).
                        out.add(f"{attr}:call")
                    elif attr and (f.attr not in _KEEPING_METHODS or f.attr.endswith("_")):
                        out.add(attr)
            if any(isinstance(a, ast.Name) and a.id == me for a in list(n.args) + [k.value for k in n.keywords]) \
                    and not (isinstance(f, ast.Name) and f.id in _READING_BUILTINS):
                out.add("*")  # `self` handed to other code (not `type(self)`, `isinstance(self, C)`)
        elif isinstance(n, ast.Attribute) and n.attr == "__dict__" and isinstance(n.value, ast.Name) \
                and n.value.id == me:
            out.add("*")
        elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and isinstance(
                getattr(n, "value", None), ast.Name) and n.value.id == me:
            out.add("*")  # aliased: `obj = self`
    return frozenset(out), tuple(calls)


def _data_attr(node: ast.AST, me: str) -> Optional[str]:
    """`x` for `self.x.data`, `self.x.data[k]`: a write there changes values, not the tensor or its grad state."""
    while isinstance(node, ast.Subscript):
        node = node.value
    ok = isinstance(node, ast.Attribute) and node.attr == "data" and isinstance(node.value, ast.Attribute)
    return node.value.attr if ok and isinstance(node.value.value, ast.Name) and node.value.value.id == me else None


def _self_attr(node: ast.AST, me: str) -> Optional[str]:
    """`x` for `self.x`, `self.x.y`, `self.x[k]`, `self.x.y[k].z` (with `me` the name of `self`); else None."""
    attr = None
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute):
            attr = node.attr
        node = node.value
    return attr if isinstance(node, ast.Name) and node.id == me else None


def _loop_effects(loop: ast.AST) -> tuple:
    """For `Interpreter.deep_loop`: (every name the loop mentions, the keys it assigns to, whether it calls
    `set_grad_enabled`, which changes the grad mode past the statement)."""
    names, stores, sets_mode = set(), set(), False
    for n in walk(loop):
        if isinstance(n, ast.Name):
            names.add(n.id)
            if isinstance(n.ctx, (ast.Store, ast.Del)):
                stores.add(n.id)
        elif isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del)):
            k = key_of(n)
            if k is not None:
                stores.add(k)
        elif isinstance(n, ast.Call):
            f = n.func
            if (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) == "set_grad_enabled":
                sets_mode = True
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
            stores.add(n.name)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
            stores.add(n.name)
        elif isinstance(n, ast.alias):
            name = (n.asname or n.name).split(".", 1)[0]
            names.add(name)
            stores.add(name)
    return frozenset(names), frozenset(stores), sets_mode


def _graph_homes_fresh(fn: ast.AST) -> Optional[frozenset]:
    """`_graph_homes`, also when the body writes in place into tensors it made itself (`fresh_locals`)."""
    return _graph_homes(fn, True)


def _graph_homes(fn: ast.AST, allow_fresh: bool = False) -> Optional[frozenset]:
    """Where a graph `fn` builds can outlive it, read from its text, for `Interpreter.prune_dead_saves`: None when
    it may go somewhere the abstract exit state does not show (a `yield`; a store into an attribute or item of
    anything but its first parameter, `self`; `setattr`; an augmented store into an attribute or item, or an
    in-place method on anything but a `.data` alias or a `torch.*` function, which may graft a graph into a
    tensor without its segments). Otherwise the attributes of `self` the body only ever sets to a parameter
    (`self.init_log_var = init_log_var`): an unknown value there is what the caller handed in, not a graph.
    `allow_fresh`: in-place writes into tensors the body made itself are allowed; the graph they graft is not in
    those tensors' segments, so the caller prunes on this only where nothing it keeps carries a graph."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    me = params[0] if params else None
    copies: dict = {}
    nodes = walk(fn)
    fresh = fresh_writes(fn) if allow_fresh else frozenset()  # writes into tensors the function made itself
    for n in nodes:
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return None
        if isinstance(n, ast.AugAssign) and not isinstance(n.target, ast.Name):
            return None
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Name) and f.id == "setattr":
                return None
            if isinstance(f, ast.Attribute) and f.attr.endswith("_") and not f.attr.endswith("__") \
                    and f.attr not in ("requires_grad_", "retain_grad", "register_hook") \
                    and not (isinstance(f.value, ast.Attribute) and f.value.attr == "data"):
                root = f.value
                while isinstance(root, ast.Attribute):
                    root = root.value
                if not (isinstance(root, ast.Name) and root.id in ("torch", "nn", "init", "F")) and id(n) not in fresh:
                    return None
        if isinstance(n, ast.Assign):
            targets = n.targets
        elif isinstance(n, (ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr, ast.comprehension)):
            targets = [n.target]
        elif isinstance(n, ast.withitem) and n.optional_vars is not None:
            targets = [n.optional_vars]
        else:
            targets = []
        for t in targets:
            for x in walk(t):
                if not isinstance(x, (ast.Attribute, ast.Subscript)) or not isinstance(getattr(x, "ctx", None), ast.Store) \
                        or id(x) in fresh:
                    continue
                if not (isinstance(x, ast.Attribute) and isinstance(x.value, ast.Name) and x.value.id == me):
                    return None
                plain = isinstance(n, ast.Assign) and len(n.targets) == 1 and n.targets[0] is x \
                    and isinstance(n.value, ast.Name) and n.value.id in params[1:]
                copies[x.attr] = copies.get(x.attr, True) and plain
    rebound = {x.id for x in nodes if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)}
    if rebound & set(params[1:]):
        return frozenset()
    return frozenset(k for k, v in copies.items() if v)


def _holds_tensor(val: Value) -> bool:
    if isinstance(val, TensorVal):
        return True
    if isinstance(val, SeqVal):
        return any(_holds_tensor(v) for v in val.items)
    return False


def _grad_read_keys(node: ast.AST) -> frozenset:
    """The reference keys `k` whose `k.grad` appears under `node`."""
    out = set()
    for n in walk(node):
        if isinstance(n, ast.Attribute) and n.attr == "grad":
            k = key_of(n.value)
            if k is not None:
                out.add(k)
    return frozenset(out)


def _root_name(node: ast.AST) -> Optional[str]:
    """`stats` for `stats[k]`, `self` for `self.history["loss"]`; None when the chain does not start at a name."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _accumulated_operand(target: ast.AST, value: ast.AST) -> Optional[ast.AST]:
    """For `t = t + x` / `t = x + t` / `stats[k] = stats.get(k, 0) + x`: the added operand `x`, else None."""
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
        return None
    key = key_of(target)
    container = key_of(target.value) if isinstance(target, ast.Subscript) else None

    def reads_target(node: ast.AST) -> bool:
        if key is not None and key_of(node) == key:
            return True
        if container is None:
            return False
        if isinstance(node, ast.Subscript) and key_of(node.value) == container:
            return True
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and key_of(node.func.value) == container)

    def scaled_target(node: ast.AST) -> bool:
        # `0.95 * trend`, `trend * decay`: a running average (EMA) keeps the old value, scaled.
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
            return (reads_target(node.left) and not any(reads_target(n) for n in ast.walk(node.right))) or (
                isinstance(node.op, ast.Mult) and reads_target(node.right)
                and not any(reads_target(n) for n in ast.walk(node.left)))
        return reads_target(node)

    if scaled_target(value.left) and not any(reads_target(n) for n in ast.walk(value.right)):
        return value.right
    if scaled_target(value.right) and not any(reads_target(n) for n in ast.walk(value.left)):
        return value.left
    return None


def _literal_shape(node: ast.AST) -> Optional[tuple]:
    """The shape of `torch.tensor(<literal>)`: `1.0` -> (), `[1.0]` -> (1,), `[[1, 2], [3, 4]]` -> (2, 2)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return ()
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _literal_shape(node.operand)
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        inner = [_literal_shape(e) for e in node.elts]
        if inner[0] is None or any(i != inner[0] for i in inner):
            return None
        return (len(node.elts),) + inner[0]
    return None


def _literal_dtype(node: ast.AST) -> Tri:
    """Whether `torch.tensor(<literal>)` has an integer dtype: YES when every element is an int or bool constant,
    NO when one is a float or the literal is empty (torch gives an empty literal the default float dtype)."""
    elems: list = []

    def walk(n: ast.AST) -> bool:
        if isinstance(n, (ast.List, ast.Tuple)):
            return all(walk(e) for e in n.elts)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            return walk(n.operand)
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float, bool)):
            elems.append(n.value)
            return True
        return False

    if not walk(node):
        return Tri.NO if any(isinstance(c, ast.Constant) and isinstance(c.value, float) for c in ast.walk(node)) \
            else Tri.MAYBE
    if not elems or any(isinstance(v, float) for v in elems):
        return Tri.NO
    return Tri.YES


def _use_kind(node: ast.AST, key: str) -> Optional[str]:
    """For `Interpreter.next_use_after`: "grad" for a read of `key.grad`, "backward" for a backward call, "reset" for a
    statement that rebinds `key` or makes it require grad again, else None."""
    if isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.ctx, ast.Load) \
            and key_of(node.value) == key:
        return "grad"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "backward" or (node.func.attr == "grad" and key_of(node.func.value) in (
                "torch.autograd", "autograd")):
            return "backward"
        if node.func.attr == "requires_grad_" and key_of(node.func.value) == key:
            return "reset"
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            for sub in walk(t):
                if key_of(sub) == key and isinstance(getattr(sub, "ctx", None), ast.Store):
                    return "reset"
                if isinstance(sub, ast.Attribute) and sub.attr == "requires_grad" and key_of(sub.value) == key:
                    return "reset"
    return None


def _cap(pcut: frozenset) -> frozenset:
    if len(pcut) <= MAX_PCUT:
        return pcut
    return frozenset(sorted(pcut, key=lambda e: (repr(e[1]), repr(e[0])))[:MAX_PCUT])


def _pcut_of(vals) -> frozenset:
    out: frozenset = frozenset()
    for v in vals:
        if isinstance(v, (TensorVal, PyVal)) and v.pcut:
            out |= v.pcut
    return _cap(out)


def grad_origins(val: Value, partial: bool = False) -> Optional[frozenset]:
    """The leaves a value's gradient can reach, as sites: leaves created with requires_grad=True (`sources`) and
    modules whose parameters feed it (`psrc`). None when not known: an unknown value, or one an unknown value fed.
    For `torch.autograd.grad(out, inputs)`: a value none of whose origins is an input's does not depend on any
    input, so no node of its history lies on a path from `out` to an input, and torch runs (and frees) only those.
    `partial`: the origins seen, even where an unknown value (most often a batch of data) also fed the value. If `v`
    depends on input `x`, every origin of `x` is one of `v`'s; so known origins of `x` that `v` lacks show that `v`
    does not, unless an unknown value fed `v` (that case is taken as independent: a batch of data, in practice).
    Each element of a sequence must have a known origin: an element with none could be anything."""
    if isinstance(val, TensorVal):
        if val.psrc_partial and not partial:
            return None
        return (val.sources | val.psrc) or None
    if isinstance(val, ParamsVal):
        return val.module_sites or None
    if isinstance(val, SeqVal) and val.items:
        parts = [grad_origins(v, partial) for v in val.items]
        return None if any(p is None for p in parts) else frozenset().union(*parts)
    return None


def _fsite(f: Fact) -> tuple:
    return (f.path, f.line, f.column)


def _msite(mod: Value) -> Optional[tuple]:
    """A module's identity for `TensorVal.psaved`: where it was created."""
    origin = getattr(mod, "origin", None)
    return _fsite(origin) if isinstance(mod, ModuleVal) and origin is not None else None


def _saved_input_indices(entry: dict, args) -> list:
    """Indices of the arguments an op saves for backward, given which arguments require grad."""
    rgs = [(v.rg if isinstance(v, TensorVal) else Tri.NO) for _, v in args]
    out = []
    for idx_s, triggers in (entry.get("saves_inputs") or {}).items():
        if not idx_s.isdigit() or int(idx_s) >= len(args) or not isinstance(args[int(idx_s)][1], TensorVal):
            continue
        if triggers:
            ok = any(isinstance(t, int) and t < len(rgs) and rgs[t] is Tri.YES for t in triggers)
        else:
            ok = any(r is Tri.YES for r in rgs)
        if ok:
            out.append(int(idx_s))
    return out


def map_tensors(value: Value, fn) -> Value:
    if isinstance(value, TensorVal):
        return fn(value)
    if isinstance(value, SeqVal):
        items = tuple(map_tensors(v, fn) for v in value.items)
        return value if items == value.items else SeqVal(items)
    return value


def flat_tensors(args) -> list:
    """(node, TensorVal) pairs from call arguments, looking inside tuples such as an LSTM's `(h, c)`."""
    out = []
    for n, v in args:
        if isinstance(v, TensorVal):
            out.append((n, v))
        elif isinstance(v, SeqVal):
            elts = n.elts if isinstance(n, (ast.Tuple, ast.List)) and len(n.elts) == len(v.items) else [n] * len(v.items)
            out.extend(flat_tensors(list(zip(elts, v.items))))
    return out


def with_carried(value: Value, carried: Fact) -> Value:
    if isinstance(value, TensorVal) and value.freed is not None:
        return value.with_(carried=carried)
    if isinstance(value, SeqVal):
        return SeqVal(tuple(with_carried(v, carried) for v in value.items))
    return value


def self_view(value: TensorVal) -> TensorVal:
    return value.with_(saved=None, shape=None)


def widen(entry: State, head: State) -> State:
    out = head.copy()
    for key, val in head.env.items():
        if entry.env.get(key) != val:
            out.env[key] = UNKNOWN
    return out


def _broadcast(shapes: list[tuple]) -> Optional[tuple]:
    if any("?" in s for s in shapes):
        return ("?",) if all(len(s) for s in shapes) else None
    n = max(len(s) for s in shapes)
    out = []
    for i in range(1, n + 1):
        dims = {s[-i] for s in shapes if len(s) >= i and s[-i] != 1}
        if len(dims) > 1:
            return None
        out.append(dims.pop() if dims else 1)
    return tuple(reversed(out))


def _pretty(qual: str) -> str:
    short = qual.rsplit(".", 1)[-1]
    if qual.startswith("torch.Tensor."):
        sym = {"__mul__": "*", "__rmul__": "*", "__matmul__": "@", "__truediv__": "/", "__rtruediv__": "/",
               "__pow__": "**", "__getitem__": "indexing"}.get(short)
        return sym or f".{short}()"
    if qual.startswith("torch.nn.functional."):
        return f"F.{short}"
    return qual


def describe(value: TensorVal) -> tuple[str, str, list[Fact]]:
    """(one-line summary, short inlay label, chain of facts) for a tensor value."""
    if value.freed is not None and value.rg is not Tri.NO:
        chain = value.freed.chain()
        word = "" if value.freed_sure else "maybe "
        return (text(f"{word}graph already freed by backward at line ", value.freed.line,
                     "; another backward through it raises"),
                text(f"{word}graph freed (L", value.freed.line, ")"), chain)
    if value.rg is Tri.NO:
        if value.nograd is not None:
            chain = value.nograd.chain()
            root = chain[0]
            return (text(f"no gradient: {value.nograd.text} (line ", value.nograd.line, ")",
                         text(f"; cause: {root.text} (line ", root.line, ")") if root is not value.nograd else ""),
                    "no grad", chain)
        return "no gradient: does not require grad", "no grad", []
    if value.rg is Tri.MAYBE:
        return "may or may not require grad (depends on values gradsight cannot see)", "grad? (maybe)", []
    parts = ["requires grad", "leaf" if value.leaf is Tri.YES else ("non-leaf" if value.leaf is Tri.NO else "maybe leaf")]
    if value.param:
        parts.append("parameter")
    if value.origin is not None:
        parts.append(text(f"{value.origin.text} (line ", value.origin.line, ")"))
    chain = value.origin.chain() if value.origin else []
    label = "grad · " + ("leaf" if value.leaf is Tri.YES else "non-leaf")
    if value.saved is not None:
        parts.append(text(f"{value.saved.text} at line ", value.saved.line))
        label += " · saved"
        chain = chain + [value.saved]
    joined = []
    for k, part in enumerate(parts):
        joined.extend((" · ", part) if k else (part,))
    return text(*joined), label, chain


FUNC_GRAD_TRANSFORMS = {"torch.func.grad", "torch.func.grad_and_value", "functorch.grad", "functorch.grad_and_value"}
REQUIRES_GRAD_SPELLINGS = {"requires_grad", "require_grad", "requires_grads", "require_grads", "requires_gradient",
                           "requiresgrad", "required_grad", "requires_grad_"}
BUILTINS = {"float", "int", "bool", "complex", "list", "tuple", "max", "min", "abs", "sum", "round", "len",
            "sorted", "range", "enumerate", "zip", "str", "repr", "print", "isinstance", "pow", "divmod", "map",
            "filter", "any", "all", "reversed", "dict", "set", "format", "hash", "id", "type", "super",
            "staticmethod", "classmethod", "property"}
MODULE_METHODS = {"parameters", "to", "cuda", "cpu", "train", "eval", "zero_grad", "forward", "requires_grad_"}


def layers_have_params(layers, start: Tri = Tri.NO) -> Tri:
    """Whether a container with these layers (and, with `start`, what it already held) has parameters: yes when
    one layer surely has, maybe when one may."""
    has = start
    for lay in layers:
        has = Tri.YES if Tri.YES in (has, lay.has_params) else (Tri.MAYBE if Tri.MAYBE in (has, lay.has_params)
                                                                   else has)
    return has


# Attributes that library calls change without an assignment in the file (`model.train()`, `x.requires_grad_()`).
_CHANGED_BY_LIBRARY = frozenset({"training", "requires_grad", "grad", "data", "shape", "is_leaf", "grad_fn", "device",
                                 "dtype"})

# String methods that read their receiver and change nothing: a loop that only calls these on an object does not
# mutate it (`_loop_changes`), and such a call with constant arguments on an invariant reference is invariant
# (`_invariant_test`: `self.gan_type.find("WGAN") >= 0`, `mode.startswith("train")`).
_PURE_STR_METHODS = frozenset({"find", "rfind", "startswith", "endswith", "lower", "upper", "casefold", "strip",
                               "lstrip", "rstrip"})


def _name_binds(node: ast.AST, nodes: Optional[list] = None) -> dict:
    """How often each plain name is bound under `node` (assignment, loop and `with` targets, walrus, `del`,
    `except ... as`, imports, nested `def`/`class`); a `global`/`nonlocal` declaration counts as unbounded.
    `nodes`: `walk(node)`, where the caller has it."""
    out: dict = {}
    for n in (walk(node) if nodes is None else nodes):  # exact types: parsed nodes are never subclassed
        t = type(n)
        if t is ast.Name:
            name = n.id if type(n.ctx) is not ast.Load else None
        elif t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef:
            name = n.name
        elif t is ast.alias:
            name = (n.asname or n.name).split(".")[0]
        elif t is ast.Global or t is ast.Nonlocal:
            for g in n.names:
                out[g] = out.get(g, 0) + 10 ** 6
            continue
        else:
            name = n.name if t in _NAMED_BINDERS else None  # `except E as name`, `case _ as name`, `case [*name]`
        if name:
            out[name] = out.get(name, 0) + 1
    return out


_NAMED_BINDERS = tuple(t for t in (ast.ExceptHandler, getattr(ast, "MatchAs", 0), getattr(ast, "MatchStar", 0)) if t)


def _guarded_binds(loop: ast.AST, changes: tuple, mutations: tuple, nodes=walk) -> dict:
    """The names `loop` binds only under tests it cannot change, with those tests (`Interpreter.iteration_start`):
    simple statements reached from the body's top level through `if`s with invariant tests (`_invariant_test`)
    and `with`s, read only in later top-level statements or after a binding in its block (`reads_after_binding`),
    not in the header: no run reads an earlier iteration's value. `nodes(stmt)`: the memoised walk."""
    guarded: dict = {}
    count: dict = {}
    last: dict = {}
    bad: set = set()

    def collect(stmt: ast.AST, i: int, tests: tuple) -> None:
        if isinstance(stmt, ast.If) and _invariant_test(stmt.test, changes, mutations):
            for sub in stmt.body + stmt.orelse:
                collect(sub, i, tests + (stmt.test,))
            return
        if isinstance(stmt, ast.For) and _invariant_test(stmt, changes, mutations):
            for sub in stmt.body:  # runs as often in every iteration (`same_count`): the loop is its own test
                collect(sub, i, tests + (stmt,))
            return
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            for sub in stmt.body:
                collect(sub, i, tests)
            return
        if isinstance(stmt, ast.If):  # an `if`/`elif` chain every arm of which binds the name
            note_chain(stmt, i, tests, guarded, count, last, _name_binds)
        if not tests or isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.FunctionDef,
                                          ast.AsyncFunctionDef, ast.ClassDef)) \
                or (hasattr(ast, "Match") and isinstance(stmt, ast.Match)):
            return  # unguarded: what it binds is not guarded (see the count test below)
        names = _name_binds(stmt)
        for name, n in names.items():
            guarded.setdefault(name, []).extend(tests)
            count[name] = count.get(name, 0) + n
            last[name] = i

    body = getattr(loop, "body", None) or []
    for i, stmt in enumerate(body):
        collect(stmt, i, ())
    if not guarded:
        return {}
    # A name an unguarded statement (or a `with` item) binds is not guarded: the loop then binds it more often than
    # its guarded statements do (`changes[0]` counts every binding under the loop; the guarded statements are a
    # disjoint part of it), which the count test below rejects without listing those names.
    header = [getattr(loop, f, None) for f in ("test", "iter", "target")]
    for node in header:
        if node is not None:
            bad.update(n.id for n in walk(node) if isinstance(n, ast.Name))
    binds = changes[0]
    out = {}
    reads, layouts = [], {}  # per top-level statement: the plain names it reads; its `binding_layout` (as asked)
    for name, tests in guarded.items():
        if name in bad or binds.get(name) != count[name]:
            continue
        j = last[name]
        while len(reads) <= j:
            reads.append({n.id for n in nodes(body[len(reads)]) if n.__class__ is ast.Name and n.ctx.__class__ is ast.Load})
        if any(name in reads[k] for k in range(j)) or name in reads[j] and not reads_after_binding(
                layouts[j] if j in layouts else layouts.setdefault(j, binding_layout(body[j], nodes)), name):
            continue
        out[name] = tuple(tests)
    return out


def _loop_changes(loop: ast.AST, nodes: Optional[list] = None) -> tuple:
    """What a loop can change of the names a test reads: the names it binds (`_name_binds`) and the references of
    the objects it mutates through method calls and item stores (`xs.append(...)`, `d[k] = v`, `sched.step()`).
    `nodes`: `walk(loop)`, where the caller has it."""
    nodes = walk(loop) if nodes is None else nodes
    receivers = set()
    for n in nodes:
        t = type(n)
        key = key_of(n.func.value) if t is ast.Call and type(n.func) is ast.Attribute \
            and n.func.attr not in _PURE_STR_METHODS and n.func.attr not in SHAPE_QUERIES else \
            key_of(n.value) if t is ast.Subscript and type(n.ctx) is not ast.Load else None
        if key is not None:
            receivers.add(key)
    return _name_binds(loop, nodes), frozenset(receivers)


def _module_mutations(tree: ast.AST, memo=None, digest=None) -> tuple:
    """Attributes the file stores outside `__init__` (any object's: a method called in a loop may run them), and
    whether it calls `setattr`/`delattr` as a statement (then any attribute may change). Only statements and
    their targets are read, never whole expressions: a 2,000-line `default_cfgs` dict costs nothing here.

    The answer is the union of each top-level statement's (`_stmt_mutations`); `memo` (an engine-owned
    `OrderedDict`, see `units.UnitCache.stmt_memo`) keeps each statement's answer across analyses, keyed by the
    statement object or, where `digest` gives the digest of a statement's text (`units.Digests.node`, for the
    analysed file), by that text: the answer depends on the text alone, and statements an edit shifted are copies
    with the same text."""
    attrs: set = set()
    has_setattr = False
    for stmt in getattr(tree, "body", ()):
        # A digest covers the statement's whole lines: with the columns it names one statement (`x = 1; y.a = 2`).
        key = ("mutations", digest(stmt), stmt.col_offset, stmt.end_col_offset) if digest is not None \
            else ("mutations", id(stmt))
        hit = memo.get(key) if memo is not None else None
        if hit is not None and (digest is not None or hit[0] is stmt):
            found = hit[1]
        else:
            found = _stmt_mutations(stmt)
            if memo is not None:
                remember(memo, key, (None if digest is not None else stmt, found))
        attrs |= found[0]
        has_setattr = has_setattr or found[1]
    return frozenset(attrs), has_setattr


def remember(memo, key, value, limit: int = 8192) -> None:
    """`memo[key] = value` in a bounded engine-owned `OrderedDict` shared by threads (each step atomic; an entry
    another thread evicted meanwhile is not an error)."""
    memo[key] = value
    while len(memo) > limit:
        try:
            memo.popitem(last=False)
        except KeyError:
            break


def _stmt_mutations(top: ast.stmt) -> tuple:
    """`_module_mutations` of one top-level statement: (attributes stored outside `__init__`, `setattr` seen)."""
    attrs = set()
    has_setattr = False
    stack = [(top, False)]
    while stack:
        stmt, in_init = stack.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_init = in_init or stmt.name == "__init__"
        targets: list = []
        if isinstance(stmt, (ast.Assign, ast.Delete)):
            targets = stmt.targets
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
            targets = [stmt.target]
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id in ("setattr", "delattr"):
            has_setattr = True
        if not in_init:
            for t in targets:
                for n in walk(t):
                    if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)):
                        attrs.add(n.attr)
        blocks = sub_blocks(stmt)
        for block in blocks:
            stack.extend((c, in_init) for c in block if isinstance(c, ast.stmt))
    return frozenset(attrs), has_setattr


def _invariant_test(test: ast.AST, changes: tuple, mutations: tuple) -> bool:
    """Whether no statement of a loop can change the value of `test`: names (and attribute chains on them) the
    loop never binds or mutates, compared with constants (`mode == "train"`, `self.objective in ("H", "B")`, `not
    args.fp16`, `"GP" in self.gan_type`), and string methods of such references with constant arguments
    (`self.gan_type.find("WGAN") >= 0`). Other calls, subscripts and attributes the file stores outside `__init__`
    make it variant. A `for` statement as the test: whether it runs as often in every iteration (`same_count`)."""
    if isinstance(test, ast.For):
        return same_count(test, lambda n: _invariant_test(n, changes, mutations))
    binds, receivers = changes
    attrs, has_setattr = mutations

    def ref(n: ast.AST) -> bool:
        # Any object on the chain that a method call mutates may change what follows it (`sched.step()` moves
        # `sched.last_epoch`), except `self`, whose methods are the file's and whose attribute stores `attrs` holds.
        top = True
        while isinstance(n, ast.Attribute):
            if has_setattr or n.attr in attrs or n.attr in _CHANGED_BY_LIBRARY or key_of(n) in receivers:
                return False
            n, top = n.value, False
        return isinstance(n, ast.Name) and n.id not in binds and (n.id not in receivers or (not top and n.id == "self"))

    def const(n: ast.AST) -> bool:
        if isinstance(n, (ast.Tuple, ast.List, ast.Set)):
            return all(isinstance(e, ast.Constant) for e in n.elts)
        return isinstance(n, ast.Constant)

    def pure(n: ast.AST) -> bool:
        # A string method with constant arguments on an invariant reference (`_PURE_STR_METHODS`).
        return isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _PURE_STR_METHODS \
            and not n.keywords and all(isinstance(a, ast.Constant) for a in n.args) and ref(n.func.value)

    def operand(n: ast.AST) -> bool:
        return pure(n) if isinstance(n, ast.Call) else ref(n)

    def ok(n: ast.AST) -> bool:
        if isinstance(n, ast.BoolOp):
            return all(ok(v) for v in n.values)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            return ok(n.operand)
        if isinstance(n, ast.Compare):
            if len(n.ops) != 1:
                return False
            if isinstance(n.ops[0], (ast.In, ast.NotIn)) and const(n.left):
                return operand(n.comparators[0])  # `"GP" in self.gan_type`
            return operand(n.left) and const(n.comparators[0])
        if isinstance(n, ast.Call):
            return pure(n)
        return isinstance(n, (ast.Name, ast.Attribute)) and ref(n)

    return ok(test)


def _survey_discarded(region: ast.AST, walker=walk) -> tuple:
    """name -> True when the name is bound once in `region` and every read of it discards the graph (an operand
    of a comparison, `.item()`/`.tolist()`, `float()`/`int()`/`bool()`, a formatted string); and the names `region`
    binds and never reads (nested functions' reads count; none where a `global`/`nonlocal` statement or a call of
    `locals`, `vars`, `eval` or `exec` may read them another way)."""
    parents = {}  # of names and attributes only: all `discards` asks
    stores: dict = {}
    reads: dict = {}
    opaque = False
    name, attribute, load = ast.Name, ast.Attribute, ast.Load  # exact types: this walks every function once
    for node in walker(region):  # (the interpreter's shared walk of the function)
        kind = type(node)
        if kind is ast.Global or kind is ast.Nonlocal:
            opaque = True
        elif kind is ast.Call and type(node.func) is name and node.func.id in ("locals", "vars", "eval", "exec"):
            opaque = True
        for child in children(node):
            kind = type(child)
            if kind is name:
                parents[child] = node
                if type(child.ctx) is load:
                    reads.setdefault(child.id, []).append(child)
                else:
                    stores[child.id] = stores.get(child.id, 0) + 1
            elif kind is attribute:
                parents[child] = node

    def discards(n: ast.AST) -> bool:
        p = parents.get(n)
        if isinstance(p, (ast.Compare, ast.FormattedValue)):
            return True
        if isinstance(p, ast.Attribute) and p.attr in ("item", "tolist") and isinstance(parents.get(p), ast.Call):
            return True
        return isinstance(p, ast.Call) and n in p.args and isinstance(p.func, ast.Name) \
            and p.func.id in ("float", "int", "bool")

    unread = frozenset() if opaque else frozenset(n for n in stores if n not in reads)
    return {name: stores.get(name) == 1 and all(discards(r) for r in found) for name, found in reads.items()}, unread
