"""A running trace ends with the server: on `shutdown` and on `$/cancelRequest` of the command, the traced
script's process group is killed and its `gradsight-trace-*` folder removed (the real tracer)."""

from __future__ import annotations

import asyncio
import os
import pathlib

import pytest
from lsprotocol import types

from lsp_helpers import capabilities, lsp, write

SLEEPER = """\
import os
import time

with open(os.environ["GS_PIDFILE"], "w") as fh:
    fh.write(str(os.getpid()))
time.sleep(120)
"""


def _tracer_available() -> bool:
    try:
        from gradsight.trace import run_trace  # noqa: F401
    except ImportError:
        return False
    return True


pytestmark = [pytest.mark.slow, pytest.mark.skipif(not _tracer_available(), reason="needs gradsight.trace")]


def _alive(pid: int) -> bool:
    try:
        status = pathlib.Path(f"/proc/{pid}/status").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return "\nState:\tZ" not in status  # a zombie has ended; only its exit status is left


REQUEST_ID = "trace-request-1"


async def _start_trace(client, ws, tmp: pathlib.Path):
    path, uri = write(ws, "sleeper.py", SLEEPER)
    client.open(uri, SLEEPER)
    pending = client.protocol.send_request(types.WORKSPACE_EXECUTE_COMMAND, types.ExecuteCommandParams(
        command="gradsight.runTrace", arguments=[{"uri": uri}]), msg_id=REQUEST_ID)
    pidfile = tmp / "pid"
    await client.wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), timeout=60,
                          what="the traced script to start")
    assert list(tmp.glob("gradsight-trace-*")), "the tracer's folder exists while it runs"
    return pending, int(pidfile.read_text())


async def _gone(pid: int, tmp: pathlib.Path) -> None:
    for _ in range(200):
        if not _alive(pid) and not list(tmp.glob("gradsight-trace-*")):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"pid {pid} alive: {_alive(pid)}; left: {list(tmp.glob('gradsight-trace-*'))}")


async def test_shutdown_during_a_trace_kills_it_and_removes_its_folder(ws, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {"TMPDIR": str(tmp), "GS_PIDFILE": str(tmp / "pid")}
    async with lsp(ws, caps=capabilities("neovim@v0.7"), server_args=("--no-tracer",), env=env,
                   init_options={"settings": {"trace": {"device": "cpu", "timeout": 300}}}) as client:
        pending, pid = await _start_trace(client, ws, tmp)
        assert _alive(pid)
        # Leaving the block sends `shutdown` and `exit` while the trace runs.
    pending.cancel()
    # The server answered `shutdown` only once the trace had stopped: nothing is left right away.
    assert not _alive(pid)
    assert not list(tmp.glob("gradsight-trace-*"))


async def test_cancel_request_of_the_command_kills_the_trace(ws, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {"TMPDIR": str(tmp), "GS_PIDFILE": str(tmp / "pid")}
    async with lsp(ws, caps=capabilities("neovim@v0.7"), server_args=("--no-tracer",), env=env,
                   init_options={"settings": {"trace": {"device": "cpu", "timeout": 300}}}) as client:
        pending, pid = await _start_trace(client, ws, tmp)
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=REQUEST_ID))
        await _gone(pid, tmp)
        # The server is still serving.
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=ws.joinpath("sleeper.py").as_uri()),
            position=types.Position(line=0, character=0)))
        assert hover is None
