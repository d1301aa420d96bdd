"""The reporting flags of `gradsight check`: --diff, --show-fixes, --statistics, the hidden-fix summary,
--quiet, stdin input, skipped files, --color with code frames, and progress on a terminal."""

import io
import json
import os
import pathlib
import pty
import subprocess
import sys

import pytest

from gradsight.cli import main

BUG = "import torch\nx = torch.randn(3, requires_grad=True)\ng = torch.sigmoid(x)\ng *= 2.0\ng.sum().backward()\n"
# GS403 (non-scalar backward), twice; one of them has an unsafe fix: `y.backward()` -> `y.sum().backward()`.
UNSAFE = "import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ny.backward()\n"
CLEAN = "import torch\nx = torch.randn(3, requires_grad=True)\n(x * 2).sum().backward()\n"


def cli(capsys, *args):
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def proj(tmp_path, monkeypatch):
    (tmp_path / "bug.py").write_text(BUG)
    (tmp_path / "unsafe.py").write_text(UNSAFE)
    (tmp_path / "clean.py").write_text(CLEAN)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    return tmp_path


def test_diff_prints_fixes_and_writes_nothing(proj, capsys):
    rc, out, err = cli(capsys, "check", "--no-cache", "--diff", "bug.py")
    assert rc == 1
    assert "--- bug.py\n+++ bug.py\n" in out
    assert "-g *= 2.0\n+g = g * 2.0\n" in out
    assert "Would fix 1 error." in err
    assert (proj / "bug.py").read_text() == BUG
    # Nothing to fix (only an unsafe fix, not enabled): no diff, exit 0, like ruff.
    rc, out, _ = cli(capsys, "check", "--no-cache", "--diff", "unsafe.py")
    assert rc == 0 and out == ""
    rc, out, _ = cli(capsys, "check", "--no-cache", "--diff", "--unsafe-fixes", "unsafe.py")
    assert rc == 1 and "+y.sum().backward()" in out
    assert (proj / "unsafe.py").read_text() == UNSAFE


def test_hidden_unsafe_fixes_are_counted_in_the_summary(proj, capsys):
    rc, out, _ = cli(capsys, "check", "--no-cache", "bug.py", "unsafe.py")
    assert rc == 1
    assert "[*] 1 fixable with the `--fix` option (1 hidden fix can be enabled with the `--unsafe-fixes` option)." in out
    rc, out, _ = cli(capsys, "check", "--no-cache", "unsafe.py")
    assert "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)." in out
    rc, out, _ = cli(capsys, "check", "--no-cache", "--unsafe-fixes", "unsafe.py")
    assert "hidden" not in out and "[*] 1 fixable with the `--fix` option." in out


def test_show_fixes_lists_what_was_fixed(proj, capsys):
    rc, out, _ = cli(capsys, "check", "--no-cache", "--fix", "--show-fixes", "bug.py")
    assert rc == 0
    assert "Fixed 1 problem:\n- bug.py:\n    1 × GS301 (inplace-on-saved-tensor)\n" in out
    assert "g = g * 2.0" in (proj / "bug.py").read_text()


def test_statistics_counts_per_code(proj, capsys):
    (proj / "bug2.py").write_text(BUG)
    rc, out, _ = cli(capsys, "check", "--no-cache", "--statistics", "bug.py", "bug2.py", "unsafe.py")
    assert rc == 1
    assert out.splitlines() == ["2  GS301  [*] inplace-on-saved-tensor", "2  GS403  [ ] non-scalar-backward"]
    rc, out, _ = cli(capsys, "check", "--no-cache", "--statistics", "--output-format", "json", "bug.py", "bug2.py")
    assert json.loads(out) == [{"code": "GS301", "name": "inplace-on-saved-tensor", "count": 2, "fixable": True}]


def test_quiet_prints_findings_only(proj, capsys):
    rc, out, err = cli(capsys, "check", "--no-cache", "--quiet", "bug.py", "clean.py")
    assert rc == 1
    assert out.startswith("bug.py:4:1: GS301") and "Found" not in out and "fixable" not in out
    rc, out, err = cli(capsys, "check", "--no-cache", "-q", "clean.py")
    assert rc == 0 and out == "" and err == ""


