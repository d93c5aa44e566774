"""Releases as PyPI has them: downloads that fail clearly, and each release's own metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit import MatrixError, releases, sdists


def test_no_network_names_the_cache_it_looked_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sdists, "INDEX", "http://127.0.0.1:9/simple/openai-agents/")
    with pytest.raises(MatrixError) as raised:
        sdists.sdist("0.5.1", tmp_path)
    message = str(raised.value)
    assert message.startswith("could not download http://127.0.0.1:9/simple/openai-agents/")
    assert message.endswith(f"no cached copy at {tmp_path / 'openai_agents-0.5.1.tar.gz'}")
    assert list(tmp_path.iterdir()) == []


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
