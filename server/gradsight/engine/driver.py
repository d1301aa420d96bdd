"""Entry point: parse, build the module scope, interpret, dispatch events to rules. Never raises on user code."""

from __future__ import annotations

import ast
import bisect
import hashlib
import os
import pathlib
import re
import sys
import threading
from collections import OrderedDict
from typing import Iterator, Optional

from ..config import Config
from ..findings import sort_key
from .api import Analysis
from .events import DeadGradEvent, Event
from .interp import Interpreter, ModuleScope
from .query import FileEvent, Query
from ..findings import Edit, Finding, Fix, Related
from .api import StateFact
from .ruleset import RuleSet, default_rules
from .report import LINE_DIGITS, MARK_DIGITS, UNMARK_DIGITS, Line, Reporter, Source, split_lines
from .state import State
from .values import (UNKNOWN, ClassInfo, ClassVal, Fact, FuncVal, GradModeCtx, ModuleRef, OptimizerVal, ParamsVal,
                     PyVal, SeqVal, TensorVal, UnknownVal)

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


def analyze_source(text: str, path: str = "<stdin>", config: Config | None = None, workspace=None,
                   rules: Optional[RuleSet] = None) -> Analysis:
    """Analyse one file's text. Pure apart from `workspace` reads; returns findings, facts and problems.

    Re-analysing a new version of a file analysed recently is incremental but exact: the result is what
    analysing the text from scratch gives (`tests/test_incremental.py`, `tests/test_speed_incremental_parse.py`).
    An edit inside one top-level statement re-parses only that statement (`_reparse`), and every definition
    whose analysis did not run edited code keeps its cached results (`_analyse_definitions`).

    Text that does not parse (mid-typing, most of the time) is recovered at top-level-statement granularity
    (`_chunked`): only the chunks that do not parse on their own are skipped, one GS001 each, and the rest of
    the file is analysed, from the text alone (warm results still equal cold ones). Where the chunking cannot be
    certain, the longest prefix that parses is analysed instead (`_parse_prefix`). While the text stays
    broken, a keystroke re-parses only the chunks it touched."""
    # The rule set is handed in (`engine.ruleset`): the engine imports nothing from `rules/`.
    ruleset = rules if rules is not None else default_rules()
    config = config or Config()
    result = Analysis(path=path)
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
    lines = split_lines(text)
    # Line numbers printed with Arabic-Indic digits (`report.Line`), unless the text itself holds such digits.
    mark = not _LINE_DIGITS.search(text)
    source = Source(text, lines, mark=mark)
    reporter = Reporter(path, source, config)
    previous = _file_state(path)
    tree = None
    prefix = False  # analysing only the longest prefix that parses (`_parse_prefix`)
    chunked: Optional[_Chunked] = None
    _FAILED.hint = None
    if previous is not None and not previous.broken:
        tree = _reparse(previous, text, lines)
    if tree is not None:
        STATS["spliced"] += 1
    elif previous is not None and _RECOVER:
        # The edited statements do not parse on their own, or the previous version did not parse: chunk the text
        # (`_chunked`), reusing the previous version's parses of unchanged chunks. A chunk that fails means the
        # text does not parse; when none does, their statements are `ast.parse(text)`'s.
        chunked = _chunked(text, lines, previous, _FAILED.hint)
        if chunked is not None:
            STATS["chunked"] += 1
            if not chunked.failed:
                tree = chunked.tree
    if tree is None and (chunked is None or not chunked.failed):
        chunked = None
        STATS["parsed"] += 1
        try:
            tree = ast.parse(text, filename=path)
        except SyntaxError as exc:
            # (where the warm attempt above was not certain, neither is this one: the same text)
            chunked = _chunked(text, lines, None) if _RECOVER and previous is None else None
            if chunked is None or not chunked.failed:  # not chunked with certainty: analyse the prefix
                chunked = None
                prefix = True
                ruleset.report_syntax_error(exc, reporter)
                tree = _parse_prefix(text, exc)
                if tree is None:
                    result.findings = sorted((_plain(f) for f in reporter.findings.values()), key=sort_key)
                    return result
        except (RecursionError, MemoryError, ValueError) as exc:
            result.problems.append(f"{path}: cannot parse ({type(exc).__name__}); not analysed")
            return result
    if chunked is not None and chunked.failed:
        for first, last, msg, line, col in chunked.failed:
            ruleset.report_skipped(reporter, msg, min(line, len(lines)), col, first, last)
        tree = chunked.tree
        memo = _remember(path, text, lines, tree, previous, chunked)
    elif prefix:
        memo = {}  # a prefix's tree is not remembered as this text's tree
    else:
        memo = _remember(path, text, lines, tree, previous, chunked)

    rules = ruleset.active(config)

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
    used = _RecordingDict()
    resolver = workspace.resolver(path, used) if workspace is not None else None
    interp = _TrackingInterpreter(scope, emit, resolver)
    interp.root_path = path
    interp.home = scope
    # Names the interpreter cannot resolve may be asked of jedi (`libinfer`); the workspace owns its cache.
    interp.libinfer = workspace.libinfer if workspace is not None else None
    old_limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(max(old_limit, 10000))
        salt = f"{path}\0{config!r}\0{mark}"
        if workspace is not None:
            salt += "\0" + _import_digests(workspace, scope, path)
        digests = _Digests(scope, lines, text, memo)
        shape_key = hashlib.sha1(f"{salt}\0{digests.shape()}".encode("utf-8", "surrogatepass")).hexdigest()
        module_deps, free = _run_module(interp, scope, reporter, digests, shape_key, used)
        # Module-level values with line numbers in them: definitions' results may hold them too, so they are
        # then keyed by where everything is (reused only while no line moves).
        where = "" if free else repr([(s, e) for s, e, _ in digests.frame()])
        module_key = hashlib.sha1(f"{shape_key}\0{module_deps!r}\0{where}".encode("utf-8", "surrogatepass")).hexdigest()
        _analyse_definitions(interp, scope, reporter, module_key, digests, used)
        if interp.backward_seen:
            for site, (label, created) in interp.grad_leaves.items():
                if site in interp.reached_sources or site not in interp.cut_sources:
                    continue
                emit(DeadGradEvent(_located(site, source), label, created, (interp.cut_sources[site],)))
        if any(FileEvent in rule.events for rule in rules):
            # Whole-file checks run on every analysis (never cached per unit), with one shared query.
            emit(FileEvent(tree, Query(tree, scope.imports, scope.classes)))
    except RecursionError:
        result.problems.append(f"{path}: code nests too deeply for gradsight; analysis stopped early")
    except Exception as exc:  # noqa: BLE001 - the analysis must never take the editor down
        result.problems.append(f"{path}: internal error ({type(exc).__name__}: {exc}); some findings may be missing")
    finally:
        sys.setrecursionlimit(old_limit)
    result.dependencies = dict(used)
    result.findings = sorted((_plain(f) for f in reporter.findings.values()), key=sort_key)
    result.facts = sorted((_plain(f) for f in interp.facts.values()), key=lambda f: (f.line, f.column))
    return result


