"""Creates the language server and registers its handlers. Each handler is one call into `Session`.

`guarded` wraps every handler: an exception is logged (stderr and `window/logMessage`) and the
request is answered with an empty result, so no input can crash or wedge the server.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import sys
import threading
from typing import Any, BinaryIO, Callable

from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from .. import __version__
from . import actions
from .protocol import GradsightProtocol, StdinReader, serve
from .session import Session
from .tracing import run_trace_command

log = logging.getLogger(__name__)

FIX_ALL_COMMAND = "gradsight.fixAll"
RUN_TRACE_COMMAND = "gradsight.runTrace"

NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[types.NotebookDocumentFilterWithCells(
        notebook="jupyter-notebook", cells=[types.NotebookCellLanguage(language="python")])],
    save=False,
)


class GradsightServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("gradsight", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=NOTEBOOK_SYNC, protocol_cls=GradsightProtocol)
        self.session = Session(self)

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None,
                 wrap_writer: Callable[[Any], Any] | None = None) -> None:
        """Serve on stdio with gradsight's reader (`protocol.serve`) instead of pygls's.
        `wrap_writer` may wrap the writer (`fast_start.AnswerFilter`)."""
        self._stop_event = threading.Event()
        reader = StdinReader(stdin or sys.stdin.buffer, self.thread_pool)
        writer = StdoutWriter(stdout or sys.stdout.buffer)
        self.protocol.set_writer(wrap_writer(writer) if wrap_writer else writer)
        try:
            asyncio.run(serve(self._stop_event, reader, self.protocol))
        except BrokenPipeError:
            log.warning("the connection to the client is lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls shows every error outside a request as an error pop-up (`window/showMessage`): a change to a
        document that is not open, a notification it could not read. Those are the client's mistakes, and
        our own handlers log their errors themselves (`guarded`); the log is the place for them."""
        log.warning("%s: %s", getattr(source, "__name__", source), error)


def guarded(default: Any = None) -> Callable:
    """Catch and log any exception from a handler; answer `default` instead."""

    def decorate(handler: Callable) -> Callable:
        if inspect.iscoroutinefunction(handler):
            @functools.wraps(handler)
            async def run_async(ls, *args):
                try:
                    return await handler(ls, *args)
                except asyncio.CancelledError:
                    raise
                except Exception:  # noqa: BLE001
                    log.exception("%s failed", handler.__name__)
                    return default
            return run_async

        @functools.wraps(handler)
        def run(ls, *args):
            try:
                return handler(ls, *args)
            except Exception:  # noqa: BLE001
                log.exception("%s failed", handler.__name__)
                return default
        return run

    return decorate


def create_server() -> GradsightServer:
    server = GradsightServer()

    @server.feature(types.INITIALIZE)
    @guarded()
    def initialize(ls: GradsightServer, params: types.InitializeParams) -> None:
        ls.session.initialize(params)

    @server.feature(types.INITIALIZED)
    @guarded()
    async def initialized(ls: GradsightServer, params: types.InitializedParams) -> None:
        await ls.session.initialized()

    @server.feature(types.SHUTDOWN)
    @guarded()
    def shutdown(ls: GradsightServer, params: None) -> None:
        ls.session.shutdown()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @guarded()
    async def did_change_configuration(ls: GradsightServer, params: types.DidChangeConfigurationParams) -> None:
        await ls.session.reload_settings(params.settings)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @guarded()
    def did_change_watched_files(ls: GradsightServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.session.files_changed(params.changes)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @guarded()
    def did_open(ls: GradsightServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.session.opened(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @guarded()
    def did_change(ls: GradsightServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.session.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @guarded()
    def did_close(ls: GradsightServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.session.closed(params.text_document.uri, [params.text_document.uri])

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    @guarded()
    def notebook_did_open(ls: GradsightServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.session.opened(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    @guarded()
    def notebook_did_change(ls: GradsightServer, params: types.DidChangeNotebookDocumentParams) -> None:
        ls.session.changed(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    @guarded()
    def notebook_did_close(ls: GradsightServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.session.closed(params.notebook_document.uri, [c.uri for c in params.cell_text_documents])

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC,
                    types.DiagnosticOptions(identifier="gradsight", inter_file_dependencies=True,
                                            workspace_diagnostics=False))
    @guarded(types.RelatedFullDocumentDiagnosticReport(items=[]))
    async def diagnostic(ls: GradsightServer, params: types.DocumentDiagnosticParams):
        return await ls.session.pull(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @guarded()
    async def hover(ls: GradsightServer, params: types.HoverParams):
        return await ls.session.hover(params)

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=True))
    @guarded([])
    async def inlay_hint(ls: GradsightServer, params: types.InlayHintParams):
        return await ls.session.inlay_hints(params)

    @server.feature(types.INLAY_HINT_RESOLVE)
    async def inlay_hint_resolve(ls: GradsightServer, hint: types.InlayHint):
        try:
            return await ls.session.resolve_inlay_hint(hint)
        except Exception:  # noqa: BLE001 - resolve must answer with the hint it was given
            log.exception("inlayHint/resolve failed")
            return hint

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, actions.FIX_ALL_KIND]))
    @guarded([])
    async def code_action(ls: GradsightServer, params: types.CodeActionParams):
        return await ls.session.code_actions(params)

    @server.command(FIX_ALL_COMMAND)
    @guarded({"applied": 0, "error": "internal error; see the server log"})
    async def fix_all(ls: GradsightServer, *args: Any):
        return await ls.session.fix_all_command(args)

    @server.command(RUN_TRACE_COMMAND)
    @guarded({"findings": 0, "error": "internal error; see the server log"})
    async def run_trace(ls: GradsightServer, *args: Any):
        return await run_trace_command(ls.session, args)

    return server
