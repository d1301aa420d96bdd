import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_rule_docs_are_fresh():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr + "\nrun: python scripts/gen_docs.py"


def test_every_rule_page_has_all_sections():
    from gradsight.rules import all_rules

    for rule in all_rules():
        text = (ROOT / "docs" / "rules" / f"{rule.code}.md").read_text(encoding="utf-8")
        for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety",
                        "## References"):
            assert heading in text, (rule.code, heading)


def test_fix_column_and_fix_safety_follow_the_fixes_really_offered():
    """The README's fix column comes from the fixes each rule offers on its INVALID examples; the rule page's
    "Fix safety" prose must name every applicability that really occurs, and claim no fix when none does."""
    import re

    sys.path.insert(0, str(ROOT / "scripts"))
    from gen_docs import fix_column, fix_kinds

    from gradsight.rules import all_rules

    readme = (ROOT / "docs" / "rules" / "README.md").read_text(encoding="utf-8")
    for rule in all_rules():
        kinds = fix_kinds(rule)
        prose = rule.fix_safety.lower()
        assert bool(kinds) == rule.can_fix(), rule.code
        if "unsafe" in kinds:
            assert "unsafe" in prose, rule.code
        if "safe" in kinds:
            assert re.search(r"(?<!un)safe", prose), rule.code
        if not kinds:
            assert "no automatic fix" in prose, rule.code
        row = next(line for line in readme.splitlines() if line.startswith(f"| [{rule.code}]"))
        assert row.split(" | ")[3] == fix_column(rule), (rule.code, row)
