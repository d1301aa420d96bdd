# From lyuwenyu/RT-DETR rtdetr_paddle/ppdet/metrics/widerface_utils.py:100 (fresh10, first try of the engine at
# 1432d56).
# Finding: GS201 "`detection['bbox']` requires grad, so converting it to NumPy raises; call `.detach()` first."
# Why wrong: the file is PaddlePaddle code (it imports paddle, never torch). `model` is a paddle.nn.Layer: its
# `.eval()` is Paddle's, and Paddle's Tensor.numpy() converts a tensor whatever its stop_gradient (there is no
# requires-grad check as in torch). In the repository the only caller (WiderFaceMetric.update, from the ppdet
# trainer's evaluation) also runs under `paddle.no_grad()` (ppdet/engine/trainer.py:494). The engine takes the
# parameter `model` for a torch module because of `model.eval()` and its output for a tensor that requires grad.
# The torch analogue of this function (torch imported, `torch.as_tensor`) is a fair warning when no caller is
# seen, and the engine is already silent on it when a caller in the file runs it under `torch.no_grad()`.
# Run with PaddlePaddle (not in the project's venv; checked in a separate venv with paddlepaddle 3.3.1, CPU):
# prints "ok" and the converted array's shape, with a model whose output has stop_gradient=False.
import numpy as np
import paddle


class Detector(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 6)

    def forward(self, data):
        return {"bbox": self.fc(data["image"])}


def detect_face(model, image):
    data = {"image": paddle.to_tensor(image, dtype='float32')}
    model.eval()
    detection = model(data)
    assert not detection['bbox'].stop_gradient  # the output is part of a graph (torch: requires_grad=True)
    detection = detection['bbox'].numpy()
    return detection


out = detect_face(Detector(), np.random.rand(3, 4))
print("ok", out.shape)
