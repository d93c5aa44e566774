"""Which cells a GitHub Actions run needs, and how they are grouped into jobs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kit import ci, releases

ROOT = Path(__file__).resolve().parents[1]


def keys(cells: list[releases.Cell]) -> set[str]:
    return {c.key for c in cells}


def test_push_and_matrix_changes_select_every_cell():
    everything = releases.cells()
    for changed in (None, ["README.md", "kit/report.py"], ["releases.toml"], ["noxfile.py"]):
        assert ci.needed(everything, changed) == everything
    assert ci.needed(everything, [".github/workflows/compat.yml"]) == everything


def test_a_series_change_selects_its_release_only():
    chosen = ci.needed(releases.cells(), ["patches/0.5.1/0001-items.patch"])
    assert {c.version for c in chosen} == {"0.5.1"}
    assert keys(chosen) == {c.key for c in releases.cells() if c.version == "0.5.1"}


def test_a_contract_test_change_selects_the_smoke_cells():
    chosen = ci.needed(releases.cells(), ["compat_tests/test_streaming.py"])
    assert chosen == [c for c in releases.cells() if releases.smoke(c)]


def test_unrelated_changes_select_nothing_and_latest_is_allowed_to_fail():
    assert ci.include(["README.md", "tests/test_report.py"]) == []
    (latest,) = ci.include([], latest=True)
    assert (latest["sessions"], latest["experimental"]) == ("latest", True)


def test_every_cell_runs_in_exactly_one_job_of_its_python():
    jobs = ci.jobs(releases.cells())
    sessions = [s for job in jobs for s in job["sessions"].split()]
    assert sorted(sessions) == sorted(f"compat({c.key})" for c in releases.cells())
    for job in jobs:
        assert all(s.endswith(f"-py{job['python']})") for s in job["sessions"].split())
    assert len({job["artifact"] for job in jobs}) == len(jobs)


def test_a_hundred_releases_still_fit_in_sixty_four_jobs():
    many = [
        releases.Cell(py, f"1.{n}.0", variant)
        for n in range(100)
        for py in releases.PYTHONS
        for variant in ("unpatched", "patched")
    ]
    jobs = ci.jobs(many)
    assert len(jobs) <= ci.MAX_JOBS
    assert sum(len(job["sessions"].split()) for job in jobs) == len(many)
    assert len(ci.jobs(releases.cells())) <= ci.MAX_JOBS


def test_the_matrix_session_prints_the_jobs():
    proc = subprocess.run(
        [sys.executable, "-m", "nox", "-s", "matrix", "--", "--changed", "patches/0.6.9/x.patch"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    jobs = json.loads(proc.stdout)
    sessions = {s for job in jobs for s in job["sessions"].split()}
    assert sessions == {f"compat({c.key})" for c in releases.cells() if c.version == "0.6.9"}
