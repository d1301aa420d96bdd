"""A raw JSON-RPC client for abusing the gradsight language server over stdio, plus an LSP text model.

The client speaks LSP framing by hand (so it can also write malformed bytes), answers every request
the server sends (workspace/configuration with `self.settings`, anything else with null), records
notifications (diagnostics, showMessage, logMessage) and keeps the server's stderr in a file.

`LspText` is the client-side document model with LSP semantics: lines end at "\\r\\n", "\\r" or "\\n";
columns are UTF-16 code units; a character past the end of its line means the end of that line; a
line past the end of the document means the end of the document.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import pathlib
import re
import subprocess
import sys
from typing import Any, Optional

ROOT = pathlib.Path(__file__).resolve().parents[2]
SERVER_CMD = [sys.executable, "-m", "gradsight", "lsp"]

_LINE_END = re.compile(r"\r\n|\r|\n")


def server_available() -> tuple[bool, str]:
    """Whether `python -m gradsight lsp --help` works (the server may still be under construction)."""
    try:
        proc = subprocess.run([*SERVER_CMD, "--help"], capture_output=True, text=True, timeout=60)
    except Exception as exc:  # noqa: BLE001
        return False, f"cannot run {' '.join(SERVER_CMD)} --help: {exc}"
    if proc.returncode != 0:
        return False, f"`{' '.join(SERVER_CMD)} --help` failed: {proc.stderr.strip()[-500:]}"
    return True, ""


# ---------------------------------------------------------------- text model


def utf16_len(s: str) -> int:
    return len(s) + sum(1 for ch in s if ord(ch) > 0xFFFF)


class LspText:
    """An LSP text document's content, with positions in UTF-16 code units."""

    def __init__(self, text: str) -> None:
        self.text = text

    def lines(self) -> list[tuple[int, int]]:
        """(start offset, end offset without terminator) of every line."""
        out, start = [], 0
        for m in _LINE_END.finditer(self.text):
            out.append((start, m.start()))
            start = m.end()
        out.append((start, len(self.text)))
        return out

    def line_count(self) -> int:
        return len(self.lines())

    def offset(self, line: int, character: int) -> int:
        """Code-point offset of an LSP position, clamped the way the spec says (and past the end: the end)."""
        lines = self.lines()
        if line < 0:
            return 0
        if line >= len(lines):
            return len(self.text)
        start, end = lines[line]
        units = 0
        for i in range(start, end):
            if units >= character:
                return i
            units += 2 if ord(self.text[i]) > 0xFFFF else 1
        return end

    def position(self, offset: int) -> dict:
        lines = self.lines()
        for n, (start, end) in enumerate(lines):
            nxt = lines[n + 1][0] if n + 1 < len(lines) else len(self.text) + 1
            if offset < nxt:
                return {"line": n, "character": utf16_len(self.text[start:min(offset, end)])}
        last = len(lines) - 1
        return {"line": last, "character": utf16_len(self.text[lines[last][0]:lines[last][1]])}

    def valid_positions(self) -> list[dict]:
        """Every position a well-behaved editor could send (not inside a surrogate pair)."""
        out = []
        for n, (start, end) in enumerate(self.lines()):
            units = 0
            out.append({"line": n, "character": 0})
            for i in range(start, end):
                units += 2 if ord(self.text[i]) > 0xFFFF else 1
                out.append({"line": n, "character": units})
        return out

    def end(self) -> dict:
        return self.position(len(self.text))

    def apply(self, change: dict) -> None:
        if "range" not in change or change["range"] is None:
            self.text = change["text"]
            return
        r = change["range"]
        a = self.offset(r["start"]["line"], r["start"]["character"])
        b = self.offset(r["end"]["line"], r["end"]["character"])
        if b < a:
            a, b = b, a
        self.text = self.text[:a] + change["text"] + self.text[b:]


def in_range(text: LspText, pos: dict) -> bool:
    lines = text.lines()
    if not 0 <= pos["line"] < len(lines):
        return False
    start, end = lines[pos["line"]]
    return 0 <= pos["character"] <= utf16_len(text.text[start:end])


# ---------------------------------------------------------------- the client


class ServerDied(AssertionError):
    pass


