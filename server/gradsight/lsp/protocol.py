"""The JSON-RPC layer under the server: reading messages from stdin, and answering every request.

pygls 2's own stdio loop (`pygls.io_.run_async`) trusts its input more than an editor's stdin deserves:

- an absurd `Content-Length` (`99999999999999999999999`) raises `OverflowError` in the read, the
  exception leaves the read loop and the server exits; a large one is allocated in one piece before a
  byte has arrived;
- a body that is not JSON, or JSON that is not a message (`null`, an array, `{}`), is logged with a
  traceback and shown to the user as an error pop-up, and never answered;
- a request whose params do not structure (cattrs) is dropped without a response (the editor waits for
  it forever) and shown as "Error in server: Invalid Params".

`serve()` replaces that loop for `GradsightServer.start_io`, and `GradsightProtocol` replaces how a
message is structured and dispatched:

- framing: header lines end at `\\r\\n` (or `\\n`); `Content-Length` is read case-insensitively and must
  be a plain decimal number no larger than `MAX_CONTENT_LENGTH`. A header block without a valid one is
  logged and skipped: the reader goes on to the next header block, so the stream resynchronises at the
  next well-formed message. Bodies are read in chunks as they arrive, never allocated ahead;
- a body that is not UTF-8 JSON is answered with a parse error (-32700, id null); JSON that is not a
  JSON-RPC 2.0 message with an invalid-request error (-32600, with the request's id when it has a usable
  one, else null); a notification that is malformed is only logged;
- a request whose params do not match the method's parameter type is answered with -32602 (Invalid
  params) and a message naming what is wrong (`required field missing @ $.params.position`); a
  notification with bad params is logged (warning) and ignored; a response whose result does not
  structure fails the server's pending request instead of leaving it waiting;
- before `initialize`, requests get -32002 (ServerNotInitialized) and notifications other than `exit`
  are dropped; after `shutdown`, requests get -32600; as the specification says;
- nothing here is shown to the user with `window/showMessage`: malformed traffic is the client's
  problem, and it goes to the log.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002

# Well above anything gradsight analyses (5,000,000 characters, at most 12 bytes each once escaped in
# JSON), well below what would exhaust memory.
MAX_CONTENT_LENGTH = 256 * 1024 * 1024
MAX_HEADER_LINE = 64 * 1024  # longer "header lines" are junk; they are read (and skipped) in pieces
READ_CHUNK = 1024 * 1024
_MAX_DETAIL = 500


class MessageError(Exception):
    """A message that cannot be handled; `code` is the JSON-RPC error to answer a request with."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class _Missing:
    pass


_MISSING = _Missing()


def _usable_id(value: Any) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def structure_problems(exc: BaseException) -> str:
    """What cattrs found wrong, one line (`required field missing @ $.params.position; ...`)."""
    try:
        from cattrs import transform_error
        from cattrs.v import format_exception

        def describe(error: BaseException, type_: Any) -> str:
            text = format_exception(error, type_)
            if isinstance(error, ValueError) and str(error):
                text = f"{text} ({error})"
            return text

        problems = transform_error(exc, format_exception=describe)
        text = "; ".join(problems) or str(exc)
    except Exception:  # noqa: BLE001 - a description must not fail
        text = str(exc) or type(exc).__name__
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 3] + "..."


