"""Why what a GS404 accumulation keeps is bounded by the code rather than by the data: the loops an accumulator
lives across, read from the syntax tree (a training step's inner loop, one value per model part, an unrolled
computation whose result the call returns). Not a rule: rules are the `gsNNN_*` modules."""

from __future__ import annotations

import ast

from ..engine import torchdb as db


def plain_names(target: ast.AST) -> set:
    """The plain names a target binds (`value`, `a, (b, *c)`); none for `d["k"]` or `self.x`."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Starred):
        return plain_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(plain_names(e) for e in target.elts))
    return set()


# Iterating these walks the model's parts (`for p in model.parameters()`), not the data.
_PART_ITERS = frozenset({"parameters", "named_parameters", "modules", "named_modules", "children", "named_children",
                         "buffers", "named_buffers"})
# Calls on a loop variable that say it is a model part: a module it calls, an optimizer it steps.
_PART_METHODS = frozenset({"step", "zero_grad", "forward", "parameters", "named_parameters"})
# Calls that run no model: tensor methods, torch/NumPy/math functions and these builtins. A loop making only such
# calls combines values that existed before it.
_PLAIN_BUILTINS = frozenset({"len", "float", "int", "sum", "min", "max", "abs", "round", "range", "zip", "enumerate",
                             "isinstance", "print", "list", "tuple", "dict", "str", "bool"})
_PLAIN_ROOTS = frozenset({"torch", "F", "np", "numpy", "math"})
_TENSOR_METHODS = frozenset(db.PURE_METHODS | db.VIEW_METHODS | db.REDUCTIONS | db.ELEMENTWISE_UNARY
                            | db.COPY_METHODS | set(db.CUT_METHODS)
                            | {"size", "numel", "dim", "item", "expand_as", "masked_select", "gather"})
_FRESH_CALLS = frozenset({"list", "dict", "set", "tuple", "defaultdict", "OrderedDict", "zeros", "zeros_like",
                          "ones", "ones_like", "empty", "empty_like", "full", "full_like", "tensor"})


def own_nodes(node: ast.AST):
    """The nodes of `node`, not those of functions or classes defined inside it."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        todo.extend(c for c in ast.iter_child_nodes(n)
                    if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)))


def inside(node: ast.AST, outer: ast.AST) -> bool:
    return outer.lineno <= node.lineno <= (outer.end_lineno or outer.lineno)


def _fresh_binding(stmt: ast.AST, name: str) -> bool:
    """`name = 0`, `name = []`, `name = {}`, `name = torch.zeros(...)`: the accumulator made anew."""
    if not (isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets)):
        return False
    value = stmt.value
    if isinstance(value, (ast.Constant, ast.List, ast.Dict, ast.Tuple, ast.Set, ast.ListComp, ast.DictComp)):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        fname = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        return fname in _FRESH_CALLS
    return False


def is_backward_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and (isinstance(node.func, ast.Attribute) and node.func.attr == "backward"
                                           or isinstance(node.func, ast.Name) and node.func.id == "backward")


def _iterates_parts(loop: ast.AST) -> bool:
    """A `for` loop over the model's parts: over `model.parameters()` (and the like), or whose loop variable is a
    module it calls or an optimizer it steps (`for head, opt in zip(heads, opts): head(x) ... opt.step()`), or
    selects one (`for agent in range(n): self.critics[agent](x) ... self.optims[agent].step()`). Such a loop runs
    once per part of the model, however much data the training sees."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _PART_ITERS
           for n in ast.walk(loop.iter)):
        return True
    names = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    if not names:
        return False

    def part(expr: ast.AST) -> bool:
        if isinstance(expr, ast.Name):
            return expr.id in names
        return isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Name) and expr.slice.id in names

    for n in own_nodes(loop):
        if isinstance(n, ast.Call):
            if part(n.func):
                return True
            if isinstance(n.func, ast.Attribute) and n.func.attr in _PART_METHODS and part(n.func.value):
                return True
    return False


def _runs_no_model(loop: ast.AST) -> bool:
    """A `for` loop over a collection (not a `range`) whose body calls no model: only tensor methods, torch, NumPy
    and math functions and plain builtins (`for m in masks: reg += m.sum()`). What it adds up are pieces of values
    that existed before it, one per item."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    it = loop.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
        return False
    for n in own_nodes(loop):
        if n is it or not isinstance(n, ast.Call):
            continue
        func = n.func
        if isinstance(func, ast.Name):
            if func.id not in _PLAIN_BUILTINS:
                return False
            continue
        if not isinstance(func, ast.Attribute):
            return False
        root = func.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in _PLAIN_ROOTS:
            continue
        if func.attr not in _TENSOR_METHODS:
            return False
    return True


