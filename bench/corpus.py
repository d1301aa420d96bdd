"""The pinned real-world corpus that gradsight's benchmarks and precision check run on.

    python bench/corpus.py                 # download (if needed), verify, extract, print sizes
    python bench/corpus.py --update-lock   # re-download and rewrite bench/corpus.lock.json
    python bench/corpus.py --list          # print the corpus files, one a line
    python bench/corpus.py --training      # the training-code corpus (pinned git commits), see below
    python bench/corpus.py --training --update-lock   # re-extract it and record its hashes in the lock

Every project comes from one PyPI wheel, fetched with `pip download --no-deps --only-binary=:all:`
into `bench/.cache/wheels/` (gitignored) and checked against the sha256 in `bench/corpus.lock.json`.
Only the selected `.py` files are extracted, as plain text, into `bench/.corpus/<project>/<path in
the wheel>`. Nothing from a wheel is ever imported or executed. A project whose extraction is
complete (a `.complete` marker holding the wheel's sha256) is skipped, so the script is idempotent
and the second run does no network or disk work beyond hashing the cached wheels once.

Other scripts use `ensure_corpus()` and `corpus_files()` from here.

The TRAINING corpus (`TRAINING`, for bench/precision.py --training) is different: training loops,
trainers, RL agents, GANs and meta-learning code live in repositories, not in wheels. Each project is one
public GitHub repository pinned at a commit, with regexes selecting files of that commit. Its files are
read from a local git mirror when `--mirrors DIR` (or $GRADSIGHT_MIRRORS) holds `<owner>+<name>/repo`,
else from the commit's tarball at codeload.github.com; they are extracted into
`bench/.corpus/training/<project>/<path>` and checked against the lock's `training` section (sha256 over
the sorted `path\0sha256(file)` list, file and line counts). Nothing is executed. The team keeps some
repositories for an independent check (docs/precision.md names them); none of them is used here.
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


@dataclass(frozen=True)
class GitProject:
    name: str  # the folder under bench/.corpus/training
    repo: str  # owner/name on GitHub
    commit: str  # the full commit id
    include: tuple[str, ...]  # regexes, full-matched against the path in the repository
    kind: str  # what the code is: "training" (loops, trainers, RL, GANs, meta-learning) or "library"


TRAINING_DIR = CORPUS / "training"
TRAINING: tuple[GitProject, ...] = (
    GitProject("speechbrain-recipes", "speechbrain/speechbrain", "9c826ef3937bac885c8a6ca86c6889a30f256fb5",
               (r"recipes/.*train[^/]*\.py",), "training"),
    GitProject("tianshou", "thu-ml/tianshou", "f2402056b03acafeedf2518a5088db55add004ab",
               (r"(tianshou|examples)/.*\.py",), "training"),
    GitProject("torchrl", "pytorch/rl", "ae9719f17b1517af5c2523a36c4616f003ee55cf",
               (r"(torchrl/objectives|torchrl/trainers|sota-implementations)/.*\.py",), "training"),
    GitProject("opennmt", "OpenNMT/OpenNMT-py", "97111d97551c24857076a4102eabdb468b35cff4",
               (r"onmt/.*\.py",), "training"),
    GitProject("allennlp-training", "allenai/allennlp", "80fb6061e568cb9d6ab5d45b661e86eb61b92c82",
               (r"allennlp/training/.*\.py",), "training"),
    GitProject("parlai-torch-agents", "facebookresearch/ParlAI", "a29567f7ce76992fd1f03c51ba9e3b155a37ea51",
               (r"parlai/core/torch_.*\.py",), "training"),
    GitProject("monai-engines", "Project-MONAI/MONAI", "d388d1c6fec8cb3a0eebee5b5a0b9776ca59ca83", (r"monai/engines/.*\.py",), "training"),
    GitProject("pyg-examples", "pyg-team/pytorch_geometric", "5c6461b2305ad068a6d61165b3c55852a11aaa41", (r"examples/.*\.py",), "training"),
    GitProject("timm-train", "huggingface/pytorch-image-models", "aa4b5850c1543fa488abf260f18390eda46cf85d", (r"(train|validate)\.py",),
               "training"),
    GitProject("mmengine", "open-mmlab/mmengine", "254342938d9bde1775c39ea7d5181c5d294026c4", (r"mmengine/(runner|optim|model)/.*\.py",),
               "training"),
    GitProject("deeprl", "ShangtongZhang/DeepRL", "c0968b5c046314af09944843cdf06f4100c6bb95", (r"deep_rl/.*\.py",), "training"),
    GitProject("td3", "sfujim/TD3", "34770ccdcb51df6f6c7d85c1ba7e40d71b940d16", (r".*\.py",), "training"),
    GitProject("sac", "pranz24/pytorch-soft-actor-critic", "c1805660b3961694be54079a355155a5cad492f5", (r".*\.py",), "training"),
    GitProject("minimalrl", "seungeunrho/minimalRL", "c8efed8481e3cd40e9739cfde220a55522555b57", (r".*\.py",), "training"),
    GitProject("deep-rl-algorithms", "p-christ/Deep-Reinforcement-Learning-Algorithms-with-PyTorch", "4835bac8557fdacff1735eca004e35ea5a4b7443",
               (r"agents/.*\.py",), "training"),
    GitProject("pytorch-maml", "tristandeleu/pytorch-maml", "44104272a0140b35e2223ba68750e7e715315653", (r".*\.py",), "training"),
    GitProject("maml-pytorch", "dragen1860/MAML-Pytorch", "98a00d41724c133bd29619a2fb2cc46dd128a368", (r".*\.py",), "training"),
    GitProject("stylegan2-rosinality", "rosinality/stylegan2-pytorch", "bef283a1c24087da704d16c30abc8e36e63efa0e", (r".*\.py",), "training"),
    GitProject("stylegan2-ada", "NVlabs/stylegan2-ada-pytorch", "d72cc7d041b42ec8e806021a205ed9349f87c6a4", (r"training/.*\.py",), "training"),
    GitProject("simclr", "sthalles/SimCLR", "1848fc934ad844ae630e6c452300433fe99acfd9", (r".*\.py",), "training"),
    GitProject("pytorch-vae", "AntixK/PyTorch-VAE", "a6896b944c918dd7030e7d795a8c13e5c6345ec7", (r".*\.py",), "training"),
    GitProject("guided-diffusion", "openai/guided-diffusion", "22e0df8183507e13a7813f8d38d51b072ca1e67c", (r".*\.py",), "training"),
    GitProject("time-series-library", "thuml/Time-Series-Library", "4e938a1767106324dd753b2a44832bf870a0252e", (r"(exp|models)/.*\.py",),
               "training"),
    GitProject("open-clip-train", "mlfoundations/open_clip", "89fb801f1e6087880e951fc8354b8a2077b79c6d",
               (r"src/(open_clip_train|training)/.*\.py",), "training"),
    GitProject("k-diffusion", "crowsonkb/k-diffusion", "4601bf085320592473f681a62808ed873d17fad5", (r".*\.py",), "training"),
    GitProject("pyro-examples", "pyro-ppl/pyro", "ff6ae1c9572591791aae8842bcd702fcf0b46fd6", (r"examples/.*\.py",), "training"),
    GitProject("sentence-transformers-train", "UKPLab/sentence-transformers", "85ec64559f4414aa536eca4bf53538291e0a333f",
               (r"sentence_transformers/(losses|trainer|fit_mixin).*\.py",), "training"),
    GitProject("awd-lstm-lm", "salesforce/awd-lstm-lm", "1d466ec5875675ca6b6f0caacbb741240a29da9e", (r".*\.py",), "training"),
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
    return path.resolve().relative_to(CORPUS.resolve()).parts[0]


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


# ---------------------------------------------------------------------------------------------------------
# The training-code corpus (pinned git commits).


def _mirror_git_dir(mirrors: pathlib.Path | None, repo: str) -> pathlib.Path | None:
    if mirrors is None:
        return None
    base = mirrors / repo.replace("/", "+") / "repo"
    for cand in (base / ".git", base):
        if (cand / "HEAD").is_file():
            return cand
    return None


def _git_files(git_dir: pathlib.Path, project: GitProject) -> dict[str, bytes]:
    """The selected files of the pinned commit, read from a local git mirror."""
    listing = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", project.commit],
                             capture_output=True, text=True, check=True).stdout.splitlines()
    pats = [re.compile(p) for p in project.include]
    out: dict[str, bytes] = {}
    for row in listing:
        meta, _, name = row.partition("\t")
        # Only regular files (mode 100644/100755): a symbolic link's blob is its target path, not code,
        # and the tarball path skips links too.
        if not meta.startswith("100"):
            continue
        if name.endswith(".py") and any(p.fullmatch(name) for p in pats):
            out[name] = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{project.commit}:{name}"],
                                       capture_output=True, check=True).stdout
    return out


def _tarball_files(project: GitProject, log) -> dict[str, bytes]:
    """The selected files of the pinned commit, from GitHub's tarball of that commit."""
    import tarfile
    import urllib.request

    url = f"https://codeload.github.com/{project.repo}/tar.gz/{project.commit}"
    log(f"  downloading {url}")
    pats = [re.compile(p) for p in project.include]
    out: dict[str, bytes] = {}
    with urllib.request.urlopen(url, timeout=300) as resp:  # noqa: S310 - a fixed https host
        with tarfile.open(fileobj=resp, mode="r|gz") as tf:
            for member in tf:
                if not member.isfile():
                    continue
                name = member.name.split("/", 1)[1] if "/" in member.name else member.name
                if name.endswith(".py") and any(p.fullmatch(name) for p in pats):
                    fh = tf.extractfile(member)
                    if fh is not None:
                        out[name] = fh.read()
    return out


