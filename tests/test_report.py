"""The report: cells, their statuses and records, in Markdown, HTML and JSON."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import junit

from kit import releases, render
from kit import report as kit_report

PASSING = {"release_then_gc::test_frees": "passed", "kept_items::test_keeps": "passed"}
MATRIX = [
    releases.Cell("3.11", "0.5.1", "unpatched"),
    releases.Cell("3.11", "0.5.1", "patched"),
    releases.Cell("3.11", "0.6.9", "unpatched"),
]


def run(tmp_path: Path, patches: Path) -> tuple[dict, Path]:
    build = tmp_path / "build"
    build.mkdir(exist_ok=True)
    return render.write_reports(build, patches, MATRIX), build


def cell(data: dict, key: str) -> dict:
    return next(c for r in data["releases"] for c in r["cells"] if c["key"] == key)


@pytest.mark.parametrize(
    ("key", "outcomes", "status", "label", "markdown"),
    [
        ("0.6.9-unpatched-py3.11", {}, "passed", "2 passed", "| 0.6.9 | ✓ 2 passed | — |"),
        (
            "0.5.1-unpatched-py3.11",
            {"release_then_gc::test_frees": "bug"},
            "bug-shown",
            "1 bug shown, 1 passed",
            "◆ 1 bug shown, 1 passed",
        ),
        # A patched cell whose only expected failures are absent APIs passed.
        (
            "0.5.1-patched-py3.11",
            {"resumed_runs::test_resume": "absent"},
            "passed",
            "1 API absent, 2 passed",
            "✓ 1 API absent, 2 passed",
        ),
    ],
    ids=["passed", "bug-shown", "api-absent"],
)
def test_a_cell_as_expected_reads_as_its_outcome(
    tmp_path: Path, patches: Path, key, outcomes, status, label, markdown
):
    junit(tmp_path / "build", key, {**PASSING, **outcomes})
    data, build = run(tmp_path, patches)
    got = cell(data, key)
    assert (got["status"], got["label"], got["unexpected"]) == (status, label, False)
    assert markdown in (build / "report.md").read_text()


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
    assert "✗ **1 unexpectedly passed, 1 passed**" in md
    assert (
        "| 1 | [XPASS(strict)] items hold their agent | `release_then_gc::test_frees` "
        "| 0.5.1 unpatched py3.11 |" in md
    )
    assert data["totals"]["unexpected"] == 1


def test_patched_failure_is_highlighted(tmp_path: Path, patches: Path):
    junit(
        tmp_path / "build", "0.5.1-patched-py3.11", {**PASSING, "kept_items::test_keeps": "failed"}
    )
    data, build = run(tmp_path, patches)
    assert cell(data, "0.5.1-patched-py3.11")["status"] == "failed"
    md = (build / "report.md").read_text()
    assert "✗ **1 failed, 1 passed**" in md
    assert "**Unexpected failures: 1, in 1 group**" in md
    assert "| 1 | AssertionError: agent alive | `kept_items::test_keeps` |" in md


def test_unpatched_passing_everything_with_a_series_may_be_obsolete(tmp_path: Path, patches: Path):
    junit(tmp_path / "build", "0.5.1-unpatched-py3.11", PASSING)
    data, build = run(tmp_path, patches)
    assert cell(data, "0.5.1-unpatched-py3.11")["status"] == "obsolete"
    assert "⚠ **2 passed: patch may be obsolete**" in (build / "report.md").read_text()


def test_a_cell_without_junit_is_not_run_never_passed(tmp_path: Path, patches: Path):
    junit(tmp_path / "build", "0.6.9-unpatched-py3.11", PASSING)
    data, build = run(tmp_path, patches)
    got = cell(data, "0.5.1-patched-py3.11")
    assert (got["status"], got["label"], got["cases"]) == ("not-run", "not run", [])
    assert data["totals"] == {
        "cells": 3,
        "unexpected": 0,
        "partial": 0,
        "unavailable": 0,
        "not_run": 2,
        "as_expected": 1,
    }
    md = (build / "report.md").read_text()
    assert "| 0.5.1 | ○ not run | ○ not run | 1 |" in md
    assert md.startswith(
        "### SDK compatibility (contract tests)\n\n**incomplete, as expected where it ran: 1 ran "
        "as expected, 2 of 3 cells not run"
    )


def test_collection_errors_and_unreadable_files_fail_the_cell(tmp_path: Path):
    build = tmp_path / "build"
    build.mkdir()
    (build / "junit-0.6.9-unpatched-py3.11.xml").write_text(
        '<testsuites><testsuite name="pytest"><testcase classname="" name="test_streaming" '
        'file="test_streaming.py"><error message="collection failure">ImportError</error>'
        "</testcase></testsuite></testsuites>"
    )
    (build / "junit-0.5.1-unpatched-py3.11.xml").write_text("<testsuites><testsu")
    cells = {c.key: c for c in kit_report.collect(build, tmp_path / "none", MATRIX)}
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
    assert "| latest | ✓ 2 passed | — |" in md

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


def record(build: Path, key: str, status: str, reason: str = "", **fields) -> None:
    build.mkdir(parents=True, exist_ok=True)
    (build / f"cell-{key}.json").write_text(
        json.dumps({"key": key, "status": status, "reason": reason, **fields})
    )


def test_a_cell_that_stopped_before_its_tests_is_failed_with_its_reason(tmp_path, patches):
    reason = "could not download https://pypi.org/simple/openai-agents/ (offline); no cached copy"
    record(tmp_path / "build", "0.5.1-patched-py3.11", "failed", reason)
    data, build = run(tmp_path, patches)
    got = cell(data, "0.5.1-patched-py3.11")
    assert (got["status"], got["unexpected"], got["reason"]) == ("failed", True, reason)
    assert got["label"].startswith("failed before its tests: could not download")
    assert data["totals"]["unexpected"] == 1 and data["totals"]["not_run"] == 2
    assert "✗ **failed before its tests: could not download" in (build / "report.md").read_text()
    page = (build / "report.html").read_text()
    assert f"<pre>{reason}</pre>" in page
    assert "verdict-failed" in page


def test_a_cell_that_ran_but_wrote_no_junit_is_failed(tmp_path, patches):
    record(tmp_path / "build", "0.6.9-unpatched-py3.11", "ran")
    data, _ = run(tmp_path, patches)
    assert cell(data, "0.6.9-unpatched-py3.11")["reason"] == "the cell ran but wrote no JUnit file"


def test_a_missing_interpreter_reads_as_such_and_the_headline_says_what_held(
    tmp_path, patches, monkeypatch
):
    record(tmp_path / "build", "0.6.9-unpatched-py3.11", "unavailable", "Python 3.11 is absent")
    junit(tmp_path / "build", "0.5.1-unpatched-py3.11", {"release_then_gc::test_frees": "bug"})
    junit(tmp_path / "build", "0.5.1-patched-py3.11", PASSING)
    data, build = run(tmp_path, patches)
    got = cell(data, "0.6.9-unpatched-py3.11")
    assert (got["status"], got["label"]) == ("unavailable", "interpreter not available here")
    assert render.verdict(data) == "passed"
    assert render.summary_line(data) == (
        "passed here: every cell that could run here ran as expected (2); "
        "1 need an interpreter this machine lacks"
    )
    md = (build / "report.md").read_text()
    assert "| 0.6.9 | ∅ interpreter not available here | — |" in md
    assert "- ○ **0.6.9**: not run; Python 3.11 not available here" in md
    # CI installs every Python: there the headline is green only when every cell ran
    monkeypatch.setattr(kit_report, "REQUIRE_PYTHONS", True)
    data, _ = run(tmp_path, patches)
    assert render.verdict(data) == "incomplete"


def test_a_slice_that_held_says_so_and_how_much_did_not_run(tmp_path, patches):
    junit(tmp_path / "build", "0.5.1-unpatched-py3.11", {"release_then_gc::test_frees": "bug"})
    junit(tmp_path / "build", "0.5.1-patched-py3.11", PASSING)
    data, _ = run(tmp_path, patches)
    assert render.verdict(data) == "incomplete"
    cells = data["totals"]["cells"]
    assert render.summary_line(data) == (
        f"incomplete, as expected where it ran: 2 ran as expected, {cells - 2} of {cells} cells "
        "not run (a slice: `nox -s compat` runs them all)"
    )


def test_the_headline_is_green_only_when_every_cell_ran_as_expected(tmp_path, patches):
    junit(tmp_path / "build", "0.5.1-unpatched-py3.11", {"release_then_gc::test_frees": "bug"})
    junit(tmp_path / "build", "0.5.1-patched-py3.11", PASSING)
    junit(tmp_path / "build", "0.6.9-unpatched-py3.11", PASSING)
    data, build = run(tmp_path, patches)
    assert render.verdict(data) == "passed"
    assert "<b class=verdict-passed>" in (build / "report.html").read_text()


def test_the_wide_tables_scroll_in_place_so_the_page_fits_its_window(tmp_path, patches):
    """25 releases x 2 variants of the point grid, or 12 cells a row of the matrix, are wider
    than a laptop's window: they scroll on their own, and the verdicts above never move."""
    data, build = run(tmp_path, patches)
    page = (build / "report.html").read_text()
    assert "<h2>Matrix</h2><div class=wide><table>" in page
    assert "<div class=wide><table class=grid><tr><th>point</th>" in page
    assert "<th class=v><a href='#r-0.5.1'>0.5.1</a></th>" in page
    assert ".wide{overflow-x:auto" in page


