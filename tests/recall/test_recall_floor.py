"""Regression guard for recall on the real-bug corpus (tests/recall/), without torch.

Scored exactly like bench/recall.py (docs/recall.md explains the rule): a buggy case is a hit when a
finding stands on one of its `root_cause_lines` with severity >= warning (cases that raise) or
>= information (silent cases); a false alarm is any warning-or-error finding on a `_ok` counterpart.

The numbers below were measured when this corpus was built (see docs/recall.md). Raise them when gradsight
gets better; a test failure here means the engine lost a true report or gained a false alarm.
"""

import json
import pathlib

from gradsight.analysis import analyze_source

HERE = pathlib.Path(__file__).resolve().parent
MANIFEST = json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))
RANK = {"hint": 0, "information": 1, "warning": 2, "error": 3}

# Hits measured at the end of building the corpus (recall = RECALL_FLOOR / len(MANIFEST)).
RECALL_FLOOR = 73

# Counterparts that gradsight keeps quiet on (no warning or error): all of them. The false alarms the
# corpus exposed (013: GS301 on a manual SGD update under no_grad after backward; 040: GS407 on a second
# derivative taken with create_graph=True; 076: GS504 from an optimizer built in another method; 071: GS404 on
# a PGD step rebound and detached in the same iteration) are fixed and guarded here.
QUIET_COUNTERPARTS = [
    "001_backward_twice_ok.py",
    "002_two_losses_shared_graph_ok.py",
    "003_rnn_hidden_carry_ok.py",
    "004_lstm_tbptt_state_ok.py",
    "005_gan_fake_not_detached_ok.py",
    "006_gan_step_between_backwards_ok.py",
    "007_relu_inplace_after_sigmoid_ok.py",
    "008_iadd_after_exp_ok.py",
    "009_masked_assign_after_sigmoid_ok.py",
    "010_iadd_on_branch_input_ok.py",
    "011_slice_assign_of_own_product_ok.py",
    "012_inplace_on_chunk_output_ok.py",
    "013_manual_sgd_without_no_grad_ok.py",
    "014_param_row_assign_ok.py",
    "015_manual_sgd_rebinds_weight_ok.py",
    "016_no_grad_forward_then_backward_ok.py",
    "017_detach_in_helper_ok.py",
    "018_data_roundtrip_ok.py",
    "019_item_rebuilt_loss_ok.py",
    "020_tolist_roundtrip_ok.py",
    "021_numpy_roundtrip_in_forward_ok.py",
    "022_torch_tensor_copy_in_loss_ok.py",
    "023_torch_tensor_of_tensor_list_ok.py",
    "024_numpy_on_grad_tensor_ok.py",
    "025_nonscalar_backward_reduction_none_ok.py",
    "026_nonleaf_param_to_device_ok.py",
    "027_nonleaf_param_cast_after_requires_grad_ok.py",
    "028_nonleaf_param_scaled_ok.py",
    "029_nonleaf_grad_is_none_ok.py",
    "030_total_loss_accumulates_graph_ok.py",
    "031_losses_append_ok.py",
    "032_argmax_in_loss_ok.py",
    "033_round_in_loss_ok.py",
    "034_requires_grad_on_int_tensor_ok.py",
    "035_require_grad_typo_ok.py",
    "036_requires_grad_false_on_nonleaf_ok.py",
    "037_inference_mode_tensor_in_training_ok.py",
    "038_autograd_grad_unused_input_ok.py",
    "039_autograd_grad_input_without_grad_ok.py",
    "040_higher_order_without_create_graph_ok.py",
    "041_missing_zero_grad_ok.py",
    "042_optimizer_before_layer_replaced_ok.py",
    "043_checkpoint_no_grad_input_ok.py",
    "044_no_grad_view_modified_outside_ok.py",
    "045_detach_inplace_on_view_ok.py",
    "046_resize_grad_tensor_ok.py",
    "047_out_arg_with_grad_ok.py",
    "048_func_grad_nonscalar_ok.py",
    "049_data_inplace_wrong_grad_ok.py",
    "050_forward_outside_training_loop_ok.py",
    "051_residual_iadd_on_conv_input_ok.py",
    "052_slice_zero_after_relu_attention_ok.py",
    "053_dropout_inplace_after_relu_ok.py",
    "054_wgan_backward_mone_shape_ok.py",
    "055_sam_second_backward_same_output_ok.py",
    "056_numpy_metric_in_training_loop_ok.py",
    "057_no_grad_decorated_predict_ok.py",
    "058_param_loop_variable_rebound_ok.py",
    "059_zero_grad_between_backward_and_step_ok.py",
    "060_autograd_grad_twice_ok.py",
    "061_rnn_hidden_carried_in_model_class_ok.py",
    "062_loss_history_dict_in_fit_ok.py",
    "063_running_loss_in_train_function_ok.py",
    "064_manual_sgd_rebind_in_function_ok.py",
    "065_focal_loss_clamp_inplace_on_sigmoid_ok.py",
    "066_multitask_losses_backward_in_loop_ok.py",
    "067_gan_trainer_class_fake_not_detached_ok.py",
    "068_trainer_running_loss_on_self_ok.py",
    "069_average_meter_update_with_loss_ok.py",
    "070_loss_dict_backward_each_ok.py",
    "071_pgd_attack_without_detach_ok.py",
    "072_linear_regression_class_manual_update_ok.py",
    "073_trainer_hidden_state_on_self_ok.py",
    "074_inference_mode_encoder_method_ok.py",
    "075_param_cast_in_init_not_leaf_ok.py",
    "076_training_step_outputs_keep_graph_ok.py",
    "077_validation_loss_without_no_grad_ok.py",
    "078_grad_accumulation_total_not_reset_ok.py",
    "079_saliency_input_not_leaf_ok.py",
]


def _findings(rel: str):
    path = HERE / rel
    return analyze_source(path.read_text(encoding="utf-8"), str(path)).findings


def _is_hit(case) -> bool:
    need = RANK["information"] if case["runtime"].startswith("silent: ") else RANK["warning"]
    return any(f.line in case["root_cause_lines"] and f.severity.rank >= need for f in _findings(case["file"]))


def test_quiet_counterparts_stay_quiet():
    known = {pathlib.Path(c["ok_file"]).name for c in MANIFEST}
    assert set(QUIET_COUNTERPARTS) <= known, set(QUIET_COUNTERPARTS) - known
    alarms = []
    for name in QUIET_COUNTERPARTS:
        for f in _findings(f"cases/{name}"):
            if f.severity.rank >= RANK["warning"]:
                alarms.append(f"cases/{name}:{f.line}: {f.code} {f.severity.value}: {f.message}")
    assert not alarms, "false alarms on correct code:\n" + "\n".join(alarms)


def test_recall_does_not_drop():
    hits = [c["file"] for c in MANIFEST if _is_hit(c)]
    missed = sorted(c["file"] for c in MANIFEST if c["file"] not in hits)
    assert len(hits) >= RECALL_FLOOR, (f"recall fell to {len(hits)}/{len(MANIFEST)} (floor {RECALL_FLOOR}); "
                                       f"missed: {missed}")