class _TrackingInterpreter(Interpreter):
    """The interpreter, recording which of this file's functions an analysis ran (`track`): a cached result
    stays valid while the text of every function it ran is unchanged (see `_analyse_definitions`)."""

    track: Optional[set] = None
    home: Optional[ModuleScope] = None  # the analysed file's scope (functions of imported files are not tracked)

    def run_function(self, func, *args, **kwargs):
        if self.track is not None and func.module is self.home:
            self.track.add(func.node)
        return super().run_function(func, *args, **kwargs)


# ---------------------------------------------------------------- incremental parsing

# The last analysed version of recently analysed files: path -> _FileState. Bounded by entries and by text size
# (a parsed 5,000-line file holds ~8 MiB of syntax tree).
_FILE_CACHE: "OrderedDict[str, _FileState]" = OrderedDict()
_FILE_CACHE_MAX = 3
_FILE_CACHE_MAX_CHARS = 800_000
_FILE_LOCK = threading.Lock()


class _FileState:
    __slots__ = ("text", "lines", "tree", "starts", "digests", "broken", "parsed", "errors")

    def __init__(self, text: str, lines: list, tree: ast.Module, digests: dict, chunked: "Optional[_Chunked]" = None):
        self.text, self.lines, self.tree = text, lines, tree
        self.starts = [_first_line(st) for st in tree.body]  # each top-level statement's first line
        self.digests = digests  # node -> digest of its text and position (see `_Digests`)
        # A text that does not parse: `tree` holds only the chunks that do (`_chunked`), and is no base for
        # `_reparse`. `parsed`/`errors`: its chunks' parses, reused by the next version's `_chunked`.
        self.broken = bool(chunked is not None and chunked.failed)
        self.parsed = chunked.parsed if chunked is not None else None
        self.errors = chunked.errors if chunked is not None else None