def test_a_verdict_per_release_and_the_unexpected_failures_grouped(tmp_path, patches):
    """Each release in one line over the cells that ran; the failures grouped by the cause that
    expectations.toml gives their test, else by exception and message, with the cells they hit."""
    matrix = [releases.Cell(py, v, variant) for v in ("0.5.1", "0.6.9", "0.7.0")
              for variant in ("unpatched", "patched") for py in ("3.11", "3.12")]  # fmt: skip
    shutil.copytree(patches / "0.5.1", patches / "0.6.9")
    build = tmp_path / "build"
    error = "AttributeError: 'RunResult' object has no attribute 'release_agents'"
    for py in ("3.11", "3.12"):
        junit(build, f"0.5.1-unpatched-py{py}", {"release_then_gc::test_frees": "bug"})
        path = junit(build, f"0.5.1-patched-py{py}", {"release_then_gc::test_frees": "failed",
            "kept_items::test_keeps": "failed", "kept_items::test_other": "failed"})  # fmt: skip
        path.write_text(path.read_text().replace("AssertionError: agent alive", error))
        junit(build, f"0.6.9-unpatched-py{py}", {"after_release::test_pickle": "bug"})
    junit(build, "0.6.9-patched-py3.11", PASSING)
    record(build, "0.6.9-patched-py3.12", "unavailable", "Python 3.12 is absent")
    data = render.write_reports(build, patches, matrix)

    assert [r["verdict"] for r in data["releases"]] == [
        {"verdict": "failed", "text": "fails release_then_gc, kept_items (patched on 3.11, 3.12)"},
        {"verdict": "passed",
         "text": "fixed on every Python that ran: 3.11; Python 3.12 not available here"},
        {"verdict": "not-run", "text": "not run"},
    ]  # fmt: skip
    by_error, by_cause = data["failures"]  # the largest group first
    assert (by_error["cause"], by_error["title"], by_error["count"]) == ("", error, 4)
    assert by_error["tests"] == ["kept_items::test_keeps", "kept_items::test_other"]
    assert by_error["cells"] == ["0.5.1-patched-py3.11", "0.5.1-patched-py3.12"]
    assert (by_cause["cause"], by_cause["count"]) == ("no-release-api", 2)
    assert by_cause["tests"] == ["release_then_gc::test_frees"]

    md = (build / "report.md").read_text()
    top = md.split("Trigger:")[0]  # before the matrix
    assert "- ✗ **0.5.1**: fails release_then_gc, kept_items (patched on 3.11, 3.12)" in top
    assert "- ✓ **0.6.9**: fixed on every Python that ran: 3.11; Python 3.12 not" in top
    assert "- ○ **0.7.0**: not run" in top
    assert "**Unexpected failures: 6, in 2 groups**" in top
    assert (
        f"| 4 | {error} | `kept_items::test_keeps`, `kept_items::test_other` "
        "| 0.5.1 patched py3.11, 3.12 |" in top
    )
    assert "| 2 | still fails: [no-release-api] no release API" in top

    page = (build / "report.html").read_text()
    top = page.split("<h2>Matrix</h2>")[0]
    assert (
        "<li><b class=verdict-failed>&nbsp;✗ <a href='#r-0.5.1'>0.5.1</a>&nbsp;</b> "
        "fails release_then_gc, kept_items (patched on 3.11, 3.12)</li>" in top
    )
    assert "<b class=verdict-not-run>&nbsp;○ <a href='#r-0.7.0'>0.7.0</a>&nbsp;</b> not run" in top
    assert "<h2>Unexpected failures: 6, in 2 groups</h2>" in top
    assert (
        "<tr><td>4</td><td>AttributeError: &#x27;RunResult&#x27; object has no attribute "
        "&#x27;release_agents&#x27;</td>" in top
    )
    assert (
        "0.5.1 patched py<a href='#c-0.5.1-patched-py3.11'>3.11</a>, "
        "<a href='#c-0.5.1-patched-py3.12'>3.12</a>" in top
    )


