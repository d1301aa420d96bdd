"""Library inference with jedi (engine/libinfer.py): static answers about installed libraries' values."""

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("jedi")

from gradsight.engine.libinfer import LibClass, LibraryInference  # noqa: E402

FAKELIB = textwrap.dedent('''\
    import torch
    import torch.nn as nn

    RAN = open("ran-marker", "w")  # a library that is imported would leave this file behind


    class Backbone(nn.Module):
        pass


    class AutoModel(Backbone):
        @classmethod
        def from_pretrained(cls, name):
            return cls()


    class Tokenizer:
        @classmethod
        def from_pretrained(cls, name):
            return cls()


    def build_optimizer(params):
        return torch.optim.AdamW(params, lr=1e-3)
''')

SCRIPT = textwrap.dedent('''\
    from fakelib import AutoModel, Tokenizer, build_optimizer
    model = AutoModel.from_pretrained("tiny")
    tok = Tokenizer.from_pretrained("tiny")
    opt = build_optimizer(model.parameters())
    n = len([1, 2])
''')


@pytest.fixture()
def lib(tmp_path):
    site = tmp_path / "site"
    (site / "fakelib").mkdir(parents=True)
    (site / "fakelib" / "__init__.py").write_text(FAKELIB)
    (tmp_path / "train.py").write_text(SCRIPT)
    return tmp_path, LibraryInference(str(tmp_path), sys_path=[str(site)])


def test_factory_result_is_a_module_subclass(lib):
    root, infer = lib
    got = infer.classify(SCRIPT, str(root / "train.py"), 2, 0)
    assert got == LibClass("fakelib.AutoModel", is_module=True, is_optimizer=False)


def test_optimizer_factory_and_plain_class(lib):
    root, infer = lib
    path = str(root / "train.py")
    opt = infer.classify(SCRIPT, path, 4, 0)
    assert opt is not None and opt.is_optimizer and not opt.is_module and opt.qualname.endswith("AdamW")
    tok = infer.classify(SCRIPT, path, 3, 0)
    assert tok == LibClass("fakelib.Tokenizer", is_module=False, is_optimizer=False)


def test_answers_are_cached_per_file_version(lib):
    root, infer = lib
    path = str(root / "train.py")
    infer.classify(SCRIPT, path, 2, 0)
    infer.classify(SCRIPT, path, 2, 0)
    assert infer.asked == 1
    edited = SCRIPT + "x = 1\n"
    assert infer.classify(edited, path, 2, 0).is_module
    assert infer.asked == 1  # an edit elsewhere (imports and the line unchanged) asks nothing
    moved = "\n" + SCRIPT
    assert infer.classify(moved, path, 3, 0).is_module
    assert infer.asked == 1  # the same statement one line down: the same answer
    renamed = SCRIPT.replace("from fakelib import AutoModel, Tokenizer,", "from fakelib import Tokenizer as AutoModel,")
    assert infer.classify(renamed, path, 2, 0) == LibClass("fakelib.Tokenizer", is_module=False, is_optimizer=False)
    assert infer.asked == 2  # a changed import asks again


def test_unknown_names_answer_none(lib):
    root, infer = lib
    assert infer.classify("y = undefined_thing()\n", str(root / "other.py"), 1, 0) is None


def test_library_code_is_never_run(lib, tmp_path):
    # The fake library writes a marker file when imported; inference runs in a child interpreter whose cwd is
    # the temp dir and which then reports whether torch or the library was loaded in-process.
    root, _ = lib
    code = ("import sys\nfrom gradsight.engine.libinfer import LibraryInference\n"
            f"i = LibraryInference({str(root)!r}, sys_path=[{str(root / 'site')!r}])\n"
            f"r = i.classify(open({str(root / 'train.py')!r}).read(), {str(root / 'train.py')!r}, 2, 0)\n"
            "print(r.is_module, sorted(m for m in ('torch', 'fakelib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True []"
    assert not (tmp_path / "ran-marker").exists()


PARAMLESS = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    class Maxsim(nn.Module):
        def __init__(self, args):
            super().__init__()
            self.batch_size = args.bs
            self.dim = args.dim

        def forward(self, Q, D):
            return self.score(Q, D[:self.batch_size])

        def score(self, Q, D):
            return (Q @ D.t()).max(1).values


    class Scaled(nn.Module):
        def __init__(self, dim: int, eps=1e-6):
            super().__init__()
            self.scale = dim ** -0.5
            self.eps = eps

        def forward(self, x):
            return x * self.scale + self.eps


    class Head(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.proj = nn.Linear(dim, dim)

        def forward(self, x):
            return self.proj(x)


    class Wrapper(nn.Module):
        def __init__(self, encoder):
            super().__init__()
            self.encoder = encoder

        def forward(self, x):
            return self.encoder(x)


    class Weighted(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.w = nn.Parameter(torch.ones(dim))

        def forward(self, x):
            return x * self.w


    class Lazy(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.layers = []
            self.width = cfg.width

        def build(self):
            self.layers.append(nn.Linear(self.width, self.width))


    class Derived(Maxsim):
        pass
''')


@pytest.mark.parametrize("name, free", [("Maxsim", True), ("Scaled", True), ("Head", False), ("Wrapper", False),
                                        ("Weighted", False), ("Lazy", False), ("Derived", False)])
def test_module_classes_that_create_no_parameters(tmp_path, name, free):
    # A module class deriving from `nn.Module` itself whose code stores only plain data on `self` is parameter
    # free: its outputs have its inputs' grad state. Layers, parameters, modules handed in, stores into stored
    # attributes and library bases (which may register anything) all answer "not free".
    site = tmp_path / "site"
    (site / "paramlib").mkdir(parents=True)
    (site / "paramlib" / "__init__.py").write_text(PARAMLESS)
    script = f"from paramlib import {name}\nm = {name}(1)\n"
    (tmp_path / "use.py").write_text(script)
    got = LibraryInference(str(tmp_path), sys_path=[str(site)]).classify(script, str(tmp_path / "use.py"), 2, 0)
    assert got is not None and got.is_module and got.param_free is free