def _first_line(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", None)
    return min([node.lineno] + [d.lineno for d in decorators]) if decorators else node.lineno


def _file_state(path: str) -> Optional[_FileState]:
    with _FILE_LOCK:
        state = _FILE_CACHE.get(path)
        if state is not None:
            _FILE_CACHE.move_to_end(path)
        return state


def _remember(path: str, text: str, lines: list, tree: ast.Module, previous: Optional[_FileState],
              chunked: "Optional[_Chunked]" = None) -> dict:
    """Keep this version as the file's latest; returns the digest memo to use (shared with the previous version:
    nodes the incremental parse reused keep their digests)."""
    digests = previous.digests if previous is not None else {}
    if path.startswith("<"):
        return digests  # "<stdin>" and friends: no identity across calls
    with _FILE_LOCK:
        _FILE_CACHE[path] = _FileState(text, lines, tree, digests, chunked)
        _FILE_CACHE.move_to_end(path)
        total = sum(len(s.text) for s in _FILE_CACHE.values())
        while len(_FILE_CACHE) > 1 and (len(_FILE_CACHE) > _FILE_CACHE_MAX or total > _FILE_CACHE_MAX_CHARS):
            _, dropped = _FILE_CACHE.popitem(last=False)
            total -= len(dropped.text)
    return digests


def _boundary_ok(body: list, starts: list, lines: list, k: int) -> bool:
    """Does top-level statement `k` start a fresh logical line at column 0 (so the text before it parses on its
    own and the text from it on does too)? Not after a backslash continuation, not sharing a line (`a; b`)."""
    if k == 0:
        return True
    if k >= len(body):
        return True
    start = starts[k]
    if body[k - 1].end_lineno >= start or start < 2:
        return False
    first = lines[start - 1]
    stmt = body[k]
    if getattr(stmt, "decorator_list", None):
        if not first.startswith("@"):
            return False
    elif stmt.col_offset != 0 or not first[:1] or first[:1].isspace():
        return False
    return not lines[start - 2].endswith("\\")


# GRADSIGHT_NO_SHIFT=1 turns off what makes edits that add or remove lines incremental (the spliced parse with a
# shifted tail, and reusing results of definitions that only moved): for comparisons (bench/bench_typing.py).
_SHIFT = os.environ.get("GRADSIGHT_NO_SHIFT", "") in ("", "0")
# Counters for tests and benchmarks: parses spliced, full or by chunks (`_chunked`: text that does not parse), cached
# definition results moved or not movable.
STATS = {"spliced": 0, "parsed": 0, "chunked": 0, "moved": 0, "not_moved": 0}


# The chunk a failed `_reparse` could not parse, with its error: the same text `_chunked` may parse next (per thread).
_FAILED = threading.local()


def _reparse(previous: _FileState, text: str, lines: list) -> Optional[ast.Module]:
    """The syntax tree of `text`, re-parsing only the top-level statements an edit touched and reusing the
    previous version's other statements (shared, never mutated; those after an edit that added or removed lines
    are copied with their positions shifted, `_shifted`); None where that is not certain to equal
    `ast.parse(text)`: an edit across an unusual statement boundary, or a changed region that does not parse on
    its own."""
    old = previous.lines
    n = len(lines)
    if "barry_as_FLUFL" in text:
        return None
    if len(old) != n:
        return _reparse_shifted(previous, text, lines) if _SHIFT else None
    body, starts = previous.tree.body, previous.starts
    if previous.text == text:
        return previous.tree
    a = 0
    while a < n and old[a] == lines[a]:
        a += 1
    if a == n:
        return previous.tree  # only line endings differ: same tree
    b = n - 1
    while b > a and old[b] == lines[b]:
        b -= 1
    if not body:
        return None
    # Changed lines are a+1 .. b+1 (1-based). The chunk runs from the start of the first statement touched
    # (line 1 for the first) to the line before the next untouched statement (the end of the file for the last).
    i = max(0, bisect.bisect_right(starts, a + 1) - 1)
    j = max(0, bisect.bisect_right(starts, b + 1) - 1)
    if not (_boundary_ok(body, starts, old, i) and _boundary_ok(body, starts, old, j + 1)):
        return None
    first = starts[i] if i > 0 else 1
    last = starts[j + 1] - 1 if j + 1 < len(body) else n
    if j + 1 < len(body) and lines[last - 1].endswith("\\"):
        return None
    part = _parse_lines(lines, first, last)
    if part is None:
        return None
    return ast.Module(body=body[:i] + part.body + body[j + 1:], type_ignores=[])


def _parse_lines(lines: list, first: int, last: int) -> Optional[ast.Module]:
    """Parse lines `first`..`last` (1-based) alone, padded with blank lines so positions are the file's. On a
    syntax error the failed chunk is left in `_FAILED.hint` for the syntax-error recovery, which would otherwise
    parse it again."""
    chunk = "\n" * (first - 1) + "\n".join(lines[first - 1:last]) + ("\n" if last < len(lines) else "")
    try:
        return ast.parse(chunk)
    except SyntaxError as exc:
        _FAILED.hint = ((chunk[first - 1:], first), (exc.msg, exc.lineno or first, exc.offset or 1))
    except (ValueError, RecursionError, MemoryError):
        pass
    return None


def _reparse_shifted(previous: _FileState, text: str, lines: list) -> Optional[ast.Module]:
    """`_reparse` for an edit that changed the number of lines: the statements before the edit are shared, the
    ones it touched re-parsed, the ones after it copied `delta` lines down (or up)."""
    old, body, starts = previous.lines, previous.tree.body, previous.starts
    n_old, n = len(old), len(lines)
    if not body or n_old < 2:
        return None
    p = 0
    top = min(n_old, n)
    while p < top and old[p] == lines[p]:
        p += 1
    q = 0
    while q < top - p and old[n_old - 1 - q] == lines[n - 1 - q]:
        q += 1
    delta = n - n_old
    # Old lines p+1 .. n_old-q (1-based) were replaced; widened by the line before, so that lines inserted
    # between two statements re-parse the one above them with them.
    a = max(1, p)
    b = max(a, n_old - q)
    i = max(0, bisect.bisect_right(starts, a) - 1)
    j = max(0, bisect.bisect_right(starts, b) - 1)
    if not (_boundary_ok(body, starts, old, i) and _boundary_ok(body, starts, old, j + 1)):
        return None
    first = starts[i] if i > 0 else 1
    last_old = starts[j + 1] - 1 if j + 1 < len(body) else n_old
    last = last_old + delta if j + 1 < len(body) else n
    if last < first - 1 or (j + 1 < len(body) and (last_old < b or last < 1 or lines[last - 1].endswith("\\"))):
        return None
    part = _parse_lines(lines, first, last)
    if part is None:
        return None
    if part.body and _first_line(part.body[0]) < first:
        return None
    tail = body[j + 1:]
    if delta:
        memo = previous.digests
        shifted = []
        for st in tail:
            new = _shifted(st, delta)
            _carry_digests(memo, st, new)
            shifted.append(new)
        tail = shifted
    return ast.Module(body=body[:i] + part.body + tail, type_ignores=[])


def _shifted(node: ast.AST, delta: int) -> ast.AST:
    """A copy of `node` with every line number moved by `delta` (the original is shared: never mutated)."""
    cls = type(node)
    new = cls.__new__(cls)
    d = new.__dict__
    d.update(node.__dict__)
    if "lineno" in d:
        d["lineno"] += delta
        if d.get("end_lineno") is not None:
            d["end_lineno"] += delta
    for field in cls._fields:
        v = d.get(field)
        if type(v) is list:
            d[field] = [_shifted(x, delta) if isinstance(x, ast.AST) and x.__dict__ else x for x in v]
        elif isinstance(v, ast.AST) and v.__dict__:
            d[field] = _shifted(v, delta)
    return new


def _carry_digests(memo: dict, old: ast.AST, new: ast.AST) -> None:
    """Text digests do not depend on position: a shifted copy keeps its original's (and so do its methods')."""
    digest = memo.get(old)
    if digest is not None:
        memo[new] = digest
    if isinstance(old, ast.ClassDef):
        skeleton = memo.get((old, "skeleton"))
        if skeleton is not None:
            memo[(new, "skeleton")] = skeleton
        for a, b in zip(old.body, new.body):
            digest = memo.get(a)
            if digest is not None:
                memo[b] = digest


_ASCII_DIGITS = re.compile("[0-9]+")
_LINE_DIGITS = re.compile(f"[{LINE_DIGITS}]+")


class _Relocation:
    """Moves cached results from the positions of the version they were computed in (`old`, a `_Digests.frame`)
    to the current one (`new`), or says it cannot (None), so that they equal what analysing afresh gives.

    The parts of the two frames correspond one to one (equal shapes). A line in a part whose text is unchanged
    moves with it; a line in an edited part, or between parts, has no image, and results that hold one are not
    reused. Line numbers are found where they are: `report.Line` values (what `Source.span` gives), sites
    (path, line, column) and facts of this file, and line numbers printed into messages, which `Line` prints
    with Arabic-Indic digits. Any other number in a message that could be a moved line (ASCII digits, e.g. a
    number a rule printed from `node.lineno`) makes the results not reusable, as do module-parameter entries
    (`ParamCut`, `ParamReach`: the interpreter orders those by the text of their sites). This relies on the
    analysis treating positions as labels: equal, ordered, printed, never computed with across parts."""

    _pairs: "OrderedDict[tuple, _Relocation]" = OrderedDict()

    @classmethod
    def between(cls, old: tuple, new: tuple, path: str) -> "_Relocation":
        key = (id(old), id(new), path)
        found = cls._pairs.get(key)
        if found is None or found.old is not old or found.new is not new:
            found = cls._pairs[key] = cls(old, new, path)
            while len(cls._pairs) > 8:
                cls._pairs.popitem(last=False)
        return found

    def __init__(self, old: tuple, new: tuple, path: str):
        self.old, self.new, self.path = old, new, path
        self.ok = len(old) == len(new)
        parts = []  # (old first line, old last line, shift or None)
        low = float("inf")
        if self.ok:
            for (s0, e0, t0), (s1, e1, t1) in zip(old, new):
                same = t0 == t1 and e0 - s0 == e1 - s1
                if s1 != s0:  # (an edited part that did not move is not read by what is reused: see the keys)
                    low = min(low, s0)
                parts.append((s0, e0, s1 - s0 if same else None))
        self.parts = sorted(parts)
        self.starts = [p[0] for p in self.parts]
        self.low = low  # every line above this one is where it was

    def line(self, n: int) -> Optional[int]:
        """Where old line `n` is now; None where it has no certain image."""
        if n < self.low:
            return n
        k = bisect.bisect_right(self.starts, n) - 1
        shift = None
        for s0, e0, d in self.parts[max(0, k - 3):k + 1]:  # parts overlap only where statements share a line
            if s0 <= n <= e0:
                if d is None or (shift is not None and d != shift):
                    return None
                shift = d
        return None if shift is None else n + shift

    # ---- values holding positions
    def pos(self, v):
        """A line field: a `Line` moves; a plain number must be one that does not move."""
        if type(v) is Line:
            n = self.line(v)
            if n is None:
                raise _Unmovable
            return Line(n)
        if v is None or (isinstance(v, int) and v < self.low):
            return v
        raise _Unmovable

    def text(self, s: str) -> str:
        for m in _ASCII_DIGITS.finditer(s):
            if int(m.group()) >= self.low:
                raise _Unmovable
        if not _LINE_DIGITS.search(s):
            return s

        def sub(m) -> str:
            n = self.line(int(m.group().translate(UNMARK_DIGITS)))
            if n is None:
                raise _Unmovable
            return str(n).translate(MARK_DIGITS)

        return _LINE_DIGITS.sub(sub, s)

    def site(self, site):
        if type(site) is not tuple or len(site) != 3:
            raise _Unmovable  # ParamCut, ParamReach and anything unknown
        if site[0] != self.path:
            return site
        n = self.line(site[1]) if isinstance(site[1], int) else None
        if n is None:
            raise _Unmovable
        return (site[0], n, site[2])

    def fact(self, f):
        if f is None:
            return None
        if type(f) is not Fact:
            raise _Unmovable
        parent = self.fact(f.parent)
        if f.path is not None and f.path != self.path:
            return Fact(f.line, f.column, self.text(f.text), parent, f.path)
        if f.path is not None:
            n = self.line(f.line) if isinstance(f.line, int) else None
            if n is None:
                raise _Unmovable
            line = Line(n) if type(f.line) is Line else n
        else:
            line = self.pos(f.line)
        return Fact(line, f.column, self.text(f.text), parent, f.path)

    def finding(self, f):
        if f.extra:
            raise _Unmovable
        related = tuple(Related(r.path, self.pos(r.line) if r.path == self.path else r.line, r.column,
                                self.text(r.message)) for r in f.related)
        fix = f.fix
        if fix is not None:
            fix = Fix(self.text(fix.title), fix.applicability,
                      tuple(Edit(self.pos(e.line), e.column, self.pos(e.end_line), e.end_column, self.text(e.new_text))
                            for e in fix.edits))
        return Finding(f.path, self.pos(f.line), f.column, self.pos(f.end_line), f.end_column, f.code,
                       self.text(f.name), f.severity, self.text(f.message), related, fix)

    def state_fact(self, f):
        return StateFact(self.pos(f.line), f.column, self.pos(f.end_line), f.end_column, self.text(f.name),
                         self.text(f.summary), self.text(f.label),
                         tuple((self.pos(line), self.text(t)) for line, t in f.chain), f.transition)

    def finding_key(self, k: tuple) -> tuple:  # (code, line, column)
        return (k[0], self.pos(k[1])) + tuple(k[2:])

    def span_key(self, k: tuple) -> tuple:  # (line, column, end line, end column)
        return (self.pos(k[0]), k[1], self.pos(k[2])) + tuple(k[3:])

    def delta(self, delta: tuple) -> Optional[tuple]:
        """A unit's results (see `_isolated`) at the current positions, or None."""
        if not self.ok:
            return None
        if self.low == float("inf"):
            return delta
        findings, facts, leaves, cuts, reached, saw, files = delta
        try:
            return (tuple((self.finding_key(k), self.finding(f)) for k, f in findings),
                    tuple((self.span_key(k), self.state_fact(f)) for k, f in facts),
                    tuple((self.site(k), (self.text(label), self.fact(created))) for k, (label, created) in leaves),
                    tuple((self.site(k), self.fact(v)) for k, v in cuts),
                    frozenset(self.site(x) for x in reached), saw, files)
        except (_Unmovable, TypeError, ValueError, AttributeError):
            return None


class _Unmovable(Exception):
    """Results that `_Relocation` cannot move with certainty."""


def _plain(f):
    """A finding or fact as it leaves the engine: ASCII digits and plain ints (see `report.Line`)."""
    cached = _PLAIN_OF.get(id(f))
    if cached is not None and cached[0] is f:
        return cached[1]
    if isinstance(f, Finding):
        fix = f.fix
        if fix is not None:
            fix = Fix(_ascii(fix.title), fix.applicability,
                      tuple(Edit(int(e.line), e.column, int(e.end_line), e.end_column, _ascii(e.new_text))
                            for e in fix.edits))
        out = Finding(f.path, int(f.line), f.column, int(f.end_line), f.end_column, f.code, _ascii(f.name),
                      f.severity, _ascii(f.message),
                      tuple(Related(r.path, int(r.line), r.column, _ascii(r.message)) for r in f.related), fix,
                      f.extra)
    else:
        out = StateFact(int(f.line), f.column, int(f.end_line), f.end_column, _ascii(f.name), _ascii(f.summary),
                        _ascii(f.label), tuple((int(line), _ascii(t)) for line, t in f.chain), f.transition)
    if len(_PLAIN_OF) > 50_000:
        _PLAIN_OF.clear()
    _PLAIN_OF[id(f)] = (f, out)
    return out


_PLAIN_OF: dict = {}


def _ascii(s: str) -> str:
    return s.translate(UNMARK_DIGITS) if _LINE_DIGITS.search(s) else s


def _located(site: tuple, source: Source) -> ast.AST:
    node = ast.Pass()
    node.lineno = site[1]
    node.col_offset = site[2]
    line_text = source.line_text(site[1]).encode("utf-8")
    node.end_lineno = site[1]
    node.end_col_offset = len(line_text.rstrip())
    return node


# Results of analysing one function on its own, reused across analyses while the user types:
# key -> (dependencies, whole-text digest or None, delta). See `_analyse_definitions`.
_DEF_CACHE: "OrderedDict[str, tuple]" = OrderedDict()
_DEF_CACHE_MAX = 4000  # bounded: each entry holds a function's findings and hover facts


def _cache_put(key: str, entry: tuple) -> None:
    """Store in `_DEF_CACHE` and evict the oldest entries. Analyses run in several threads (the language
    server's workers): each step is atomic, and a key another thread evicted meanwhile is not an error."""
    _DEF_CACHE[key] = entry
    _cache_touch(key)
    while len(_DEF_CACHE) > _DEF_CACHE_MAX:
        try:
            _DEF_CACHE.popitem(last=False)
        except KeyError:
            break


def _cache_touch(key: str) -> None:
    try:
        _DEF_CACHE.move_to_end(key)
    except KeyError:
        pass


class _Digests:
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
        reused, their line numbers are moved to the current positions (`_frame`, `_Relocation`)."""
        digest = self.memo.get(node)
        if digest is None:
            start = _first_line(node)
            body = "\n".join(self.lines[start - 1:node.end_lineno])
            digest = self.memo[node] = hashlib.sha1(body.encode("utf-8", "surrogatepass")).hexdigest()
        return digest

    def frame(self) -> tuple:
        """Where everything is: (first line, last line, text digest) of each top-level statement, except that a
        class is its header plus each statement of its body. Results cached under one frame are moved to another
        by `_Relocation` (same sequence of parts: the shape is in every cache key)."""
        if self._frame is None:
            out = []
            for st in self.scope.tree.body:
                if isinstance(st, ast.ClassDef) and st.body:
                    start = _first_line(st)
                    stop = max(st.lineno, _first_line(st.body[0]) - 1)
                    head = "\n".join(self.lines[start - 1:stop])
                    out.append((start, stop, hashlib.sha1(head.encode("utf-8", "surrogatepass")).hexdigest()))
                    for sub in st.body:
                        out.append((_first_line(sub), sub.end_lineno, self.node(sub)))
                else:
                    out.append((_first_line(st), st.end_lineno, self.node(st)))
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

    def _skeleton(self, cls: ast.ClassDef) -> str:
        key = (cls, "skeleton")
        digest = self.memo.get(key)
        if digest is None:
            start = _first_line(cls)
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
            self._starts = [_first_line(st) for st in self.scope.tree.body]
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


class _RecordingDict(dict):
    """`Analysis.dependencies`: the workspace files read; also logs them per cached unit (`log`)."""

    log: Optional[dict] = None

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        if self.log is not None:
            self.log[key] = value


def _import_digests(workspace, scope: ModuleScope, path: str, depth: int = 2) -> str:
    """Digests of the workspace files this file imports (and what those import, `depth` levels): part of the
    definition-cache key, so a change to an imported helper is seen."""
    out: list[str] = []
    # Not the file itself (a module it imports may import it back): its own text is in every cache key already,
    # and its digest here would change with every keystroke and invalidate every cached definition.
    try:
        seen: set[str] = {str(pathlib.Path(path).resolve())}
    except (OSError, ValueError, RuntimeError):
        seen = set()
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


def _merge(interp: Interpreter, reporter: Reporter, used: "_RecordingDict", delta: tuple) -> None:
    """Add one unit's results (see `_isolated`) to the file's, as if it had just run."""
    findings, facts, leaves, cuts, reached, saw, files = delta
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
    for k, v in files:
        dict.__setitem__(used, k, v)


def _isolated(interp: Interpreter, reporter: Reporter, used: "_RecordingDict", optimized: dict, body):
    """Run `body()` with empty per-unit state (result containers, call memo, instance cache; the optimizer
    bookkeeping `optimized`), so what it produces does not depend on what ran before it. Returns (its value,
    its results as a delta for `_merge`, the functions it ran, whether a rule read the whole tree)."""
    saved = (reporter.findings, interp.facts, interp.grad_leaves, interp.cut_sources, interp.reached_sources,
             interp.backward_seen, interp.memo, interp.init_cache, interp.optimized_modules, interp.track, used.log)
    reporter.findings, interp.facts, interp.grad_leaves, interp.cut_sources = {}, {}, {}, {}
    interp.reached_sources, interp.backward_seen, interp.memo, interp.init_cache = set(), False, {}, {}
    interp.optimized_modules = dict(optimized)
    touched: set = set()
    files: dict = {}
    interp.track, used.log = touched, files
    reads = reporter.tree_reads
    try:
        value = body()
        delta = (tuple(reporter.findings.items()), tuple(interp.facts.items()),
                 tuple(interp.grad_leaves.items()), tuple(interp.cut_sources.items()),
                 frozenset(interp.reached_sources), interp.backward_seen, tuple(files.items()))
    finally:
        (reporter.findings, interp.facts, interp.grad_leaves, interp.cut_sources, interp.reached_sources,
         interp.backward_seen, interp.memo, interp.init_cache, interp.optimized_modules, interp.track,
         used.log) = saved
    return value, delta, touched, reporter.tree_reads != reads


_PLAIN = (UnknownVal, PyVal, ModuleRef, TensorVal, GradModeCtx, ParamsVal, OptimizerVal)


def _env_spec(env: dict, scope: ModuleScope) -> Optional[tuple]:
    """Module-level values in a form that can be re-bound to a later version's scope, or None where a value
    holds something of this version's scope other than a top-level function or class (then module-level code
    is simply run again)."""
    def plain(v) -> bool:
        if type(v) in _PLAIN:
            return True
        return type(v) is SeqVal and all(plain(x) for x in v.items)

    out = []
    for name, v in env.items():
        if type(v) is FuncVal:
            reg = scope.functions.get(v.key)
            if v.owner is not None or v.module is not scope or reg is None or reg.node is not v.node:
                return None
            out.append((name, "f", v.key, v.node.lineno, v.node.col_offset))
        elif type(v) is ClassVal:
            info = scope.classes.get(getattr(v.info, "name", None))
            if info is None or info is not v.info:
                return None
            out.append((name, "c", info.name, info.node.lineno, info.node.col_offset))
        elif plain(v):
            out.append((name, "v", v))
        else:
            return None
    return tuple(out)


def _rebind(spec: tuple, scope: ModuleScope, move=None) -> Optional[dict]:
    """`spec` (see `_env_spec`) as values of this version's scope; `move` maps the line numbers of the version
    it was made in to this one's (`_Relocation.line`)."""
    env = {}
    for item in spec:
        name, kind = item[0], item[1]
        if kind == "v":
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


