"""The pinned real-world corpus that gradsight's benchmarks and precision check run on.

    python bench/corpus.py                 # download (if needed), verify, extract, print sizes
    python bench/corpus.py --update-lock   # re-download and rewrite bench/corpus.lock.json
    python bench/corpus.py --list          # print the corpus files, one a line

Every project comes from one PyPI wheel, fetched with `pip download --no-deps --only-binary=:all:`
into `bench/.cache/wheels/` (gitignored) and checked against the sha256 in `bench/corpus.lock.json`.
Only the selected `.py` files are extracted, as plain text, into `bench/.corpus/<project>/<path in
the wheel>`. Nothing from a wheel is ever imported or executed. A project whose extraction is
complete (a `.complete` marker holding the wheel's sha256) is skipped, so the script is idempotent
and the second run does no network or disk work beyond hashing the cached wheels once.

Other scripts use `ensure_corpus()` and `corpus_files()` from here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass

BENCH = pathlib.Path(__file__).resolve().parent
CACHE = BENCH / ".cache"
WHEELS = CACHE / "wheels"
CORPUS = BENCH / ".corpus"
LOCK = BENCH / "corpus.lock.json"


@dataclass(frozen=True)
class Project:
    name: str  # the folder under bench/.corpus
    requirement: str  # what pip downloads
    include: tuple[str, ...]  # regexes, full-matched against the path inside the wheel
    pip_args: tuple[str, ...] = ()  # extra `pip download` arguments (platform-specific wheels)
    note: str = ""


_CP311_LINUX = ("--platform", "manylinux_2_28_x86_64", "--python-version", "3.11", "--implementation", "cp",
                "--abi", "cp311")

PROJECTS: tuple[Project, ...] = (
    Project("timm", "timm==1.0.31", (r"timm/models/.*\.py", r"timm/layers/.*\.py")),
    Project("transformers", "transformers==5.23.0",
            (r"transformers/models/(llama|bert|gpt2|t5|whisper)/modeling_[^/]*\.py",)),
    Project("pytorch-lightning", "pytorch-lightning==2.6.6", (r"pytorch_lightning/.*\.py",)),
    Project("torchvision", "torchvision==0.28.0", (r"torchvision/models/.*\.py",), _CP311_LINUX,
            note="binary wheel (manylinux x86_64, cp311); only its .py sources are extracted"),
    # The machine's pip serves the CPU build 2.13.0+cpu from local disk for `torch==2.13.0`
    # (PEP 440: `==2.13.0` matches local versions); the lock records the exact file.
    Project("torch", "torch==2.13.0", (r"torch/nn/.*\.py", r"torch/optim/.*\.py", r"torch/distributions/.*\.py"),
            _CP311_LINUX, note="served as the local CPU build; only .py sources of nn, optim, distributions"),
)


class CorpusError(RuntimeError):
    pass


def _sha256(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_lock() -> dict:
    if not LOCK.is_file():
        return {"projects": {}}
    return json.loads(LOCK.read_text(encoding="utf-8"))


def _write_lock(lock: dict) -> None:
    LOCK.write_text(json.dumps(lock, indent=2, sort_keys=False) + "\n", encoding="utf-8")


def _pip_download(project: Project, log) -> pathlib.Path:
    """Run `pip download` for one project and return the wheel it saved."""
    WHEELS.mkdir(parents=True, exist_ok=True)
    before = {p.name: p.stat().st_mtime_ns for p in WHEELS.glob("*.whl")}
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--no-input",
           "--disable-pip-version-check", "-d", str(WHEELS), *project.pip_args, project.requirement]
    log(f"  pip download {project.requirement} ...")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CorpusError(f"pip download {project.requirement} failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    # pip prints "Saved <path>" or "File was already downloaded <path>".
    m = re.findall(r"(?:Saved|File was already downloaded)\s+(\S+\.whl)", proc.stdout)
    if m:
        path = pathlib.Path(m[-1])
        return path if path.is_absolute() else (pathlib.Path.cwd() / path).resolve()
    changed = [p for p in WHEELS.glob("*.whl") if before.get(p.name) != p.stat().st_mtime_ns]
    dist = re.split(r"[=<>!~ ]", project.requirement)[0].replace("-", "_").lower()
    changed = [p for p in changed if p.name.lower().startswith(dist + "-")]
    if len(changed) != 1:
        raise CorpusError(f"cannot tell which wheel pip saved for {project.requirement}:\n{proc.stdout[-2000:]}")
    return changed[0]


def _wheel_version(filename: str) -> str:
    return filename.split("-")[1]


def _selected(names: list[str], project: Project) -> list[str]:
    pats = [re.compile(p) for p in project.include]
    out = []
    for name in names:
        if ".." in name.split("/") or name.startswith("/"):
            continue
        if any(p.fullmatch(name) for p in pats):
            out.append(name)
    return sorted(out)


def _fetch(project: Project, lock: dict, update_lock: bool, log) -> tuple[pathlib.Path, str]:
    """The verified wheel for a project (downloading it if it is not cached)."""
    entry = lock["projects"].get(project.name)
    if entry and not update_lock:
        cached = WHEELS / entry["wheel"]
        if cached.is_file():
            digest = _sha256(cached)
            if digest == entry["sha256"]:
                return cached, digest
            log(f"  cached {cached.name} does not match the lock; downloading again")
            cached.unlink()
    wheel = _pip_download(project, log)
    digest = _sha256(wheel)
    if entry and not update_lock:
        if wheel.name != entry["wheel"] or digest != entry["sha256"]:
            raise CorpusError(
                f"{project.name}: pip gave {wheel.name} sha256 {digest}, but the lock pins {entry['wheel']} "
                f"sha256 {entry['sha256']}. Run `python bench/corpus.py --update-lock` only if this change is "
                "intended.")
    return wheel, digest


def _extract(project: Project, wheel: pathlib.Path, digest: str, log) -> tuple[int, int]:
    dest = CORPUS / project.name
    marker = dest / ".complete"
    if marker.is_file():
        try:
            info = json.loads(marker.read_text(encoding="utf-8"))
            if info.get("sha256") == digest and info.get("include") == list(project.include):
                return info["files"], info["lines"]
        except (ValueError, KeyError):
            pass
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    files = lines = 0
    with zipfile.ZipFile(wheel) as zf:
        for name in _selected(zf.namelist(), project):
            data = zf.read(name)
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            files += 1
            lines += data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
    marker.write_text(json.dumps({"sha256": digest, "include": list(project.include), "files": files,
                                  "lines": lines}) + "\n", encoding="utf-8")
    log(f"  extracted {files} files into {dest.relative_to(BENCH.parent)}")
    return files, lines


def ensure_corpus(update_lock: bool = False, quiet: bool = False) -> dict[str, tuple[int, int]]:
    """Make bench/.corpus complete and verified; returns {project: (files, lines)}."""
    log = (lambda *_: None) if quiet else (lambda msg: print(msg, file=sys.stderr))
    lock = load_lock()
    lock.setdefault("projects", {})
    sizes: dict[str, tuple[int, int]] = {}
    changed = False
    for project in PROJECTS:
        entry = lock["projects"].get(project.name)
        marker = CORPUS / project.name / ".complete"
        # Fast path: extracted from the locked wheel already; no need to touch the wheel at all.
        if entry and not update_lock and marker.is_file():
            try:
                info = json.loads(marker.read_text(encoding="utf-8"))
                if info.get("sha256") == entry["sha256"] and info.get("include") == list(project.include):
                    sizes[project.name] = (info["files"], info["lines"])
                    continue
            except (ValueError, KeyError):
                pass
        log(f"{project.name}:")
        wheel, digest = _fetch(project, lock, update_lock, log)
        files, lines = _extract(project, wheel, digest, log)
        sizes[project.name] = (files, lines)
        requested = re.split(r"==", project.requirement)[-1]
        got = _wheel_version(wheel.name)
        new_entry = {
            "requirement": project.requirement,
            "requested_version": requested,
            "version": got,
            "wheel": wheel.name,
            "sha256": digest,
            "size": wheel.stat().st_size,
            "include": list(project.include),
            "files": files,
            "lines": lines,
        }
        if project.note:
            new_entry["note"] = project.note
        if got.split("+")[0] != requested:
            new_entry["note"] = (new_entry.get("note", "") + f"; requested {requested}, closest available {got}").strip("; ")
        if entry != new_entry and (update_lock or not entry):
            lock["projects"][project.name] = new_entry
            changed = True
    if changed:
        lock["generated_by"] = "python bench/corpus.py --update-lock"
        lock["projects"] = {p.name: lock["projects"][p.name] for p in PROJECTS if p.name in lock["projects"]}
        _write_lock(lock)
        log(f"wrote {LOCK.relative_to(BENCH.parent)}")
    return sizes


def project_python() -> pathlib.Path | None:
    """The repository's virtual environment's interpreter (where gradsight is installed), if there is one."""
    for cand in (BENCH.parent / ".venv" / "bin" / "python", BENCH.parent / ".venv" / "Scripts" / "python.exe"):
        if cand.exists():
            return cand
    return None


def reexec_in_project_venv() -> None:
    """Re-run the current script under .venv's python when gradsight is not importable here."""
    try:
        import gradsight  # noqa: F401
        return
    except ImportError:
        pass
    py = project_python()
    if py is None or os.environ.get("GRADSIGHT_BENCH_REEXEC"):
        raise SystemExit("gradsight is not importable; run with the project's venv: .venv/bin/python " + sys.argv[0])
    os.environ["GRADSIGHT_BENCH_REEXEC"] = "1"
    os.execv(str(py), [str(py), *sys.argv])


