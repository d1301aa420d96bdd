"""Notebooks: python cells analysed as one module, results mapped back to each cell."""

from __future__ import annotations

from lsprotocol import types

from lsp_helpers import capabilities, lsp

CELLS = [
    (types.NotebookCellKind.Code, "import numpy as np\nimport torch\nimport torch.nn as nn\n"),
    (types.NotebookCellKind.Markup, "# A *markdown* cell: `pred.numpy()` here is prose\n"),
    (types.NotebookCellKind.Code, "%matplotlib inline\nnet = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), "
                                  "nn.Linear(4, 1))\nbatch = torch.randn(6, 3)\npred = net(batch)"),
    (types.NotebookCellKind.Code, "histogram = np.histogram(pred.numpy(), bins=3)\nprint(histogram)\n"),
]


def cell_uri(ws, i: int) -> str:
    return f"vscode-notebook-cell:{ws}/analysis.ipynb#C{i}"


def open_notebook(client, ws) -> str:
    nb_uri = (ws / "analysis.ipynb").as_uri()
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(
            uri=nb_uri, notebook_type="jupyter-notebook", version=1,
            cells=[types.NotebookCell(kind=kind, document=cell_uri(ws, i)) for i, (kind, _) in enumerate(CELLS)]),
        cell_text_documents=[
            types.TextDocumentItem(uri=cell_uri(ws, i), version=1,
                                   language_id="python" if kind == types.NotebookCellKind.Code else "markdown",
                                   text=text)
            for i, (kind, text) in enumerate(CELLS)]))
    return nb_uri


async def test_notebook_push_hover_and_edit(ws):
    async with lsp(ws, caps=capabilities("visual-studio-code", notebooks=True), stub=False) as client:
        sync = client.initialize_result.capabilities.notebook_document_sync
        assert sync.notebook_selector[0].notebook == "jupyter-notebook"
        nb_uri = open_notebook(client, ws)
        diags = await client.diagnostics_for(cell_uri(ws, 3), 1)
        (numpy,) = [d for d in diags if d.code == "GS201"]
        assert numpy.range.start == types.Position(line=0, character=25)
        # The related location (where `pred` got its history) is in another cell, at its own line.
        (related,) = numpy.related_information
        assert related.location.uri == cell_uri(ws, 2)
        assert related.location.range.start.line == 3
        # The magic line did not become a syntax error; other cells are clean.
        assert not [d for d in await client.diagnostics_for(cell_uri(ws, 2), 1)]
        assert not [d for d in await client.diagnostics_for(cell_uri(ws, 0), 1)]
        assert cell_uri(ws, 1) not in {p.uri for p in client.published}  # markdown is not analysed

        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=cell_uri(ws, 3)),
            position=types.Position(line=0, character=27)))
        assert "requires grad" in hover.contents.value
        assert f"]({cell_uri(ws, 2)}#L4)" in hover.contents.value

        # Insert a cell at the top and fix cell 3: positions stay cell-relative; the finding goes.
        new_cell = types.TextDocumentItem(uri=cell_uri(ws, 9), version=1, language_id="python", text="x = 1\n")
        fixed = "histogram = np.histogram(pred.detach().numpy(), bins=3)\nprint(histogram)\n"
        client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(uri=nb_uri, version=2),
            change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
                structure=types.NotebookDocumentCellChangeStructure(
                    array=types.NotebookCellArrayChange(start=0, delete_count=0, cells=[
                        types.NotebookCell(kind=types.NotebookCellKind.Code, document=cell_uri(ws, 9))]),
                    did_open=[new_cell]),
                text_content=[types.NotebookDocumentCellContentChanges(
                    document=types.VersionedTextDocumentIdentifier(uri=cell_uri(ws, 3), version=2),
                    changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)])]))))
        assert not [d for d in await client.diagnostics_for(cell_uri(ws, 3), 2) if d.code == "GS201"]

        client.notebook_document_did_close(types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=nb_uri),
            cell_text_documents=[types.TextDocumentIdentifier(uri=cell_uri(ws, i)) for i in (9, 0, 1, 2, 3)]))
        await client.wait_for(lambda: len(client.diagnostics.get(cell_uri(ws, 3), [None])) == 0, what="cleared")


async def test_notebook_pull_and_code_action(ws):
    async with lsp(ws, caps=capabilities("visual-studio-code", pull=True, notebooks=True), stub=False) as client:
        open_notebook(client, ws)
        report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=cell_uri(ws, 3))))
        (numpy,) = [d for d in report.items if d.code == "GS201"]
        assert numpy.range.start.line == 0
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=cell_uri(ws, 3)), range=numpy.range,
            context=types.CodeActionContext(diagnostics=[numpy])))
        fix = next(a for a in actions if a.is_preferred)
        (edit,) = fix.edit.changes[cell_uri(ws, 3)] if fix.edit.changes else fix.edit.document_changes[0].edits
        assert edit.range.start == types.Position(line=0, character=29) and edit.new_text == ".detach()"
        other = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=cell_uri(ws, 0))))
        assert not other.items and other.result_id != report.result_id