def _run_module(interp: Interpreter, scope: ModuleScope, reporter: Reporter, digests: "_Digests", shape_key: str,
                used: "_RecordingDict") -> tuple:
    """Interpret module-level code, or reuse its results: they depend on the file's shape (module-level code,
    class skeletons, the names of definitions: `shape_key`) and the functions it ran, and are moved to the
    current positions (`_Relocation`) where the values it leaves hold no line numbers. Returns the dependencies
    and whether the values are position-free (both for the definitions' cache keys)."""
    key = "module\0" + shape_key
    entry = _DEF_CACHE.get(key)
    if entry is not None:
        deps, whole, delta, spec, optimized, frame, free = entry
        if (whole is None or whole == digests.whole()) and digests.valid(deps):
            env = None
            if frame is digests.frame() or frame == digests.frame():
                env = _rebind(spec, scope)
            elif free and _SHIFT:
                move = _Relocation.between(frame, digests.frame(), scope.path)
                moved = move.delta(delta)
                if moved is not None:
                    env = _rebind(spec, scope, move.line)
                    if env is not None:
                        delta = moved
                        _cache_put(key, (deps, whole, delta, spec, optimized, digests.frame(), free))
            if env is not None:
                _cache_touch(key)
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
        _cache_put(key, (deps, digests.whole() if tree_read else None, delta, spec, dict(optimized), digests.frame(),
                         free))
    return deps, free


