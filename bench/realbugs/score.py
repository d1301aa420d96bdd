"""Recall of gradsight on real autograd bug fixes taken from public repository history.

    .venv/bin/python bench/realbugs/score.py                      # fetch the trees (if needed) and score
    .venv/bin/python bench/realbugs/score.py --fetch-only         # only materialise bench/realbugs/.trees/
    .venv/bin/python bench/realbugs/score.py --engine-path DIR    # score another gradsight source tree (DIR/gradsight)
    .venv/bin/python bench/realbugs/score.py --repros             # run every case's torch reproduction
    .venv/bin/python bench/realbugs/score.py --label after --write-doc   # rewrite the section in docs/recall.md

bench/realbugs/manifest.json lists every case: the repository, the fixing commit and its parent, the files
the fix touched, the lines of the BUGGY file (the parent's version) that the fix changed (`fixed_lines`),
the bug kind, its effect (raises / silent / memory) and a one-line truth statement. The source files are
not stored in this repository (they belong to their authors): this script materialises them into
bench/realbugs/.trees/<id>/{buggy,fixed}/<path> (gitignored), from a local mirror of the repository when
one is given (`--mirrors DIR`, holding `<owner>+<name>/repo` git directories, as the team's fetch tool
makes them) or else from raw.githubusercontent.com at the pinned commits, and checks each file against the
sha256 in the manifest.

Scoring, per case:

* FOUND AT THE FIXED LINE: some finding of severity warning or error on the buggy version stands on one of
  the case's `fixed_lines` (exact line, no tolerance).
* FOUND ELSEWHERE: warning/error findings on other lines of the buggy files (listed, not scored).
* INFO AT THE FIXED LINE: an information/hint finding on a fixed line (listed, not scored).
* NEW ON FIXED: warning/error findings on the fixed version whose code and source line text do not appear
  among the buggy version's findings (a finding the fix did not remove is not counted as new, since it is
  about code the fix did not touch). All warnings/errors on the fixed versions are listed too.
* KNOWN ON FIXED: a new finding on the fixed version that the case's `fixed_tree_known_bugs` lists (same code,
  path and source line text): the fixing commit still holds that real bug, proven by running the project's own
  files at that commit under torch (bench/realbugs/fixed_tree_bugs.py). Listed, not counted as new.

gradsight is run as `gradsight check --output-format json --no-cache` on all trees in one call.

`--whole-repo` checks each case as a user with the whole project open would: every `.py` file of the
repository (plus the project markers pyproject.toml and setup.cfg) at the parent commit and at the fixing
commit is materialised from the mirror into bench/realbugs/.trees/_repos/<owner>+<name>@<commit>/ (one tree
per repository and commit, shared by the cases that need it; mirrors only), and gradsight is run once per
case and side on the CASE FILES ONLY, from that tree with `--project-root` set to it, so that imports resolve
to the project's own files as in the user's checkout. The per-case run times are printed and recorded.
Exit status: 0 when the run worked (whatever the numbers), 2 when gradsight could not be run.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import pathlib
import posixpath
import signal
import subprocess
import sys
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
MANIFEST = HERE / "manifest.json"
TREES = HERE / ".trees"
CACHE = REPO / "bench" / ".cache"
DOC = REPO / "docs" / "recall.md"
LOUD = ("warning", "error")
MARK_START = "<!-- realbugs:start -->"
MARK_END = "<!-- realbugs:end -->"


def load_manifest() -> list[dict]:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))["cases"]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _git_dir(mirrors: pathlib.Path | None, repo: str) -> pathlib.Path | None:
    if mirrors is None:
        return None
    base = mirrors / repo.replace("/", "+") / "repo"
    for cand in (base / ".git", base):
        if (cand / "HEAD").is_file():
            return cand
    return None


def _read_blob(case: dict, commit: str, path: str, mirrors: pathlib.Path | None) -> bytes:
    git_dir = _git_dir(mirrors, case["repo"])
    if git_dir is not None:
        proc = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], capture_output=True)
        if proc.returncode == 0:
            return proc.stdout
    url = f"https://raw.githubusercontent.com/{case['repo']}/{commit}/{path}"
    with urllib.request.urlopen(url, timeout=60) as resp:  # noqa: S310 - a fixed https host
        return resp.read()


def materialise(cases: list[dict], mirrors: pathlib.Path | None, log=print) -> None:
    """Write every case's buggy and fixed files under .trees/, verified against the manifest's hashes."""
    for case in cases:
        for side, commit in (("buggy", case["parent"]), ("fixed", case["commit"])):
            # Sibling files (bench/realbugs/siblings.py) sit next to the case files so that imports resolve;
            # one that does not exist at this side's commit is left out.
            for f in [*case["files"], *case.get("siblings", [])]:
                target = TREES / case["id"] / side / f["path"]
                want = f[f"{side}_sha256"]
                if want is None:
                    continue
                if target.is_file() and _sha(target.read_bytes()) == want:
                    continue
                data = _read_blob(case, commit, f["path"], mirrors)
                if _sha(data) != want:
                    raise SystemExit(f"{case['id']}: {side} {f['path']} at {commit[:10]} has sha256 {_sha(data)}, "
                                     f"the manifest pins {want}")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                log(f"  fetched {case['id']}/{side}/{f['path']}")


def repo_tree(case: dict, commit: str) -> pathlib.Path:
    """Where the whole repository of `case` at `commit` is materialised (`--whole-repo`)."""
    return TREES / "_repos" / f"{case['repo'].replace('/', '+')}@{commit[:12]}"


WHOLE_MARKERS = ("pyproject.toml", "setup.cfg")


def materialise_whole(cases: list[dict], mirrors: pathlib.Path | None, log=print) -> None:
    """Every .py file (and project marker) of each case's repository at its parent and fixing commits, from the
    mirror, into repo_tree(); the case files are checked against the manifest's hashes."""
    import io
    import shutil
    import tarfile

    for case in cases:
        git_dir = _git_dir(mirrors, case["repo"])
        if git_dir is None:
            raise SystemExit(f"{case['id']}: --whole-repo needs a local mirror of {case['repo']} (--mirrors)")
        for side, commit in (("buggy", case["parent"]), ("fixed", case["commit"])):
            root = repo_tree(case, commit)
            if not (root / ".complete").is_file():
                # `git archive` refuses a pathspec that matches nothing: only the kinds of file the tree has.
                listing = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "--name-only", commit],
                                         capture_output=True, text=True, check=True).stdout.splitlines()
                names = {posixpath.basename(n) for n in listing}
                specs = [f":(glob)**/{m}" for m in WHOLE_MARKERS if m in names]
                if any(n.endswith(".py") for n in names):
                    specs.append(":(glob)**/*.py")
                proc = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "--format=tar", commit, "--", *specs],
                                      capture_output=True)
                if proc.returncode != 0:
                    raise SystemExit(f"{case['id']}: git archive {commit[:10]} failed: {proc.stderr.decode()[-300:]}")
                tmp = root.with_name(root.name + ".tmp")
                shutil.rmtree(tmp, ignore_errors=True)
                tmp.mkdir(parents=True)
                with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
                    # Regular files only (no links), each kept inside the tree.
                    members = [m for m in tar.getmembers() if m.isfile() and not m.name.startswith(("/", "..")) and
                               ".." not in pathlib.PurePosixPath(m.name).parts]
                    tar.extractall(tmp, members=members, filter="data")
                (tmp / ".complete").write_text(commit + "\n", encoding="utf-8")
                shutil.rmtree(root, ignore_errors=True)
                tmp.rename(root)
                log(f"  materialised {root.relative_to(TREES)} ({len(members)} files)")
            for f in case["files"]:
                target = root / f["path"]
                want = f[f"{side}_sha256"]
                if want is not None and (not target.is_file() or _sha(target.read_bytes()) != want):
                    raise SystemExit(f"{case['id']}: {side} {f['path']} in {root.name} does not match the manifest's "
                                     "sha256")


