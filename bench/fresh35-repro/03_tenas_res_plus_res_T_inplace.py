"""fresh35 real: VITA-Group/TENAS lib/procedures/linear_region_counter.py:132 (GS309).

`LinearRegionCount.calc_LR` (reached from `Linear_Region_Collector.forward_batch_sample` -> `getLinearReginCount`,
which prune_tenas.py calls for every candidate op) runs `res += res.T` on a square matrix. Current torch refuses an
in-place op whose input overlaps the written tensor: every call raises (the README names Python 3.6.9 and CUDA 10.1;
which torch the authors used, and whether it raised there, was not checked).
"""
import torch

torch.manual_seed(0)
activations = torch.sign(torch.relu(torch.randn(12, 5)))        # the stored signs "after ReLU"
with torch.no_grad():
    res = torch.matmul(activations.half(), (1 - activations).T.half())
    try:
        res += res.T
    except RuntimeError as e:
        assert "refer to a single memory location" in str(e), e
        print("raises:", str(e)[:100])
    else:
        raise AssertionError("expected the overlap error")
    res2 = torch.matmul(activations.half(), (1 - activations).T.half())
    res2 = res2 + res2.T                                         # out of place: fine
    assert torch.equal(res2, res2.T)
print("OK: `res += res.T` raises on every call of calc_LR")
