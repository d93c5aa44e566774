"""A release's own test suite, ruff and mypy (in its sdist tree, with its own uv.lock), unpatched
and then patched: the series must add no failing test, ruff finding or mypy error. Results go to
docs/upstream.md (data: docs/data/upstream.json)."""

from __future__ import annotations

import datetime
import os
import subprocess
from pathlib import Path
from typing import Callable

from . import MatrixError, junit
from .releases import CI_PYTHON
from .series import apply_series, make_tree


def _run(tree: Path, *args: str) -> str:
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(tree / ".venv")}
    env.pop("VIRTUAL_ENV", None)
    command = ["uv", "run", "--frozen", "--directory", str(tree), *args]
    proc = subprocess.run(command, capture_output=True, text=True, env=env)
    if proc.returncode not in (0, 1):
        raise MatrixError(f"`{' '.join(args[:2])}` in {tree} failed:\n{proc.stderr[-2000:]}")
    return proc.stdout


def checks(tree: Path, label: str) -> dict:
    """The tree's failing tests, ruff findings and mypy errors, and its test counts."""
    report = tree.parent / f"upstream-{label}.xml"
    # From 0.19 a test loads upstream's .github/scripts/, which the sdist does not ship: one
    # error in both counts, not an interrupted suite.
    _run(tree, "pytest", "-q", "-p", "no:cacheprovider", "--continue-on-collection-errors",
         f"--junitxml={report}")  # fmt: skip
    ruff = _run(tree, "ruff", "check", "--output-format=concise", "src", "tests")
    mypy = _run(tree, "mypy", "src")
    return {
        "counts": dict(junit.counts(report)),
        "tests": sorted(junit.failures(report)),
        "ruff": sorted(line for line in ruff.splitlines() if ": " in line),
        "mypy": sorted(line for line in mypy.splitlines() if ": error:" in line),
    }


def check_release(version: str, workdir: Path, log: Callable[[str], None]) -> dict:
    """Unpatched, then patched: counts of both, and what the series adds (should be nothing)."""
    tree = make_tree(version, workdir.resolve() / f"upstream-{version}")
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(tree / ".venv")}
    env.pop("VIRTUAL_ENV", None)
    sync = ["uv", "sync", "--quiet", "--frozen", "--all-extras", "--python", CI_PYTHON]
    proc = subprocess.run(
        [*sync, "--directory", str(tree)], env=env, capture_output=True, text=True
    )
    if proc.returncode:
        raise MatrixError(f"uv sync of {version}'s own uv.lock failed:\n{proc.stderr[-2000:]}")
    before = checks(tree, f"{version}-unpatched")
    log(f"{version} unpatched: {before['counts']}")
    apply_series(version, tree)
    after = checks(tree, f"{version}-patched")
    log(f"{version} patched: {after['counts']}")
    added = [
        f"{kind}: {item}" for kind in ("tests", "ruff", "mypy")
        for item in sorted(set(after[kind]) - set(before[kind]))
    ]  # fmt: skip
    return {
        "date": datetime.date.today().isoformat(),
        "python": CI_PYTHON,
        "unpatched": {**before["counts"], "ruff": len(before["ruff"]), "mypy": len(before["mypy"])},
        "patched": {**after["counts"], "ruff": len(after["ruff"]), "mypy": len(after["mypy"])},
        "added": added,
    }


def _side(side: dict) -> str:
    return (
        f"{side.get('passed', 0)} / {side.get('failed', 0)} / {side.get('skipped', 0)} · "
        f"ruff {side['ruff']} · mypy {side['mypy']}"
    )


def render(data: dict) -> str:
    """docs/upstream.md."""
    out = [
        "# Upstream's own suites, unpatched and patched",
        "",
        "Written by `nox -s upstream` (`-- <version>...` re-runs some; `-- --check` checks this "
        "page against docs/data/upstream.json). Each release's sdist tree with its own `uv.lock`, "
        "`pytest`, `ruff check src tests` and `mypy src`, first unpatched, then with its series; "
        "the session fails if the series adds a failing test, a ruff finding or a mypy error.",
        "",
        "| release | checked | unpatched: passed / failed / skipped | patched | added by series |",
        "|---|---|---|---|---|",
    ]
    for version, entry in data["releases"].items():
        added = "; ".join(entry["added"]) or "nothing"
        out.append(
            f"| {version} | {entry['date']}, Python {entry['python']} | "
            f"{_side(entry['unpatched'])} | {_side(entry['patched'])} | {added} |"
        )
    out += ["", data.get("notes", "").strip(), ""]
    return "\n".join(out)
