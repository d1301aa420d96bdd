"""Minimal reproductions of every crash, hang, invalid range or unsafe behaviour the reliability work found.

Each test is the smallest input found for one bug (see docs/reliability.md for how it was found). A
test here fails until its bug is fixed, and then guards against the bug coming back.
"""

from __future__ import annotations

import asyncio
import os
import pathlib
import subprocess
import sys

import pytest

import gs_fuzz
from gradsight.analysis import analyze_source
from gradsight.fixes import apply_fixes

ROOT = pathlib.Path(__file__).resolve().parents[2]
GRADSIGHT = [sys.executable, "-m", "gradsight"]


def positions(text: str):
    a = analyze_source(text, "r.py")
    return a, gs_fuzz.range_problems(text, a, "r.py")


# ---------------------------------------------------------------- engine: positions


def test_syntax_error_after_form_feed_has_a_valid_range():
    # Found by mutation fuzzing of torch/nn/modules/*.py: GS001's end column came from the wrong line
    # (str.splitlines() ends a line at "\f"; Python does not), and pointed past the end of line 2.
    text = "#\x0cabc\n:"
    analysis, bad = positions(text)
    assert not bad, bad
    assert [(f.code, f.line) for f in analysis.findings] == [("GS001", 2)]


@pytest.mark.parametrize("sep", gs_fuzz.LINE_SEPARATORS, ids=lambda c: f"U+{ord(c):04X}")
def test_line_separators_do_not_shift_columns(sep):
    # A comment holding a character that str.splitlines() (but not Python) treats as a line end, before a
    # line whose UTF-8 byte length differs from its code-point length: findings and facts moved right,
    # past the end of the line (GS201 at column 52 of a 29-character line).
    body = ("import torch\nx = torch.ones(2, requires_grad=True)  # a long comment to be long\n"
            "日日日日日日日日日日日日日日日日 = x.numpy()\n")
    plain, bad = positions("#\n" + body)
    assert not bad
    shifted, bad = positions(f"#{sep}\n" + body)
    assert not bad, bad
    assert [(f.code, f.line, f.column, f.end_line, f.end_column) for f in shifted.findings] == \
           [(f.code, f.line, f.column, f.end_line, f.end_column) for f in plain.findings]
    assert [(f.line, f.column, f.end_column) for f in shifted.facts] == [(f.line, f.column, f.end_column) for f in plain.facts]


def test_incremental_reanalysis_equals_cold_analysis():
    # Found by differential fuzzing (warm vs cold) of edit sequences on the seed cases: per-definition results
    # are cached as the *delta* a function added to shared state, so a fact the top-level run had already
    # produced (here: through `Scorer()(...)` calling forward -> normalise) is missing from normalise's cached
    # delta; after an edit that stops the top-level run reaching it, the warm analysis lost the fact (the
    # hover on line 6) while a cold analysis of the same text has it.
    before = (
        "import torch\nimport torch.nn as nn\n\n\n"
        "def normalise(t):\n    return torch.tensor(t.tolist()) / 2\n\n\n"
        "class Scorer(nn.Module):\n    def __init__(self):\n        self.fc = nn.Linear(4, 3)\n\n"
        "    def forward(self, x):\n        return normalise(self.fc(x))\n\n\n"
        "model = Scorer()\nscores = model(torch.randn(2, 4))\n")
    after = before.replace("class Scorer(nn.Module):", "class Scorer:")
    assert gs_fuzz.incremental_mismatch(before, after, "m.py") is None


def test_many_modules_analyse_in_linear_time():
    # Found by the limit cases: 1,000 small nn.Module classes (8,000 lines) took 250 s of CPU, 5,000 did not
    # finish in 25 minutes. driver._definition_keys' closure walk pushes every neighbour of every node it
    # visits (every `forward` mentions "forward", every `__init__` "__init__", so each method reaches all the
    # others): about n**3 (100 classes 0.3 s, 200: 1.7 s, 400: 14 s). The file is re-analysed on every edit.
    import limit_cases

    def cpu(n: int) -> float:
        return gs_fuzz.run_checked(limit_cases._classes(n), "modules.py", cold=True, min_hang_s=300).cpu

    cpu(20)  # warm up imports and tables
    small, large = cpu(150), cpu(300)
    assert large < 4 * small + 0.5, f"150 classes: {small:.2f}s, 300 classes: {large:.2f}s of CPU (linear: about 2x)"