def is_step_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "step"


def _one_accumulation_step(fn: ast.AST, loop: ast.AST) -> bool:
    """`for _ in range(k)` (`k` a name, an attribute or a number, not `len(data)`) whose body backwards and steps
    nothing, followed in `fn` (a function, or the loop making the total anew) by a `.step()` in no loop inside `fn`: the k micro-batches of one gradient-accumulation step
    (`opt.step()` or `scaler.step(opt)` once per call), as many as the code says, each graph freed by its backward."""
    body = list(own_nodes(loop))
    if not code_range(loop) or any(is_step_call(n) for n in body) or not any(is_backward_call(n) for n in body):
        return False
    loops = [n for n in own_nodes(fn) if n is not fn and isinstance(n, (ast.For, ast.AsyncFor, ast.While))]
    return any(is_step_call(n) and n.lineno > (loop.end_lineno or loop.lineno)
               and not any(inside(n, other) for other in loops) for n in own_nodes(fn))


def code_range(loop: ast.AST) -> bool:
    """`for _ in range(k)` (`k` a name, an attribute or a number): steps the code counts (`range(len(data))` does not)."""
    return isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name) \
        and loop.iter.func.id == "range" and not any(isinstance(n, ast.Call) for a in loop.iter.args for n in ast.walk(a))


def _grad_call(node: ast.AST) -> bool:
    """`torch.autograd.grad(...)` / `autograd.grad(...)`."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "grad" \
        and getattr(node.func.value, "attr", getattr(node.func.value, "id", "")) == "autograd"


def _backwarded_names(call: ast.Call) -> set:
    """The names whose graph a backward call runs through: the receiver of `x.backward()`, the first argument (or
    `outputs=` / `tensors=`) of `backward(x)` and `autograd.grad(x, ...)`."""
    if isinstance(call.func, ast.Attribute) and call.func.attr == "backward":
        exprs = [call.func.value]
    else:
        exprs = call.args[:1] + [k.value for k in call.keywords if k.arg in ("outputs", "tensors")]
    return {n.id for e in exprs for n in ast.walk(e) if isinstance(n, ast.Name)}


def _escapes(scope: ast.AST, name: str) -> bool:
    """Whether `scope` hands `name` to something that outlives the call: an attribute or item store that reads it
    (`self.history = losses`), or an `append`/`extend`/`update` of an attribute's container with it."""
    for n in own_nodes(scope):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and n.value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(isinstance(t, (ast.Attribute, ast.Subscript)) and not plain_names(t) for t in targets) \
                    and any(isinstance(r, ast.Name) and r.id == name for r in ast.walk(n.value)):
                return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Attribute) \
                and any(isinstance(r, ast.Name) and r.id == name for a in n.args for r in ast.walk(a)):
            return True
    return False