class RawLspClient:
    def __init__(self, cmd: Optional[list[str]] = None, cwd: Optional[str] = None, stderr_path: Optional[str] = None,
                 env: Optional[dict] = None) -> None:
        self.cmd = cmd or [*SERVER_CMD, "--log-level", "warning"]
        self.cwd = cwd
        self.env = env
        self.stderr_path = stderr_path or os.devnull
        self.proc: Optional[asyncio.subprocess.Process] = None
        self._ids = itertools.count(1)
        self.pending: dict[Any, asyncio.Future] = {}
        self.sent_requests: dict[Any, str] = {}
        self.responses: dict[Any, dict] = {}
        self.notifications: list[dict] = []
        self.server_requests: list[dict] = []
        self.settings: Any = {}
        self.malformed_responses: list[bytes] = []
        self.null_id_responses: list[dict] = []  # errors about messages the server could not read
        self._reader: Optional[asyncio.Task] = None
        self._stderr = None
        self.eof = asyncio.Event()

    # -- lifecycle

    async def start(self) -> None:
        self._stderr = open(self.stderr_path, "wb")
        self.proc = await asyncio.create_subprocess_exec(
            *self.cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=self._stderr,
            cwd=self.cwd, env=self.env, limit=1 << 24)
        self._reader = asyncio.create_task(self._read_loop())

    async def stop(self, timeout: float = 10.0) -> Optional[int]:
        """shutdown + exit; returns the exit code (None if it had to be killed)."""
        code = None
        try:
            if self.alive():
                await self.request("shutdown", None, timeout=timeout)
                self.notify("exit", None)
                code = await asyncio.wait_for(self.proc.wait(), timeout)
        except (asyncio.TimeoutError, ServerDied, ConnectionError):
            code = None
        finally:
            await self.kill()
        return code

    async def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        if self._reader is not None:
            self._reader.cancel()
            try:
                await self._reader
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None and not self.eof.is_set()

    def stderr_text(self) -> str:
        try:
            return pathlib.Path(self.stderr_path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    # -- sending

    def send_raw(self, data: bytes) -> None:
        if not self.alive():
            raise ServerDied(f"server is gone (exit code {self.proc.returncode if self.proc else None})")
        self.proc.stdin.write(data)

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode("utf-8")
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request_nowait(self, method: str, params: Any, msg_id: Any = None) -> asyncio.Future:
        msg_id = next(self._ids) if msg_id is None else msg_id
        fut = asyncio.get_running_loop().create_future()
        self.pending[msg_id] = fut
        self.sent_requests[msg_id] = method
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return fut

    async def request(self, method: str, params: Any, timeout: float = 30.0) -> dict:
        fut = self.request_nowait(method, params)
        await self.drain()
        return await self.wait(fut, timeout, method)

    async def wait(self, fut: asyncio.Future, timeout: float, what: str = "response") -> dict:
        eof = asyncio.ensure_future(self.eof.wait())
        try:
            done, _ = await asyncio.wait({fut, eof}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            eof.cancel()
        if fut in done:
            return fut.result()
        if eof.done():
            raise ServerDied(f"server exited while waiting for {what}")
        raise asyncio.TimeoutError(f"no answer to {what} within {timeout}s")

    async def drain(self) -> None:
        if not self.alive():
            raise ServerDied("server is gone")
        await self.proc.stdin.drain()

    # -- receiving

    async def _read_loop(self) -> None:
        out = self.proc.stdout
        try:
            while True:
                length = None
                while True:
                    line = await out.readline()
                    if not line:
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.decode("ascii", "replace").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                if length is None:
                    self.malformed_responses.append(line)
                    continue
                body = await out.readexactly(length)
                try:
                    message = json.loads(body)
                except ValueError:
                    self.malformed_responses.append(body)
                    continue
                self._dispatch(message)
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            self.eof.set()

    def _dispatch(self, message: dict) -> None:
        if "method" in message and "id" in message:
            self.server_requests.append(message)
            self.send(self._answer(message))
        elif "method" in message:
            self.notifications.append(message)
        else:
            msg_id = message.get("id")
            if msg_id is None:
                self.null_id_responses.append(message)
            self.responses[msg_id] = message
            fut = self.pending.pop(msg_id, None)
            if fut is not None and not fut.done():
                fut.set_result(message)

    def _answer(self, message: dict) -> dict:
        method = message["method"]
        result: Any = None
        if method == "workspace/configuration":
            items = (message.get("params") or {}).get("items") or []
            result = [self.settings for _ in items]
        elif method == "workspace/applyEdit":
            result = {"applied": False, "failureReason": "test client"}
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    # -- helpers

    def of_method(self, method: str) -> list[dict]:
        return [n for n in self.notifications if n.get("method") == method]

    def shown_messages(self) -> list[str]:
        return [n["params"]["message"] for n in self.of_method("window/showMessage")]

    def log_errors(self) -> list[str]:
        return [n["params"]["message"] for n in self.of_method("window/logMessage") if n["params"].get("type") == 1]


def capabilities(pull: bool = True, configuration: bool = True) -> dict:
    caps: dict = {
        "general": {"positionEncodings": ["utf-16"]},
        "workspace": {"configuration": configuration, "didChangeConfiguration": {"dynamicRegistration": True},
                      "didChangeWatchedFiles": {"dynamicRegistration": True},
                      "workspaceEdit": {"documentChanges": True},
                      "inlayHint": {"refreshSupport": True}},
        "textDocument": {
            "synchronization": {"dynamicRegistration": False, "didSave": True},
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "inlayHint": {"resolveSupport": {"properties": ["tooltip"]}},
            "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "source"]}}},
            "publishDiagnostics": {"versionSupport": True, "relatedInformation": True},
        },
        "window": {"showMessage": {}, "workDoneProgress": True},
    }
    if pull:
        caps["textDocument"]["diagnostic"] = {"dynamicRegistration": False}
        caps["workspace"]["diagnostics"] = {"refreshSupport": True}
    return caps


async def initialize(client: RawLspClient, root: pathlib.Path, *, pull: bool = True, configuration: bool = True,
                     init_options: Any = None, timeout: float = 60.0) -> dict:
    params = {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": capabilities(pull, configuration),
              "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}], "clientInfo": {"name": "gs-abuse"}}
    if init_options is not None:
        params["initializationOptions"] = init_options
    answer = await client.request("initialize", params, timeout=timeout)
    client.notify("initialized", {})
    await client.drain()
    return answer


# ---------------------------------------------------------------- abuse sessions

import random  # noqa: E402
import time  # noqa: E402

UNICODE_DOC = (
    "import torch\n"
    "import torch.nn as nn\n"
    "\n"
    "# 日本語のコメント 😀 and e\u0301 combining, a ZWJ family 👩\u200d👩\u200d👧\n"
    "名前 = torch.randn(3, requires_grad=True)\n"
    "s = \"👩\u200d👩\u200d👧 😀😀\"; y = 名前.numpy()\n"
    "w = torch.ones(2, requires_grad=True)\n"
    "w.add_(1)\t# a tab before this comment\n"
    "def f(x):\n"
    "\treturn x.sum()\n"
    "loss = f(名前 * 2)\n"
    "loss.backward()\n"
    "loss.backward()\n"
    "e\u0301 = torch.zeros(3, requires_grad=True); z = \"😀\" + str(e\u0301.numpy())\n"
)

TRAINING_DOC = (
    "import torch\n"
    "import torch.nn as nn\n"
    "\n"
    "model = nn.Linear(4, 1)\n"
    "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "total = 0\n"
    "for step in range(10):\n"
    "    x = torch.randn(8, 4)  # 入力 🚀\n"
    "    loss = model(x).pow(2).mean()\n"
    "    opt.zero_grad()\n"
    "    loss.backward()\n"
    "    opt.step()\n"
    "    total += loss\n"
    "    h = torch.sigmoid(x)\n"
    "    h.mul_(2)\n"
    "print(total, loss.numpy())\n"
)

# Pieces an editor might type or paste. No "\f", "\v", "\x1c".."\x1e", "\x85", U+2028/U+2029 here: those are
# not line ends for LSP but are for str.splitlines (see test_regressions.py for what that breaks).
FRAGMENTS = [
    "x", "y", " ", "    ", "\t", "\n", "\r\n", "\r", "(", ")", "[", "]", ":", ",", ".", "=", "#", '"', "'", '"""',
    "😀", "日本", "e\u0301", "👩\u200d👩\u200d👧", "ℕ", "\u00e9", "𝔘",
    ".detach()", ".numpy()", ".add_(1)", ".backward()", "loss.backward()\n", "with torch.no_grad():\n    ",
    "z = torch.randn(2, requires_grad=True)\n", "def g(a):\n    return a * 2\n", "class M(nn.Module):\n    pass\n",
    "名前", "import torch\n", "# gradsight: ignore\n", "# gradsight: ignore[GS201]",
]

BAD_SETTINGS = [
    None, 42, "gradsight", [], [1, 2], {"select": 5}, {"select": ["XX1", 3]}, {"ignore": "GS2,,GS3"},
    {"inlayHints": "sometimes"}, {"inlayHints": 7}, {"severity": "loud"}, {"severity": {"GS201": "catastrophic"}},
    {"severity": {"GS201": None}}, {"trace": 5}, {"trace": {"timeout": -1, "maxSteps": "many", "device": "tpu",
                                                             "memoryMb": 1, "bogus": True}},
    {"logLevel": "verbose"}, {"logLevel": 3}, {"python": ""}, {"python": 12}, {"unknownKey": {"deep": [1]}},
    {"exclude": "*.py"}, {"exclude": [1, 2]}, {"gradsight": {"select": ["GS2"], "inlayHints": "all"}},
    {"select": ["ALL"], "ignore": []}, {"inlayHints": "all"}, {"inlayHints": "off"}, {},
    {"select": ["GS" + "9" * 400]}, {"severity": {str(i): "hint" for i in range(200)}},
]

MALFORMED = [
    b"Content-Length: abc\r\n\r\n{}\r\n",
    b"Content-Length: -5\r\n\r\n\r\n",
    b"Content-Length: 5\r\n\r\n{\"jsonrpc\": \"2.0\", \"id\": 1}\r\n",
    b"Content-Length: 30\r\n\r\n" + b"x" * 30 + b"\r\n",
    b"Content-Length: 4\r\n\r\nnull\r\n",
    b"Content-Length: 7\r\n\r\n[1,2,3]\r\n",
    b"Content-Length: 5\r\n\r\n\"str\"\r\n",
    b"Content-Length: 2\r\n\r\n{}\r\n",
    b"Content-Length: 17\r\n\r\n{\"jsonrpc\":\"2.0\"}\r\n",
    b"Content-Length: 30\r\n\r\n{\"jsonrpc\":\"1.0\",\"method\":\"x\"}\r\n",
    b"Content-Length: 43\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":987654,\"result\":null}\r\n",
    b"Content-Length: 8\r\n\r\n\xff\xfe\x00\x01\x80\x81\xc3\x28\r\n",
    b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n\r\n",
    b"hello world\r\n",
    b"\r\n\r\n",
    b"Content-Length: 0\r\n\r\n\r\n",
    b"Content-Length: 99999999999999999999999\r\n\r\n\r\n",  # killed the server (pygls: OverflowError)
    b"Content-Length: 1000000000000\r\n\r\n",
    b"Content-Length: \xd9\xa3\r\n\r\n",
    b"content-length: 2\r\n\r\n[]",
    b"Content-Length: 68\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"textDocument/hover\",\"params\":{}}",
    b"Content-Length: 20000\r\n\r\n" + b"[" * 20000,
]


def _label(n: int) -> str:
    return f"doc{n}.py"


class AbuseSession:
    """Drive one server with random traffic; check the invariants at checkpoints.

    Invariants: the server stays alive; every request gets a response (result or error); at each
    checkpoint every open document's diagnostics equal what `analyze_source` finds in the client's text
    (positions converted to UTF-16 with the project's `LineIndex`), and every range the server returns
    lies inside the client's text.
    """

    def __init__(self, root: pathlib.Path, seed: int, stderr_path: str, include_out_of_range: bool = True,
                 include_malformed: bool = True, pull: bool = True) -> None:
        self.root = root
        self.pull = pull
        self.settle_s = 15.0  # how long diagnostics may take to match the client's text at a checkpoint
        self.rng = random.Random(seed)
        self.client = RawLspClient(stderr_path=stderr_path)
        self.docs: dict[str, LspText] = {}
        self.versions: dict[str, int] = {}
        self.closed: dict[str, LspText] = {}
        self.tainted: set[str] = set()
        self.undefined_position = False
        self.futures: list[tuple[str, asyncio.Future]] = []
        self.failures: list[str] = []
        self.stats: dict[str, int] = {}
        self.include_out_of_range = include_out_of_range
        self.include_malformed = include_malformed
        self.seeds = [UNICODE_DOC, TRAINING_DOC, UNICODE_DOC.replace("\n", "\r\n"),
                      TRAINING_DOC.replace("\n", "\r\n"),
                      "".join(line + self.rng.choice(["\n", "\r\n", "\r"]) for line in TRAINING_DOC.split("\n"))]

    def count(self, what: str) -> None:
        self.stats[what] = self.stats.get(what, 0) + 1

    # -- random material

    def uri(self, n: int) -> str:
        return (self.root / _label(n)).as_uri()

    def some_uri(self) -> str:
        r = self.rng.random()
        if self.docs and r < 0.85:
            return self.rng.choice(sorted(self.docs))
        if r < 0.9:
            return self.uri(self.rng.randint(0, 9))
        return self.rng.choice(["file:///nonexistent/x.py", "untitled:Untitled-1", "file:///", "not a uri",
                                "file:///tmp/%E2%9C%93%20odd.py", "vscode-notebook-cell:/x.ipynb#W0sZmlsZQ=="])

    def position(self, text: Optional[LspText], out_of_range: bool = False) -> dict:
        if text is None or (out_of_range and self.include_out_of_range):
            n = text.line_count() if text is not None else 10
            kind = self.rng.random()
            if kind < 0.3:
                return {"line": n + self.rng.randint(0, 5), "character": self.rng.randint(0, 5)}
            if kind < 0.6:
                line = self.rng.randrange(n)
                return {"line": line, "character": 200 + self.rng.randint(0, 2 ** 20)}
            if kind < 0.8 and text is not None:
                # Inside a surrogate pair, when the text has one.
                for m in re.finditer("[\U00010000-\U0010ffff]", text.text):
                    if self.rng.random() < 0.5:
                        pos = text.position(m.start())
                        self.undefined_position = True
                        return {"line": pos["line"], "character": pos["character"] + 1}
            return {"line": 2 ** 31 - 1, "character": 2 ** 31 - 1}
        return self.rng.choice(text.valid_positions())

    def ordered(self, a: dict, b: dict) -> tuple[dict, dict]:
        return (a, b) if (a["line"], a["character"]) <= (b["line"], b["character"]) else (b, a)

    def new_text(self) -> str:
        return "".join(self.rng.choice(FRAGMENTS) for _ in range(self.rng.choice([0, 1, 1, 1, 2, 3, 5])))

    # -- operations

    def op_open(self) -> None:
        n = self.rng.randint(0, 9)
        uri = self.uri(n)
        text = self.rng.choice(self.seeds) if self.rng.random() < 0.8 else self.closed.get(uri, LspText("")).text
        self.versions[uri] = self.versions.get(uri, 0) + 1
        self.docs[uri] = LspText(text)
        self.tainted.discard(uri)
        self.closed.pop(uri, None)
        self.client.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": self.rng.choice(["python", "python", "plaintext"]), "version": self.versions[uri],
            "text": text}})
        self.count("didOpen")

    def op_close(self) -> None:
        uri = self.some_uri()
        if uri in self.docs:
            self.closed[uri] = self.docs.pop(uri)
            self.tainted.discard(uri)
        self.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        self.count("didClose")

    def op_change(self) -> None:
        if not self.docs:
            return self.op_open()
        uri = self.rng.choice(sorted(self.docs))
        text = self.docs[uri]
        changes = []
        out_of_range = self.include_out_of_range and self.rng.random() < 0.1
        self.undefined_position = False
        for _ in range(self.rng.choice([1, 1, 1, 2, 3])):
            r = self.rng.random()
            if r < 0.05:
                change = {"text": self.rng.choice(self.seeds) if self.rng.random() < 0.5 else text.text + self.new_text()}
            else:
                start = self.position(text)
                end = start if r < 0.4 else self.position(text)
                if out_of_range:
                    if self.rng.random() < 0.5:
                        start = self.position(text, out_of_range=True)
                    else:
                        end = self.position(text, out_of_range=True)
                start, end = self.ordered(start, end)
                change = {"range": {"start": start, "end": end}, "text": self.new_text()}
            text.apply(change)
            changes.append(change)
        if out_of_range:
            # Lines past the end and characters past a line's end have a meaning (LSP clamps them, and so
            # does LspText): the server must follow. A position inside a surrogate pair has none: resync.
            if self.undefined_position:
                self.tainted.add(uri)
            self.count("didChange(out of range)")
        self.versions[uri] = self.versions.get(uri, 0) + 1
        self.client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": self.versions[uri]},
                                                      "contentChanges": changes})
        self.count("didChange")

    def op_change_unknown(self) -> None:
        uri = self.uri(self.rng.randint(10, 12))
        self.client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                                      "contentChanges": [{"text": "x = 1\n"}]})
        self.count("didChange(unknown document)")

    def _request(self, method: str, params: Any) -> None:
        self.futures.append((method, self.client.request_nowait(method, params)))
        self.count(method)

    def op_hover(self) -> None:
        uri = self.some_uri()
        text = self.docs.get(uri)
        self._request("textDocument/hover", {"textDocument": {"uri": uri},
                                             "position": self.position(text, self.rng.random() < 0.3)})

    def op_inlay(self) -> None:
        uri = self.some_uri()
        text = self.docs.get(uri)
        a, b = self.ordered(self.position(text, self.rng.random() < 0.3), self.position(text, self.rng.random() < 0.3))
        self._request("textDocument/inlayHint", {"textDocument": {"uri": uri}, "range": {"start": a, "end": b}})

    def op_code_action(self) -> None:
        uri = self.some_uri()
        text = self.docs.get(uri)
        a, b = self.ordered(self.position(text, self.rng.random() < 0.3), self.position(text, self.rng.random() < 0.3))
        diagnostics = []
        for _ in range(self.rng.choice([0, 0, 1, 2])):
            diagnostics.append({"range": {"start": a, "end": b}, "message": "m", "source": "gradsight",
                                "code": self.rng.choice(["GS201", "GS302", "GS999", "E501"]),
                                "data": self.rng.choice([None, 5, "x", {"fix": "nope"}, {"fix": {"edits": [{}]}},
                                                         {"fix": {"title": "t", "applicability": "safe", "edits": [
                                                             {"line": 10 ** 9, "column": -4, "end_line": 0,
                                                              "end_column": 3, "new_text": "boom"}]},
                                                          "version": self.versions.get(uri)}])})
        only = self.rng.choice([None, ["quickfix"], ["source.fixAll"], ["source"], ["refactor"], []])
        context: dict = {"diagnostics": diagnostics}
        if only is not None:
            context["only"] = only
        self._request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {"start": a, "end": b},
                                                  "context": context})

    def op_pull(self) -> None:
        uri = self.some_uri()
        params: dict = {"textDocument": {"uri": uri}}
        if self.rng.random() < 0.3:
            params["previousResultId"] = self.rng.choice(["junk", f"{uri}@1#0.0.0", ""])
        self._request("textDocument/diagnostic", params)

    def op_resolve(self) -> None:
        data = self.rng.choice([None, 1, "x", {"uri": self.some_uri(), "fact": 10 ** 6, "stamp": [1, 2, 3]},
                                {"uri": self.some_uri(), "fact": -1, "stamp": "x"}, {"fact": "0"}])
        self._request("inlayHint/resolve", {"position": {"line": 0, "character": 0}, "label": "x", "data": data})

    def op_command(self) -> None:
        command = self.rng.choice(["gradsight.fixAll", "gradsight.runTrace", "gradsight.nope"])
        args = self.rng.choice([[], [None], [42], ["x"], [{"uri": 5}], [{"uri": self.some_uri(), "version": -1}],
                                [{"uri": self.some_uri()}]])
        if command == "gradsight.runTrace" and args and isinstance(args[0], dict) and args[0].get("uri") in self.docs:
            args = [{"uri": 5}]  # never run a real trace from here (traces execute code)
        self._request("workspace/executeCommand", {"command": command, "arguments": args})

    def op_settings(self) -> None:
        settings = self.rng.choice(BAD_SETTINGS)
        self.client.settings = settings
        self.client.notify("workspace/didChangeConfiguration", {"settings": self.rng.choice(
            [settings, {"gradsight": settings}, None])})
        self.count("didChangeConfiguration")

    def op_watched(self) -> None:
        self.client.notify("workspace/didChangeWatchedFiles", {"changes": [
            {"uri": (self.root / "pyproject.toml").as_uri(), "type": self.rng.choice([1, 2, 3])},
            {"uri": "file:///x/pyproject.toml", "type": 2}]})
        self.count("didChangeWatchedFiles")

    def op_unknown(self) -> None:
        r = self.rng.random()
        if r < 0.4:
            self._request(self.rng.choice(["gradsight/nope", "textDocument/nope", "$/nope-request", "workspace/symbol"]),
                          {"query": "x"})
        elif r < 0.7:
            self.client.notify(self.rng.choice(["gradsight/nope", "$/setTrace", "$/progress", "textDocument/didSave"]),
                               {"value": 1, "textDocument": {"uri": self.some_uri()}})
            self.count("unknown notification")
        else:
            self.client.notify("$/cancelRequest", {"id": self.rng.randint(1, 10 ** 6)})
            self.count("$/cancelRequest")

    def op_malformed(self) -> None:
        if not self.include_malformed:
            return
        self.client.send_raw(self.rng.choice(MALFORMED))
        self.count("malformed bytes")

    OPS = [("op_change", 30), ("op_hover", 14), ("op_inlay", 8), ("op_code_action", 8), ("op_pull", 5),
           ("op_open", 4), ("op_close", 3), ("op_change_unknown", 1), ("op_resolve", 2), ("op_command", 2),
           ("op_settings", 3), ("op_watched", 1), ("op_unknown", 3), ("op_malformed", 3)]

    # -- checks

    async def settle_requests(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for method, fut in self.futures:
            left = max(0.1, deadline - time.monotonic())
            try:
                answer = await self.client.wait(fut, left, method)
            except asyncio.TimeoutError:
                self.failures.append(f"no answer to {method} within {timeout}s")
                continue
            if "error" in answer and answer["error"].get("code") not in (-32601,):
                if not method.startswith(("gradsight/", "textDocument/nope", "$/", "workspace/symbol")):
                    self.count(f"error answer to {method}")
        self.futures.clear()

    async def checkpoint(self, timeout: float = 120.0) -> None:
        await self.client.drain()
        await self.settle_requests(timeout)
        # Documents edited with out-of-range positions: their content is implementation-defined; resync.
        for uri in sorted(self.tainted):
            if uri in self.docs:
                self.versions[uri] += 1
                self.client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": self.versions[uri]},
                                                              "contentChanges": [{"text": self.docs[uri].text}]})
        self.tainted.clear()
        self.client.settings = {}
        self.client.notify("workspace/didChangeConfiguration", {"settings": {"gradsight": {}}})
        await self.client.drain()
        await asyncio.sleep(0.5)
        for uri in sorted(self.docs):
            # Eventual consistency: a settings change may still be on its way; retry until equal or timeout.
            deadline = time.monotonic() + self.settle_s
            while True:
                if self.pull:
                    answer = await self.client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}},
                                                       timeout)
                else:
                    answer = await self.published(uri, timeout)
                problem = self.compare(uri, answer)
                if problem is None:
                    break
                if time.monotonic() > deadline:
                    self.failures.append(problem)
                    break
                await asyncio.sleep(0.3)
            hints = await self.client.request("textDocument/inlayHint", {"textDocument": {"uri": uri}, "range": {
                "start": {"line": 0, "character": 0}, "end": self.docs[uri].end()}}, timeout)
            for hint in hints.get("result") or []:
                self.check_position(uri, hint["position"], "inlay hint")
        self.count("checkpoint")

    async def published(self, uri: str, timeout: float) -> dict:
        """Push mode: the latest publishDiagnostics for the document's current version, once things settle."""
        version = self.versions[uri]

        def latest():
            for n in reversed(self.client.of_method("textDocument/publishDiagnostics")):
                if n["params"]["uri"] == uri:
                    return n if n["params"].get("version") == version else None
            return None

        deadline = time.monotonic() + timeout
        while latest() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        found = latest()
        if found is None:
            return {"error": f"no publishDiagnostics for version {version} within {timeout}s"}
        return {"result": {"items": found["params"]["diagnostics"]}}

    def check_position(self, uri: str, pos: dict, what: str) -> bool:
        text = self.docs[uri]
        if not in_range(text, pos):
            self.failures.append(f"{what} at {pos} is outside {uri} ({text.line_count()} lines)")
            return False
        offset = text.offset(pos["line"], pos["character"])
        back = text.position(offset)
        if back != pos:
            self.failures.append(f"{what} at {pos} is inside a surrogate pair in {uri}")
            return False
        return True

    def compare(self, uri: str, answer: dict) -> Optional[str]:
        """None when the server's diagnostics are those of the client's text, else what differs."""
        from gradsight.analysis import analyze_source
        from gradsight.lsp.documents import uri_to_path
        from gradsight.lsp.positions import LineIndex

        if "error" in answer:
            return f"diagnostics for {uri} failed: {answer['error']}"
        items = (answer.get("result") or {}).get("items")
        if items is None:
            return f"diagnostic request for {uri} gave no items: {answer}"
        text = self.docs[uri].text
        analysis = analyze_source(text, uri_to_path(uri))
        index = LineIndex(text)
        expected = sorted((f.code, f.message, _rng(index.range_to_lsp(f.line, f.column, f.end_line, f.end_column)))
                          for f in analysis.findings)
        got = sorted((d.get("code"), d.get("message"), (d["range"]["start"]["line"], d["range"]["start"]["character"],
                                                        d["range"]["end"]["line"], d["range"]["end"]["character"]))
                     for d in items)
        for d in items:
            self.check_position(uri, d["range"]["start"], f"diagnostic {d.get('code')} start")
            self.check_position(uri, d["range"]["end"], f"diagnostic {d.get('code')} end")
        if got != expected:
            return (f"diagnostics for {uri} differ from the client's text:\n  server: {got[:6]}\n"
                    f"  client: {expected[:6]}\n  text: {text[:300]!r}")
        return None

    # -- the whole run

    async def run(self, n_ops: int, checkpoint_every: int = 400, deadline_s: float = 1e9) -> dict:
        names = [n for n, w in self.OPS for _ in range(w)]
        await self.client.start()
        t0 = time.monotonic()
        try:
            await initialize(self.client, self.root, pull=self.pull, init_options={"settings": {"inlayHints": "all"}})
            for _ in range(3):
                self.op_open()
            for i in range(1, n_ops + 1):
                getattr(self, self.rng.choice(names))()
                if i % 20 == 0:
                    await self.client.drain()
                if i % checkpoint_every == 0 or i == n_ops or time.monotonic() - t0 > deadline_s:
                    await self.checkpoint()
                    if time.monotonic() - t0 > deadline_s:
                        break
                if not self.client.alive():
                    self.failures.append(f"the server died after {i} operations")
                    break
            self.stats["operations"] = i
            code = await self.client.stop()
            if code != 0:
                self.failures.append(f"shutdown/exit gave exit code {code} (0 expected)")
        except ServerDied as exc:
            self.failures.append(f"the server died: {exc}")
        finally:
            await self.client.kill()
        for line in self.client.stderr_text().splitlines():
            if " ERROR gradsight" in line or " CRITICAL " in line:
                self.failures.append(f"the server logged an internal error: {line[:300]}")
        for message in self.client.log_errors():
            if message.startswith("gradsight"):
                self.failures.append(f"the server reported an internal error: {message[:300]}")
        self.stats["error popups (window/showMessage type 1)"] = sum(
            1 for n in self.client.of_method("window/showMessage") if n["params"].get("type") == 1)
        self.stats["seconds"] = round(time.monotonic() - t0, 1)
        self.stats["messages sent"] = sum(v for k, v in self.stats.items() if k not in ("seconds", "checkpoint"))
        return self.stats


def _rng(r) -> tuple[int, int, int, int]:
    return (r.start.line, r.start.character, r.end.line, r.end.character)
