"""The release matrix and the steps behind every nox session: fetch a release's sdist, turn it
into a git tree, apply its patch series, and read the expected contract failures.

Stdlib only (plus `packaging`, which nox already needs), so the noxfile and the tooling tests
can import it without an environment of their own.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

from packaging.version import InvalidVersion, Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent
PATCHES = ROOT / "patches"
EXPECTATIONS = ROOT / "compat_tests" / "expectations.toml"
PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13")
INDEX = "https://pypi.org/simple/openai-agents/"  # PEP 691 JSON
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "sdk-matrix",
    "GIT_AUTHOR_EMAIL": "sdk-matrix@invalid",
    "GIT_COMMITTER_NAME": "sdk-matrix",
    "GIT_COMMITTER_EMAIL": "sdk-matrix@invalid",
}


class MatrixError(Exception):
    """A problem with the user's input or environment, reported without a traceback."""


@dataclass(frozen=True)
class Release:
    version: str
    published: str  # PyPI upload time of the sdist; dependencies are resolved as of then
    min_python: str
    tag_commit: str | None  # upstream's v<version>; None for releases newer than the tags we have

    @property
    def pythons(self) -> list[str]:
        return [py for py in PYTHONS if Version(py) >= Version(self.min_python)]


def _r(version: str, published: str, min_python: str, tag_commit: str | None = None) -> Release:
    return Release(version, published, min_python, tag_commit)


# The last release of every minor line: the rows of the matrix.
RELEASES = {
    r.version: r
    for r in [
        _r("0.0.19", "2025-06-18T00:49:15Z", "3.9", "91c62c1dea97d02ad4974947e572d634d42496d1"),
        _r("0.1.0", "2025-06-27T20:58:03Z", "3.9", "18cb55e4c45f096d00263c3561d6f22a2299368e"),
        _r("0.2.11", "2025-09-03T22:16:05Z", "3.9", "f61251621627ec3b5ed92c3e156320c7d21d7b4a"),
        _r("0.3.3", "2025-09-30T23:20:24Z", "3.9", "a450c21bfe642eff8383eda807ce5c402eb7792e"),
        _r("0.4.2", "2025-10-24T21:46:34Z", "3.9", "a30c32e722a4cdb761fe8b250606757ec8581296"),
        _r("0.5.1", "2025-11-13T17:59:36Z", "3.9", "6a5d9ce4bebe7250a6b0613c86d2e8791b57e376"),
        _r("0.6.9", "2026-01-20T01:57:00Z", "3.9", "512b9b6a467a8c58decfce3a66379612347afb26"),
        _r("0.7.0", "2026-01-23T00:06:35Z", "3.9", "fe969312d7f771814b8fa896e15d558b937284cb"),
        _r("0.8.4", "2026-02-11T19:14:30Z", "3.9", "67687cbab31c6c071204dc7f48ea6e47624aa2e7"),
        _r("0.9.3", "2026-02-20T22:56:22Z", "3.10", "2fee7ede4bd1c1f4e65da110ce62b05375cd14af"),
        _r("0.10.5", "2026-03-05T20:43:59Z", "3.10", "e32f0f80eb3d0f4b261cc530e49d4577b45f8f57"),
        _r("0.11.1", "2026-03-09T06:34:07Z", "3.10", "e00f377a7d591f7e169026b8cfbdece4d01b2eb6"),
        _r("0.12.5", "2026-03-19T07:19:16Z", "3.10", "f25a4f95ed46ede55f363fb9410d4aab9f915cde"),
        _r("0.13.6", "2026-04-09T04:10:51Z", "3.10", "bfc8c6355ff0cc2b7f43980ed1b459f411dc42e5"),
        _r("0.14.8", "2026-04-29T03:40:07Z", "3.10", "7029ea8fffe12cdd58502959c74ca35d937d8202"),
        _r("0.15.3", "2026-05-06T12:13:00Z", "3.10", "e1cb2be4cac0b94c20a8b15d4aeffc7813f190fa"),
        _r("0.16.1", "2026-05-07T11:02:39Z", "3.10", "bd84b65258af0473b541ef6c6ccf2882288c2430"),
        _r("0.17.8", "2026-07-06T23:37:12Z", "3.10", "7a828f6db234311d6d5569a1178b280a05e823fb"),
        _r("0.18.3", "2026-07-17T03:40:25Z", "3.10", "3e788a46f180ebf120fdc39e3dfe48c98627be50"),
        _r("0.19.4", "2026-08-05T02:59:12Z", "3.10", "92aa1b905306d7f5a130d911061c44cddeaa6e20"),
        _r("0.20.0", "2026-08-11T03:12:49Z", "3.10", "d2bda3f3110415bf02e526a3983b0d0fa903e0d7"),
        _r("0.21.1", "2026-08-16T22:29:35Z", "3.10", "b01ea1d342dfc0e3035b41579c2e9d21237f2334"),
        _r("0.22.3", "2026-09-17T22:20:44Z", "3.10"),
        _r("0.23.1", "2026-10-02T15:42:06Z", "3.10"),
        _r("0.24.0", "2026-10-15T02:38:21Z", "3.10"),
    ]
}