def _flows_into(scope: ast.AST, loops: list, value: ast.AST, stops: set) -> set:
    """The locals `value` reads and those the assignments of the outermost of `loops` bind from them, transitively
    (`out` kept, then `loss = out.pow(2).mean()`: `loss`). Left out: the object a method runs on (`self`, no
    tensor), the loops' counters (numbers) and `stops`, the inputs a `torch.autograd.grad` differentiates for
    (its backward ends there: e3bm's fast weights `w` feed both the loss and the kept logits)."""
    args = scope.args.posonlyargs + scope.args.args + scope.args.kwonlyargs
    bound = {a.arg for a in args}
    for n in own_nodes(scope):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            bound.add(n.id)
    skip = {args[0].arg} if args and args[0].arg in ("self", "cls") else set()
    skip |= {n for loop in loops for n in plain_names(loop.target)} | stops
    names = {n.id for n in ast.walk(value) if isinstance(n, ast.Name) and n.id in bound} - skip
    flows = [n for n in own_nodes(loops[-1]) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
             and n.value is not None]
    grown = True
    while grown:  # to a fixpoint: a later statement of the loop feeds an earlier one on the next iteration
        before = len(names)
        for stmt in flows:
            if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(stmt.value)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                names |= {n for t in targets for n in plain_names(t)} - skip
        grown = len(names) > before
    return names


def _unrolled(scope: ast.AST, spanning: list, name: str, event) -> bool:
    """A local of `scope`, bound before the loops it is kept across, each of which runs as often as the code says
    (`code_range`: a meta-batch of tasks, N ways times K shots, k adaptation steps), where the loops' backward is
    their own (`inner_loss.backward(create_graph=...)`, `loss.backward(retain_graph=True)`, `torch.autograd.grad`;
    not `self.train_step(x)`) and runs through nothing the kept value flows into (`_flows_into`) and did not free its
    graph: an unrolled computation (MAML's inner adaptation, MetaNet's fast weights), whose kept graphs are the call's own
    result or die with it. A training step's loss kept after its backward (`losses.append(loss)`, or
    `losses[-1].backward()` of the kept item) is what that backward ran through."""
    outer = spanning[-1]
    if not all(code_range(loop) for loop in spanning) or event.value.freed is not None:
        return False
    backwards = [n for n in own_nodes(outer) if is_backward_call(n) or _grad_call(n)]
    if not any(n.lineno == event.backward_in_loop for n in backwards):
        return False
    used = set().union(*(_backwarded_names(n) for n in backwards))
    stops = {n.id for g in backwards if _grad_call(g) for e in g.args[1:2] + [k.value for k in g.keywords
             if k.arg == "inputs"] for n in ast.walk(e) if isinstance(n, ast.Name)}
    if name in used or _flows_into(scope, spanning, event.value_node, stops) & used:
        return False
    return any(isinstance(s, ast.Assign) and s.lineno < outer.lineno and any(name in plain_names(t) for t in s.targets)
               for s in own_nodes(scope)) and not _escapes(scope, name)


def _remakes(stmt: ast.AST, name: str) -> bool:
    """`name = []`, `name = 0`, ... (`_fresh_binding`) or `name.clear()`: what the accumulator held is dropped."""
    if _fresh_binding(stmt, name):
        return True
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and not stmt.value.args \
        and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "clear" \
        and isinstance(stmt.value.func.value, ast.Name) and stmt.value.func.value.id == name


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(node))


def _consumes(stmts: list, name: str) -> bool:
    """Whether these statements run a backward through what `name` holds (`sum(losses).backward()`,
    `torch.autograd.grad(total, params)`), or hand it to a call and step an optimizer (`optimizer.pc_backward(losses)`,
    then `optimizer.step()`: PCGrad's one backward per loss)."""
    calls = [n for s in stmts for n in own_nodes(s) if isinstance(n, ast.Call)]
    if any((is_backward_call(n) or _grad_call(n)) and _reads(n, name) for n in calls):
        return True
    return any(is_step_call(n) for n in calls) and any(
        not is_step_call(n) and any(_reads(a, name) for a in [*n.args, *(k.value for k in n.keywords)]) for n in calls)


def _changed_in(loop: ast.AST) -> set:
    """The names a loop binds (its target included) or calls a method on (`losses.append(...)`): what an `if` test in
    it can read to be true on some iterations and false on others."""
    out = set(plain_names(loop.target)) if isinstance(loop, (ast.For, ast.AsyncFor)) else set()
    for n in own_nodes(loop):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
            out.add(n.func.value.id)
    return out