def case_file(case: dict, side: str, path: str, whole: bool) -> pathlib.Path:
    if whole:
        return repo_tree(case, case["parent"] if side == "buggy" else case["commit"]) / path
    return TREES / case["id"] / side / path


def run_whole_repo(cases: list[dict], engine_path: str | None,
                   timeout: float | None) -> tuple[list[dict], str, list[str], dict[str, float]]:
    """One gradsight run per case and side on the case files only, with the whole repository as the project
    (`--project-root`); returns the findings, where the engine came from, the timed-out ids and the seconds
    each case took (both sides)."""
    import time

    findings: list[dict] = []
    where = "?"
    slow: list[str] = []
    seconds: dict[str, float] = {}
    for case in cases:
        t0 = time.monotonic()
        for side, commit in (("buggy", case["parent"]), ("fixed", case["commit"])):
            root = repo_tree(case, commit)
            files = [case_file(case, side, f["path"], True) for f in case["files"]]
            files = [f for f in files if f.is_file()]
            if not files:
                continue
            try:
                found, where = run_gradsight(files, engine_path, timeout=timeout, project_root=root)
                findings += found
            except subprocess.TimeoutExpired:
                slow.append(case["id"])
                print(f"  {case['id']}: gradsight did not finish in {timeout:g} s", file=sys.stderr)
                break
        seconds[case["id"]] = round(time.monotonic() - t0, 2)
        print(f"  {case['id']}: {seconds[case['id']]:.1f} s", file=sys.stderr)
    return findings, where, slow, seconds


