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