def _arms(loop: ast.AST, node: ast.AST) -> list | None:
    """The `if` arms of `loop`'s body that hold `node`, innermost first, as (the `if`, "body" or "orelse"); None when
    `node` is not in `loop` or sits in a loop inside it."""
    parents = {}
    for n in own_nodes(loop):
        for c in ast.iter_child_nodes(n):
            parents[id(c)] = n
    out, child = [], node
    while id(child) in parents:
        parent = parents[id(child)]
        if parent is loop:
            return out
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.While)):
            return None
        if isinstance(parent, ast.If) and child is not parent.test:
            out.append((parent, "body" if any(child is b for b in parent.body) else "orelse"))
        child = parent
    return None


def _drained(loop: ast.AST, node: ast.AST, name: str) -> bool:
    """Whether an `if` in `loop`'s body (`if step % 3 == 0:`), whose test reads a name the loop changes, first
    consumes what `name` holds (`_consumes`) and then makes it anew (`losses = []`), on the arms of any `if`s around
    it that also hold the accumulation `node` (`if args.pcgrad:` both times): the accumulator keeps the graphs of the
    iterations since the last drain, for that drain's backward, and drops them there. PCGrad's loss buffer, appended
    each step and handed to `pc_backward` every third."""
    mine = _arms(loop, node)
    if mine is None:
        return False
    changed = _changed_in(loop)
    for drain in own_nodes(loop):
        if not isinstance(drain, ast.If) or not any(isinstance(n, ast.Name) and n.id in changed
                                                    for n in ast.walk(drain.test)):
            continue
        at = next((i for i, s in enumerate(drain.body) if _remakes(s, name)), None)
        if at is None or not _consumes(drain.body[:at], name):
            continue
        around = _arms(loop, drain)
        if around is not None and all(
                any(outer is own and arm == own_arm or ast.dump(outer.test) == ast.dump(own.test) and arm == own_arm
                    for own, own_arm in mine) for outer, arm in around):
            return True
    return False


def bounded(tree: ast.AST | None, event, name: str) -> str | None:
    """Why what the accumulation keeps is bounded by the code rather than by the data, or None. The loops the
    accumulator lives across are those holding the statement, from the innermost out to the first whose body makes
    it anew (`loss_d_sum = 0.0`) before them; without one, the function making it (a local, returned or dropped per
    call). It is bounded when
    * that re-making loop itself calls backward besides (a training step: `loss_g.backward()` then k discriminator
      steps summed into a total made anew each step), for a loop that calls backward; or, for a local of a function
      with one loop (or a total the re-making loop makes before its one inner loop), that loop is the micro-batches
      of one gradient-accumulation step (`_one_accumulation_step`); or
    * an `if` in a loop around it consumes and empties it (`_drained`: PCGrad's `losses = []` every third step); or
    * every loop it lives across runs once per part of the model (`_iterates_parts`), or, in a loop without
      backward, combines values made before it without running a model (`_runs_no_model`); or it is a local kept
      across an unrolled computation (`_unrolled`).
    A total made before the batch loop, or outside the function, is not bounded: it grows with the data."""
    node = event.node
    if tree is None or not (event.target_expr == name or event.target_expr.startswith(name + "[")) \
            or event.how not in ("+=", "append", "write") or event.per_call or event.kept_at is not None:
        return None
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and inside(node, n)]
    scope = max(funcs, key=lambda n: n.lineno) if funcs else tree
    loops = sorted((n for n in own_nodes(scope) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))
                    and inside(node, n)), key=lambda n: n.lineno)
    if not loops:
        return None
    if any(_drained(loop, node, name) for loop in loops):
        return "drained"
    spanning = [loops[-1]]
    home = None
    for outer in reversed(loops[:-1]):
        inner = spanning[-1]
        if any(_fresh_binding(s, name) and s.lineno < inner.lineno and not inside(s, inner)
               for s in own_nodes(outer) if isinstance(s, ast.Assign)):
            home = outer
            break
        spanning.append(outer)
    if home is None and scope is not tree and event.backward_in_loop is not None \
            and _unrolled(scope, spanning, name, event):
        return "unrolled"
    if home is None:
        if scope is tree or not any(_fresh_binding(s, name) and s.lineno < spanning[-1].lineno
                                    and not inside(s, spanning[-1])
                                    for s in own_nodes(scope) if isinstance(s, ast.Assign)):
            return None
    if home is not None and event.backward_in_loop is not None:
        # A backward in the re-making loop's own body, in no loop inside it: a sibling batch loop that backwards
        # (`for x in labeled: ...; for x in unlabeled: ...` in an epoch) does not make the epoch a training step.
        inner_loops = [n for n in own_nodes(home) if n is not home and isinstance(n, (ast.For, ast.AsyncFor, ast.While))]
        if any(is_backward_call(n) and not any(inside(n, loop) for loop in inner_loops) for n in own_nodes(home)):
            return "step"
    if len(spanning) == 1 and event.backward_in_loop is not None and (
            home is None and scope is not tree and _one_accumulation_step(scope, spanning[0])
            # A total the step loop makes anew, summed over the micro-batch loop in it, before that step loop's
            # `.step()` (mini_edm's `batch_loss = torch.tensor(0.0)`; bench/fresh24-repro/03).
            or home is not None and _one_accumulation_step(home, spanning[0])):
        return "step"
    if all(_iterates_parts(loop) for loop in spanning):
        return "parts"
    if event.backward_in_loop is None and all(_iterates_parts(loop) or _runs_no_model(loop) for loop in spanning):
        return "items"
    return None