class GradsightProtocol(LanguageServerProtocol):
    """pygls's LSP protocol with gradsight's message validation, structuring and document store."""

    # -- workspace: gradsight's document model (see documents.LspWorkspace) ---------------------------

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        # pygls creates its Workspace, then hands over to our initialize handler, then computes the
        # capabilities. Swap the workspace for ours as soon as pygls has made it (it holds no documents yet).
        steps = super().lsp_initialize(params)
        value: Any = None
        while True:
            try:
                step = steps.send(value)
            except StopIteration as stop:
                self._adopt_workspace()
                return stop.value
            self._adopt_workspace()
            value = yield step

    def _adopt_workspace(self) -> None:
        from .documents import LspWorkspace

        current = self._workspace
        if current is not None and not isinstance(current, LspWorkspace):
            self._workspace = LspWorkspace.replacing(current, self._server._text_document_sync_kind)

    @property
    def is_initialized(self) -> bool:
        return self._workspace is not None

    @property
    def shutting_down(self) -> bool:
        return bool(self._shutdown)

    # -- cancellation and shutdown ------------------------------------------------------------------

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        """`$/cancelRequest`. pygls logs a cancel for a request that already ended as a warning, which
        clients show as an error line; that is the normal race between an answer and a cancel (VS Code
        cancels hovers as the mouse moves), so it goes to the debug log. A cancelled command also
        stops the work it started (a trace: its script's process group is killed)."""
        session = getattr(self._server, "session", None)
        if session is not None:
            try:
                session.request_cancelled(msg_id)
            except Exception:  # noqa: BLE001 - a cancel must never take the server down
                log.exception("cancelling request %s failed", _short(msg_id))
        future = self._request_futures.pop(msg_id, None)
        if future is None:
            log.debug("cancel for request %s, which has already been answered", _short(msg_id))
            return
        if future.cancel():
            log.debug("cancelled request %s", _short(msg_id))

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args):
        """pygls's shutdown cancels every pending request while iterating over the dict of them, and a
        cancelled command's future removes itself from that dict at once ("dictionary changed size during
        iteration"): iterate over a copy."""
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current_id = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done():
                future.cancel()
        self._shutdown = True
        return None

    # -- answering --------------------------------------------------------------------------------

    def send_error(self, msg_id: Any, code: int, message: str) -> None:
        """A JSON-RPC error response (`msg_id` None: for a message whose id is unknown)."""
        self._send_data({"jsonrpc": "2.0", "id": msg_id if _usable_id(msg_id) else None,
                         "error": {"code": code, "message": message}})

    # -- one message ------------------------------------------------------------------------------

    def receive(self, body: bytes) -> None:
        """Handle one message body; never raises (except SystemExit from `exit`)."""
        try:
            data = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            log.warning("ignored a message that is not UTF-8 JSON (%s): %s", type(exc).__name__, _short(body))
            self.send_error(None, PARSE_ERROR, f"Parse error: the message is not UTF-8 JSON ({exc})"[:_MAX_DETAIL])
            return
        try:
            message = self.validate(data)
        except MessageError as exc:
            self._refuse(data, exc)
            return
        if message is None:
            return
        try:
            self.handle_message(message)
        except Exception:  # noqa: BLE001 - pygls catches handler errors; this is the last line of defence
            log.exception("internal error handling %s", _short(getattr(message, "method", message)))

    def _refuse(self, data: Any, exc: MessageError) -> None:
        """Answer (a request) or log (anything else) a message that cannot be handled."""
        is_dict = isinstance(data, dict)
        msg_id = data.get("id", _MISSING) if is_dict else _MISSING
        method = data.get("method") if is_dict else None
        method = method if isinstance(method, str) and len(method) < 200 else _short(method)
        if is_dict and "method" in data and "id" not in data:
            log.warning("ignored notification %s: %s", method, exc.message)
            return
        if is_dict and "method" not in data and ("result" in data or "error" in data) and _usable_id(msg_id):
            # A response from the client that cannot be read: fail the request waiting for it.
            future = self._request_futures.pop(msg_id, None)
            log.warning("ignored the client's response to request %s: %s", _short(msg_id), exc.message)
            if future is not None and not future.done():
                from pygls.exceptions import JsonRpcException

                future.set_exception(JsonRpcException(message=exc.message, code=exc.code))
            return
        log.warning("answered %s %s with error %s: %s", method or "message",
                    _short(msg_id) if msg_id is not _MISSING else "", exc.code, exc.message)
        self.send_error(msg_id, exc.code, exc.message)

    def validate(self, data: Any) -> Any:
        """The structured message for `data`; None when it is to be ignored; MessageError when it must
        be refused (answered with an error if it is a request)."""
        if isinstance(data, list):
            raise MessageError(INVALID_REQUEST, "Invalid request: JSON-RPC batches are not supported by LSP")
        if not isinstance(data, dict):
            raise MessageError(INVALID_REQUEST, f"Invalid request: a message must be a JSON object, not {_short(data)}")
        if data.get("jsonrpc") != "2.0":
            raise MessageError(INVALID_REQUEST, f'Invalid request: "jsonrpc" must be "2.0", not {_short(data.get("jsonrpc"))}')
        has_method, has_id = "method" in data, "id" in data
        if has_method:
            method = data["method"]
            if not isinstance(method, str):
                raise MessageError(INVALID_REQUEST, f'Invalid request: "method" must be a string, not {_short(method)}')
            if has_id and not _usable_id(data["id"]):
                raise MessageError(INVALID_REQUEST, f'Invalid request: "id" must be an integer or a string, '
                                                    f'not {_short(data["id"])}')
            if not self.is_initialized and method not in (types.INITIALIZE, types.EXIT):
                if has_id:
                    raise MessageError(SERVER_NOT_INITIALIZED, f"Server not initialized: {method} before initialize")
                log.warning("ignored notification %s: it came before initialize", method)
                return None
            if has_id and self.shutting_down and method != types.EXIT:
                raise MessageError(INVALID_REQUEST, f"Invalid request: {method} after shutdown")
            kind = self.get_message_type(method)
            if kind is None:
                from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage

                kind = JsonRPCRequestMessage if has_id else JsonRPCNotification
                data = {"params": None, **data}  # unknown methods: params are optional, anything goes
            return self._structure(data, kind, f"Invalid params for {method}")
        if has_id and ("result" in data or "error" in data):
            msg_id = data["id"]
            if not _usable_id(msg_id):
                if "error" in data:
                    log.warning("the client reported an error for a message it could not read: %s",
                                _short(data.get("error"), 300))
                else:
                    log.warning("ignored a response without a usable id: %s", _short(data))
                return None
            if "error" in data:
                from lsprotocol.types import ResponseErrorMessage

                return self._structure(data, ResponseErrorMessage, "Invalid error response")
            from pygls.protocol.json_rpc import JsonRPCResponseMessage

            kind = self._result_types.pop(msg_id, None) or JsonRPCResponseMessage
            return self._structure(data, kind, "Invalid response")
        raise MessageError(INVALID_REQUEST, 'Invalid request: a message needs a "method" (or an "id" and a '
                                            '"result" or "error")')

    def _structure(self, data: dict, kind: Any, what: str) -> Any:
        try:
            return self._converter.structure(data, kind)
        except Exception as exc:  # noqa: BLE001 - cattrs raises many kinds; all mean "does not fit"
            raise MessageError(INVALID_PARAMS, f"{what}: {structure_problems(exc)}") from None


