"""Helpers of the kit's tests: JUnit files as pytest writes them, and nox run for real on a copy
of the kit."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

# What pytest's JUnit writer (junit_family=legacy) puts in a testcase, by outcome.
BODIES = {
    "passed": "",
    "failed": '<failure message="AssertionError: agent alive">assert collected(ref)</failure>',
    "bug": '<skipped type="pytest.xfail" message="items hold their agent" />',
    "absent": '<skipped type="pytest.xfail" message="[no-run-state] RunState arrives in v0.8.0" />',
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


ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".nox" / ".cache"


def nox_env(**env: str) -> dict[str, str]:
    """The environment nox runs the kit in: this Python's tools, not the outer nox session's."""
    path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    outer = ("CI", "PATH", "VIRTUAL_ENV", "UV_PYTHON", "UV_PROJECT_ENVIRONMENT")  # nox's own
    environ = {k: v for k, v in os.environ.items() if k not in outer}
    return {**environ, "PATH": path, **env}


def nox(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "nox", *args],
        cwd=cwd,
        env=nox_env(**env),
        capture_output=True,
        text=True,
    )


def nox_started(cwd: Path, *args: str, **env: str) -> subprocess.Popen:
    """nox started in the background, in a process group of its own to signal as a terminal
    does (nox and what it runs at once)."""
    return subprocess.Popen(
        [sys.executable, "-m", "nox", *args],
        cwd=cwd,
        env=nox_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_sigint_as_in_a_terminal,
    )


def _sigint_as_in_a_terminal() -> None:
    # A test run started in the background by a non-interactive shell (`.ci/run &`) ignores
    # SIGINT, and nox would inherit that, so the Ctrl-C the tests send would go unheard.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def kit_copy(tmp_path: Path, cache: bool = True) -> Path:
    copy = tmp_path / "kit"
    copy.mkdir()
    for name in ("noxfile.py", "releases.toml"):
        shutil.copy(ROOT / name, copy)
    for name in ("kit", "compat_tests", "patches"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    if cache:  # share the downloads: sdists, wheels, locks
        (CACHE / "sdists").mkdir(parents=True, exist_ok=True)
        (copy / ".nox").mkdir()
        (copy / ".nox" / ".cache").symlink_to(CACHE)
    return copy


def cell_record(kit: Path, key: str) -> dict:
    return json.loads((kit / "build" / "compat" / f"cell-{key}.json").read_text())


def report_cell(kit: Path, key: str) -> dict:
    """A cell as `nox -s report` wrote it into report.json."""
    report = json.loads((kit / "build" / "compat" / "report.json").read_text())
    return next(c for r in report["releases"] for c in r["cells"] if c["key"] == key)


SLOW_GIT = """#!/bin/sh
if [ "$3" = am ]; then  # `git -C <tree> am ...`: say so, then take long enough to be killed
  echo $$ > "$MARKER"
  sleep 60
fi
exec /usr/bin/git "$@"
"""


def slow_git(tmp_path: Path) -> tuple[str, Path]:
    """A PATH whose `git -C <tree> am` writes its pid to the marker file and waits to be
    killed, and that marker."""
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "git").write_text(SLOW_GIT)
    (slow / "git").chmod(0o755)
    return f"{slow}{os.pathsep}{nox_env()['PATH']}", tmp_path / "git-am.pid"
