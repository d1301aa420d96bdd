"""The seed cases (tests/fixtures/seed_cases, a copy of ../shared/seed-cases) judged like score.py, plus
assertions that each message names the real cause."""

import json
import pathlib

import pytest

from gradsight.analysis import analyze_source

HERE = pathlib.Path(__file__).resolve().parent / "fixtures" / "seed_cases"
CASES = json.loads((HERE / "truth.json").read_text())
RANK = {"hint": 0, "information": 1, "warning": 2, "error": 3}


def findings(case):
    path = HERE / pathlib.Path(case["file"]).name
    return analyze_source(path.read_text(), str(path)).findings


@pytest.mark.parametrize("case", CASES, ids=[c["file"].split("/")[-1] for c in CASES])
def test_case_matches_truth(case):
    found = findings(case)
    flagged = set()
    for group in case["must_flag"]:
        need = RANK[group["min_severity"]]
        assert any(f.line in group["lines"] and f.severity.rank >= need for f in found), (group, found)
        flagged.update(group["lines"])
    allowed = flagged | set(case["also_allowed_lines"])
    loud = [f for f in found if f.severity.rank >= 2 and f.line not in allowed]
    assert not loud, loud


def one(name, code):
    case = next(c for c in CASES if c["file"].endswith(name))
    hits = [f for f in findings(case) if f.code == code]
    assert hits, findings(case)
    return hits[0]


def test_detach_cause_is_named():
    f = one("seed001_ex1.py", "GS401")
    assert f.line == 8 and "detach" in f.message and "line 5" in f.message
    # PyTorch's exact words go to the related notes or the rule page, not the (short) message.
    from gradsight.rules import all_rules
    page = next(r for r in all_rules() if r.code == "GS401").docs_markdown()
    assert "element 0 of tensors does not require grad" in page + " ".join(r.message for r in f.related)
    assert 5 in [r.line for r in f.related]


def test_never_required_grad_is_named():
    f = one("seed001_ex2.py", "GS401")
    assert "without requires_grad=True" in f.message and "line 3" in f.message


def test_no_grad_block_is_named():
    f = one("extra_no_grad_forward.py", "GS401")
    # Reported where the fix goes (the forward that ran under no_grad), the failing backward in related.
    assert f.line == 11 and "line 14" in f.message
    assert {10, 14} <= {r.line for r in f.related}
    assert any("torch.no_grad()" in r.message for r in f.related)


def test_tolist_round_trip_in_helper_is_named():
    f = one("extra_helper_rewraps.py", "GS401")
    assert f.line == 23 and ".tolist()" in f.message and "line 6" in f.message
    assert {6, 8} <= {r.line for r in f.related}


def test_second_backward_names_first():
    f = one("seed002_ex1_v.py", "GS402")
    assert f.line == 27 and "line 25" in f.message and "second time" in f.message


def test_accumulated_micro_batch_names_inner_backward():
    f = one("seed002_ex2_v.py", "GS402")
    assert f.line == 32 and "line 30" in f.message


def test_clamp_case_blames_shared_graph_not_clamp():
    f = one("seed002_ex3_v.py", "GS402")
    assert f.line == 31 and "outputs" in f.message and "line 29" in f.message and "clamp" not in f.message


def test_rnn_hidden_carry_points_at_the_carry_with_detach_fix():
    f = one("extra_rnn_hidden_carry.py", "GS402")
    assert f.line == 14 and "hidden" in f.message and "line 17" in f.message
    assert f.fix is not None and f.fix.edits[0].new_text == ".detach()" and f.fix.applicability.value == "unsafe"


def test_gan_fake_reuse_fix_detaches_in_discriminator_step():
    f = one("extra_gan_fake_reused.py", "GS402")
    assert f.line == 21 and "fake" in f.message and "line 16" in f.message
    edit = f.fix.edits[0]
    assert edit.line == 15 and edit.new_text == ".detach()"


def test_inplace_on_saved_names_sigmoid_and_line():
    f = one("extra_inplace_saved_output.py", "GS301")
    assert f.line == 12 and "torch.sigmoid" in f.message and "line 11" in f.message
    assert f.fix is not None and f.fix.edits[0].new_text == "g = g * 2.0" and f.fix.applicability.value == "safe"


def test_inplace_on_leaf_through_helper():
    f = one("extra_inplace_leaf.py", "GS302")
    assert f.line == 8 and "leaf" in f.message and "line 3" in f.message


def test_numpy_fix_is_detach():
    f = one("extra_numpy_on_grad_tensor.py", "GS201")
    assert f.line == 8 and f.fix.edits[0].new_text == ".detach()" and f.fix.applicability.value == "safe"


def test_nonscalar_backward():
    f = one("extra_nonscalar_backward.py", "GS403")
    assert f.line == 7 and "reduced" in f.message  # where the unreduced loss is made
    assert any("scalar outputs" in r.message and r.line == 8 for r in f.related)


def test_nonleaf_optimizer_fix_creates_on_device():
    f = one("extra_nonleaf_optimizer.py", "GS501")
    # On the statement that made `w` (where the fix goes); the optimizer's line, which raises, is related.
    assert f.line == 4 and "non-leaf" in f.message and 6 in [r.line for r in f.related]
    assert f.fix.edits[0].new_text == "torch.randn(3, 1, device=device, dtype=torch.float64, requires_grad=True)"


def test_loss_accumulation():
    f = one("extra_loss_accumulates_graph.py", "GS404")
    assert f.line == 13 and "memory grows" in f.message
    assert f.fix is not None and f.fix.edits[0].new_text == ".item()"


def test_dead_requires_grad_is_information():
    f = one("seed000_ex2.py", "GS202")
    assert f.line == 13 and f.severity.value == "information" and "line 7" in f.message




@pytest.mark.torch
def test_truth_holds_under_torch():
    """Every seed case really does what truth.json says (ground truth comes from running PyTorch)."""
    from torch_runner import run_scripts

    jobs = [(str(HERE / pathlib.Path(c["file"]).name), c["probe"]) for c in CASES]
    problems = []
    for case, got in zip(CASES, run_scripts(jobs, cwd=str(HERE))):
        want = case["raises"]
        if want is None and got["raised"] and not case.get("raises_caught"):
            problems.append(f"{case['file']}: raised {got['raised']}")
        if want is not None and not case.get("raises_caught"):
            if not got["raised"] or want["message_contains"] not in got["message"] or got["line"] != want["line"]:
                problems.append(f"{case['file']}: expected {want}, got {got}")
        if case["probe"] and got["probe"] is not True:
            problems.append(f"{case['file']}: probe {case['probe']} gave {got['probe']}")
    assert not problems, "\n".join(problems)
