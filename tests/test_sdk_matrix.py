"""The tooling behind the matrix: release list, series discovery, apply, export, expectations."""

from __future__ import annotations

from pathlib import Path

import pytest

import sdk_matrix
from sdk_matrix import MatrixError


def git(tree: Path, *args: str) -> str:
    return sdk_matrix.git(tree, *args)


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
    out = sdk_matrix.export_series(version, tree, patches / version)
    git(tree, "reset", "-q", "--hard", "base")
    return out


def test_unknown_release_lists_known_ones():
    with pytest.raises(MatrixError, match="unknown SDK release '9.9.9'.*0.0.19.*0.24.0"):
        sdk_matrix.release("9.9.9")


def test_patch_directory_for_unknown_release_is_an_error(tmp_path: Path):
    (tmp_path / "0.5.1").mkdir()
    (tmp_path / "0.5.2").mkdir()
    with pytest.raises(MatrixError, match="0.5.2"):
        sdk_matrix.patched_versions(tmp_path)


def test_patch_directory_not_named_after_a_version_is_an_error(tmp_path: Path):
    (tmp_path / "latest").mkdir()
    with pytest.raises(MatrixError, match="patches/latest/"):
        sdk_matrix.patched_versions(tmp_path)


def test_patched_versions_sort_by_version(tmp_path: Path):
    for name in ("0.10.5", "0.2.11", "0.5.1"):
        (tmp_path / name).mkdir()
    assert sdk_matrix.patched_versions(tmp_path) == ["0.2.11", "0.5.1", "0.10.5"]


def test_cells_cover_every_release_and_only_supported_pythons():
    cells = sdk_matrix.cells()
    assert {v for _, v, _ in cells} == set(sdk_matrix.RELEASES)
    assert ("3.9", "0.9.3", "unpatched") not in cells
    assert ("3.9", "0.8.4", "unpatched") in cells
    patched = {v for _, v, variant in cells if variant == "patched"}
    assert patched == set(sdk_matrix.patched_versions())


def test_series_applies_and_exports_byte_identically(tree: Path, tmp_path: Path):
    patches = tmp_path / "patches"
    written = make_series(tree, patches, "0.22.3", [("line 3\n", "line three\n")])
    applied = sdk_matrix.apply_series("0.22.3", tree, patches)
    assert applied[0].endswith("items: change line 3")
    again = sdk_matrix.export_series("0.22.3", tree, tmp_path / "again")
    assert [p.read_bytes() for p in again] == [p.read_bytes() for p in written]


def test_export_names_the_tag_as_base_commit(tree: Path, tmp_path: Path):
    (patch,) = make_series(tree, tmp_path, "0.5.1", [("line 3\n", "line three\n")])
    assert sdk_matrix.base_commit(patch) == sdk_matrix.RELEASES["0.5.1"].tag_commit
    assert patch.read_text().startswith("From 0000000000000000000000000000000000000000 ")


def test_failing_patch_is_named_and_tree_left_clean(tree: Path, tmp_path: Path):
    patches = tmp_path / "patches"
    make_series(
        tree, patches, "0.22.3", [("line 3\n", "line three\n"), ("line 9\n", "line nine\n")]
    )
    (tree / "items.py").write_text("something else entirely\n")
    git(tree, "commit", "-q", "-am", "diverge")
    git(tree, "tag", "-f", "base")
    series = sdk_matrix.series("0.22.3", patches)
    for patch in series:  # keep the base-commit check satisfied: it is not what is under test
        patch.write_text(
            patch.read_text().replace(
                sdk_matrix.base_commit(series[0]) or "-", git(tree, "rev-parse", "base").strip()
            )
        )
    with pytest.raises(
        MatrixError, match=r"patches/0.22.3/0001-items-change-line-3.patch does not apply.*items.py"
    ):
        sdk_matrix.apply_series("0.22.3", tree, patches)
    assert not (tree / ".git" / "rebase-apply").exists()
    assert git(tree, "status", "--porcelain") == ""
    assert git(tree, "rev-parse", "HEAD") == git(tree, "rev-parse", "base")


def test_series_with_wrong_base_commit_is_refused(tree: Path, tmp_path: Path):
    (patch,) = make_series(tree, tmp_path, "0.5.1", [("line 3\n", "line three\n")])
    patch.write_text(patch.read_text().replace(sdk_matrix.RELEASES["0.5.1"].tag_commit, "f" * 40))
    with pytest.raises(
        MatrixError, match="names base-commit f{40}, but the base of 0.5.1 is 6a5d9ce"
    ):
        sdk_matrix.apply_series("0.5.1", tree, tmp_path)


def test_series_without_patches_is_an_error(tmp_path: Path):
    (tmp_path / "0.5.1").mkdir()
    with pytest.raises(MatrixError, match="holds no"):
        sdk_matrix.series("0.5.1", tmp_path)


def test_expectations_name_only_known_releases(tmp_path: Path):
    table = tmp_path / "expectations.toml"
    table.write_text('["0.5.1".unpatched]\nrelease_then_gc = "no API"\n["9.9.9".unpatched]\n')
    with pytest.raises(MatrixError, match="9.9.9"):
        sdk_matrix.expected_failures("0.5.1", "unpatched", table)


def test_expectations_of_a_cell(tmp_path: Path):
    table = tmp_path / "expectations.toml"
    table.write_text('["0.5.1".unpatched]\nrelease_then_gc = "no API"\n')
    assert sdk_matrix.expected_failures("0.5.1", "unpatched", table) == {
        "release_then_gc": "no API"
    }
    assert sdk_matrix.expected_failures("0.5.1", "patched", table) == {}


def test_no_network_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sdk_matrix, "INDEX", "http://127.0.0.1:9/simple/openai-agents/")
    with pytest.raises(MatrixError, match="could not download http://127.0.0.1:9/.*no cached copy"):
        sdk_matrix.sdist("0.5.1", tmp_path)
    assert list(tmp_path.iterdir()) == []
