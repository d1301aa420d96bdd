"""`gradsight trace FILE`: the command-line front end of the tracer.

The main CLI (`gradsight.cli`) mounts this as a subcommand by calling `add_arguments(subparser)` and, when
chosen, `run_from_args(args)`. It also runs alone: ``python -m gradsight.trace.cli FILE ...``.

Exit codes: 0 the trace ran and found nothing; 1 findings, or the script raised; 2 usage or I/O error,
or the trace could not run (timeout, no torch in that interpreter, ...); 130 / 143 interrupted by SIGINT /
SIGTERM (the traced script's process group is killed and its temporary folder removed first).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading

from . import exit_code, format_text, relativize, run_trace


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the Python script to run under the tracer")
    parser.add_argument("--function", metavar="NAME",
                        help="import FILE (not as __main__) and call NAME() with no arguments")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                        help="auto: CUDA if available; cpu: run CUDA code on the CPU (default: auto)")
    parser.add_argument("--max-steps", type=_positive_int, default=20, metavar="N",
                        help="stop after N optimizer steps (or N backward calls) (default: 20)")
    parser.add_argument("--timeout", type=_positive_float, default=60.0, metavar="S",
                        help="wall-clock limit in seconds (default: 60)")
    parser.add_argument("--memory-mb", type=_positive_int, default=4096, metavar="M",
                        help="memory limit of the traced process in MiB (default: 4096)")
    parser.add_argument("--python", metavar="PATH", default=None,
                        help="the interpreter to run the script with (default: this one)")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")


def run_from_args(args: argparse.Namespace) -> int:
    try:
        with open(args.file, "rb"):
            pass
    except OSError as exc:
        print(f"gradsight trace: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    cancel = threading.Event()
    received: list[int] = []
    with _signals_cancel(cancel, received):
        result = run_trace(args.file, function=args.function, device=args.device, max_steps=args.max_steps,
                           timeout=args.timeout, memory_mb=args.memory_mb, python=getattr(args, "python", None),
                           cancel=cancel)
    if received:
        # run_trace has already ended the script's process group and removed its temporary folder.
        name = signal.Signals(received[0]).name
        print(f"gradsight trace: interrupted by {name}; the traced script was stopped", file=sys.stderr)
        return 128 + received[0]
    result = relativize(result)
    if args.output_format == "json":
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(format_text(result))
    return exit_code(result)


@contextlib.contextmanager
def _signals_cancel(cancel: threading.Event, received: list[int]):
    """While the trace runs, SIGINT (Ctrl-C) and SIGTERM set `cancel` instead of killing this process:
    run_trace then stops the traced script's whole process group and removes its temporary folder, and
    the caller exits with 128 + the signal number. Only the main thread may install handlers; elsewhere
    (an embedding program) the caller's own handling applies."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}

    def handler(signum, _frame):
        if not received:
            received.append(signum)
        cancel.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            previous[sig] = signal.signal(sig, handler)
        except (ValueError, OSError):
            pass
    try:
        yield
    finally:
        for sig, old in previous.items():
            try:
                signal.signal(sig, old)
            except (ValueError, OSError):
                pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gradsight trace",
                                     description="Run a script under autograd instrumentation.")
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
