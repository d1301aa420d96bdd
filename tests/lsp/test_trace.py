"""gradsight.runTrace: trust, unsaved buffers, progress, cancellation, and "confirmed by trace"."""

from __future__ import annotations

import asyncio
import importlib.util
import pathlib

import pytest
from lsprotocol import types

from lsp_helpers import NUMPY_CASE, capabilities, lsp, write


def run_trace(client, uri, **extra):
    return client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="gradsight.runTrace", arguments=[{"uri": uri, **extra}]))


async def test_untrusted_workspace_refuses(ws):
    path, uri = write(ws, "case.py", NUMPY_CASE)
    async with lsp(ws, caps=capabilities("visual-studio-code"), init_options={"trusted": False}) as client:
        client.open(uri, NUMPY_CASE)
        result = await run_trace(client, uri)
        assert result["findings"] == 0 and "not trusted" in result["error"]
        assert any("not trusted" in m.message for m in client.messages)
        assert not client.progress_reports


async def test_trace_confirms_findings_until_the_text_changes(ws):
    path, uri = write(ws, "case.py", NUMPY_CASE)
    async with lsp(ws, caps=capabilities("neovim@v0.7")) as client:
        client.open(uri, NUMPY_CASE)
        before = await client.diagnostics_for(uri, 1)
        assert not any("confirmed by trace" in d.message for d in before)
        seen = len(client.published)
        result = await run_trace(client, uri)
        assert result["findings"] == 2 and not result["error"] and not result["cancelled"]
        await client.wait_for(lambda: len(client.published) > seen, what="diagnostics after the trace")
        diags = client.published[-1].diagnostics
        (confirmed,) = [d for d in diags if d.code == "GS999"]
        assert confirmed.message.endswith("(confirmed by trace)") and confirmed.data["source"] == "trace"
        assert confirmed.data["fix"] is not None  # the static fix is kept
        (extra,) = [d for d in diags if d.code == "GS998"]
        assert extra.severity == types.DiagnosticSeverity.Error and extra.data["source"] == "trace"
        assert extra.message.endswith("(found by trace)") and not extra.data["confirmed"]
        assert confirmed.data["confirmed"] is True
        assert [d for d in diags if d.code == "GS201"][0].data["source"] == "static"

        (token, reports), = client.progress_reports.items()
        assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].cancellable
        assert isinstance(reports[-1], types.WorkDoneProgressEnd) and "2 findings" in reports[-1].message

        # An edit elsewhere moves the trace findings with their lines...
        client.replace_all(uri, "# a comment\n" + NUMPY_CASE, 2)
        diags = await client.diagnostics_for(uri, 2)
        (moved,) = [d for d in diags if d.code == "GS999"]
        assert moved.message.endswith("(confirmed by trace)") and moved.range.start.line == confirmed.range.start.line + 1
        assert "GS998" in {d.code for d in diags}
        # ...and an edit on a finding's line drops it (the others stay).
        lines = ("# a comment\n" + NUMPY_CASE).splitlines(keepends=True)
        lines[moved.range.start.line] = lines[moved.range.start.line].replace("bins=3", "bins=4")
        client.replace_all(uri, "".join(lines), 3)
        diags = await client.diagnostics_for(uri, 3)
        assert not any(d.code == "GS999" and "confirmed by trace" in d.message for d in diags)
        assert "GS998" in {d.code for d in diags}  # on line 2 now, untouched
        # Editing the line a trace-only finding names removes it.
        lines[1] = "import numpy as np  # edited\n"
        client.replace_all(uri, "".join(lines), 4)
        diags = await client.diagnostics_for(uri, 4)
        assert "GS998" not in {d.code for d in diags}


async def test_trace_returns_counts_for_the_notification(ws):
    path, uri = write(ws, "case.py", NUMPY_CASE)
    async with lsp(ws, caps=capabilities("visual-studio-code", pull=True)) as client:
        client.open(uri, NUMPY_CASE)
        result = await run_trace(client, uri, quiet=True)
        # The stub tracer reports GS999 (confirming the static GS999) and GS998 (trace only, an error).
        assert result["findings"] == 2 and result["confirmed"] == 1
        assert result["errors"] == 1 and result["warnings"] == 1 and result["cancelled"] is False
        assert result["files"] == [str(path)]
        assert not any("trace of case.py" in m.message for m in client.messages)  # quiet: the client tells