# Upstream's first release with the fix: no row of the matrix (no series, no cells), only the
# reference that `nox -s bench` measures against the last release before it.
UPSTREAM_FIX = _r(
    "0.6.0", "2025-11-18T19:06:55Z", "3.9", "c6569cbd89526758c1ba14ce9fb55d3596c85065"
)


def release(version: str) -> Release:
    try:
        return RELEASES[version]
    except KeyError:
        known = ", ".join(RELEASES)
        raise MatrixError(f"unknown SDK release {version!r}; known releases: {known}") from None


def any_release(version: str) -> Release:
    """A row of the matrix or UPSTREAM_FIX: what an sdist tree can be made of."""
    return UPSTREAM_FIX if version == UPSTREAM_FIX.version else release(version)


def patched_versions(patches: Path = PATCHES) -> list[str]:
    """Releases that have a series: the `patches/<version>/` directories, the source of truth."""
    found = [d.name for d in patches.iterdir() if d.is_dir()] if patches.is_dir() else []
    for name in found:
        try:
            Version(name)
        except InvalidVersion:
            raise MatrixError(f"patches/{name}/ is not named after an SDK release") from None
        release(name)
    return sorted(found, key=Version)


def series(version: str, patches: Path = PATCHES) -> list[Path]:
    files = sorted((patches / version).glob("*.patch"))
    if not files:
        raise MatrixError(f"patches/{version}/ holds no *.patch files")
    return files


def cells(python: str | None = None) -> list[tuple[str, str, str]]:
    """(python, version, variant) for every cell of the compat matrix."""
    patched = set(patched_versions())
    out = []
    for rel in RELEASES.values():
        for py in rel.pythons if python is None else [python]:
            out.append((py, rel.version, "unpatched"))
            if rel.version in patched:
                out.append((py, rel.version, "patched"))
    return out


CI_PYTHON = "3.11"
LAST_BEFORE_FIX = "0.5.1"


def in_ci(python: str, version: str) -> bool:
    """CI runs every release on CI_PYTHON; on the others, the oldest and newest release they
    support and the last one before upstream's fix."""
    supported = [r.version for r in RELEASES.values() if python in r.pythons]
    return python == CI_PYTHON or version in (supported[0], LAST_BEFORE_FIX, supported[-1])


# --- sdists and trees -------------------------------------------------------------------------


def _download(url: str, accept: str = "*/*") -> bytes:
    request = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.read()
    except urllib.error.HTTPError as exc:
        raise MatrixError(f"could not download {url}: HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise MatrixError(
            f"could not download {url} ({exc}); no network and no cached copy in the cache"
        ) from None


def index_files() -> list[dict]:
    """Every file PyPI has for openai-agents, with its hashes and upload time."""
    return json.loads(_download(INDEX, "application/vnd.pypi.simple.v1+json"))["files"]