# ---------------------------------------------------------------- fixes


def test_fix_lands_on_the_right_line_with_cr_line_endings():
    # Found by the line-ending mutator: gradsight.fixes counts lines by "\n" only, so on a file with
    # old-Mac "\r" line endings (which Python and LSP accept) `check --fix` and the editor's "fix all"
    # inserted `.detach()` into line 1: "impor.detach()t torch".
    lf = "import torch\nx = torch.ones(2, requires_grad=True)\ny = x.numpy()\n"
    expected, count = apply_fixes(lf, analyze_source(lf, "r.py").findings, unsafe=True)
    assert count == 1 and "x.detach().numpy()" in expected
    for newline in ("\r\n", "\r"):
        text = lf.replace("\n", newline)
        fixed, count = apply_fixes(text, analyze_source(text, "r.py").findings, unsafe=True)
        assert count == 1
        assert fixed == expected.replace("\n", newline), repr(fixed)


# ---------------------------------------------------------------- CLI


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_check_does_not_hang_on_a_named_pipe(tmp_path):
    # `gradsight check .` in a directory holding a FIFO called *.py blocked forever in read_bytes().
    (tmp_path / "good.py").write_text("import torch\nx = torch.ones(2, requires_grad=True)\ny = x.numpy()\n")
    os.mkfifo(tmp_path / "pipe.py")
    try:
        proc = subprocess.run([*GRADSIGHT, "check", ".", "--no-cache", "--output-format", "json"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("gradsight check hung on a named pipe")
    assert "Traceback" not in proc.stderr
    assert "pipe.py" in proc.stderr  # skipped, with a message
    assert '"GS201"' in proc.stdout  # and the rest of the run went on


@pytest.mark.parametrize("toml", ["tool = 1\n", "tool = [1, 2]\n", 'tool = "gradsight"\n'])
def test_check_survives_a_pyproject_whose_tool_is_not_a_table(tmp_path, toml):
    # load_pyproject did data.get("tool", {}).get("gradsight"): a traceback when `tool` is not a table.
    (tmp_path / "pyproject.toml").write_text(toml)
    (tmp_path / "good.py").write_text("import torch\nx = torch.ones(2, requires_grad=True)\ny = x.numpy()\n")
    proc = subprocess.run([*GRADSIGHT, "check", "good.py", "--no-cache", "--output-format", "json"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert "pyproject.toml" in proc.stderr  # a clear message
    assert proc.returncode == 1 and '"GS201"' in proc.stdout  # defaults, and the analysis still ran


@pytest.mark.parametrize("fmt, encoding", [("text", "cp1252"), ("text", "ascii"), ("text", "utf-8:strict"),
                                           ("github", "cp1252")])
def test_check_output_survives_a_console_that_cannot_encode_it(tmp_path, encoding, fmt):
    # `gradsight check` wrote messages and paths with sys.stdout's strict error handler: a CJK identifier
    # (echoed in the message) on a Windows cp1252 console or LANG=C, or a file name with non-UTF-8 bytes
    # under a strict UTF-8 locale, ended the run with UnicodeEncodeError and a traceback.
    (tmp_path / "a.py").write_text("import torch\n名 = torch.ones(2, requires_grad=True)\ny = 名.numpy()\n",
                                   encoding="utf-8")
    if encoding == "utf-8:strict" and os.name == "posix":
        (tmp_path / os.fsdecode(b"odd\xffname.py")).write_text(GOOD, encoding="utf-8")
    env = {**os.environ, "PYTHONIOENCODING": encoding, "PYTHONUTF8": "0"}
    proc = subprocess.run([*GRADSIGHT, "check", ".", "--no-cache", "--output-format", fmt], cwd=tmp_path,
                          capture_output=True, timeout=120, env=env)
    stderr = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr[-1500:]
    assert proc.stdout.count(b"GS201") >= 1 and proc.returncode == 1


GOOD = "import torch\nx = torch.ones(2, requires_grad=True)\ny = x.numpy()\n"


# ---------------------------------------------------------------- language server

try:
    import gs_lsp
    SERVER_OK, SERVER_WHY = gs_lsp.server_available()
except Exception as exc:  # noqa: BLE001
    SERVER_OK, SERVER_WHY = False, f"cannot import the test client: {exc}"
needs_server = pytest.mark.skipif(not SERVER_OK, reason=SERVER_WHY or "language server unavailable")


def _run(coro, timeout: float = 120):
    return asyncio.run(asyncio.wait_for(coro, timeout))


@needs_server
def test_server_started_with_dash_m_does_not_import_workspace_modules(tmp_path):
    # SECURITY. The VS Code client starts `python -m gradsight lsp` with cwd = the workspace folder, and
    # `python -m` puts the cwd first on sys.path, so a workspace file named like a module gradsight
    # imports (json.py, enum.py, fnmatch.py, argparse.py...) ran when the server started, even in an
    # untrusted workspace. Fix: PYTHONSAFEPATH=1 / `-P` in the client, and drop sys.path[0] == cwd first
    # thing in gradsight/__init__.py.
    # contextlib, warnings and importlib are imported by runpy itself, before gradsight/__init__.py runs: removing
    # sys.path[0] there (the first fix) is too late for them; only the launch can prevent it (PYTHONSAFEPATH=1
    # or `-P` on Python >= 3.11; on 3.10 `-c "import sys; del sys.path[0]; import runpy; ..."`).
    names = ["json", "enum", "fnmatch", "argparse", "ast", "tomllib", "dataclasses", "typing", "logging",
             "libcst", "lsprotocol", "pygls", "cattrs", "attrs", "concurrent", "uuid", "inspect", "contextlib",
             "warnings"]
    for name in names:
        (tmp_path / f"{name}.py").write_text(f"open({str(tmp_path / ('RAN_' + name))!r}, 'w').write('ran')\n")
    (tmp_path / "importlib").mkdir()
    (tmp_path / "importlib" / "__init__.py").write_text(f"open({str(tmp_path / 'RAN_importlib')!r}, 'w')\n")
    (tmp_path / "x.py").write_text("import torch\nx = torch.ones(2, requires_grad=True)\ny = x.numpy()\n")

    async def session():
        # The launch the VS Code client uses (client/src/server.ts): PYTHONSAFEPATH=1. Its cwd is the extension's
        # folder; here the workspace is the cwd on purpose, the worst case.
        client = gs_lsp.RawLspClient(cwd=str(tmp_path), stderr_path=str(tmp_path / "stderr.txt"),
                                     env={**os.environ, "PYTHONSAFEPATH": "1"})
        await client.start()
        try:
            await gs_lsp.initialize(client, tmp_path)
            client.notify("textDocument/didOpen", {"textDocument": {
                "uri": (tmp_path / "x.py").as_uri(), "languageId": "python", "version": 1,
                "text": (tmp_path / "x.py").read_text()}})
            await client.request("textDocument/diagnostic", {"textDocument": {"uri": (tmp_path / "x.py").as_uri()}})
            await client.stop()
        except (gs_lsp.ServerDied, asyncio.TimeoutError):
            pass
        finally:
            await client.kill()

    _run(session())
    ran = sorted(p.name[4:] for p in tmp_path.glob("RAN_*"))
    assert ran == [], f"starting the server executed workspace files: {ran}"


@needs_server
def test_server_survives_an_absurd_content_length(tmp_path):
    # `Content-Length: 99999999999999999999999` made pygls's reader raise OverflowError in
    # readexactly(); the exception escaped the read loop and the server process died.
    async def session():
        client = gs_lsp.RawLspClient(stderr_path=str(tmp_path / "stderr.txt"))
        await client.start()
        try:
            await gs_lsp.initialize(client, tmp_path)
            client.send_raw(b"Content-Length: 99999999999999999999999\r\n\r\n\r\n")
            await client.drain()
            await asyncio.sleep(1.0)
            assert client.alive(), "the server died:\n" + client.stderr_text()[-1500:]
            answer = await client.request("textDocument/hover", {"textDocument": {"uri": (tmp_path / "a.py").as_uri()},
                                                                 "position": {"line": 0, "character": 0}}, timeout=20)
            assert "result" in answer or "error" in answer
        finally:
            await client.kill()

    _run(session())


@needs_server
@pytest.mark.parametrize("params", [
    None,
    {"textDocument": {"uri": "file:///x.py"}},  # no position
    {"textDocument": {"uri": "file:///x.py"}, "position": {"line": -1, "character": 0}},
], ids=["null-params", "no-position", "negative-line"])
def test_server_answers_requests_with_invalid_params(tmp_path, params):
    # JSON-RPC requires an answer to every request; an editor waits for it (and shows a spinner). pygls
    # raises JsonRpcInvalidParams inside json.loads(object_hook=...), logs it and answers nothing (and
    # pops up "Error in server: Invalid Params" with window/showMessage instead).
    async def session():
        client = gs_lsp.RawLspClient(stderr_path=str(tmp_path / "stderr.txt"))
        await client.start()
        try:
            await gs_lsp.initialize(client, tmp_path)
            fut = client.request_nowait("textDocument/hover", params)
            await client.drain()
            try:
                answer = await client.wait(fut, 5, "hover with invalid params")
            except asyncio.TimeoutError:
                pytest.fail("no response to a request with invalid params (expected an error, -32602)")
            assert answer.get("error", {}).get("code") == -32602 or "result" in answer
        finally:
            await client.kill()

    _run(session())


@needs_server
def test_server_answers_unreadable_messages_with_json_rpc_errors(tmp_path):
    # pygls logged a body that is not JSON (or JSON that is not a message) with a traceback, showed it as an
    # "Error in server" pop-up and answered nothing. JSON-RPC says: a parse error (-32700) or an invalid
    # request (-32600), with id null when the id cannot be read; a notification is never answered.
    async def session():
        client = gs_lsp.RawLspClient(stderr_path=str(tmp_path / "stderr.txt"))
        await client.start()
        try:
            await gs_lsp.initialize(client, tmp_path)
            for body in (b"{not json", b"\xff\xfe", b"[1,2]", b"{}"):
                client.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            client.send_raw(b"Content-Length: -1\r\n\r\nContent-Length: 1e9\r\n\r\n")
            client.notify("textDocument/didOpen", {"textDocument": {"uri": 5}})  # bad params, a notification
            answer = await client.request("gradsight/noSuchMethod", None, timeout=20)
            assert answer["error"]["code"] == -32601
            assert [r["error"]["code"] for r in client.null_id_responses] == [-32700, -32700, -32600, -32600]
            assert client.malformed_responses == []
            assert not [n for n in client.of_method("window/showMessage") if n["params"]["type"] == 1]
            assert await client.stop() == 0
        finally:
            await client.kill()

    _run(session())


@needs_server
def test_server_logs_but_does_not_pop_up_changes_to_documents_that_are_not_open(tmp_path):
    # A didChange for a document that was never opened raised KeyError in pygls's workspace, which pygls showed
    # as an error pop-up ("Error in server: KeyError: 'file:///...'"), 84 of them in a 2,500-operation run.
    async def session():
        client = gs_lsp.RawLspClient(cmd=[*gs_lsp.SERVER_CMD, "--log-level", "info"],
                                     stderr_path=str(tmp_path / "stderr.txt"))
        await client.start()
        try:
            await gs_lsp.initialize(client, tmp_path)
            uri = (tmp_path / "never-opened.py").as_uri()
            client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                                     "contentChanges": [{"text": "x = 1\n"}]})
            client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 4}, "contentChanges": [
                {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "y"}]})
            client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            client.notify("notebookDocument/didChange", {
                "notebookDocument": {"uri": (tmp_path / "nb.ipynb").as_uri(), "version": 2}, "change": {}})
            answer = await client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            assert answer["result"]["items"] == []  # still not open: nothing was made up from the change
            assert client.of_method("window/showMessage") == []
            logged = " ".join(n["params"]["message"] for n in client.of_method("window/logMessage"))
            assert "never-opened.py, which is not open" in logged and "nb.ipynb, which is not open" in logged
            assert await client.stop() == 0
        finally:
            await client.kill()

    _run(session())


