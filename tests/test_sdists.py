"""Releases as PyPI has them: downloads that fail clearly, and each release's own metadata."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kit import MatrixError, releases, safe, sdists


def test_no_network_names_the_cache_it_looked_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sdists, "INDEX", "http://127.0.0.1:9/simple/openai-agents/")
    with pytest.raises(MatrixError) as raised:
        sdists.sdist("0.5.1", tmp_path)
    message = str(raised.value)
    assert message.startswith("could not download http://127.0.0.1:9/simple/openai-agents/")
    assert message.endswith(f"no cached copy at {tmp_path / 'openai_agents-0.5.1.tar.gz'}")
    assert [p.name for p in tmp_path.iterdir()] == [".lock-openai_agents-0.5.1.tar.gz"]


@pytest.mark.parametrize("version", ["0.0.19", "0.24.0"])
def test_metadata_is_what_releases_toml_records(version: str):
    """What add-release would write for a release is what the committed row says."""
    rel = releases.RELEASES[version]
    assert sdists.metadata(version) == {
        "version": version,
        "published": rel.published,
        "requires_python": rel.requires_python,
        "pythons": list(rel.pythons),
    }


def _damaged_copy(cache: Path) -> Path:
    """A cached 0.5.1 sdist with its recorded sha256, cut in half."""
    good = sdists.sdist("0.5.1")
    cached = cache / good.name
    for path in (good, safe.recorded(good)):
        shutil.copy(path, cache / path.name)
    cached.write_bytes(good.read_bytes()[:100_000])
    return cached


def test_a_damaged_sdist_is_downloaded_again(tmp_path: Path):
    cached = _damaged_copy(tmp_path)
    assert sdists.sdist("0.5.1", tmp_path) == cached
    assert safe.intact(cached)
    assert cached.read_bytes() == sdists.sdist("0.5.1").read_bytes()


def test_a_damaged_sdist_offline_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    cached = _damaged_copy(tmp_path)
    monkeypatch.setattr(sdists, "INDEX", "http://127.0.0.1:9/simple/openai-agents/")
    with pytest.raises(MatrixError) as raised:
        sdists.sdist("0.5.1", tmp_path)
    assert str(raised.value).endswith(f"the cached {cached} does not match PyPI's sha256")
