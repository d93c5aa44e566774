"""Taking in a release: its row in releases.toml (from PyPI), its series derived from a
neighbour's, exported, and its `patches/<version>/README.md`, generated from the patches
themselves (subjects, trailers, and the `Deviations from upstream ...:` paragraphs)."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from pathlib import Path
from typing import Callable

from . import BUILD, PATCHES, ROOT, MatrixError, cells, junit, safe, sdists, version_key
from .releases import (
    CI_PYTHON,
    RELEASES,
    Cell,
    Release,
    patched_versions,
    record_series,
    release,
    save,
    series,
    series_hash,
)
from .series import (
    apply_series,
    base_commit,
    derive_series,
    export_series,
    git,
    in_progress,
    make_tree,
    series_log,
)

TREES = BUILD / "trees"
UPSTREAM = "https://github.com/openai/openai-agents-python"


def _message(patch: Path) -> tuple[str, str]:
    """A patch's subject and body (everything before the diffstat)."""
    head = patch.read_text().split("\n---\n", 1)[0]
    subject = re.search(r"^Subject: \[PATCH\] (.*(?:\n .*)*)", head, re.M)
    body = head.split("\n\n", 1)[1] if "\n\n" in head else ""
    return (subject.group(1).replace("\n ", " ") if subject else patch.name), body


def _trailers(body: str) -> list[str]:
    lines = body.strip().splitlines()
    tail = lines[len(lines) - lines[::-1].index("") :] if "" in lines else lines
    return [t for t in tail if re.match(r"[\w-]+: ", t) and not t.startswith("Bug: ")]


def _deviations(body: str) -> list[str]:
    match = re.search(r"^Deviations from upstream[^\n]*:\n((?:[ -].*\n?)+)", body, re.M)
    if not match:
        return []
    items = re.split(r"\n(?=- )", match.group(1).strip())
    return [" ".join(line.strip() for line in item.splitlines()) for item in items]


def readme(version: str, patches: Path = PATCHES) -> str:
    """patches/<version>/README.md, from the series."""
    rel = release(version)
    files = series(version, patches)
    base = (
        f"upstream's tag `v{version}` (`{rel.tag}`)"
        if rel.tag
        else f"`{base_commit(files[0])}`, the PyPI sdist committed as `nox -s tree` does it (no "
        "upstream tag)"
    )
    out = [
        f"# agent-release series for openai-agents {version}",
        "",
        f"Generated from the patches by `nox -s export`. Base: {base}; `git am "
        f"patches/{version}/*.patch` onto it. Wheel: `{version}+agentrelease.{rel.build}` "
        f"(`nox -s build -- {version}`).",
        "",
    ]
    deviations = []
    for patch in files:
        subject, body = _message(patch)
        out.append(f"- `{patch.name}`: {subject}.")
        out += [f"  {t}" for t in _trailers(body)]
        deviations += _deviations(body)
    if (patches / version / "PULL_REQUEST.md").exists():
        out += ["", "`PULL_REQUEST.md`: the series written up as it would be filed upstream."]
    if deviations:
        out += ["", "Deviations from upstream, as the patches state them:", ""]
        out += [f"- {d.removeprefix('- ')}" for d in deviations]
    return "\n".join(out) + "\n"


def write_readme(version: str) -> Path:
    path = PATCHES / version / "README.md"
    safe.write_atomically(path, readme(version).encode())
    return path


def _unfinished(version: str, tree: Path, force: bool) -> str | None:
    """Why `tree` is not a series to export, if it is not."""
    if in_progress(tree):
        return f"has a {in_progress(tree)} in progress: finish or abort it, then export"
    changes = git(tree, "status", "--porcelain").splitlines()
    if changes:
        return f"has uncommitted changes ({changes[0][3:]}): commit or stash them, then export"
    have = len(list((PATCHES / version).glob("*.patch")))
    commits = len(series_log(tree))
    if commits < have and not force:
        return (
            f"has {commits} commits over its base but patches/{version}/ has {have} patches (an "
            "interrupted `nox -s tree`?): remove the tree and make it again, or pass --force to "
            "drop patches"
        )
    return None