# Each case: (initial text, position of an empty-range insert, inserted text). The expected document is what
# the LSP specification says: lines end only at "\n", "\r\n" and "\r"; a character past the end of its line
# means the end of that line. pygls 2's TextDocument splits lines with str.splitlines() and clamps columns to
# one before the line's end, so the server's copy of the document silently diverged from the editor's.
TEXT_SYNC_CASES = {
    "form-feed-in-comment": ("import torch\n#\x0c\nx = torch.ones(2, requires_grad=True)\ny = x.numpy()\n", (3, 0),
                             "x = x.detach()\n"),
    "u2028-in-string": ("import torch\ns = '\u2028'\nx = torch.ones(2, requires_grad=True)\ny = x.numpy()\n", (2, 0),
                        "q = 1\n"),
    "past-end-of-last-line": ("import torch\nx = torch.ones(2, requires_grad=True)\ny = x.numpy()", (2, 99),
                              "  # note"),
    "one-past-end-of-line-lf": ("import torch\nx = torch.ones(2, requires_grad=True)\ny = x.numpy()\n", (1, 38),
                                "  # c"),
    "past-end-of-line-crlf": ("import torch\r\nx = torch.ones(2, requires_grad=True)\r\ny = x.numpy()\r\n", (1, 38),
                              "  # c"),
}


