"""The server's state and the logic behind every handler in `server.py`.

One `Session` per server. It owns the settings (`settings.ConfigResolver`), the analyses
(`scheduler.AnalysisCache`, one result per open document, computed in worker threads), the
debounced refreshes, which open documents depend on which (the reverse-import map, and the files each
analysis actually read), trace results, and the choice between pull and push diagnostics.
Everything here runs on the event loop thread except `_compute`, which runs the engine on an
immutable snapshot; the engine is pure apart from reading imported files through its `Workspace`,
to which the open buffers are given as overlays (`documents.EngineWorkspaces`).

Diagnostics:

- Pull (the client declares `textDocument.diagnostic`): the client asks; each report carries
  `resultId = "<uri>@<version>#<config generation>.<dependency epoch>.<trace generation>"`, and a
  request whose `previousResultId` equals the current one gets an `unchanged` report. When something
  other than the document's own text changes (settings, a pyproject.toml, a module it imports, a
  trace), the server sends `workspace/diagnostic/refresh`.
- Push (anything else): edits are debounced per document (`DEBOUNCE` seconds, none on open); a
  result is published with its version only if that version is still the document's current one.
- Workspace mode (`diagnosticMode = "workspace"`): files that are not open are published from disk by
  `workspace_scan.WorkspaceDiagnostics`, for pull and push clients alike.

Trace results are kept per document with the text they describe; an edit moves them with their lines
or drops the ones whose lines it touched (`_move_trace`). The engine is imported in a background
thread after `initialize` has been answered (`warm_up`), not when this module is.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import pathlib
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from lsprotocol import types
from pygls.capabilities import get_capability

if TYPE_CHECKING:  # the engine is imported after `initialize` is answered (see `warm_up`)
    from ..engine import Analysis, StateFact
from ..findings import Applicability, Finding, drop_restated, sort_key
from . import actions, convert
from .documents import (
    EngineWorkspaces,
    ImportGraph,
    Snapshot,
    View,
    imported_modules,
    module_names,
    resolved,
    snapshot_of,
    uri_to_path,
)
from .memory import Collector
from .positions import IndexCache, LineIndex, normalize_encoding
from .scheduler import AnalysisCache, Debouncer, Result, Stamp
from .workspace_scan import WorkspaceDiagnostics
from .settings import (
    ConfigResolver,
    parse_editor_settings,
    settings_from_init,
    trusted_from_init,
)
from . import logs

log = logging.getLogger(__name__)

DEBOUNCE = 0.15  # seconds between the last keystroke and the analysis (push mode)
DEPENDENT_DELAY = 0.3  # files that import an edited one are re-analysed a little later
CONFIG_TIMEOUT = 5.0
# Seconds a request or a publish waits for one analysis. The engine is fast; this only bounds a
# runaway one, so that no request can hang. The late result is still cached when it arrives.
ANALYSIS_TIMEOUT = 20.0
# Seconds shutdown waits for a cancelled trace to end its process group and remove its folder (the
# tracer's grace period for the script is 2 s, then it kills the group).
TRACE_STOP_TIMEOUT = 6.0


_MODULE_INDEX = "module:"  # IndexCache key prefix of a notebook's joined text


class AnalysisTimeout(Exception):
    pass


@dataclass
class TraceState:
    """A trace's findings for one document, in the coordinates of `text` (its version `version`)."""

    version: int
    findings: list[Finding]
    generation: int
    text: str = ""


@dataclass
class TraceRun:
    """A running trace: `cancel` asks it to stop; `done` is set once its process group is gone and its
    temporary folder removed (the tracer does both before `run_trace` returns)."""

    cancel: Any
    done: Any
    request: Any = None  # the id of the `workspace/executeCommand` request that started it

    def set(self) -> None:  # what `shutdown` calls on every run
        self.cancel.set()


@dataclass
class Current:
    """A document ready for a request: its snapshot, the view asked about, and the analysis."""

    snapshot: Snapshot
    view: View
    stamp: Stamp
    analysis: Analysis
    findings: list[Finding] = field(default_factory=list)  # static + trace, module coordinates
    index: LineIndex | None = None

    def view_findings(self) -> list[Finding]:
        return [f for f in self.findings if self.view.owns(f.line)]

    def view_facts(self) -> list[StateFact]:
        return [f for f in self.analysis.facts if self.view.owns(f.line)]


