"""Answer `initialize` before pygls and lsprotocol are imported (stdlib only).

Importing pygls and lsprotocol is most of the server's start time (lsprotocol builds some 600 attrs
classes: about 0.2 s on a quiet machine, much more on a loaded one), and the client waits for the
`initialize` answer before it sends the first document. The answer depends only on gradsight's code
and the client's capabilities, so the first server started for a client stores it, and later starts
read the first message themselves, answer it from that store at once, and then start pygls as usual:
the message is replayed to pygls (which sets itself up from it as always), and pygls's own answer to
that request is dropped, so the client gets exactly one.

The key of a stored answer covers gradsight's version, the server code (names, sizes and times of the
files of `gradsight.lsp`), the Python version and the client's `capabilities`; anything else that
differs starts a normal, slower start that stores a new answer. `GRADSIGHT_LSP_NO_FAST_START=1` turns
this off. Stored answers live in `$XDG_CACHE_HOME/gradsight/` (or `~/.cache/gradsight/`); an
unwritable folder only means no fast start.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import sys
import tempfile
from typing import Any, BinaryIO

MAX_FIRST_MESSAGE = 4 * 1024 * 1024  # an initialize request larger than this is left to pygls


def cache_dir() -> pathlib.Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "gradsight"


def _code_fingerprint() -> str:
    from .. import __version__

    here = pathlib.Path(__file__).resolve().parent
    parts = [__version__, sys.version]
    for path in sorted(here.glob("*.py")):
        try:
            st = path.stat()
        except OSError:
            continue
        parts.append(f"{path.name}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)


def cache_key(params: Any) -> str | None:
    if not isinstance(params, dict):
        return None
    capabilities = params.get("capabilities")
    h = hashlib.sha256(_code_fingerprint().encode())
    h.update(json.dumps(capabilities, sort_keys=True, separators=(",", ":")).encode())
    return h.hexdigest()[:32]


class Start:
    """What the fast path did: the bytes it read (to replay), the request id and whether it answered."""

    def __init__(self, consumed: bytes = b"", request_id: Any = None, key: str | None = None,
                 answered: bool = False) -> None:
        self.consumed = consumed
        self.request_id = request_id
        self.key = key
        self.answered = answered


def read_first_message(stdin: BinaryIO) -> tuple[bytes, dict | None]:
    """Read one framed message: (every byte read, the parsed body or None)."""
    raw = bytearray()
    length = None
    while True:
        line = stdin.readline(8192)
        raw += line
        if not line or not line.endswith(b"\n"):
            return bytes(raw), None
        content = line.strip(b"\r\n")
        if not content:
            break
        name, colon, value = content.partition(b":")
        if colon and name.strip().lower() == b"content-length" and value.strip().isdigit():
            length = int(value.strip())
    if length is None or length > MAX_FIRST_MESSAGE:
        return bytes(raw), None
    body = b""
    while len(body) < length:
        chunk = stdin.read(length - len(body))
        if not chunk:
            break
        body += chunk
    raw += body
    try:
        message = json.loads(body)
    except ValueError:
        return bytes(raw), None
    return bytes(raw), message if isinstance(message, dict) else None


def answer_initialize(stdin: BinaryIO, stdout: BinaryIO) -> Start:
    """Read the first message; if it is `initialize` and a stored answer fits, send it now."""
    if os.environ.get("GRADSIGHT_LSP_NO_FAST_START"):
        return Start()
    consumed, message = read_first_message(stdin)
    if message is None or message.get("method") != "initialize" or "id" not in message:
        return Start(consumed)
    try:
        key = cache_key(message.get("params"))
    except Exception:  # noqa: BLE001 - the fast path must never stop a start
        key = None
    if key is None:
        return Start(consumed, message["id"])
    try:
        result = json.loads((cache_dir() / f"lsp-initialize-{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Start(consumed, message["id"], key)
    body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result},
                      separators=(",", ":")).encode("utf-8")
    stdout.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stdout.flush()
    return Start(consumed, message["id"], key, answered=True)


def store(key: str, result: Any) -> None:
    """Keep an `initialize` answer for the next start (atomically: servers may start side by side)."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".lsp-initialize-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(result, fh)
        os.replace(tmp, folder / f"lsp-initialize-{key}.json")
    except OSError:
        pass


class ReplayStream:
    """stdin with the bytes the fast path already read put back in front."""

    def __init__(self, prefix: bytes, stream: BinaryIO) -> None:
        self._prefix = prefix
        self._stream = stream

    def readline(self, limit: int = -1) -> bytes:
        if self._prefix:
            end = self._prefix.find(b"\n")
            cut = len(self._prefix) if end < 0 else end + 1
            if limit is not None and limit >= 0:
                cut = min(cut, limit)
            line, self._prefix = self._prefix[:cut], self._prefix[cut:]
            if line.endswith(b"\n") or (limit is not None and 0 <= limit <= len(line)) or self._prefix:
                return line
            return line + self._stream.readline(-1 if limit is None or limit < 0 else limit - len(line))
        return self._stream.readline(limit)

    def read(self, n: int = -1) -> bytes:
        if self._prefix:
            if n is None or n < 0:
                data, self._prefix = self._prefix, b""
                return data + self._stream.read()
            data, self._prefix = self._prefix[:n], self._prefix[n:]
            if len(data) < n:  # like a buffered stream: short only at the end of the input
                data += self._stream.read(n - len(data))
            return data
        return self._stream.read(n)


class AnswerFilter:
    """Wraps the writer: drops pygls's answer to an `initialize` already answered, or stores the answer
    of a normal start for the next one. Only messages up to that answer are looked at."""

    def __init__(self, writer, start: Start) -> None:
        self._writer = writer
        self._start = start
        self._watching = start.request_id is not None and (start.answered or start.key is not None)

    def close(self):
        return self._writer.close()

    def write(self, data: bytes):
        if self._watching:
            header_end = data.find(b"\r\n\r\n")
            try:
                message = json.loads(data[header_end + 4:] if header_end >= 0 else data)
            except ValueError:
                message = None
            if isinstance(message, dict) and "method" not in message and message.get("id") == self._start.request_id:
                self._watching = False
                if self._start.answered:
                    return None  # the client already has its answer
                if "result" in message and self._start.key:
                    store(self._start.key, message["result"])
        return self._writer.write(data)
