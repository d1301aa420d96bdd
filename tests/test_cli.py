"""The CLI's fixed contracts: JSON keys, exit codes, output formats, fixes, configuration, bad input."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

BUG = "import torch\nx = torch.randn(3, requires_grad=True)\ng = torch.sigmoid(x)\ng *= 2.0\ng.sum().backward()\n"
CLEAN = "import torch\nx = torch.randn(3, requires_grad=True)\n(x * 2).sum().backward()\n"
KEYS = {"path", "line", "column", "end_line", "end_column", "code", "name", "severity", "message", "related", "fix"}


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "gradsight", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


@pytest.fixture
def proj(tmp_path):
    (tmp_path / "bug.py").write_text(BUG)
    (tmp_path / "clean.py").write_text(CLEAN)
    return tmp_path


def test_json_contract_and_exit_code(proj):
    proc = run("check", "--no-cache", "--output-format", "json", str(proj / "bug.py"))
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert isinstance(data, list) and len(data) == 1
    f = data[0]
    assert KEYS <= set(f)
    assert f["code"] == "GS301" and f["line"] == 4 and f["column"] == 1 and f["severity"] == "warning"
    assert f["related"][0] == {"path": str(proj / "bug.py"), "line": 3, "column": 5,
                               "message": "saved for backward by `torch.sigmoid`"}
    assert f["fix"]["applicability"] == "safe"
    assert f["fix"]["edits"] == [{"line": 4, "column": 1, "end_line": 4, "end_column": 9, "new_text": "g = g * 2.0"}]


def test_clean_exit_zero(proj):
    proc = run("check", "--no-cache", str(proj / "clean.py"))
    assert proc.returncode == 0, proc.stdout
    assert "All checks passed" in proc.stdout


def test_directory_is_recursive_and_exit_zero_flag(proj):
    sub = proj / "pkg" / "deep"
    sub.mkdir(parents=True)
    (sub / "more.py").write_text(BUG)
    proc = run("check", "--no-cache", "--output-format", "json", str(proj))
    assert proc.returncode == 1
    assert sorted(pathlib.Path(f["path"]).name for f in json.loads(proc.stdout)) == ["bug.py", "more.py"]
    assert run("check", "--no-cache", "--exit-zero", str(proj)).returncode == 0


def test_select_and_ignore(proj):
    assert run("check", "--no-cache", "--ignore", "GS301", str(proj / "bug.py")).returncode == 0
    assert run("check", "--no-cache", "--select", "GS4", str(proj / "bug.py")).returncode == 0
    assert run("check", "--no-cache", "--select", "GS3", str(proj / "bug.py")).returncode == 1


def test_pyproject_settings_and_exclude(proj):
    (proj / "pyproject.toml").write_text('[tool.gradsight]\nignore = ["GS301"]\nexclude = ["skipme"]\n')
    (proj / "skipme").mkdir()
    (proj / "skipme" / "x.py").write_text("import torch\nw = torch.ones(2, requires_grad=True)\nw.add_(1)\n")
    proc = run("check", "--no-cache", ".", cwd=proj)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_bad_pyproject_falls_back_with_message(proj):
    (proj / "pyproject.toml").write_text('[tool.gradsight]\nselect = 3\ninlay-hints = "loud"\n')
    proc = run("check", "--no-cache", "bug.py", cwd=proj)
    assert proc.returncode == 1
    assert "select" in proc.stderr and "inlay-hints" in proc.stderr
    (proj / "pyproject.toml").write_text('[tool.gradsight\nbroken')
    proc = run("check", "--no-cache", "bug.py", cwd=proj)
    assert proc.returncode == 1 and "cannot read [tool.gradsight]" in proc.stderr


def test_suppression_comment(proj):
    (proj / "s.py").write_text(BUG.replace("g *= 2.0", "g *= 2.0  # gradsight: ignore[GS301]"))
    assert run("check", "--no-cache", str(proj / "s.py")).returncode == 0
    (proj / "s.py").write_text(BUG.replace("g *= 2.0", "g *= 2.0  # gradsight: ignore[GS4]"))
    assert run("check", "--no-cache", str(proj / "s.py")).returncode == 1


def test_fix_applies_safe_fixes(proj):
    proc = run("check", "--no-cache", "--fix", str(proj / "bug.py"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "g = g * 2.0" in (proj / "bug.py").read_text()


def test_fix_leaves_unsafe_fixes_alone(proj):
    src = "import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ny.backward()\n"
    (proj / "ns.py").write_text(src)
    assert run("check", "--no-cache", "--fix", str(proj / "ns.py")).returncode == 1
    assert (proj / "ns.py").read_text() == src
    assert run("check", "--no-cache", "--fix", "--unsafe-fixes", str(proj / "ns.py")).returncode == 0
    assert "y.sum().backward()" in (proj / "ns.py").read_text()


def test_sarif_and_github_formats(proj):
    sarif = json.loads(run("check", "--no-cache", "--output-format", "sarif", str(proj / "bug.py")).stdout)
    result = sarif["runs"][0]["results"][0]
    assert result["ruleId"] == "GS301" and result["locations"][0]["physicalLocation"]["region"]["startLine"] == 4
    gh = run("check", "--no-cache", "--output-format", "github", str(proj / "bug.py")).stdout
    assert gh.startswith("::warning title=gradsight GS301,file=") and ",line=4," in gh


def test_syntax_error_mid_typing_still_analyses_the_prefix(tmp_path):
    (tmp_path / "t.py").write_text(BUG + "loss = model(\n")
    proc = run("check", "--no-cache", "--output-format", "json", str(tmp_path / "t.py"))
    codes = sorted(f["code"] for f in json.loads(proc.stdout))
    assert codes == ["GS001", "GS301"]


def test_bad_files_give_messages_not_tracebacks(tmp_path):
    (tmp_path / "bin.py").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "latin.py").write_bytes("# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n".encode("latin-1"))
    (tmp_path / "bad.py").write_bytes(b"x = '\xff\xfe'\n")
    (tmp_path / "deep.py").write_text("x = " + "(" * 1000 + "1" + ")" * 1000 + "\n")
    proc = run("check", "--no-cache", str(tmp_path))
    assert "Traceback" not in proc.stderr
    assert "bin.py" in proc.stderr and "bad.py" in proc.stderr and "deep.py" in proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr
    missing = run("check", str(tmp_path / "nope.py"))
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_usage_error_exit_code():
    assert run("check", "--output-format", "xml").returncode == 2
    assert run("frobnicate").returncode == 2


def test_rule_and_rules_commands():
    proc = run("rule", "GS301")
    assert proc.returncode == 0 and "## Why is this bad?" in proc.stdout and "inplace-on-saved-tensor" in proc.stdout
    assert run("rule", "GS999").returncode == 2
    listing = json.loads(run("rules", "--output-format", "json").stdout)
    assert {"GS301", "GS401", "GS402"} <= {r["code"] for r in listing}


def test_cache_hit_gives_same_result(proj):
    first = run("check", "--output-format", "json", "bug.py", cwd=proj)
    assert (proj / ".gradsight_cache").is_dir()
    second = run("check", "--output-format", "json", "bug.py", cwd=proj)
    assert json.loads(first.stdout) == json.loads(second.stdout)
    (proj / "bug.py").write_text(CLEAN)
    assert run("check", "bug.py", cwd=proj).returncode == 0


def test_parallel_workers_match_serial(tmp_path):
    for i in range(30):
        (tmp_path / f"f{i}.py").write_text(BUG if i % 3 == 0 else CLEAN)
    par = run("check", "--no-cache", "--output-format", "json", "-j", "2", str(tmp_path))
    ser = run("check", "--no-cache", "--output-format", "json", "-j", "1", str(tmp_path))
    assert json.loads(par.stdout) == json.loads(ser.stdout) and len(json.loads(par.stdout)) == 10


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read anything")
def test_unreadable_file(tmp_path):
    p = tmp_path / "secret.py"
    p.write_text(BUG)
    p.chmod(0)
    proc = run("check", "--no-cache", str(p))
    assert "cannot read" in proc.stderr


def test_project_root_names_the_project_and_ignores_settings_above_it(tmp_path):
    # A checkout nested in another project's folder: `--project-root` says where the user's project is, so the
    # outer pyproject.toml (which ignores GS301 here) is not read for it.
    (tmp_path / "pyproject.toml").write_text("[tool.gradsight]\nignore = [\"GS301\"]\n")
    inner = tmp_path / "checkout"
    inner.mkdir()
    (inner / "bug.py").write_text(BUG)
    plain = run("check", "--no-cache", "--output-format", "json", "--exit-zero", str(inner / "bug.py"))
    assert json.loads(plain.stdout) == []
    rooted = run("check", "--no-cache", "--output-format", "json", "--exit-zero", "--project-root", str(inner),
                 str(inner / "bug.py"))
    assert [f["code"] for f in json.loads(rooted.stdout)] == ["GS301"]


def test_only_the_program_freezes_its_imports(proj, capsys):
    # `gradsight check` as the program moves what it imported out of the collector's way (`gc.freeze`); a caller's
    # `main([...])` (a test, an embedder) must not freeze the caller's objects.
    import gc

    from gradsight.cli import main

    before = gc.get_freeze_count()
    assert main(["check", "--no-cache", str(proj / "bug.py")]) == 1
    assert gc.get_freeze_count() == before
    code = ("import gc, sys\nfrom gradsight.cli import main\nsys.argv[1:] = ['check', '--no-cache', sys.argv[1]]\n"
            "code = main()\nprint(code, gc.get_freeze_count() > 0)")
    out = subprocess.run([sys.executable, "-c", code, str(proj / "bug.py")], capture_output=True, text=True,
                         timeout=120).stdout.split()
    assert out[-2:] == ["1", "True"]