class Session:
    def __init__(self, server) -> None:
        self.server = server
        self.resolver = ConfigResolver()
        self.graph = ImportGraph()
        self.trusted = True
        self.pull_mode = False
        self.encoding = "utf-16"
        self.capabilities = types.ClientCapabilities()
        self.client_name = ""
        self._init_settings: Any = None
        self._pushed_settings: Any = None
        self._versions: dict[str, int] = {}
        self._epochs: dict[str, int] = {}
        self._traces: dict[str, TraceState] = {}
        self._trace_generation = 0
        self._pending_traces: dict[str, tuple[str, list[Finding], int]] = {}  # path -> (traced text, findings, gen)
        self._published: dict[str, set[str]] = {}
        # Static findings an open document's analysis put in other files (`Reporter.add_in`: where the fix
        # goes): document key -> resolved path of the other file -> findings. Shown in that file while open.
        self._elsewhere: dict[str, dict[str, tuple[Finding, ...]]] = {}
        self._shown: set[str] = set()
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="gradsight-analysis")
        self.trace_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gradsight-trace")
        self.collector = Collector.disabled()  # `lsp.main` installs the real one (see `memory.py`)
        self.cache = AnalysisCache(self._pool, self._is_current, lambda: self.collector.work_done())
        self.debouncer = Debouncer()
        self.trace_runs: dict[str, TraceRun] = {}  # key -> a running trace
        self.engine_workspaces = EngineWorkspaces()
        self._dependencies: dict[str, frozenset[str]] = {}  # key -> resolved paths its analysis read
        self._absorbed: dict[str, Result] = {}  # key -> the result whose imports and dependencies are recorded
        self.indexes = IndexCache()  # line indexes of the texts requests were last about
        self._ready = False
        self.workspace_diagnostics = WorkspaceDiagnostics(self)
        self._diagnostic_mode = "openFiles"

    # -- capabilities ------------------------------------------------------------------------------

    def supports(self, path: str, default: Any = False) -> Any:
        return get_capability(self.capabilities, path, default)

    @property
    def markdown(self) -> bool:
        # The client lists the formats it prefers first (LSP `contentFormat`).
        formats = self.supports("text_document.hover.content_format", None)
        if not formats:
            return True
        for kind in formats:
            if kind in (types.MarkupKind.Markdown, types.MarkupKind.PlainText):
                return kind == types.MarkupKind.Markdown
        return True

    @property
    def hover_shows_diagnostics(self) -> bool:
        """VS Code and its forks put the diagnostics under the cursor at the top of every hover; the
        finding's message is then left out of ours, so that the hover says it once."""
        name = self.client_name.lower()
        return any(word in name for word in ("visual studio code", "code-server", "vscodium", "cursor", "windsurf"))

    @property
    def links(self) -> bool:
        """Whether hovers may hold markdown links. Neovim renders hover markdown (bold, code) but shows
        `[text](url)` as it is, unclickable: it gets the words ("models.py line 31") instead."""
        return self.client_name.lower() not in ("neovim", "nvim")

    # -- lifecycle ---------------------------------------------------------------------------------

    def initialize(self, params: types.InitializeParams) -> None:
        self.capabilities = params.capabilities
        self.client_name = params.client_info.name if params.client_info is not None else ""
        self.pull_mode = self.supports("text_document.diagnostic", None) is not None
        self.encoding = normalize_encoding(self.server.workspace.position_encoding)
        options = params.initialization_options
        self.trusted = trusted_from_init(options)
        self._init_settings = settings_from_init(options)
        logs.install_client_handler(self.server, asyncio.get_running_loop())
        self.apply_settings()
        log.info("gradsight language server: %s diagnostics, %s positions, workspace %strusted",
                 "pull" if self.pull_mode else "push", self.encoding, "" if self.trusted else "not ")

    def warm_up(self) -> None:
        """Import the engine and the rule modules in a background thread once `initialize` has been answered:
        the answer does not wait for them (they are most of the server's import time), and the first analysis
        finds them loaded. The rules are otherwise imported inside the first analysis (`ProjectRules`): 100
        modules, 15-20 ms from bytecode and ~100 ms where none was written (byte-compiling them), which the
        first diagnostics of a session paid. Then the loaded modules are frozen like the start-up objects
        (`Collector.loaded`), so the first analysis' full collection does not walk them."""
        import threading

        def load() -> None:
            try:
                from .. import analysis  # noqa: F401 - the engine
                from ..engine import workspace  # noqa: F401
                from ..rules import all_rules

                all_rules()  # imports every rule module, once per process (what `analysis.RULES` reads)
            except Exception:  # noqa: BLE001 - the first analysis reports a broken engine
                log.exception("importing the engine failed")
                return
            self.collector.loaded()

        threading.Thread(target=load, name="gradsight-warm-up", daemon=True).start()

    async def initialized(self) -> None:
        self.warm_up()
        self._ready = True
        await self._register_watchers()
        if self.supports("workspace.configuration"):
            await self.reload_settings()
        self._follow_diagnostic_mode()

    # -- workspace diagnostics -----------------------------------------------------------------------

    def _follow_diagnostic_mode(self, restart: bool = False) -> None:
        """Start or stop the workspace walk when `diagnosticMode` changes (or restart it: settings changed)."""
        if not self._ready:
            return
        mode = self.resolver.settings.diagnostic_mode
        if mode == "workspace" and (mode != self._diagnostic_mode or restart):
            self.workspace_diagnostics.start(self._roots())
        elif mode != "workspace" and self._diagnostic_mode == "workspace":
            self.workspace_diagnostics.clear()
        self._diagnostic_mode = mode

    @property
    def workspace_mode(self) -> bool:
        return self._diagnostic_mode == "workspace"

    def is_open_uri(self, uri: str) -> bool:
        return uri in self._versions

    def is_open_path(self, path: str) -> bool:
        return self._key_of_path(resolved(path)) is not None

    def typing(self) -> bool:
        """Whether edits are waiting for their analysis (the workspace walk waits for them)."""
        return self.debouncer.pending()

    def open_text(self, path: str) -> str | None:
        return self._open_text(path)

    def shutdown(self, wait: float = TRACE_STOP_TIMEOUT) -> None:
        """Stop background work (idempotent): pending refreshes, queued analyses, running traces.

        A running trace is cancelled and waited for (up to `wait` seconds): the tracer kills the
        script's process group and removes its `gradsight-trace-*` folder before it returns, and the
        process must not exit before that (`lsp.main` leaves stuck threads behind after two seconds)."""
        self.debouncer.cancel_all()
        self.collector.cancel()
        self.workspace_diagnostics.stop()
        runs = list(self.trace_runs.values())
        for run in runs:
            run.set()
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.trace_pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + wait
        for run in runs:
            done = getattr(run, "done", None)
            if done is not None and not done.wait(max(0.0, deadline - time.monotonic())):
                log.warning("a trace is still stopping after %s s", wait)

    async def _register_watchers(self) -> None:
        registrations = []
        if self.supports("workspace.did_change_watched_files.dynamic_registration"):
            registrations.append(types.Registration(
                id="gradsight-pyproject", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=[
                    types.FileSystemWatcher(glob_pattern="**/pyproject.toml"),
                    # Saved files other documents import (a `git checkout`, another editor).
                    types.FileSystemWatcher(glob_pattern="**/*.py",
                                            kind=types.WatchKind.Change | types.WatchKind.Delete)])))
        if self.supports("workspace.did_change_configuration.dynamic_registration"):
            registrations.append(types.Registration(
                id="gradsight-configuration", method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                register_options=types.DidChangeConfigurationRegistrationOptions(section="gradsight")))
        if not registrations:
            return
        try:
            await asyncio.wait_for(self.server.client_register_capability_async(
                types.RegistrationParams(registrations=registrations)), CONFIG_TIMEOUT)
        except Exception as exc:  # noqa: BLE001 - a client may refuse; settings still work
            log.warning("client refused dynamic registration (%s); pyproject.toml changes need a restart", exc)

    # -- settings ----------------------------------------------------------------------------------

    async def reload_settings(self, pushed: Any = None) -> None:
        """Re-read settings: `workspace/configuration` when the client has it, else what it pushed."""
        if pushed is not None:
            self._pushed_settings = pushed.get("gradsight", pushed) if isinstance(pushed, Mapping) else pushed
        answer = None
        if self.supports("workspace.configuration"):
            try:
                items = await asyncio.wait_for(self.server.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section="gradsight")])), CONFIG_TIMEOUT)
                answer = items[0] if items else None
            except Exception as exc:  # noqa: BLE001
                log.warning("workspace/configuration failed (%s); keeping the current settings", exc)
                return
        self.apply_settings(answer)

    def apply_settings(self, answer: Any = None) -> None:
        settings, problems = parse_editor_settings(self._init_settings, self._pushed_settings, answer)
        for problem in problems:
            self.show(problem, types.MessageType.Warning)
        logs.set_level(settings.log_level_number)
        if settings.log_level_number <= logging.DEBUG:
            self.collector.log_slow_collections()
        if not self.resolver.same_effect(settings):
            log.debug("settings: %s", settings)
            self.resolver.update(settings)
            self.invalidate_all()
            self._follow_diagnostic_mode(restart=True)
        else:
            self.resolver.settings = settings  # e.g. only logLevel changed: analyses stay valid
            self._follow_diagnostic_mode()

    def files_changed(self, changes: Sequence[types.FileEvent]) -> None:
        """Watched files changed on disk: a pyproject.toml (all settings), or modules others import."""
        if any(c.uri.endswith("pyproject.toml") for c in changes):
            self._shown = {m for m in self._shown if "pyproject.toml" not in m}
            self.resolver.pyproject_changed()
            self.invalidate_all()
            self._follow_diagnostic_mode(restart=True)
            return
        changed = {resolved(uri_to_path(c.uri)) for c in changes if c.uri.endswith(".py")}
        open_paths = {resolved(uri_to_path(key)) for key in self._versions}
        if self.workspace_mode and changed - open_paths:
            self.workspace_diagnostics.start(self._roots(), sorted(p for p in changed - open_paths
                                                                   if pathlib.Path(p).is_file()))
        stale = [k for k, deps in self._dependencies.items() if deps & (changed - open_paths)]
        if stale:
            self._bump(stale)

    def invalidate_all(self) -> None:
        """Settings changed: every open document needs new diagnostics and hints."""
        if not self._ready or not self._versions:
            return  # nothing to refresh yet (and no requests to the client before `initialized`)
        if self.pull_mode:
            self._refresh_client_diagnostics()
        else:
            for key in list(self._versions):
                self.schedule(key, 0, cascade=False)
        if self.supports("workspace.inlay_hint.refresh_support"):
            self.server.workspace_inlay_hint_refresh(None)

    def _refresh_client_diagnostics(self) -> None:
        if self.supports("workspace.diagnostics.refresh_support"):
            self.server.workspace_diagnostic_refresh(None)

    # -- messages ----------------------------------------------------------------------------------

    def show(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        log.log(logging.WARNING if kind <= types.MessageType.Warning else logging.INFO, "%s", message)
        self.server.window_show_message(types.ShowMessageParams(type=kind, message=f"gradsight: {message}"))

    def show_once(self, messages: Sequence[str], kind: types.MessageType = types.MessageType.Warning) -> None:
        for message in messages:
            if message not in self._shown:
                self._shown.add(message)
                self.show(message, kind)

    # -- documents ---------------------------------------------------------------------------------

    def stamp(self, key: str) -> Stamp:
        return (self._versions.get(key, -1), self.resolver.generation, self._epochs.get(key, 0))

    def _is_current(self, key: str, stamp: Stamp) -> bool:
        return self.stamp(key) == stamp  # read from worker threads: plain dict/int reads only

    def snapshot(self, uri: str) -> Snapshot | None:
        return snapshot_of(self.server.workspace, uri)

    def opened(self, uri: str) -> None:
        self.workspace_diagnostics.opened(uri)
        self._track(uri, delay=0)

    def changed(self, uri: str) -> None:
        self._track(uri, delay=DEBOUNCE)

    def _track(self, uri: str, delay: float) -> None:
        snapshot = self.snapshot(uri)
        if snapshot is None:
            return
        key = snapshot.key
        if key not in self._versions and self._pending_traces:
            self._adopt_pending_trace(key, snapshot)
        self._versions[key] = snapshot.version
        if snapshot.cells is None:
            self.engine_workspaces.set_text(snapshot.path, snapshot.text)
        self._move_trace(key, snapshot)
        if key not in self.graph.names:
            self.graph.update(key, module_names(snapshot.path, self._roots()), frozenset())
        self.schedule(key, delay, cascade=True)

    def _move_trace(self, key: str, snapshot: Snapshot) -> None:
        """Trace findings stay until the lines they name change: an edit elsewhere moves them with their
        lines, an edit on one of their lines drops them."""
        trace = self._traces.get(key)
        if trace is None or trace.version == snapshot.version:
            return
        if snapshot.cells is not None:
            self._traces.pop(key, None)  # traces run files on disk, never notebooks
            return
        findings = convert.remap_findings(trace.findings, trace.text, snapshot.text)
        if findings:
            self._traces[key] = TraceState(snapshot.version, findings, trace.generation, snapshot.text)
        else:
            self._traces.pop(key, None)

    def closed(self, key: str, view_uris: Sequence[str] = ()) -> None:
        self.debouncer.cancel(key)
        self.cache.forget(key)
        self.graph.forget(key)
        self._versions.pop(key, None)
        self._epochs.pop(key, None)
        self._traces.pop(key, None)
        self._dependencies.pop(key, None)
        self._absorbed.pop(key, None)
        self._set_elsewhere(key, {})
        for uri in (key, *view_uris):
            self.indexes.forget(uri)
        self.indexes.forget(_MODULE_INDEX + key)
        self.engine_workspaces.set_text(uri_to_path(key), None)
        published = self._published.pop(key, set()) | set(view_uris)
        if not self.pull_mode:
            for uri in published:
                self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        path = uri_to_path(key)
        if self.workspace_mode and path.endswith(".py") and pathlib.Path(path).is_file():
            # Closed: the file's saved text is what the workspace shows again.
            self.workspace_diagnostics.start(self._roots(), [path])

    def schedule(self, key: str, delay: float, cascade: bool) -> None:
        self.debouncer.schedule(key, delay, lambda: self._refresh(key, cascade))

    async def _refresh(self, key: str, cascade: bool) -> None:
        if not self.pull_mode:
            await self._publish_current(key)
        if cascade:
            self._dependents_changed(key)

    def _dependents_changed(self, key: str) -> None:
        path = resolved(uri_to_path(key))
        by_engine = [k for k, deps in self._dependencies.items() if path in deps and k != key]
        dependents = sorted({k for k in [*self.graph.dependents(key), *by_engine] if k in self._versions})
        if not dependents:
            return
        log.debug("%s changed; re-analysing %s", key, ", ".join(dependents))
        self._bump(dependents)

    def _bump(self, keys: Sequence[str]) -> None:
        """Something these documents depend on changed: analyse them again (their text did not)."""
        for other in keys:
            self._epochs[other] = self._epochs.get(other, 0) + 1
            if not self.pull_mode:
                self.schedule(other, DEPENDENT_DELAY, cascade=False)
        if self.pull_mode:
            self._refresh_client_diagnostics()

    def _roots(self) -> list[str]:
        roots = []
        ws = self.server.workspace
        if ws.root_path:
            roots.append(ws.root_path)
        for folder in ws.folders.values():
            path = uri_to_path(folder.uri)
            if path not in roots:
                roots.append(path)
        return roots

    # -- analysis ----------------------------------------------------------------------------------

    async def _result(self, snapshot: Snapshot, request: bool = True) -> tuple[Stamp, Result] | None:
        """The analysis of `snapshot`; None if it became outdated meanwhile. For a request, raises
        AnalysisTimeout after ANALYSIS_TIMEOUT seconds; background work waits as long as it takes."""
        key = snapshot.key
        stamp = self.stamp(key)
        if stamp[0] != snapshot.version:
            return None
        hit = self.cache.peek(key, stamp)
        if hit is not None:
            # The common case for hovers, inlay hints and repeated pulls: no settings lookup, no re-recording.
            if self._absorbed.get(key) is not hit:
                self._absorb(snapshot, hit)
            return stamp, hit
        config, problems = self.resolver.config_for(snapshot.path)
        self.show_once(problems)
        excluded = self._excluded(snapshot.path, config)
        package = self._package_of(snapshot.path)
        workspace = None
        if snapshot.cells is None:  # notebooks are not importable; their imports resolve from disk
            workspace = self.engine_workspaces.for_path(snapshot.path, self._roots())

        def compute() -> Result:
            return _compute(snapshot, config, excluded, package, workspace)

        try:
            timeout = ANALYSIS_TIMEOUT if request else None
            result = await asyncio.wait_for(self.cache.get(key, stamp, compute), timeout)
        except asyncio.TimeoutError:
            log.warning("the analysis of %s took longer than %s s; answering without it", snapshot.path, timeout)
            raise AnalysisTimeout(snapshot.path) from None
        if result is None:
            return None
        if self._absorbed.get(key) is not result:
            self._absorb(snapshot, result)
        return stamp, result

    def _absorb(self, snapshot: Snapshot, result: Result) -> None:
        """Record what a new result says about its document: its imports, the files it read, its problems."""
        key = snapshot.key
        self.graph.update(key, self.graph.names.get(key) or module_names(snapshot.path, self._roots()),
                          result.imports)
        self._dependencies[key] = frozenset(getattr(result.analysis, "dependencies", None) or ())
        self._absorbed[key] = result
        self.show_once([f"{snapshot.path}: {p}" for p in result.analysis.problems], types.MessageType.Info)
        elsewhere: dict[str, list[Finding]] = {}
        for f in result.analysis.findings:
            if f.path != snapshot.path:
                elsewhere.setdefault(resolved(f.path), []).append(f)
        self._set_elsewhere(key, {p: tuple(found) for p, found in elsewhere.items()})

    def _set_elsewhere(self, key: str, found: dict[str, tuple[Finding, ...]]) -> None:
        """Record the findings document `key` puts in other files; refresh the open ones whose share changed."""
        before = self._elsewhere.pop(key, {})
        if found:
            self._elsewhere[key] = found
        changed = [p for p in set(before) | set(found) if before.get(p) != found.get(p)]
        targets = [k for k in (self._key_of_path(p) for p in changed) if k is not None and k != key]
        if not targets:
            return
        if self.pull_mode:
            self._refresh_client_diagnostics()
        else:
            for target in targets:
                self.schedule(target, 0, cascade=False)

    def _excluded(self, path: str, config) -> bool:
        if "://" in path or not path.endswith((".py", ".pyi", ".ipynb")):
            return False
        p = pathlib.PurePath(path)
        for root in self._roots():
            try:
                rel = p.relative_to(root)
            except ValueError:
                continue
            return config.is_excluded(pathlib.Path(rel))
        return False

    def _package_of(self, path: str) -> str | None:
        for root in self._roots():
            try:
                rel = pathlib.PurePath(path).relative_to(root)
            except ValueError:
                continue
            return ".".join(rel.parts[:-1]) or None
        return None

    async def current(self, uri: str) -> Current | None:
        """The up-to-date analysis for the document `uri` (a file or a notebook cell), or None."""
        for _ in range(5):
            snapshot = self.snapshot(uri)
            if snapshot is None:
                return None
            view = snapshot.view(uri)
            if view is None:
                return None
            try:
                got = await self._result(snapshot)
            except AnalysisTimeout:
                return None
            if got is None:
                # Outdated while we waited: the editor has moved on; try its newest version.
                await asyncio.sleep(0)
                continue
            stamp, result = got
            return Current(snapshot=snapshot, view=view, stamp=stamp, analysis=result.analysis,
                           findings=self._findings(snapshot, result.analysis),
                           index=self.indexes.get(view.uri, view.text, self.encoding))
        return None

    def _findings(self, snapshot: Snapshot, analysis: Analysis) -> list[Finding]:
        own = [f for f in analysis.findings if f.path == snapshot.path]
        if self._elsewhere:
            # What other open documents' analyses found in this file, once each (the analysis of this file
            # cannot see them: it does not know who calls its code with tensors that carry a graph).
            here = resolved(snapshot.path)
            seen = {(f.line, f.column, f.code) for f in own}
            last = None
            for source, by_path in list(self._elsewhere.items()):
                for f in by_path.get(here, ()) if source != snapshot.key else ():
                    last = snapshot.text.count("\n") + 1 if last is None else last
                    if (f.line, f.column, f.code) not in seen and f.end_line <= last:
                        seen.add((f.line, f.column, f.code))
                        own.append(dataclasses.replace(f, path=snapshot.path))
            own.sort(key=sort_key)
        own = drop_restated(own)
        trace = self._traces.get(snapshot.key)
        if trace is None or trace.version != snapshot.version:
            return own
        return convert.merge_trace(own, trace.findings)

    # -- diagnostics -------------------------------------------------------------------------------

    async def _publish_current(self, key: str) -> None:
        snapshot = self.snapshot(key)
        if snapshot is None:
            return
        # A background task (cancelled when superseded), so it may wait for a slow analysis.
        got = await self._result(snapshot, request=False)
        if got is None:
            return
        stamp, result = got
        # The check and the publish happen with no await in between: nothing can change the
        # document in the meantime, so a published version is always the current one.
        if self.stamp(key) != stamp:
            return
        current = self.snapshot(key)
        if current is None or current.version != snapshot.version:
            return
        findings = self._findings(snapshot, result.analysis)
        uris = set()
        for view in snapshot.views:
            uris.add(view.uri)
            self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=view.uri, version=view.version, diagnostics=self._diagnostics(snapshot, view, findings)))
        log.debug("published diagnostics for %s version %s", key, snapshot.version)
        for gone in self._published.get(key, set()) - uris:
            self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=gone, diagnostics=[]))
        self._published[key] = uris

    def _diagnostics(self, snapshot: Snapshot, view: View, findings: list[Finding]) -> list[types.Diagnostic]:
        index = self.indexes.get(view.uri, view.text, self.encoding)
        return [convert.diagnostic(f, view, index, snapshot, self._open_text) for f in findings if view.owns(f.line)]

    def _open_text(self, path: str) -> str | None:
        for doc in self.server.workspace.text_documents.values():
            if uri_to_path(doc.uri) == path:
                return doc.source
        return None

    def result_id(self, current: Current) -> str:
        trace = self._traces.get(current.snapshot.key)
        generation = trace.generation if trace and trace.version == current.snapshot.version else 0
        version = current.snapshot.version
        if current.snapshot.cells is not None:
            version = f"{version}.{current.view.version}"  # type: ignore[assignment]
        return f"{current.view.uri}@{version}#{current.stamp[1]}.{current.stamp[2]}.{generation}"

    async def pull(self, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
        current = await self.current(params.text_document.uri)
        if current is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        result_id = self.result_id(current)
        if params.previous_result_id == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        items = self._diagnostics(current.snapshot, current.view, current.findings)
        return types.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)

    # -- hover -------------------------------------------------------------------------------------

    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        current = await self.current(params.text_document.uri)
        if current is None:
            return None
        point = current.index.from_lsp(params.position)
        if point is None:
            return None
        point = (point[0] + current.view.offset, point[1])
        # Offsets count code points, whatever the encoding: a plain file's own index will do.
        module = current.index if current.snapshot.cells is None else \
            self.indexes.get(_MODULE_INDEX + current.snapshot.key, current.snapshot.text)

        def size(item) -> int:
            return module.offset_of(item.end_line, item.end_column) - module.offset_of(item.line, item.column)

        def under(item) -> bool:
            return (item.line, item.column) <= point <= (item.end_line, item.end_column)

        facts = sorted((f for f in current.view_facts() if under(f)), key=size)
        findings = [f for f in current.view_findings() if under(f)]
        return convert.hover(facts, findings, current.snapshot, current.view, current.index, self.markdown,
                             self.locator(current), self.links, not self.hover_shows_diagnostics)

    def locator(self, current: Current) -> convert.Locator:
        """Which file each line of a hover's cause chain is in (the analysis read these files)."""
        dependencies = sorted(getattr(current.analysis, "dependencies", None) or ())
        return convert.Locator(current.snapshot, dependencies, self._open_text)

    # -- inlay hints -------------------------------------------------------------------------------

    async def inlay_hints(self, params: types.InlayHintParams) -> list[types.InlayHint]:
        current = await self.current(params.text_document.uri)
        if current is None:
            return []
        config, _ = self.resolver.config_for(current.snapshot.path)
        if config.inlay_hints == "off":
            return []
        first = params.range.start.line + 1 + current.view.offset
        last = params.range.end.line + 1 + current.view.offset
        hints = []
        lines = current.snapshot.text.splitlines()
        for number, fact in convert.hinted_facts(current.analysis.facts, lines, config.inlay_hints):
            if not current.view.owns(fact.line) or not first <= fact.end_line <= last:
                continue
            data = {"uri": current.view.uri, "version": current.view.version, "fact": number}
            hints.append(convert.inlay_hint(fact, current.view, current.index, data))
        return hints

    async def resolve_inlay_hint(self, hint: types.InlayHint) -> types.InlayHint:
        """Fill in the tooltip, if the hint still describes the same fact of the same text."""
        data = hint.data if isinstance(hint.data, Mapping) else {}
        uri, number = data.get("uri"), data.get("fact")
        if not isinstance(uri, str) or not isinstance(number, int):
            return hint
        current = await self.current(uri)
        if current is None or data.get("version") != current.view.version:
            return hint
        facts = current.analysis.facts
        if not 0 <= number < len(facts):
            return hint
        fact = facts[number]
        position = current.index.to_lsp(fact.end_line - current.view.offset, fact.end_column)
        if convert.plain_label(fact) != hint.label or position != hint.position:
            return hint  # the analysis changed under the hint (settings, an imported file)
        hint.tooltip = convert.inlay_tooltip(fact, current.snapshot, self.markdown, self.locator(current),
                                             self.links)
        return hint

    # -- code actions ------------------------------------------------------------------------------

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        current = await self.current(params.text_document.uri)
        if current is None:
            return []
        only = params.context.only
        out: list[types.CodeAction] = []
        if _wanted(only, types.CodeActionKind.QuickFix):
            for diag, finding in self._targets(current, params):
                out.extend(self._quick_fixes(current, diag, finding))
        if _wanted(only, actions.FIX_ALL_KIND):
            edit, count = self.fix_all_edit(current)
            if count:
                out.append(types.CodeAction(title=f"gradsight: fix all ({count} safe fix{'es' if count > 1 else ''})",
                                            kind=actions.FIX_ALL_KIND, edit=edit))
        return out

    def _targets(self, current: Current,
                 params: types.CodeActionParams) -> list[tuple[types.Diagnostic | None, Finding]]:
        findings = current.view_findings()
        index, view = current.index, current.view
        ranges = {id(f): index.range_to_lsp(f.line - view.offset, f.column, f.end_line - view.offset, f.end_column)
                  for f in findings}
        targets: list[tuple[types.Diagnostic | None, Finding]] = []
        for diag in params.context.diagnostics:
            if diag.source != convert.SOURCE:
                continue
            for finding in findings:
                if finding.code == diag.code and ranges[id(finding)] == diag.range:
                    fix = actions.fix_from_data(diag.data)
                    data_version = diag.data.get("version") if isinstance(diag.data, Mapping) else None
                    if fix is not None and data_version == view.version:
                        # The fix travels with the diagnostic; read it back (it was computed with it).
                        finding = Finding(finding.path, finding.line, finding.column, finding.end_line,
                                          finding.end_column, finding.code, finding.name, finding.severity,
                                          finding.message, finding.related, fix, finding.extra)
                    targets.append((diag, finding))
                    break
        if targets or params.context.diagnostics:
            return targets
        # Clients that send no diagnostics in the context (or none of ours): findings in the range.
        start, end = params.range.start, params.range.end
        for finding in findings:
            r = ranges[id(finding)]
            if (r.start.line, r.start.character) <= (end.line, end.character) and \
                    (start.line, start.character) <= (r.end.line, r.end.character):
                targets.append((None, finding))
        return targets

    def _quick_fixes(self, current: Current, diag: types.Diagnostic | None, finding: Finding) -> list[types.CodeAction]:
        view, index = current.view, current.index
        diagnostics = [diag] if diag is not None else None
        out = []
        # Display-only fixes are suggestions (the hover shows them), never edits an action would apply.
        if finding.fix is not None and finding.fix.applicability != Applicability.DISPLAY_ONLY:
            edits = convert.text_edits(finding.fix.edits, view, index)
            out.append(types.CodeAction(
                title=finding.fix.title, kind=types.CodeActionKind.QuickFix, diagnostics=diagnostics,
                is_preferred=True if finding.fix.applicability == Applicability.SAFE else None,
                edit=self._edit(view, edits)))
        line0 = finding.line - view.offset - 1
        ignore = actions.ignore_edit(index.line_text(line0), finding.code)
        if ignore is not None:
            start, end, text = ignore
            edit = types.TextEdit(range=index.range_to_lsp(line0 + 1, start, line0 + 1, end), new_text=text)
            out.append(types.CodeAction(title=f"Ignore {finding.code} on this line", kind=types.CodeActionKind.QuickFix,
                                        diagnostics=diagnostics, edit=self._edit(view, [edit])))
        return out

    def _edit(self, view: View, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
        return convert.workspace_edit(view.uri, view.version, edits,
                                      bool(self.supports("workspace.workspace_edit.document_changes")))

    def fix_all_edit(self, current: Current) -> tuple[types.WorkspaceEdit | None, int]:
        view = current.view
        findings = [actions.shift(f, view.offset) for f in current.view_findings()]
        new_text, count = actions.fix_all(view.text, findings)
        replacement = actions.minimal_replacement(view.text, new_text)
        if not count or replacement is None:
            return None, 0
        start, end, text = replacement
        edit = types.TextEdit(range=types.Range(start=current.index.position_of_offset(start),
                                                end=current.index.position_of_offset(end)), new_text=text)
        return self._edit(view, [edit]), count

    async def fix_all_command(self, args: Sequence[Any]) -> dict[str, Any]:
        arg = args[0] if args and isinstance(args[0], Mapping) else {}
        uri = arg.get("uri")
        if not isinstance(uri, str):
            return {"applied": 0, "error": "gradsight.fixAll needs [{\"uri\": ..., \"version\": ...}]"}
        current = await self.current(uri)
        if current is None:
            return {"applied": 0, "error": f"{uri} is not open"}
        version = arg.get("version")
        if version is not None and version != current.view.version:
            return {"applied": 0, "error": f"{uri} changed (version {current.view.version}, asked for {version})"}
        edit, count = self.fix_all_edit(current)
        if edit is None:
            return {"applied": 0}
        response = await self.server.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=edit, label="gradsight: fix all"))
        if not response.applied:
            return {"applied": 0, "error": response.failure_reason or "the editor refused the edit"}
        return {"applied": count}

    # -- traces --------------------------------------------------------------------------------------

    def set_trace_findings(self, snapshot: Snapshot, findings: list[Finding],
                           elsewhere: Mapping[str, tuple[str, list[Finding]]] | None = None) -> None:
        """Attach a trace's findings to the version it ran on, then refresh that document.

        `elsewhere`: findings in other files (a `forward` in models.py), by path, with the text the trace
        ran. An open document gets them moved onto its current text; a file opened later, when its text
        is still the traced one."""
        if self._versions.get(snapshot.key) != snapshot.version:
            return
        self._trace_generation += 1
        self._traces[snapshot.key] = TraceState(snapshot.version, findings, self._trace_generation, snapshot.text)
        touched = [snapshot.key]
        for path, (text, found) in (elsewhere or {}).items():
            key = self._key_of_path(path)
            if key is None:
                self._pending_traces[path] = (text, found, self._trace_generation)
                continue
            other = self.snapshot(key)
            if other is None or other.cells is not None:
                continue
            moved = convert.remap_findings(found, text, other.text)
            self._traces[key] = TraceState(other.version, moved, self._trace_generation, other.text)
            touched.append(key)
        if self.pull_mode:
            self._refresh_client_diagnostics()
        else:
            for key in touched:
                self.schedule(key, 0, cascade=False)

    def request_cancelled(self, msg_id: Any) -> None:
        """`$/cancelRequest` for a request: if it is a running `gradsight.runTrace`, stop the trace."""
        for run in list(self.trace_runs.values()):
            if getattr(run, "request", None) == msg_id:
                run.set()

    def _key_of_path(self, path: str) -> str | None:
        # A copy: the workspace walk calls this from its thread while the loop opens and closes documents.
        for key in list(self._versions):
            if resolved(uri_to_path(key)) == path:
                return key
        return None

    def _adopt_pending_trace(self, key: str, snapshot: Snapshot) -> None:
        """A file opened after a trace reported findings in it: show them if it is the traced text."""
        pending = self._pending_traces.pop(resolved(snapshot.path), None)
        if pending is None or snapshot.cells is not None:
            return
        text, found, generation = pending
        moved = convert.remap_findings(found, text, snapshot.text)
        if moved:
            self._traces[key] = TraceState(snapshot.version, moved, generation, snapshot.text)


def _wanted(only: Sequence[str] | None, kind: str) -> bool:
    if not only:
        return True
    return any(kind == o or kind.startswith(f"{o}.") for o in only)


def _compute(snapshot: Snapshot, config, excluded: bool, package: str | None, workspace=None) -> Result:
    """Runs in a worker thread: the pure engine on an immutable snapshot."""
    from .. import analysis as engine
    from ..engine import Analysis

    if excluded:
        return Result(Analysis(path=snapshot.path), frozenset())
    try:
        analysis = engine.analyze_source(snapshot.text, snapshot.path, config, workspace=workspace)
    except Exception:  # noqa: BLE001 - the engine promises not to raise; if it does, stay up
        log.exception("the analysis of %s failed", snapshot.path)
        analysis = Analysis(path=snapshot.path, problems=["gradsight hit an internal error analysing this file; "
                                                          "see the server log"])
    try:
        imports = imported_modules(snapshot.text, package, records=analysis.imports or None)
    except Exception:  # noqa: BLE001
        imports = frozenset()
    return Result(analysis, imports)
