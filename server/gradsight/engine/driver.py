"""Entry point: parse, build the module scope, interpret, dispatch events to rules. Never raises on user code."""

from __future__ import annotations

import ast
import hashlib
import re
import sys
from collections import OrderedDict
from typing import Iterator, Optional

from ..config import Config
from ..findings import sort_key
from .api import Analysis
from .events import DeadGradEvent, Event
from .interp import Interpreter, ModuleScope
from .report import Reporter, Source
from .state import State
from .values import UNKNOWN, ClassInfo, FuncVal

MAX_BYTES = 5_000_000  # beyond this a file is not analysed (a clear message says so)
MAX_NESTING = 200


def build_scope(tree: ast.Module, path: str, source: Source) -> ModuleScope:
    scope = ModuleScope(path=path, tree=tree, source=source)
    records = []
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            records.append(("import", "", 0, tuple(a.name for a in node.names)))
        elif isinstance(node, ast.ImportFrom):
            records.append(("from", node.module or "", node.level or 0, tuple(a.name for a in node.names)))
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    scope.imports[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    scope.imports[top] = top
        elif isinstance(node, ast.ImportFrom):
            mod = ("." * (node.level or 0)) + (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    continue
                sep = "" if mod.endswith(".") or not mod else "."
                scope.imports[alias.asname or alias.name] = f"{mod}{sep}{alias.name}"
    scope.import_records = tuple(records)
    for stmt in tree.body:
        _collect_defs(stmt, scope)
    # Resolve class bases once every class is known.
    for info in scope.classes.values():
        bases = []
        for b in info.node.bases:
            if isinstance(b, ast.Name) and b.id in scope.classes:
                bases.append(scope.classes[b.id])
            else:
                bases.append(_static_qual(b, scope) or "?")
        info.bases = tuple(bases)
    for info in scope.classes.values():
        info.is_module = _is_module(info, set())
    return scope


def _statements(body: list) -> "Iterator[ast.stmt]":
    """Every statement, nested ones included, without descending into expressions (imports are statements)."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            sub = getattr(stmt, field, None)
            if sub:
                stack.extend(reversed(sub))


def _collect_defs(stmt: ast.stmt, scope: ModuleScope) -> None:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        scope.functions[stmt.name] = FuncVal(stmt, None, scope, stmt.name)
    elif isinstance(stmt, ast.ClassDef):
        info = ClassInfo(stmt.name, stmt, module=scope)
        for sub in stmt.body:
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                info.methods[sub.name] = FuncVal(sub, info, scope, f"{stmt.name}.{sub.name}")
        scope.classes[stmt.name] = info
    elif isinstance(stmt, (ast.If, ast.Try)):
        # Definitions under `if TYPE_CHECKING:` / `try: import` guards still define names.
        for sub in getattr(stmt, "body", []):
            _collect_defs(sub, scope)


def _static_qual(node: ast.AST, scope: ModuleScope) -> Optional[str]:
    if isinstance(node, ast.Name):
        return scope.imports.get(node.id, node.id)
    if isinstance(node, ast.Attribute):
        base = _static_qual(node.value, scope)
        return f"{base}.{node.attr}" if base else None
    return None


def _is_module(info: ClassInfo, seen: set) -> bool:
    if id(info) in seen:
        return False
    seen.add(id(info))
    for b in info.bases:
        if isinstance(b, ClassInfo):
            if _is_module(b, seen):
                return True
        elif isinstance(b, str) and b.startswith("torch.nn.") and b.rsplit(".", 1)[-1][:1].isupper():
            return True
    return False


_NOT_BRACKETS = {c: None for c in range(128) if chr(c) not in "()[]{}"}


def _nesting_depth(text: str) -> int:
    depth = best = 0
    brackets = text.translate(_NOT_BRACKETS) if text.isascii() else "".join(c for c in text if c in "()[]{}")
    for ch in brackets:
        if ch in "([{":
            depth += 1
            best = max(best, depth)
        elif ch in ")]}":
            depth = max(0, depth - 1)
    return best


def analyze_source(text: str, path: str = "<stdin>", config: Config | None = None, workspace=None) -> Analysis:
    """Analyse one file's text. Pure apart from `workspace` reads; returns findings, facts and problems."""
    from ..rules import all_rules
    from ..rules.gs001_syntax_error import SyntaxErrorRule

    config = config or Config()
    result = Analysis(path=path)
    source = Source(text)
    reporter = Reporter(path, source, config)
    if len(text) > MAX_BYTES:
        result.problems.append(f"{path}: {len(text):,} characters is over gradsight's limit of {MAX_BYTES:,}; "
                               "the file was not analysed")
        return result
    if "\x00" in text:
        result.problems.append(f"{path}: the file contains NUL bytes (binary?); not analysed")
        return result
    if _nesting_depth(text) > MAX_NESTING:
        result.problems.append(f"{path}: brackets nest more than {MAX_NESTING} deep; not analysed")
        return result
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        SyntaxErrorRule.report(exc, reporter)
        tree = _parse_prefix(text, exc)
        if tree is None:
            result.findings = sorted(reporter.findings.values(), key=sort_key)
            return result
    except (RecursionError, MemoryError, ValueError) as exc:
        result.problems.append(f"{path}: cannot parse ({type(exc).__name__}); not analysed")
        return result

    rules = [r() for r in all_rules() if config.is_enabled(r.code) and r.events]

    def emit(event: Event) -> None:
        for rule in rules:
            if isinstance(event, rule.events):
                try:
                    rule.check(event, reporter)
                except Exception as exc:  # noqa: BLE001 - a rule bug must not take the analysis down
                    result.problems.append(f"internal error in {rule.code} at line "
                                           f"{getattr(event.node, 'lineno', '?')}: {type(exc).__name__}: {exc}")

    scope = build_scope(tree, path, source)
    result.imports = scope.import_records
    reporter.tree = tree
    resolver = workspace.resolver(path, result.dependencies) if workspace is not None else None
    interp = Interpreter(scope, emit, resolver)
    interp.root_path = path
    old_limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(max(old_limit, 10000))
        state = interp.exec_block(tree.body, State())
        scope.env = dict(state.env)
        salt = f"{path}\0{config!r}"
        if workspace is not None:
            salt += "\0" + _import_digests(workspace, scope, path)
        _analyse_definitions(interp, scope, reporter, salt)
        if interp.backward_seen:
            for site, (label, created) in interp.grad_leaves.items():
                if site in interp.reached_sources or site not in interp.cut_sources:
                    continue
                emit(DeadGradEvent(_located(site, source), label, created, (interp.cut_sources[site],)))
    except RecursionError:
        result.problems.append(f"{path}: code nests too deeply for gradsight; analysis stopped early")
    except Exception as exc:  # noqa: BLE001 - the analysis must never take the editor down
        result.problems.append(f"{path}: internal error ({type(exc).__name__}: {exc}); some findings may be missing")
    finally:
        sys.setrecursionlimit(old_limit)
    result.findings = sorted(reporter.findings.values(), key=sort_key)
    result.facts = sorted(interp.facts.values(), key=lambda f: (f.line, f.column))
    return result


def _located(site: tuple, source: Source) -> ast.AST:
    node = ast.Pass()
    node.lineno = site[1]
    node.col_offset = site[2]
    line_text = source.line_text(site[1]).encode("utf-8")
    node.end_lineno = site[1]
    node.end_col_offset = len(line_text.rstrip())
    return node


# Results of analysing one function on its own, reused across analyses of the same file while the user
# types: key -> (findings, facts, grad leaves, cuts, reached sources, saw backward). See `_definition_key`.
_DEF_CACHE: "OrderedDict[str, tuple]" = OrderedDict()
_DEF_CACHE_MAX = 1500  # bounded: each entry holds a function's findings and hover facts


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _definition_keys(scope: ModuleScope, source: Source, salt: str) -> dict[int, str]:
    """A cache key per function and method: its own source, the source of every definition it can reach by
    name (functions, classes, methods called as attributes; transitively), its class's source, the
    module-level code outside definitions, the file's path and the settings (`salt`). An edit inside one
    function therefore changes the keys of that function and of what can reach it, and nothing else.
    Names are read from the source text (comments and strings included): more invalidation, never less."""
    lines = source.lines

    def text(node: ast.AST) -> str:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])  # decorators matter
        return "\n".join(lines[start - 1:node.end_lineno])

    # Positions are part of the key: cached findings and facts carry absolute lines.
    top_level = "\n".join(f"{st.lineno}:{text(st)}" for st in scope.tree.body
                          if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
    module_hash = hashlib.sha1((salt + "\0" + top_level).encode("utf-8", "surrogatepass")).hexdigest()
    nodes: dict[int, tuple[str, set]] = {}  # id -> (hash of its text, identifiers it mentions)
    by_name: dict[str, list[int]] = {}

    def add(name: str, node: ast.AST) -> None:
        body = text(node)
        digest = hashlib.sha1(f"{node.lineno}:{body}".encode("utf-8", "surrogatepass")).hexdigest()
        nodes[id(node)] = (digest, set(_IDENT.findall(body)))
        by_name.setdefault(name, []).append(id(node))

    for name, func in scope.functions.items():
        add(name, func.node)
    for name, info in scope.classes.items():
        # A class stands for its header, its class-level statements and `__init__` (which makes `self`'s
        # attributes); its other methods are separate definitions, reached by name. So an edit in one
        # method does not invalidate every other method of the class.
        skeleton = [text(st) for st in info.node.body
                    if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) or st.name == "__init__"]
        header = lines[info.node.lineno - 1] if 0 < info.node.lineno <= len(lines) else ""
        body = f"{info.node.lineno}:{header}\n" + "\n".join(skeleton)
        digest = hashlib.sha1(body.encode("utf-8", "surrogatepass")).hexdigest()
        nodes[id(info.node)] = (digest, set(_IDENT.findall(body)))
        by_name.setdefault(name, []).append(id(info.node))
        for mname, meth in info.methods.items():
            add(mname, meth.node)

    edges = {nid: {t for name in idents if name in by_name for t in by_name[name]}
             for nid, (_, idents) in nodes.items()}
    reach = _reachability_hashes(nodes, edges)

    def closure_hash(start: int, owner: Optional[int]) -> str:
        # The definition itself comes first: methods of one class can reach the same definitions.
        parts = [nodes[start][0], reach[start]] + ([reach[owner]] if owner is not None else []) + [module_hash]
        return hashlib.sha1("|".join(parts).encode()).hexdigest()

    keys: dict[int, str] = {}
    for func in scope.functions.values():
        keys[id(func.node)] = closure_hash(id(func.node), None)
    for info in scope.classes.values():
        for meth in info.methods.values():
            keys[id(meth.node)] = closure_hash(id(meth.node), id(info.node))
    return keys


