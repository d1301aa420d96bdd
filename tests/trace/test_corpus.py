"""The trace over a corpus of ten training scripts (tests/trace/corpus/, each modelled on a public example
and made runnable offline) and 26 bugs injected into them (corpus/bugs.json: line edits, 15 raising and 11
silent).

* Every variant is first run plainly (one interpreter, `runpy`, no tracer): a raising bug must raise the
  stated error, a silent one must run through and make its probe true, and the clean scripts must run clean.
  So each injected bug is real under torch, not assumed.
* The clean scripts, traced: no finding of warning or error, no internal error in the runner.
* The buggy variants, traced: the share with a finding (warning or error) on the line to change must be at
  least 90%; each variant lists its misses and extra findings in the assertion message.

Run it alone to print the per-bug table: `python tests/trace/test_corpus.py`.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import textwrap

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from trace_helpers import RANK  # noqa: E402

CORPUS = pathlib.Path(__file__).resolve().parent / "corpus"
BUGS = json.loads((CORPUS / "bugs.json").read_text(encoding="utf-8"))
CLEAN = sorted(p.name for p in CORPUS.glob("*.py"))
TARGET = 0.9

pytestmark = pytest.mark.torch


def _line_of(lines: list[str], text: str, what: str) -> int:
    hits = [i for i, line in enumerate(lines) if line == text]
    assert len(hits) == 1, f"{what}: {text!r} matches {len(hits)} lines"
    return hits[0]


def materialize(bug: dict, folder: pathlib.Path) -> tuple[pathlib.Path, set[int]]:
    """Write the buggy variant; return its path and the 1-based lines that count as the line to change.
    Edits replace whole lines (matched in the clean script), so line numbers do not move."""
    lines = (CORPUS / bug["script"]).read_text(encoding="utf-8").splitlines()
    new = list(lines)
    for old, replacement in bug["edits"]:
        new[_line_of(lines, old, bug["id"])] = replacement
    expect = {_line_of(lines, text, bug["id"]) + 1 for text in bug["expect"]}
    path = folder / (bug["id"].replace("-", "_") + ".py")
    path.write_text("\n".join(new) + "\n", encoding="utf-8")
    return path, expect


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    pytest.importorskip("torch")
    return build(tmp_path_factory.mktemp("corpus"))


def build(folder: pathlib.Path):
    for name in CLEAN:
        (folder / name).write_text((CORPUS / name).read_text(encoding="utf-8"), encoding="utf-8")
    variants = {b["id"]: materialize(b, folder) for b in BUGS}
    return folder, variants


PLAIN_DRIVER = textwrap.dedent("""
    import contextlib, io, json, runpy, sys
    import torch
    out = {}
    for path in sys.argv[1:]:
        sink = io.StringIO()
        try:
            with contextlib.redirect_stdout(sink):
                ns = runpy.run_path(path, run_name="__main__")
            out[path] = {"error": None, "ns": ns}
        except Exception as exc:
            out[path] = {"error": "%s: %s" % (type(exc).__name__, exc), "ns": None}
    probes = json.loads(sys.stdin.read())
    report = {}
    for path, r in out.items():
        probe = probes.get(path)
        value = None
        if probe and r["ns"] is not None:
            try:
                value = bool(eval(probe, r["ns"]))
            except Exception as exc:
                value = "probe failed: %r" % (exc,)
        report[path] = {"error": r["error"], "probe": value}
    print(json.dumps(report))