def _size_expr(node: ast.AST) -> bool:
    """`x.shape`, `x.shape[k]`, `x.size()`, `x.size(k)`: a tensor's extent."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size"


def _size_names(scope: ast.AST) -> set:
    """The names `scope` binds only from a tensor's extent (`seq_length, batch_size = mask.shape`,
    `T = x.size(0)`), never otherwise."""
    good, bad = set(), set()
    for n in own_nodes(scope):
        if isinstance(n, ast.Assign):
            from_size = _size_expr(n.value)
            for t in n.targets:
                (good if from_size else bad).update(plain_names(t))
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.With, ast.NamedExpr)):
            for t in ([n.target] if not isinstance(n, ast.With) else [i.optional_vars for i in n.items]):
                if t is not None:
                    bad.update(plain_names(t))
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        bad |= {a.arg for a in scope.args.posonlyargs + scope.args.args + scope.args.kwonlyargs}
    return good - bad


def over_positions(tree: ast.AST | None, node: ast.AST) -> bool:
    """Whether every loop holding `node` in its function walks the positions of a tensor: `for i in range(1,
    seq_length)` where the bounds are constants, a tensor's extent, or names the function binds only from one
    (`seq_length, batch_size = mask.shape`). A value chained through such loops grows with one input's length, like
    any forward over a sequence, and lives as long as the call that made it: no growth across the steps of training."""
    if tree is None:
        return False
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and inside(node, n)]
    if not funcs:
        return False
    scope = max(funcs, key=lambda n: n.lineno)
    loops = [n for n in own_nodes(scope) if isinstance(n, (ast.For, ast.AsyncFor, ast.While)) and inside(node, n)]
    if not loops:
        return False
    sizes = None
    for loop in loops:
        if not (isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name)
                and loop.iter.func.id == "range" and loop.iter.args and not loop.iter.keywords):
            return False
        for a in loop.iter.args:
            for part in ([a.left, a.right] if isinstance(a, ast.BinOp) else [a]):
                if isinstance(part, ast.Constant) and type(part.value) is int or _size_expr(part):
                    continue
                if isinstance(part, ast.Name):
                    sizes = _size_names(scope) if sizes is None else sizes
                    if part.id in sizes:
                        continue
                return False
        if not any(_size_expr(p) or isinstance(p, ast.Name) for a in loop.iter.args
                   for p in ([a.left, a.right] if isinstance(a, ast.BinOp) else [a])):
            return False  # `range(3)`: a count the code fixes, not positions of a tensor
    return True
