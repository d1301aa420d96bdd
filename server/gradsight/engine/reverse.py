"""The reverse direction: this file's code run by its callers in other workspace files.

A definition analysed on its own gets unknown arguments, so what it does wrong only with the values its callers
really pass stays unseen: a subclass's `forward` in another file hands a base method a loss with a graph, and the
base method adds it in place into a tensor kept on the model. When another workspace file imports the analysed one,
the units of that file that name one of this file's *sensitive* definitions (a body holding an operation a rule reads:
an in-place write, a `requires_grad` change, a backward, `autograd.grad`, a conversion to NumPy) are run as units of
their own (`run_callers`), with this file's module resolving to the analysed scope: its module-level code, a
function, a method (on an instance of its class). Then the sensitive methods a class of that file inherits from this
file's classes run on an instance of it (what the subclass sets up in `__init__` and the methods it overrides are what
the base method uses). Events are emitted only inside this file's code (`Interpreter.emit`), so a rule sees exactly
what this file's code does with that caller's values, nothing of the caller's own code (that file's analysis reports
it).

Evidence level: what a caller passes is evidence from use. A finding made so is a warning at most and names the call
that entered this file in `related` (`Reporter.via`); one the definition's own analysis makes on the same statement
wins. Callers are never joined: each is run on its own, so a finding stands only where the failing behaviour happens
for that caller.

Cost: nothing is done unless another file imports this one (`Workspace.importers`, lazy, per text version) and names
a sensitive definition; each caller unit is cached in the engine's unit cache, keyed by the caller file's text, the
files it imports and this file's outline (`Digests.outline`: not its module-level data), and valid while the functions
of this file it ran are unchanged (like any unit) and the module-level values of this file it looked up are the same
(`_ReadLog`, `_module_value`), so a keystroke re-runs only the callers that ran the edited code or read the edited
value. At most `MAX_FILES` importing files and `MAX_UNITS` caller units an analysis. Test files are no callers (`_is_test_file`): they run the code with stubs and mocks.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import pathlib
from typing import Optional

from .astwalk import walk
from .interp import Interpreter, ModuleScope
from .relocate import Relocation
from .report import Note, Reporter
from .state import State
from .units import (Digests, RecordingDict, UnitCache, _current_entry, _isolated, _keep, _module_value, _read_result,
                    _ReadLog, _reads_current, import_digests, outline_key)
from .values import UNKNOWN, Tri

MAX_FILES = 16  # importing files looked at per analysis
MAX_UNITS = 12  # caller units run (or reused) per analysis

# Method names that change a tensor's autograd state or need it: calls of `name_` methods are in-place writes.
_NEEDS = frozenset({"backward", "numpy", "requires_grad_"})


def _sensitive_body(fn: ast.AST) -> bool:
    """Whether a definition's body holds an operation whose outcome depends on the autograd state of what it is
    given: an in-place write (`+=`, `x[i] = v`, `x.add_(...)`), a `requires_grad` change, a backward, `.numpy()`,
    `list(arg)` / `tuple(arg)` of one of its parameters (a tensor's rows are views of it: GS312)."""
    params = None
    for n in walk(fn):
        t = type(n)
        if t is ast.AugAssign:
            return True
        if t is ast.Call and type(n.func) is ast.Name and n.func.id in ("list", "tuple") and len(n.args) == 1 \
                and type(n.args[0]) is ast.Name and type(fn) in (ast.FunctionDef, ast.AsyncFunctionDef):
            if params is None:
                params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs} - {"self", "cls"}
            if n.args[0].id in params:
                return True
        if t is ast.Assign and any(type(x) is ast.Subscript or type(x) is ast.Attribute and x.attr == "requires_grad"
                                   for x in n.targets):
            return True
        if t is ast.Call and type(n.func) is ast.Attribute:
            name = n.func.attr
            if name in _NEEDS or (name.endswith("_") and not name.startswith("_")) or name == "grad":
                return True
    return False


