"""The real-bug scorer (bench/realbugs/score.py) scores what gradsight really reports.

These cases are written here (not taken from the corpus, whose files are fetched, not stored): a buggy and
a fixed version of a tiny training script, run through the real CLI by the scorer's own runner.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
SCORE = REPO / "bench" / "realbugs" / "score.py"

BUGGY = """import torch

model = torch.nn.Linear(3, 1)
x = torch.randn(2, 3)
pred = model(x)
arr = pred.numpy()
"""
FIXED = BUGGY.replace("pred.numpy()", "pred.detach().numpy()")
# A fixed version that introduces a different problem, to see that the scorer calls it new.
FIXED_WITH_NEW = FIXED + "pred.detach().requires_grad = False\nw = torch.tensor([1, 2], requires_grad=True)\n"


@pytest.fixture()
def score(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("realbugs_score", SCORE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "TREES", tmp_path / "trees")
    return module


def _case(score, cid: str, buggy: str, fixed: str, fixed_lines: list[int]) -> dict:
    for side, text in (("buggy", buggy), ("fixed", fixed)):
        target = score.TREES / cid / side / "train.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return {"id": cid, "repo": "example/example", "commit": "0" * 40, "parent": "1" * 40, "kind": "numpy",
            "effect": "raises", "truth": "", "repro": "",
            "files": [{"path": "train.py", "fixed_lines": fixed_lines,
                       "buggy_sha256": hashlib.sha256(buggy.encode()).hexdigest(),
                       "fixed_sha256": hashlib.sha256(fixed.encode()).hexdigest()}]}


def _score(score, cases):
    # Folders, as bench/realbugs/score.py passes them.
    files = [score.TREES / c["id"] / side for c in cases for side in ("buggy", "fixed")]
    findings, _ = score.run_gradsight(files, None)
    return {r["id"]: r for r in score.score(cases, findings)}


def test_hit_on_the_fixed_line_and_a_miss_elsewhere(score):
    hit = _case(score, "hit", BUGGY, FIXED, [6])
    # The same code with the "fixed line" put elsewhere: the finding is then reported elsewhere, not a hit.
    miss = _case(score, "miss", BUGGY, FIXED, [5])
    rows = _score(score, [hit, miss])
    assert rows["hit"]["hit"] and rows["hit"]["hit"][0].endswith("train.py:6")
    assert rows["hit"]["new_on_fixed"] == [] and rows["hit"]["fixed_all"] == []
    assert rows["miss"]["hit"] == []
    assert any(tag.endswith("train.py:6") for tag in rows["miss"]["elsewhere"])


def test_new_findings_on_the_fixed_version_are_reported(score):
    case = _case(score, "new", BUGGY, FIXED_WITH_NEW, [6])
    row = _score(score, [case])["new"]
    assert row["hit"]
    assert row["new_on_fixed"], row
    assert all("train.py:6" not in tag for tag in row["new_on_fixed"])


def test_a_known_bug_on_the_fixed_version_is_listed_not_counted(score):
    case = _case(score, "known", BUGGY, FIXED_WITH_NEW, [6])
    row = _score(score, [case])["known"]
    new = row["new_on_fixed"]
    assert new, row
    lines = FIXED_WITH_NEW.splitlines()
    case["fixed_tree_known_bugs"] = [
        {"code": t.split("@")[0], "path": "train.py", "line_text": lines[int(t.split(" ")[0].rsplit(":", 1)[1]) - 1],
         "evidence": "test"} for t in new]
    row = _score(score, [case])["known"]
    assert row["new_on_fixed"] == [] and len(row["known_on_fixed"]) == len(new), row


def test_every_known_fixed_tree_bug_has_its_evidence():
    data = json.loads((REPO / "bench" / "realbugs" / "manifest.json").read_text(encoding="utf-8"))
    checks = (REPO / "bench" / "realbugs" / "fixed_tree_bugs.py").read_text(encoding="utf-8")
    for c in data["cases"]:
        for k in c.get("fixed_tree_known_bugs", []):
            assert {"code", "path", "line_text", "evidence"} <= set(k), c["id"]
            assert k["path"] in {f["path"] for f in c["files"]}, c["id"]
            assert f'"{c["id"]}"' in checks, c["id"]   # a torch run of the project's own code proves it


def test_materialise_refuses_a_file_that_does_not_match_the_pinned_hash(score, tmp_path):
    case = _case(score, "pinned", BUGGY, FIXED, [6])
    case["files"][0]["buggy_sha256"] = "0" * 64
    (score.TREES / "pinned" / "buggy" / "train.py").unlink()
    mirrors = tmp_path / "mirrors"
    mirrors.mkdir()
    score._read_blob = lambda *_args: BUGGY.encode()
    with pytest.raises(SystemExit, match="the manifest pins"):
        score.materialise([case], mirrors, log=lambda *_: None)


def test_every_manifest_case_is_complete():
    data = json.loads((REPO / "bench" / "realbugs" / "manifest.json").read_text(encoding="utf-8"))
    cases = data["cases"]
    assert len(cases) >= 40
    assert len({c["id"] for c in cases}) == len(cases)
    for c in cases:
        assert len(c["commit"]) == 40 and len(c["parent"]) == 40, c["id"]
        assert c["effect"] in ("raises", "silent", "memory"), c["id"]
        assert c["files"] and all(f["fixed_lines"] for f in c["files"]), c["id"]
        assert c["truth"], c["id"]
        assert (REPO / c["repro"]).is_file(), c["id"]