def _reachability_hashes(nodes: dict[int, tuple[str, set]], edges: dict[int, set]) -> dict[int, str]:
    """For every definition, a hash of the texts of everything it can reach (itself included).

    Computed once per strongly connected component of the reference graph (Tarjan's algorithm, iterative),
    combining a component's own texts with its successors' hashes, so the cost is linear in the graph.
    Walking the closure from every definition instead is cubic on files where every `forward` mentions
    `forward` (1,000 small modules took minutes)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    comp_of: dict[int, int] = {}
    comps: list[list[int]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(edges[nxt])))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    comp_of[member] = len(comps)
                    comp.append(member)
                    if member == node:
                        break
                comps.append(comp)
    # Tarjan emits components in reverse topological order: successors come first.
    comp_hash: list[str] = []
    for ci, comp in enumerate(comps):
        own = sorted(nodes[m][0] for m in comp)
        succ = sorted({comp_hash[comp_of[t]] for m in comp for t in edges[m] if comp_of[t] != ci})
        comp_hash.append(hashlib.sha1(("".join(own) + "|" + "".join(succ)).encode()).hexdigest())
    return {nid: comp_hash[comp_of[nid]] for nid in nodes}


def _import_digests(workspace, scope: ModuleScope, path: str, depth: int = 2) -> str:
    """Digests of the workspace files this file imports (and what those import, `depth` levels): part of the
    definition-cache key, so a change to an imported helper is seen."""
    out: list[str] = []
    seen: set[str] = set()
    frontier = [(scope, path)]
    for _ in range(depth):
        nxt = []
        for sc, origin in frontier:
            for qual in sorted(set(sc.imports.values())):
                level = len(qual) - len(qual.lstrip("."))
                for module in {qual.lstrip("."), qual.lstrip(".").rpartition(".")[0]}:
                    found = workspace.find(module, level, origin)
                    if found is None or str(found) in seen:
                        continue
                    seen.add(str(found))
                    other = workspace.scope_for(found)
                    digest = workspace.cached_digest(found)
                    out.append(f"{found}:{digest}")
                    if other is not None:
                        nxt.append((other, str(found)))
        frontier = nxt
    return "|".join(sorted(out))


def _analyse_definitions(interp: Interpreter, scope: ModuleScope, reporter: Reporter, salt: str) -> None:
    """Analyse every function and method on its own, with unknown arguments (so the analysis speaks only
    where the facts do not depend on the caller). Each one's results are cached by `_definition_keys`, so
    re-analysing a file after a one-character edit redoes only the edited function and its callers."""
    base = State()
    keys = _definition_keys(scope, scope.source, salt)

    def merge(delta: tuple) -> None:
        findings, facts, leaves, cuts, reached, saw = delta
        for k, f in findings:
            prev = reporter.findings.get(k)
            if prev is None or prev.severity.rank < f.severity.rank:
                reporter.findings[k] = f
        for k, f in facts:
            old = interp.facts.get(k)
            if old is None or ("maybe" in old.label and "maybe" not in f.label):
                interp.facts[k] = f
        for k, v in leaves:
            interp.grad_leaves.setdefault(k, v)
        for k, v in cuts:
            interp.cut_sources.setdefault(k, v)
        interp.reached_sources |= reached
        interp.backward_seen = interp.backward_seen or saw

    def run(func, self_val) -> None:
        key = keys.get(id(func.node))
        cached = _DEF_CACHE.get(key) if key else None
        if cached is not None:
            _DEF_CACHE.move_to_end(key)
            merge(cached)
            return
        # Run with empty result containers (and call memo), so the delta is everything this definition
        # produces on its own, whatever the module-level run already found: a cached delta must not
        # depend on what else happened to be analysed first.
        saved = (reporter.findings, interp.facts, interp.grad_leaves, interp.cut_sources,
                 interp.reached_sources, interp.backward_seen, interp.memo)
        reporter.findings, interp.facts, interp.grad_leaves, interp.cut_sources = {}, {}, {}, {}
        interp.reached_sources, interp.backward_seen, interp.memo = set(), False, {}
        try:
            interp.run_function(func, self_val, [], {}, func.node, base)
            delta = (tuple(reporter.findings.items()), tuple(interp.facts.items()),
                     tuple(interp.grad_leaves.items()), tuple(interp.cut_sources.items()),
                     frozenset(interp.reached_sources), interp.backward_seen)
        finally:
            (reporter.findings, interp.facts, interp.grad_leaves, interp.cut_sources,
             interp.reached_sources, interp.backward_seen, interp.memo) = saved
        merge(delta)
        if key:
            _DEF_CACHE[key] = delta
            if len(_DEF_CACHE) > _DEF_CACHE_MAX:
                _DEF_CACHE.popitem(last=False)

    for func in scope.functions.values():
        run(func, None)
    for info in scope.classes.values():
        self_val = UNKNOWN
        if info.is_module:
            self_val = interp.instantiate(info, [], {}, info.node, base)
        for name, meth in info.methods.items():
            is_static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in meth.node.decorator_list)
            run(meth, None if is_static else self_val)


def _parse_prefix(text: str, exc: SyntaxError) -> Optional[ast.Module]:
    """Analyse what parses: the lines before the syntax error (mid-typing), dropping a dangling block."""
    lines = text.splitlines(keepends=True)
    stop = max(0, (exc.lineno or 1) - 1)
    # Candidate cut points: just before the error, then earlier top-level statement starts. Bounded tries,
    # so a syntax error at the end of a 50,000-line file costs a handful of parses, not thousands.
    candidates = [stop]
    for i in range(stop - 1, 0, -1):
        if len(candidates) >= 6:
            break
        if lines[i][:1] not in (" ", "\t", "\n", "\r", "#", ")", "]", "}") and lines[i].strip():
            candidates.append(i)
    for cut in candidates:
        try:
            return ast.parse("".join(lines[:cut]))
        except SyntaxError:
            continue
        except (RecursionError, MemoryError, ValueError):
            return None
    return None

