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
- `tracing`: the `gradsight.runTrace` command;
- `logs`: stderr and `window/logMessage` logging (never stdout).
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    """Serve LSP on stdin/stdout until the client says `exit`. Returns the process exit code."""
    parser = argparse.ArgumentParser(prog="gradsight lsp", description="Run the gradsight language server on stdio.")
    parser.add_argument("--stdio", action="store_true", help="accepted for compatibility; stdio is the only transport")
    parser.add_argument("--log-level", choices=["off", "error", "warning", "info", "debug"], default=None,
                        help="initial log level (the logLevel setting overrides it)")
    args = parser.parse_args(argv)

    from . import logs
    from .settings import LOG_LEVELS

    logs.setup_stderr(LOG_LEVELS[args.log_level or "info"])
    # The protocol owns the real stdout; anything else that prints goes to stderr.
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr

    from .server import create_server

    server = create_server()
    server.start_io(stdin, stdout)
    return 0 if getattr(server.protocol, "_shutdown", False) else 1