def test_the_grid_names_an_absent_api_as_the_matrix_does(tmp_path, patches):
    junit(tmp_path / "build", "0.5.1-patched-py3.11", {"resumed_runs::test_resume": "absent"})
    _, build = run(tmp_path, patches)
    page = (build / "report.html").read_text()
    assert "<span class='pt absent' title='0.5.1 patched: API absent'>a</span>" in page
    assert "✓ 1 API absent</a>" in page


def test_markdown_and_html_use_the_same_symbols(tmp_path, patches):
    junit(tmp_path / "build", "0.5.1-unpatched-py3.11", {"release_then_gc::test_frees": "bug"})
    data, build = run(tmp_path, patches)
    md, page = (build / "report.md").read_text(), (build / "report.html").read_text()
    for status, symbol in kit_report.ICONS.items():
        legend = f"{symbol} {kit_report.LEGEND[status]}"
        assert legend in md
        assert f"<span class='pt {status}'>{symbol}</span> {legend[2:]}" in page


def test_expected_failures_are_grouped_by_their_cause(tmp_path, patches):
    reason = "[no-release-api] no release API (283ead8fe8de, v0.6.0)"
    junit(tmp_path / "build", "0.5.1-unpatched-py3.11", {"release_then_gc::test_frees": "bug"})
    path = tmp_path / "build" / "junit-0.5.1-unpatched-py3.11.xml"
    path.write_text(path.read_text().replace("items hold their agent", reason))
    data, build = run(tmp_path, patches)
    causes = {c["id"]: c for c in data["causes"]}
    assert causes["no-release-api"]["shown_in"] == ["0.5.1-unpatched-py3.11"]
    assert causes["no-release-api"]["affects"] == "<0.6.0"
    assert causes["result-pins-starting-agent"]["shown_in"] == []
    assert "| `no-release-api`: no release API" in (build / "report.md").read_text()


