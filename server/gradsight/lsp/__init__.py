"""The gradsight language server (pygls 2, stdio). Start it with `gradsight lsp`.

Only this package imports pygls and lsprotocol. The modules:

- `server`: creates the server and registers thin handlers;
- `session`: the state behind the handlers (settings, analyses, pull/push diagnostics, actions);
- `scheduler`: worker-thread analyses keyed by version, and per-document debouncing;
- `documents` / `notebooks`: what the engine analyses, and how notebook cells map onto one module;
- `positions`: the only conversion between engine positions and LSP positions;
- `convert`: findings and facts -> diagnostics, hovers, inlay hints, edits;
- `actions`: quick fixes, "fix all" and "ignore" as text operations;
- `settings`: editor settings over `[tool.gradsight]`;
- `tracing`: the `gradsight.runTrace` command (counts for the client's notification, cancellation);
- `workspace_scan`: `diagnosticMode = "workspace"`, problems of files that are not open;
- `memory`: keeping full garbage collections off the critical path (`gc.freeze` in pauses);
- `logs`: stderr and `window/logMessage` logging (never stdout);
- `fast_start`: answering `initialize` from a stored answer before pygls is imported.
"""

from __future__ import annotations

import argparse
import logging
import sys


def main(argv: list[str] | None = None) -> int:
    """Serve LSP on stdin/stdout until the client says `exit`. Returns the process exit code."""
    parser = argparse.ArgumentParser(prog="gradsight lsp", description="Run the gradsight language server on stdio.")
    parser.add_argument("--stdio", action="store_true", help="accepted for compatibility; stdio is the only transport")
    parser.add_argument("--log-level", default=None, metavar="{off,error,warning,info,debug}",
                        help="initial log level (the logLevel setting overrides it)")
    args = parser.parse_args(argv)

    # The protocol owns the real stdout; anything else that prints goes to stderr.
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr
    # Before pygls and lsprotocol are imported: answer `initialize` from a stored answer if one fits.
    from . import fast_start

    try:
        start = fast_start.answer_initialize(stdin, stdout)
    except Exception:  # noqa: BLE001 - the fast path must never stop a start
        start = fast_start.Start()

    from . import logs
    from .settings import DEFAULT_LOG_LEVEL, LOG_LEVELS

    level = (args.log_level or DEFAULT_LOG_LEVEL).lower()
    logs.setup_stderr(LOG_LEVELS.get(level, LOG_LEVELS[DEFAULT_LOG_LEVEL]))
    if level not in LOG_LEVELS:
        logging.getLogger("gradsight.lsp").warning("unknown --log-level %r; using %r", args.log_level,
                                                   DEFAULT_LOG_LEVEL)
    if start.answered:
        logging.getLogger("gradsight.lsp").debug("answered initialize from %s", fast_start.cache_dir())

    from .server import create_server

    server = create_server()
    from .memory import Collector

    collector = server.session.collector = Collector(busy=server.session.cache.busy)
    if logging.getLogger("gradsight").isEnabledFor(logging.DEBUG):
        collector.log_slow_collections()
    collector.started()  # after the imports: freeze what lives as long as the server
    server.start_io(fast_start.ReplayStream(start.consumed, stdin) if start.consumed else stdin, stdout,
                    wrap_writer=lambda writer: fast_start.AnswerFilter(writer, start))
    server.session.shutdown()  # also when the client vanished without `shutdown`
    code = 0 if getattr(server.protocol, "_shutdown", False) else 1
    _exit_if_stuck(code, stdout)
    return code


def _exit_if_stuck(code: int, stdout) -> None:
    """After `exit`, do not let a runaway analysis thread keep the process alive (the interpreter
    joins worker threads at exit): give them two seconds, then leave without them."""
    import os
    import threading
    import time

    deadline = time.monotonic() + 2.0
    workers = [t for t in threading.enumerate() if t.name.startswith("gradsight-") and t.is_alive()]
    for thread in workers:
        thread.join(max(0.0, deadline - time.monotonic()))
    if any(t.is_alive() for t in workers):
        logging.getLogger("gradsight.lsp").warning("an analysis is still running; exiting without it")
        for stream in (stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(code)
