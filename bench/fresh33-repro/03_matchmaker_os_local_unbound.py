"""fresh33 real: sebastian-hofstaetter/matchmaker matchmaker/eval.py:186 (GS002).

`evaluate_model` (called by `validate_model` during training, matchmaker/train.py:619 and :727, and by
`test_model`) assigns `os=batch_orig["offsets_start"][sample_i][start_idx[sample_i]]` at line 186 (the QA-span
branch), which makes `os` a local name of the whole function. Line 67, under
`if use_submodel_caching:` (`"submodel_validation_cache_path" in config`, the IDCM cache that
documentation/reranking_idcm_sigir21.md tells you to set), calls
`CrossExperimentReplayCache(os.path.join(config["submodel_validation_cache_path"], os.path.basename(...)), ...)`
before any assignment: UnboundLocalError, logged and re-raised by the `except BaseException` at line 217, so the
first validation of such a run stops training. Without that key line 67 is skipped and the function runs.
The run below keeps the statements that matter (the module-level `import os`, line 65, 67, 186) and shows both.
"""
import os


def evaluate_model(config, eval_tsv, answerable=(True,), offsets_start=((3,),), start_idx=(0,)):
    use_submodel_caching = "submodel_validation_cache_path" in config                        # line 65
    if use_submodel_caching:
        path = os.path.join(config["submodel_validation_cache_path"],
                            os.path.basename(os.path.dirname(eval_tsv)))                       # line 67
    for sample_i in range(len(answerable)):
        if config.get("train_qa_spans") and answerable[sample_i]:
            os = offsets_start[sample_i][start_idx[sample_i]]                                  # line 186
    return "done"


assert evaluate_model({}, "/data/val/top1000.tsv") == "done"
try:
    evaluate_model({"submodel_validation_cache_path": "/cache/bert_val"}, "/data/val/top1000.tsv")
except UnboundLocalError as e:
    print("raises:", e)
else:
    raise AssertionError("expected UnboundLocalError")
