"""One cell of the matrix, run: its environment, the contract suite, and a record of how it went
(`build/compat/cell-<key>.json`) that the report reads beside the JUnit file, so that a cell that
stopped before its tests shows as failed with its reason, never as not run."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Callable

from . import ROOT, MatrixError
from .envs import InterpreterNotFound, environment
from .releases import Cell
from .report import COMPAT

COVERAGE = "coverage==7.8.0"
# Set in GitHub Actions, which installs every Python: there a missing interpreter fails the cell.
REQUIRE_PYTHONS = os.environ.get("COMPAT_REQUIRE_PYTHONS") == "1"


def paths(cell: Cell, build: Path = COMPAT) -> dict[str, Path]:
    return {
        "junit": build / f"junit-{cell.key}.xml",
        "coverage": build / f"coverage-{cell.key}.json",
        "record": build / f"cell-{cell.key}.json",
    }


def _record(cell: Cell, status: str, **fields) -> None:
    record = {"key": cell.key, "status": status, **fields}
    paths(cell)["record"].write_text(json.dumps(record, indent=1) + "\n")


def run(cell: Cell, pytest_args: list[str], command: Callable, log: Callable) -> None:
    """Set the cell up and run the contract suite in it (`command` is `session.run`).

    A missing interpreter raises InterpreterNotFound (the caller skips the cell, or fails it with
    COMPAT_REQUIRE_PYTHONS=1); any other problem before the tests raises MatrixError. Either way
    the record says why, and no older result of the cell is left behind.
    """
    COMPAT.mkdir(parents=True, exist_ok=True)
    files = paths(cell)
    for old in files.values():
        old.unlink(missing_ok=True)
    # The report's patch coverage: the series' lines that the patched cells run.
    coverage = os.environ.get("COMPAT_COVERAGE") == "1" and cell.variant == "patched"
    started = time.monotonic()
    try:
        env = environment(
            cell.key, cell.python, cell.version, cell.variant, (COVERAGE,) if coverage else ()
        )
    except InterpreterNotFound as exc:
        _record(cell, "failed" if REQUIRE_PYTHONS else "unavailable", reason=str(exc))
        raise
    except MatrixError as exc:
        _record(cell, "failed", reason=str(exc))
        raise
    setup = time.monotonic() - started
    state = "reused" if env["reused"] else "built"
    log(f"series applied: {', '.join(env['series']) or 'none'}; environment {state}")
    python = env["python"]
    variables = {
        # Bytecode is written by the first run, once per environment, whatever the caller's
        # PYTHONDONTWRITEBYTECODE says: compiling the SDK's imports is a second per run.
        "PYTHONDONTWRITEBYTECODE": None,
        "COMPAT_VARIANT": cell.variant,
        "COVERAGE_FILE": str(files["coverage"].with_suffix(".data")),
        "COVERAGE_RCFILE": str(ROOT / "compat_tests" / "coverage.ini"),
    }
    prefix = ["-m", "coverage", "run", "--source=agents"] if coverage else []
    tests_started = time.monotonic()
    try:
        command(python, *prefix, "-m", "pytest", "compat_tests", f"--junitxml={files['junit']}",
            *pytest_args, env=variables, external=True)  # fmt: skip
    finally:
        tests = time.monotonic() - tests_started
        _record(cell, "ran", setup_seconds=round(setup, 2), test_seconds=round(tests, 2),
                reused=env["reused"])  # fmt: skip
        if coverage:
            command(python, "-m", "coverage", "json", "-q", "-o", str(files["coverage"]),
                env=variables, external=True)  # fmt: skip
            files["coverage"].with_suffix(".data").unlink(missing_ok=True)


_STARTED: list[float] = []


def progress(done: int, total: int) -> str:
    """`[n/N]`, the time elapsed since the first cell of this run, and an estimate of the rest."""
    _STARTED[:] = _STARTED or [time.monotonic()]
    elapsed = time.monotonic() - _STARTED[0]
    left = elapsed / (done - 1) * (total - done + 1) if done > 1 else None
    left = f", about {left / 60:.0f} min left" if left is not None else ""
    return f"[{done}/{total}] {elapsed / 60:.1f} min elapsed{left}"
