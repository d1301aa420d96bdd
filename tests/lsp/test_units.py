"""Unit tests of the server's pure parts: settings, notebooks, actions, imports, conversions."""

from __future__ import annotations

import pathlib

from gradsight.findings import Applicability, Edit, Finding, Fix, Related, Severity
from gradsight.fixes import apply_edits
from gradsight.lsp import actions, convert
from gradsight.lsp.documents import ImportGraph, Snapshot, View, imported_modules, module_names
from gradsight.lsp.notebooks import join_cells
from gradsight.lsp.positions import LineIndex
from gradsight.lsp.settings import ConfigResolver, kebab, normalize, parse_editor_settings, trusted_from_init


# -- settings ----------------------------------------------------------------------------------------


def test_camel_case_is_normalised_but_rule_codes_are_not():
    assert kebab("inlayHints") == "inlay-hints"
    assert kebab("maxSteps") == "max-steps"
    raw = {"inlayHints": "all", "trace": {"maxSteps": 5, "memoryMb": 512, "server": "verbose"},
           "severity": {"GS201": "hint"}}
    assert normalize(raw) == {"inlay-hints": "all", "trace": {"max-steps": 5, "memory-mb": 512},
                              "severity": {"GS201": "hint"}}


def test_editor_settings_layers_and_server_keys():
    settings, problems = parse_editor_settings(
        {"logLevel": "debug", "inlayHints": "off", "trace": {"timeout": 5}},
        {"inlayHints": "all", "trace": {"maxSteps": 3}, "python": "/usr/bin/python3", "trusted": True,
         "interpreter": ["x"]},
    )
    assert problems == []
    assert settings.log_level == "debug"
    assert settings.python == "/usr/bin/python3"
    assert settings.analysis == {"inlay-hints": "all", "trace": {"timeout": 5, "max-steps": 3}}


def test_bad_settings_are_reported_and_fall_back():
    settings, problems = parse_editor_settings({"logLevel": "loud", "inlayHints": "sometimes",
                                                "trace": {"maxSteps": -1}, "bogus": 1})
    assert settings.log_level == "info"
    assert len(problems) == 4
    resolver = ConfigResolver()
    resolver.update(settings)
    config, _ = resolver.config_for(None)
    assert config.inlay_hints == "transitions"
    assert config.trace.max_steps == 20


def test_not_a_mapping_is_reported():
    settings, problems = parse_editor_settings(["select"])
    assert problems and settings.analysis == {}


def test_trust_defaults_to_true_unless_the_client_says_false():
    assert trusted_from_init(None) is True
    assert trusted_from_init({"settings": {}}) is True
    assert trusted_from_init({"trusted": False}) is False
    assert trusted_from_init({"trusted": True}) is True


def test_pyproject_is_merged_under_editor_settings(tmp_path: pathlib.Path):
    (tmp_path / "pyproject.toml").write_text('[tool.gradsight]\nignore = ["GS201"]\ninlay-hints = "all"\n')
    (tmp_path / "pkg").mkdir()
    resolver = ConfigResolver()
    config, problems = resolver.config_for(str(tmp_path / "pkg" / "mod.py"))
    assert problems == []
    assert not config.is_enabled("GS201") and config.inlay_hints == "all"
    settings, _ = parse_editor_settings({"inlayHints": "off"})
    resolver.update(settings)
    config, _ = resolver.config_for(str(tmp_path / "pkg" / "mod.py"))
    assert config.inlay_hints == "off" and not config.is_enabled("GS201")


def test_broken_pyproject_gives_a_problem_and_defaults(tmp_path: pathlib.Path):
    (tmp_path / "pyproject.toml").write_text("[tool.gradsight\n")
    config, problems = ConfigResolver().config_for(str(tmp_path / "a.py"))
    assert problems and "pyproject.toml" in problems[0]
    assert config.inlay_hints == "transitions"


# -- notebooks ---------------------------------------------------------------------------------------


def test_join_cells_maps_lines_both_ways():
    text, cells = join_cells([("c1", 1, "%matplotlib inline\nimport torch"), ("c2", 3, "x = torch.ones(2)\n"),
                              ("c3", 1, "!pip install x\ny = x?\nz = 1")])
    assert text.splitlines() == ["#%matplotlib inline", "import torch", "x = torch.ones(2)", "", "#!pip install x",
                                 "y = x?", "z = 1"]
    assert cells.to_cell(1) == ("c1", 1)
    assert cells.to_cell(3) == ("c2", 1)
    assert cells.to_cell(7) == ("c3", 3)
    assert cells.to_module("c3", 3) == 7
    assert cells.to_cell(99) is None


def test_ipython_help_line_is_neutralised():
    text, _ = join_cells([("c", 1, "torch.ones?\nx % 2\n")])
    assert text.splitlines()[0] == "#torch.ones?"
    assert text.splitlines()[1] == "x % 2"


