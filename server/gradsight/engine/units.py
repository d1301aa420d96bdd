"""The per-unit cache: module-level code and every function and method are analysed as units whose results
are cached under digests of the code they ran (`Digests`), reused while that code is unchanged and moved
(`relocate.Relocation`) where only lines above them changed."""

from __future__ import annotations

import ast
import bisect
import dataclasses
import hashlib
import pathlib
import re
from collections import OrderedDict
from typing import Optional

from .astwalk import children, walk
from .gradtests import out_of_place_twins, twin_tensor_params
from .incremental import first_line
from .interp import Interpreter, ModuleScope, UnitState
from .inherited import inherited_methods, noop_detach, run_inherited, same_file, syntax_only
from .sibling_contract import sibling_stops
from .interp_objects import _GRAD_NEUTRAL_DECORATORS
from .interp_util import _has_backward, _module_mutations
from .nograd_calls import called_without_grad, reached_without_grad
from .relocate import Relocation
from .report import Reporter
from .state import State
from .values import (UNKNOWN, ClassVal, DistVal, FuncVal, GradModeCtx, ModuleRef, OptimizerVal, ParamsVal, PyVal, SeqVal,
                     TensorVal, Tri, UnknownVal)


@dataclasses.dataclass(frozen=True)
class UnitResult:
    """What analysing one unit (a function or method on its own) added, as cached: reusable while every function
    it ran has the same text (`deps`, see `Digests.valid`) and, where a rule read the whole tree, while the whole
    text is the same (`whole`, its digest; None otherwise). `delta` holds its findings, facts and bookkeeping (see
    `_merge`) at the positions of `frame` (`Digests.frame`), from where `relocate.Relocation` moves them."""

    deps: tuple
    whole: Optional[str]
    delta: tuple
    frame: tuple


@dataclasses.dataclass(frozen=True)
class ModuleResult(UnitResult):
    """Module-level code's cached result: also the module's values (`spec`, see `_env_spec`), the optimizer
    bookkeeping it left (`optimized`), and whether those values hold no line numbers (`free`: then they can be
    moved to a new frame)."""

    spec: tuple
    optimized: dict
    free: bool


class UnitCache:
    """Results of analysing one unit (module-level code, or one function or method on its own), reused across
    analyses while the user types: key -> (dependencies, whole-text digest or None, delta, ...). See
    `analyse_definitions`. Bounded: each entry holds a unit's findings and hover facts. Analyses run in several
    threads (the language server's workers): each step is atomic, and a key another thread evicted meanwhile is
    not an error."""

    def __init__(self, max_entries: int = 4000) -> None:
        self.entries: "OrderedDict[str, tuple]" = OrderedDict()
        self.max_entries = max_entries
        self.relocations: OrderedDict = OrderedDict()  # the last few `Relocation.between` results
        # id(top-level statement) -> (statement, imports, names it calls where grad mode may be off): see
        # `called_without_grad`; unchanged statements are shared between versions while typing.
        self.no_grad_calls: OrderedDict = OrderedDict()
        # (kind, id(top-level statement)) -> (statement, answer): pure functions of a statement's syntax kept across
        # analyses (`Interpreter.stmt_memo`, `interp_util._module_mutations`).
        self.stmt_memo: OrderedDict = OrderedDict()

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, key: str) -> Optional[UnitResult]:
        return self.entries.get(key)

    def put(self, key: str, entry: UnitResult) -> None:
        self.entries[key] = entry
        self.touch(key)
        while len(self.entries) > self.max_entries:
            try:
                self.entries.popitem(last=False)
            except KeyError:
                break

    def touch(self, key: str) -> None:
        try:
            self.entries.move_to_end(key)
        except KeyError:
            pass

    def clear(self) -> None:
        self.entries.clear()
        self.relocations.clear()
        self.stmt_memo.clear()


@dataclasses.dataclass(frozen=True)
class CallerResult(UnitResult):
    """A caller unit's cached result (`UnitResult`), also valid only while the module-level values of this file it
    looked up are the same (`reads`: (name, `_module_value`) pairs), or, where one of them has no comparable form,
    while the whole module-level state is (`module_key`, the key of this file's definitions)."""

    reads: Optional[tuple]
    module_key: str


class _ReadLog(dict):
    """This file's module-level values while a caller unit runs, recording the names looked up
    (`Interpreter.lookup` asks `name in scope.env` before reading it)."""

    def __init__(self, env: dict) -> None:
        super().__init__(env)
        self.names: set = set()

    def __contains__(self, name) -> bool:
        self.names.add(name)
        return dict.__contains__(self, name)

    def __getitem__(self, name):
        self.names.add(name)
        return dict.__getitem__(self, name)

    def get(self, name, default=None):
        self.names.add(name)
        return dict.get(self, name, default)


def _plain(v) -> bool:
    return type(v) in _PLAIN or (type(v) is SeqVal and all(_plain(x) for x in v.items))


def _module_value(scope: ModuleScope, digests: Digests, workspace, name: str):
    """A module-level value of this file in a form comparable across versions: the text of a function of this
    file, the name of a class of this file (its skeleton is in the key: `Digests.outline`), a function or class of
    another workspace file with that file's digest, plain data as it is (positions included: a value made at a line
    that moved is another value); ("-",) where the name is not bound at module level. None where there is no such
    form (an object built by module-level code)."""
    if name not in scope.env:
        return ("-",)
    v = scope.env[name]
    t = type(v)
    if t is FuncVal or t is ClassVal:
        module = v.module if t is FuncVal else getattr(v.info, "module", None)
        key = v.key if t is FuncVal else getattr(v.info, "name", None)
        if module is scope:
            if t is FuncVal:
                reg = scope.functions.get(key)
                return ("f", key, digests.node(v.node)) if v.owner is None and reg is not None and reg.node is v.node \
                    else None
            return ("c", key) if scope.classes.get(key) is v.info else None
        path = getattr(module, "path", None)
        if type(module) is not ModuleScope or not path or path == scope.path or workspace is None:
            return None
        found = module.functions.get(key) if t is FuncVal else module.classes.get(key)
        if (t is FuncVal and (v.owner is not None or getattr(found, "node", None) is not v.node)) \
                or (t is ClassVal and found is not v.info):
            return None
        return ("x", path, workspace.cached_digest(pathlib.Path(path)), t is FuncVal, key)
    return ("v", v) if _plain(v) else None


