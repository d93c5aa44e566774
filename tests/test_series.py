"""Every committed series: unedited format-patch output that applies and re-exports unchanged."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import sdk_matrix

VERSIONS = sdk_matrix.patched_versions()
SDISTS = Path(__file__).resolve().parent.parent / ".nox" / ".cache" / "sdists"
ZERO_FROM = "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"


def trailers(patch: Path) -> str:
    message = patch.read_text().split("\n---\n", 1)[0]
    return subprocess.run(
        ["git", "interpret-trailers", "--parse"], input=message, capture_output=True, text=True
    ).stdout


@pytest.mark.parametrize("version", VERSIONS)
def test_series_form(version: str):
    directory = sdk_matrix.PATCHES / version
    extra = {p.name for p in directory.iterdir()} - {p.name for p in directory.glob("*.patch")}
    assert extra <= {"README.md", "PULL_REQUEST.md"}
    series = sdk_matrix.series(version)
    for number, patch in enumerate(series, 1):
        text = patch.read_text()
        assert patch.name.startswith(f"{number:04d}-")
        assert text.startswith(ZERO_FROM), f"{patch.name} is not format-patch --zero-commit output"
        subject = re.search(r"^Subject: \[PATCH\] (.*)$", text, re.M)
        assert subject and not subject.group(1).startswith("["), patch.name
        assert "Bug: https://github.com/openai/openai-agents-python/issues/2008" in trailers(patch)
        assert re.search(r"^(Applied-Upstream|Fixes): ", trailers(patch), re.M), patch.name
        assert ("base-commit: " in text) == (number == 1), patch.name


@pytest.mark.parametrize("version", VERSIONS)
def test_series_applies_and_reexports_byte_identically(version: str, tmp_path: Path):
    tree = sdk_matrix.make_tree(version, tmp_path / "sdk", SDISTS)
    sdk_matrix.apply_series(version, tree)
    again = sdk_matrix.export_series(version, tree, tmp_path / "again")
    committed = sdk_matrix.series(version)
    assert [p.name for p in again] == [p.name for p in committed]
    for new, old in zip(again, committed):
        assert new.read_bytes() == old.read_bytes(), f"{old.name} differs on re-export"


def test_local_version_label(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "openai-agents"\nversion = "0.5.1"\n'
    )
    assert sdk_matrix.set_local_version(tmp_path, "0.5.1") == "0.5.1+agentrelease.1"
    assert 'version = "0.5.1+agentrelease.1"' in (tmp_path / "pyproject.toml").read_text()
    with pytest.raises(sdk_matrix.MatrixError):
        sdk_matrix.set_local_version(tmp_path, "0.5.1")


def test_a_series_derived_from_its_neighbour_is_the_committed_one(tmp_path: Path):
    """`nox -s tree -- 0.23.1 --from 0.22.3`, then export: the committed 0.23.1 series."""
    tree = sdk_matrix.make_tree("0.23.1", tmp_path / "sdk", SDISTS)
    sdk_matrix.derive_series("0.23.1", "0.22.3", tree, SDISTS)
    derived = sdk_matrix.export_series("0.23.1", tree, tmp_path / "derived")
    assert [p.read_bytes() for p in derived] == [
        p.read_bytes() for p in sdk_matrix.series("0.23.1")
    ]


def test_deriving_across_a_conflict_leaves_git_am_to_resolve(tmp_path: Path):
    tree = sdk_matrix.make_tree("0.6.9", tmp_path / "sdk", SDISTS)
    with pytest.raises(
        sdk_matrix.MatrixError, match=r"conflicts in src/agents/run\.py.*git am --continue"
    ):
        sdk_matrix.derive_series("0.6.9", "0.5.1", tree, SDISTS)
    assert (tree / ".git" / "rebase-apply").is_dir()
    assert "<<<<<<<" in (tree / "src" / "agents" / "run.py").read_text()