# -- actions -----------------------------------------------------------------------------------------


def test_ignore_comment_is_appended_or_extended():
    assert actions.ignore_edit("y = x.numpy()", "GS201") == (14, 14, "  # gradsight: ignore[GS201]")
    assert actions.ignore_edit("y = x.numpy()   ", "GS201") == (14, 17, "  # gradsight: ignore[GS201]")
    line = "y = x.numpy()  # gradsight: ignore[GS301]"
    start, end, text = actions.ignore_edit(line, "GS201")
    assert line[:start - 1] + text + line[end - 1:] == "y = x.numpy()  # gradsight: ignore[GS301, GS201]"
    assert actions.ignore_edit(line, "GS301") is None
    assert actions.ignore_edit("y = x  # gradsight: ignore", "GS201") is None
    assert actions.ignore_edit("y = x + \\", "GS201") is None
    assert actions.ignore_edit("", "GS201") == (1, 1, "# gradsight: ignore[GS201]")


def test_minimal_replacement():
    assert actions.minimal_replacement("abc", "abc") is None
    start, end, text = actions.minimal_replacement("a.numpy()", "a.detach().numpy()")
    assert start == end and len(text) == len(".detach()")
    assert "a.numpy()"[:start] + text + "a.numpy()"[end:] == "a.detach().numpy()"
    old, new = "x = 1\r\ny = 2\r\n", "x = 1\r\nz = 2\r\n"
    start, end, text = actions.minimal_replacement(old, new)
    assert old[:start] + text + old[end:] == new
    # A changed line ending must not split the \r\n pair.
    old, new = "a\r\nb", "a\nb"
    start, end, text = actions.minimal_replacement(old, new)
    assert old[:start] + text + old[end:] == new and start <= 1 and end >= 3


def test_fix_data_round_trip_and_shift():
    fix = Fix("t", Applicability.SAFE, (Edit(8, 30, 8, 30, ".detach()"),))
    finding = Finding("p", 8, 26, 8, 38, "GS201", "numpy-on-grad-tensor", Severity.ERROR, "m", fix=fix)
    assert actions.fix_from_data(convert.diagnostic_data(finding, 3)) == fix
    assert actions.fix_from_data({"fix": {"title": 1}}) is None
    assert actions.fix_from_data(None) is None
    moved = actions.shift(finding, 5)
    assert moved.line == 3 and moved.fix.edits[0].line == 3


def test_fix_all_applies_safe_fixes_only():
    text = "a.numpy()\nb.numpy()\n"
    safe = Finding("p", 1, 1, 1, 10, "GS201", "n", Severity.ERROR, "m",
                   fix=Fix("t", Applicability.SAFE, (Edit(1, 2, 1, 2, ".detach()"),)))
    unsafe = Finding("p", 2, 1, 2, 10, "GS201", "n", Severity.ERROR, "m",
                     fix=Fix("t", Applicability.UNSAFE, (Edit(2, 2, 2, 2, ".detach()"),)))
    new, count = actions.fix_all(text, [safe, unsafe])
    assert count == 1 and new == "a.detach().numpy()\nb.numpy()\n"
    assert apply_edits(text, [])[0] == text


# -- imports -----------------------------------------------------------------------------------------


def test_module_names_and_imports():
    assert module_names("/ws/pkg/utils.py", ["/ws"]) == {"utils", "pkg.utils"}
    assert module_names("/ws/src/pkg/__init__.py", ["/ws"]) == {"pkg", "src.pkg"}
    assert module_names("/ws/notes.txt", ["/ws"]) == frozenset()
    source = "import torch.nn as nn\nfrom pkg import utils\nfrom . import helpers\nfrom .models import Net\n"
    found = imported_modules(source, "pkg")
    assert {"torch", "torch.nn", "pkg", "pkg.utils", "helpers", "pkg.helpers", "models", "pkg.models"} <= found
    assert imported_modules("def (:", None) == frozenset()


def test_import_graph_dependents():
    graph = ImportGraph()
    graph.update("a", frozenset({"pkg.utils", "utils"}), frozenset())
    graph.update("b", frozenset({"b"}), frozenset({"pkg", "pkg.utils"}))
    graph.update("c", frozenset({"c"}), frozenset({"torch"}))
    assert graph.dependents("a") == ["b"]
    assert graph.dependents("c") == []
    graph.forget("b")
    assert graph.dependents("a") == []


# -- conversions ---------------------------------------------------------------------------------------


def test_trace_findings_merge_into_static_ones():
    static = Finding("p", 3, 1, 3, 5, "GS201", "n", Severity.ERROR, "static",
                     fix=Fix("t", Applicability.SAFE, (Edit(3, 2, 3, 2, "x"),)))
    confirmed = Finding("p", 3, 1, 3, 5, "GS201", "n", Severity.ERROR, "traced", extra={"source": "trace"})
    extra = Finding("p", 9, 1, 9, 5, "GS401", "m", Severity.ERROR, "only traced", extra={"source": "trace"})
    merged = convert.merge_trace([static], [confirmed, extra])
    assert len(merged) == 2
    assert convert.is_trace(merged[0]) and merged[0].fix == static.fix and merged[0].message == "static"
    assert merged[1] is extra