def sensitive_names(tree: ast.Module, durable=None) -> tuple:
    """The names under which other files reach this file's sensitive definitions (a function's name, a method's
    name and its class's name: a module's `forward` is reached by calling the instance), and per class the names of
    its sensitive methods other than `__init__`. `durable(kind, stmt, compute)` (`Interpreter.durable`) keeps each
    top-level statement's answer across analyses: a keystroke re-walks only the statements it touched."""
    out, methods = set(), {}
    for stmt in tree.body:
        t = type(stmt)
        if t is not ast.ClassDef and t is not ast.FunctionDef and t is not ast.AsyncFunctionDef:
            continue
        names, meths = durable("reverse-sensitive", stmt, _stmt_sensitive) if durable is not None \
            else _stmt_sensitive(stmt)
        out |= names
        if meths:
            methods[stmt.name] = methods.get(stmt.name, ()) + meths
    return frozenset(out), methods


def _stmt_sensitive(stmt: ast.stmt) -> tuple:
    """`sensitive_names` of one top-level definition: (names, the class's sensitive methods)."""
    if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef):
        return (frozenset((stmt.name,)) if _sensitive_body(stmt) else frozenset()), ()
    meths = tuple(m.name for m in stmt.body if type(m) in (ast.FunctionDef, ast.AsyncFunctionDef)
                  and m.name != "__init__" and _sensitive_body(m))
    return (frozenset(meths + (stmt.name,)) if meths else frozenset()), meths


def constant_flags(tree: ast.Module, durable=None) -> dict:
    """Per class of this file, an attribute only its `__init__` assigns and another method tests as `if self.x:` /
    `if not self.x:` (`self.automatic_entropy_tuning`): one object keeps one value for its whole life, so a caller's
    run is made once per value (a path-insensitive run would mix a call that took one branch with the next call's
    other branch). Class name -> (class node, attribute). `durable`: as for `sensitive_names`."""
    out = {}
    for cls in tree.body:
        if type(cls) is not ast.ClassDef:
            continue
        flag = durable("reverse-flag", cls, _class_flag) if durable is not None else _class_flag(cls)
        if flag is not None:
            out[cls.name] = (cls, flag)
    return out


def _class_flag(cls: ast.ClassDef) -> Optional[str]:
    """`constant_flags` of one class: the first such attribute, or None."""
    assigned_elsewhere, in_init, tested = set(), set(), set()
    for m in cls.body:
        if type(m) not in (ast.FunctionDef, ast.AsyncFunctionDef):
            continue
        for n in walk(m):
            targets = n.targets if type(n) is ast.Assign else [n.target] if type(n) is ast.AugAssign else []
            for t in targets:
                for a in walk(t):
                    if type(a) is ast.Attribute and type(a.value) is ast.Name and a.value.id == "self":
                        (in_init if m.name == "__init__" else assigned_elsewhere).add(a.attr)
            if m.name != "__init__" and type(n) is ast.If:
                test = n.test.operand if type(n.test) is ast.UnaryOp and type(n.test.op) is ast.Not else n.test
                if type(test) is ast.Attribute and type(test.value) is ast.Name and test.value.id == "self":
                    tested.add(test.attr)
    flags = sorted((in_init - assigned_elsewhere) & tested)
    return flags[0] if flags else None


def _names(node: ast.AST) -> frozenset:
    """The identifiers a piece of code reads: names and attribute names."""
    out = set()
    for n in walk(node):
        if type(n) is ast.Name:
            out.add(n.id)
        elif type(n) is ast.Attribute:
            out.add(n.attr)
    return frozenset(out)


def _opaque(fn: ast.AST) -> bool:
    """A definition under a bare-name decorator (`@register_model`): the interpreter does not run it on its own
    (the wrapper decides), so it is no caller to run."""
    return any(type(d) is ast.Name and d.id not in ("staticmethod", "property") for d in fn.decorator_list)


def caller_units(tree: ast.Module) -> tuple:
    """The units of another file, with the identifiers each reads: ("module",) for its module-level statements,
    ("f", name) for a function, ("m", class, method) for a method."""
    out = []
    top = [s for s in tree.body if type(s) not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)]
    if top:
        out.append((("module",), frozenset().union(*(_names(s) for s in top))))
    for stmt in tree.body:
        if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef):
            if not _opaque(stmt):
                out.append((("f", stmt.name), _names(stmt)))
        elif type(stmt) is ast.ClassDef:
            # A subclass: the sensitive methods it inherits run on its instances (`("sub", class, base name)`).
            out.append((("sub", stmt.name), frozenset().union(*(_names(b) for b in stmt.bases))))
            for m in stmt.body:
                if type(m) in (ast.FunctionDef, ast.AsyncFunctionDef) and not _opaque(m):
                    out.append((("m", stmt.name, m.name), _names(m)))
    return tuple(out)


