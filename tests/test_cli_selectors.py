"""Unknown rule selectors and codes (ruff's conventions): errors with exit 2 in flags and configuration,
warnings for unknown codes in suppression comments; trace codes count as known codes."""

import json
import re

import pytest

from gradsight.cli import main

BUG = "import torch\nx = torch.randn(3, requires_grad=True)\ng = torch.sigmoid(x)\ng *= 2.0\ng.sum().backward()\n"
NONSCALAR = "import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ny.backward()\n"


def cli(capsys, *args):
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def proj(tmp_path, monkeypatch):
    (tmp_path / "bug.py").write_text(BUG)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("flag", ["--select", "--ignore", "--extend-select"])
@pytest.mark.parametrize("selector", ["GS7", "GS40 2", "E501", "GS3011"])
def test_unknown_selector_in_flags_exits_2(proj, capsys, flag, selector):
    rc, out, err = cli(capsys, "check", "--no-cache", flag, selector, "bug.py")
    assert rc == 2
    assert "unknown rule selector" in err and selector in err and flag in err
    assert out == ""


@pytest.mark.parametrize("selector", ["GS3", "GS301", "GS", "ALL", "gs301"])
def test_known_selectors_and_prefixes_are_accepted(proj, capsys, selector):
    rc, _, err = cli(capsys, "check", "--no-cache", "--select", selector, "bug.py")
    assert "unknown rule selector" not in err
    assert rc in (0, 1)


@pytest.mark.parametrize("selector", ["GS9", "GS90", "GS902"])
def test_selecting_only_trace_codes_in_check_exits_2(proj, capsys, selector):
    # `check` never reports trace codes: selecting only those would check nothing, so it is an error (issue 15:
    # `gradsight check --select GS9` exits 2), with a message saying where those codes come from.
    rc, out, err = cli(capsys, "check", "--no-cache", "--select", selector, "bug.py")
    assert rc == 2 and out == ""
    assert "unknown rule selector" in err and "gradsight trace" in err


def test_trace_codes_may_be_ignored(proj, capsys):
    rc, _, err = cli(capsys, "check", "--no-cache", "--ignore", "GS902", "bug.py")
    assert "unknown rule selector" not in err and rc in (0, 1)


@pytest.mark.parametrize("key", ["select", "ignore", "extend-select"])
def test_unknown_selector_in_pyproject_exits_2(proj, capsys, key):
    (proj / "pyproject.toml").write_text(f'[tool.gradsight]\n{key} = ["GS40 2"]\n')
    rc, out, err = cli(capsys, "check", "--no-cache", "bug.py")
    assert rc == 2
    assert "unknown rule selector: `GS40 2`" in err and "pyproject.toml" in err
    assert "GS301" not in out


def test_extend_select_adds_to_select(proj, capsys):
    (proj / "ns.py").write_text(NONSCALAR)
    rc, out, _ = cli(capsys, "check", "--no-cache", "--output-format", "json", "--select", "GS301",
                     "--extend-select", "GS403", "bug.py", "ns.py")
    assert rc == 1
    assert {f["code"] for f in json.loads(out)} == {"GS301", "GS403"}
    # Without a select, extend-select must not narrow "every rule" down to its own codes.
    rc, out, _ = cli(capsys, "check", "--no-cache", "--output-format", "json", "--extend-select", "GS403",
                     "bug.py", "ns.py")
    assert {f["code"] for f in json.loads(out)} == {"GS301", "GS403"}


def test_extend_select_in_pyproject(proj, capsys):
    (proj / "ns.py").write_text(NONSCALAR)
    (proj / "pyproject.toml").write_text('[tool.gradsight]\nselect = ["GS301"]\nextend-select = ["GS403"]\n')
    rc, out, err = cli(capsys, "check", "--no-cache", "--output-format", "json", "bug.py", "ns.py")
    assert rc == 1 and "unknown gradsight setting" not in err
    assert {f["code"] for f in json.loads(out)} == {"GS301", "GS403"}


def test_explicit_config_missing_or_unparseable_exits_2(proj, capsys):
    rc, _, err = cli(capsys, "check", "--no-cache", "--config", "nope.toml", "bug.py")
    assert rc == 2 and "nope.toml" in err and "no such configuration file" in err
    (proj / "broken.toml").write_text("[tool.gradsight\nselect = [")
    rc, _, err = cli(capsys, "check", "--no-cache", "--config", "broken.toml", "bug.py")
    assert rc == 2 and "cannot parse" in err and "broken.toml" in err


def test_explicit_config_is_used(proj, capsys):
    (proj / "other.toml").write_text('[tool.gradsight]\nignore = ["GS301"]\n')
    rc, out, _ = cli(capsys, "check", "--no-cache", "--config", "other.toml", "bug.py")
    assert rc == 0 and "All checks passed" in out


def test_unknown_code_in_suppression_comment_warns_with_file_and_line(proj, capsys):
    (proj / "s.py").write_text(BUG.replace("g *= 2.0", "g *= 2.0  # gradsight: ignore[GS301, GS777]"))
    rc, out, err = cli(capsys, "check", "--no-cache", "s.py")
    # The valid code still suppresses and the run does not fail because of the unknown one (ruff's behaviour).
    assert rc == 0 and "All checks passed" in out
    assert re.search(r"warning: Invalid rule code provided to `# gradsight: ignore` at s\.py:4: GS777", err)
    assert "GS301" not in err


def test_known_suppression_codes_do_not_warn(proj, capsys):
    (proj / "s.py").write_text(BUG.replace("g *= 2.0", "g *= 2.0  # gradsight: ignore[GS3, GS902]"))
    rc, _, err = cli(capsys, "check", "--no-cache", "s.py")
    assert rc == 0 and "Invalid rule code" not in err


def test_rules_lists_trace_codes_with_aligned_columns(capsys):
    rc, out, _ = cli(capsys, "rules")
    assert rc == 0
    lines = out.splitlines()
    codes = [line.split()[0] for line in lines]
    assert "GS301" in codes and "GS902" in codes and codes == sorted(codes)
    # Every row puts the severity and the summary at the same column: widths come from the data.
    sev_cols = {re.search(r"\s(error|warning|information|hint)\s", line).start(1) for line in lines}
    assert len(sev_cols) == 1
    name_cols = {line.index(line.split()[1]) for line in lines}
    assert len(name_cols) == 1
    rc, out, _ = cli(capsys, "rules", "--output-format", "json")
    listing = {r["code"]: r for r in json.loads(out)}
    assert listing["GS902"]["name"] == "backward-through-freed-graph-confirmed"
    from gradsight.trace.codes import TRACE_RULES

    trace = {r.code: r for r in TRACE_RULES}
    assert listing["GS902"]["fix"] is bool(trace["GS902"].can_fix())
    assert listing["GS902"]["summary"] == trace["GS902"].summary


def test_rule_shows_trace_code_page(capsys):
    rc, out, _ = cli(capsys, "rule", "GS902")
    assert rc == 0 and out.startswith("# GS902 `backward-through-freed-graph-confirmed`")
    assert "## Why is this bad?" in out
    rc, out, _ = cli(capsys, "rule", "backward-through-freed-graph-confirmed")
    assert rc == 0 and "# GS902" in out
    rc, _, err = cli(capsys, "rule", "GS999")
    assert rc == 2 and "GS999" in err