def _stdin(monkeypatch, text: str):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))


def test_stdin_is_checked_under_its_filename(proj, capsys, monkeypatch):
    _stdin(monkeypatch, BUG)
    rc, out, _ = cli(capsys, "check", "--no-cache", "--output-format", "json", "-", "--stdin-filename", "pkg/model.py")
    assert rc == 1
    assert [(f["path"], f["code"], f["line"]) for f in json.loads(out)] == [("pkg/model.py", "GS301", 4)]


def test_stdin_fix_prints_the_fixed_source(proj, capsys, monkeypatch):
    _stdin(monkeypatch, BUG)
    rc, out, err = cli(capsys, "check", "--no-cache", "--fix", "-", "--stdin-filename", "m.py")
    assert rc == 0
    assert out == BUG.replace("g *= 2.0", "g = g * 2.0")
    assert "GS301" not in out


def test_skipped_files_are_reported_and_not_counted(proj, capsys):
    (proj / "clean.py").unlink()
    (proj / "bug.py").unlink()
    (proj / "unsafe.py").unlink()
    (proj / "ok.py").write_text(CLEAN)
    (proj / "bin.py").write_bytes(b"\x00\x01\x02binary")
    (proj / "bad.py").write_bytes(b"x = '\xff\xfe'\n")
    rc, out, err = cli(capsys, "check", "--no-cache", ".")
    assert rc == 0
    assert "All checks passed (1 file, 2 skipped)." in out
    assert "bin.py: looks binary (NUL bytes); skipped" in err and "bad.py" in err and "skipped" in err


def test_too_large_file_is_skipped(proj, capsys, monkeypatch):
    import gradsight.cli as cli_mod

    monkeypatch.setattr(cli_mod, "_max_chars", lambda: 100)
    (proj / "big.py").write_text("x = 1\n" * 50)
    rc, out, err = cli(capsys, "check", "--no-cache", "big.py", "clean.py")
    assert rc == 0 and "All checks passed (1 file, 1 skipped)." in out
    assert "big.py: 300 characters is over gradsight's limit of 100; skipped" in err


def test_color_always_adds_ansi_and_a_code_frame(proj, capsys):
    rc, out, _ = cli(capsys, "check", "--no-cache", "--color", "always", "bug.py")
    assert rc == 1 and "\x1b[" in out
    plain = out.replace("\x1b[0m", "")
    import re
    plain = re.sub(r"\x1b\[[0-9;]*m", "", plain)
    assert "4 | g *= 2.0\n  | ^^^^^^^^ GS301\n" in plain
    assert "3 | g = torch.sigmoid(x)\n" in plain


def test_color_never_and_no_color(proj, capsys, monkeypatch):
    rc, out, _ = cli(capsys, "check", "--no-cache", "--color", "never", "bug.py")
    assert "\x1b[" not in out and " | " not in out
    monkeypatch.setenv("FORCE_COLOR", "1")
    rc, out, _ = cli(capsys, "check", "--no-cache", "bug.py")
    assert "\x1b[" in out
    monkeypatch.setenv("NO_COLOR", "1")
    rc, out, _ = cli(capsys, "check", "--no-cache", "bug.py")
    assert "\x1b[" not in out


def _run_with_tty_stderr(args, cwd):
    """Run the CLI with stderr on a pseudo-terminal (stdout a pipe); returns (rc, stdout, stderr)."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    proc = subprocess.Popen([sys.executable, "-m", "gradsight", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    out = proc.stdout.read().decode()
    rc = proc.wait(timeout=300)
    os.close(master)
    return rc, out, b"".join(chunks).decode(errors="replace")


def test_progress_on_a_terminal_for_many_files(tmp_path):
    for i in range(45):
        (tmp_path / f"m{i:02}.py").write_text("x = 1\n")
    rc, out, err = _run_with_tty_stderr(["check", "--no-cache", "--jobs", "1", "."], tmp_path)
    assert rc == 0 and "All checks passed (45 files)." in out
    assert "checking 0/45 files" in err and "checked 45/45 files" in err
    # Not a terminal: no progress.
    proc = subprocess.run([sys.executable, "-m", "gradsight", "check", "--no-cache", "--jobs", "1", "."],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "checking" not in proc.stderr
