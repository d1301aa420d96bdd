"""The `Engine`: parse (incrementally, recovering from syntax errors), build the module scope, interpret each unit
or reuse its cached results, dispatch events to the rule set handed in. Never raises on user code."""

from __future__ import annotations

import ast
import hashlib
import os
import pathlib
import sys
import threading
from collections import OrderedDict
from typing import Optional

from ..config import Config
from ..findings import sort_key
from .api import Analysis
from .chunks import Chunks, parse_prefix, recover_chunks
from .events import DeadGradEvent, Event
from .incremental import FileState, reparse
from .interp import Interpreter, ModuleScope
from .newsyntax import OLD_PYTHON, downgrade
from .nograd_calls import dispatch_prefixes
from .query import FileEvent, NodeMemo, Query
from .relocate import located, plain
from .report import Reporter, Source, split_lines
from .reverse import caller_stores, run_callers
from .ruleset import RuleSet
from .scope import MAX_BYTES, MAX_NESTING, build_scope, nesting_depth
from .units import (Digests, RecordingDict, UnitCache, analyse_definitions, calls_without_grad_in, import_digests,
                    run_module)
from .values import UNKNOWN_REACH


def _env_flag(name: str) -> bool:
    """True unless the environment variable `name` is set to something other than "" or "0"."""
    return os.environ.get(name, "") in ("", "0")


