"""Patch coverage: the lines a series adds, and the share of them the patched cells ran."""

from __future__ import annotations

import json
import re
from pathlib import Path

from test_report import run

from kit import coverage, series

# --- coverage of the series -------------------------------------------------------------------


def git(tree: Path, *args: str) -> str:
    return series.git(tree, *args)


def test_added_lines_match_git_diff_across_a_series(tmp_path: Path):
    """Later patches move, keep or delete the lines that earlier ones added."""
    repo = tmp_path / "sdk"
    (repo / "src" / "agents").mkdir(parents=True)
    items = repo / "src" / "agents" / "items.py"
    items.write_text("".join(f"line {i}\n" for i in range(30)))
    (repo / "README.md").write_text("readme\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "tag", "base")
    edits = [
        lambda t: t.replace("line 10\n", "line 10\nnew a\nnew b\n").replace("line 25\n", "new c\n"),
        lambda t: "header\n"
        + t.replace("new a\n", "").replace("line 3\n", "").replace("line 29\n", ""),
        lambda t: t + "tail\n",
    ]
    for i, edit in enumerate(edits):
        items.write_text(edit(items.read_text()))
        (repo / "README.md").write_text(f"readme {i}\n")
        (repo / "src" / "agents" / f"new_{i}.py").write_text("x = 1\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"edit {i}")
    git(repo, "rm", "-q", "src/agents/new_0.py")
    git(repo, "commit", "-q", "-m", "drop new_0")
    git(repo, "format-patch", "-q", "-o", str(tmp_path / "series"), "base..HEAD")

    expected: dict[str, set[int]] = {}
    for path in ("items.py", "new_1.py", "new_2.py"):
        diff = git(repo, "diff", "-U0", "base", "HEAD", "--", f"src/agents/{path}")
        for start, count in re.findall(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", diff, re.M):
            lines = range(int(start), int(start) + int(count or 1))
            expected.setdefault(f"agents/{path}", set()).update(lines)
    found = coverage.added_lines(sorted((tmp_path / "series").glob("*.patch")))
    assert found == expected
    assert found["agents/items.py"] == {1, 12, 27, 31}  # header, new b, new c, tail


def test_added_lines_skip_lines_a_series_only_reindents(tmp_path: Path):
    """Wrapping a loop body in try/finally adds two lines, not the whole body."""
    repo = tmp_path / "sdk"
    (repo / "src" / "agents").mkdir(parents=True)
    run = repo / "src" / "agents" / "run.py"
    run.write_text("while True:\n    step()\n    if done:\n        break\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "tag", "base")
    run.write_text(
        "while True:\n    try:\n        step()\n        if done:\n            break\n"
        "    finally:\n        clear()\n"
    )
    git(repo, "commit", "-q", "-am", "wrap")
    run.write_text(run.read_text().replace("        step()\n", "        step(fast=True)\n"))
    git(repo, "commit", "-q", "-am", "change a wrapped line")
    git(repo, "format-patch", "-q", "-o", str(tmp_path / "series"), "base..HEAD")

    found = coverage.added_lines(sorted((tmp_path / "series").glob("*.patch")))
    assert found == {"agents/run.py": {2, 3, 6, 7}}  # try, the changed call, finally, clear


def test_patch_coverage_counts_added_executable_lines(tmp_path: Path, patches: Path):
    build = tmp_path / "build"
    build.mkdir()
    site = ".nox/compat-0-5-1-patched-py3-11/lib/python3.11/site-packages"
    (build / "coverage-0.5.1-patched-py3.11.json").write_text(
        json.dumps(
            {
                "files": {
                    f"{site}/agents/items.py": {"executed_lines": [1, 3], "missing_lines": [4, 5]},
                    f"{site}/agents/run.py": {"executed_lines": [3, 4], "missing_lines": []},
                }
            }
        )
    )
    (build / "coverage-0.5.1-patched-py3.12.json").write_text(
        json.dumps(
            {
                "files": {
                    "/x/site-packages/agents/items.py": {
                        "executed_lines": [4],
                        "missing_lines": [3, 5],
                    }
                }
            }
        )
    )
    cov = coverage.patch_coverage("0.5.1", build, patches)
    assert cov == {
        "covered": 2,
        "executable": 3,
        "percent": 66.7,
        "missed": {"agents/items.py": [5]},
    }
    assert coverage.coverage_text(cov) == "66.7% (2/3 lines)"
    assert coverage.patch_coverage("0.6.9", build, patches) is None
    (build / "coverage-0.5.1-patched-py3.13.json").write_text('{"files": {"/x/site-pa')
    assert coverage.patch_coverage("0.5.1", build, patches) == cov  # a file still being written
    data, build = run(tmp_path, patches)
    assert data["releases"][0]["coverage"] == cov
    assert "| 1 | 66.7% (2/3 lines) |" in (build / "report.md").read_text()
