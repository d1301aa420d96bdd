"""Constants and loaders shared by the trace tests (a unique module name: `conftest` is ambiguous)."""

from __future__ import annotations

import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = pathlib.Path(__file__).resolve().parent / "scripts"
# The seed cases: ../shared/seed-cases where it exists, else the repository's flat copy (tests/fixtures/seed_cases,
# also read by tests/test_seeds.py), so a clean clone in CI traces them too. `seed_path` maps a truth.json path.
_SHARED_SEED = ROOT.parent / "shared" / "seed-cases"
_FIXTURE_SEED = ROOT / "tests" / "fixtures" / "seed_cases"
SEED = _SHARED_SEED if (_SHARED_SEED / "truth.json").exists() else _FIXTURE_SEED
TRUTH = SEED / "truth.json"


def seed_path(rel: str) -> pathlib.Path:
    """The file of truth.json's `rel` ("cases/seed000_ex1.py") in whichever copy SEED is."""
    return SEED / rel if SEED == _SHARED_SEED else SEED / pathlib.PurePosixPath(rel).name
FINDING_KEYS = {"path", "line", "column", "end_line", "end_column", "code", "name", "severity", "message",
                "related", "fix", "source", "confirms"}
# The original six keys, unchanged, plus the new ones (the script's output and traceback, internal errors).
RESULT_KEYS = {"findings", "error", "events", "device", "steps", "stopped",
               "stdout", "stderr", "traceback", "internal_errors"}
RANK = {"hint": 0, "information": 1, "warning": 2, "error": 3}
SCRIPT_BATCH = [
    "relu_inplace_after_sigmoid.py", "step_before_backward.py", "data_inplace_silent.py", "item_rewrap.py",
    "detach_in_forward.py", "gan_correct.py", "rnn_truncated_bptt.py", "grads_unchanged.py",
    "loop_forever_training.py", "cuda_targeted.py", "advanced_clean.py", "frozen_features.py",
    "tensor_copy_construct.py", "silent_step_first.py", "silent_zero_between.py", "silent_no_zero_grad.py",
    "clean_grad_accumulation.py", "init_orthogonal.py", "unused_layer.py",
    "closure_and_func.py", "unregistered_blocks.py", "registered_blocks.py", "clip_used_generator.py",
    "stats_keep_graphs.py", "collect_then_backward.py", "penalty_from_item.py", "numbers_from_item_ok.py",
    "reinforce_interrupted.py",
]


def load_truth() -> list[dict]:
    if not TRUTH.exists():
        return []
    return json.loads(TRUTH.read_text(encoding="utf-8"))
