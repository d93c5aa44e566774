"""Releases as PyPI has them: the index, each release's sdist (downloaded once, hash-checked,
cached) and the metadata in it."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tarfile
import tempfile
import urllib.error
import urllib.request
from email.parser import Parser
from pathlib import Path

from . import CACHE, MatrixError

INDEX = "https://pypi.org/simple/openai-agents/"  # PEP 691 JSON
SDISTS = CACHE / "sdists"


def download(url: str, accept: str = "*/*", cached: Path | None = None) -> bytes:
    request = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.read()
    except urllib.error.HTTPError as exc:
        raise MatrixError(f"could not download {url}: HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        where = f"no cached copy at {cached}" if cached else "nothing cached to fall back on"
        raise MatrixError(f"could not download {url} ({exc}); {where}") from None


def index_files(cached: Path | None = None) -> list[dict]:
    """Every file PyPI has for openai-agents, with its hashes and upload time."""
    data = download(INDEX, "application/vnd.pypi.simple.v1+json", cached)
    return json.loads(data)["files"]


def write_atomically(target: Path, data: bytes) -> None:
    """Write `target` through a unique temporary file, so concurrent streams never see half."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(partial, target)


def sdist(version: str, cache: Path = SDISTS) -> Path:
    """The release's sdist from PyPI, downloaded once into `cache` and checked against its hash."""
    target = cache / f"openai_agents-{version}.tar.gz"
    if target.exists():
        return target
    entries = [f for f in index_files(cached=target) if f["filename"] == target.name]
    if not entries:
        raise MatrixError(f"PyPI has no sdist {target.name}")
    data = download(entries[0]["url"], cached=target)
    if hashlib.sha256(data).hexdigest() != entries[0]["hashes"]["sha256"]:
        raise MatrixError(f"sdist of {version} does not match PyPI's sha256")
    write_atomically(target, data)
    return target


def unpack(version: str, dest: Path, cache: Path = SDISTS) -> None:
    """Extract the sdist's top directory into `dest` (which must not exist)."""
    dest.mkdir(parents=True)
    with tarfile.open(sdist(version, cache)) as tar:
        top = f"openai_agents-{version}/"
        members = [m for m in tar.getmembers() if m.name.startswith(top)]
        for m in members:
            m.name = m.name[len(top) :]
        kwargs = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(dest, members=[m for m in members if m.name], **kwargs)


def metadata(version: str, cache: Path = SDISTS) -> dict:
    """What `releases.toml` records of a release: its publish time, Requires-Python and the
    Pythons its classifiers declare (PyPI's simple index carries no classifiers)."""
    entries = [f for f in index_files() if f["filename"] == f"openai_agents-{version}.tar.gz"]
    if not entries:
        raise MatrixError(f"PyPI has no sdist of openai-agents {version}")
    with tarfile.open(sdist(version, cache)) as tar:
        member = tar.extractfile(f"openai_agents-{version}/PKG-INFO")
        info = Parser().parsestr(member.read().decode() if member else "")
    classifiers = info.get_all("Classifier") or []
    pythons = [
        c.rsplit(":: ", 1)[1]
        for c in classifiers
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    ]
    return {
        "version": version,
        "published": entries[0]["upload-time"][:19] + "Z",
        "requires_python": info["Requires-Python"] or "",
        "pythons": pythons,
    }