def run_per_case(cases: list[dict], engine_path: str | None, timeout: float) -> tuple[list[dict], str, list[str]]:
    """One gradsight run per case (both sides), each with a time limit; returns the findings, where the
    engine came from, and the ids of the cases whose run did not finish in time."""
    findings: list[dict] = []
    where = "?"
    slow: list[str] = []
    for case in cases:
        try:
            found, where = run_gradsight([TREES / case["id"] / side for side in ("buggy", "fixed")], engine_path,
                                         timeout=timeout)
            findings += found
        except subprocess.TimeoutExpired:
            slow.append(case["id"])
            print(f"  {case['id']}: gradsight did not finish in {timeout:g} s", file=sys.stderr)
    return findings, where, slow


def run_gradsight(files: list[pathlib.Path], engine_path: str | None,
                  timeout: float | None = None, project_root: pathlib.Path | None = None) -> tuple[list[dict], str]:
    env = dict(os.environ)
    python = REPO / ".venv" / "bin" / "python"
    cmd = [str(python if python.exists() else sys.executable), "-m", "gradsight", "check", "--output-format", "json",
           "--no-cache", "--exit-zero"]
    if engine_path:
        env["PYTHONPATH"] = engine_path + os.pathsep + env.get("PYTHONPATH", "")
    probe = subprocess.run([cmd[0], "-c", "import gradsight; print(gradsight.__file__)"], capture_output=True,
                           text=True, env=env)
    where = probe.stdout.strip()
    if project_root is not None:
        cmd += ["--project-root", str(project_root)]
    # A session of its own, so that a time-out ends gradsight's worker processes too, not just the CLI.
    child = subprocess.Popen([*cmd, *map(str, files)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env, cwd=REPO, start_new_session=True)
    try:
        stdout, stderr = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        raise
    proc = subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)
    # With --exit-zero a working run exits 0 and prints a JSON list (`[]` when clean); anything else (an
    # empty output, a traceback, another exit status) means gradsight did not run, and must not be
    # scored as "nothing found".
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        data = None
    if not isinstance(data, list):
        print(f"gradsight check did not print a JSON list (exit {proc.returncode}):\n{proc.stdout[-1500:]}\n"
              f"{proc.stderr[-1500:]}", file=sys.stderr)
        raise SystemExit(2)
    if proc.returncode != 0:
        print(f"gradsight check failed (exit {proc.returncode}):\n{proc.stderr[-1500:]}", file=sys.stderr)
        raise SystemExit(2)
    return data, where


def _key(path: pathlib.Path) -> str:
    return str(path.resolve())


