"""Every seed case traced on the CPU, judged against truth.json (what PyTorch really does)."""

from __future__ import annotations

import pytest

from gradsight.findings import Finding
from trace_helpers import FINDING_KEYS, RANK, RESULT_KEYS, load_truth, seed_path

CASES = load_truth()
IDS = [c["file"].split("/")[-1] for c in CASES]
RAISING = [c for c in CASES if c["raises"]]
CLEAN = [c for c in CASES if not c["raises"] and not c["must_flag"]]
SILENT = [c for c in CASES if not c["raises"] and c["must_flag"]]

pytestmark = pytest.mark.torch


def judge(case, findings):
    """score.py's rule: every must_flag group hit at its severity; no warning/error elsewhere."""
    problems = []
    flagged = set()
    for group in case["must_flag"]:
        need = RANK[group["min_severity"]]
        if not [f for f in findings if f["line"] in group["lines"] and RANK[f["severity"]] >= need]:
            problems.append(f"missed {group['lines']}")
        flagged.update(group["lines"])
    allowed = flagged | set(case["also_allowed_lines"])
    for f in findings:
        if RANK[f["severity"]] >= RANK["warning"] and f["line"] not in allowed:
            problems.append(f"false alarm: {f['line']} {f['code']} {f['message']}")
    return problems


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_case_judged_like_score_py(seed_traces, case):
    result = seed_traces[case["file"]]
    assert set(result) == RESULT_KEYS
    assert judge(case, result["findings"]) == [], result["findings"]
    for f in result["findings"]:
        assert set(f) == FINDING_KEYS
        assert f["source"] == "trace"
        # The language server reads trace findings with the static findings' reader: it must accept them.
        parsed = Finding.from_json(f)
        assert parsed.code == f["code"] and parsed.extra["confirms"] == f["confirms"]
        if f["fix"] is not None:
            assert parsed.fix.edits[0].new_text == ".detach()"
            assert f["fix"]["applicability"] == "unsafe" and f["fix"]["edits"][0]["line"] == f["line"]
        assert f["path"].endswith(case["file"].split("/")[-1])
        assert f["code"].startswith("GS9") and f["severity"] in RANK
        assert 1 <= f["column"] <= f["end_column"] and f["line"] == f["end_line"]


@pytest.mark.parametrize("case", RAISING, ids=[c["file"].split("/")[-1] for c in RAISING])
def test_raising_case_root_cause_line(seed_traces, case):
    result = seed_traces[case["file"]]
    want = case["raises"]
    if case["raises_caught"]:
        assert result["error"] is None  # the script catches it; the finding still names the cause
    else:
        assert result["error"]["type"] == want["type"]
        assert want["message_contains"] in result["error"]["message"]
        assert result["error"]["line"] == want["line"]
    must = {line for g in case["must_flag"] for line in g["lines"]}
    allowed = must | set(case["also_allowed_lines"])
    lines = {f["line"] for f in result["findings"]}
    assert lines, "no finding for a raising case"
    if must:
        assert lines & must, (lines, must)
    assert lines <= allowed | {want["line"]}


@pytest.mark.parametrize("case", CLEAN, ids=[c["file"].split("/")[-1] for c in CLEAN])
def test_clean_case_has_no_warning(seed_traces, case):
    result = seed_traces[case["file"]]
    assert result["error"] is None
    assert [f for f in result["findings"] if RANK[f["severity"]] >= RANK["warning"]] == []


@pytest.mark.parametrize("case", SILENT, ids=[c["file"].split("/")[-1] for c in SILENT])
def test_silent_case_reported(seed_traces, case):
    result = seed_traces[case["file"]]
    assert result["error"] is None
    must = {line for g in case["must_flag"] for line in g["lines"]}
    assert {f["line"] for f in result["findings"]} & must


def test_specific_root_causes(seed_traces):
    """The lines the brief names for each mistake, with the code that names it."""
    def at(name):
        return {(f["code"], f["line"]) for f in seed_traces[f"cases/{name}.py"]["findings"]}

    assert ("GS902", 14) in at("extra_rnn_hidden_carry")
    assert ("GS902", 15) in at("extra_gan_fake_reused")
    gan = seed_traces["cases/extra_gan_fake_reused.py"]["findings"][0]
    assert {r["line"] for r in gan["related"]} >= {20, 16, 12, 21}
    # Honest advice: the discriminator step's use detaches (opt_d.step() at line 17 does not train G, so
    # line 15 was the discriminator's), never the generator's use at line 20; no retain_graph.
    assert "use `fake.detach()` here" in gan["message"] and "Line 20 uses it again" in gan["message"]
    assert "retain_graph" not in gan["message"] and gan["fix"]["edits"][0]["line"] == 15
    shared = [f for f in seed_traces["cases/seed002_ex3_v.py"]["findings"] if f["code"] == "GS902"][0]
    # One model output under two losses, no step in between: sum them, or retain on the first backward.
    assert shared["line"] == 31 and "add them and call backward once" in shared["message"]
    assert "retain_graph=True to the backward at line 29" in shared["message"]
    # The loop-carried hidden state: the quick fix the static GS402 offers, `.detach()` at the carry.
    rnn = [f for f in seed_traces["cases/extra_rnn_hidden_carry.py"]["findings"] if f["code"] == "GS902"][0]
    edit = rnn["fix"]["edits"][0]
    text = seed_path("cases/extra_rnn_hidden_carry.py").read_text().splitlines()[edit["line"] - 1]
    fixed = text[: edit["column"] - 1] + edit["new_text"] + text[edit["end_column"] - 1:]
    assert fixed.strip() == "out, hidden = rnn(chunk, hidden.detach())", fixed
    assert "previous iteration" in rnn["message"] and rnn["confirms"] == ["GS402"]
    # Non-scalar: at the unreduced value, and at the backward.
    assert {("GS900", 7), ("GS900", 8)} <= at("extra_nonscalar_backward")
    assert ("GS903", 5) in at("seed001_ex1") and ("GS903", 8) in at("seed001_ex1")
    assert {("GS903", 6), ("GS903", 23)} <= at("extra_helper_rewraps")
    assert ("GS903", 10) in at("extra_no_grad_forward")  # the `with torch.no_grad():` line
    assert ("GS906", 8) in at("extra_inplace_leaf")
    saved = [f for f in seed_traces["cases/extra_inplace_saved_output.py"]["findings"] if f["code"] == "GS901"]
    assert saved and saved[0]["line"] == 12 and saved[0]["related"][0]["line"] == 11
    assert ("GS905", 13) in at("extra_loss_accumulates_graph")
    assert ("GS904", 7) in at("seed000_ex2")
    assert ("GS907", 8) in at("extra_numpy_on_grad_tensor")
    assert ("GS900", 24) in at("seed000_ex1")


def test_events_are_aggregated_per_line(seed_traces):
    result = seed_traces["cases/extra_loss_accumulates_graph.py"]
    events = result["events"]
    keys = [(e["line"], e["kind"], e["op"]) for e in events]
    assert len(keys) == len(set(keys))
    linear = [e for e in events if e["line"] == 9 and e["op"] == "linear" and e["kind"] == "op"]
    assert linear and linear[0]["count"] == 5 and linear[0]["shape"] == [4, 1]
    assert linear[0]["requires_grad"] is True and linear[0]["grad_fn"] == "AddmmBackward0"
    kinds = {e["kind"] for e in events}
    assert {"op", "saved", "backward", "step"} <= kinds
    assert result["steps"] == 5