async def test_trace_quick_fix_for_a_trace_only_finding(ws):
    text = "# stub: trace-fix\n" + NUMPY_CASE
    path, uri = write(ws, "fix.py", text)
    async with lsp(ws, caps=capabilities("neovim@v0.7")) as client:
        client.open(uri, text)
        await client.diagnostics_for(uri, 1)
        seen = len(client.published)
        await run_trace(client, uri)
        await client.wait_for(lambda: len(client.published) > seen, what="diagnostics after the trace")
        (traced,) = [d for d in client.published[-1].diagnostics if d.code == "GS998"]
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=traced.range,
            context=types.CodeActionContext(diagnostics=[traced])))
        titles = [a.title for a in actions]
        assert "Insert `.detach()` (stub)" in titles, titles
        fix = next(a for a in actions if a.title == "Insert `.detach()` (stub)")
        edit = next(iter(fix.edit.changes.values()))[0] if fix.edit.changes else \
            fix.edit.document_changes[0].edits[0]
        assert edit.new_text == ".detach()" and edit.range.start.line == traced.range.start.line


async def test_unsaved_changes_and_notebooks_are_refused(ws):
    path, uri = write(ws, "case.py", NUMPY_CASE)
    async with lsp(ws, caps=capabilities("neovim@v0.7")) as client:
        client.open(uri, NUMPY_CASE + "x = 1\n")
        result = await run_trace(client, uri)
        assert "save case.py first" in result["error"]
        result = await run_trace(client, uri.replace("case.py", "missing.py"))
        assert "not open" in result["error"]
        result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="gradsight.runTrace", arguments=[]))
        assert "needs" in result["error"]


async def test_cancelling_the_progress_cancels_the_trace(ws):
    text = "# stub: slow-trace\n" + NUMPY_CASE
    path, uri = write(ws, "slow.py", text)
    async with lsp(ws, caps=capabilities("visual-studio-code", pull=True)) as client:
        client.open(uri, text)
        pending = asyncio.ensure_future(run_trace(client, uri))
        token = await client.wait_for(
            lambda: next((t for t, r in client.progress_reports.items() if r), None), what="progress begin")
        client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
        result = await asyncio.wait_for(pending, 5)
        assert result["cancelled"] is True
        assert isinstance(client.progress_reports[token][-1], types.WorkDoneProgressEnd)
        report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))
        assert not any("confirmed by trace" in d.message for d in report.items)


async def test_pull_clients_are_told_to_refresh_after_a_trace(ws):
    path, uri = write(ws, "case.py", NUMPY_CASE)
    async with lsp(ws, caps=capabilities("visual-studio-code", pull=True)) as client:
        client.open(uri, NUMPY_CASE)
        first = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))
        refreshes = client.diagnostic_refresh_count
        await run_trace(client, uri)
        await client.wait_for(lambda: client.diagnostic_refresh_count > refreshes, what="refresh")
        second = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id=first.result_id))
        assert second.kind == "full" and any("confirmed by trace" in d.message for d in second.items)


def _real_tracer() -> bool:
    try:
        from gradsight.trace import run_trace  # noqa: F401
    except ImportError:
        return False
    return importlib.util.find_spec("torch") is not None


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.skipif(not _real_tracer(), reason="needs gradsight.trace.run_trace and torch")
async def test_real_trace_confirms_the_numpy_finding(ws):
    path, uri = write(ws, "case.py", NUMPY_CASE)
    async with lsp(ws, caps=capabilities("neovim@v0.7"), stub=False,
                   init_options={"settings": {"trace": {"device": "cpu", "timeout": 120}}}) as client:
        client.open(uri, NUMPY_CASE)
        await client.diagnostics_for(uri, 1)
        seen = len(client.published)
        result = await asyncio.wait_for(run_trace(client, uri), 180)
        assert result["findings"] >= 1, result
        await client.wait_for(lambda: len(client.published) > seen, what="diagnostics after the trace")
        (numpy,) = [d for d in client.published[-1].diagnostics if d.code == "GS201"]
        assert numpy.message.endswith("(confirmed by trace)") and numpy.data["source"] == "trace"