def _is_test_file(path: str) -> bool:
    """Test code runs this file's code with stubs (a discriminator whose `forward` returns `torch.ones(n)`, mocks),
    not as the program runs it: a test file (under a `test`/`tests` folder, `test_*.py`, `*_test.py`,
    `conftest.py`) is no caller."""
    parts = pathlib.PurePath(path).parts
    name = parts[-1] if parts else ""
    return any(p in ("test", "tests") for p in parts[:-1]) or name.startswith("test_") or name.endswith("_test.py") \
        or name == "conftest.py"


def caller_stores(workspace, path: str, used: Optional[dict] = None) -> frozenset:
    """The attribute names that the code around this file's callers stores on an object it holds (`model.hidden =
    model.init_hidden()`: a receiver other than a bare `self`), in the other workspace files that import `path` (test
    files apart, as for `run_callers`) and in the workspace files those import: the helpers an importer hands the
    objects it builds to (classification.py builds the model and calls train.py's `train(model, ...)`, which resets
    `model.hidden_state` before each forward; bench/fresh25-false/06). What GS413 reads as a reset by the caller, as
    a store outside the class in the analysed file itself. Each file's answer is kept per text version
    (`Workspace.stores_memo`); the files read go into `used` (the analysis's dependencies)."""
    out: set = set()
    me = str(pathlib.Path(path).resolve())
    seen = {me}
    for other, other_scope, digest in workspace.importers(path)[:MAX_FILES]:
        if _is_test_file(other) or other in seen:
            continue
        seen.add(other)
        attrs, imported = _file_stores(workspace, other, other_scope, digest, used)
        out |= attrs
        for far in imported:
            if far in seen or _is_test_file(far):
                continue
            seen.add(far)
            far_scope = workspace.scope_for(pathlib.Path(far))
            far_digest = workspace.cached_digest(pathlib.Path(far))
            if far_scope is not None and far_digest is not None:
                out |= _file_stores(workspace, far, far_scope, far_digest, used)[0]
    return frozenset(out)


def _file_stores(workspace, path: str, scope: ModuleScope, digest: str, used: Optional[dict]) -> tuple:
    """(attributes the file stores on objects it holds, the workspace files it imports) of one file version."""
    if used is not None:
        dict.__setitem__(used, path, digest)
    hit = workspace.stores_memo.get(path)
    if hit is not None and hit[0] == digest:
        return hit[1], hit[2]
    attrs = set()
    for n in walk(scope.tree):
        targets = n.targets if type(n) in (ast.Assign, ast.Delete) else [n.target] if type(n) is ast.AnnAssign else ()
        for t in targets:
            for a in walk(t):
                if type(a) is ast.Attribute and type(a.ctx) in (ast.Store, ast.Del) \
                        and not (type(a.value) is ast.Name and a.value.id == "self"):
                    attrs.add(a.attr)
    imported = []
    for kind, module, level, names in scope.import_records:
        # `import pkg.train` names the module; `from pkg import train` the package or its module `train`.
        mods = names if kind == "import" else (module, *(f"{module}.{n}" if module else n for n in names if n != "*"))
        for mod in mods:
            if not mod and not level:
                continue
            found = workspace.find(mod, level, path)
            if found is not None and str(found) not in imported:
                imported.append(str(found))
    workspace.stores_memo[path] = (digest, frozenset(attrs), tuple(imported))
    return frozenset(attrs), tuple(imported)


