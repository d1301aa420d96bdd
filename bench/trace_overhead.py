"""How much does `gradsight trace` slow a training step down? Plain vs traced vs anomaly mode.

Usage:  python bench/trace_overhead.py [--steps N] [--rounds R] [--threads T] [--quick] [--device cpu|cuda] [--batch B]

Runs, in one process on the CPU (or, with ``--device cuda``, on a GPU), full training steps (forward, loss, zero_grad, backward, Adam step) of
two models at batch 32:

* mlp:          Linear(512,1024)-ReLU-Linear(1024,1024)-ReLU-Linear(1024,10)
* transformer:  nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024), sequence 64
* tiny-mlp:     Linear(32,64)-ReLU-Linear(64,1), the worst case (per-op cost dominates)

"traced" installs the same instrumentation the trace runner uses (function mode, saved-tensor hooks,
backward and optimizer wrappers) in-process; "anomaly" is torch.autograd.set_detect_anomaly(True).
Modes are interleaved round by round and the median step time is reported, so drifting machine load
hits all three alike. By default one torch thread and process CPU time (``--clock cpu``), which stay
meaningful on a shared machine; ``--clock wall --threads 0`` measures what a user waits for. Prints one
table with ratios to plain; the last column is the tracer's overhead as a share of anomaly mode's.

On CUDA the clock is always the wall clock and each step ends with ``torch.cuda.synchronize()``: kernels run
asynchronously, so a step's time is what the GPU and the Python thread together took. The tracer's cost is
per op on the Python side (the function mode, the hooks), so on a GPU, where a small model's kernels take
microseconds, its ratio to plain is larger than on the CPU; ``--batch`` shows how that shrinks as the
kernels grow.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import sys
import time

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "..", "server", "gradsight", "trace", "runner.py")


def load_runner(path=RUNNER):
    spec = importlib.util.spec_from_file_location("gradsight_trace_runner", os.path.abspath(path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BATCH = 32
DEVICE = "cpu"


def make_mlp():
    model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
    x = torch.randn(BATCH, 512)
    y = torch.randint(0, 10, (BATCH,))
    return model, x, y, nn.functional.cross_entropy


def make_transformer():
    model = nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, batch_first=True, dropout=0.1)
    x = torch.randn(BATCH, 64, 256)
    y = torch.randn(BATCH, 64, 256)
    return model, x, y, nn.functional.mse_loss


def make_tiny():
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
    x = torch.randn(BATCH, 32)
    y = torch.randn(BATCH, 1)
    return model, x, y, nn.functional.mse_loss


CLOCK = time.perf_counter


def _sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def run_steps(model, opt, x, y, loss_fn, steps):
    times = []
    for _ in range(steps):
        t0 = CLOCK()
        out = model(x)
        loss = loss_fn(out, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        _sync()
        times.append(CLOCK() - t0)
    return times


def bench(name, factory, runner, steps, rounds):
    torch.manual_seed(0)
    model, x, y, loss_fn = factory()
    model, x, y = model.to(DEVICE), x.to(DEVICE), y.to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    run_steps(model, opt, x, y, loss_fn, 3)  # warm up (allocator, lazy imports)
    samples = {"plain": [], "traced": [], "anomaly": []}
    for _ in range(rounds):
        samples["plain"] += run_steps(model, opt, x, y, loss_fn, steps)
        tracer = runner.Tracer(torch, os.path.abspath(__file__), DEVICE, 0, False)
        with runner.Instrumentation(tracer):
            samples["traced"] += run_steps(model, opt, x, y, loss_fn, steps)
        if tracer.internal_errors:
            raise SystemExit(f"tracer internal errors: {tracer.internal_errors}")
        with torch.autograd.detect_anomaly(check_nan=True):
            samples["anomaly"] += run_steps(model, opt, x, y, loss_fn, steps)
    med = {k: statistics.median(v) for k, v in samples.items()}
    return name, med


def main(argv=None):
    import warnings

    warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5, help="steps per mode per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (0: leave as is)")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="cpu: process CPU time, robust on a shared machine (default); wall: perf_counter")
    ap.add_argument("--quick", action="store_true", help="2 rounds of 3 steps (a smoke test)")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                    help="cuda: run the steps on the GPU (wall clock, synchronised per step)")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--runner", default=RUNNER, help="another runner.py to measure (an older commit's, for A/B)")
    args = ap.parse_args(argv)
    if args.quick:
        args.steps, args.rounds = 3, 2
    if args.threads:
        torch.set_num_threads(args.threads)
    global CLOCK, BATCH, DEVICE
    BATCH, DEVICE = args.batch, args.device
    if DEVICE == "cuda":
        if not torch.cuda.is_available():
            raise SystemExit("--device cuda: CUDA is not available")
        args.clock = "wall"
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    runner = load_runner(args.runner)
    rows = [bench(n, f, runner, args.steps, args.rounds)
            for n, f in (("mlp", make_mlp), ("transformer", make_transformer), ("tiny-mlp", make_tiny))]
    print(f"torch {torch.__version__}, python {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} cpus, torch threads {torch.get_num_threads()}, {args.clock} clock, batch {BATCH}, "
          f"device {torch.cuda.get_device_name() if DEVICE == 'cuda' else 'cpu'}, "
          f"median of {args.rounds}x{args.steps} steps per mode")
    print(f"{'model':<12} {'plain ms':>9} {'traced ms':>10} {'anomaly ms':>11} {'traced x':>9} {'anomaly x':>10} "
          f"{'overhead traced/anomaly':>24}")
    for name, med in rows:
        p, t, a = med["plain"], med["traced"], med["anomaly"]
        share = (t - p) / (a - p) if a > p else float("nan")
        print(f"{name:<12} {p * 1e3:9.2f} {t * 1e3:10.2f} {a * 1e3:11.2f} {t / p:9.2f} {a / p:10.2f} {share:24.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
