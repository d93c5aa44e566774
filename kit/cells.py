"""One cell of the matrix, run: its environment, the contract suite, and a record of how it went
(`build/compat/cell-<key>.json`) that the report reads beside the JUnit file, so that a cell that
stopped before its tests shows as failed with its reason, never as not run."""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Callable

from . import ROOT, MatrixError
from .envs import InterpreterNotFound, environment
from .releases import Cell
from .report import COMPAT, REQUIRE_PYTHONS
from .safe import write_atomically

COVERAGE = "coverage==7.8.0"


def paths(cell: Cell, build: Path = COMPAT) -> dict[str, Path]:
    return {
        "junit": build / f"junit-{cell.key}.xml",
        "coverage": build / f"coverage-{cell.key}.json",
        "record": build / f"cell-{cell.key}.json",
        # What compat_tests/conftest.py collected: the whole suite, and what the run selected.
        "suite": build / f"suite-{cell.key}.json",
        "selected": build / f"selected-{cell.key}.json",
    }


def _record(cell: Cell, status: str, **fields) -> None:
    record = {"key": cell.key, "status": status, **fields}
    write_atomically(paths(cell)["record"], (json.dumps(record, indent=1) + "\n").encode())


@contextlib.contextmanager
def _phase(cell: Cell, phase: str, fields: dict):
    """The record says `running` in `phase` until the phase ends: a cell killed outright leaves
    it so, and the report reads it as stopped there. An interrupt is recorded as such."""
    _record(cell, "running", phase=phase, **fields)
    try:
        yield
    except KeyboardInterrupt:
        _record(cell, "interrupted", phase=phase, **fields)
        raise


def _collected(path: Path) -> dict:
    """What the conftest wrote (`tests`: distinct tests, `items`: with repeats, or `error`), read
    once: the record keeps it."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    finally:
        path.unlink(missing_ok=True)


def run(cell: Cell, pytest_args: list[str], command: Callable, log: Callable) -> None:
    """Set the cell up and run the contract suite in it (`command` is `session.run`).

    A missing interpreter raises InterpreterNotFound (the caller skips the cell, or fails it with
    COMPAT_REQUIRE_PYTHONS=1); any other problem before the tests raises MatrixError. Either way
    the record says why, and no older result of the cell is left behind. The record also says how
    many tests the suite has and how many ran, so that the report can tell a partial run.
    """
    COMPAT.mkdir(parents=True, exist_ok=True)
    files = paths(cell)
    for old in files.values():
        old.unlink(missing_ok=True)
    # The report's patch coverage: the series' lines that the patched cells run.
    coverage = os.environ.get("COMPAT_COVERAGE") == "1" and cell.variant == "patched"
    started = time.monotonic()
    fields: dict = {}
    with _phase(cell, "setup", fields):
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
    fields.update(setup_seconds=round(time.monotonic() - started, 2), reused=env["reused"])
    state = "reused" if env["reused"] else "built"
    # One patch a line: the subjects have commas.
    applied = "".join(f"\n  {commit}" for commit in env["series"]) or " none"
    log(f"environment {state}; series applied:{applied}")
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
    failed = None
    with _phase(cell, "tests", fields):
        try:
            if pytest_args:  # they may narrow the run: count the whole suite first (a second)
                with contextlib.suppress(Exception):  # if this fails, so does the run, saying how
                    command(python, "-m", "pytest", "compat_tests", "--collect-only", "-q",
                        env={**variables, "COMPAT_COLLECTED": str(files["suite"])}, silent=True,
                        external=True)  # fmt: skip
            command(python, *prefix, "-m", "pytest", "compat_tests", f"--junitxml={files['junit']}",
                *pytest_args, env={**variables, "COMPAT_COLLECTED": str(files["selected"])},
                external=True)  # fmt: skip
        except Exception as exc:  # the tests failed (nox's CommandFailed): record them all the same
            failed = exc
        finally:
            selected = _collected(files["selected"])
            suite = _collected(files["suite"]) if pytest_args else selected
            fields.update(test_seconds=round(time.monotonic() - tests_started, 2),
                suite_tests=suite.get("tests"), tests=selected.get("tests"),
                items=selected.get("items"))  # fmt: skip
            error = selected.get("error") or suite.get("error")  # the suite could not start
            fields.update({"reason": error} if error else {})
    if coverage:
        with _phase(cell, "coverage", fields):
            command(python, "-m", "coverage", "json", "-q", "-o", str(files["coverage"]),
                env=variables, external=True)  # fmt: skip
            files["coverage"].with_suffix(".data").unlink(missing_ok=True)
    _record(cell, "ran", **fields)
    if failed:
        raise failed


_STARTED: list[float] = []


def progress(done: int, total: int) -> str:
    """`[n/N]`, the time elapsed since the first cell of this run, and an estimate of the rest."""
    _STARTED[:] = _STARTED or [time.monotonic()]
    elapsed = time.monotonic() - _STARTED[0]
    left = elapsed / (done - 1) * (total - done + 1) if done > 1 else None
    left = f", about {left / 60:.0f} min left" if left is not None else ""
    return f"[{done}/{total}] {elapsed / 60:.1f} min elapsed{left}"
