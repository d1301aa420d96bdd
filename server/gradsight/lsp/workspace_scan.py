"""Workspace diagnostics (`diagnosticMode = "workspace"`): problems of files that are not open.

In `openFiles` mode (the default) only open documents are analysed. In `workspace` mode the server
also walks the workspace folders for Python files (skipping `exclude`d ones, hidden folders, and
stopping at `MAX_FILES`), checks each one that is not open through the CLI's on-disk cache
(`gradsight.engine.cache.check_files`, so a second start reads the results instead of analysing), and
publishes their diagnostics with `textDocument/publishDiagnostics` (pull clients accept pushed
diagnostics for documents they do not pull). An open document's own diagnostics replace them; when
it is closed, its on-disk results come back.

The walk runs in one background thread, one file at a time, and pauses while the user is typing
(`busy()`), so it never competes with the open documents' analyses for long. Everything that
touches the protocol happens on the event loop: the thread hands each result back with
`call_soon_threadsafe`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pathlib
import threading
import time
from typing import Callable, Iterable

from lsprotocol import types
from pygls.uris import from_fs_path

from ..findings import Finding
from . import convert
from .documents import Snapshot, View
from .positions import LineIndex

log = logging.getLogger(__name__)

# Folders no Python project wants checked, skipped before `exclude` is even asked.
SKIP_DIRS = frozenset({"node_modules", "__pycache__", "site-packages"})
MAX_FILES = 5000  # a walk stops here: a workspace that large is better served by `gradsight check`
IDLE_WAIT = 0.2  # seconds the walk waits while the user is typing


def python_files(root: str, config_for: Callable[[str], object]) -> list[str]:
    """The `.py` files under `root`, sorted, without hidden folders or `exclude`d paths."""
    out: list[str] = []
    base = pathlib.Path(root)
    for dirpath, dirnames, filenames in os.walk(root):
        here = pathlib.Path(dirpath)
        config = config_for(str(here / "__init__.py"))
        dirnames[:] = sorted(n for n in dirnames
                             if not n.startswith(".") and n not in SKIP_DIRS
                             and not config.is_excluded(here / n, base))
        for name in sorted(filenames):
            if name.endswith(".py") and not config.is_excluded(here / name, base):
                out.append(str(here / name))
                if len(out) >= MAX_FILES:
                    return out
    return out


class WorkspaceDiagnostics:
    """The background walk and what it published. Owned by `Session`; all methods but the walk
    itself run on the event loop."""

    def __init__(self, session) -> None:
        self.session = session
        self.published: set[str] = set()  # uris with workspace diagnostics shown
        self._stop = threading.Event()
        self._generation = 0
        self.done = threading.Event()  # set when a walk finished (tests and the log)

    # -- control ---------------------------------------------------------------------------------

    def start(self, roots: Iterable[str], paths: Iterable[str] | None = None) -> None:
        """Restart the walk over `roots`; with `paths`, only check those files (changed on disk, or
        closed) without disturbing a walk in progress."""
        if paths is None:
            self._stop.set()
            self._stop = threading.Event()
            self._generation += 1
            self.done.clear()
        generation, stop = self._generation, self._stop
        loop = asyncio.get_running_loop()
        only = None if paths is None else list(paths)
        threading.Thread(target=self._walk, args=(loop, list(roots), only, generation, stop),
                         name="gradsight-workspace", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    def clear(self) -> None:
        """Leave workspace mode: stop the walk and take back everything it published."""
        self.stop()
        self._generation += 1
        for uri in sorted(self.published):
            if not self.session.is_open_uri(uri):
                self.session.server.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        self.published.clear()

    def opened(self, uri: str) -> None:
        """An open document's own diagnostics take over from the on-disk ones."""
        if uri in self.published:
            self.published.discard(uri)
            if self.session.pull_mode:  # pulled diagnostics do not replace pushed ones: clear them
                self.session.server.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # -- the walk (a background thread) -------------------------------------------------------------

    def _walk(self, loop, roots: list[str], only: list[str] | None, generation: int, stop: threading.Event) -> None:
        started = time.monotonic()
        count = 0
        try:
            from ..analysis import RULES
            from ..engine.cache import check_files

            if only is None:
                seen: set[str] = set()
                files = []
                for root in roots:
                    for path in python_files(root, lambda p: self.session.resolver.config_for(p)[0]):
                        if path not in seen:
                            seen.add(path)
                            files.append((root, path))
            else:
                files = [(self._root_of(path, roots), path) for path in only]
            for root, path in files:
                if stop.is_set() or generation != self._generation:
                    return
                while self.session.typing() and not stop.is_set():
                    time.sleep(IDLE_WAIT)
                if self.session.is_open_path(path):
                    continue
                config, _ = self.session.resolver.config_for(path)
                try:
                    # Its own engine (made per file): the walk must not evict the open documents' parses from
                    # the server's engine, whose incremental analysis of them keeps typing fast.
                    [(_, findings, _problems)] = check_files([pathlib.Path(path)], config, rules=RULES,
                                                             use_cache=True, jobs=1, root=pathlib.Path(root))
                except Exception:  # noqa: BLE001 - one bad file must not end the walk
                    log.exception("workspace diagnostics: checking %s failed", path)
                    continue
                count += 1
                loop.call_soon_threadsafe(self._publish, path, findings, generation)
        except Exception:  # noqa: BLE001
            log.exception("workspace diagnostics failed")
        finally:
            if only is None and generation == self._generation:
                log.info("workspace diagnostics: %d files checked in %.1f s", count, time.monotonic() - started)
                self.done.set()

    @staticmethod
    def _root_of(path: str, roots: list[str]) -> str:
        for root in roots:
            if pathlib.PurePath(path).is_relative_to(root):
                return root
        return str(pathlib.Path(path).parent)

    def _publish(self, path: str, findings: list[Finding], generation: int) -> None:
        if generation != self._generation or self.session.is_open_path(path):
            return
        uri = from_fs_path(path) or path
        try:
            text = pathlib.Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return
        view = View(uri=uri, version=0, text=text)
        snapshot = Snapshot(key=uri, path=path, text=text, version=0, views=(view,))
        index = LineIndex(text, self.session.encoding)
        diagnostics = [convert.diagnostic(f, view, index, snapshot, self.session.open_text) for f in findings
                       if f.path == path or os.path.realpath(f.path) == os.path.realpath(path)]
        if not diagnostics and uri not in self.published:
            return
        self.session.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))
        if diagnostics:
            self.published.add(uri)
        else:
            self.published.discard(uri)