""")


def test_every_injected_bug_is_real_under_plain_torch(corpus):
    folder, variants = corpus
    paths = [str(folder / n) for n in CLEAN] + [str(p) for p, _ in variants.values()]
    probes = {str(variants[b["id"]][0]): b["probe"] for b in BUGS if b["kind"] == "silent"}
    proc = subprocess.run([sys.executable, "-c", PLAIN_DRIVER, *paths], input=json.dumps(probes),
                          capture_output=True, text=True, cwd=folder, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    problems = []
    for name in CLEAN:
        if report[str(folder / name)]["error"]:
            problems.append(f"clean {name} raised {report[str(folder / name)]['error']}")
    for bug in BUGS:
        r = report[str(variants[bug["id"]][0])]
        if bug["kind"] == "raises" and (not r["error"] or bug["raises"] not in r["error"]):
            problems.append(f"{bug['id']}: expected to raise {bug['raises']!r}, got {r['error']!r}")
        if bug["kind"] == "silent" and (r["error"] or r["probe"] is not True):
            problems.append(f"{bug['id']}: expected a silent bug with a true probe, got {r}")
    assert problems == []


def _trace(corpus):
    from gradsight.trace import run_traces

    folder, variants = corpus
    clean = run_traces([str(folder / n) for n in CLEAN], device="cpu", max_steps=20, timeout=300, cwd=str(folder))
    buggy = run_traces([str(variants[b["id"]][0]) for b in BUGS], device="cpu", max_steps=20, timeout=300,
                       cwd=str(folder))
    return dict(zip(CLEAN, clean)), {b["id"]: r for b, r in zip(BUGS, buggy)}


@pytest.fixture(scope="module")
def traced(corpus):
    return _trace(corpus)


def test_clean_scripts_have_no_findings_and_no_internal_errors(traced):
    clean, _ = traced
    for name, r in clean.items():
        assert r["error"] is None, (name, r["error"])
        assert r["internal_errors"] == [], (name, r["internal_errors"])
        assert [f for f in r["findings"] if RANK[f["severity"]] >= RANK["warning"]] == [], name
        assert r["steps"] > 0


def score(bug, result, expect):
    warn = [f for f in result["findings"] if RANK[f["severity"]] >= RANK["warning"]]
    hit = any(f["line"] in expect for f in warn)
    extra = [(f["line"], f["code"]) for f in warn if f["line"] not in expect]
    return hit, extra


def test_buggy_variants_named_at_the_line_to_change(corpus, traced):
    _, buggy = traced
    _, variants = corpus
    hits, rows = 0, []
    for bug in BUGS:
        r = buggy[bug["id"]]
        assert r["internal_errors"] == [], (bug["id"], r["internal_errors"])
        if bug["kind"] == "raises":
            assert r["error"] is not None and bug["raises"] in r["error"]["message"], (bug["id"], r["error"])
        else:
            assert r["error"] is None, (bug["id"], r["error"])
        hit, extra = score(bug, r, variants[bug["id"]][1])
        hits += hit
        rows.append((bug["id"], hit, extra))
    rate = hits / len(BUGS)
    print(f"\ncorpus: {hits}/{len(BUGS)} bugs named at the line to change ({rate:.0%})")
    for row in rows:
        print("  %-48s %s %s" % (row[0], "hit " if row[1] else "MISS", row[2] or ""))
    assert rate >= TARGET, [row for row in rows if not row[1]]


if __name__ == "__main__":
    import shutil
    import tempfile

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="corpus-"))
    c = build(tmp)
    clean_r, buggy_r = _trace(c)
    n_hit = 0
    for b in BUGS:
        h, extra = score(b, buggy_r[b["id"]], c[1][b["id"]][1])
        n_hit += h
        codes = [(f["line"], f["code"]) for f in buggy_r[b["id"]]["findings"]]
        print("%-48s %-6s %-5s expect %s got %s" % (b["id"], b["kind"], "hit" if h else "MISS",
                                                     sorted(c[1][b["id"]][1]), codes))
    false = {n: [(f["line"], f["code"]) for f in r["findings"]] for n, r in clean_r.items() if r["findings"]}
    print(f"{n_hit}/{len(BUGS)} named at the line to change; clean scripts with findings: {false or 'none'}")
    print("internal errors:", {k: v["internal_errors"] for k, v in {**clean_r, **buggy_r}.items()
                               if v["internal_errors"]} or "none")
    shutil.rmtree(tmp, ignore_errors=True)
