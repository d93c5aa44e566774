"""What teams install: per series a wheel `<version>+agentrelease.<build>`, the dependency set as
of the release (`constraints-<version>.txt`), and a find-links page over them (`index.html`)."""

from __future__ import annotations

import hashlib
import html
import os
import re
import tempfile
from pathlib import Path

from . import ROOT, MatrixError, safe
from .envs import environment, lock, uv
from .releases import CI_PYTHON, RELEASES, pythons, release, series_hash
from .series import apply_series, make_tree

DIST = ROOT / "dist"


def check_build_number(version: str) -> None:
    """A series whose bytes changed since its build number was set must get a new number, so two
    different wheels never share a version."""
    rel = release(version)
    if rel.series_sha256 != series_hash(version):
        raise MatrixError(
            f"patches/{version}/ is not the series that build {rel.build} of {version} was made "
            f"of: `nox -s export -- {version}` records the new series with the next build number"
        )


def writable(dist: Path) -> None:
    """Fail in one line, before building anything, when `dist` cannot take the files."""
    try:
        dist.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=dist).close()
    except OSError as exc:
        raise MatrixError(f"cannot write to {dist}: {exc.strerror or exc}") from None


def local_version(version: str) -> str:
    return f"{version}+agentrelease.{release(version).build}"


def set_local_version(tree: Path, version: str) -> str:
    """Give the tree's pyproject.toml the version `<version>+agentrelease.<build>`."""
    pyproject = tree / "pyproject.toml"
    text, count = re.subn(
        rf'^version = "{re.escape(version)}"$',
        f'version = "{local_version(version)}"',
        pyproject.read_text(),
        flags=re.M,
    )
    if count != 1:
        raise MatrixError(f"pyproject.toml of {version} has no static version line")
    pyproject.write_text(text)
    return local_version(version)


def check_wheel(version: str, wheel: Path) -> None:
    """Refuse a wheel that fails the contract suite, patched, run as a cell runs it: in an
    environment of the release's pinned dependencies with nothing but this wheel of the SDK."""
    rel = release(version)
    python = CI_PYTHON if CI_PYTHON in pythons(rel) else pythons(rel)[-1]
    env = environment(f"build-{version}-py{python}", python, version, "patched", sdk=wheel)
    proc = safe.run(
        [env["python"], "-m", "pytest", "compat_tests", "-q", "-x"],
        cwd=ROOT,
        env={**os.environ, "COMPAT_VARIANT": "patched"},
    )
    if proc.returncode:
        lines = (proc.stdout + proc.stderr).strip().splitlines()
        why = [line for line in lines if line.startswith("E ")][-1:] or lines[-1:] or [""]
        raise MatrixError(
            f"{wheel.name} fails the contract suite on Python {python} ({why[0].lstrip('E ')}), "
            "so it is not written to dist/"
        )


def build(version: str, dist: Path = DIST) -> list[Path]:
    """The patched wheel and the constraints file of one release, into `dist`."""
    check_build_number(version)
    writable(dist)
    with tempfile.TemporaryDirectory() as tmp:
        tree = make_tree(version, Path(tmp) / "sdk")
        apply_series(version, tree)
        set_local_version(tree, version)
        uv("build", "--quiet", "--wheel", "--out-dir", str(Path(tmp) / "out"), str(tree))
        (wheel,) = (Path(tmp) / "out").glob("*.whl")
        check_wheel(version, wheel)
        built = dist / wheel.name
        safe.write_atomically(built, wheel.read_bytes())
    constraints = dist / f"constraints-{version}.txt"
    pinned = lock(RELEASES[version], requirements=None).read_text()
    safe.write_atomically(
        constraints,
        f"# openai-agents {version}'s dependencies as PyPI had them when it was released\n"
        f"# ({RELEASES[version].published}); use with {built.name}, see the kit's README.\n"
        f"{pinned}".encode(),
    )
    return [built, constraints]


def index_page(dist: Path = DIST) -> Path:
    """dist/index.html: a find-links page of every wheel in `dist`, with its sha256."""
    links = []
    for wheel in sorted(dist.glob("*.whl")):
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        name = html.escape(wheel.name)
        links.append(f'<a href="{name}#sha256={digest}">{name}</a><br>')
    page = dist / "index.html"
    page.write_text(
        "<!doctype html><html><head><meta charset=utf-8><title>openai-agents, patched</title>"
        "</head><body>\n" + "\n".join(links) + "\n</body></html>\n"
    )
    return page