class Engine:
    """The analysis with its caches. Every cache lives here, none in a module: the last analysed versions of
    recently analysed files (`files`, the base of incremental parsing and of syntax-error recovery), the
    per-unit results (`units`, moved by `relocate.Relocation` when lines above them change), the conversion
    memo of results that leave the engine (`plain_of`), and counters for tests and benchmarks (`stats`).

    One instance serves many files and threads (the language server's workers): its caches are bounded and
    each of their steps is atomic. `gradsight.analysis.ENGINE` is the instance behind the façade's
    `analyze_source`; a test or a benchmark that needs cold caches makes its own `Engine()` or calls `clear()`.

    `shift=False` turns off what makes edits that add or remove lines incremental (the spliced parse with a
    shifted tail, and reusing results of definitions that only moved); `recover=False` turns syntax-error
    recovery off (the prefix analysis on every syntax error). Both exist for comparisons (bench/bench_typing.py)
    and default to the environment variables GRADSIGHT_NO_SHIFT and GRADSIGHT_NO_RECOVER."""

    def __init__(self, *, shift: Optional[bool] = None, recover: Optional[bool] = None, file_cache_max: int = 3,
                 file_cache_max_chars: int = 800_000, unit_cache_max: int = 4000) -> None:
        self.shift = _env_flag("GRADSIGHT_NO_SHIFT") if shift is None else shift
        self.recover = _env_flag("GRADSIGHT_NO_RECOVER") if recover is None else recover
        # The last analysed version of recently analysed files: path -> FileState. Bounded by entries and by text
        # size (a parsed 5,000-line file holds ~8 MiB of syntax tree).
        self.files: "OrderedDict[str, FileState]" = OrderedDict()
        self.file_cache_max = file_cache_max
        self.file_cache_max_chars = file_cache_max_chars
        self._lock = threading.Lock()
        self.units = UnitCache(unit_cache_max)
        self.plain_of: dict = {}
        self.node_memo = NodeMemo()  # walks of unchanged top-level statements for whole-file rules (engine/query.py)
        self.caller_memo: dict = {}  # (path, digest) of another file -> its units and what they read (`reverse.py`)
        # Parses spliced, full or by chunks (`recover_chunks`: text that does not parse), cached definition results
        # moved or not movable, module-level results reused (`units.run_module`), caller units of other files run
        # rather than reused (`reverse.run_callers`), definitions (and instances their methods need) run rather than
        # reused (`units.analyse_definitions`).
        self.stats = {"spliced": 0, "parsed": 0, "chunked": 0, "moved": 0, "not_moved": 0, "module_reused": 0,
                      "callers_run": 0, "units_run": 0}

    def clear(self) -> None:
        """Forget every cached version and result (the next analysis of any file is cold). The containers are
        emptied in place, so references to them stay valid."""
        with self._lock:
            self.files.clear()
        self.units.clear()
        self.plain_of.clear()
        self.node_memo.clear()
        self.caller_memo.clear()

    def forget(self, path: str) -> None:
        """Forget the last analysed version of `path` (its next analysis parses it afresh)."""
        with self._lock:
            self.files.pop(path, None)

    def reset_stats(self) -> None:
        for k in self.stats:
            self.stats[k] = 0

    def analyze(self, text: str, path: str = "<stdin>", config: Config | None = None, workspace=None,
                rules: Optional[RuleSet] = None) -> Analysis:
        """Analyse one file's text. Pure apart from `workspace` reads; returns findings, facts and problems.

        Re-analysing a new version of a file analysed recently is incremental but exact: the result is what
        analysing the text from scratch gives (`tests/test_incremental.py`, `tests/test_speed_incremental_parse.py`).
        An edit inside one top-level statement re-parses only that statement (`reparse`), and every definition
        whose analysis did not run edited code keeps its cached results (`analyse_definitions`).

        Text that does not parse (mid-typing, most of the time) is recovered at top-level-statement granularity
        (`recover_chunks`): only the chunks that do not parse on their own are skipped, one GS001 each, and the rest of
        the file is analysed, from the text alone (warm results still equal cold ones). Where the chunking cannot be
        certain, the longest prefix that parses is analysed instead (`parse_prefix`). While the text stays
        broken, a keystroke re-parses only the chunks it touched."""
        # The rule set is handed in (`engine.ruleset`): the engine imports nothing from `rules/`.
        if rules is None:
            raise TypeError("Engine.analyze needs a rule set (gradsight.analysis.RULES for the project's rules)")
        ruleset = rules
        config = config or Config()
        result = Analysis(path=path)
        if len(text) > MAX_BYTES:
            result.problems.append(f"{path}: {len(text):,} characters is over gradsight's limit of {MAX_BYTES:,}; "
                                   "the file was not analysed")
            return result
        if "\x00" in text:
            result.problems.append(f"{path}: the file contains NUL bytes (binary?); not analysed")
            return result
        if nesting_depth(text) > MAX_NESTING:
            result.problems.append(f"{path}: brackets nest more than {MAX_NESTING} deep; not analysed")
            return result
        lines = split_lines(text)
        # Positions of this file are `report.Line`s, so cached results holding them can be moved.
        mark = True
        source = Source(text, lines, mark=mark)
        reporter = Reporter(path, source, config)
        previous = self.file_state(path)
        ptext, plines = text, lines  # the text parsed: the file's, or its Python 3.12 syntax rewritten (`newsyntax`)
        first = previous.original if previous is not None and previous.original is not None else previous
        parsed = self._parse(path, text, lines, first)
        original = None  # the file's own text, chunked, when the rewrite is what is analysed
        notes: list = []
        if OLD_PYTHON and (parsed[1] is not None and parsed[1].failed or parsed[2] is not None):
            # Text this Python cannot parse: Python 3.12 syntax in the chunks that failed (all of it, where the
            # text could not be chunked) is rewritten to text of the same shape, and that is what is analysed.
            down = downgrade(lines, [(f, l, msg, at) for f, l, msg, at, _ in parsed[1].failed]
                             if parsed[1] is not None and parsed[1].failed
                             else [(1, len(lines), parsed[2].msg, parsed[2].lineno or 1)])
            if down is not None:
                if parsed[1] is not None and parsed[1].failed:
                    original = FileState(text, lines, parsed[1].tree, {}, parsed[1])
                plines, notes = down
                ptext = "\n".join(plines)
                parsed = self._parse(path, ptext, plines, previous)
        tree, chunked, prefix_exc, problem = parsed
        if problem is not None:
            result.problems.append(problem)
            return result
        report_newer = getattr(ruleset, "report_newer_syntax", None)
        if report_newer is not None:
            for line, col, what in notes:
                report_newer(reporter, line, col, what)
        prefix = prefix_exc is not None
        if prefix:
            ruleset.report_syntax_error(prefix_exc, reporter)
            if tree is None:
                result.findings = sorted((plain(f, self.plain_of) for f in reporter.findings.values()),
                                         key=sort_key)
                return result
        if chunked is not None and chunked.failed:
            for first, last, msg, line, col in chunked.failed:
                ruleset.report_skipped(reporter, msg, min(line, len(lines)), col, first, last)
            tree = chunked.tree
            memo = self._remember(path, ptext, plines, tree, previous, chunked, original)
        elif prefix:
            memo = {}  # a prefix's tree is not remembered as this text's tree
        else:
            memo = self._remember(path, ptext, plines, tree, previous, chunked, original)

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
        used = RecordingDict()
        resolver = workspace.resolver(path, used) if workspace is not None else None
        if workspace is not None:
            # Rules may put a finding in another file this analysis read (`Reporter.add_in`): where the fix goes.
            reporter.source_of = lambda other: _source_in(workspace, used, other)
        interp = TrackingInterpreter(scope, emit, resolver)
        interp.root_path = path
        interp.home = scope
        # Names the interpreter cannot resolve may be asked of jedi (`libinfer`); the workspace owns its cache.
        interp.libinfer = workspace.libinfer if workspace is not None else None
        interp.stmt_memo = self.units.stmt_memo
        old_limit = sys.getrecursionlimit()
        try:
            sys.setrecursionlimit(max(old_limit, 10000))
            salt = f"{path}\0{config!r}\0{mark}"
            if workspace is not None:
                salt += "\0" + import_digests(workspace, scope, path)
            digests = Digests(scope, lines, text, memo)
            interp.stmt_digest = digests.node
            shape_key = hashlib.sha1(f"{salt}\0{digests.shape()}".encode("utf-8", "surrogatepass")).hexdigest()
            scope_of = None
            if workspace is not None:
                def scope_of(other: str) -> tuple:
                    found = workspace.scope_for(pathlib.Path(other))
                    return (found, workspace.cached_digest(pathlib.Path(other))) if found is not None else (None, None)
            query = Query(tree, scope.imports, scope.classes, self.node_memo, path,
                          (lambda module, level, home=scope: resolver(module, level, home)) if resolver is not None else None,
                          scope.functions, walker=source.walk,
                          caller_stores=None if workspace is None else lambda: caller_stores(workspace, path, used))
            # Another framework's code (imports Paddle, TensorFlow, JAX, ... and nothing of torch): its `.numpy()`,
            # `.eval()` and `.backward()` are that framework's, so the dataflow is not run on it (whole-file rules
            # still ask `query.other_framework()` themselves).
            if not query.other_framework():
                module_deps, free = run_module(interp, scope, reporter, digests, shape_key, used, self.units, self.shift,
                                               scope_of, self.stats)
                # Module-level values with line numbers in them: definitions' results may hold them too, so they are
                # then keyed by where everything is (reused only while no line moves).
                where = "" if free else repr([(s, e) for s, e, _ in digests.frame()])
                module_key = hashlib.sha1(f"{shape_key}\0{module_deps!r}\0{where}".encode("utf-8", "surrogatepass")
                                          ).hexdigest()
                elsewhere: frozenset = frozenset()
                if workspace is not None and (scope.functions or scope.classes):
                    # Definitions that other files of the workspace call only under `no_grad` (`Model.generate` run by
                    # main.py's `@torch.no_grad()` inference): those files are dependencies of this analysis.
                    elsewhere, read = workspace.no_grad_callers(path, calls_without_grad_in)
                    if scope.classes and dispatch_prefixes(interp, scope):
                        # A method picked by a string (`getattr(self, '_' + mode)`): the strings any file hands to
                        # a call under `no_grad` (`model(x, mode='sample')` in a trainer that imports nothing of it).
                        strings, more = workspace.no_grad_strings(path, calls_without_grad_in)
                        elsewhere = elsewhere | strings
                        read = {**read, **more}
                    for other, digest in read.items():
                        used[other] = digest
                analyse_definitions(interp, scope, reporter, module_key, digests, used, self.units, self.shift, self.stats,
                                    elsewhere, salt, workspace)
                if workspace is not None and (scope.functions or scope.classes):
                    # The reverse direction: other files' code that runs this file's definitions with its own values.
                    run_callers(interp, scope, reporter, workspace, module_key, digests, used, self.units,
                                self.caller_memo, self.shift, salt, self.stats)
                if interp.backward_seen and UNKNOWN_REACH not in interp.reached_sources:
                    for site, (label, created) in interp.grad_leaves.items():
                        if site in interp.reached_sources or site not in interp.cut_sources:
                            continue
                        emit(DeadGradEvent(located(site, source), label, created, (interp.cut_sources[site],)))
            if any(FileEvent in rule.events for rule in rules):
                # Whole-file checks run on every analysis (never cached per unit), with one shared query.
                emit(FileEvent(tree, query))
        except RecursionError:
            result.problems.append(f"{path}: code nests too deeply for gradsight; analysis stopped early")
        except Exception as exc:  # noqa: BLE001 - the analysis must never take the editor down
            result.problems.append(f"{path}: internal error ({type(exc).__name__}: {exc}); "
                                   "some findings may be missing")
        finally:
            sys.setrecursionlimit(old_limit)
        result.dependencies = dict(used)
        result.findings = sorted((plain(f, self.plain_of) for f in reporter.findings.values()), key=sort_key)
        result.facts = sorted((plain(f, self.plain_of) for f in interp.facts.values()),
                              key=lambda f: (f.line, f.column))
        return result



    def file_state(self, path: str) -> Optional[FileState]:
        """The last analysed version of `path`, if still kept."""
        with self._lock:
            state = self.files.get(path)
            if state is not None:
                self.files.move_to_end(path)
            return state


    def _parse(self, path: str, text: str, lines: list, previous: Optional[FileState]) -> tuple:
        """(tree, chunks, prefix error, problem) of `text`: a tree (spliced from `previous`, chunked or parsed
        whole) with chunks None or without failures; or the chunks that failed and the tree of those that parse;
        or, where the text could not be chunked with certainty, the syntax error and the tree of the longest prefix
        that parses (None if none does); or a problem that stops the analysis. Reports nothing."""
        tree = None
        chunked: Optional[Chunks] = None
        hint: list = []  # the chunk a failed `reparse` could not parse, for `recover_chunks` (same text)
        if previous is not None and not previous.broken:
            tree = reparse(previous, text, lines, self.shift, hint)
        if tree is not None:
            self.stats["spliced"] += 1
        elif previous is not None and self.recover:
            # The edited statements do not parse on their own, or the previous version did not parse: chunk the
            # text (`recover_chunks`), reusing the previous version's parses of unchanged chunks. A chunk that fails
            # means the text does not parse; when none does, their statements are `ast.parse(text)`'s.
            chunked = recover_chunks(text, lines, previous, hint[-1] if hint else None)
            if chunked is not None:
                self.stats["chunked"] += 1
                if not chunked.failed:
                    tree = chunked.tree
        if tree is None and (chunked is None or not chunked.failed):
            chunked = None
            self.stats["parsed"] += 1
            try:
                tree = ast.parse(text, filename=path)
            except SyntaxError as exc:
                # (where the warm attempt above was not certain, neither is this one: the same text)
                chunked = recover_chunks(text, lines, None) if self.recover and previous is None else None
                if chunked is None or not chunked.failed:  # not chunked with certainty: analyse the prefix
                    return parse_prefix(text, exc), None, exc, None
            except (RecursionError, MemoryError, ValueError) as exc:
                return None, None, None, f"{path}: cannot parse ({type(exc).__name__}); not analysed"
        return tree, chunked, None, None

    def _remember(self, path: str, text: str, lines: list, tree: ast.Module, previous: Optional[FileState],
                      chunked: "Optional[Chunks]" = None, original: Optional[FileState] = None) -> dict:
        """Keep this version as the file's latest; returns the digest memo to use (shared with the previous version:
        nodes the incremental parse reused keep their digests)."""
        digests = previous.digests if previous is not None else {}
        if path.startswith("<"):
            return digests  # "<stdin>" and friends: no identity across calls
        with self._lock:
            state = FileState(text, lines, tree, digests, chunked)
            state.original = original
            self.files[path] = state
            self.files.move_to_end(path)
            total = sum(len(s.text) for s in self.files.values())
            while len(self.files) > 1 and (len(self.files) > self.file_cache_max or total > self.file_cache_max_chars):
                _, dropped = self.files.popitem(last=False)
                total -= len(dropped.text)
        return digests