def sdist(version: str, cache: Path) -> Path:
    """The release's sdist from PyPI, downloaded once into `cache` and checked against its hash."""
    any_release(version)
    target = cache / f"openai_agents-{version}.tar.gz"
    if target.exists():
        return target
    (entry,) = [f for f in index_files() if f["filename"] == target.name]
    data = _download(entry["url"])
    if hashlib.sha256(data).hexdigest() != entry["hashes"]["sha256"]:
        raise MatrixError(f"sdist of {version} does not match PyPI's sha256")
    cache.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".part")
    partial.write_bytes(data)
    partial.replace(target)
    return target


def git(tree: Path, *args: str, date: str | None = None) -> str:
    env = {**os.environ, **GIT_IDENTITY}
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    proc = subprocess.run(["git", "-C", str(tree), *args], env=env, capture_output=True, text=True)
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, proc.args, proc.stdout, proc.stderr)
    return proc.stdout


def make_tree(version: str, dest: Path, cache: Path) -> Path:
    """Unpack the sdist into a fresh git repository at `dest`: one commit, tagged `base`.

    The commit is deterministic (fixed identity, the publish time as date), so for releases
    newer than upstream's tags it is the `base-commit:` that their series name.
    """
    rel = any_release(version)
    archive = sdist(version, cache)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        top = f"openai_agents-{version}/"
        members = [m for m in tar.getmembers() if m.name.startswith(top)]
        for m in members:
            m.name = m.name[len(top) :]
        kwargs = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(dest, members=[m for m in members if m.name], **kwargs)
    git(dest, "init", "-q", "-b", "agent-release")
    git(dest, "add", "-A")
    message = f"openai-agents {version} (sdist)"
    git(dest, "commit", "-q", "--no-gpg-sign", "-m", message, date=rel.published)
    git(dest, "tag", "base")
    return dest


def variant_tree(version: str, variant: str, dest: Path, cache: Path) -> tuple[Path, list[str]]:
    """The release's sdist tree at `dest`, with its series applied when `variant` is patched."""
    tree = make_tree(version, dest, cache)
    return tree, apply_series(version, tree) if variant == "patched" else []


def base_commit(patch: Path) -> str | None:
    match = re.search(r"^base-commit: ([0-9a-f]{40})$", patch.read_text(), re.M)
    return match.group(1) if match else None


def check_series(version: str, tree: Path | None = None, patches: Path = PATCHES) -> list[Path]:
    """The series of `version`, after checking that it names the release's tag as its base."""
    files = series(version, patches)
    expected = release(version).tag_commit or (tree and git(tree, "rev-parse", "base").strip())
    found = base_commit(files[0])
    if found is None:
        raise MatrixError(f"patches/{version}/{files[0].name} has no base-commit: line")
    if expected and found != expected:
        raise MatrixError(
            f"patches/{version}/{files[0].name} names base-commit {found}, but the base of "
            f"{version} is {expected}"
        )
    return files


def series_log(tree: Path) -> list[str]:
    """The commits on top of the tree's base, oldest first: `<short sha> <subject>`."""
    return git(tree, "log", "--format=%h %s", "--reverse", "base..HEAD").splitlines()


def apply_series(version: str, tree: Path, patches: Path = PATCHES) -> list[str]:
    """`git am` the release's series onto `tree`; on failure, abort and name patch and hunk."""
    files = check_series(version, tree, patches)
    try:
        git(tree, "am", "--quiet", "--no-gpg-sign", *map(str, files))
    except subprocess.CalledProcessError as exc:
        output = exc.stdout + exc.stderr
        git(tree, "am", "--abort")
        failing = re.search(r"^Patch failed at \d+ (.*)$", output, re.M)
        subject = failing.group(1) if failing else ""
        name = next((f.name for f in files if subject and subject in f.read_text()), "?")
        hunks = re.findall(r"^error: (patch failed: .*|.*: does not exist in index)$", output, re.M)
        detail = "; ".join(hunks) or output.strip().splitlines()[-1]
        raise MatrixError(
            f"patches/{version}/{name} does not apply to {version}: {detail}"
        ) from None
    return series_log(tree)


