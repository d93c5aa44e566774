"""The releases of the matrix (`releases.toml`), their series and the cells of `nox -s compat`."""

from __future__ import annotations

import dataclasses
import hashlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

from packaging.specifiers import SpecifierSet
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


def _load(path: Path = RELEASES_FILE) -> tuple[dict[str, Release], Release]:
    data = tomllib.loads(path.read_text())

    def make(entry: dict) -> Release:
        return Release(**{**entry, "pythons": tuple(entry["pythons"])})

    rows = [make(entry) for entry in data["release"]]
    if [r.version for r in rows] != sorted((r.version for r in rows), key=version_key):
        raise MatrixError(f"{path.name}: releases must be listed oldest first")
    return {r.version: r for r in rows}, make(data["upstream_fix"])


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
        try:
            Version(name)
        except InvalidVersion:
            raise MatrixError(f"patches/{name}/ is not named after an SDK release") from None
        release(name)
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