def run_callers(interp: Interpreter, scope: ModuleScope, reporter: Reporter, workspace, module_key: str,
                digests: Digests, used: RecordingDict, cache: UnitCache, memo: dict, shift: bool = True,
                file_salt: str = "", stats: Optional[dict] = None) -> None:
    """Run the units of other workspace files that call into this file's sensitive definitions (see the module
    docstring), each isolated and cached, and add the findings they make in this file's code. `file_salt`: this
    file's path, settings and imported files (what every cache key of the file holds); `stats`: the engine's
    counters (`callers_run`)."""
    importers = workspace.importers(scope.path)
    if not importers:
        return
    wanted, methods = sensitive_names(scope.tree, interp.durable)
    if not wanted:
        return
    # Direct callers first (a call names the definition), then inherited methods run on subclasses' instances.
    direct, inherited, salts = [], [], {}
    for other, other_scope, digest in [i for i in importers if not _is_test_file(i[0])][:MAX_FILES]:
        units = memo.get((other, digest))
        if units is None:
            units = memo[(other, digest)] = caller_units(other_scope.tree)
            while len(memo) > 256:
                try:
                    memo.pop(next(iter(memo)), None)  # the oldest (another thread may be evicting too)
                except (RuntimeError, StopIteration):
                    break
        for q, names in units:
            if q[0] != "sub":
                if names & wanted:
                    direct.append((other, other_scope, digest, q, names))
                continue
            own = {u[2] for u, _ in units if u[0] == "m" and u[1] == q[1]}
            # (With "maybe" when the file runs that method where grad mode may be off: `_run_inherited`.)
            off = getattr(interp, "no_grad_defs", frozenset())
            inherited.extend((other, other_scope, digest, ("sub", q[1], m) + (("maybe",) if m in off else ()),
                              frozenset())
                             for c in sorted(names & methods.keys()) for m in methods[c] if m not in own)
    flags = constant_flags(scope.tree, interp.durable)
    units = (direct + inherited)[:MAX_UNITS]
    if not units:
        return
    # What every caller unit reads of this file besides the module-level values it looks up (compared one by one)
    # and the functions it runs (`deps`): not the module-level code itself, so editing module-level data (a
    # keystroke in a 2,000-line config dict) re-runs no caller that does not read what changed.
    base = outline_key(interp, scope, digests, file_salt)
    ctx = (base, module_key, stats)
    for other, other_scope, digest, qual, names in units:
        # A caller that names a class of this file with a constant flag runs once per value of it.
        pin = next(((cls, attr) for name, (cls, attr) in sorted(flags.items()) if name in names), None)
        for truth in ((None,) if pin is None else (True, False)):
            _run_one(interp, scope, reporter, workspace, used, cache, digests, shift, ctx, salts,
                     (other, other_scope, digest, qual), None if pin is None else {id(pin[0]): (pin[1], truth)})


def _run_one(interp: Interpreter, scope: ModuleScope, reporter: Reporter, workspace, used: RecordingDict,
             cache: UnitCache, digests: Digests, shift: bool, ctx: tuple, salts: dict, unit: tuple,
             pins: Optional[dict]) -> None:
    """One caller unit (with its pinned flag, if any): reused from the unit cache or run; its findings merged.
    `ctx`: (what every caller unit of this analysis is keyed by, the module key of this file's definitions, the
    engine's counters)."""
    other, other_scope, digest, qual = unit
    base, module_key, stats = ctx
    salt = salts.get(other)
    if salt is None:
        dict.__setitem__(used, other, digest)
        salt = salts[other] = (f"{base}\0reverse\0{other}\0{digest}\0"
                               f"{import_digests(workspace, other_scope, other, 1)}")
    pin = sorted(pins.values()) if pins else None
    key = hashlib.sha1(f"{salt}\0{qual!r}\0{pin!r}".encode("utf-8", "surrogatepass")).hexdigest()
    value_of = functools.partial(_module_value, scope, digests, workspace)
    delta = _lookup(cache, key, digests, scope.path, shift, lambda e: _reads_current(e, value_of, module_key))
    if delta is None:
        if stats is not None:
            stats["callers_run"] = stats.get("callers_run", 0) + 1
        interp.pinned_flags = pins
        env = scope.env
        log = scope.env = _ReadLog(env)
        try:
            _, delta, touched, tree_read = _run_caller(interp, scope, reporter, workspace, used, other_scope, qual)
        finally:
            interp.pinned_flags = None
            scope.env = env
        _keep(cache, key, _read_result(digests, touched, tree_read, delta, log.names, value_of, module_key),
              cache.get(key) or ())
    for k, f in delta[0]:
        prev = reporter.findings.get(k)
        if prev is None or prev.severity.rank < f.severity.rank:
            reporter.findings[k] = f
    for k, v in delta[6]:
        dict.__setitem__(used, k, v)