def _tree_digest(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + hashlib.sha256(files[name]).hexdigest().encode() + b"\n")
    return h.hexdigest()


def _line_count(data: bytes) -> int:
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)


def ensure_training_corpus(mirrors: pathlib.Path | None = None, update_lock: bool = False,
                           quiet: bool = False) -> dict[str, tuple[int, int]]:
    """Make bench/.corpus/training complete and verified; returns {project: (files, lines)}."""
    log = (lambda *_: None) if quiet else (lambda msg: print(msg, file=sys.stderr))
    if mirrors is None and os.environ.get("GRADSIGHT_MIRRORS"):
        mirrors = pathlib.Path(os.environ["GRADSIGHT_MIRRORS"])
    lock = load_lock()
    section = lock.setdefault("training", {})
    sizes: dict[str, tuple[int, int]] = {}
    changed = False
    for project in TRAINING:
        entry = section.get(project.name)
        dest = TRAINING_DIR / project.name
        marker = dest / ".complete"
        if marker.is_file() and entry and not update_lock:
            try:
                info = json.loads(marker.read_text(encoding="utf-8"))
                if info.get("sha256") == entry["sha256"] and info.get("commit") == project.commit:
                    sizes[project.name] = (info["files"], info["lines"])
                    continue
            except (ValueError, KeyError):
                pass
        log(f"{project.name} ({project.repo} @ {project.commit[:10]}):")
        git_dir = _mirror_git_dir(mirrors, project.repo)
        files = _git_files(git_dir, project) if git_dir else _tarball_files(project, log)
        digest = _tree_digest(files)
        if entry and not update_lock and entry.get("sha256") != digest:
            raise CorpusError(f"{project.name}: the selected files hash to {digest}, the lock pins {entry['sha256']}")
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        lines = 0
        for name, data in files.items():
            if ".." in name.split("/"):
                continue
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            lines += _line_count(data)
        marker.write_text(json.dumps({"sha256": digest, "commit": project.commit, "files": len(files),
                                      "lines": lines}) + "\n", encoding="utf-8")
        log(f"  extracted {len(files)} files, {lines:,} lines")
        sizes[project.name] = (len(files), lines)
        new_entry = {"repo": project.repo, "commit": project.commit, "include": list(project.include),
                     "kind": project.kind, "sha256": digest, "files": len(files), "lines": lines}
        if entry != new_entry:
            section[project.name] = new_entry
            changed = True
    if changed:
        lock["training"] = {p.name: section[p.name] for p in TRAINING if p.name in section}
        _write_lock(lock)
        log(f"wrote {LOCK.relative_to(BENCH.parent)}")
    return sizes


