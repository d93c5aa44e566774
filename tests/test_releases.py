"""The release data (releases.toml), series discovery, the cells and their build numbers."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kit import MatrixError, releases


def test_unknown_release_lists_known_ones():
    with pytest.raises(MatrixError, match="unknown SDK release '9.9.9'.*0.0.19.*0.24.0"):
        releases.release("9.9.9")


def test_upstreams_fix_is_no_row_and_says_why():
    with pytest.raises(MatrixError, match="0.6.0 is upstream's first release with the fix"):
        releases.release("0.6.0")
    assert releases.any_release("0.6.0") == releases.UPSTREAM_FIX


def test_releases_toml_is_in_its_one_written_format():
    """What add-release and export write is what is committed: reproducible byte for byte."""
    text = releases.RELEASES_FILE.read_text()
    assert releases.dump(releases.RELEASES, releases.UPSTREAM_FIX) == text


ROW = 'version = "0.5.1"\npublished = "2025-11-13T17:59:36Z"\nrequires_python = ">=3.9"\n'


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ((ROW, ROW + "published ="), r"^releases.toml: Invalid value \(at line 68, column 12\)$"),
        (
            ('published = "2025-11-13T17:59:36Z"\n', ""),
            r"^releases.toml:64: \[\[release\]\] 0.5.1: missing field published$",
        ),
        (
            ('version = "0.5.1"', 'version = "0.5.l"'),
            r":64: \[\[release\]\] 0.5.l: version = '0.5.l' is not a PEP 440 version",
        ),
        (
            (ROW, ROW.replace(">=3.9", "3.9+")),
            r":64: \[\[release\]\] 0.5.1: requires_python = '3.9\+' is not a PEP 440 specifier",
        ),
        (
            ('published = "2025-11-13T17:59:36Z"', 'published = "last week"'),
            "0.5.1: published = 'last week' is not an upload time",
        ),
        (
            ('version = "0.5.1"', 'version = "0.99.0"'),
            r":73: \[\[release\]\] 0.6.9: after 0.99.0; releases must be listed oldest first",
        ),
        (
            ('version = "0.6.9"', 'version = "0.5.1"'),
            r":73: \[\[release\]\] 0.5.1: listed twice; keep one row per release",
        ),
    ],
    ids=[
        "toml-syntax",
        "missing-field",
        "version-typo",
        "requires-python",
        "published",
        "order",
        "duplicate",
    ],
)
def test_a_bad_releases_toml_is_one_line_naming_its_row(tmp_path: Path, edit, message):
    text = releases.RELEASES_FILE.read_text()
    assert edit[0] in text
    path = tmp_path / "releases.toml"
    path.write_text(text.replace(*edit, 1))
    with pytest.raises(MatrixError, match=message) as raised:
        releases._load(path)
    assert "\n" not in str(raised.value)


def series_dir(patches: Path, name: str) -> None:
    (patches / name).mkdir(parents=True)
    (patches / name / "0001-fix.patch").write_text("Subject: [PATCH] fix\n")


def test_patch_directory_for_unknown_release_is_an_error(tmp_path: Path):
    series_dir(tmp_path, "0.5.1")
    series_dir(tmp_path, "9.9.9")
    with pytest.raises(MatrixError, match=r"^patches/9.9.9/ has no row in releases.toml"):
        releases.patched_versions(tmp_path)


def test_an_empty_patch_directory_is_an_error(tmp_path: Path):
    series_dir(tmp_path, "0.5.1")
    (tmp_path / "0.6.9").mkdir()
    with pytest.raises(MatrixError, match=r"^patches/0.6.9/ holds no \*.patch files"):
        releases.patched_versions(tmp_path)


def test_patch_directory_not_named_after_a_version_is_an_error(tmp_path: Path):
    (tmp_path / "latest").mkdir()
    with pytest.raises(MatrixError, match="patches/latest/"):
        releases.patched_versions(tmp_path)


def test_patched_versions_sort_by_version(tmp_path: Path):
    for name in ("0.10.5", "0.2.11", "0.5.1"):
        series_dir(tmp_path, name)
    assert releases.patched_versions(tmp_path) == ["0.2.11", "0.5.1", "0.10.5"]


def test_series_without_patches_is_an_error(tmp_path: Path):
    (tmp_path / "0.5.1").mkdir()
    with pytest.raises(MatrixError, match="holds no"):
        releases.series("0.5.1", tmp_path)


def test_cells_cover_every_release_on_its_own_pythons():
    cells = releases.cells()
    assert {c.version for c in cells} == set(releases.RELEASES)
    for cell in cells:
        assert cell.python in releases.pythons(releases.RELEASES[cell.version])
    patched = {c.version for c in cells if c.variant == "patched"}
    assert patched == set(releases.patched_versions())
    assert releases.Cell("3.11", "0.5.1", "patched").key == "0.5.1-patched-py3.11"


def test_smoke_cells_are_every_release_on_ci_python_and_the_edges_elsewhere():
    smoke = [c for c in releases.cells() if releases.smoke(c)]
    assert {c.version for c in smoke if c.python == releases.CI_PYTHON} == set(releases.RELEASES)
    assert {(c.python, c.version) for c in smoke if c.python == "3.9"} == {
        ("3.9", "0.0.19"),
        ("3.9", "0.5.1"),
        ("3.9", "0.8.4"),
    }


@pytest.mark.parametrize("version", releases.patched_versions())
def test_build_number_names_the_committed_series(version: str):
    """A series that changed since its build number was set would ship as an older wheel's
    version: `nox -s export` takes the next number; this catches a series edited otherwise."""
    rel = releases.RELEASES[version]
    assert rel.build >= 1
    assert rel.series_sha256 == releases.series_hash(version), (
        f"patches/{version}/ changed since build {rel.build}: run `nox -s export -- {version}`"
    )


def test_record_series_takes_the_next_build_number_only_when_the_series_changed(monkeypatch):
    saved = []
    monkeypatch.setattr(releases, "save", saved.append)
    assert releases.record_series("0.5.1") == releases.RELEASES["0.5.1"]
    assert saved == []
    old = releases.RELEASES["0.5.1"]
    monkeypatch.setitem(
        releases.RELEASES, "0.5.1", dataclasses.replace(old, series_sha256="0" * 64)
    )
    new = releases.record_series("0.5.1")
    assert (new.build, new.series_sha256) == (old.build + 1, releases.series_hash("0.5.1"))
    assert saved[0]["0.5.1"] == new


def test_saving_never_drops_a_maintainers_line(tmp_path: Path):
    path = tmp_path / "releases.toml"
    text = releases.RELEASES_FILE.read_text()
    edited = text.replace(
        '[[release]]\nversion = "0.5.1"', '[[release]]\n# pinned: see #2008\nversion = "0.5.1"'
    )
    path.write_text(edited)
    number = edited.splitlines().index("# pinned: see #2008") + 1
    with pytest.raises(
        MatrixError, match=rf"^releases.toml:{number}: '# pinned: see #2008' is not"
    ):
        releases.save(dict(releases.RELEASES), path)
    assert path.read_text() == edited
    path.write_text(text)
    releases.save(dict(releases.RELEASES), path)
    assert path.read_text() == text
