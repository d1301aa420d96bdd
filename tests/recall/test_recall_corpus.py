"""The recall corpus is true: every buggy case fails (or is silently wrong) under real PyTorch exactly as
tests/recall/manifest.json says, and every `_ok` counterpart runs cleanly.

All cases run in ONE child process (importing torch once costs more than the whole corpus). Each case is
exec'd in a fresh namespace under its real path, so traceback line numbers are the file's own.
"""

import json
import pathlib

import pytest
from torch_runner import run_scripts

pytestmark = pytest.mark.torch

HERE = pathlib.Path(__file__).resolve().parent
MANIFEST = json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))



def _probe(case):
    kind, _, rest = case["runtime"].partition(": ")
    return rest if kind == "silent" else None


@pytest.fixture(scope="module")
def results():
    jobs = []
    for case in MANIFEST:
        jobs.append((str(HERE / case["file"]), _probe(case)))
        # The probe also runs on the counterpart: a probe that is true there would not tell the bug apart.
        jobs.append((str(HERE / case["ok_file"]), _probe(case)))
    got = run_scripts(jobs, cwd=str(HERE), timeout=300)
    return [(case, got[2 * i], got[2 * i + 1]) for i, case in enumerate(MANIFEST)]


def test_manifest_is_well_formed():
    assert len(MANIFEST) >= 40
    files = set()
    for case in MANIFEST:
        assert set(case) == {"file", "ok_file", "pattern", "source", "runtime", "root_cause_lines", "raise_line"}, case
        assert case["ok_file"] == case["file"].replace(".py", "_ok.py")
        assert (HERE / case["file"]).is_file() and (HERE / case["ok_file"]).is_file(), case["file"]
        assert case["runtime"].startswith(("raises: ", "silent: ")), case["file"]
        assert case["source"].startswith("http"), case["file"]
        n_lines = len((HERE / case["file"]).read_text(encoding="utf-8").splitlines())
        assert case["root_cause_lines"] and all(1 <= l <= n_lines for l in case["root_cause_lines"]), case["file"]
        assert (case["raise_line"] is None) == case["runtime"].startswith("silent: "), case["file"]
        if case["raise_line"] is not None:
            assert case["raise_line"] in case["root_cause_lines"], case["file"]
        files.add(case["file"])
    on_disk = {f"cases/{p.name}" for p in (HERE / "cases").glob("*.py") if not p.stem.endswith("_ok")}
    assert on_disk == files, on_disk ^ files


def test_buggy_cases_fail_as_documented(results):
    problems = []
    for case, bug, _ in results:
        kind, _, expect = case["runtime"].partition(": ")
        if kind == "raises":
            if not bug["raised"] or expect not in bug["raised"]:
                problems.append(f"{case['file']}: expected a raise containing {expect!r}, got {bug['raised']!r}")
            elif bug["line"] != case["raise_line"]:
                problems.append(f"{case['file']}: raised at line {bug['line']}, manifest says {case['raise_line']}")
        else:
            if bug["raised"]:
                problems.append(f"{case['file']}: silent case raised {bug['raised']!r}")
            elif bug["probe"] is not True:
                problems.append(f"{case['file']}: probe {expect!r} gave {bug['probe']!r}")
    assert not problems, "\n".join(problems)


def test_ok_counterparts_run_cleanly(results):
    problems = []
    for case, _, ok in results:
        if ok["raised"]:
            problems.append(f"{case['ok_file']}: raised {ok['raised']!r} at line {ok['line']}")
        elif _probe(case) is not None and ok["probe"] is not False:
            problems.append(f"{case['ok_file']}: the bug's probe should be False here, got {ok['probe']!r}")
    assert not problems, "\n".join(problems)