@needs_server
def test_server_document_follows_lsp_line_ends_and_clamping(tmp_path):
    async def session():
        from gradsight.lsp.positions import LineIndex

        client = gs_lsp.RawLspClient(stderr_path=str(tmp_path / "stderr.txt"))
        await client.start()
        problems = []
        try:
            await gs_lsp.initialize(client, tmp_path)
            for n, (name, (text, (line, character), insert)) in enumerate(TEXT_SYNC_CASES.items()):
                uri = (tmp_path / f"sync{n}.py").as_uri()
                client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                                        "version": 1, "text": text}})
                pos = {"line": line, "character": character}
                change = {"range": {"start": pos, "end": pos}, "text": insert}
                client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                         "contentChanges": [change]})
                model = gs_lsp.LspText(text)
                model.apply(change)
                answer = await client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
                got = sorted((d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"])
                             for d in answer["result"]["items"])
                index = LineIndex(model.text)
                want = sorted((f.code, index.to_lsp(f.line, f.column).line, index.to_lsp(f.line, f.column).character)
                              for f in analyze_source(model.text, str(tmp_path / f"sync{n}.py")).findings)
                if got != want:
                    problems.append(f"{name}: server {got}, editor's text {want}; text {model.text!r}")
            await client.stop()
        finally:
            await client.kill()
        assert not problems, "\n".join(problems)

    _run(session())


@needs_server
def test_server_survives_a_pyproject_whose_tool_is_not_a_table(tmp_path):
    # The same load_pyproject crash inside the server: every request for a document under that pyproject
    # failed (logged, answered empty), so the file silently had no diagnostics and no message.
    (tmp_path / "pyproject.toml").write_text("tool = 1\n")
    good = "import torch\nx = torch.ones(2, requires_grad=True)\ny = x.numpy()\n"
    (tmp_path / "good.py").write_text(good)

    async def session():
        client = gs_lsp.RawLspClient(stderr_path=str(tmp_path / "stderr.txt"))
        await client.start()
        try:
            await gs_lsp.initialize(client, tmp_path)
            uri = (tmp_path / "good.py").as_uri()
            client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                    "text": good}})
            answer = await client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            assert [d["code"] for d in answer["result"]["items"]] == ["GS201"]
            assert any("pyproject.toml" in m for m in client.shown_messages()), client.shown_messages()
        finally:
            await client.kill()

    _run(session())


def test_gs212_fix_columns_after_a_non_ascii_name():
    # Found by the fuzzer: the fix's column came from ast's byte offsets, past the end of a line with `名前`.
    from gradsight.analysis import analyze_source

    src = "import torch\n名前 = torch.rand(3)\n名前.add_(1).mul(2)\n"
    f = next(f for f in analyze_source(src, "u.py").findings if f.code == "GS212")
    edit = f.fix.edits[0]
    line = src.splitlines()[edit.line - 1]
    assert 1 <= edit.column <= len(line) + 1 and line[:edit.column - 1].endswith(".mul")
