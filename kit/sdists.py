"""Releases as PyPI has them: the index, each release's sdist (downloaded once, hash-checked,
cached) and the metadata in it."""

from __future__ import annotations

import hashlib
import json
import re
import tarfile
import urllib.error
import urllib.request
import zlib
from email.parser import Parser
from pathlib import Path

from . import CACHE, MatrixError
from .safe import intact, locked, recorded, sha256, write_recorded

INDEX = "https://pypi.org/simple/openai-agents/"  # PEP 691 JSON
SDISTS = CACHE / "sdists"


def download(url: str, accept: str = "*/*", cached: str | None = None) -> bytes:
    """The bytes at `url`; offline, the error says what the cache holds instead (`cached`)."""
    request = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.read()
    except urllib.error.HTTPError as exc:
        raise MatrixError(f"could not download {url}: HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        where = cached or "nothing cached to fall back on"
        raise MatrixError(f"could not download {url} ({exc}); {where}") from None


def index_files(cached: str | None = None) -> list[dict]:
    """Every file PyPI has for openai-agents, with its hashes and upload time."""
    data = download(INDEX, "application/vnd.pypi.simple.v1+json", cached)
    return json.loads(data)["files"]


def sdist(version: str, cache: Path = SDISTS) -> Path:
    """The release's sdist from PyPI, downloaded once into `cache` with PyPI's sha256, and
    downloaded again when the cached bytes no longer match it."""
    target = cache / f"openai_agents-{version}.tar.gz"
    if intact(target):
        return target
    with locked(cache, target.name):
        if intact(target):  # another stream downloaded it meanwhile
            return target
        cached = f"no cached copy at {target}"
        if target.exists():
            why = "does not match" if recorded(target).exists() else "has no record of"
            cached = f"the cached {target} {why} PyPI's sha256"
        entries = [f for f in index_files(cached) if f["filename"] == target.name]
        if not entries:
            raise MatrixError(f"PyPI has no sdist {target.name}")
        digest = entries[0]["hashes"]["sha256"]
        if target.exists() and sha256(target) == digest:  # cached before digests were recorded
            write_recorded(target, target.read_bytes(), digest)
            return target
        data = download(entries[0]["url"], cached=cached)
        if hashlib.sha256(data).hexdigest() != digest:
            raise MatrixError(f"sdist of {version} does not match PyPI's sha256")
        write_recorded(target, data, digest)
    return target


def unpack(version: str, dest: Path, cache: Path = SDISTS) -> None:
    """Extract the sdist's top directory into `dest` (which must not exist)."""
    path = sdist(version, cache)
    dest.mkdir(parents=True)
    try:
        with tarfile.open(path) as tar:
            top = f"openai_agents-{version}/"
            members = [m for m in tar.getmembers() if m.name.startswith(top)]
            for m in members:
                m.name = m.name[len(top) :]
            kwargs = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(dest, members=[m for m in members if m.name], **kwargs)
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        raise MatrixError(f"{path} is not a readable sdist ({exc}); delete it") from None


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