def _analyse_definitions(interp: Interpreter, scope: ModuleScope, reporter: Reporter, module_key: str,
                         digests: _Digests, used: _RecordingDict) -> None:
    """Analyse every function and method on its own, with unknown arguments (so the analysis speaks only
    where the facts do not depend on the caller).

    Each one runs in isolation (empty result containers, call memo and instance cache, the module-level
    optimizer bookkeeping), so its results do not depend on what else was analysed first, and are cached under
    its own text plus `module_key` (settings, imported files, the file's shape, module-level code and the
    functions module-level code ran, and where module-level code is if its values hold line numbers). A cached
    result is reused while every function its analysis ran (callees, `__init__` of instantiated classes,
    `forward` of called modules; the enclosing definition for nested functions) still has the same text, and,
    if a rule looked at the whole tree, while the whole text is the same; where lines were inserted or removed
    above what it ran, its line numbers are moved (`_Relocation`; where that cannot be certain, it is analysed
    again). So a keystroke re-analyses only what ran the edited code."""
    base = State()
    module_optimized = dict(interp.optimized_modules)

    def merge(delta: tuple) -> None:
        _merge(interp, reporter, used, delta)

    def isolated(body):
        return _isolated(interp, reporter, used, module_optimized, body)

    def lookup(key: str) -> Optional[tuple]:
        entry = _DEF_CACHE.get(key)
        if entry is None:
            return None
        deps, whole, delta, frame = entry
        if (whole is not None and whole != digests.whole()) or not digests.valid(deps):
            return None
        current = digests.frame()
        if frame is not current and frame != current:
            if not _SHIFT:
                return None
            move = _Relocation.between(frame, current, scope.path)
            delta = move.delta(delta)
            if delta is None:
                STATS["not_moved"] += 1
                return None
            if move.low != float("inf"):
                STATS["moved"] += 1
            _cache_put(key, (deps, whole, delta, current))
        else:
            _cache_touch(key)
        return delta

    def store(key: str, touched: set, tree_read: bool, delta: tuple) -> None:
        _cache_put(key, (digests.deps(touched), digests.whole() if tree_read else None, delta, digests.frame()))

    def unit_key(qual: tuple, node: ast.AST) -> str:
        return hashlib.sha1(f"{module_key}\0{qual!r}\0{digests.node(node)}".encode("utf-8", "surrogatepass")).hexdigest()

    for name, func in scope.functions.items():
        key = unit_key(("f", name), func.node)
        cached = lookup(key)
        if cached is None:
            _, cached, touched, tree_read = isolated(
                lambda f=func: interp.run_function(f, None, [], {}, f.node, base))
            touched.add(func.node)
            store(key, touched, tree_read, cached)
        merge(cached)
    for cname, info in scope.classes.items():
        instance = None  # (self value, functions its __init__ ran, tree read): made when a method needs it
        for name, meth in info.methods.items():
            key = unit_key(("m", cname, name), meth.node)
            cached = lookup(key)
            if cached is None:
                is_static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in meth.node.decorator_list)
                extra: set = set()
                extra_read = False
                self_val = None
                if not is_static:
                    if instance is None:
                        if info.is_module:
                            value, _, inst_touched, inst_read = isolated(
                                lambda: interp.instantiate(info, [], {}, info.node, base))
                            instance = (value, inst_touched, inst_read)
                        else:
                            instance = (UNKNOWN, set(), False)
                    self_val, extra, extra_read = instance
                _, cached, touched, tree_read = isolated(
                    lambda m=meth, sv=self_val: interp.run_function(m, sv, [], {}, m.node, base))
                touched |= extra
                touched.add(meth.node)
                store(key, touched, tree_read or extra_read, cached)
            merge(cached)
    digests.prune()