def test_diagnostic_for_a_notebook_cell_view():
    text = "x = 1\ny = x.numpy()\n"
    view = View(uri="cell2", version=4, text=text, offset=10, line_count=2)
    snapshot = Snapshot(key="nb", path="/nb.ipynb", text="\n" * 10 + text, version=7, views=(view,))
    finding = Finding("/nb.ipynb", 12, 5, 12, 14, "GS201", "numpy-on-grad-tensor", Severity.ERROR, "m")
    diag = convert.diagnostic(finding, view, LineIndex(text), snapshot)
    assert (diag.range.start.line, diag.range.start.character) == (1, 4)
    assert diag.data["version"] == 4 and diag.source == "gradsight"


def test_a_confirmed_rule_from_the_tracer_marks_the_static_finding():
    static = Finding("p", 8, 26, 8, 38, "GS201", "numpy-on-grad-tensor", Severity.ERROR, "static")
    traced = Finding("p", 8, 1, 8, 47, "GS907", "numpy-on-grad-tensor-confirmed", Severity.ERROR, "ran it",
                     extra={"source": "trace"})
    elsewhere = Finding("p", 9, 1, 9, 47, "GS907", "numpy-on-grad-tensor-confirmed", Severity.ERROR, "ran it",
                        extra={"source": "trace"})
    merged = convert.merge_trace([static], [traced, elsewhere])
    assert [(f.code, f.line, convert.is_trace(f)) for f in merged] == [("GS201", 8, True), ("GS907", 9, True)]


def test_editor_defaults_do_not_hide_pyproject(tmp_path: pathlib.Path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.gradsight]\nignore = ["GS201"]\ninlay-hints = "all"\n[tool.gradsight.trace]\nmax-steps = 3\n')
    # What the VS Code extension sends when the user changed nothing but the timeout.
    vscode = {"select": [], "ignore": [], "severity": {}, "inlayHints": "transitions", "logLevel": "info",
              "trace": {"timeout": 30, "maxSteps": 20, "device": "auto", "memoryMb": 4096}}
    settings, problems = parse_editor_settings(vscode)
    assert problems == []
    resolver = ConfigResolver()
    resolver.update(settings)
    config, _ = resolver.config_for(str(tmp_path / "a.py"))
    assert not config.is_enabled("GS201") and config.inlay_hints == "all"
    assert config.trace.max_steps == 3 and config.trace.timeout == 30


def test_trace_findings_move_with_their_lines_and_go_when_edited():
    old = "a = 1\nb = x.numpy()\nc = 3\n"
    fix = Fix("t", Applicability.SAFE, (Edit(2, 6, 2, 6, ".detach()"),))
    traced = Finding("p", 2, 5, 2, 14, "GS907", "n", Severity.ERROR, "m",
                     related=(Related("p", 1, 1, "from here"), Related("/other.py", 1, 1, "elsewhere")), fix=fix,
                     extra={"source": "trace"})
    # Two lines inserted above: everything moves down by two, the other file's location stays.
    [moved] = convert.remap_findings([traced], old, "# one\n# two\n" + old)
    assert (moved.line, moved.end_line) == (4, 4)
    assert [(r.path, r.line) for r in moved.related] == [("p", 3), ("/other.py", 1)]
    assert moved.fix.edits[0].line == 4 and moved.fix.edits[0].new_text == ".detach()"
    # The related line edited: the finding stays, that location goes.
    [kept] = convert.remap_findings([traced], old, "a = 2\nb = x.numpy()\nc = 3\n")
    assert kept.line == 2 and [r.path for r in kept.related] == ["/other.py"]
    # Its own line edited: gone.
    assert convert.remap_findings([traced], old, "a = 1\nb = x.detach().numpy()\nc = 3\n") == []


def test_a_trace_finding_confirms_the_static_codes_it_lists():
    static = Finding("p", 8, 26, 8, 38, "GS404", "loss-accumulates-graph", Severity.WARNING, "static")
    traced = Finding("p", 8, 1, 8, 47, "GS905", "graph-kept-alive", Severity.WARNING, "ran it",
                     extra={"source": "trace", "confirms": ["GS404"]})
    unrelated = Finding("p", 8, 1, 8, 47, "GS906", "other", Severity.WARNING, "ran it",
                        extra={"source": "trace", "confirms": ["GS201"]})
    merged = convert.merge_trace([static], [traced, unrelated])
    assert [(f.code, convert.is_trace(f)) for f in merged] == [("GS404", True), ("GS906", True)]