RNN_CASE = pathlib.Path("/work/shared/seed-cases/cases/extra_rnn_hidden_carry.py")
RNN_TEXT = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
rnn = nn.RNN(input_size=4, hidden_size=8, batch_first=True)
head = nn.Linear(8, 1)
opt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.01)
data = torch.randn(2, 12, 4)
target = torch.randn(2, 1)
hidden = torch.zeros(1, 2, 8)

for start in range(0, 12, 4):
    chunk = data[:, start:start + 4]
    out, hidden = rnn(chunk, hidden)
    loss = (head(out[:, -1]) - target).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.skipif(not _real_tracer(), reason="needs gradsight.trace.run_trace and torch")
async def test_real_trace_confirms_a_static_finding_with_counts_and_a_quick_fix(ws):
    text = RNN_CASE.read_text(encoding="utf-8") if RNN_CASE.is_file() else RNN_TEXT
    path, uri = write(ws, "rnn.py", text)
    async with lsp(ws, caps=capabilities("neovim@v0.7"), stub=False,
                   init_options={"settings": {"trace": {"device": "cpu", "timeout": 120}}}) as client:
        client.open(uri, text)
        static = [d for d in await client.diagnostics_for(uri, 1) if d.code == "GS402"]
        assert static, "the static rule flags the carried hidden state"
        seen = len(client.published)
        result = await asyncio.wait_for(run_trace(client, uri, quiet=True), 180)
        assert result["confirmed"] == 1 and result["errors"] >= 1 and result["error"]["type"] == "RuntimeError"
        await client.wait_for(lambda: len(client.published) > seen, what="diagnostics after the trace")
        (confirmed,) = [d for d in client.published[-1].diagnostics if d.code == "GS402"]
        assert confirmed.message.endswith("(confirmed by trace)")
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=confirmed.range,
            context=types.CodeActionContext(diagnostics=[confirmed])))
        assert any("detach" in a.title.lower() for a in actions), [a.title for a in actions]
        # An edit below the loop leaves the confirmation in place.
        client.replace_all(uri, text + "print('done')\n", 2)
        diags = await client.diagnostics_for(uri, 2)
        assert any(d.code == "GS402" and d.message.endswith("(confirmed by trace)") for d in diags)


async def test_trace_findings_in_other_files_land_in_those_files(ws):
    text = "# stub: trace-other=models.py\n# stub: trace-other=helpers.py\n" + NUMPY_CASE
    models_text = "import torch\nh = torch.ones(2)\nprint(h)\n"
    path, uri = write(ws, "train.py", text)
    _, models_uri = write(ws, "models.py", models_text)
    _, helpers_uri = write(ws, "helpers.py", models_text)
    async with lsp(ws, caps=capabilities("neovim@v0.7")) as client:
        client.open(uri, text)
        client.open(models_uri, models_text)
        await client.diagnostics_for(models_uri, 1)
        result = await run_trace(client, uri)
        assert result["files"] == sorted([str(path), str(ws / "models.py"), str(ws / "helpers.py")])
        await client.wait_for(lambda: any(p.uri == models_uri and any(d.code == "GS997" for d in p.diagnostics)
                                          for p in client.published), what="models.py trace finding")
        (found,) = [d for p in client.published if p.uri == models_uri for d in p.diagnostics if d.code == "GS997"][:1]
        assert found.range.start.line == 1 and found.message.endswith("(found by trace)")
        # helpers.py was not open: it gets its finding when it is opened with the traced text.
        client.open(helpers_uri, models_text)
        diags = await client.diagnostics_for(helpers_uri, 1)
        assert [d.range.start.line for d in diags if d.code == "GS997"] == [1]


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.skipif(not _real_tracer(), reason="needs gradsight.trace.run_trace and torch")
async def test_a_trace_that_cannot_run_says_so(ws):
    path, uri = write(ws, "case.py", NUMPY_CASE)
    async with lsp(ws, caps=capabilities("neovim@v0.7"), stub=False,
                   init_options={"settings": {"python": str(ws / "no-such-python")}}) as client:
        client.open(uri, NUMPY_CASE)
        result = await asyncio.wait_for(run_trace(client, uri), 60)
        assert result["findings"] == 0 and result["files"] == []
        assert any("could not run" in m.message for m in client.messages), [m.message for m in client.messages]