def _parse_prefix(text: str, exc: SyntaxError) -> Optional[ast.Module]:
    """Analyse what parses: the lines before the syntax error (mid-typing), dropping a dangling block. The
    fallback of syntax-error recovery, where `_chunked` cannot cut the text with certainty."""
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



# ---------------------------------------------------------------- syntax-error recovery

# GRADSIGHT_NO_RECOVER=1 turns recovery off (today's prefix analysis on every syntax error): for comparisons.
_RECOVER = os.environ.get("GRADSIGHT_NO_RECOVER", "") in ("", "0")
_CONTINUES = re.compile(r"(?:else|elif|except|finally)\b")  # a column-0 line that continues the statement above
_DEFINES = re.compile(r"(?:def|class|async[ \t\f]+def)\b")  # can never stand inside brackets
_QUOTES = re.compile(r"#|'''|\"\"\"|'|\"|[()\[\]{}]|\\")
_STRING_END = {d: re.compile(pattern) for d, pattern in (
    ("'", r"(?:[^'\\]|\\.)*'"), ('"', r'(?:[^"\\]|\\.)*"'),
    ("'''", r"(?:[^\\]|\\.)*?'''"), ('"""', r'(?:[^\\]|\\.)*?"""'))}
_NOT_CODE = " \t\x0c#)]}\\"  # first characters of lines that start no chunk (a lone backslash joins the next line)
_PREFIXES = {"r", "u", "b", "f", "t", "br", "rb", "fr", "rf", "tr", "rt"}


