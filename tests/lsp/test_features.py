"""Hover, inlay hints (and resolve), code actions and the gradsight.fixAll command, end to end."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from gradsight.config import Config
from gradsight.analysis import analyze_source
from gradsight.lsp import convert
from lsp_helpers import NUMPY_CASE, apply_text_edits, capabilities, edits_of, lsp, write

FIXED_LINE = "histogram = np.histogram(pred.detach().numpy(), bins=3)"


def doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def at(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


async def hover_text(client, uri, line, character) -> str | None:
    result = await client.text_document_hover_async(types.HoverParams(text_document=doc(uri),
                                                                      position=at(line, character)))
    return None if result is None else result.contents.value


async def test_hover_facts_findings_and_nothing(ws):
    path, uri = write(ws, "case.py", NUMPY_CASE)
    async with lsp(ws, caps=capabilities("visual-studio-code"), stub=False) as client:
        client.open(uri, NUMPY_CASE)
        await client.diagnostics_for(uri, 1)

        # `pred` inside `pred.numpy()`: its fact, the chain, and the GS201 diagnostic with its fix.
        text = await hover_text(client, uri, 7, 27)
        assert text is not None
        assert text.startswith("**") and "requires grad" in text
        assert f"]({uri}#L7)" in text  # a link to the line the gradient history comes from
        assert "GS201" in text and "numpy-on-grad-tensor" in text
        assert "Fix: Use `.detach().numpy()` (safe fix)" in text

        # `batch` where it is created: a fact, no diagnostic.
        text = await hover_text(client, uri, 5, 2)
        assert text is not None and "no grad" in text and "GS" not in text

        # No tensor there: no hover.
        assert await hover_text(client, uri, 0, 3) is None
        assert await hover_text(client, uri, 8, 0) is None  # `print`


async def test_hover_picks_the_innermost_fact_and_respects_plaintext(ws):
    path, uri = write(ws, "case.py", NUMPY_CASE)
    caps = capabilities("neovim@v0.7")
    caps.text_document.hover.content_format = [types.MarkupKind.PlainText]
    async with lsp(ws, caps=caps) as client:  # stub engine: nested facts `pred.numpy()` > `pred`
        client.open(uri, NUMPY_CASE)
        line = NUMPY_CASE.splitlines()[7]
        result = await client.text_document_hover_async(types.HoverParams(
            text_document=doc(uri), position=at(7, line.index(".numpy") + 3)))
        assert result.contents.kind == types.MarkupKind.PlainText
        assert "leaves autograd" in result.contents.value and "**" not in result.contents.value
        assert result.range.start == at(7, line.index("pred"))
        inner = await hover_text(client, uri, 7, line.index("pred") + 1)
        assert "leaves autograd" not in inner.split("\n\n")[0]


async def test_inlay_hints_follow_the_mode_and_resolve(ws):
    path, uri = write(ws, "case.py", NUMPY_CASE)
    facts = analyze_source(NUMPY_CASE, str(path), Config()).facts
    whole = types.Range(start=at(0, 0), end=at(20, 0))

    def expected(mode):
        # Which facts get a hint is `convert.hinted_facts`'s job (tested on its own in test_hover_files.py);
        # here: the mode, the range, the labels and resolve go through the server as they should.
        wanted = [] if mode == "off" else [f for _, f in convert.hinted_facts(facts, NUMPY_CASE.splitlines(), mode)]
        return sorted((f.end_line - 1, f.end_column - 1, convert.plain_label(f)) for f in wanted)

    async def hints_for(mode):
        """Inlay hints once the server has taken up `mode` (settings changes apply asynchronously)."""
        got = None
        for _ in range(100):
            got = list(await client.text_document_inlay_hint_async(
                types.InlayHintParams(text_document=doc(uri), range=whole)) or [])
            if sorted((h.position.line, h.position.character, h.label) for h in got) == expected(mode):
                return got
            await asyncio.sleep(0.05)
        raise AssertionError(f"inlay hints for {mode!r}: {got}")

    async with lsp(ws, caps=capabilities("neovim"), stub=False, configuration={"inlayHints": "transitions"}) as client:
        client.open(uri, NUMPY_CASE)
        hints = await hints_for("transitions")
        assert hints, "the seed case has at least one transition"
        for hint in hints:
            assert hint.kind == types.InlayHintKind.Type and hint.padding_left and hint.tooltip is None
        resolved = await client.inlay_hint_resolve_async(hints[0])
        fact = next(f for f in facts if (f.end_line - 1, f.end_column - 1) ==
                    (hints[0].position.line, hints[0].position.character))
        assert convert.state_text(fact) in resolved.tooltip.value
        # Only the requested range is answered.
        line = hints[0].position.line
        some = await client.text_document_inlay_hint_async(types.InlayHintParams(
            text_document=doc(uri), range=types.Range(start=at(line, 0), end=at(line, 999))))
        assert some and all(h.position.line == line for h in some)
        # A resolve for a hint of an older version comes back unchanged.
        stale = types.InlayHint(position=hints[0].position, label=hints[0].label,
                                data={"uri": uri, "version": 0, "fact": hints[0].data["fact"]})
        assert (await client.inlay_hint_resolve_async(stale)).tooltip is None

        for mode in ("all", "off"):
            client.set_configuration({"inlayHints": mode}, section="gradsight")
            client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
            await hints_for(mode)


@pytest.mark.parametrize("client_name", ["neovim@v0.7", "visual-studio-code"])
async def test_code_actions_quick_fix_ignore_and_fix_all(ws, client_name):
    path, uri = write(ws, "case.py", NUMPY_CASE)
    async with lsp(ws, caps=capabilities(client_name), stub=False) as client:
        client.open(uri, NUMPY_CASE)
        diags = [d for d in await client.diagnostics_for(uri, 1) if d.code == "GS201"]
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=doc(uri), range=diags[0].range, context=types.CodeActionContext(diagnostics=diags)))
        by_title = {a.title: a for a in actions}

        fix = by_title["Use `.detach().numpy()`"]
        assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred and fix.diagnostics[0].code == "GS201"
        assert apply_text_edits(NUMPY_CASE, edits_of(fix.edit, uri)).splitlines()[7] == FIXED_LINE

        ignore = by_title["Ignore GS201 on this line"]
        assert apply_text_edits(NUMPY_CASE, edits_of(ignore.edit, uri)).splitlines()[7] == \
            "histogram = np.histogram(pred.numpy(), bins=3)  # gradsight: ignore[GS201]"

        fix_all = next(a for a in actions if a.kind == "source.fixAll.gradsight")
        assert apply_text_edits(NUMPY_CASE, edits_of(fix_all.edit, uri)).splitlines()[7] == FIXED_LINE

        # Asking for source.fixAll only gives just that.
        only = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=doc(uri), range=types.Range(start=at(0, 0), end=at(0, 0)),
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll])))
        assert [a.kind for a in only] == ["source.fixAll.gradsight"]

        # No diagnostics in the context (Neovim 0.7 on an empty line list): findings in the range count.
        bare = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=doc(uri), range=types.Range(start=at(7, 26), end=at(7, 26)),
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.QuickFix])))
        assert "Use `.detach().numpy()`" in [a.title for a in bare]

        # After the fix is applied there is nothing left to fix.
        fixed = apply_text_edits(NUMPY_CASE, edits_of(fix.edit, uri))
        client.replace_all(uri, fixed, 2)
        assert not [d for d in await client.diagnostics_for(uri, 2) if d.code == "GS201"]


async def test_ignore_extends_an_existing_comment(ws):
    text = NUMPY_CASE.replace("bins=3)\n", "bins=3)  # gradsight: ignore[GS999]\n")
    path, uri = write(ws, "case.py", text)
    async with lsp(ws, caps=capabilities("neovim@v0.7"), stub=False) as client:
        client.open(uri, text)
        diags = [d for d in await client.diagnostics_for(uri, 1) if d.code == "GS201"]
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=doc(uri), range=diags[0].range, context=types.CodeActionContext(diagnostics=diags)))
        ignore = next(a for a in actions if a.title == "Ignore GS201 on this line")
        ignored = apply_text_edits(text, edits_of(ignore.edit, uri))
        assert ignored.splitlines()[7].endswith("# gradsight: ignore[GS999, GS201]")
        client.replace_all(uri, ignored, 2)  # and the engine honours it
        assert "GS201" not in {d.code for d in await client.diagnostics_for(uri, 2)}


async def test_fix_all_command_applies_an_edit(ws):
    text = NUMPY_CASE + "again = np.asarray(pred.numpy())\n"
    path, uri = write(ws, "case.py", text)
    async with lsp(ws, caps=capabilities("visual-studio-code"), stub=False) as client:
        client.open(uri, text)
        await client.diagnostics_for(uri, 1)
        stale = await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="gradsight.fixAll", arguments=[{"uri": uri, "version": 99}]))
        assert stale["applied"] == 0 and "changed" in stale["error"]
        result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="gradsight.fixAll", arguments=[{"uri": uri, "version": 1}]))
        assert result["applied"] >= 1
        (applied,) = client.applied_edits
        new_text = apply_text_edits(text, edits_of(applied.edit, uri))
        assert new_text.splitlines()[7] == FIXED_LINE
        assert ".numpy()" not in new_text.replace(".detach().numpy()", "")
        bad = await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="gradsight.fixAll", arguments=["nonsense"]))
        assert bad["applied"] == 0