def ran(build: Path, key: str, outcomes: dict[str, str], suite: int, tests: int, items: int):
    """A cell that finished: its JUnit file, and its record of how many tests the suite has
    (`suite`) and the run selected (`tests` distinct, `items` with repeats)."""
    junit(build, key, outcomes)
    record(build, key, "ran", suite_tests=suite, tests=tests, items=items)


@pytest.mark.parametrize(
    ("counts", "outcomes", "label"),
    [
        # `-- -k after_release`: the run selected 2 of the suite's 3 tests
        ((3, 2, 2), PASSING, "2 passed (partial: 2 of 3 tests selected)"),
        # pytest stopped after its first test and wrote a JUnit file of what had run
        ((2, 2, 2), {"kept_items::test_keeps": "passed"}, "1 passed (partial: 1 of 2 tests ran)"),
        # a record that does not say how many tests its suite has (one from an older kit)
        ((None, None, None), PASSING, "2 passed (partial: the cell did not record how many"),
    ],
    ids=["deselected", "junit-cut-short", "uncounted"],
)
def test_a_partial_run_is_never_passed_nor_green(tmp_path, patches, counts, outcomes, label):
    ran(tmp_path / "build", "0.6.9-unpatched-py3.11", outcomes, *counts)
    junit(tmp_path / "build", "0.5.1-unpatched-py3.11", {"release_then_gc::test_frees": "bug"})
    junit(tmp_path / "build", "0.5.1-patched-py3.11", PASSING)
    data, build = run(tmp_path, patches)
    got = cell(data, "0.6.9-unpatched-py3.11")
    assert (got["status"], got["unexpected"]) == ("partial", False)
    assert got["label"].startswith(label)
    assert (data["totals"]["partial"], data["totals"]["as_expected"]) == (1, 2)
    assert render.verdict(data) == "incomplete"
    assert f"| 0.6.9 | ◐ {got['label']} | — |" in (build / "report.md").read_text()
    assert "<b class=verdict-incomplete>" in (build / "report.html").read_text()


