"""GS370: a function rewrites its argument in place with a value from an op that saved it (`x /= torch.norm(x)`).

The raising shapes were run under torch 2.13 through the rule's own INVALID examples (test_rules_torch.py); these
programs check what the matcher takes and leaves, with no visible caller (the shape of library functions)."""

from gradsight.analysis import analyze_source

HEAD = "import torch\n\n\n"


def _lines(code: str, rule: str = "GS370"):
    return [f.line for f in analyze_source(code, "example.py").findings if f.code == rule]


def test_norm_then_divide_through_an_unknown_helper():
    # torchmetrics' pairwise cosine: the arguments come back from a validating helper of another module.
    code = ("import torch\nfrom .helpers import _check_input\n\n\n"
            "def _update(x, y=None, zero_diagonal=None):\n"
            "    x, y, zero_diagonal = _check_input(x, y, zero_diagonal)\n"
            "    norm = torch.norm(x, p=2, dim=1)\n"
            "    x /= norm.unsqueeze(1)\n"
            "    norm = torch.norm(y, p=2, dim=1)\n"
            "    y /= norm.unsqueeze(1)\n"
            "    distance = x @ y.T\n"
            "    if zero_diagonal:\n"
            "        distance.fill_diagonal_(0)\n"
            "    return distance\n")
    assert _lines(code) == [8, 10]


def test_taint_through_a_derived_name_and_inline():
    code = HEAD + ("def scaled(x, eps):\n"
                   "    s = x.std(0)\n"
                   "    d = s + eps\n"
                   "    x -= x.mean(0)\n"
                   "    x /= d\n"
                   "    return x.sum()\n\n\n"
                   "def noisy(c, scale):\n"
                   "    c += torch.randn_like(c) * c.std(0) * scale\n"
                   "    return c.mean()\n")
    assert _lines(code) == [8, 13]


def test_helper_that_returns_copies_is_quiet():
    # A helper this file defines that hands back new tensors: the writes go into the function's own copies.
    code = HEAD + ("def _prep(x, y):\n"
                   "    return x.float() / 255, y\n\n\n"
                   "def f(x, y):\n"
                   "    x, y = _prep(x, y)\n"
                   "    x /= x.norm()\n"
                   "    return x @ y\n")
    assert _lines(code) == []


def test_quiet_shapes():
    code = HEAD + (
        # Value-picking reductions save indices, not the input.
        "def stable(x):\n"
        "    m = x.max(dim=1, keepdim=True)[0]\n"
        "    x -= m\n"
        "    return x.exp().sum()\n\n\n"
        # The saved value only feeds `.item()`: its graph dies at once.
        "def clip(g, max_norm):\n"
        "    n = g.norm().item()\n"
        "    g *= max_norm / n\n"
        "    return n\n\n\n"
        # In place by name.
        "def normalize_(x):\n"
        "    x /= x.norm()\n"
        "    return None\n\n\n"
        # Rebound before the write: the function's own tensor.
        "def g(x):\n"
        "    x = x * 1.0\n"
        "    x /= x.norm()\n"
        "    return x.sum()\n\n\n"
        # A custom Function's forward runs without grad.
        "class Fn(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        n = x.norm()\n"
        "        x /= n\n"
        "        return x.clone()\n\n\n"
        # Decorated with no_grad.
        "@torch.no_grad()\n"
        "def renorm(w):\n"
        "    n = w.norm()\n"
        "    w /= n\n"
        "    return n\n")
    assert _lines(code) == []