def _reads_current(entry, value_of, module_key: str) -> bool:
    """Whether the module-level values a cached unit looked up are still the same (`CallerResult`); `value_of(name)`
    is `_module_value` of the current analysis."""
    if type(entry) is not CallerResult:
        return False
    if entry.reads is None:
        return entry.module_key == module_key
    return all(value_of(name) == v for name, v in entry.reads)


def _current_entry(entries: tuple, frame: tuple, valid) -> tuple:
    """(entry, exact): the first of a unit's cached results (newest first) that is `valid` and was made at `frame`
    (exact), else the first valid one, else (None, False). Frames are compared before validity (cheap tuple
    comparisons; `valid` reads every dependency and looked-up value), so a keystroke that moved every result
    validates one entry of each unit, not every version kept."""
    later = []
    for entry in entries:
        if entry.frame is frame or entry.frame == frame:
            if valid(entry):
                return entry, True
        else:
            later.append(entry)
    for entry in later:
        if valid(entry):
            return entry, False
    return None, False


def _read_result(digests: "Digests", touched: set, tree_read: bool, delta: tuple, names: set, value_of,
                 module_key: str) -> CallerResult:
    """The `CallerResult` of a unit that ran `touched` and looked up the module-level `names`."""
    reads = tuple((name, value_of(name)) for name in sorted(names))
    if any(v is None for _, v in reads):
        reads = None
    return CallerResult(digests.deps(touched), digests.whole() if tree_read else None, delta, digests.frame(), reads,
                        module_key if reads is None else "")


_VERSIONS = 4  # results kept per caller unit


def _keep(cache: UnitCache, key: str, entry: "CallerResult", others: tuple) -> None:
    """Store `entry` as the newest result of the caller unit `key`, before the others of the same key that are
    still there."""
    cache.put(key, (entry,) + tuple(others)[:_VERSIONS - 1])


def outline_key(interp: Interpreter, scope: ModuleScope, digests: "Digests", file_salt: str) -> str:
    """What every unit keyed by the file's outline reads of this file besides the module-level values it looks up
    (compared one by one, `CallerResult.reads`) and the functions it runs (`deps`): `file_salt` (path, settings,
    imported files), `Digests.outline` and the module-level statements that set attributes of this file's classes or
    objects (`_module_mutations`). Not the module-level code itself, so editing module-level data (a keystroke in a
    2,000-line config dict) re-runs no unit that does not read what changed."""
    mutations = interp.syntax("module_mutations", scope.tree,
                              lambda tree: _module_mutations(tree, interp.stmt_memo, interp.stmt_digest))
    return hashlib.sha1(f"{file_salt}\0{digests.outline()}\0{sorted(mutations[0])!r}\0{mutations[1]}".encode(
        "utf-8", "surrogatepass")).hexdigest()


# Module-level statements that bind no import and no definition: what they do reaches other code only through the
# module-level values they leave (`Digests.outline`).
_DATA_STATEMENTS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Pass, ast.Delete, ast.Assert)