def score(cases: list[dict], findings: list[dict], whole: bool = False) -> list[dict]:
    by_file: dict[str, list[dict]] = {}
    for f in findings:
        p = pathlib.Path(f["path"])
        if not p.is_absolute():
            p = REPO / p
        by_file.setdefault(_key(p), []).append(f)
    rows = []
    for case in cases:
        row = {"id": case["id"], "repo": case["repo"], "commit": case["commit"][:10], "kind": case["kind"],
               "effect": case["effect"], "hit": [], "info_hit": [], "elsewhere": [], "fixed_all": [], "new_on_fixed": [],
               "known_on_fixed": []}
        known = {(k["code"], k["path"], k["line_text"].strip()) for k in case.get("fixed_tree_known_bugs", [])}
        for f in case["files"]:
            buggy = case_file(case, "buggy", f["path"], whole)
            fixed = case_file(case, "fixed", f["path"], whole)
            btext = buggy.read_text(encoding="utf-8", errors="replace").splitlines() if buggy.is_file() else []
            ftext = fixed.read_text(encoding="utf-8", errors="replace").splitlines() if fixed.is_file() else []
            fixed_lines = set(f["fixed_lines"])
            seen = set()
            name = pathlib.PurePosixPath(f["path"]).name
            for g in by_file.get(_key(buggy), []):
                tag = f"{g['code']}@{name}:{g['line']}"
                src = btext[g["line"] - 1].strip() if 0 < g["line"] <= len(btext) else ""
                seen.add((g["code"], src))
                if g["severity"] in LOUD:
                    (row["hit"] if g["line"] in fixed_lines else row["elsewhere"]).append(tag)
                elif g["line"] in fixed_lines:
                    row["info_hit"].append(f"{tag} ({g['severity']})")
            for g in by_file.get(_key(fixed), []):
                if g["severity"] not in LOUD:
                    continue
                tag = f"{g['code']}@{name}:{g['line']}"
                row["fixed_all"].append(tag)
                src = ftext[g["line"] - 1].strip() if 0 < g["line"] <= len(ftext) else ""
                if (g["code"], src) in seen:
                    continue
                if (g["code"], f["path"], src) in known:
                    row["known_on_fixed"].append(tag)
                else:
                    row["new_on_fixed"].append(tag + " " + g["message"][:160])
        rows.append(row)
    return rows


def head_commit() -> str:
    proc = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return proc.stdout.strip() or "?"


def report(rows: list[dict], meta: dict) -> str:
    n = len(rows)
    hits = sum(1 for r in rows if r["hit"])
    new = sum(1 for r in rows if r["new_on_fixed"])
    out = [f"realbugs: {meta['label']} · engine {meta['engine']} · tree at {meta['commit']} · {meta['date']}",
           f"found at the fixed line: {hits}/{n} = {hits / n:.0%}",
           f"cases with a new warning/error on the fixed version: {new}/{n}", ""]
    for r in rows:
        mark = "HIT " if r["hit"] else ("TIME" if r.get("timed_out") else "miss")
        extra = []
        if r["hit"]:
            extra.append("at " + ", ".join(r["hit"]))
        if r["info_hit"]:
            extra.append("info " + ", ".join(r["info_hit"]))
        if r["elsewhere"]:
            extra.append("elsewhere " + ", ".join(r["elsewhere"]))
        if r["new_on_fixed"]:
            extra.append("NEW ON FIXED " + " | ".join(r["new_on_fixed"]))
        if r.get("known_on_fixed"):
            extra.append("known bug on fixed (fixed_tree_known_bugs) " + ", ".join(r["known_on_fixed"]))
        took = f" [{r['seconds']:.1f} s]" if r.get("seconds") is not None else ""
        out.append(f"{mark} {r['id']:<40} {r['effect']:<7}{took} {'; '.join(extra)}")
    return "\n".join(out)


def run_repros(cases: list[dict]) -> int:
    """Run each case's repro.py with the project's interpreter (torch needed); each prints CONFIRMED."""
    python = REPO / ".venv" / "bin" / "python"
    exe = str(python if python.exists() else sys.executable)
    failed = 0
    for case in cases:
        script = REPO / case["repro"]
        proc = subprocess.run([exe, str(script)], capture_output=True, text=True, timeout=300)
        ok = proc.returncode == 0 and "CONFIRMED" in proc.stdout
        failed += not ok
        tail = "" if ok else " :: " + (proc.stderr or proc.stdout).strip().splitlines()[-1:][0][:200]
        print(f"{'confirmed' if ok else 'FAILED   '} {case['id']}{tail}")
    print(f"\n{len(cases) - failed}/{len(cases)} reproductions confirmed")
    return 1 if failed else 0


