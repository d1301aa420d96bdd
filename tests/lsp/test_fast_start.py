"""Answering `initialize` from a stored answer before pygls is imported (`lsp/fast_start.py`)."""

from __future__ import annotations

import io
import json
import os
import pathlib
import subprocess
import sys

from gradsight.lsp import fast_start


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def responses(stdout: bytes) -> list[dict]:
    out, rest = [], stdout
    while rest:
        head, _, rest = rest.partition(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        out.append(json.loads(rest[:length]))
        rest = rest[length:]
    return out


def session(cache: pathlib.Path, capabilities: dict, extra_env: dict | None = None) -> tuple[list[dict], str]:
    data = b"".join(frame(m) for m in (
        {"jsonrpc": "2.0", "id": 7, "method": "initialize",
         "params": {"processId": None, "rootUri": None, "capabilities": capabilities}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 8, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"}))
    env = {key: value for key, value in os.environ.items() if key != "GRADSIGHT_LSP_NO_FAST_START"}
    env.update({"XDG_CACHE_HOME": str(cache), **(extra_env or {})})
    proc = subprocess.run([sys.executable, "-m", "gradsight", "lsp", "--log-level", "debug"], input=data,
                          capture_output=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    return responses(proc.stdout), proc.stderr.decode()


def answers(messages: list[dict], request_id: int) -> list[dict]:
    return [m for m in messages if m.get("id") == request_id and "method" not in m]


def test_the_second_start_answers_initialize_from_the_stored_answer(tmp_path):
    caps = {"textDocument": {"hover": {"contentFormat": ["plaintext"]}}, "general": {"positionEncodings": ["utf-8"]}}
    first, first_log = session(tmp_path, caps)
    second, second_log = session(tmp_path, caps)
    [a], [b] = answers(first, 7), answers(second, 7)  # exactly one answer each time
    assert a["result"] == b["result"] and a["result"]["capabilities"]["positionEncoding"] == "utf-8"
    assert "answered initialize from" not in first_log and "answered initialize from" in second_log
    assert len(answers(second, 8)) == 1  # the session went on normally (shutdown answered)
    # Other capabilities: another key, a normal start (and a second stored answer).
    third, third_log = session(tmp_path, {"general": {"positionEncodings": ["utf-16"]}})
    [c] = answers(third, 7)
    assert c["result"]["capabilities"]["positionEncoding"] == "utf-16" and "answered initialize from" not in third_log
    assert len(list((tmp_path / "gradsight").glob("lsp-initialize-*.json"))) == 2


def test_the_fast_start_can_be_turned_off(tmp_path):
    session(tmp_path, {})
    messages, log = session(tmp_path, {}, {"GRADSIGHT_LSP_NO_FAST_START": "1"})
    assert len(answers(messages, 7)) == 1 and "answered initialize from" not in log


def test_replay_gives_back_exactly_what_was_read():
    message = frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    rest = frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    stream = io.BytesIO(message + rest)
    consumed, parsed = fast_start.read_first_message(stream)
    assert consumed == message and parsed["method"] == "initialize"
    replay = fast_start.ReplayStream(consumed, stream)
    assert replay.readline(1024).startswith(b"Content-Length:")
    assert replay.readline(1024) == b"\r\n"
    body = replay.read(len(message) - message.index(b"\r\n\r\n") - 4)
    assert json.loads(body)["id"] == 1
    assert replay.readline(1024).startswith(b"Content-Length:")  # then the stream itself


def test_a_first_message_that_is_not_initialize_is_replayed_untouched():
    junk = b"Content-Length: 5\r\n\r\nnot j" + b"son"
    stream = io.BytesIO(junk)
    out = io.BytesIO()
    start = fast_start.answer_initialize(stream, out)
    assert not start.answered and out.getvalue() == b""
    replay = fast_start.ReplayStream(start.consumed, stream)
    assert replay.readline() + replay.readline() + replay.read(8) == junk
