"""Torch runs of the project's own code for the bugs that a case's FIXED tree still holds.

    .venv/bin/python bench/realbugs/fixed_tree_bugs.py --mirrors /work/.mirror [ID ...]

A case's fixed tree is the project at the fixing commit; sometimes that commit still holds another real bug (fixed
later, often as another case of the corpus). gradsight's warning on it is then right, and `score.py` should not count
it as a false "new on fixed" finding. Each such finding is listed in the case's `fixed_tree_known_bugs`
(manifest.json: code, path, the source line's text, the evidence) and proven here by running the REAL files of the
fixing commit (taken from the mirror with `git archive`) under torch; only modules the run never reaches are stubbed
(a progress bar, scikit-learn's metrics, a version check over the network). Each check prints CONFIRMED or raises.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import pathlib
import subprocess
import sys
import tarfile
import tempfile
import types


def materialise(mirrors: pathlib.Path, repo: str, commit: str, paths: list[str], dest: pathlib.Path) -> None:
    git_dir = mirrors / repo.replace("/", "+") / "repo"
    if (git_dir / ".git").is_dir():        # a mirror kept with a work tree
        git_dir = git_dir / ".git"
    data = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "--format=tar", commit, *paths],
                          check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")


@contextlib.contextmanager
def on_path(root: pathlib.Path, stubs: dict[str, types.ModuleType]):
    before = set(sys.modules)
    saved = {k: sys.modules.get(k) for k in stubs}
    sys.modules.update(stubs)
    sys.path.insert(0, str(root))
    try:
        yield
    finally:
        sys.path.remove(str(root))
        for k in set(sys.modules) - before:
            del sys.modules[k]
        for k, v in saved.items():
            if v is not None:
                sys.modules[k] = v


def torchcam_fixed(mirrors: pathlib.Path, tmp: pathlib.Path) -> None:
    """torchcam_full_backward_hook_inplace_relu, fixed tree (frgfm/torch-cam@8a39f07), GS430 at gradcam.py:45.

    The fix's forward hook `_hook_g` calls `output.register_hook(self._store_grad)` with no guard. ScoreCAM runs the
    model under `torch.no_grad()`; the project's example script (scripts/cam_example.py at this commit) builds every
    extractor on one model first, so GradCAM's forward hook is still attached while ScoreCAM scores its masked
    inputs, and register_hook raises. torch-cam's PR #80 (2769630, 40 minutes later) guarded the hook with
    `if self._hooks_enabled:`.
    """
    import torch
    from torch import nn

    materialise(mirrors, "frgfm/torch-cam", "8a39f07757046e256a28bf65df96e52258d19401", ["torchcam/cams"], tmp)
    pkg = types.ModuleType("torchcam")
    pkg.__path__ = [str(tmp / "torchcam")]                 # skip torchcam/__init__ (matplotlib/PIL overlay utils)
    with on_path(tmp, {"torchcam": pkg}):
        from torchcam import cams
        model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                              nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(1), nn.Linear(8, 10)).eval()
        img = torch.rand(1, 3, 32, 32)
        # scripts/cam_example.py at 8a39f07: every extractor on the same model, then one after the other
        extractors = [cams.__dict__[name](model, "2", input_shape=(3, 32, 32)) for name in ("ScoreCAM", "GradCAM")]
        for extractor in extractors:
            extractor._hooks_enabled = False
        score_cam = extractors[0]
        score_cam._hooks_enabled = True
        scores = model(img)
        try:
            score_cam(scores.squeeze(0).argmax().item(), scores)
        except RuntimeError as exc:
            assert "cannot register a hook on a tensor that doesn't require gradient" in str(exc), exc
        else:
            raise AssertionError("expected GradCAM's forward hook to raise under ScoreCAM's no_grad")
        # the same extractor alone (GradCAM's hooks cleared first) works: the raise comes from the unguarded hook
        extractors[1].clear_hooks()
        scores = model(img)
        score_cam(scores.squeeze(0).argmax().item(), scores)
    print("CONFIRMED torchcam_full_backward_hook_inplace_relu: GS430@gradcam.py:45")


def gradcam_fixed(mirrors: pathlib.Path, tmp: pathlib.Path) -> None:
    """gradcam_full_backward_hook_inplace, fixed tree (jacobgil/pytorch-grad-cam@a9511f6), GS430 at
    activations_and_gradients.py:25: the same file is the buggy tree of the case gradcam_hook_on_no_grad_output
    (same sha256), whose fix (a6d8b8f) adds the guard. The hooked model is run under no_grad, as ScoreCAM does.
    """
    import torch
    from torch import nn

    materialise(mirrors, "jacobgil/pytorch-grad-cam", "a9511f6bbc11f3f4bba7e14548fa4ae91722752c",
                ["pytorch_grad_cam/activations_and_gradients.py"], tmp)
    pkg = types.ModuleType("pytorch_grad_cam")
    pkg.__path__ = [str(tmp / "pytorch_grad_cam")]          # skip __init__ (cv2, ttach, every CAM class)
    with on_path(tmp, {"pytorch_grad_cam": pkg}):
        from pytorch_grad_cam.activations_and_gradients import ActivationsAndGradients
        model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1),
                              nn.Flatten(1), nn.Linear(8, 4))
        acts = ActivationsAndGradients(model, [model[0]], None)
        acts(torch.rand(1, 3, 8, 8)).sum().backward()         # GradCAM's grad-mode pass works
        try:
            with torch.no_grad():                              # ScoreCAM's scoring passes
                acts(torch.rand(1, 3, 8, 8))
        except RuntimeError as exc:
            assert "cannot register a hook on a tensor that doesn't require gradient" in str(exc), exc
        else:
            raise AssertionError("expected the forward hook to raise under no_grad")
    print("CONFIRMED gradcam_full_backward_hook_inplace: GS430@activations_and_gradients.py:25")


def dctr_fixed(mirrors: pathlib.Path, tmp: pathlib.Path) -> None:
    """dctr_dien_aux_loss_inplace_accum, fixed tree (shenweichen/DeepCTR-Torch@752bf37), GS426 at basemodel.py:365.

    `add_regularization_loss` (called from the models' `__init__`) adds `weight_decay * norm(w)` into `self.reg_loss`
    once; `fit` adds `self.reg_loss` to every step's loss and backwards it with retain_graph=True. After the first
    `optim.step()` changed the embedding weights in place, the second backward raises "modified by an inplace
    operation": the bug of the later case dctr_reg_loss_built_at_init (fixed in 6f1589f, v0.2.2).
    """
    import numpy as np
    import torch
    import torch._dynamo  # noqa: F401  (imported before the stubs: it probes sys.modules' specs)

    materialise(mirrors, "shenweichen/DeepCTR-Torch", "752bf373ca133e287d0b944e374825248fc18cf5",
                ["deepctr_torch"], tmp)

    class Bar:                                                 # tqdm: a progress bar around the batches
        def __init__(self, it, **kw):
            self.it = it

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

        def __iter__(self):
            return iter(self.it)

        def close(self):
            pass

    tqdm = types.ModuleType("tqdm")
    tqdm.tqdm = Bar
    sklearn = types.ModuleType("sklearn")
    metrics = types.ModuleType("sklearn.metrics")
    metrics.__all__ = []
    sklearn.metrics = metrics
    version = types.ModuleType("deepctr_torch.utils")           # a pypi version check in a thread (network)
    version.check_version = lambda v: None
    stubs = {"tqdm": tqdm, "sklearn": sklearn, "sklearn.metrics": metrics, "deepctr_torch.utils": version}
    with on_path(tmp, stubs):
        from deepctr_torch.inputs import SparseFeat
        from deepctr_torch.models import WDL
        torch.manual_seed(0)
        cols = [SparseFeat("a", 10), SparseFeat("b", 10)]
        model = WDL(cols, cols, dnn_hidden_units=(8,), l2_reg_embedding=1e-5, device="cpu")
        model.compile("adam", "binary_crossentropy")
        x = {"a": np.random.randint(0, 10, 64), "b": np.random.randint(0, 10, 64)}
        y = np.random.randint(0, 2, 64).astype("float32")
        try:
            model.fit(x, y, batch_size=32, epochs=1, verbose=0)
        except RuntimeError as exc:
            # "... modified by an inplace operation", or for the rows of a 2-D weight the loop `for w in weight`
            # unbinds: "Output 0 of Unbind is a view and its base ... has been modified inplace"
            assert "modified by an inplace operation" in str(exc) or "has been modified inplace" in str(exc), exc
        else:
            raise AssertionError("expected the second step's backward to raise")
        # the same model and data with `self.reg_loss` holding no init-time graph train cleanly
        model.reg_loss = torch.zeros((1,))
        model.fit(x, y, batch_size=32, epochs=2, verbose=0)
    print("CONFIRMED dctr_dien_aux_loss_inplace_accum: GS426@basemodel.py:365")


def audiolm_stft_fixed(mirrors: pathlib.Path, tmp: pathlib.Path) -> None:
    """audiolm_stft_discr_stale_gen_grads, fixed tree (lucidrains/audiolm-pytorch@5058cc4), GS515 at trainer.py:349.

    The fix zeroes the STFT discriminator's optimizer before the discriminator backward, but each multi-scale
    discriminator optimizer (`getattr(self, f'multiscale_discr_optimizer_{ind}')`) is still zeroed only after its
    step, so its step applies the generator loss's gradient too: the bug of the later case
    audiolm_multiscale_discr_stale_gen_grads (fixed in daeedb2). The project's own `SoundStreamTrainer.train_step`,
    `multiscale_discriminator_iter` and `unwrapped_soundstream` (with the module's `exists`/`accum_log` helpers) are
    compiled from the fixed file and run on a small codec with the SoundStream interface (the generator loss adds
    a hinge term per multi-scale discriminator; the discriminator losses come separately on detached
    reconstructions), a stand-in accelerator (`backward` is `loss.backward`), and SGD with lr=0 so that the
    gradient each multi-scale optimizer steps with can be recorded and compared.
    """
    import ast
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    materialise(mirrors, "lucidrains/audiolm-pytorch", "5058cc446b970aa63b54193d80127c8d6f235e8c",
                ["audiolm_pytorch/trainer.py"], tmp)
    tree = ast.parse((tmp / "audiolm_pytorch" / "trainer.py").read_text(encoding="utf-8"))
    helpers = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in ("exists", "accum_log")]
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "SoundStreamTrainer")
    methods = [n for n in cls.body if isinstance(n, ast.FunctionDef)
               and n.name in ("train_step", "multiscale_discriminator_iter", "unwrapped_soundstream")]
    assert len(methods) == 3, [m.name for m in methods]
    real = ast.ClassDef(name="Real", bases=[], keywords=[], body=methods, decorator_list=[])
    module = ast.fix_missing_locations(ast.Module(body=[*helpers, real], type_ignores=[]))
    ns = {"torch": torch}
    exec(compile(module, "audiolm_pytorch/trainer.py", "exec"), ns)

    class Codec(nn.Module):                                   # SoundStream's training interface, tiny
        def __init__(self):
            super().__init__()
            self.enc = nn.Linear(4, 4)
            self.stft_discriminator = nn.Linear(4, 1)
            self.discriminators = nn.ModuleList([nn.Linear(4, 1) for _ in range(2)])

        def forward(self, x, return_loss_breakdown=False, return_discr_loss=False,
                    return_discr_losses_separately=False, apply_grad_penalty=False):
            recon = self.enc(x)
            if return_discr_loss:
                fake = recon.detach()
                out = [("stft", F.relu(1 + self.stft_discriminator(fake)).mean()
                        + F.relu(1 - self.stft_discriminator(x)).mean())]
                out += [(f"scale:{i}", F.relu(1 + d(fake)).mean() + F.relu(1 - d(x)).mean())
                        for i, d in enumerate(self.discriminators)]
                return out
            recon_loss = (recon - x).abs().mean()
            loss = recon_loss - self.stft_discriminator(recon).mean() - sum(d(recon).mean() for d in self.discriminators)
            return (loss, (recon_loss,)) if return_loss_breakdown else loss

    class Accel:
        device = "cpu"
        is_main_process = False

        def backward(self, loss, **kw):
            loss.backward(**kw)

        def unwrap_model(self, m):
            return m

        def log(self, *a, **k):
            pass

    used = []

    class Recording(torch.optim.SGD):                         # records the gradient its step applies
        def step(self, closure=None):
            used.append(self.param_groups[0]["params"][0].grad.clone())
            return super().step(closure)

    class Trainer(ns["Real"]):
        device = property(lambda self: self.accelerator.device)
        is_main = property(lambda self: self.accelerator.is_main_process)

        def print(self, msg):
            pass

    torch.manual_seed(0)
    wave = torch.randn(8, 4)
    t = Trainer()
    t.soundstream, t.accelerator = Codec(), Accel()
    t.steps, t.apply_grad_penalty_every, t.grad_accum_every = torch.tensor([1.0]), 4, 1
    t.max_grad_norm = t.discr_max_grad_norm = None
    t.optim = torch.optim.SGD(t.soundstream.enc.parameters(), lr=0.0)
    t.discr_optim = torch.optim.SGD(t.soundstream.stft_discriminator.parameters(), lr=0.0)
    for key, discr in t.multiscale_discriminator_iter():      # as the trainer's __init__ does
        setattr(t, key, Recording(discr.parameters(), lr=0.0))
    t.dl_iter = iter([(wave,)] * 2)
    t.train_step()
    d0 = t.soundstream.discriminators[0]
    own = torch.autograd.grad(t.soundstream(wave, return_discr_loss=True)[1][1], d0.weight)[0]
    gen = torch.autograd.grad(t.soundstream(wave), d0.weight)[0]
    assert not torch.allclose(used[0], own), "expected the generator loss's gradient in the step"
    assert torch.allclose(used[0], own + gen, atol=1e-6), (used[0], own, gen)
    print("CONFIRMED audiolm_stft_discr_stale_gen_grads: GS515@trainer.py:349")


def nowcasting_fixed(mirrors: pathlib.Path, tmp: pathlib.Path) -> None:
    """nowcasting_convlstm_peephole_not_registered, fixed tree (Hzzone/Precipitation-Nowcasting@1e38d21a), GS516 at
    nowcasting/models/convLSTM.py:17-19.

    The fix writes `self.Wci = nn.Parameter(torch.zeros(...)).to(cfg.GLOBAL.DEVICE)`; config.py sets
    `DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")`. On a GPU `.to()` returns a copy that is
    not a Parameter, so the peephole weights are again missing from `parameters()` and `state_dict()`. Run on an
    NVIDIA H200 (torch 2.11+cu130, the fixed file itself, sha256 4c91a6f5...): `named_parameters()` lists only
    `_conv.weight` and `_conv.bias`. Where no GPU is at hand this runs the same file with the device config.py would
    pick, else `meta` (another non-CPU device, with the same `.to()` semantics); on the CPU alone `.to()` returns the
    Parameter itself and the weights are registered.
    """
    import torch

    materialise(mirrors, "Hzzone/Precipitation-Nowcasting", "1e38d21aec77522dcbce9c1ecdd2dab766112788",
                ["nowcasting/models/convLSTM.py"], tmp)
    device = torch.device("cuda" if torch.cuda.is_available() else "meta")
    ns = types.SimpleNamespace
    config = types.ModuleType("nowcasting.config")   # config.py asserts its author's home folders exist
    config.cfg = ns(GLOBAL=ns(DEVICE=device), HKO=ns(BENCHMARK=ns(IN_LEN=5)))
    with on_path(tmp, {"nowcasting.config": config}):
        from nowcasting.models.convLSTM import ConvLSTM
        net = ConvLSTM(8, 16, (2, 8, 8), 3)
    names = [n for n, _ in net.named_parameters()]
    assert names == ["_conv.weight", "_conv.bias"], names
    assert "Wci" not in net.state_dict() and type(net.Wci) is torch.Tensor
    print(f"CONFIRMED nowcasting_convlstm_peephole_not_registered ({device}): GS516@convLSTM.py:17-19")


CHECKS = {"torchcam_full_backward_hook_inplace_relu": torchcam_fixed,
          "gradcam_full_backward_hook_inplace": gradcam_fixed,
          "dctr_dien_aux_loss_inplace_accum": dctr_fixed,
          "audiolm_stft_discr_stale_gen_grads": audiolm_stft_fixed,
          "nowcasting_convlstm_peephole_not_registered": nowcasting_fixed}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirrors", type=pathlib.Path, required=True)
    ap.add_argument("ids", nargs="*")
    args = ap.parse_args()
    for cid in args.ids or list(CHECKS):
        with tempfile.TemporaryDirectory() as tmp:
            CHECKS[cid](args.mirrors, pathlib.Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
