"""The releases of the matrix (`releases.toml`), their series and the cells of `nox -s compat`."""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from . import PATCHES, ROOT, MatrixError, version_key
from .safe import write_atomically

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RELEASES_FILE = ROOT / "releases.toml"
# The Pythons a cell can run on; a release's own are the ones its classifiers declare.
PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13", "3.14")
CI_PYTHON = "3.11"  # the Python the kit's own sessions and the scan run on
LAST_BEFORE_FIX = "0.5.1"


@dataclass(frozen=True)
class Release:
    version: str
    published: str  # PyPI upload time of the sdist; dependencies are resolved as of then
    requires_python: str
    pythons: tuple[str, ...] = field(default=())  # from the classifiers
    tag: str | None = None  # upstream's v<version>; None for releases newer than our tags
    build: int = 0  # the N of the patched wheel's `+agentrelease.N`; 0 without a series
    series_sha256: str = ""  # `series_hash()` of the series build N is made of

    @property
    def min_python(self) -> str:
        return min(self.pythons, key=version_key)


HEADER = """\
# The releases of openai-agents the kit knows, oldest first; written by `nox -s add-release` and
# `nox -s export`. Each [[release]] is a row of the matrix (the last release of a minor line).
#   published        upload time of the sdist on PyPI: cells resolve dependencies as of it
#   requires_python  and pythons: from the sdist's own metadata (Requires-Python, classifiers);
#                    the release's cells run on `pythons`
#   tag              upstream's tag v<version> (absent: the tag is not in upstream's history as
#                    we have it; the series' base is the sdist tree, see README)
#   build            N of the patched wheel `<version>+agentrelease.N`, and series_sha256 the
#                    series it is made of: `nox -s export` takes the next N when the series changes
"""


def _toml(rel: Release) -> str:
    lines = []
    for key, value in dataclasses.asdict(rel).items():
        if value in (None, 0, "") and key in ("tag", "build", "series_sha256"):
            continue
        if isinstance(value, tuple):
            value = "[" + ", ".join(f'"{v}"' for v in value) + "]"
        elif isinstance(value, str):
            value = f'"{value}"'
        lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


def dump(rows: dict[str, Release], fix: Release) -> str:
    """releases.toml's text: the one format that every writer of the file produces."""
    upstream = (
        "\n# Upstream's first release with the fix (#2008, PR #2014): not a row of the matrix.\n"
    )
    parts = [HEADER, upstream, "[upstream_fix]\n", _toml(fix)]
    for rel in sorted(rows.values(), key=lambda r: version_key(r.version)):
        parts += ["\n[[release]]\n", _toml(rel)]
    return "".join(parts)


def save(rows: dict[str, Release], path: Path = RELEASES_FILE) -> None:
    """Write `rows` to releases.toml, unless the file holds lines of a maintainer's (a comment,
    say) that the kit's own format would drop."""
    ours = dump(_load(path)[0], UPSTREAM_FIX).splitlines()
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if number > len(ours) or line != ours[number - 1]:
            raise MatrixError(
                f"{path.name}:{number}: {line!r} is not in the form the kit writes, and writing "
                "the file would lose it: move it into HEADER of kit/releases.py, or remove it"
            )
    write_atomically(path, dump(rows, UPSTREAM_FIX).encode())
    RELEASES.clear()
    RELEASES.update(_load(path)[0])


def _checked(check: Callable, value) -> bool:
    try:
        return bool(check(value))
    except (InvalidVersion, InvalidSpecifier, ValueError, TypeError, AttributeError):
        return False


# Each field of a row: what a valid value passes, and what it looks like.
FIELDS = {
    "version": (lambda v: str(Version(v)) == v, "a PEP 440 version such as 0.5.1"),
    "published": (
        lambda v: datetime.datetime.fromisoformat(v.replace("Z", "+00:00")),
        "an upload time such as 2025-06-18T00:49:15Z",
    ),
    "requires_python": (SpecifierSet, "a PEP 440 specifier such as >=3.9"),
    "pythons": (
        lambda v: isinstance(v, list) and all(re.fullmatch(r"3\.\d+", p) for p in v),
        'a list such as ["3.9", "3.10"]',
    ),
    "tag": (lambda v: re.fullmatch(r"[0-9a-f]{40}", v), "a 40-digit commit id"),
    "build": (lambda v: type(v) is int and v >= 0, "a whole number"),
    "series_sha256": (lambda v: re.fullmatch(r"[0-9a-f]{64}", v), "a sha256 hex digest"),
}
REQUIRED = ("version", "published", "requires_python", "pythons")


def _release(entry, where: str) -> Release:
    """One table of releases.toml as a Release, every field checked; `where` names the table."""
    if not isinstance(entry, dict):
        raise MatrixError(f"{where}: not a table")
    missing = [key for key in REQUIRED if key not in entry]
    if missing:
        raise MatrixError(f"{where}: missing field {missing[0]}")
    unknown = sorted(set(entry) - set(FIELDS))
    if unknown:
        raise MatrixError(f"{where}: unknown field {unknown[0]}; known: {', '.join(FIELDS)}")
    for key, value in entry.items():
        check, looks = FIELDS[key]
        if not _checked(check, value):
            raise MatrixError(f"{where}: {key} = {value!r} is not {looks}")
    return Release(**{**entry, "pythons": tuple(entry["pythons"])})