class _Unsure(Exception):
    """The text holds something the chunker cannot read with certainty: fall back to the prefix analysis."""


class _Chunked:
    """The outcome of `_chunked`: the module made of the chunks that parse (`tree`), the chunks that do not
    (`failed`: first line, last line, message, error line, error column), and the parses to reuse next time."""

    __slots__ = ("tree", "failed", "parsed", "errors")

    def __init__(self, tree: ast.Module, failed: list, parsed: dict, errors: dict):
        self.tree, self.failed, self.parsed, self.errors = tree, failed, parsed, errors


def _candidates(lines: list) -> list:
    """Lines (1-based) where a top-level chunk may start, by the text alone: line 1, and every line that begins
    at column 0 with code (not blank, not a comment, not a closing bracket or backslash), does not continue a compound
    statement (`else`, `elif`, `except`, `finally`), does not follow a line ending in a backslash, and is not
    preceded by a decorator (the nearest column-0 code line above it does not start with `@`)."""
    out = [1]
    above = ""  # first character of the nearest column-0 code line so far
    prev = lines[0] if lines else ""
    if prev[:1] and prev[:1] not in _NOT_CODE:
        above = prev[:1]
    for k in range(1, len(lines)):
        line = lines[k]
        c = line[:1]
        if not c or c in _NOT_CODE:
            prev = line
            continue
        if above != "@" and not prev.endswith("\\") and not ((c == "e" or c == "f") and _CONTINUES.match(line)):
            out.append(k + 1)
        above = c
        prev = line
    return out


def _chunk_text(lines: list, first: int, last: int) -> str:
    """Lines first..last (1-based), to be parsed padded with `first - 1` newlines (see `_parse_chunk`)."""
    return "\n".join(lines[first - 1:last]) + ("\n" if last < len(lines) else "")


def _scan_end(lines: list, first: int, cands: list) -> int:
    """Where the chunk starting at line `first`, which does not parse on its own, really ends: the first line
    after it that starts a new top-level statement as Python's tokenizer reads the text (not inside a string,
    bracket or backslash continuation, a chunk candidate, not right after a decorator), or a column-0 `def`,
    `class` or `async def` line (with the decorators right above it) inside an unclosed bracket: no bracket can
    hold one, so the text is invalid whatever the bracket's intent, and the definition is read as code. A
    string is never closed early: what an unterminated string swallows stays in the failing chunk. Returns
    the next chunk's first line (len(lines) + 1 at the end); raises `_Unsure` where the scan cannot be
    certain (an f-string whose braces do not balance: Python 3.12 reads those differently)."""
    n = len(lines)
    depth = 0
    stack: list = []  # the open brackets, innermost last (only `depth` of them when the text is consistent)
    string = None  # the open string's delimiter (a triple quote, or a quote continued by a backslash)
    fstring: Optional[list] = None  # the open f-string's text so far
    cont = False  # the line before ended in a backslash (outside strings)
    logical_at = ""  # first character of the last logical line that started clean
    pending = 0  # first line of a run of column-0 decorators seen inside brackets
    is_cand = set(cands)
    for no in range(first, n + 1):
        line = lines[no - 1]
        c = line[:1]
        if no > first and string is None and not cont:
            if depth == 0:
                pending = 0
                if no in is_cand and logical_at != "@":
                    return no
            elif c and c not in " \t\x0c#":
                if _DEFINES.match(line):
                    return pending or no
                if c == "@":
                    pending = pending or no
                elif c not in ")]}\\":
                    pending = 0
        clean = string is None and depth == 0 and not cont
        cont = False
        pos = 0
        if string is not None:
            m = _STRING_END[string].match(line)
            if m is None:
                if fstring is not None:
                    fstring.append(line)
                if len(string) == 1 and not _ends_escaped(line):
                    _check_fstring(fstring, None)  # unterminated: ends at the line's end (an error)
                    string = fstring = None
                continue
            if fstring is not None:
                fstring.append(line[:m.end() - len(string)])
                _check_fstring(fstring, None)
            string = fstring = None
            pos = m.end()
        elif clean:
            stripped = line.lstrip(" \t\x0c")
            if stripped and stripped[0] != "#":
                logical_at = stripped[0] if len(stripped) == len(line) else " "
        while True:
            m = _QUOTES.search(line, pos)
            if m is None:
                break
            tok = m.group()
            pos = m.end()
            if tok == "#":
                break
            if tok in "([{":
                depth += 1
                stack.append(tok)
            elif tok in ")]}":
                if not stack or stack[-1] != _OPENER[tok]:
                    # A closing bracket that closes nothing, or the wrong bracket (`print(y[)`): Python's
                    # tokenizer stops here, so the text is invalid whatever follows. The chunk ends where
                    # the next top-level statement would start by the lines alone (see `_broken_end`).
                    return _broken_end(first, cands, n)
                stack.pop()
                depth -= 1
            elif tok == "\\":
                if pos == len(line):
                    cont = True
            else:
                is_f = _string_prefix(line, m.start())
                e = _STRING_END[tok].match(line, pos)
                if e is None:
                    if len(tok) == 3 or _ends_escaped(line[pos:]):
                        string = tok
                        fstring = [line[pos:]] if is_f else None
                    elif is_f:
                        _check_fstring([line[pos:]], None)
                    break
                if is_f:
                    _check_fstring([line[pos:e.end() - len(tok)]], None)
                pos = e.end()
    if depth and string is None:
        # A bracket is still open at the end of the file (`def oops(:`, `foo(`): the text is invalid whatever
        # the bracket was meant to hold, so the statements below it are read as statements.
        return _broken_end(first, cands, n)
    return n + 1


_OPENER = {")": "(", "]": "[", "}": "{"}


def _broken_end(first: int, cands: list, n: int) -> int:
    """Where a chunk ends in text that certainly does not parse because of a bracket (one closed by the wrong
    bracket, closed without being opened, or never closed): at the next chunk candidate after `first`, so a
    top-level typo loses only its own statement. The chunk up to there was parsed and failed (the caller's
    first try), so it is reported; the file's text is invalid, so no valid text is ever cut this way (the
    invariant `_chunked` relies on: some chunk fails if and only if the text does not parse)."""
    k = bisect.bisect_right(cands, first)
    return cands[k] if k < len(cands) else n + 1


def _ends_escaped(s: str) -> bool:
    """Does `s` end in an odd number of backslashes (a string continued on the next line)?"""
    return (len(s) - len(s.rstrip("\\"))) % 2 == 1


