"""Series as git sees them: a release's sdist as a git tree, its series applied (`git am`),
derived from a neighbour's (`git am -3`), exported (`git format-patch`), and read back."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import PATCHES, MatrixError, safe, sdists
from .releases import any_release, release, series

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "sdk-matrix",
    "GIT_AUTHOR_EMAIL": "sdk-matrix@invalid",
    "GIT_COMMITTER_NAME": "sdk-matrix",
    "GIT_COMMITTER_EMAIL": "sdk-matrix@invalid",
}
EXPORT_FLAGS = ("--zero-commit", "--no-signature", "--full-index", "--no-numbered")


def git(tree: Path, *args: str, date: str | None = None) -> str:
    env = {**os.environ, **GIT_IDENTITY}
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    proc = safe.run(["git", "-C", str(tree), *args], env=env)
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, proc.args, proc.stdout, proc.stderr)
    return proc.stdout


def make_tree(version: str, dest: Path, cache: Path = sdists.SDISTS) -> Path:
    """Unpack the sdist into a fresh git repository at `dest`: one commit, tagged `base`.

    The commit is deterministic (fixed identity, the publish time as date), so for releases
    newer than upstream's tags it is the `base-commit:` that their series name.
    """
    rel = any_release(version)
    if dest.exists():
        shutil.rmtree(dest)
    sdists.unpack(version, dest, cache)
    git(dest, "init", "-q", "-b", "agent-release")
    git(dest, "add", "-A")
    message = f"openai-agents {version} (sdist)"
    git(dest, "commit", "-q", "--no-gpg-sign", "-m", message, date=rel.published)
    git(dest, "tag", "base")
    return dest


def base_commit(patch: Path) -> str | None:
    match = re.search(r"^base-commit: ([0-9a-f]{40})$", patch.read_text(), re.M)
    return match.group(1) if match else None


def check_series(version: str, tree: Path | None = None, patches: Path = PATCHES) -> list[Path]:
    """The series of `version`, after checking that it names the release's tag as its base."""
    files = series(version, patches)
    expected = release(version).tag or (tree and git(tree, "rev-parse", "base").strip())
    found = base_commit(files[0])
    if found is None:
        raise MatrixError(f"patches/{version}/{files[0].name} has no base-commit: line")
    if expected and found != expected:
        raise MatrixError(
            f"patches/{version}/{files[0].name} names base-commit {found}, but the base of "
            f"{version} is {expected}"
        )
    return files


def in_progress(tree: Path) -> str | None:
    """The operation git has stopped in the middle of in `tree`, if any."""
    states = {"rebase-apply": "`git am`", "rebase-merge": "rebase", "MERGE_HEAD": "merge",
              "CHERRY_PICK_HEAD": "cherry-pick", "REVERT_HEAD": "revert"}  # fmt: skip
    return next((what for name, what in states.items() if (tree / ".git" / name).exists()), None)


def series_log(tree: Path) -> list[str]:
    """The commits on top of the tree's base, oldest first: `<short sha> <subject>`."""
    return git(tree, "log", "--format=%h %s", "--reverse", "base..HEAD").splitlines()


def _am_failure(version: str, files: list[Path], output: str) -> str:
    """Which patch failed and git's own reason (`error:` lines), without git's hints."""
    failing = re.search(r"^Patch failed at \d+ (.*)$", output, re.M)
    subject = failing.group(1) if failing else ""
    name = next((f.name for f in files if subject and subject in f.read_text()), None)
    errors = [e for e in re.findall(r"^error: (.*)$", output, re.M) if "git am" not in e]
    detail = "; ".join(dict.fromkeys(errors)) or output.strip().splitlines()[0]
    where = f"patches/{version}/{name}" if name else f"patches/{version}/"
    return f"{where} does not apply to {version}: {detail}"


def apply_series(version: str, tree: Path, patches: Path = PATCHES) -> list[str]:
    """`git am` the release's series onto `tree`; on failure, abort and name patch and reason."""
    files = check_series(version, tree, patches)
    try:
        git(tree, "am", "--quiet", "--no-gpg-sign", *map(str, files))
    except subprocess.CalledProcessError as exc:
        git(tree, "am", "--abort")
        raise MatrixError(_am_failure(version, files, exc.stdout + exc.stderr)) from None
    return series_log(tree)


def variant_tree(version: str, variant: str, dest: Path) -> tuple[Path, list[str]]:
    """The release's sdist tree at `dest`, with its series applied when `variant` is patched."""
    tree = make_tree(version, dest)
    return tree, apply_series(version, tree) if variant == "patched" else []


def derive_series(version: str, neighbour: str, tree: Path) -> list[str]:
    """Start the series of `version` from its neighbour's: `git am -3` it onto `tree`, the
    fresh tree of `version`. The neighbour's sdist is fetched into `tree` first, so the three-way
    merge finds the blobs the patches name. On a conflict the `git am` stays in progress, for
    the maintainer to resolve and continue."""
    with tempfile.TemporaryDirectory() as tmp:
        other = make_tree(neighbour, Path(tmp) / "sdk")
        files = check_series(neighbour, other)
        git(tree, "fetch", "--quiet", "--no-tags", str(other), f"base:refs/tags/base-{neighbour}")
    try:
        git(tree, "am", "-3", "--quiet", "--no-gpg-sign", *map(str, files))
    except subprocess.CalledProcessError as exc:
        conflicts = git(tree, "diff", "--name-only", "--diff-filter=U").split()
        raise MatrixError(
            f"patches/{neighbour}/ stops on {version} with conflicts in "
            f"{', '.join(conflicts) or (exc.stdout + exc.stderr).strip()}: resolve them in "
            f"{tree}, `git am --continue`, then `nox -s export -- {version}`"
        ) from None
    return series_log(tree)


def export_series(version: str, tree: Path, dest: Path) -> list[Path]:
    """Write `base..HEAD` of `tree` as the release's series into `dest`, a new directory.

    The tree's `base` commit is the sdist, which holds the same `src/` and `tests/` bytes as
    upstream's tag, so `base-commit:` names the tag, as `format-patch` run in a clone would.
    """
    rel = release(version)
    base = git(tree, "rev-parse", "base").strip()
    git(tree, "format-patch", *EXPORT_FLAGS, "--base=base", "-o", str(dest), "base..HEAD")
    written = sorted(dest.glob("*.patch"))
    if not written:
        raise MatrixError(f"the tree of {version} has no commits on top of its base")
    if rel.tag:
        first = written[0]
        first.write_text(
            first.read_text().replace(f"base-commit: {base}", f"base-commit: {rel.tag}")
        )
    return written
