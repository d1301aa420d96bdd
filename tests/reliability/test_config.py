"""Invalid configuration: a clear message, the defaults for what was wrong, and gradsight keeps working.

CLI: the message goes to stderr. Language server: `window/showMessage`, and diagnostics keep coming.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
import subprocess
import sys

import pytest

GRADSIGHT = [sys.executable, "-m", "gradsight"]
GOOD = "import torch\nx = torch.ones(2, requires_grad=True)\ny = x.numpy()\nx.add_(1)\n"

# (pyproject.toml text, words the message must contain). Every case leaves GS201 enabled.
BAD_PYPROJECTS = {
    "wrong-types": ('[tool.gradsight]\nselect = 5\nignore = [1]\ninlay-hints = "sometimes"\nexclude = "x.py"\n',
                    ["select", "ignore", "inlay-hints", "exclude"]),
    "unknown-keys": ('[tool.gradsight]\nbogus = 1\n[tool.gradsight.trace]\nwarp = true\n', ["bogus", "warp"]),
    "bad-values": ('[tool.gradsight]\nseverity = { GS201 = "catastrophic" }\n[tool.gradsight.trace]\n'
                   'timeout = -3\ndevice = "tpu"\nmax-steps = "many"\nmemory-mb = 1\n',
                   ["catastrophic", "timeout", "device", "max-steps", "memory-mb"]),
    "not-a-table": ("[tool]\ngradsight = 5\n", ["table"]),
    "severity-not-a-table": ('[tool.gradsight]\nseverity = "loud"\n', ["severity"]),
    "bad-toml": ('[tool.gradsight\nselect = [\n', ["cannot read"]),
    "duplicate-key": ('[tool.gradsight]\nselect = ["GS2"]\nselect = ["GS3"]\n', ["cannot read"]),
    "not-utf8": ("[tool.gradsight]\n# caf\udce9\nselect = ['GS2']\n", ["cannot read"]),
}


def write_pyproject(d: pathlib.Path, text: str) -> None:
    (d / "pyproject.toml").write_bytes(text.encode("utf-8", "surrogateescape"))


@pytest.mark.parametrize("case", BAD_PYPROJECTS)
def test_cli_bad_pyproject(tmp_path, case):
    text, words = BAD_PYPROJECTS[case]
    write_pyproject(tmp_path, text)
    (tmp_path / "good.py").write_text(GOOD)
    proc = subprocess.run([*GRADSIGHT, "check", "good.py", "--no-cache", "--output-format", "json"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    messages = [ln for ln in proc.stderr.splitlines() if "pyproject.toml" in ln]
    assert messages, proc.stderr
    for word in words:
        assert any(word in m for m in messages), f"no message mentions {word!r}: {messages}"
    codes = {f["code"] for f in json.loads(proc.stdout)}
    assert "GS201" in codes  # defaults for the bad parts; the analysis ran
    assert proc.returncode == 1


def test_cli_unknown_codes_in_pyproject_exit_2(tmp_path):
    # ruff's rule: an unknown selector in the configuration is an error, never silently dropped (it could
    # hide a real finding); the analysis does not run.
    write_pyproject(tmp_path, '[tool.gradsight]\nselect = ["GS2", "E501", "XX"]\n')
    (tmp_path / "good.py").write_text(GOOD)
    proc = subprocess.run([*GRADSIGHT, "check", "good.py", "--no-cache"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 2 and "unknown rule selector" in proc.stderr and "E501" in proc.stderr


@pytest.mark.parametrize("args, word", [
    (["--config", "missing.toml"], "missing.toml"),
    (["--config", "."], "no such configuration file"),
    (["--select", "NOPE"], "NOPE"),
    (["--ignore", "GS2,,42"], "42"),
])
def test_cli_bad_command_line_settings(tmp_path, args, word):
    (tmp_path / "good.py").write_text(GOOD)
    proc = subprocess.run([*GRADSIGHT, "check", "good.py", "--no-cache", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert word in proc.stderr
    assert proc.returncode in (1, 2)


# ---------------------------------------------------------------- language server


def _server():
    gs_lsp = pytest.importorskip("gs_lsp")
    ok, why = gs_lsp.server_available()
    if not ok:
        pytest.skip(why)
    return gs_lsp


def test_server_bad_settings_and_pyprojects(tmp_path):
    """Bad pyproject.toml files and bad editor settings: one showMessage each, defaults, diagnostics go on."""
    gs_lsp = _server()
    cases = {name: tmp_path / name for name in BAD_PYPROJECTS}
    for name, d in cases.items():
        d.mkdir()
        write_pyproject(d, BAD_PYPROJECTS[name][0])
        (d / "good.py").write_text(GOOD)

    async def session():
        client = gs_lsp.RawLspClient(stderr_path=str(tmp_path / "server-stderr.txt"))
        await client.start()
        try:
            await gs_lsp.initialize(client, tmp_path, configuration=True,
                                    init_options={"settings": {"inlayHints": 42, "logLevel": "loud"}})

            async def diagnostics(uri: str) -> set[str]:
                answer = await client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}}, timeout=60)
                return {d["code"] for d in answer["result"]["items"]}

            for name, d in cases.items():
                uri = (d / "good.py").as_uri()
                client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                                        "version": 1, "text": GOOD}})
                assert "GS201" in await diagnostics(uri), name
            shown = "\n".join(client.shown_messages())
            for name, (_, words) in BAD_PYPROJECTS.items():
                for word in words:
                    assert any(word in m and "pyproject.toml" in m for m in client.shown_messages()), \
                        f"{name}: no window/showMessage mentions {word!r}:\n{shown}"
            assert "inlayHints" in shown or "inlay-hints" in shown
            assert "logLevel" in shown

            # Bad settings pushed later (the client answers workspace/configuration with them too).
            uri = (cases["wrong-types"] / "good.py").as_uri()
            for settings in ({"select": 7, "severity": {"GS201": "deafening"}}, "not an object", [1, 2], None,
                             {"trace": {"timeout": "never"}, "python": 3}):
                client.settings = settings
                before = len(client.shown_messages())
                client.notify("workspace/didChangeConfiguration", {"settings": {"gradsight": settings}})
                await client.drain()
                await asyncio.sleep(0.3)
                assert "GS201" in await diagnostics(uri), settings
                if settings is not None:
                    assert len(client.shown_messages()) > before, f"no message for settings {settings!r}"
            assert client.alive()
            assert await client.stop() == 0
        finally:
            await client.kill()

    asyncio.run(asyncio.wait_for(session(), 240))
