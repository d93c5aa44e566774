"""The report of the compat matrix, patch coverage, CI's cell selection and the release scan."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import report
import sdk_matrix

# What pytest's JUnit writer (junit_family=legacy) puts in a testcase, by outcome.
BODIES = {
    "passed": "",
    "failed": '<failure message="AssertionError: agent alive">assert collected(ref)</failure>',
    "bug": '<skipped type="pytest.xfail" message="items hold their agent" />',
    "xpass": '<failure message="[XPASS(strict)] items hold their agent">[XPASS(strict)]</failure>',
    "skipped": '<skipped type="pytest.skip" message="no streaming">skipped</skipped>',
}


def junit(build: Path, cell: str, outcomes: dict[str, str], suite: str = "pytest") -> Path:
    """Write junit-<cell>.xml with one testcase per `point::test` id."""
    cases = []
    for test_id, outcome in outcomes.items():
        point, name = test_id.split("::")
        attrs = (
            f'classname="test_{point}" name="{name}" file="test_{point}.py" line="1" time="0.01"'
        )
        cases.append(f"<testcase {attrs}>{BODIES[outcome]}</testcase>")
    build.mkdir(parents=True, exist_ok=True)
    path = build / f"junit-{cell}.xml"
    path.write_text(
        f'<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="{suite}" tests="1">'
        + "".join(cases)
        + "</testsuite></testsuites>"
    )
    return path


PASSING = {"release_then_gc::test_frees": "passed", "kept_items::test_keeps": "passed"}
MATRIX = [
    ("3.11", "0.5.1", "unpatched"),
    ("3.11", "0.5.1", "patched"),
    ("3.11", "0.6.9", "unpatched"),
]


@pytest.fixture
def patches(tmp_path: Path) -> Path:
    """A series for 0.5.1: one patch adding three lines to src/agents/items.py."""
    (tmp_path / "patches" / "0.5.1").mkdir(parents=True)
    (tmp_path / "patches" / "0.5.1" / "0001-items-release.patch").write_text(
        "Subject: [PATCH] items: release\n---\n"
        "diff --git a/src/agents/items.py b/src/agents/items.py\n"
        "--- a/src/agents/items.py\n+++ b/src/agents/items.py\n"
        "@@ -2,2 +2,5 @@\n line2\n+added3\n+added4\n+added5\n line3\n"
    )
    return tmp_path / "patches"


def run(tmp_path: Path, patches: Path) -> tuple[dict, Path]:
    build = tmp_path / "build"
    build.mkdir(exist_ok=True)
    return report.write_reports(build, patches, MATRIX), build


def cell(data: dict, key: str) -> dict:
    return next(c for r in data["releases"] for c in r["cells"] if c["key"] == key)


def test_passed_cell(tmp_path: Path, patches: Path):
    junit(tmp_path / "build", "0.6.9-unpatched-py3.11", PASSING)
    data, build = run(tmp_path, patches)
    got = cell(data, "0.6.9-unpatched-py3.11")
    assert (got["status"], got["label"], got["unexpected"]) == ("passed", "2 passed", False)
    assert "| 0.6.9 | ✅ 2 passed | — |" in (build / "report.md").read_text()


def test_expected_failures_are_shown_as_bug_shown(tmp_path: Path, patches: Path):
    junit(
        tmp_path / "build",
        "0.5.1-unpatched-py3.11",
        {**PASSING, "release_then_gc::test_frees": "bug"},
    )
    data, build = run(tmp_path, patches)
    got = cell(data, "0.5.1-unpatched-py3.11")
    assert (got["status"], got["label"], got["unexpected"]) == (
        "bug-shown",
        "1 bug shown, 1 passed",
        False,
    )
    assert "🐞 1 bug shown, 1 passed" in (build / "report.md").read_text()


def test_unexpected_xpass_is_highlighted_and_listed(tmp_path: Path, patches: Path):
    junit(
        tmp_path / "build",
        "0.5.1-unpatched-py3.11",
        {**PASSING, "release_then_gc::test_frees": "xpass"},
    )
    data, build = run(tmp_path, patches)
    got = cell(data, "0.5.1-unpatched-py3.11")
    assert (got["status"], got["unexpected"]) == ("failed", True)
    md = (build / "report.md").read_text()
    assert "❌ **1 unexpectedly passed, 1 passed**" in md
    assert "- `0.5.1-unpatched-py3.11` `release_then_gc::test_frees`: [XPASS(strict)]" in md
    assert data["totals"]["unexpected"] == 1


def test_patched_failure_is_highlighted(tmp_path: Path, patches: Path):
    junit(
        tmp_path / "build", "0.5.1-patched-py3.11", {**PASSING, "kept_items::test_keeps": "failed"}
    )
    data, build = run(tmp_path, patches)
    assert cell(data, "0.5.1-patched-py3.11")["status"] == "failed"
    md = (build / "report.md").read_text()
    assert "❌ **1 failed, 1 passed**" in md
    assert "<details><summary>Failing tests (1)</summary>" in md
    assert "`kept_items::test_keeps`: AssertionError: agent alive" in md


def test_unpatched_passing_everything_with_a_series_may_be_obsolete(tmp_path: Path, patches: Path):
    junit(tmp_path / "build", "0.5.1-unpatched-py3.11", PASSING)
    data, build = run(tmp_path, patches)
    assert cell(data, "0.5.1-unpatched-py3.11")["status"] == "obsolete"
    assert "⚠️ **2 passed: patch may be obsolete**" in (build / "report.md").read_text()


def test_a_cell_without_junit_is_not_run_never_passed(tmp_path: Path, patches: Path):
    junit(tmp_path / "build", "0.6.9-unpatched-py3.11", PASSING)
    data, build = run(tmp_path, patches)
    got = cell(data, "0.5.1-patched-py3.11")
    assert (got["status"], got["label"], got["cases"]) == ("not-run", "not run", [])
    assert data["totals"] == {"cells": 3, "unexpected": 0, "not_run": 2, "as_expected": 1}
    assert "| 0.5.1 | ⚪ not run | ⚪ not run | 1 |" in (build / "report.md").read_text()


def test_collection_errors_and_unreadable_files_fail_the_cell(tmp_path: Path):
    build = tmp_path / "build"
    build.mkdir()
    (build / "junit-0.6.9-unpatched-py3.11.xml").write_text(
        '<testsuites><testsuite name="pytest"><testcase classname="" name="test_streaming" '
        'file="test_streaming.py"><error message="collection failure">ImportError</error>'
        "</testcase></testsuite></testsuites>"
    )
    (build / "junit-0.5.1-unpatched-py3.11.xml").write_text("<testsuites><testsu")
    cells = {c.key: c for c in report.collect(build, tmp_path / "none", MATRIX)}
    assert [(c.id, c.outcome) for c in cells["0.6.9-unpatched-py3.11"].cases] == [
        ("streaming", "failed")
    ]
    assert cells["0.5.1-unpatched-py3.11"].status == "failed"


def test_header_names_bases_and_trigger(tmp_path: Path, patches: Path, monkeypatch):
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    junit(tmp_path / "build", "0.6.9-unpatched-py3.11", PASSING)
    data, build = run(tmp_path, patches)
    md = (build / "report.md").read_text()
    assert "Trigger: `pull_request` · bases: 0.5.1 `6a5d9ce` · 0.6.9 `512b9b6`" in md
    assert data["trigger"] == "pull_request"


def test_md_html_and_json_outputs(tmp_path: Path, patches: Path, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    junit(
        tmp_path / "build", "0.5.1-unpatched-py3.11", {**PASSING, "kept_items::test_keeps": "bug"}
    )
    junit(
        tmp_path / "build", "0.5.1-patched-py3.11", {**PASSING, "kept_items::test_keeps": "failed"}
    )
    junit(tmp_path / "build", "latest-unpatched-py3.11", PASSING, suite="openai-agents 9.0")
    data, build = run(tmp_path, patches)

    md = (build / "report.md").read_text()
    assert summary.read_text() == "earlier step\n" + md
    assert md.startswith("### SDK compatibility (contract tests)")
    assert "| latest | ✅ 2 passed | — |" in md

    assert json.loads((build / "report.json").read_text()) == data
    assert [r["version"] for r in data["releases"]] == ["0.5.1", "0.6.9", "latest"]
    assert data["releases"][-1]["base"] == "openai-agents 9.0"

    page = (build / "report.html").read_text()
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    assert "<link" not in page and " src=" not in page and "http" not in page  # self-contained
    for anchor in ("id='r-0.5.1'", "id='c-0.5.1-patched-py3.11'", "id='p-kept_items'"):
        assert anchor in page
    assert (
        "<td class=failed><a href='#c-0.5.1-patched-py3.11'>✗ 1 failed, 1 passed</a></td>" in page
    )


# --- coverage of the series -------------------------------------------------------------------


def git(tree: Path, *args: str) -> str:
    return sdk_matrix.git(tree, *args)


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
    found = report.added_lines(sorted((tmp_path / "series").glob("*.patch")))
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

    found = report.added_lines(sorted((tmp_path / "series").glob("*.patch")))
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
    cov = report.patch_coverage("0.5.1", build, patches)
    assert cov == {
        "covered": 2,
        "executable": 3,
        "percent": 66.7,
        "missed": {"agents/items.py": [5]},
    }
    assert report.coverage_text(cov) == "66.7% (2/3 lines)"
    assert report.patch_coverage("0.6.9", build, patches) is None
    (build / "coverage-0.5.1-patched-py3.13.json").write_text('{"files": {"/x/site-pa')
    assert report.patch_coverage("0.5.1", build, patches) == cov  # a file still being written
    data, build = run(tmp_path, patches)
    assert data["releases"][0]["coverage"] == cov
    assert "| 1 | 66.7% (2/3 lines) |" in (build / "report.md").read_text()


# --- the cells a CI run needs -----------------------------------------------------------------


def listing() -> list[dict]:
    """What `nox --json -l -s compat` prints, for a few cells."""
    rows = [("0.5.1", "unpatched", "3.11", True), ("0.5.1", "patched", "3.9", True)]
    rows += [("0.6.9", "unpatched", "3.11", True), ("0.6.9", "unpatched", "3.10", False)]
    return [
        {
            "session": f"compat({v}-{var}-py{py})",
            "python": py,
            "tags": [var, f"sdk-{v}", f"py{py}"] + (["ci"] if ci else []),
            "call_spec": {"sdk": v, "variant": var},
        }
        for v, var, py, ci in rows
    ]


def sessions(include: list[dict]) -> list[str]:
    return [c["session"] for c in include]


def test_push_and_matrix_changes_select_every_cell():
    assert len(report.select(listing(), None)) == 4
    assert len(report.select(listing(), ["README.md", "compat_tests/expectations.toml"])) == 4
    assert len(report.select(listing(), ["sdk_matrix.py"])) == 4
    assert len(report.select(listing(), [".github/workflows/compat.yml"])) == 4


def test_a_series_change_selects_its_release_only():
    include = report.select(listing(), ["patches/0.5.1/0001-items.patch"])
    assert sessions(include) == ["compat(0.5.1-unpatched-py3.11)", "compat(0.5.1-patched-py3.9)"]
    assert include[1] == {
        "session": "compat(0.5.1-patched-py3.9)",
        "python": "3.9",
        "version": "0.5.1",
        "variant": "patched",
        "experimental": False,
    }


def test_a_contract_test_change_selects_the_ci_cells():
    include = report.select(listing(), ["compat_tests/test_streaming.py"])
    assert "compat(0.6.9-unpatched-py3.10)" not in sessions(include)
    assert len(include) == 3


def test_unrelated_changes_select_nothing_and_latest_is_allowed_to_fail():
    assert report.select(listing(), ["README.md", "tests/test_report.py"]) == []
    (latest,) = report.select(listing(), [], latest=True)
    assert (latest["session"], latest["experimental"]) == ("latest", True)


def test_matrix_session_reads_noxs_own_list():
    """`nox -s matrix -- --changed patches/0.6.9/...`: the cells of 0.6.9 as nox lists them."""
    include = json.loads(report.matrix_include(["--changed", "patches/0.6.9/0001-x.patch"]))
    expected = [c for c in sdk_matrix.cells() if c[1] == "0.6.9"]
    assert sorted((c["python"], c["version"], c["variant"]) for c in include) == sorted(expected)
    assert include[0]["session"] == "compat(0.6.9-unpatched-py3.9)"


# --- the scan of every release ----------------------------------------------------------------


def test_scan_lists_final_unyanked_releases_with_their_upload_time():
    def entry(name, time, yanked=False):
        return {"filename": name, "upload-time": time, "url": f"https://x/{name}", "yanked": yanked}

    files = [
        entry("openai_agents-0.0.1.tar.gz", "2025-03-01T00:00:00Z", "wrong"),
        entry("openai_agents-0.0.2.tar.gz", "2025-03-11T10:00:00Z"),
        entry("openai_agents-0.0.2-py3-none-any.whl", "2025-03-11T10:00:05Z"),
        entry("openai_agents-0.0.10.tar.gz", "2025-04-01T00:00:00Z"),
        entry("openai_agents-0.1.0rc1-py3-none-any.whl", "2025-05-01T00:00:00Z"),
    ]
    assert report.scan_releases(files) == [
        {
            "version": "0.0.2",
            "uploaded": "2025-03-11T10:00:05Z",
            "url": "https://x/openai_agents-0.0.2-py3-none-any.whl",
        },
        {
            "version": "0.0.10",
            "uploaded": "2025-04-01T00:00:00Z",
            "url": "https://x/openai_agents-0.0.10.tar.gz",
        },
    ]


def scanned(tmp_path: Path, version: str, outcomes: dict[str, str] | None) -> dict:
    rel = {"version": version, "uploaded": "2025-01-01T00:00:00Z"}
    if outcomes is None:
        return report.scan_result(rel, tmp_path / "missing.xml")
    return report.scan_result(rel, junit(tmp_path, version, outcomes))


def test_scan_render_names_first_hold_and_every_break(tmp_path: Path):
    other = {"alive_until_release::test_alive": "passed"}
    results = {
        "0.0.2": scanned(tmp_path, "0.0.2", {"alive_until_release::test_alive": "failed"}),
        "0.0.5": scanned(tmp_path, "0.0.5", None),
        "0.0.19": scanned(tmp_path, "0.0.19", {**other, "release_then_gc::test_frees": "failed"}),
        "0.6.0": scanned(tmp_path, "0.6.0", {**other, "release_then_gc::test_frees": "passed"}),
        "0.7.0": scanned(tmp_path, "0.7.0", {**other, "release_then_gc::test_frees": "failed"}),
        "0.7.1": scanned(tmp_path, "0.7.1", {**other, "release_then_gc::test_frees": "failed"}),
        "0.8.0": scanned(tmp_path, "0.8.0", {**other, "release_then_gc::test_frees": "passed"}),
        "0.9.0": scanned(tmp_path, "0.9.0", {**other, "release_then_gc::test_frees": "failed"}),
    }
    assert results["0.0.5"] == {
        "uploaded": "2025-01-01T00:00:00Z",
        "points": {},
        "failed": [],
        "note": "suite cannot run",
        "why": "",
    }
    assert results["0.0.2"]["note"] == "suite cannot run"  # no test passes: not the contract
    assert results["0.0.2"]["why"] == "AssertionError: agent alive"
    cannot_drive = {"alive_until_release::test_alive": "failed", "streaming::test_x": "passed"}
    assert scanned(tmp_path, "0.0.4", cannot_drive)["note"] == "suite cannot run"
    table = report.render_scan(results)
    assert "| alive_until_release | 0.0.19 | — |" in table
    assert (
        "| release_then_gc | 0.6.0 | 0.7.0 – 0.7.1 (holds again in 0.8.0); 0.9.0 (still broken) |"
        in table
    )
    assert (
        "n/a (suite cannot run): 0.0.2 (`AssertionError: agent alive`); 0.0.5 (`suite cannot"
        in table
    )
    assert "| 0.0.2 – 0.0.5 | n/a (suite cannot run) |  |" in table
    assert "| 0.7.0 – 0.7.1 | ✓ | ✗ |" in table


def test_scan_table_replaces_what_stands_between_the_markers(tmp_path: Path):
    readme = tmp_path / "README.md"
    readme.write_text(
        "# kit\n\n## Scan of every release\n\n<!-- scan:start -->\nold\n<!-- scan:end -->\nafter\n"
    )
    report.update_readme(readme, "new table")
    assert readme.read_text().endswith("<!-- scan:start -->\nnew table\n<!-- scan:end -->\nafter\n")
    readme.write_text("no markers\n")
    with pytest.raises(sdk_matrix.MatrixError, match="markers"):
        report.update_readme(readme, "x")
