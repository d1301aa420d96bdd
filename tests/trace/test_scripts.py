"""Fixture scripts in tests/trace/scripts: each says what it expects in its first line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from trace_helpers import RANK, SCRIPTS

pytestmark = pytest.mark.torch


def warnings_of(result):
    return [(f["code"], f["line"], f["severity"]) for f in result["findings"] if RANK[f["severity"]] >= 2]


def test_inplace_relu_after_sigmoid(script_traces):
    r = script_traces["relu_inplace_after_sigmoid.py"]
    # The module built with inplace=True is the statement to change; where it ran and what saved are related.
    assert warnings_of(r) == [("GS901", 6, "error")]
    assert [x["line"] for x in r["findings"][0]["related"]] == [9, 8]
    assert r["error"]["line"] == 10 and "modified by an inplace operation" in r["error"]["message"]


def test_optimizer_step_between_forward_and_backward(script_traces):
    r = script_traces["step_before_backward.py"]
    assert warnings_of(r) == [("GS901", 14, "error")]
    assert "opt_d.step()" in r["findings"][0]["message"]


def test_data_write_to_saved_tensor_is_silent_but_reported(script_traces):
    r = script_traces["data_inplace_silent.py"]
    assert r["error"] is None  # PyTorch itself says nothing here
    assert warnings_of(r) == [("GS901", 8, "warning")]


def test_item_rewrap_reports_parameters_without_gradient(script_traces):
    r = script_traces["item_rewrap.py"]
    assert warnings_of(r) == [("GS904", 12, "warning")]
    assert "model.weight" in r["findings"][0]["message"]


def test_detach_in_forward_reports_cut_parameters(script_traces):
    r = script_traces["detach_in_forward.py"]
    assert warnings_of(r) == [("GS904", 15, "warning")]
    assert "net.body.weight" in r["findings"][0]["message"]
    assert r["findings"][0]["related"][0]["line"] == 25


def test_blocks_in_a_plain_list_are_named_where_they_are_built(script_traces):
    r = script_traces["unregistered_blocks.py"]
    assert warnings_of(r) == [("GS911", 11, "warning")]
    assert "nn.ModuleList" in r["findings"][0]["message"]
    assert "blocks unchanged: True" in r["stdout"]  # the run itself shows the optimizer never touched them


def test_clip_over_a_used_up_generator(script_traces):
    r = script_traces["clip_used_generator.py"]
    assert warnings_of(r) == [("GS910", 14, "warning")]
    assert "norm: 0.0" in r["stdout"]
    assert "empty generator" in r["stderr"]  # torch's own warning still prints, at the user's line
    assert "clip_used_generator.py:14" in r["stderr"]


def test_graphs_kept_in_a_stats_dict_are_named_where_they_are_stored(script_traces):
    r = script_traces["stats_keep_graphs.py"]
    assert warnings_of(r) == [("GS912", 20, "warning")]
    # The claim, by a plain run: every step's entropy kept its graph.
    plain = subprocess.run([sys.executable, str(SCRIPTS / "stats_keep_graphs.py")], capture_output=True, text=True,
                           timeout=300)
    assert "kept graphs: 8" in plain.stdout, plain.stderr


def test_penalty_made_from_item_is_named_at_the_item(script_traces):
    r = script_traces["penalty_from_item.py"]
    assert warnings_of(r) == [("GS913", 12, "warning")]
    assert [x["line"] for x in r["findings"][0]["related"]] == [13, 15]
    assert "same gradient as without the penalty: True" in r["stdout"]  # the claim, seen in the traced run


def test_collection_cut_short_by_a_crash_is_not_called_a_leak(script_traces):
    """An episode's log-probs collected for a backward that the crash prevents: no backward ever ran without
    them, so GS912 stays quiet (the crash itself is reported)."""
    r = script_traces["reinforce_interrupted.py"]
    assert warnings_of(r) == [("GS900", 14, "error")]


@pytest.mark.parametrize("name", ["gan_correct.py", "rnn_truncated_bptt.py", "grads_unchanged.py",
                                  "cuda_targeted.py", "advanced_clean.py", "clean_grad_accumulation.py",
                                  "init_orthogonal.py", "closure_and_func.py", "registered_blocks.py",
                                  "collect_then_backward.py", "numbers_from_item_ok.py"])
def test_correct_code_is_clean(script_traces, name):
    r = script_traces[name]
    assert r["error"] is None, r["error"]
    assert r["findings"] == []
    assert r["internal_errors"] == []


def test_max_steps_stops_an_endless_loop(script_traces):
    r = script_traces["loop_forever_training.py"]
    assert r["stopped"] == "max-steps" and r["steps"] == 3 and r["error"] is None


def test_cuda_code_runs_on_cpu(script_traces):
    r = script_traces["cuda_targeted.py"]
    assert r["device"] == "cpu" and r["steps"] == 3
    devices = {e["device"] for e in r["events"] if e["device"]}
    assert devices == {"cpu"}


def test_frozen_features_are_only_information(script_traces):
    r = script_traces["frozen_features.py"]
    assert warnings_of(r) == []
    assert [(f["code"], f["line"], f["severity"]) for f in r["findings"]] == [("GS904", 13, "information")]


def test_torch_tensor_of_grad_tensors_cuts_history(script_traces):
    r = script_traces["tensor_copy_construct.py"]
    assert warnings_of(r) == [("GS903", 7, "error"), ("GS903", 8, "error")]
    assert "torch.tensor() copies values" in r["findings"][0]["message"]


def test_step_before_backward_has_no_gradients(script_traces):
    r = script_traces["silent_step_first.py"]
    assert r["error"] is None  # PyTorch says nothing: the steps just do nothing
    assert warnings_of(r) == [("GS908", 12, "warning")]
    assert r["findings"][0]["confirms"] == ["GS308", "GS507"]


def test_zero_grad_between_backward_and_step_is_named(script_traces):
    r = script_traces["silent_zero_between.py"]
    assert warnings_of(r) == [("GS908", 12, "warning")]
    f = r["findings"][0]
    assert "zero_grad()" in f["message"] and {x["line"] for x in f["related"]} == {11, 13}


def test_gradients_never_reset_accumulate(script_traces):
    r = script_traces["silent_no_zero_grad.py"]
    assert warnings_of(r) == [("GS909", 11, "warning")]
    assert r["findings"][0]["related"][0]["line"] == 12


def test_scripts_output_is_kept_per_script_in_a_batch(script_traces):
    assert script_traces["init_orthogonal.py"]["stdout"].startswith("final loss ")
    assert "final loss" not in script_traces["clean_grad_accumulation.py"]["stdout"]


def test_module_that_never_gets_a_gradient_is_named_once(script_traces):
    r = script_traces["unused_layer.py"]
    assert [(f["code"], f["line"], f["severity"]) for f in r["findings"]] == [("GS904", 22, "information")]
    assert "`model.fc2` (weight, bias)" in r["findings"][0]["message"]