# -- reading stdin ---------------------------------------------------------------------------------


class StdinReader:
    """Blocking reads of the binary stdin, run in an executor thread."""

    def __init__(self, stream: BinaryIO, executor) -> None:
        self.stream = stream
        self.executor = executor

    async def readline(self) -> bytes:
        return await asyncio.get_running_loop().run_in_executor(self.executor, self.stream.readline, MAX_HEADER_LINE)

    async def read(self, n: int) -> bytes:
        """Up to `n` bytes (fewer only at end of input), read in chunks as they arrive."""
        loop = asyncio.get_running_loop()
        chunks: list[bytes] = []
        left = n
        while left > 0:
            chunk = await loop.run_in_executor(self.executor, self.stream.read, min(left, READ_CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)


def parse_content_length(value: bytes) -> int | None:
    """The length in a `Content-Length` header's value; None if it is not a usable one."""
    value = value.strip()
    if not value.isdigit() or len(value) > 12:  # bytes.isdigit: ASCII digits only; no sign, no spaces
        return None
    length = int(value)
    return length if length <= MAX_CONTENT_LENGTH else None


async def serve(stop_event: threading.Event, reader, protocol: GradsightProtocol) -> None:
    """Read messages until end of input (or `stop_event`), handing each to `protocol.receive`."""
    length: int | None = None
    block: list[bytes] = []  # the current header block, for the log
    partial = False  # the last read was a piece of a line longer than MAX_HEADER_LINE
    while not stop_event.is_set():
        line = await reader.readline()
        if not line:
            break
        was_partial, partial = partial, not line.endswith(b"\n")
        if partial or was_partial:  # pieces of an over-long line: junk, and never a blank line
            if len(block) < 5:
                block.append(line[:80])
            continue
        content = line.strip(b"\r\n")
        if content.strip():
            name, colon, value = content.partition(b":")
            if colon and name.strip().lower() == b"content-length":
                length = parse_content_length(value)
                if length is None:
                    log.warning("ignored a bad header %s", _short(content))
            if len(block) < 5:
                block.append(content)
            continue
        # A blank line ends a header block.
        if length is None:
            if block:
                log.warning("skipped input without a valid Content-Length header: %s",
                            " | ".join(_short(b, 80) for b in block))
            block = []
            continue
        block = []
        body = await reader.read(length)
        expected, length = length, None
        if len(body) < expected:
            log.warning("input ended inside a message (%d of %d bytes)", len(body), expected)
            break
        protocol.receive(body)