class TrackingInterpreter(Interpreter):
    """The interpreter, recording which of this file's functions an analysis ran (`track`): a cached result
    stays valid while the text of every function it ran is unchanged (see `analyse_definitions`)."""

    home: Optional[ModuleScope] = None  # the analysed file's scope (functions of imported files are not tracked)
    # While a caller in another file runs (`reverse.py`): the calls from other files into this one, innermost last.
    entries: Optional[list] = None
    # While a caller runs: class node id -> (attribute, truth) of a flag its objects keep for life (`reverse.py`).
    pinned_flags: Optional[dict] = None
    # The analysed file's definitions it or other files may run where grad mode is off (`analyse_definitions`):
    # a subclass's caller runs those inherited methods with grad mode unknown too (`reverse._run_inherited`).
    no_grad_defs: frozenset = frozenset()

    def run_function(self, func, *args, **kwargs):
        if self.track is not None and func.module is self.home:
            self.track.add(func.node)
        if self.entries is None or func.module is not self.home or self.scope is self.home:
            return super().run_function(func, *args, **kwargs)
        node = args[3] if len(args) > 3 else kwargs.get("node")
        self.entries.append((self.scope, node))
        try:
            return super().run_function(func, *args, **kwargs)
        finally:
            self.entries.pop()


def _source_in(workspace, used: dict, path: str) -> Optional[Source]:
    """The text of workspace file `path` as this analysis read it, or None if it did not read that file."""
    if path not in used:
        return None
    scope = workspace.scope_for(pathlib.Path(path))
    return scope.source if scope is not None else None