def training_files(project: str | None = None) -> list[pathlib.Path]:
    """Every training-corpus file (sorted, absolute); call ensure_training_corpus() first."""
    roots = [TRAINING_DIR / project] if project else [TRAINING_DIR / p.name for p in TRAINING]
    out: list[pathlib.Path] = []
    for root in roots:
        out.extend(sorted(p for p in root.rglob("*.py") if p.is_file()))
    return out


def training_project_of(path: pathlib.Path) -> str:
    return path.resolve().relative_to(TRAINING_DIR.resolve()).parts[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--update-lock", action="store_true",
                    help="download again and rewrite bench/corpus.lock.json with the observed hashes")
    ap.add_argument("--list", action="store_true", help="print the corpus files, one a line")
    ap.add_argument("--training", action="store_true", help="the training-code corpus (pinned git commits)")
    ap.add_argument("--mirrors", type=pathlib.Path, help="folder of <owner>+<name>/repo git mirrors (training corpus)")
    args = ap.parse_args(argv)
    if args.training:
        try:
            sizes = ensure_training_corpus(mirrors=args.mirrors, update_lock=args.update_lock)
        except CorpusError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        if args.list:
            for p in training_files():
                print(os.path.relpath(p))
            return 0
        print(f"{'project':<28} {'files':>6} {'lines':>9}")
        for name, (files, lines) in sizes.items():
            print(f"{name:<28} {files:>6} {lines:>9,}")
        print(f"{'total':<28} {sum(f for f, _ in sizes.values()):>6} {sum(n for _, n in sizes.values()):>9,}")
        return 0
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
