"""Which cells a GitHub Actions run needs, grouped into jobs: each job runs a slice of one
Python's cells with one `nox` call, so the whole matrix stays far below GitHub's 256 jobs per
matrix (MAX_JOBS, for a matrix of any size), while JUnit files stay per cell."""

from __future__ import annotations

import math

from .releases import CI_PYTHON, Cell, cells, smoke

MAX_JOBS = 64
MIN_CELLS_PER_JOB = 12  # a warm cell costs a few seconds; a job's own set-up about a minute
# A pull request that changes one of these runs every cell.
EVERYTHING = (
    "noxfile.py",
    "kit/",
    "releases.toml",
    "requirements-tools.txt",
    "compat_tests/expectations.toml",
    "compat_tests/requirements.txt",
    "compat_tests/conftest.py",
    "compat_tests/support.py",
    ".github/workflows/compat.yml",
)


def session(cell: Cell) -> str:
    return f"compat({cell.key})"


def needed(all_cells: list[Cell], changed: list[str] | None) -> list[Cell]:
    """changed=None (push, schedule): every cell. On a pull request: every cell when the matrix
    itself changed (EVERYTHING); the smoke cells when other contract tests changed; every cell of
    a release whose patches/<version>/ changed."""
    if changed is None or any(p.startswith(EVERYTHING) for p in changed):
        return all_cells
    versions = {p.split("/")[1] for p in changed if p.startswith("patches/") and p.count("/") >= 2}
    tests = any(p.startswith("compat_tests/") for p in changed)
    return [c for c in all_cells if c.version in versions or (tests and smoke(c))]


def jobs(chosen: list[Cell], max_jobs: int = MAX_JOBS) -> list[dict]:
    """Contiguous slices of each Python's cells, at least MIN_CELLS_PER_JOB cells a job unless
    that would make more than `max_jobs` jobs."""
    by_python: dict[str, list[Cell]] = {}
    for cell in chosen:
        by_python.setdefault(cell.python, []).append(cell)
    room = max(1, max_jobs - len(by_python))  # each Python may round up one job
    size = max(MIN_CELLS_PER_JOB, math.ceil(len(chosen) / room))
    out = []
    for python, group in by_python.items():
        parts = math.ceil(len(group) / size)
        for n in range(parts):
            part = group[n * size : (n + 1) * size]
            out.append(
                {
                    "name": f"py{python} {n + 1}/{parts}: {part[0].version} to {part[-1].version}",
                    "python": python,
                    "sessions": " ".join(session(c) for c in part),
                    "artifact": f"cells-py{python}-{n + 1}",
                    "experimental": False,
                }
            )
    return out


def include(changed: list[str] | None, latest: bool = False) -> list[dict]:
    """CI's matrix include list; `latest` adds the newest PyPI release, allowed to fail."""
    out = jobs(needed(cells(), changed))
    if latest:
        out.append(
            {
                "name": "latest (newest PyPI release, today's dependencies)",
                "python": CI_PYTHON,
                "sessions": "latest",
                "artifact": "cells-latest",
                "experimental": True,
            }
        )
    return out
