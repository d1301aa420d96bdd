"""The trace codes' rule pages (gradsight.trace.codes.TRACE_RULES), which `gradsight rule GS902` and
`gradsight rules` show: every code the runner can emit has one, with the static rules' sections."""

from __future__ import annotations

import re
import subprocess
import sys

from gradsight.findings import Severity
from gradsight.trace import codes
from gradsight.trace.codes import TRACE_RULES

from trace_helpers import ROOT

SECTIONS = ["## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety",
            "## References"]


def test_every_runner_code_has_a_page():
    runner = (ROOT / "server" / "gradsight" / "trace" / "runner.py").read_text(encoding="utf-8")
    emitted = set(re.findall(r'"(GS9\d\d)"', runner))
    assert emitted, "the runner names its codes"
    assert emitted <= {r.code for r in TRACE_RULES}
    names = dict(re.findall(r'"(GS9\d\d)": "([a-z0-9-]+)"', runner))
    for rule in TRACE_RULES:
        if rule.code in names:
            assert names[rule.code] == rule.name, rule.code


def test_pages_have_the_static_rules_sections():
    codes_seen = set()
    for rule in TRACE_RULES:
        assert re.fullmatch(r"GS9\d\d", rule.code) and rule.code not in codes_seen
        codes_seen.add(rule.code)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
        assert isinstance(rule.severity, Severity)
        assert rule.summary.endswith(".") and rule.summary.count(". ") == 0
        page = rule.docs_markdown()
        assert page.startswith(f"# {rule.code} `{rule.name}`")
        positions = [page.index(s) for s in SECTIONS]
        assert positions == sorted(positions), rule.code
        for c in rule.confirms:
            assert re.fullmatch(r"GS[0-8]\d\d", c)
    assert codes.trace_rule("gs902").name == "backward-through-freed-graph-confirmed"


def test_codes_module_imports_neither_torch_nor_the_runner():
    code = ("import sys\nimport gradsight.trace.codes\n"
            "print(sorted(m for m in sys.modules if m == 'torch' or m.endswith('runner')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_the_advice_pages_keep_retain_graph_honest():
    page = codes.BY_CODE["GS902"].docs_markdown()
    # retain_graph is named only together with the situation it is right for.
    assert "only right when two backward passes through the same graph are intended" in page
    assert "generator" in page


def test_page_generator_writes_one_page_per_code(tmp_path):
    written = codes.write_pages(str(tmp_path))
    assert sorted(p.rsplit("/", 1)[-1] for p in written) == sorted(f"{r.code}.md" for r in TRACE_RULES)
    assert (tmp_path / "GS908.md").read_text(encoding="utf-8") == codes.BY_CODE["GS908"].docs_markdown()


def test_only_codes_whose_findings_carry_fixes_say_so():
    assert [r.code for r in TRACE_RULES if r.can_fix()] == ["GS902"]
    assert "fix available: Yes (unsafe)" in codes.BY_CODE["GS902"].docs_markdown()
    assert "fix available: No" in codes.BY_CODE["GS903"].docs_markdown()
