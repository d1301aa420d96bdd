"""Logging: stderr until the client is connected, then `window/logMessage` (stderr keeps errors only, so
editors that show both do not print every line twice); stdout never.

stdout is the LSP channel. `main()` keeps the real stdout for the protocol and points `sys.stdout`
at stderr, so a stray `print` anywhere (a user's `conftest`, a library) cannot corrupt it.

Only records of the `gradsight` logger tree reach the client: pygls logs each message it sends at
debug level, so forwarding pygls's own records would loop.
"""

from __future__ import annotations

import asyncio
import logging
import threading

from lsprotocol import types

ROOT = "gradsight"
_LEVELS = (
    (logging.ERROR, types.MessageType.Error),
    (logging.WARNING, types.MessageType.Warning),
    (logging.INFO, types.MessageType.Info),
)


def setup_stderr(level: int = logging.INFO) -> None:
    handler = logging.StreamHandler()  # stderr
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger(ROOT).setLevel(level)


def set_level(level: int) -> None:
    logging.getLogger(ROOT).setLevel(level)


class ClientLogHandler(logging.Handler):
    """Forwards `gradsight.*` records to the client as `window/logMessage`, from any thread."""

    def __init__(self, server, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._server = server
        self._loop = loop
        self._local = threading.local()
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(self._local, "busy", False):
            return
        self._local.busy = True
        try:
            kind = next((t for lvl, t in _LEVELS if record.levelno >= lvl), types.MessageType.Log)
            params = types.LogMessageParams(type=kind, message=self.format(record))
            if self._loop.is_closed():
                return
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is self._loop:
                self._server.window_log_message(params)
            else:
                self._loop.call_soon_threadsafe(self._server.window_log_message, params)
        except Exception:  # noqa: BLE001 - logging must never raise
            pass
        finally:
            self._local.busy = False


def install_client_handler(server, loop: asyncio.AbstractEventLoop) -> ClientLogHandler:
    logger = logging.getLogger(ROOT)
    for handler in list(logger.handlers):
        if isinstance(handler, ClientLogHandler):
            logger.removeHandler(handler)
    handler = ClientLogHandler(server, loop)
    logger.addHandler(handler)
    # From now on the client shows our log; stderr (which VS Code labels [error]) keeps only errors.
    if not any(isinstance(h, _ErrorsToStderr) for h in logger.handlers):
        errors = _ErrorsToStderr()
        errors.setLevel(logging.ERROR)
        errors.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(errors)
    logger.propagate = False
    return handler


class _ErrorsToStderr(logging.StreamHandler):
    pass