def _string_prefix(line: str, at: int) -> bool:
    """Is the string starting at `at` an f-string (or a t-string)? Only the f-string check depends on it: other
    prefixes end a string at the same quote."""
    j = at
    while j > 0 and (line[j - 1].isalnum() or line[j - 1] == "_"):
        j -= 1
    prefix = line[j:at].lower()
    return prefix in _PREFIXES and ("f" in prefix or "t" in prefix)


def _check_fstring(parts: Optional[list], tail: Optional[str]) -> None:
    """An f-string's text, as read before Python 3.12 (ending at the first matching quote): its replacement
    fields must balance, or Python 3.12+ (nested quotes, fields across lines) may read it differently."""
    if parts is None:
        return
    text = "\n".join(parts + ([tail] if tail is not None else []))
    depth = 0
    k, size = 0, len(text)
    while k < size:
        ch = text[k]
        if ch == "{":
            if depth == 0 and text.startswith("{{", k):
                k += 2
                continue
            depth += 1
        elif ch == "}":
            if depth == 0:
                if text.startswith("}}", k):
                    k += 2
                    continue
                raise _Unsure
            depth -= 1
        k += 1
    if depth:
        raise _Unsure


def _derived_parses(state: _FileState) -> dict:
    """The chunk parses of a version that parsed as a whole (`_chunked`'s cache), without parsing: a chunk of it
    runs from a candidate line that starts a top-level statement to the next such line, and parses on its own
    to exactly the statements that start in it (their tokens are the same; see `_chunked`)."""
    parsed = state.parsed
    if parsed is None:
        lines, body = state.lines, state.tree.body
        starts = {}
        for k, st in enumerate(body):
            first = _first_line(st)
            if st.col_offset == 0 and first not in starts and (k == 0 or body[k - 1].end_lineno < first):
                starts[first] = k
        bounds = [c for c in _candidates(lines) if c in starts or c == 1]
        parsed = {}
        for a, b in zip(bounds, bounds[1:] + [len(lines) + 1]):
            k0 = starts.get(a, 0)
            k1 = starts.get(b, len(body)) if b <= len(lines) else len(body)
            if any(_first_line(st) < a for st in body[k0:k1]):
                continue
            parsed[_chunk_text(lines, a, b - 1)] = (a, body[k0:k1])
        state.parsed = parsed
    return parsed


def _chunked(text: str, lines: list, previous: Optional[_FileState], failed_hint=None) -> Optional[_Chunked]:
    """Syntax-error recovery at top-level-statement granularity, a function of the text alone.

    The text is cut into chunks at `_candidates` lines; each chunk is parsed on its own, padded with newlines
    so positions are the file's. A chunk that parses is kept. A chunk that does not is extended by
    `_scan_end` to where Python's tokenizer really starts the next top-level statement (merging chunk
    candidates that lie inside a string, a bracket or a dangling decorator), parsed once more, and, if it
    still fails, skipped: one GS001 at its error, the rest of the file is analysed.

    Soundness. A kept chunk starts where the tokenizer is in its initial state (by induction: a chunk that
    parses ends with no bracket, string or continuation open; a skipped one ends where `_scan_end` says one
    starts), so its tokens are the file's tokens and its statements are the file's statements. The one
    exception is deliberate: a column-0 `def`/`class`/`async def` inside a bracket left open by a skipped
    chunk starts a new chunk. No bracket can hold a definition, so the file is invalid whatever the bracket
    was meant to hold; the tokens after it are code either way, and reading the definition as a definition is
    what the edit that completes the bracket will give. Strings get no such exception: what an unterminated
    triple-quoted string swallows (to the next matching quote, as Python pairs them) stays in the skipped
    chunk, so no finding comes from text Python reads as a string. Hence: some chunk fails if and only if the
    whole text does not parse, and when every chunk parses their statements are exactly `ast.parse(text)`'s
    (`tests/test_syntax_recovery.py` checks both). Where the scan cannot be certain (`_Unsure`) or a chunk
    cannot be parsed at all (nesting, encoding), this returns None and the caller falls back to analysing
    the longest prefix that parses (`_parse_prefix`).

    `previous` (the file's last version) supplies parses of identical chunk texts (moved to the current line
    where lines were inserted above them), so a keystroke re-parses only the chunks it touched."""
    if "barry_as_FLUFL" in text or not lines:
        return None
    old = (previous.parsed if previous.broken else _derived_parses(previous)) if previous is not None else {}
    old_errors = previous.errors if previous is not None and previous.errors is not None else {}
    memo = previous.digests if previous is not None else None
    parsed: dict = {}
    errors: dict = {}
    if failed_hint is not None:
        old_errors = dict(old_errors)
        old_errors[failed_hint[0]] = failed_hint[1]
    n = len(lines)
    cands = _candidates(lines)
    body: list = []
    failed: list = []

    def parse(first: int, last: int):
        chunk = _chunk_text(lines, first, last)
        hit = old.get(chunk) or parsed.get(chunk)
        if hit is not None:
            at, stmts = hit
            if at != first:
                delta = first - at
                moved = []
                for st in stmts:
                    new = _shifted(st, delta)
                    if memo is not None:
                        _carry_digests(memo, st, new)
                    moved.append(new)
                stmts = moved
            parsed[chunk] = (first, stmts)
            return stmts
        key = (chunk, first)
        err = old_errors.get(key)
        if err is None:
            try:
                stmts = ast.parse("\n" * (first - 1) + chunk).body
            except SyntaxError as exc:
                err = (exc.msg, exc.lineno or first, exc.offset or 1)
            except (ValueError, RecursionError, MemoryError):
                raise _Unsure
            else:
                parsed[chunk] = (first, stmts)
                return stmts
        errors[key] = err
        return err

    try:
        k = 0
        start = 1
        while start <= n:
            while k < len(cands) and cands[k] <= start:
                k += 1
            nxt = cands[k] if k < len(cands) else n + 1
            got = parse(start, nxt - 1)
            if type(got) is tuple:
                end = _scan_end(lines, start, cands)
                if end != nxt:
                    got = parse(start, end - 1)
                if type(got) is tuple:
                    failed.append((start, end - 1) + got)
                else:
                    body.extend(got)
                nxt = end
            else:
                body.extend(got)
            start = nxt
    except _Unsure:
        return None
    return _Chunked(ast.Module(body=body, type_ignores=[]), failed, parsed, errors)
