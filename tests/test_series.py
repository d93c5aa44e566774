"""Series and git: apply, export, derive, and every committed series' form."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from kit import MatrixError, intake, releases, series

VERSIONS = releases.patched_versions()
ZERO_FROM = "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
UPSTREAM_ISSUE = r"https://github\.com/openai/openai-agents-python/issues/\d+"


def git(tree: Path, *args: str) -> str:
    return series.git(tree, *args)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A stand-in for a release's sdist tree: one file, committed and tagged `base`."""
    repo = tmp_path / "sdk"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "agent-release")
    (repo / "items.py").write_text("".join(f"line {i}\n" for i in range(20)))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "sdist")
    git(repo, "tag", "base")
    return repo


def make_series(
    tree: Path, patches: Path, version: str, edits: list[tuple[str, str]]
) -> list[Path]:
    """Commit each (old line, new line) edit in `tree`, export, and reset the tree to base."""
    for old, new in edits:
        path = tree / "items.py"
        path.write_text(path.read_text().replace(old, new))
        git(tree, "commit", "-q", "-am", f"items: change {old.strip()}")
    out = series.export_series(version, tree, patches / version)
    git(tree, "reset", "-q", "--hard", "base")
    return out


def trailers(patch: Path) -> str:
    message = patch.read_text().split("\n---\n", 1)[0]
    return subprocess.run(
        ["git", "interpret-trailers", "--parse"], input=message, capture_output=True, text=True
    ).stdout


def test_series_applies_and_exports_byte_identically(tree: Path, tmp_path: Path):
    patches = tmp_path / "patches"
    written = make_series(tree, patches, "0.22.3", [("line 3\n", "line three\n")])
    applied = series.apply_series("0.22.3", tree, patches)
    assert applied[0].endswith("items: change line 3")
    again = series.export_series("0.22.3", tree, tmp_path / "again")
    assert [p.read_bytes() for p in again] == [p.read_bytes() for p in written]


def test_export_names_the_tag_as_base_commit(tree: Path, tmp_path: Path):
    (patch,) = make_series(tree, tmp_path, "0.5.1", [("line 3\n", "line three\n")])
    assert series.base_commit(patch) == releases.RELEASES["0.5.1"].tag
    assert patch.read_text().startswith(ZERO_FROM)


def _diverge(tree: Path, patches: Path, version: str) -> None:
    """Make `tree`'s base differ from what the series expects, keeping base-commit: right."""
    (tree / "items.py").write_text("something else entirely\n")
    git(tree, "commit", "-q", "-am", "diverge")
    git(tree, "tag", "-f", "base")
    files = releases.series(version, patches)
    for patch in files:
        old = series.base_commit(files[0]) or "-"
        patch.write_text(patch.read_text().replace(old, git(tree, "rev-parse", "base").strip()))


def test_failing_patch_is_named_and_tree_left_clean(tree: Path, tmp_path: Path):
    patches = tmp_path / "patches"
    edits = [("line 3\n", "line three\n"), ("line 9\n", "line nine\n")]
    make_series(tree, patches, "0.22.3", edits)
    _diverge(tree, patches, "0.22.3")
    with pytest.raises(
        MatrixError, match=r"patches/0.22.3/0001-items-change-line-3.patch does not apply.*items.py"
    ):
        series.apply_series("0.22.3", tree, patches)
    assert not (tree / ".git" / "rebase-apply").exists()
    assert git(tree, "status", "--porcelain") == ""
    assert git(tree, "rev-parse", "HEAD") == git(tree, "rev-parse", "base")


def test_a_corrupt_patch_is_reported_with_gits_own_error(tree: Path, tmp_path: Path):
    patches = tmp_path / "patches"
    (patch,) = make_series(tree, patches, "0.22.3", [("line 3\n", "line three\n")])
    text = patch.read_text()
    patch.write_text(text.replace("+line three\n", "+line three\n+an extra line\n"))
    with pytest.raises(MatrixError) as raised:
        series.apply_series("0.22.3", tree, patches)
    assert re.search(r"does not apply to 0.22.3: corrupt patch at line \d+$", str(raised.value))
    assert "hint" not in str(raised.value) and "git am" not in str(raised.value)


def test_series_with_wrong_base_commit_is_refused(tree: Path, tmp_path: Path):
    (patch,) = make_series(tree, tmp_path, "0.5.1", [("line 3\n", "line three\n")])
    patch.write_text(patch.read_text().replace(releases.RELEASES["0.5.1"].tag, "f" * 40))
    with pytest.raises(
        MatrixError, match="names base-commit f{40}, but the base of 0.5.1 is 6a5d9ce"
    ):
        series.apply_series("0.5.1", tree, tmp_path)


# --- the committed series ---------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_series_form(version: str):
    directory = releases.PATCHES / version
    extra = {p.name for p in directory.iterdir()} - {p.name for p in directory.glob("*.patch")}
    assert extra <= {"README.md", "PULL_REQUEST.md"}
    files = releases.series(version)
    for number, patch in enumerate(files, 1):
        text = patch.read_text()
        assert patch.name.startswith(f"{number:04d}-")
        assert text.startswith(ZERO_FROM), f"{patch.name} is not format-patch --zero-commit output"
        subject = re.search(r"^Subject: \[PATCH\] (.*)$", text, re.M)
        assert subject and not subject.group(1).startswith("["), patch.name
        # Every patch names the upstream commit it fixes or corresponds to; a Bug: trailer is
        # there only where the patch is about an upstream issue, and must link to it.
        assert re.search(r"^(Applied-Upstream|Fixes): ", trailers(patch), re.M), patch.name
        for bug in re.findall(r"^Bug: (.*)$", trailers(patch), re.M):
            assert re.fullmatch(UPSTREAM_ISSUE, bug), f"{patch.name}: Bug: {bug}"
        assert ("base-commit: " in text) == (number == 1), patch.name


@pytest.mark.parametrize("version", VERSIONS)
def test_series_readme_is_generated_from_its_patches(version: str):
    readme = releases.PATCHES / version / "README.md"
    assert readme.read_text() == intake.readme(version), "run `nox -s export -- " + version + "`"


@pytest.mark.parametrize("version", VERSIONS)
def test_series_applies_and_reexports_byte_identically(version: str, tmp_path: Path):
    tree = series.make_tree(version, tmp_path / "sdk")
    series.apply_series(version, tree)
    again = series.export_series(version, tree, tmp_path / "again")
    committed = releases.series(version)
    assert [p.name for p in again] == [p.name for p in committed]
    for new, old in zip(again, committed):
        assert new.read_bytes() == old.read_bytes(), f"{old.name} differs on re-export"


def test_a_series_derived_from_its_neighbour_is_the_committed_one(tmp_path: Path):
    """`nox -s tree -- 0.23.1 --from 0.22.3`, then export: the committed 0.23.1 series."""
    tree = series.make_tree("0.23.1", tmp_path / "sdk")
    series.derive_series("0.23.1", "0.22.3", tree)
    derived = series.export_series("0.23.1", tree, tmp_path / "derived")
    assert [p.read_bytes() for p in derived] == [p.read_bytes() for p in releases.series("0.23.1")]


def test_deriving_across_a_conflict_leaves_git_am_to_resolve(tmp_path: Path):
    tree = series.make_tree("0.6.9", tmp_path / "sdk")
    with pytest.raises(MatrixError, match=r"conflicts in src/agents/run\.py.*git am --continue"):
        series.derive_series("0.6.9", "0.5.1", tree)
    assert (tree / ".git" / "rebase-apply").is_dir()
    assert "<<<<<<<" in (tree / "src" / "agents" / "run.py").read_text()