def test_repeated_runs_are_complete(tmp_path, patches):
    """`-- --count=2` runs each of the suite's 2 tests twice: more than collected, not partial."""
    repeated = {f"{t}-{n}-2]".replace("-1-2]", "[1-2]").replace("-2-2]", "[2-2]"): "passed"
                for t in PASSING for n in (1, 2)}  # fmt: skip
    ran(tmp_path / "build", "0.6.9-unpatched-py3.11", repeated, 2, 2, 4)
    data, _ = run(tmp_path, patches)
    assert cell(data, "0.6.9-unpatched-py3.11")["label"] == "4 passed"


@pytest.mark.parametrize(
    ("status", "label"),
    [
        ("interrupted", "1 passed (interrupted during tests, 1 of 2 tests ran)"),
        # a record still `running`: nox was killed before it could say so
        ("running", "1 passed (killed (or still running) during tests, 1 of 2 tests ran)"),
    ],
)
def test_an_interrupted_cell_says_where_it_stopped(tmp_path, patches, status, label):
    build = tmp_path / "build"
    path = junit(build, "0.6.9-unpatched-py3.11", {"kept_items::test_keeps": "passed"})
    # pytest's JUnit file marks the test it was interrupted in by a nameless testcase
    path.write_text(
        path.read_text().replace("</testsuite>", '<testcase time="0.001" /></testsuite>')
    )
    record(build, "0.6.9-unpatched-py3.11", status, phase="tests", suite_tests=2, tests=2, items=2)
    record(build, "0.5.1-patched-py3.11", "interrupted", phase="setup")
    data, build = run(tmp_path, patches)
    got = cell(data, "0.6.9-unpatched-py3.11")
    assert (got["status"], got["label"]) == ("interrupted", label)
    assert cell(data, "0.5.1-patched-py3.11")["label"] == "interrupted during setup"
    assert data["totals"]["partial"] == 2 and render.verdict(data) == "incomplete"
    assert f"‖ {label}" in (build / "report.md").read_text()


def test_an_interrupted_run_that_failed_a_test_is_failed(tmp_path, patches):
    build = tmp_path / "build"
    junit(build, "0.5.1-patched-py3.11", {"kept_items::test_keeps": "failed"})
    record(build, "0.5.1-patched-py3.11", "interrupted", phase="tests", items=2)
    data, _ = run(tmp_path, patches)
    got = cell(data, "0.5.1-patched-py3.11")
    assert (got["status"], got["label"]) == (
        "failed",
        "1 failed (interrupted during tests, 1 of 2 tests ran)",
    )


@pytest.mark.parametrize(
    ("name", "text", "reason", "label"),
    [
        ("cell-{}.json", "", "record unreadable", "2 passed (record unreadable: "),
        ("cell-{}.json", '{"key": "0.6.9-unpatched-py3.11", "sta', "record unreadable", "2 passed"),
        ("cell-{}.json", "[]", "record unreadable", "2 passed (record unreadable: "),
        ("junit-{}.xml", "", "JUnit file unreadable", "JUnit file unreadable: "),
        ("junit-{}.xml", "<testsuites><testsuite><testca", "JUnit file unreadable", "JUnit file"),
    ],
    ids=["empty-record", "cut-record", "not-a-record", "empty-junit", "cut-junit"],
)
def test_an_unreadable_record_or_junit_file_is_named_and_never_passed(
    tmp_path, patches, name, text, reason, label
):
    build = tmp_path / "build"
    ran(build, "0.6.9-unpatched-py3.11", PASSING, 2, 2, 2)
    path = build / name.format("0.6.9-unpatched-py3.11")
    path.write_text(text)
    data, _ = run(tmp_path, patches)
    got = cell(data, "0.6.9-unpatched-py3.11")
    assert (got["status"], got["reason"]) == ("failed", f"{reason}: {path}")
    assert got["label"].startswith(label)
    assert render.verdict(data) == "failed"
