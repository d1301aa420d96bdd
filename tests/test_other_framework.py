"""A file that imports another framework (Paddle, TensorFlow, JAX, ...) and nothing of torch is not run through
the dataflow: its `.eval()`, `.numpy()` and `.backward()` are that framework's (bench/fresh10-false: RT-DETR's Paddle
port drew GS201 on Paddle's `Tensor.numpy()`, which has no requires-grad check)."""

from gradsight.analysis import analyze_source

PADDLE = """import numpy as np
import paddle


def detect(model, image):
    model.eval()
    out = model({"image": paddle.to_tensor(image, dtype="float32")})
    return out["bbox"].numpy()
"""


def test_paddle_file_gets_no_dataflow_findings():
    assert analyze_source(PADDLE, "detect.py").findings == []


def test_the_same_code_importing_torch_is_analysed():
    torch_version = PADDLE.replace("import paddle\n", "import paddle\nimport torch\n")
    assert [f.code for f in analyze_source(torch_version, "detect.py").findings] != []