def gradsight_command() -> list[str]:
    """How to run the gradsight CLI: the console script beside this interpreter, else `python -m gradsight`."""
    exe = pathlib.Path(sys.executable).parent / ("gradsight.exe" if os.name == "nt" else "gradsight")
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-m", "gradsight"]


def corpus_files(project: str | None = None) -> list[pathlib.Path]:
    """Every corpus file (sorted, absolute); call ensure_corpus() first."""
    roots = [CORPUS / project] if project else [CORPUS / p.name for p in PROJECTS]
    out: list[pathlib.Path] = []
    for root in roots:
        out.extend(sorted(p for p in root.rglob("*.py") if p.is_file()))
    return out


def project_of(path: pathlib.Path) -> str:
    return path.resolve().relative_to(CORPUS).parts[0]


def count_lines(path: pathlib.Path) -> int:
    data = path.read_bytes()
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)


def print_sizes(sizes: dict[str, tuple[int, int]], out=sys.stdout) -> None:
    lock = load_lock().get("projects", {})
    print(f"{'project':<20} {'version':<12} {'files':>6} {'lines':>9}", file=out)
    for name, (files, lines) in sizes.items():
        print(f"{name:<20} {lock.get(name, {}).get('version', '?'):<12} {files:>6} {lines:>9,}", file=out)
    tf = sum(f for f, _ in sizes.values())
    tl = sum(n for _, n in sizes.values())
    print(f"{'total':<20} {'':<12} {tf:>6} {tl:>9,}", file=out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--update-lock", action="store_true",
                    help="download again and rewrite bench/corpus.lock.json with the observed hashes")
    ap.add_argument("--list", action="store_true", help="print the corpus files, one a line")
    args = ap.parse_args(argv)
    try:
        sizes = ensure_corpus(update_lock=args.update_lock)
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.list:
        for p in corpus_files():
            print(os.path.relpath(p))
        return 0
    print_sizes(sizes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