def derive_series(version: str, neighbour: str, tree: Path, cache: Path) -> list[str]:
    """Start the series of `version` from its neighbour's: `git am -3` it onto `tree`, the
    fresh tree of `version`. The neighbour's sdist is fetched into `tree` first, so the three-way
    merge finds the blobs the patches name. On a conflict the `git am` stays in progress, for
    the maintainer to resolve and continue."""
    with tempfile.TemporaryDirectory() as tmp:
        other = make_tree(neighbour, Path(tmp) / "sdk", cache)
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


# Bump when any series changes, so a rebuilt wheel never shares a version with an older one.
LOCAL_LABEL = "agentrelease.1"


def set_local_version(tree: Path, version: str) -> str:
    """Give the tree's pyproject.toml the version `<version>+agentrelease.N` (not committed)."""
    pyproject = tree / "pyproject.toml"
    text, count = re.subn(
        rf'^version = "{re.escape(version)}"$',
        f'version = "{version}+{LOCAL_LABEL}"',
        pyproject.read_text(),
        flags=re.M,
    )
    if count != 1:
        raise MatrixError(f"pyproject.toml of {version} has no static version line")
    pyproject.write_text(text)
    return f"{version}+{LOCAL_LABEL}"


EXPORT_FLAGS = ("--zero-commit", "--no-signature", "--full-index", "--no-numbered")


def export_series(version: str, tree: Path, dest: Path) -> list[Path]:
    """Write `base..HEAD` of `tree` as the release's series into `dest` (replacing it).

    The tree's `base` commit is the sdist, which holds the same `src/` and `tests/` bytes as
    upstream's tag, so `base-commit:` names the tag, as `format-patch` run in a clone would.
    """
    rel = release(version)
    base = git(tree, "rev-parse", "base").strip()
    with tempfile.TemporaryDirectory() as tmp:
        git(tree, "format-patch", *EXPORT_FLAGS, "--base=base", "-o", tmp, "base..HEAD")
        written = sorted(Path(tmp).glob("*.patch"))
        if not written:
            raise MatrixError(f"the tree of {version} has no commits on top of its base")
        if rel.tag_commit:
            first = written[0]
            first.write_text(
                first.read_text().replace(f"base-commit: {base}", f"base-commit: {rel.tag_commit}")
            )
        if dest.exists():
            for old in dest.glob("*.patch"):
                old.unlink()
        dest.mkdir(parents=True, exist_ok=True)
        return [Path(shutil.copy(f, dest / f.name)) for f in written]


def junit_failures(junit: Path) -> set[str]:
    """Ids of the failed and errored tests in a JUnit file."""
    root = ElementTree.parse(junit).getroot()
    return {
        f"{case.get('classname')}::{case.get('name')}"
        for case in root.iter("testcase")
        if case.find("failure") is not None or case.find("error") is not None
    }


def junit_counts(junit: Path) -> str:
    suite = next(ElementTree.parse(junit).getroot().iter("testsuite"))
    total, skipped = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
    failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    return f"{total - skipped - failed} passed, {failed} failed, {skipped} skipped"


# --- expectations -----------------------------------------------------------------------------


def expected_failures(version: str, variant: str, path: Path = EXPECTATIONS) -> dict[str, str]:
    """Selector -> reason for the contract tests expected to fail in one cell.

    A selector is a contract point (`release_then_gc`) or one test of it
    (`release_then_gc::test_release_agents_frees_agent`). Patched cells list only tests that
    need an API the release lacks.
    """
    release(version)
    table = tomllib.loads(path.read_text())
    unknown = set(table) - set(RELEASES)
    if unknown:
        raise MatrixError(f"{path.name} names unknown releases: {', '.join(sorted(unknown))}")
    return dict(table.get(version, {}).get(variant, {}))