def repro_findings(cases: list[dict], engine_path: str | None) -> dict[str, list[str]]:
    """Warning/error codes gradsight reports on each case's self-contained reproduction (a diagnostic: it
    tells a missing rule from missing evidence in the project's code)."""
    findings, _ = run_gradsight([REPO / c["repro"] for c in cases], engine_path)
    out: dict[str, list[str]] = {c["id"]: [] for c in cases}
    for f in findings:
        if f["severity"] in LOUD:
            out.setdefault(pathlib.Path(f["path"]).parent.name, []).append(f"{f['code']}:{f['line']}")
    return out


def doc_section(rows: list[dict], meta: dict, first: dict | None, cases: list[dict],
                repro: dict[str, list[str]] | None = None) -> str:
    """The real-bug section of docs/recall.md (between the realbugs markers)."""
    by_id = {c["id"]: c for c in cases}
    n = len(rows)
    hits = sum(1 for r in rows if r["hit"])
    new = sum(1 for r in rows if r["new_on_fixed"])
    effects = {e: sum(1 for c in cases if c["effect"] == e) for e in ("raises", "silent", "memory")}
    repos = sorted({c["repo"] for c in cases})
    out = [MARK_START, "", "## Real bug fixes from public repository history", "",
           f"`bench/realbugs/manifest.json` holds {n} commits from {len(repos)} public repositories that fixed an "
           "autograd bug",
           f"({effects['raises']} that raise, {effects['silent']} with silently wrong or missing gradients, "
           f"{effects['memory']} that keep graphs alive): "
           + ", ".join(f"`{r}`" for r in repos) + ".",
           "Each case names the fixing commit and its parent, the files, the lines of the buggy file that the fix",
           "changed, the bug kind, a one-line truth statement, and `hidden_by` (the code shape that hid it from",
           "gradsight). The files are not copied into this repository; `bench/realbugs/score.py` fetches them",
           "(from local git mirrors or GitHub at the pinned commits, checked against sha256) into",
           "`bench/realbugs/.trees/`. Every case has a torch reproduction, `bench/realbugs/<id>/repro.py`: our",
           "own minimal program with the shape of the buggy and fixed statements, which shows the bug's effect",
           "under torch 2.13 and its absence after the fix (`score.py --repros`: all confirmed). Where the repro",
           "can only model the project's context (library internals), its `repro_note` says so.",
           "None of the repositories the team keeps for an independent check is used.",
           "",
           "How the cases were chosen: commit messages and small diffs of 41 fetched repositories were mined for",
           "autograd fixes (`detach`, in-place, `retain_graph`, `no_grad`, `zero_grad`, `requires_grad`, memory",
           "leaks; `git log --grep` and a diff scan for lines that only gained `.detach()`/`.item()`/...), and",
           "GitHub threads about such fixes pointed to seven training repositories. Each candidate's diff was",
           "read; fixes for dtype, device or API changes were left out, and so were cases whose code already",
           "made the fix unnecessary (one such case, found later, is listed under `removed` in the manifest).",
           "The cases were chosen before gradsight was run on them; the first-try line below is the engine before any "
           "change made for them, and later runs say what was changed for which case (after the section).",
           "The cases marked `\"batch\": 2` and `3` were mined the same way by the fifth session (from 90 and 84 other",
           "repositories), without running gradsight while choosing (\"Batch 2\" and \"Batch 3\" below); their own first",
           "try is the engine of that session's start (batch 2) and of its end (batch 3). Batches 4 and 5 were mined",
           "blind by the sixth session's helpers from repositories fetched for them (none read before; the commits",
           "they read and rejected are in `batch4-*.json` and `batch5-*.json`): batch 4's first try is the engine of",
           "the moment it arrived (after the session's batch-3 changes), batch 5's the session's final engine, run",
           "once, after every change.",
           "",
           "Scoring: a case is **found** when a warning or error stands on one of its fixed lines of the buggy",
           "file (exact line; where the fix only inserts a statement, the statements just before and after the",
           "insertion point). Findings elsewhere in the buggy file and any warning/error on the fixed version",
           "are listed. Re-run: `.venv/bin/python bench/realbugs/score.py` (add `--engine-path DIR` to score",
           "another checkout's `server/`).", "", "### Results", ""]
    if first:
        fm = first["meta"]
        out.append(f"* **First try** (the first {first['cases']} cases, before any engine change made for them): engine at commit "
                   f"`{fm['commit']}`, {fm['date']}: **{first['found_at_fixed_line']}/{first['cases']} found at "
                   f"the fixed line**; {first['cases_with_new_on_fixed']} cases with a warning/error on the fixed "
                   "version.")
    for batch in (2, 3, 4, 5, 6):
        path = CACHE / f"realbugs-batch{batch}-first-try.json"
        if not path.is_file():
            continue
        bn = json.loads(path.read_text(encoding="utf-8"))
        ids = {c["id"] for c in cases if c.get("batch") == batch}
        brows = [r for r in bn["rows"] if r["id"] in ids]
        session = "fifth" if batch <= 3 else "sixth" if batch <= 5 else "ninth"
        out.append(f"* **First try, batch {batch}** (the {len(brows)} cases mined blind in the {session} session): engine at "
                   f"commit `{bn['meta']['commit']}`, {bn['meta']['date']}: **{sum(1 for r in brows if r['hit'])}/{len(brows)} "
                   f"found at the fixed line**; {sum(1 for r in brows if r['new_on_fixed'])} cases with a "
                   "warning/error on the fixed version.")
    out.append(f"* **{meta['label']}**: engine at commit `{meta['commit']}`, {meta['date']}: **{hits}/{n} found at "
               f"the fixed line** ({hits / n:.0%}); {new} cases with a new warning/error on the fixed version.")
    if meta.get("timed_out"):
        out.append(f"  gradsight did not finish within the per-case time limit on {len(meta['timed_out'])} cases "
                   "(scored as missed): " + ", ".join(f"`{i}`" for i in meta["timed_out"]) + ".")
    classes = json.loads(MANIFEST.read_text(encoding="utf-8")).get("shape_classes", {})
    if classes:
        out += ["", "### What hid the missed bugs, by kind of code shape", ""]
        missed = [by_id[r["id"]] for r in rows if not r["hit"]]
        for key, what in sorted(classes.items(), key=lambda kv: -sum(c.get("shape_class") == kv[0] for c in missed)):
            ids = [c["id"] for c in missed if c.get("shape_class") == key]
            if ids:
                out.append(f"* **{key}** ({len(ids)}): {what}. " + ", ".join(f"`{i}`" for i in ids) + ".")
    out += ["", "### Per case (this run), and the shape that hid each missed bug", "",
            "`repro` gives the warnings/errors gradsight reports on the case's self-contained reproduction (which",
            "holds the buggy and the fixed form): a code there with ✘ under found means the rule exists but the",
            "project's code hides the evidence; none means no rule fires even on the plain shape.", "",
            "| case | repository @ commit | effect | found | elsewhere / on fixed | repro | shape that hid it |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        c = by_id[r["id"]]
        found = ", ".join(r["hit"]) if r["hit"] else ("✘ (timed out)" if r.get("timed_out") else "✘")
        other = "; ".join(r["elsewhere"] + [f"fixed: {t}" for t in r["fixed_all"]]) or "—"
        shape = "—" if r["hit"] else c["hidden_by"].replace("|", "\\|")
        rep = ", ".join((repro or {}).get(r["id"], [])) or "—"
        out.append(f"| `{r['id']}` | {c['repo']}@{c['commit'][:8]} | {c['effect']} | {found} | {other} | {rep} | {shape} |")
    out += ["", MARK_END, ""]
    return "\n".join(out)


def write_doc(section: str) -> None:
    text = DOC.read_text(encoding="utf-8") if DOC.is_file() else ""
    if MARK_START in text and MARK_END in text:
        before = text.split(MARK_START)[0]
        after = text.split(MARK_END, 1)[1].lstrip("\n")
        text = before + section + after
    else:
        text = text.rstrip("\n") + "\n\n" + section
    DOC.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_mirrors = os.environ.get("GRADSIGHT_MIRRORS") or ("/work/.mirror" if pathlib.Path("/work/.mirror").is_dir()
                                                                else None)
    ap.add_argument("--mirrors", type=pathlib.Path, default=default_mirrors,
                    help="folder of <owner>+<name>/repo git mirrors to read the files from (else GitHub raw)")
    ap.add_argument("--fetch-only", action="store_true")
    ap.add_argument("--engine-path", help="a folder that holds the gradsight package to use (put first on PYTHONPATH)")
    ap.add_argument("--label", default="current", help="a name for this run (first-try, after, ...)")
    ap.add_argument("--commit", help="the gradsight commit the engine comes from (default: this tree's HEAD)")
    ap.add_argument("-k", help="only cases whose id contains this")
    ap.add_argument("--batch", type=int, help="only the cases of this blind batch (manifest `batch`)")
    ap.add_argument("--repros", action="store_true", help="run the torch reproductions instead of scoring")
    ap.add_argument("--per-case-timeout", type=float,
                    help="run gradsight once per case with this time limit (seconds); a case that does not finish "
                         "is scored as missed and marked timed out")
    ap.add_argument("--whole-repo", action="store_true",
                    help="materialise each case's whole repository (.py files) at both commits and check the case "
                         "files with it as the project (one run per case and side, timed)")
    ap.add_argument("--write-doc", action="store_true",
                    help="rewrite the real-bug section of docs/recall.md (with the first-try run, if recorded)")
    args = ap.parse_args(argv)

    if args.whole_repo and args.write_doc:
        ap.error("--write-doc rewrites the default mode's section; --whole-repo results are not written there")
    cases = load_manifest()
    if args.k:
        cases = [c for c in cases if args.k in c["id"]]
    if args.batch is not None:
        cases = [c for c in cases if c.get("batch") == args.batch]
    if args.repros:
        return run_repros(cases)
    if args.whole_repo:
        materialise_whole(cases, args.mirrors)
    else:
        materialise(cases, args.mirrors)
    if args.fetch_only:
        return 0
    # Each side of each case is checked as a folder (case files and their siblings), as a user would check
    # a project; only the case files' findings are scored.
    files = [TREES / c["id"] / side for c in cases for side in ("buggy", "fixed")]
    slow: list[str] = []
    seconds: dict[str, float] = {}
    if args.whole_repo:
        findings, where, slow, seconds = run_whole_repo(cases, args.engine_path, args.per_case_timeout)
    elif args.per_case_timeout:
        findings, where, slow = run_per_case(cases, args.engine_path, args.per_case_timeout)
    else:
        findings, where = run_gradsight(files, args.engine_path)
    rows = score(cases, findings, whole=args.whole_repo)
    for r in rows:
        r["timed_out"] = r["id"] in slow
        if args.whole_repo:
            r["seconds"] = seconds.get(r["id"])
    meta = {"label": args.label, "engine": where, "commit": args.commit or head_commit(), "timed_out": slow,
            "whole_repo": args.whole_repo,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    print(report(rows, meta))
    CACHE.mkdir(parents=True, exist_ok=True)
    out = CACHE / f"realbugs-{args.label}.json"
    hits = sum(1 for r in rows if r["hit"])
    out.write_text(json.dumps({"meta": meta, "cases": len(rows), "found_at_fixed_line": hits,
                               "cases_with_new_on_fixed": sum(1 for r in rows if r["new_on_fixed"]),
                               "rows": rows}, indent=1) + "\n", encoding="utf-8")
    print(f"\nwrote {out.relative_to(REPO)}")
    if args.write_doc:
        first_path = CACHE / "realbugs-first-try.json"
        first = json.loads(first_path.read_text(encoding="utf-8")) if first_path.is_file() else None
        write_doc(doc_section(rows, meta, first, cases, repro_findings(cases, args.engine_path)))
        print(f"wrote {DOC.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