def _lookup(cache: UnitCache, key: str, digests: Digests, path: str, shift: bool, current_reads) -> Optional[tuple]:
    """A cached caller unit's results, moved to the current positions (as `analyse_definitions` does), or None.
    The key holds several results (`_VERSIONS`, newest first), one per version of the module-level values it read
    (undo, or a keystroke that breaks a statement and the next that mends it); `current_reads(entry)` says whether
    an entry's are the current ones."""
    entries = cache.get(key)
    if entries is None:
        return None
    current = digests.frame()
    found, exact = _current_entry(entries, current, lambda e: (e.whole is None or e.whole == digests.whole())
                                  and digests.valid(e.deps) and current_reads(e))
    if found is None:
        return None
    if exact:
        cache.touch(key)
        return found.delta
    if not shift:
        return None
    # Moved, and kept beside the version it was moved from (a keystroke that breaks a statement and the next that
    # mends it alternate between two frames: each finds its own, as in `analyse_definitions`).
    delta = Relocation.between(found.frame, current, path, cache.relocations).delta(found.delta)
    if delta is not None:
        _keep(cache, key, dataclasses.replace(found, delta=delta, frame=current), entries)
    return delta


def _run_caller(interp: Interpreter, scope: ModuleScope, reporter: Reporter, workspace, used: RecordingDict,
                other: ModuleScope, qual: tuple):
    """Run one unit of the file `other` with this file's module resolving to the analysed scope; findings made in
    this file's code are capped at warnings and name the call that entered it (`Reporter.via`)."""
    saved = (interp.scope, interp.src, interp.resolve_module, interp.entries, reporter.via)
    entries: list = []

    def via() -> Optional[Note]:
        if not entries:
            return None
        where, node = entries[-1]
        if type(node) is ast.ClassDef:
            line, col = where.source.span(node)[:2]
            return Note(line, col, f"run on an instance of the subclass `{node.name}`", where.path)
        seg = where.source.segment(node) if node is not None else ""
        seg = seg if len(seg) <= 60 else seg[:57] + "..."
        line, col = where.source.span(node)[:2] if node is not None else (1, 1)
        return Note(line, col, f"called from here with its values: `{seg}`", where.path)

    def body():
        interp.scope, interp.src = other, other.source
        interp.resolve_module = workspace.resolver(scope.path, used, home=scope)
        interp.entries = entries
        reporter.via = via
        if qual[0] == "module":
            interp.exec_block(other.tree.body, State())
            return None
        if qual[0] == "f":
            func = other.functions.get(qual[1])
            if func is not None:
                interp.run_function(func, None, [], {}, func.node, State())
            return None
        info = other.classes.get(qual[1])
        if qual[0] == "sub":
            return _run_inherited(interp, scope, other, info, qual[2], entries,
                                  State(grad=Tri.MAYBE) if qual[3:] == ("maybe",) else State())
        meth = info.methods.get(qual[2]) if info is not None else None
        if meth is None or any(type(d) is ast.Name and d.id in ("staticmethod", "classmethod")
                               for d in meth.node.decorator_list):
            return None
        self_val = interp.instantiate(info, [], {}, info.node, State()) if interp.is_module_class(info) else UNKNOWN
        interp.run_function(meth, self_val, [], {}, meth.node, State())
        return None

    try:
        return _isolated(interp, reporter, used, {}, body)
    finally:
        interp.scope, interp.src, interp.resolve_module, interp.entries, reporter.via = saved


def _run_inherited(interp: Interpreter, scope: ModuleScope, other: ModuleScope, info, name: str, entries: list,
                   entry: State) -> None:
    """A sensitive method of this file's class run on an instance of a subclass in `other` (what the subclass
    sets in its `__init__`, or the methods it overrides, are what the base method then uses). The subclass's class
    line is the related place. `entry`: grad mode unknown where this file's definitions are run where it may be off
    (`no_grad_defs`), as their own analysis starts them."""
    if info is None:
        return None
    meth = interp.find_method(info, name)
    if meth is None or meth.module is not scope or any(type(d) is ast.Name and d.id in ("staticmethod", "classmethod")
                                                      for d in meth.node.decorator_list):
        return None
    if interp.is_module_class(info):
        self_val = interp.instantiate(info, [], {}, info.node, State())
    else:
        init = interp.find_method(info, "__init__")
        n_args = max(len(init.node.args.args) - 1, 0) if init is not None else 0
        self_val = interp.new_object(info, [(info.node, UNKNOWN)] * n_args, {}, info.node, State(), fresh=False)
    if self_val is UNKNOWN:
        return None
    entries.append((other, info.node))
    interp.scope, interp.src = scope, scope.source
    interp.run_function(meth, self_val, [], {}, meth.node, entry)
    return None
