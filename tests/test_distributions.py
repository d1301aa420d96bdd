"""`torch.distributions` in the analysis (engine/interp_dists.py): the torch facts it rests on, re-checked under the
pinned torch, and what the analysis concludes from them on programs that are also run."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from gradsight.analysis import analyze_source

torch = pytest.importorskip("torch")
D = torch.distributions


def _dists(mu, s):
    return [D.Normal(mu, s), D.Categorical(logits=mu), D.Bernoulli(logits=mu), D.Beta(mu.exp(), s),
            D.Independent(D.Normal(mu, s), 1), D.TransformedDistribution(D.Normal(mu, s), [D.TanhTransform()])]


def test_torch_sample_never_requires_grad_log_prob_does():
    mu, s = torch.zeros(3, requires_grad=True), torch.ones(3)
    for d in _dists(mu, s):
        x = d.sample()
        assert not x.requires_grad, type(d).__name__
        assert d.log_prob(x).requires_grad, type(d).__name__
        if d.has_rsample:
            assert d.rsample().requires_grad, type(d).__name__


def test_torch_entropy_may_depend_on_some_parameters_only():
    mu, s = torch.zeros(3, requires_grad=True), torch.ones(3)
    assert not D.Normal(mu, s).entropy().requires_grad  # why entropy/properties are "maybe" unless all require grad
    assert D.Normal(mu, s.clone().requires_grad_()).entropy().requires_grad


def test_torch_categorical_built_under_no_grad_has_no_history():
    logits = torch.zeros(3, requires_grad=True)
    with torch.no_grad():
        d = D.Categorical(logits=logits)
    assert not d.log_prob(torch.tensor(0)).requires_grad  # why a distribution built without grad is "unknown"


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


HEAD = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.distributions import Categorical, Normal

    actor = nn.Linear(4, 2)
    s = torch.randn(8, 4)
    """)


def _codes(code: str) -> list[tuple[str, int, str]]:
    return [(f.code, f.line, f.severity.value if hasattr(f.severity, "value") else str(f.severity))
            for f in analyze_source(code, "example.py").findings]


def test_numpy_of_log_prob_is_flagged_and_raises():
    code = HEAD + "dist = Categorical(logits=actor(s))\nlogp = dist.log_prob(dist.sample())\nprint(logp.numpy())\n"
    assert ("GS201", 9) in [(c, line) for c, line, _ in _codes(code)]
    proc = _run(code)
    assert proc.returncode != 0 and "requires grad" in proc.stderr


def test_loss_of_a_sample_only_is_flagged_and_raises():
    code = HEAD + "a = Normal(actor(s), 1.0).sample()\nloss = (a ** 2).mean()\nloss.backward()\n"
    assert ("GS401", 9) in [(c, line) for c, line, _ in _codes(code)]
    proc = _run(code)
    assert proc.returncode != 0 and "does not require grad" in proc.stderr


@pytest.mark.parametrize("tail", [
    # rsample keeps the graph: backward works.
    "a = Normal(actor(s), 1.0).rsample()\nloss = (a ** 2).mean()\nloss.backward()\n",
    # Entropy of a Normal whose scale has no history has none either: numpy() works.
    "print(Normal(actor(s), torch.ones(8, 2)).entropy().numpy())\n",
    # A distribution built under no_grad (Categorical normalises its logits then): its log_prob has no history.
    "with torch.no_grad():\n    dist = Categorical(logits=actor(s))\nprint(dist.log_prob(torch.zeros(8)).numpy())\n",
    # A sample turned into NumPy: it never requires grad.
    "print(Categorical(logits=actor(s)).sample().numpy())\n",
])
def test_valid_distribution_code_is_quiet_and_runs(tail):
    code = HEAD + tail
    assert [c for c, _, sev in _codes(code) if c in ("GS201", "GS401")] == []
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr


def test_distribution_values_show_in_hover_facts():
    code = HEAD + "dist = Normal(actor(s), 1.0)\nlogp = dist.log_prob(dist.sample())\n"
    facts = {(f.line, f.name): f for f in analyze_source(code, "example.py").facts}
    assert "requires grad" in facts[(8, "logp")].summary
    assert "no gradient" in facts[(8, "dist.sample()")].summary
