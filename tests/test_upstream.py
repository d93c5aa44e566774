"""`nox -s upstream` checks a release with the release's own commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit import releases, upstream

MAKEFILES = {
    "mypy: \n\tuv run mypy . --exclude site\n": ["mypy", ".", "--exclude", "site"],  # 0.2-0.19
    "mypy:\n\tuv run mypy .\n": ["mypy", "."],  # 0.0.x
    "lint:\n\tuv run ruff check\n\nmypy: \n\tuv run mypy src\n": ["mypy", "src"],  # 0.20 on
}


@pytest.mark.parametrize("makefile", MAKEFILES)
def test_mypy_is_the_releases_own_make_mypy(makefile: str, tmp_path: Path):
    (tmp_path / "Makefile").write_text(makefile)
    assert upstream.mypy_command(tmp_path) == MAKEFILES[makefile]


def test_mypy_without_a_makefile_checks_src(tmp_path: Path):
    assert upstream.mypy_command(tmp_path) == ["mypy", "src"]


def test_junit_ids_become_pytest_node_ids(tmp_path: Path):
    (tmp_path / "tests" / "sandbox").mkdir(parents=True)
    (tmp_path / "tests" / "sandbox" / "test_files.py").write_text("")
    (tmp_path / "tests" / "test_run.py").write_text("")
    assert (
        upstream.node_id(tmp_path, "tests.sandbox.test_files::test_lease[read]")
        == "tests/sandbox/test_files.py::test_lease[read]"
    )
    assert (
        upstream.node_id(tmp_path, "tests.test_run.TestRun::test_once")
        == "tests/test_run.py::TestRun::test_once"
    )


def test_summary_is_one_line_unpatched_to_patched():
    entry = {
        "unpatched": {"passed": 1024, "failed": 0, "skipped": 4, "ruff": 0, "mypy": 0},
        "patched": {"passed": 1056, "skipped": 4, "ruff": 0, "mypy": 1},
        "added": ["mypy: src/agents/items.py:1: error: x"],
    }
    assert upstream.summary("0.5.1", entry) == (
        "0.5.1: passed 1024 -> 1056, failed 0 -> 0, skipped 4 -> 4; ruff 0 -> 0; mypy 0 -> 1; "
        "added by the series: mypy: src/agents/items.py:1: error: x"
    )


def test_the_unpatched_half_is_kept_until_the_lock_changes(tmp_path: Path, monkeypatch):
    runs = []
    monkeypatch.setattr(upstream, "checks", lambda tree, label, log: runs.append(label) or {"n": 1})
    tree, cache = tmp_path / "tree", tmp_path / ".nox" / ".cache"
    tree.mkdir()
    (tree / "uv.lock").write_text("a")
    assert upstream.unpatched("0.5.1", tree, print, cache) == {"n": 1}
    assert upstream.unpatched("0.5.1", tree, print, cache) == {"n": 1}
    assert runs == ["0.5.1 unpatched"]
    (tree / "uv.lock").write_text("b")
    upstream.unpatched("0.5.1", tree, print, cache)
    kept = next((cache / "upstream").glob("0.5.1-*.json"))
    kept.write_text("{not json")
    upstream.unpatched("0.5.1", tree, print, cache)
    assert runs == ["0.5.1 unpatched"] * 3


def test_check_names_series_whose_row_is_missing_or_stale():
    versions = releases.patched_versions()
    rows = {v: {"series_sha256": releases.series_hash(v)} for v in versions}
    assert upstream.stale({"releases": rows}) == []
    rows[versions[0]] = {"series_sha256": "0" * 64}
    del rows[versions[-1]]
    assert upstream.stale({"releases": rows}) == [
        f"{versions[0]}: the series changed since its row",
        f"{versions[-1]}: no row",
    ]