def _dirty(path: Path) -> bool:
    """Whether `path` has changes the kit's git has not committed (outside git: always)."""
    try:
        return bool(git(ROOT, "status", "--porcelain", "--", str(path)).strip())
    except subprocess.CalledProcessError:
        return True  # not a git checkout: nothing is committed


def _unsaved(version: str, new: Path) -> list[str]:
    """The files in patches/<version>/ with edits that writing `new` there would lose: edits
    neither committed in the kit's git, nor the series releases.toml records, nor `new` itself;
    and a README.md that is not what export writes for the series as it stands."""
    current = PATCHES / version
    files = sorted(current.glob("*.patch"))
    notes = current / "README.md"
    if files and notes.is_file() and notes.read_text() != readme(version) and _dirty(notes):
        return [notes.name]
    if not files or series_hash(version) in (
        release(version).series_sha256,
        series_hash(version, new.parent),
    ):
        return []
    if not _dirty(current):
        return []
    return [
        p.name
        for p in files
        if not (new / p.name).is_file() or (new / p.name).read_bytes() != p.read_bytes()
    ]


def export(version: str, tree: Path, force: bool = False) -> tuple[list[Path], Release]:
    """patches/<version>/ from the commits of `tree` over its base, built beside and swapped in
    whole, then its build number and README. Refuses, naming the tree or the series, to export
    a tree that is not finished, or over edits of the series that nothing else holds."""
    dest = PATCHES / version
    safe.restore(dest, BUILD / f".old-patches-{version}")
    why = _unfinished(version, tree, force)
    if why:
        raise MatrixError(f"{tree} {why}")
    tmp = safe.scratch(BUILD, f"patches-{version}")
    try:
        written = export_series(version, tree, tmp / version)
        for kept in ("PULL_REQUEST.md", "README.md"):  # the README is regenerated below
            if (dest / kept).exists():
                (tmp / version / kept).write_bytes((dest / kept).read_bytes())
        unsaved = _unsaved(version, tmp / version)
        if unsaved:
            raise MatrixError(
                f"patches/{version}/{unsaved[0]} has edits that are neither committed nor "
                "exported, which exporting would overwrite: commit them or move them away"
            )
        safe.replace_dir(tmp / version, dest, BUILD / f".old-patches-{version}")
    finally:
        safe.remove(tmp)
    rel = record_series(version)
    write_readme(version)
    return [dest / p.name for p in written], rel


