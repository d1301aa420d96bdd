"""The parent side's pure parts: text formatting, exit codes, argument checks (no torch needed)."""

from __future__ import annotations

import argparse

from gradsight.trace import TRACE_ERROR, exit_code, format_text, relativize, run_trace
from gradsight.trace import cli as trace_cli

FINDING = {
    "path": "/p/train.py", "line": 14, "column": 5, "end_line": 14, "end_column": 40, "code": "GS902",
    "name": "backward-through-freed-graph-confirmed", "severity": "error",
    "message": "`out, hidden = rnn(chunk, hidden)` at line 14 feeds `hidden` ...",
    "related": [{"path": "/p/train.py", "line": 17, "column": 5, "message": "first backward"}],
    "fix": None, "source": "trace",
}


def result(**kw):
    base = {"findings": [], "error": None, "events": [], "device": "cpu", "steps": 3, "stopped": None}
    base.update(kw)
    return base


def test_exit_codes():
    assert exit_code(result()) == 0
    assert exit_code(result(stopped="max-steps")) == 0
    assert exit_code(result(findings=[FINDING])) == 1
    assert exit_code(result(error={"type": "RuntimeError", "message": "x", "line": 3})) == 1
    assert exit_code(result(stopped="timeout")) == 2
    assert exit_code(result(findings=[FINDING], stopped="timeout")) == 1
    assert exit_code(result(error={"type": TRACE_ERROR, "message": "no torch", "line": None})) == 2


def test_format_text():
    text = format_text(result(findings=[FINDING], stopped="max-steps",
                              error={"type": "RuntimeError", "message": "Trying to backward", "line": 17}))
    lines = text.splitlines()
    # The layout of `gradsight check`: path:line:col: CODE severity: message, then indented notes.
    assert lines[0] == ("/p/train.py:14:5: GS902 error: "
                        "`out, hidden = rnn(chunk, hidden)` at line 14 feeds `hidden` ...")
    assert lines[1] == "    /p/train.py:17:5: note: first backward"
    assert lines[2] == "the script raised RuntimeError at line 17: Trying to backward"
    assert lines[3].startswith("traced on cpu: 3 step(s), 1 finding;")
    assert "gradsight trace: no torch" in format_text(result(error={"type": TRACE_ERROR, "message": "no torch",
                                                                     "line": None}))


def test_format_text_shows_the_scripts_output_and_traceback_once():
    tb = 'Traceback (most recent call last):\n  File "train.py", line 17, in <module>\nRuntimeError: boom\n'
    text = format_text(result(stdout="epoch 0 loss 1.0\nepoch 1 loss 0.9", stderr="a warning\n" + tb,
                              traceback=tb, error={"type": "RuntimeError", "message": "boom", "line": 17}))
    lines = text.splitlines()
    assert lines[:2] == ["--- the script's last output (stdout) ---", "epoch 0 loss 1.0"]
    assert "--- the script's last output (stderr) ---" in lines and "a warning" in lines
    assert text.count("RuntimeError: boom") == 1  # the traceback printed once, not again in stderr
    assert lines.index("--- the script's traceback ---") < lines.index("the script raised RuntimeError at line 17: boom")


def test_findings_in_check_order_and_relative_paths(tmp_path):
    a = dict(FINDING, path=str(tmp_path / "b.py"), line=3, column=1, code="GS905",
             related=[{"path": str(tmp_path / "b.py"), "line": 1, "column": 1, "message": "m"}])
    b = dict(FINDING, path=str(tmp_path / "a.py"), line=9, column=4, code="GS901")
    c = dict(FINDING, path=str(tmp_path / "a.py"), line=9, column=2, code="GS903")
    out = relativize(result(findings=[a, b, c], traceback=f'  File "{tmp_path}/a.py", line 9\n'), str(tmp_path))
    assert [(f["path"], f["line"], f["column"], f["code"]) for f in out["findings"]] == [
        ("a.py", 9, 2, "GS903"), ("a.py", 9, 4, "GS901"), ("b.py", 3, 1, "GS905")]
    assert out["findings"][2]["related"][0]["path"] == "b.py"
    assert out["traceback"] == '  File "a.py", line 9\n'
    # Files outside the base keep their absolute path.
    other = relativize(result(findings=[dict(FINDING)]), str(tmp_path))
    assert other["findings"][0]["path"] == "/p/train.py"


def test_missing_file_and_bad_device(tmp_path):
    r = run_trace(str(tmp_path / "nope.py"))
    assert r["error"]["type"] == TRACE_ERROR and exit_code(r) == 2
    r = run_trace(str(tmp_path / "nope.py"), device="tpu")
    assert r["error"]["type"] == TRACE_ERROR


def test_arguments():
    parser = argparse.ArgumentParser()
    trace_cli.add_arguments(parser)
    args = parser.parse_args(["f.py", "--function", "main", "--device", "cpu", "--max-steps", "5",
                              "--timeout", "9.5", "--memory-mb", "512", "--output-format", "json"])
    assert (args.file, args.function, args.device, args.max_steps, args.timeout, args.memory_mb,
            args.output_format) == ("f.py", "main", "cpu", 5, 9.5, 512, "json")
    defaults = parser.parse_args(["f.py"])
    assert (defaults.device, defaults.max_steps, defaults.timeout, defaults.memory_mb,
            defaults.output_format, defaults.python) == ("auto", 20, 60.0, 4096, "text", None)


def test_output_tail_splits_scripts_at_the_marker_even_across_reads():
    import os
    import threading

    from gradsight.trace import SCRIPT_MARK, _Tail

    r, w = os.pipe()
    os.close(w)  # an empty pipe: the reader thread ends at once; the test feeds the tail by hand
    with os.fdopen(r, "rb") as stream:
        tail = _Tail(stream, [0], threading.Lock())
        tail.thread.join(5)
    data = b"first script\n" + SCRIPT_MARK + b"second\nscript\n" + SCRIPT_MARK + b"third"
    for i in range(0, len(data), 7):  # a marker cut in two by a read boundary
        tail._add(data[i:i + 7])
    assert [tail.last_lines(i) for i in range(3)] == ["first script", "second\nscript", "third"]
    assert tail.last_lines(5) == ""