def _load(path: Path = RELEASES_FILE) -> tuple[dict[str, Release], Release]:
    """The rows and the upstream fix, every row and field checked: one line names a problem."""
    text = path.read_text()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MatrixError(f"{path.name}: {exc}") from None
    if not isinstance(data.get("release"), list) or "upstream_fix" not in data:
        raise MatrixError(f"{path.name}: needs an [upstream_fix] table and [[release]] rows")
    lines = [n for n, line in enumerate(text.splitlines(), 1) if line.strip() == "[[release]]"]
    rows: dict[str, Release] = {}
    for n, entry in enumerate(data["release"]):
        line = lines[n] if n < len(lines) else "?"
        version = entry.get("version", f"#{n + 1}") if isinstance(entry, dict) else f"#{n + 1}"
        where = f"{path.name}:{line}: [[release]] {version}"
        rel = _release(entry, where)
        if rel.version in rows:
            raise MatrixError(f"{where}: listed twice; keep one row per release")
        last = list(rows)[-1] if rows else None
        if last and version_key(rel.version) < version_key(last):
            raise MatrixError(f"{where}: after {last}; releases must be listed oldest first")
        rows[rel.version] = rel
    fix = _release(data["upstream_fix"], f"{path.name}: [upstream_fix]")
    return rows, fix


RELEASES, UPSTREAM_FIX = _load()


def release(version: str) -> Release:
    try:
        return RELEASES[version]
    except KeyError:
        if version == UPSTREAM_FIX.version:
            raise MatrixError(
                f"{version} is upstream's first release with the fix (PR #2014): it has no "
                "series and no row in the matrix"
            ) from None
        known = ", ".join(RELEASES)
        raise MatrixError(f"unknown SDK release {version!r}; known releases: {known}") from None


def any_release(version: str) -> Release:
    """A row of the matrix or UPSTREAM_FIX: what an sdist tree can be made of."""
    return UPSTREAM_FIX if version == UPSTREAM_FIX.version else release(version)


def patched_versions(patches: Path = PATCHES) -> list[str]:
    """Releases that have a series: the `patches/<version>/` directories, the source of truth."""
    found = [d.name for d in patches.iterdir() if d.is_dir()] if patches.is_dir() else []
    for name in found:
        if name not in RELEASES:
            raise MatrixError(f"patches/{name}/ has no row in releases.toml: rename or remove it")
        if not any((patches / name).glob("*.patch")):
            raise MatrixError(
                f"patches/{name}/ holds no *.patch files: restore its series or remove it"
            )
    return sorted(found, key=version_key)


def series(version: str, patches: Path = PATCHES) -> list[Path]:
    files = sorted((patches / version).glob("*.patch"))
    if not files:
        raise MatrixError(f"patches/{version}/ holds no *.patch files")
    return files


def series_hash(version: str, patches: Path = PATCHES) -> str:
    """sha256 over the series' file names and bytes: what a patched build is made of."""
    digest = hashlib.sha256()
    for patch in series(version, patches):
        digest.update(patch.name.encode() + b"\0" + patch.read_bytes())
    return digest.hexdigest()


def record_series(version: str) -> Release:
    """Note the release's current series in releases.toml, with the next build number if the
    series changed since the last one."""
    rel = release(version)
    digest = series_hash(version)
    if digest != rel.series_sha256:
        rel = dataclasses.replace(rel, build=rel.build + 1, series_sha256=digest)
        save({**RELEASES, version: rel})
    return rel


def pythons(rel: Release) -> list[str]:
    """The Pythons of the release's cells: those its classifiers declare, that its
    Requires-Python admits and that the kit knows."""
    allowed = SpecifierSet(rel.requires_python)
    return [py for py in PYTHONS if py in rel.pythons and Version(py) in allowed]


@dataclass(frozen=True)
class Cell:
    python: str
    version: str
    variant: str  # "unpatched" or "patched"

    @property
    def key(self) -> str:
        return f"{self.version}-{self.variant}-py{self.python}"


def cells(patches: Path = PATCHES) -> list[Cell]:
    """Every cell of the compat matrix, release by release."""
    patched = set(patched_versions(patches))
    return [
        Cell(py, rel.version, variant)
        for rel in RELEASES.values()
        for py in pythons(rel)
        for variant in ("unpatched", "patched")
        if variant == "unpatched" or rel.version in patched
    ]


def smoke(cell: Cell) -> bool:
    """The cells a pull request that changes the contract tests runs: every release on
    CI_PYTHON; on the other Pythons, the oldest and newest release there and LAST_BEFORE_FIX."""
    there = [r.version for r in RELEASES.values() if cell.python in pythons(r)]
    edges = (there[0], LAST_BEFORE_FIX, there[-1])
    return cell.python == CI_PYTHON or cell.version in edges