class Digests:
    """Digests of the definitions of one analysed text, memoised per syntax-tree node (nodes that an
    incremental parse reuses keep their digests), and the dependency keys of the functions an analysis ran."""

    def __init__(self, scope: ModuleScope, lines: list, text: str, memo: dict):
        self.scope, self.lines, self.text, self.memo = scope, lines, text, memo
        self._whole: Optional[str] = None
        self._frame: Optional[tuple] = None
        self._owners: Optional[dict] = None
        self._starts: Optional[list] = None

    def node(self, node: ast.AST) -> str:
        """A digest of a statement's text (decorators included), not of its position: where cached results are
        reused, their line numbers are moved to the current positions (`_frame`, `Relocation`)."""
        digest = self.memo.get(node)
        if digest is None:
            start = first_line(node)
            body = "\n".join(self.lines[start - 1:node.end_lineno])
            digest = self.memo[node] = hashlib.sha1(body.encode("utf-8", "surrogatepass")).hexdigest()
        return digest

    def frame(self) -> tuple:
        """Where everything is: (first line, last line, text digest) of each top-level statement, except that a
        class is its header plus each statement of its body. Results cached under one frame are moved to another
        by `Relocation` (same sequence of parts: the shape is in every cache key)."""
        if self._frame is None:
            out = []
            for st in self.scope.tree.body:
                if isinstance(st, ast.ClassDef) and st.body:
                    start = first_line(st)
                    stop = max(st.lineno, first_line(st.body[0]) - 1)
                    head = "\n".join(self.lines[start - 1:stop])
                    out.append((start, stop, hashlib.sha1(head.encode("utf-8", "surrogatepass")).hexdigest()))
                    for sub in st.body:
                        out.append((first_line(sub), sub.end_lineno, self.node(sub)))
                else:
                    out.append((first_line(st), st.end_lineno, self.node(st)))
            self._frame = tuple(out)
        return self._frame

    def whole(self) -> str:
        if self._whole is None:
            self._whole = hashlib.sha1(self.text.encode("utf-8", "surrogatepass")).hexdigest()
        return self._whole

    def shape(self) -> str:
        """Everything but the bodies of functions and methods: module-level code, class headers and class-level
        statements (with positions), and the names and positions of all definitions. Name resolution and
        module-level values depend on no more than this and the bodies of the functions module-level code ran.
        Positions are not part of it: they are in `frame`, and cached results are relocated to it."""
        parts = []
        for st in self.scope.tree.body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                parts.append(f"{type(st).__name__} {st.name}")
            elif isinstance(st, ast.ClassDef):
                parts.append(self._skeleton(st))
            else:
                parts.append(self.node(st))
        return hashlib.sha1("|".join(parts).encode()).hexdigest()

    def outline(self) -> str:
        """What code run from another file reads of this file besides the module-level values it looks up (compared
        one by one, `reverse.py`) and the functions it runs (`deps`): the class skeletons, which classes are modules,
        the names of the definitions, and every module-level statement that may bind an import or a definition (all
        but assignments and expression statements). Unlike `shape`, an edit of module-level data leaves it as is."""
        parts = []
        for st in self.scope.tree.body:
            t = type(st)
            if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
                parts.append(f"{t.__name__} {st.name}")
            elif t is ast.ClassDef:
                parts.append(self._skeleton(st))
            elif t not in _DATA_STATEMENTS:
                parts.append(self.node(st))
        parts.extend(f"{name} {info.is_module}" for name, info in self.scope.classes.items())
        return hashlib.sha1("|".join(parts).encode("utf-8", "surrogatepass")).hexdigest()

    def _skeleton(self, cls: ast.ClassDef) -> str:
        key = (cls, "skeleton")
        digest = self.memo.get(key)
        if digest is None:
            start = first_line(cls)
            stop = max(cls.lineno, cls.body[0].lineno - 1) if cls.body else cls.end_lineno
            parts = ["\n".join(self.lines[start - 1:stop])]
            for sub in cls.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    parts.append(f"{type(sub).__name__} {sub.name}")
                else:
                    parts.append(self.node(sub))
            digest = self.memo[key] = hashlib.sha1("|".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
        return digest

    def registered(self, key: tuple) -> Optional[ast.AST]:
        if key[0] == "f":
            func = self.scope.functions.get(key[1])
            return func.node if func is not None else None
        if key[0] == "m":
            info = self.scope.classes.get(key[1])
            meth = info.methods.get(key[2]) if info is not None else None
            return meth.node if meth is not None else None
        return None

    def current(self, key: tuple) -> Optional[str]:
        if key[0] == "whole":
            return self.whole()
        node = self.registered(key)
        return self.node(node) if node is not None else None

    def key_of(self, node: ast.AST) -> tuple:
        """The definition a function node belongs to: itself if it is a top-level function or a method, else the
        one that encloses it (a nested function); ("whole",) (the whole text) where there is none."""
        if self._owners is None:
            owners = {}
            for name, func in self.scope.functions.items():
                owners[func.node] = ("f", name)
            for cname, info in self.scope.classes.items():
                for mname, meth in info.methods.items():
                    owners[meth.node] = ("m", cname, mname)
            self._owners = owners
            self._starts = [first_line(st) for st in self.scope.tree.body]
        key = self._owners.get(node)
        if key is not None:
            return key
        line = getattr(node, "lineno", 0)
        k = bisect.bisect_right(self._starts, line) - 1
        if k < 0:
            return ("whole",)
        top = self.scope.tree.body[k]
        if top.end_lineno < line:
            return ("whole",)
        key = self._owners.get(top)
        if key is not None:
            return key
        if isinstance(top, ast.ClassDef):
            for sub in top.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.lineno <= line <= sub.end_lineno:
                    return self._owners.get(sub, ("whole",))
        return ("whole",)

    def deps(self, touched: set) -> tuple:
        keys = {self.key_of(n) for n in touched}
        return tuple(sorted((k, self.current(k)) for k in keys))

    def valid(self, deps: tuple) -> bool:
        return all(self.current(k) == d for k, d in deps)

    def prune(self) -> None:
        """Forget digests of nodes no longer in the tree (the memo lives as long as the file's cache entry)."""
        if len(self.memo) < 4 * (len(self._owners or ()) + len(self.scope.tree.body)) + 256:
            return
        keep = set(self._owners or ()) | set(self.scope.tree.body)
        for info in self.scope.classes.values():
            keep.add(info.node)
            keep.update(info.node.body)
        for k in list(self.memo):  # a snapshot: another analysis of the same file may add digests meanwhile
            if (k[0] if isinstance(k, tuple) else k) not in keep:
                self.memo.pop(k, None)


class RecordingDict(dict):
    """`Analysis.dependencies`: the workspace files read; also logs them per cached unit (`log`)."""

    log: Optional[dict] = None

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        if self.log is not None:
            self.log[key] = value


def import_digests(workspace, scope: ModuleScope, path: str, depth: int = 2) -> str:
    """Digests of the workspace files this file imports (and what those import, `depth` levels): part of the
    definition-cache key, so a change to an imported helper is seen.

    Memoised in the workspace (`Workspace.import_memo`, asked on every keystroke: timm's `vision_transformer.py`
    resolves about a thousand imports two levels down): an answer is reused while every `find` answer it used is
    still the one `find` would give (none expired, `Workspace.found_generation` unchanged) and every file it read
    still gives the same scope object and digest (`scope_for` is asked again, so an edited file is seen at once);
    then computing it again would make the same calls with the same answers."""
    # Not the file itself (a module it imports may import it back): its own text is in every cache key already,
    # and its digest here would change with every keystroke and invalidate every cached definition.
    try:
        me = str(pathlib.Path(path).resolve())
    except (OSError, ValueError, RuntimeError):
        me = None
    memo = getattr(workspace, "import_memo", None)
    key = (me, path, depth, tuple(sorted(set(scope.imports.values()))))
    if memo is not None:
        hit = memo.get(key)
        if hit is not None and workspace.found_current(hit[1], hit[2]) \
                and all(workspace.scope_for(found) is sc and workspace.cached_digest(found) == digest
                        for found, sc, digest in hit[3]):
            return hit[0]
    generation = getattr(workspace, "found_generation", None)
    out: list[str] = []
    seen: set[str] = {me} if me is not None else set()
    stamps: list = []
    read: list = []
    frontier = [(scope, path)]
    for _ in range(depth):
        nxt = []
        for sc, origin in frontier:
            for qual in (key[3] if sc is scope else sorted(set(sc.imports.values()))):
                level = len(qual) - len(qual.lstrip("."))
                for module in {qual.lstrip("."), qual.lstrip(".").rpartition(".")[0]}:
                    found = workspace.find(module, level, origin, stamps) if memo is not None \
                        else workspace.find(module, level, origin)
                    if found is None or str(found) in seen:
                        continue
                    seen.add(str(found))
                    other = workspace.scope_for(found)
                    digest = workspace.cached_digest(found)
                    read.append((found, other, digest))
                    out.append(f"{found}:{digest}")
                    if other is not None:
                        nxt.append((other, str(found)))
        frontier = nxt
    answer = "|".join(sorted(out))
    if memo is not None:
        if len(memo) > 256:
            memo.clear()
        memo[key] = (answer, min(stamps, default=float("inf")), generation, tuple(read))
    return answer


def _merge(interp: Interpreter, reporter: Reporter, used: "RecordingDict", delta: tuple) -> None:
    """Add one unit's results (see `_isolated`) to the file's, as if it had just run."""
    findings, facts, leaves, cuts, reached, saw, files = delta
    for k, f in findings:
        prev = reporter.findings.get(k)
        if prev is None or prev.severity.rank < f.severity.rank:
            reporter.findings[k] = f
    for k, f in facts:
        old = interp.facts.get(k)
        if old is None or (old.uncertain and not f.uncertain):
            interp.facts[k] = f
    for k, v in leaves:
        interp.grad_leaves.setdefault(k, v)
    for k, v in cuts:
        interp.cut_sources.setdefault(k, v)
    interp.reached_sources |= reached
    interp.backward_seen = interp.backward_seen or saw
    for k, v in files:
        dict.__setitem__(used, k, v)


def _isolated(interp: Interpreter, reporter: Reporter, used: "RecordingDict", optimized: dict, body):
    """Run `body()` with empty per-unit state (result containers, call memo, instance cache; the optimizer
    bookkeeping `optimized`), so what it produces does not depend on what ran before it. Returns (its value,
    its results as a delta for `_merge`, the functions it ran, whether a rule read the whole tree)."""
    touched: set = set()
    files: dict = {}
    saved = (reporter.findings, interp.unit, used.log)
    reporter.findings, used.log = {}, files
    interp.unit = unit = UnitState(optimized_modules=dict(optimized), track=touched)
    reads = reporter.tree_reads
    try:
        value = body()
        delta = (tuple(reporter.findings.items()), tuple(unit.facts.items()), tuple(unit.grad_leaves.items()),
                 tuple(unit.cut_sources.items()), frozenset(unit.reached_sources), unit.backward_seen,
                 tuple(files.items()))
    finally:
        reporter.findings, interp.unit, used.log = saved
    return value, delta, touched, reporter.tree_reads != reads


_PLAIN = (UnknownVal, PyVal, ModuleRef, TensorVal, GradModeCtx, ParamsVal, OptimizerVal, DistVal)


def _env_spec(env: dict, scope: ModuleScope) -> Optional[tuple]:
    """Module-level values in a form that can be re-bound to a later version's scope, or None where a value
    holds something of this version's scope other than a top-level function or class (then module-level code
    is simply run again)."""
    def plain(v) -> bool:
        if type(v) in _PLAIN:
            return True
        return type(v) is SeqVal and all(plain(x) for x in v.items)

    def foreign(module) -> bool:
        return type(module) is ModuleScope and module is not scope and module.path != scope.path

    out = []
    for name, v in env.items():
        if type(v) is FuncVal:
            if v.owner is None and foreign(v.module) and getattr(v.module.functions.get(v.key), "node", None) is v.node:
                out.append((name, "x", v, v.module))  # a function of another workspace file: see `_rebind`
                continue
            reg = scope.functions.get(v.key)
            if v.owner is not None or v.module is not scope or reg is None or reg.node is not v.node:
                return None
            out.append((name, "f", v.key, v.node.lineno, v.node.col_offset))
        elif type(v) is ClassVal:
            module = getattr(v.info, "module", None)
            if foreign(module) and module.classes.get(v.info.name) is v.info:
                out.append((name, "x", v, module))  # a class of another workspace file (`ATTN_LAYERS = {"": Attention}`)
                continue
            info = scope.classes.get(getattr(v.info, "name", None))
            if info is None or info is not v.info:
                return None
            out.append((name, "c", info.name, info.node.lineno, info.node.col_offset))
        elif plain(v):
            out.append((name, "v", v))
        else:
            return None
    return tuple(out)


def _rebind(spec: tuple, scope: ModuleScope, move=None, scope_of=None) -> Optional[dict]:
    """`spec` (see `_env_spec`) as values of this version's scope; `move` maps the line numbers of the version
    it was made in to this one's (`Relocation.line`). A function or class of another workspace file is kept while
    the workspace still holds that file's scope object (`scope_of(path)`, see `_files_current`): then it is the
    very object a fresh run would resolve."""
    env = {}
    for item in spec:
        name, kind = item[0], item[1]
        if kind == "v":
            env[name] = item[2]
            continue
        if kind == "x":
            if scope_of is None or scope_of(item[3].path)[0] is not item[3]:
                return None
            env[name] = item[2]
            continue
        found = (scope.functions if kind == "f" else scope.classes).get(item[2])
        node = getattr(found, "node", None)
        line = item[3] if move is None else move(item[3])
        if node is None or line is None or (node.lineno, node.col_offset) != (line, item[4]):
            return None
        env[name] = FuncVal(node, None, scope, item[2]) if kind == "f" else ClassVal(found)
    return env


def _position_free(spec: tuple, optimized: dict) -> bool:
    """Do module-level values hold no line numbers (then what functions compute from them does not depend on
    where module-level code is)? Conservative: only plain data without explanations qualifies."""
    if optimized:
        return False

    def free(v) -> bool:
        t = type(v)
        if t in (UnknownVal, ModuleRef, GradModeCtx):
            return True
        if t is PyVal:
            return v.cut is None and not v.pcut
        if t is SeqVal:
            return all(free(x) for x in v.items)
        return False

    return all(item[1] != "v" or free(item[2]) for item in spec)


def _files_current(spec: tuple, delta: tuple, scope_of) -> bool:
    """Whether module-level values that hold another workspace file's functions or classes (`_env_spec`'s "x"
    items) may be reused: every workspace file the run read (the delta's files: path -> digest) still has that text
    (`scope_of(path)` gives the workspace's scope and digest now), so names resolve through them as they did."""
    if not any(item[1] == "x" for item in spec):
        return True
    if scope_of is None:
        return False
    return all(scope_of(path)[1] == digest for path, digest in delta[6])


def run_module(interp: Interpreter, scope: ModuleScope, reporter: Reporter, digests: "Digests", shape_key: str,
                used: "RecordingDict", cache: "UnitCache", shift: bool = True, scope_of=None,
                stats: Optional[dict] = None) -> tuple:
    """Interpret module-level code, or reuse its results: they depend on the file's shape (module-level code,
    class skeletons, the names of definitions: `shape_key`) and the functions it ran, and are moved to the
    current positions (`Relocation`) where the values it leaves hold no line numbers. Returns the dependencies
    and whether the values are position-free (both for the definitions' cache keys). `scope_of(path)` gives a
    workspace file's scope and digest now ((None, None) where unreadable), for values of other files (`_rebind`)."""
    key = "module\0" + shape_key
    entry = cache.get(key)
    if entry is not None:
        deps, whole, delta, frame = entry.deps, entry.whole, entry.delta, entry.frame
        spec, optimized, free = entry.spec, entry.optimized, entry.free
        if (whole is None or whole == digests.whole()) and digests.valid(deps) and _files_current(spec, delta, scope_of):
            env = None
            if frame is digests.frame() or frame == digests.frame():
                env = _rebind(spec, scope, None, scope_of)
            elif free and shift:
                move = Relocation.between(frame, digests.frame(), scope.path, cache.relocations)
                moved = move.delta(delta)
                if moved is not None:
                    env = _rebind(spec, scope, move.line, scope_of)
                    if env is not None:
                        delta = moved
                        cache.put(key, dataclasses.replace(entry, delta=delta, frame=digests.frame()))
            if env is not None:
                cache.touch(key)
                if stats is not None:
                    stats["module_reused"] = stats.get("module_reused", 0) + 1
                _merge(interp, reporter, used, delta)
                scope.env = env
                interp.optimized_modules = dict(optimized)
                return deps, free

    def body():  # runs isolated: the optimizer bookkeeping it returns is module-level code's own
        return interp.exec_block(scope.tree.body, State()), dict(interp.optimized_modules)

    (state, optimized), delta, touched, tree_read = _isolated(interp, reporter, used, {}, body)
    _merge(interp, reporter, used, delta)
    scope.env = dict(state.env)
    interp.optimized_modules = optimized
    deps = digests.deps(touched)
    spec = _env_spec(scope.env, scope)
    free = spec is not None and _position_free(spec, optimized)
    if spec is not None:
        cache.put(key, ModuleResult(deps, digests.whole() if tree_read else None, delta, digests.frame(), spec,
                                    dict(optimized), free))
    return deps, free


@dataclasses.dataclass(frozen=True)
class Closure:
    """A function nested in another that the enclosing function hands back or hands on (`return train`,
    `optimizer.step(closure)`, `module.register_forward_hook(hook)`) without the file calling it by name there:
    its body runs only when code gradsight may not see calls it, so it is analysed as a unit of its own
    (`run_closures`). `returns`: the enclosing function's `return` statements that hand it back, when that is the
    only way its name is used (then the enclosing function's locals are final when it can be called); empty when it
    is handed on. `free`: the names of the enclosing function's scope it reads; `cells`: those it rebinds
    (`nonlocal`); `defs`: the enclosing function's names bound by one nested `def` and nothing else."""

    node: ast.AST
    returns: tuple
    free: frozenset
    cells: frozenset
    defs: tuple


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _own_nodes(fn: ast.AST) -> list:
    """The nodes of `fn`'s own scope: its body without the bodies of the functions, lambdas and classes nested in
    it (their decorators, defaults and bases are evaluated in `fn`'s scope and are included)."""
    out: list = []
    todo = list(fn.body)
    while todo:
        n = todo.pop()
        out.append(n)
        t = type(n)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.Lambda:
            a = n.args
            todo.extend(getattr(n, "decorator_list", ()))
            todo.extend(a.defaults)
            todo.extend(d for d in a.kw_defaults if d is not None)
        elif t is ast.ClassDef:
            todo.extend(n.decorator_list)
            todo.extend(n.bases)
            todo.extend(k.value for k in n.keywords)
        else:
            todo.extend(children(n))
    return out


def _bound(fn: ast.AST, own: list) -> set:
    """Names local to `fn`: its parameters and what its own scope binds (declared `global`/`nonlocal` excluded)."""
    a = fn.args
    names = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
    names.update(p.arg for p in (a.vararg, a.kwarg) if p is not None)
    declared = set()
    for n in own:
        t = type(n)
        if t is ast.Name:
            if type(n.ctx) is not ast.Load:
                names.add(n.id)
        elif t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef:
            names.add(n.name)
        elif t is ast.Import or t is ast.ImportFrom:
            names.update((al.asname or al.name).split(".")[0] for al in n.names if al.name != "*")
        elif t is ast.ExceptHandler:
            if n.name:
                names.add(n.name)
        elif t is ast.Global or t is ast.Nonlocal:
            declared.update(n.names)
        elif t is ast.MatchAs or t is ast.MatchStar:
            if n.name:
                names.add(n.name)
    return names - declared


def closures_of(fn: ast.AST) -> tuple:
    """The nested functions of `fn` (in its own scope) whose name `fn` reads (`Closure`), in source order."""
    own = _own_nodes(fn)
    nested = sorted((n for n in own if type(n) in _DEFS), key=lambda n: (n.lineno, n.col_offset))
    if not nested:
        return ()
    local = _bound(fn, own)
    def_names: dict = {}
    for d in nested:
        def_names[d.name] = def_names.get(d.name, 0) + 1
    stores = {n.id for n in own if type(n) is ast.Name and type(n.ctx) is not ast.Load}
    defs = tuple((name, d) for d in nested for name in [d.name] if def_names[name] == 1 and name not in stores)
    everything = walk(fn)
    returns = [n for n in own if type(n) is ast.Return and n.value is not None]
    out = []
    for d in nested:
        inside = {id(n) for n in walk(d)}
        loads = [n for n in everything if type(n) is ast.Name and n.id == d.name and type(n.ctx) is ast.Load
                 and id(n) not in inside]
        if not loads:
            continue
        handed_back, seen = [], set()
        for r in returns:
            v = r.value
            elems = list(v.elts) if type(v) in (ast.Tuple, ast.List) else list(v.values) if type(v) is ast.Dict \
                else [v]
            hits = [e for e in elems if type(e) is ast.Name and e.id == d.name]
            if hits:
                handed_back.append(r)
                seen.update(id(h) for h in hits)
        returned = tuple(handed_back) if all(id(n) in seen for n in loads) else ()
        d_own = _own_nodes(d)
        mine = _bound(d, d_own)
        read = {n.id for n in walk(d) if type(n) is ast.Name and type(n.ctx) is ast.Load}
        cells = {name for n in d_own if type(n) is ast.Nonlocal for name in n.names}
        out.append(Closure(d, returned, frozenset((read - mine) & local), frozenset(cells & local),
                           tuple(x for x in defs if x[1] is not d)))
    return tuple(out)


def _closure_env(closure: Closure, captured: Optional[State], scope: ModuleScope) -> tuple:
    """What the closure reads of the enclosing function's scope, as `run_function`'s `closure` pairs: the values
    the enclosing function left at the returns that hand it back (`captured`), or, when it is handed on (its callers
    may run it while the enclosing function is still running) or those returns never ran, unknown values, except
    functions bound by a nested `def` alone. Names it rebinds (`nonlocal`) are unknown: they change between calls."""
    names, keys = [], []
    defs = dict(closure.defs)
    for name in sorted(closure.free):
        if name in closure.cells:
            names.append((name, UNKNOWN))
            continue
        if captured is None:
            node = defs.get(name)
            names.append((name, FuncVal(node, None, scope, name) if node is not None else UNKNOWN))
            continue
        names.append((name, captured.env.get(name, UNKNOWN)))
        dot, sub = name + ".", name + "["
        keys.extend((k, captured.env[k]) for k in sorted(captured.compound) if k.startswith(dot) or k.startswith(sub))
    return tuple(names + keys)


MAX_CLOSURE_DEPTH = 2


def _may_nest_def(fn: ast.AST, lines: list) -> bool:
    """Whether `fn` may hold a nested `def` (`closures_of` finds none otherwise): a nested definition is a compound
    statement, so its `def` (or `async def`) begins a physical line after `fn`'s own `def`, after indentation only;
    a function with no later line starting so skips the walks (most functions: this runs for every unit analysed).
    Lines that merely start with the letters (`default = ...`) make it answer yes, which is only slower."""
    end = getattr(fn, "end_lineno", None)
    if end is None or end > len(lines):
        return True
    return any(lines[i].lstrip().startswith(("def", "async")) for i in range(fn.lineno, end))


def run_unit(interp: Interpreter, scope: ModuleScope, func: FuncVal, self_val, entry: State, grad_for,
             closure: Optional[tuple] = None, depth: int = 0, args: Optional[list] = None) -> None:
    """Run one definition analysed on its own (`analyse_definitions`), then the closures it hands back or hands on
    without running them (`Closure`), each as a unit of its own with unknown arguments: a training step built by a
    factory (`def make_train(G, D): def train(x, y): ...; return train`) is only ever called by the factory's
    caller. A closure handed back starts in the grad mode `grad_for(name)` gives (as a top-level function would); one
    handed on to other code (a hook, an optimizer's step) with grad mode unknown: that code decides, except the
    out-of-place one of an in-place/out-of-place pair of twins (`engine/gradtests.py`), which exists for autograd: it
    starts in grad mode with the parameters it calls tensor methods on requiring grad (evidence from use)."""
    closures = interp.syntax("closures", func.node, closures_of) \
        if depth <= MAX_CLOSURE_DEPTH and _may_nest_def(func.node, scope.source.lines) else ()
    args = args or []
    if not closures:
        interp.run_function(func, self_val, args, {}, func.node, entry, closure=closure)
        return
    capture = {id(r): None for c in closures for r in c.returns}
    capture[id(func.node)] = None
    saved = interp.capture
    interp.capture = capture
    try:
        interp.run_function(func, self_val, args, {}, func.node, entry, closure=closure)
    finally:
        interp.capture = saved
    if capture[id(func.node)] is None:
        return  # the body never ran (a decorator gradsight cannot see): nor are its closures analysed
    track = interp.track
    for c in closures:
        trains = _unseen_decorator(interp, c.node) and interp.syntax("has_backward", c.node, _has_backward) is not None
        if track is not None and c.node in track and not trains:
            continue  # the enclosing function ran it: analysed in that context
        states = [capture[id(r)] for r in c.returns if capture.get(id(r)) is not None]
        captured = None
        for st in states:
            captured = st if captured is None else captured.join(st)
        start = grad_for(c.node.name) if c.returns else State(grad=Tri.MAYBE)
        if start.grad is Tri.MAYBE and trains:
            # A nested training loop under a decorator (`@find_executable_batch_size(...) def inner_loop(...)`,
            # then `return inner_loop()`; a call through the decorator does not run the body): its own backward
            # needs grad mode, so it runs with grad on (evidence of use).
            start = State(grad=Tri.YES)
        twin_args = _twin_args(interp, func.node, c.node)
        if twin_args is not None:
            start = State(grad=Tri.YES)
        run_unit(interp, scope, FuncVal(c.node, None, scope, c.node.name), None, State(grad=start.grad), grad_for,
                 _closure_env(c, captured, scope), depth + 1, twin_args)


def _unseen_decorator(interp: Interpreter, fn: ast.AST) -> bool:
    """Whether `fn` has a decorator whose wrapper gradsight cannot see (not `torch.*`, nor one known to leave grad
    mode alone): a call through it does not run the body in the caller's context."""
    for dec in fn.decorator_list:
        q = interp.static_qual(dec.func if isinstance(dec, ast.Call) else dec) or ""
        if not q.startswith(("torch.", "builtins.") + _GRAD_NEUTRAL_DECORATORS):
            return True
    return False


def _twin_args(interp: Interpreter, fn: ast.AST, d: ast.AST) -> Optional[list]:
    """The arguments a nested `def d` of `fn` runs with when it is the out-of-place twin of an in-place one
    (`gradtests.out_of_place_twins`): a tensor that requires grad (evidence from use) for each parameter it calls
    tensor methods on, unknown for the others; None for any other nested function."""
    if not any(s is d for branch in interp.syntax("twins", fn, out_of_place_twins) for s in branch):
        return None
    params = [p for p in (*d.args.posonlyargs, *d.args.args)]
    why = interp.fact(d, "out-of-place-twin", name=d.name)
    return [(p, TensorVal(rg=Tri.YES, leaf=Tri.MAYBE, evidence=True, origin=why, storage=interp.site(p))
             if used else UNKNOWN) for p, used in zip(params, interp.syntax("twin-params", d, twin_tensor_params))]


def calls_without_grad_in(scope: ModuleScope) -> frozenset:
    """`called_without_grad` of another workspace file (`Workspace.no_grad_callers`), its names resolved through
    its own imports."""
    imports = scope.imports

    def qual(node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Name):
            return imports.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = qual(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    return called_without_grad(scope.tree, qual, scope.source.text)


_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
# `torch.nn.Module`'s own methods: torch itself may call a subclass's override of one (`train` on every child,
# `_load_from_state_dict`, `forward`), so no such name is ever taken as run only by `__init__`.
_MODULE_API = frozenset((
    "_apply", "_call_impl", "_get_backward_hooks", "_get_backward_pre_hooks", "_get_name", "_load_from_state_dict",
    "_maybe_warn_non_full_backward_hook", "_named_members", "_register_load_state_dict_pre_hook",
    "_register_state_dict_hook", "_replicate_for_data_parallel", "_save_to_state_dict", "_slow_forward",
    "_wrapped_call_impl", "add_module", "apply", "bfloat16", "buffers", "children", "compile", "cpu", "cuda",
    "double", "eval", "extra_repr", "float", "forward", "get_buffer", "get_extra_state", "get_parameter",
    "get_submodule", "half", "ipu", "load_state_dict", "modules", "mtia", "named_buffers", "named_children",
    "named_modules", "named_parameters", "parameters", "register_backward_hook", "register_buffer",
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_load_state_dict_post_hook", "register_load_state_dict_pre_hook",
    "register_module", "register_parameter", "register_state_dict_post_hook", "register_state_dict_pre_hook",
    "requires_grad_", "set_extra_state", "set_submodule", "share_memory", "state_dict", "to", "to_empty", "train",
    "type", "xpu", "zero_grad"))


def _self_calls(init: ast.AST, lines: list) -> dict:
    """name -> how often `__init__`'s own code (not nested functions or lambdas) calls `self.name(...)`. Read from
    its text where it has neither (a keystroke re-reads the edited class's `__init__`); mentions in its comments or
    strings count too, as they do in `_mentions`."""
    me = init.args.args[0].arg if init.args.args else None
    if me is None:
        return {}
    seg = "\n".join(lines[init.lineno - 1:init.end_lineno or init.lineno])
    if "lambda" not in seg and seg.count("def ") == 1:
        out: dict = {}
        for name in re.findall(rf"(?<![\w.]){re.escape(me)}\s*\.\s*(\w+)\s*\(", seg):
            out[name] = out.get(name, 0) + 1
        return out
    out = {}
    for n in _own_nodes(init):
        if type(n) is ast.Call and type(n.func) is ast.Attribute and type(n.func.value) is ast.Name \
                and n.func.value.id == me:
            out[n.func.attr] = out.get(n.func.attr, 0) + 1
    return out


def _plain_module_class(interp: Interpreter, info, depth: int = 0) -> bool:
    """A module class whose bases are `nn.Module` itself or classes of this file of the same kind: no library base
    whose code might call one of its methods unseen (a framework hook)."""
    if depth > 4 or not info.bases:
        return False
    return all(b in _MODULE_BASES if isinstance(b, str) else
               b.module is info.module and _plain_module_class(interp, b, depth + 1)
               for b in interp.class_bases(info))


def init_only_methods(interp: Interpreter, scope: ModuleScope, info) -> frozenset:
    """The methods of the module class `info` that run only while its `__init__` builds the object: every mention
    of the name in the file is a call `self.name(...)` in `__init__` of a class of the file that defines the
    method (XQL's `LinearEnsemble.reset_parameters`, whose `for w in self.weight: w.transpose_(0, 1)` runs on the
    plain tensor `__init__` made, and which then stores `self.weight = nn.Parameter(self.weight)`). Such a method
    is analysed where `__init__` calls it, with the object's state at that call, and not on its own on the built
    object: that would be a later call, which nothing in the file makes (callers in other files that import this
    one run through the reverse direction). Not for `nn.Module`'s own method names, dunders, classes with a base
    from a library, or a class that does not define `__init__` itself."""
    init = info.methods.get("__init__")
    if not info.is_module or init is None or not _plain_module_class(interp, info):
        return frozenset()
    lines = scope.source.lines
    calls = interp.durable("units.self-calls", init.node, lambda n: _self_calls(n, lines))
    names = tuple(n for n in info.methods if n in calls and not n.startswith("__") and n not in _MODULE_API)
    if not names:
        return frozenset()
    owned = interp.syntax("units.init-calls", scope.tree, lambda tree: _init_calls(interp, scope))
    text = scope.source.text
    return frozenset(n for n in names if owned.get(n, (0, 0))[0]
                     and _mentions(text, n) == owned[n][0] + owned[n][1])


def _mentions(text: str, name: str) -> int:
    """How often the file's text names `name` as a word (code, strings and comments alike: a mention in a comment or
    a docstring only makes the method count as run elsewhere too, the conservative side)."""
    return len(re.findall(rf"(?<!\w){re.escape(name)}(?!\w)", text))


def _init_calls(interp: Interpreter, scope: ModuleScope) -> dict:
    """name -> (how often `__init__` of a class defining a method of that name calls `self.name(...)`, how many
    classes of the file define it), once per analysis."""
    owned: dict = {}
    for other in scope.classes.values():
        init = other.methods.get("__init__")
        if init is None or init.node is None:
            continue
        for name, count in interp.durable("units.self-calls", init.node,
                                          lambda n: _self_calls(n, scope.source.lines)).items():
            if name in other.methods:
                calls, defs = owned.get(name, (0, 0))
                owned[name] = (calls + count, defs)
    for other in scope.classes.values():
        for name in other.methods:
            if name in owned:
                calls, defs = owned[name]
                owned[name] = (calls, defs + 1)
    return owned


def analyse_definitions(interp: Interpreter, scope: ModuleScope, reporter: Reporter, module_key: str,
                         digests: Digests, used: RecordingDict, cache: "UnitCache", shift: bool = True,
                         stats: Optional[dict] = None, elsewhere: frozenset = frozenset(),
                         file_salt: Optional[str] = None, workspace=None) -> None:
    """Analyse every function and method on its own, with unknown arguments (so the analysis speaks only
    where the facts do not depend on the caller).

    Each one runs in isolation (empty result containers, call memo and instance cache, the module-level
    optimizer bookkeeping), so its results do not depend on what else was analysed first, and are cached under
    its own text plus `module_key` (settings, imported files, the file's shape, module-level code and the
    functions module-level code ran, and where module-level code is if its values hold line numbers). A cached
    result is reused while every function its analysis ran (callees, `__init__` of instantiated classes,
    `forward` of called modules; the enclosing definition for nested functions) still has the same text, and,
    if a rule looked at the whole tree, while the whole text is the same; where lines were inserted or removed
    above what it ran, its line numbers are moved (`Relocation`; where that cannot be certain, it is analysed
    again). So a keystroke re-analyses only what ran the edited code.

    `elsewhere`: names that other workspace files importing this one call where grad mode may be off
    (`Workspace.no_grad_callers`); like the file's own such calls, they start the definition with grad mode unknown
    (the grad mode is part of its cache key, so the result follows those files).

    `file_salt` (path, settings, imported files; `workspace` for values of its other files): given, a unit is keyed
    by the file's outline (`outline_key`) rather than `module_key`, and each result is valid while the module-level
    values its run looked up are the same (`CallerResult.reads`; where one has no comparable form, while `module_key`
    is), so a keystroke in module-level data that no definition reads re-runs none of them. Module-level code that
    built an optimizer (bookkeeping every unit starts from) keeps `module_key`."""
    base = State()
    # Definitions this file also calls where grad mode may be off start with grad mode unknown (`called_without_grad`).
    unsure = State(grad=Tri.MAYBE)
    no_grad_callees = interp.syntax("called_without_grad", scope.tree,
                                    lambda tree: called_without_grad(tree, interp.static_qual, scope.source.text,
                                                                     cache.no_grad_calls,
                                                                     tuple(sorted(scope.imports.items())))) | elsewhere
    no_grad_callees = reached_without_grad(interp, scope, no_grad_callees)
    interp.no_grad_defs = no_grad_callees
    module_optimized = dict(interp.optimized_modules)
    if file_salt is None or module_optimized:
        prefix = module_key
    else:
        prefix = hashlib.sha1(f"{outline_key(interp, scope, digests, file_salt)}\0{sorted(no_grad_callees)!r}".encode(
            "utf-8", "surrogatepass")).hexdigest()
    values: dict = {}  # module-level name -> its comparable form (`_module_value`), this analysis

    def value_of(name: str):
        found = values.get(name, values)
        if found is values:
            found = values[name] = _module_value(scope, digests, workspace, name)
        return found

    env = scope.env
    log = _ReadLog(env)

    def merge(delta: tuple) -> None:
        _merge(interp, reporter, used, delta)

    def isolated(body, optimized=None):
        """`_isolated`, with the module-level names looked up (`_ReadLog`) as a fifth part."""
        names = log.names = set()
        scope.env = log
        if stats is not None:
            stats["units_run"] = stats.get("units_run", 0) + 1
        try:
            return _isolated(interp, reporter, used, optimized or module_optimized, body) + (names,)
        finally:
            scope.env = env

    def lookup(key: str) -> Optional[tuple]:
        entries = cache.get(key)
        if type(entries) is not tuple:
            return None
        current = digests.frame()
        found, exact = _current_entry(entries, current, lambda e: (e.whole is None or e.whole == digests.whole())
                                      and digests.valid(e.deps) and _reads_current(e, value_of, module_key))
        if found is None:
            return None
        if exact:
            cache.touch(key)
            return found.delta
        if not shift:
            return None
        # Moved, and kept beside the version it was moved from (a keystroke that breaks a statement and the next
        # that mends it alternate between two frames: each finds its own).
        move = Relocation.between(found.frame, current, scope.path, cache.relocations)
        delta = move.delta(found.delta)
        if delta is None:
            if stats is not None:
                stats["not_moved"] += 1
            return None
        if move.low != float("inf") and stats is not None:
            stats["moved"] += 1
        _keep(cache, key, dataclasses.replace(found, delta=delta, frame=current), entries)
        return delta

    def store(key: str, touched: set, tree_read: bool, delta: tuple, names: set) -> None:
        entries = cache.get(key)
        _keep(cache, key, _read_result(digests, touched, tree_read, delta, names, value_of, module_key),
              entries if type(entries) is tuple else ())

    def unit_key(qual: tuple, node: ast.AST) -> str:
        return hashlib.sha1(f"{prefix}\0{qual!r}\0{digests.node(node)}".encode("utf-8", "surrogatepass")
                            ).hexdigest()

    def grad_for(name: str) -> State:
        return unsure if name in no_grad_callees else base

    for name, func in scope.functions.items():
        entry = grad_for(name)
        key = unit_key(("f", name, entry.grad.name), func.node)
        cached = lookup(key)
        if cached is None:
            _, cached, touched, tree_read, names = isolated(
                lambda f=func, e=entry: run_unit(interp, scope, f, None, e, grad_for))
            touched.add(func.node)
            store(key, touched, tree_read, cached, names)
        merge(cached)
    for cname, info in scope.classes.items():
        # (self value, functions its __init__ ran, tree read, names, optimizer bookkeeping): made when a method needs it
        instance = None
        # Methods only `__init__` runs are analysed in its run, with the state at its call (`init_only_methods`).
        init_only = init_only_methods(interp, scope, info)
        for name, meth in info.methods.items():
            if name in init_only:
                continue
            entry = grad_for(name)
            key = unit_key(("m", cname, name, entry.grad.name), meth.node)
            cached = lookup(key)
            if cached is None:
                is_static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in meth.node.decorator_list)
                extra: set = set()
                extra_read = False
                extra_names: set = set()
                is_class = any(isinstance(d, ast.Name) and d.id == "classmethod" for d in meth.node.decorator_list)
                self_val = None
                optimized = None
                if is_class:
                    # `cls` is the class, not an instance: `cls(...)` builds one (Conv-TasNet's
                    # `load_model_from_package`), it does not run `forward`. Unknown.
                    self_val = UNKNOWN
                elif not is_static:
                    if instance is None:
                        if info.is_module:
                            # What the module's `__init__` told the optimizer bookkeeping (`self.optimizer =
                            # Adam(self.parameters())`) holds for every method run on that instance.
                            (value, books), _, inst_touched, inst_read, inst_names = isolated(
                                lambda: (interp.instantiate(info, [], {}, info.node, base),
                                         dict(interp.optimized_modules)))
                            instance = (value, inst_touched, inst_read, inst_names, books)
                        else:
                            instance = (UNKNOWN, set(), False, set(), None)
                    self_val, extra, extra_read, extra_names, optimized = instance
                _, cached, touched, tree_read, names = isolated(
                    lambda m=meth, sv=self_val, e=entry: run_unit(interp, scope, m, sv, e, grad_for), optimized)
                touched |= extra
                touched.add(meth.node)
                store(key, touched, tree_read or extra_read, cached, names | extra_names)
            merge(cached)
        if info.bases and info.methods:  # keyed by the class's text; the bases' (other files) are in the prefix
            key = unit_key(("n", cname), info.node)
            cached = lookup(key)
            if cached is None:
                read, cached, touched, tree_read, names = isolated(
                    lambda i=info: noop_detach(interp, i) | sibling_stops(interp, i))
                store(key, touched | read, tree_read, cached, names)
            merge(cached)
        for name, meth in inherited_methods(interp, info):
            here = same_file(interp, meth)
            key = unit_key(("i", cname, name, base.grad.name, here), info.node)
            cached = lookup(key)
            if cached is None:
                _, cached, touched, tree_read, names = isolated(
                    (lambda m=meth, n=name, i=info: syntax_only(interp, i, n, m)) if here else
                    (lambda m=meth, n=name, i=info: run_inherited(interp, i, n, m, base)))
                store(key, touched, tree_read, cached, names)
            merge(cached)
    digests.prune()