def upstream_tag(version: str) -> str | None:
    """The commit of upstream's tag v<version>, if GitHub answers; None offline."""
    try:
        out = subprocess.run(
            ["git", "ls-remote", UPSTREAM, f"refs/tags/v{version}^{{}}", f"refs/tags/v{version}"],
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout  # fmt: skip
    except (subprocess.SubprocessError, OSError):
        return None
    commits = dict(reversed(line.split("\t")) for line in out.splitlines())
    return commits.get(f"refs/tags/v{version}^{{}}") or commits.get(f"refs/tags/v{version}")


def add_release(version: str, neighbour: str | None, force: bool = False) -> tuple:
    """Add `version` to releases.toml if absent and derive its series from `neighbour`'s (by
    default the closest older release with a series). Returns the row and notes for the
    maintainer; a conflict raises, leaving the `git am` in build/trees/<version>. A release that
    has a series already is refused unless `force`."""
    safe.restore(PATCHES / version, BUILD / f".old-patches-{version}")
    if (PATCHES / version).is_dir() and not force:
        raise MatrixError(
            f"patches/{version}/ exists: {version} is taken in already (`--force` derives its "
            "series again from its neighbour's)"
        )
    notes = []
    if version not in RELEASES:
        meta = sdists.metadata(version)
        tag = upstream_tag(version)
        notes.append(f"tag v{version}: {tag or 'not found (offline?): the base is the sdist'}")
        rel = Release(tag=tag, **{**meta, "pythons": tuple(meta["pythons"])})
        save({**RELEASES, version: rel})
        notes.append(f"releases.toml: added {version} ({rel.published}, Python {rel.pythons})")
    older = [v for v in patched_versions() if version_key(v) < version_key(version)]
    neighbour = neighbour or (older[-1] if older else None)
    if neighbour is None or neighbour == version:
        raise MatrixError(f"no older series to derive {version}'s from: pass --from <version>")
    with _fresh_tree(version, neighbour) as (tree, applied):
        rel = export(version, tree, force)[1]
    notes.append(f"patches/{neighbour}/ applied cleanly to {version}: {len(applied)} patches")
    return rel, notes


def review(version: str, failed: list[str]) -> list[str]:
    """What a maintainer must look at in the release's CI_PYTHON cells after taking it in."""
    notes = []
    for variant in ("unpatched", "patched"):
        key = f"{version}-{variant}-py{CI_PYTHON}"
        report = BUILD / "compat" / f"junit-{key}.xml"
        if not report.exists():
            notes.append(f"compat({key}) did not run its tests: see build/compat/cell-{key}.json")
            continue
        cases = junit.read(report)[1]
        fails = [c.id for c in cases if c.outcome == "failed"]
        passes = [c.id for c in cases if c.outcome == "xpass"]
        if variant == "unpatched" and fails:
            notes.append(
                f"unpatched {version} fails tests no cause explains (a new [[bug]] in "
                f"compat_tests/expectations.toml, if real): {', '.join(fails)}"
            )
        elif fails:
            notes.append(f"the derived series does not fix: {', '.join(fails)}")
        if passes:
            notes.append(
                f"expected failures that pass on {version} (does a cause end before it?): "
                f"{', '.join(passes)}"
            )
        if f"compat({key})" not in failed:
            notes.append(f"compat({key}): as expected")
    return notes


def newest_on_pypi() -> str | None:
    """The newest final release on PyPI, if the matrix does not have it yet."""
    names = {f["filename"] for f in sdists.index_files() if not f.get("yanked")}
    found = [
        m[1] for n in names if (m := re.fullmatch(r"openai_agents-(\d+\.\d+\.\d+)\.tar\.gz", n))
    ]
    newest = max(found, key=version_key)
    return newest if version_key(newest) > version_key(list(RELEASES)[-1]) else None


def take_in(
    version: str, neighbour: str | None, force: bool, run: Callable, log: Callable
) -> tuple:
    """`add_release`, then the release's CI_PYTHON cells (`run` is `session.run`): the notes for
    the maintainer (also in build/intake.md, for CI's step summary) and the cells that failed."""
    rel, notes = add_release(version, neighbour, force)
    failed = []
    for variant in ("unpatched", "patched"):
        cell = Cell(CI_PYTHON, rel.version, variant)
        try:
            cells.run(cell, [], run, log)
        except Exception:  # noqa: BLE001 - a cell that fails is reported, not raised
            failed.append(f"compat({cell.key})")
    notes += review(rel.version, failed)
    BUILD.mkdir(exist_ok=True)
    (BUILD / "intake.md").write_text(
        f"### openai-agents {rel.version} taken in\n\n" + "".join(f"- {n}\n" for n in notes)
    )
    return notes, failed


@contextlib.contextmanager
def _fresh_tree(version: str, neighbour: str | None):
    """The sdist tree of `version` with its series applied, or `neighbour`'s (`git am -3`), and
    the commits applied. It is made in a temporary directory that goes when the block ends, so
    an interrupt leaves nothing half-made; a conflict is moved to build/trees/<version>, to
    resolve."""
    dest = TREES / version
    with safe.locked(TREES, version):
        if dest.exists():
            raise MatrixError(
                f"{dest} exists: export it (`nox -s export -- {version}`) or remove it"
            )
        tmp = safe.scratch(TREES, version)
        try:
            tree = make_tree(version, tmp / "sdk")
            if neighbour:
                applied = derive_series(version, release(neighbour).version, tree)
            else:
                applied = apply_series(version, tree) if version in patched_versions() else []
            yield tree, applied
        except MatrixError as exc:
            if not in_progress(tmp / "sdk"):
                raise
            os.rename(tmp / "sdk", dest)
            raise MatrixError(str(exc).replace(str(tmp / "sdk"), str(dest))) from None
        finally:
            safe.remove(tmp)


def work_tree(version: str, neighbour: str | None) -> Path:
    """build/trees/<version>: the sdist as git with the release's series applied, or with
    `neighbour`'s (`git am -3`: a conflict stays in progress there, to resolve)."""
    with _fresh_tree(version, neighbour) as (tree, _):
        os.rename(tree, TREES / version)
    return TREES / version
