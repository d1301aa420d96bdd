"""`gradsight.runTrace`: run the script under the tracer, with progress and cancellation.

The tracer (`gradsight.trace.run_trace`) executes the user's script in a child process. That is
running the user's code, so it is refused in an untrusted workspace (see `settings.py` for what
"trusted" means). It runs the file *on disk*, so it is refused while the buffer has unsaved edits:
trace positions must match the text the diagnostics are shown on.

The command answers when the trace ends, with counts the client can show in a notification
(`{findings, confirmed, errors, warnings, cancelled, error, stopped, files}`; see docs/editors.md).
Meanwhile the client sees `$/progress` begin/report/end on a server-created token. Cancelling that
progress, a `$/cancelRequest` for the command, or `shutdown` set the `cancel` event `run_trace`
polls: the tracer then kills the script's process group and removes its temporary folder.

Static findings the trace confirmed end in "(confirmed by trace)", trace-only ones in "(found by
trace)". They stay until the lines they name change (`Session._move_trace`), and findings in other
files go to those files (`Session.set_trace_findings`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import pathlib
import threading
import uuid
from dataclasses import replace
from typing import Any, Mapping, Sequence

from lsprotocol import types

from ..findings import Finding, Severity
from .session import TraceRun

log = logging.getLogger(__name__)


async def run_trace_command(session, args: Sequence[Any]) -> dict[str, Any]:
    arg = args[0] if args and isinstance(args[0], Mapping) else {}
    uri = arg.get("uri")
    if not isinstance(uri, str):
        return _refuse(session, "gradsight.runTrace needs [{\"uri\": ...}]")
    if not session.trusted:
        return _refuse(session, "this workspace is not trusted, and a trace runs your code. "
                                "Trust the workspace to run traces.")
    snapshot = session.snapshot(uri)
    if snapshot is None:
        return _refuse(session, f"{uri} is not open")
    if snapshot.cells is not None or not snapshot.path.endswith(".py") or "://" in snapshot.path:
        return _refuse(session, "traces run Python scripts saved on disk; this document is not one")
    try:
        on_disk = pathlib.Path(snapshot.path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return _refuse(session, f"cannot read {snapshot.path} ({exc})")
    if on_disk.replace("\r\n", "\n") != snapshot.text.replace("\r\n", "\n"):
        return _refuse(session, f"save {pathlib.Path(snapshot.path).name} first: the trace runs the file on disk")
    if snapshot.key in session.trace_runs:
        return _refuse(session, "a trace of this file is already running")
    try:
        from .. import trace as tracer
        from ..trace import run_trace
    except ImportError as exc:
        return _refuse(session, f"the tracer is not available in this installation ({exc})")

    config, _ = session.resolver.config_for(snapshot.path)
    cancel, done = threading.Event(), threading.Event()
    # The request id (pygls keeps it in a context variable the handler's task inherited), so that a
    # `$/cancelRequest` for this command reaches the trace (`Session.request_cancelled`).
    request = getattr(session.server.protocol, "msg_id", None)
    session.trace_runs[snapshot.key] = TraceRun(cancel, done, request)
    progress = await _Progress.start(session, f"Tracing {pathlib.Path(snapshot.path).name}", cancel)

    def call() -> dict[str, Any]:
        # `done` is set in the worker thread, after the tracer has ended the script's process group and
        # removed its folder: shutdown waits on it while the event loop is busy answering `shutdown`.
        try:
            return run_trace(snapshot.path, device=config.trace.device, max_steps=config.trace.max_steps,
                             timeout=config.trace.timeout, memory_mb=config.trace.memory_mb,
                             python=session.resolver.settings.python, cwd=_cwd(session, snapshot.path),
                             cancel=cancel)
        finally:
            done.set()

    try:
        progress.report("running the script")
        result = await asyncio.get_running_loop().run_in_executor(session.trace_pool, call)
    except asyncio.CancelledError:
        # `$/cancelRequest` for this command: stop the script (the worker thread kills its process group).
        cancel.set()
        progress.end("cancelled")
        raise
    except Exception as exc:  # noqa: BLE001 - a broken tracer must not take the server down
        log.exception("trace of %s failed", snapshot.path)
        progress.end("failed")
        return _refuse(session, f"the trace failed: {exc}", types.MessageType.Error)
    finally:
        session.trace_runs.pop(snapshot.key, None)

    by_path = _findings(result, config)
    findings = [_in_file(f, snapshot.path) for f in by_path.pop(os.path.realpath(snapshot.path), [])]
    elsewhere = {path: (_read(path), found) for path, found in by_path.items()}
    elsewhere = {path: (text, found) for path, (text, found) in elsewhere.items() if text is not None}
    everything = [f for found in [findings, *(f for _, f in elsewhere.values())] for f in found]
    error, stopped = result.get("error"), result.get("stopped")
    if cancel.is_set():
        progress.end("cancelled")
        return {"findings": 0, "confirmed": 0, "errors": 0, "warnings": 0, "cancelled": True,
                "error": error, "stopped": stopped}
    session.set_trace_findings(snapshot, findings, elsewhere)
    confirmed = await _confirmed_count(session, uri, findings)
    counts = {
        "findings": len(everything),
        "confirmed": confirmed,
        "errors": sum(1 for f in everything if f.severity == Severity.ERROR),
        "warnings": sum(1 for f in everything if f.severity == Severity.WARNING),
    }
    summary = (f"{counts['findings']} finding{'s' if counts['findings'] != 1 else ''}"
               f" ({confirmed} static finding{'s' if confirmed != 1 else ''} confirmed)")
    progress.end(summary)
    name = pathlib.Path(snapshot.path).name
    # The tracer names "the trace could not run" with its own error type (`trace.TRACE_ERROR`).
    if isinstance(error, Mapping) and error.get("type") in ("TRACE_ERROR", getattr(tracer, "TRACE_ERROR", None)):
        session.show(f"the trace of {name} could not run: {error.get('message')}", types.MessageType.Warning)
    elif not arg.get("quiet"):
        # Clients that show their own notification from the returned counts pass `"quiet": true`.
        ending = f"; the script stopped with {_describe(error)}" if error else ""
        session.show(f"trace of {name}: {summary}{ending}", types.MessageType.Info)
    return {**counts, "cancelled": False, "error": error, "stopped": stopped,
            "files": sorted({*([snapshot.path] if findings else []), *elsewhere})}


async def _confirmed_count(session, uri: str, traced: list[Finding]) -> int:
    """How many static findings of the traced file the trace confirmed."""
    from .convert import confirms

    try:
        current = await session.current(uri)
    except Exception:  # noqa: BLE001
        return 0
    if current is None:
        return 0
    return sum(1 for s in current.analysis.findings if any(confirms(t, s) for t in traced))


def _read(path: str) -> str | None:
    try:
        return pathlib.Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _describe(error: Any) -> str:
    if not isinstance(error, Mapping):
        return str(error)
    where = f" at line {error['line']}" if error.get("line") else ""
    return f"{error.get('type', 'an error')}: {error.get('message', '')}{where}"


def _findings(result: Mapping[str, Any], config) -> dict[str, list[Finding]]:
    """The trace's findings by file (a finding inside an imported module's `forward` is in that file)."""
    out: dict[str, list[Finding]] = {}
    for data in result.get("findings") or []:
        try:
            finding = Finding.from_json(data)
        except (KeyError, TypeError, ValueError) as exc:
            log.warning("ignoring a malformed trace finding %r (%s)", data, exc)
            continue
        if not isinstance(finding.path, str) or not os.path.isabs(finding.path) or not config.is_enabled(finding.code):
            continue
        path = os.path.realpath(finding.path)
        finding = replace(finding, path=path, severity=config.severity_for(finding.code, finding.severity),
                          extra={**finding.extra, "source": "trace"})
        out.setdefault(path, []).append(finding)
    return out


def _in_file(finding: Finding, path: str) -> Finding:
    """`finding` and its related locations in that file, named by `path` (the editor's spelling of it,
    which may differ from the tracer's resolved one by a symbolic link)."""
    real = os.path.realpath(path)
    related = tuple(replace(r, path=path) if os.path.realpath(r.path) == real else r for r in finding.related)
    return replace(finding, path=path, related=related)


def _cwd(session, path: str) -> str:
    root = session.server.workspace.root_path
    if root and pathlib.PurePath(path).is_relative_to(root):
        return root
    return str(pathlib.Path(path).parent)


def _refuse(session, message: str, kind: types.MessageType = types.MessageType.Warning) -> dict[str, Any]:
    session.show(message, kind)
    return {"findings": 0, "error": message}


class _Progress:
    """Server-initiated work-done progress; a no-op for clients without `window.workDoneProgress`."""

    def __init__(self, session, token: str | None) -> None:
        self._session = session
        self._token = token

    @classmethod
    async def start(cls, session, title: str, cancel: threading.Event) -> "_Progress":
        if not session.supports("window.work_done_progress"):
            return cls(session, None)
        token = f"gradsight-trace-{uuid.uuid4()}"
        progress = session.server.work_done_progress
        try:
            await asyncio.wait_for(progress.create_async(token), 5.0)
        except Exception as exc:  # noqa: BLE001
            log.warning("the client refused a progress token (%s)", exc)
            return cls(session, None)
        progress.begin(token, types.WorkDoneProgressBegin(title=title, cancellable=True, percentage=0))
        future = progress.tokens.get(token)
        if future is not None:
            # pygls cancels this future on `window/workDoneProgress/cancel`.
            future.add_done_callback(lambda f: cancel.set() if f.cancelled() else None)
        return cls(session, token)

    def report(self, message: str) -> None:
        if self._token is not None:
            self._session.server.work_done_progress.report(
                self._token, types.WorkDoneProgressReport(message=message, cancellable=True))

    def end(self, message: str) -> None:
        if self._token is not None:
            self._session.server.work_done_progress.end(self._token, types.WorkDoneProgressEnd(message=message))
            self._session.server.work_done_progress.tokens.pop(self._token, None)
            self._token = None
