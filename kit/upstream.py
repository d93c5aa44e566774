"""A release's own test suite, ruff and mypy (in its sdist tree, with its own uv.lock), unpatched
and then patched: the series must add no failing test, ruff finding or mypy error. Results go to
docs/upstream.md (data: docs/data/upstream.json), each row naming the series it checked.

The unpatched half depends only on the sdist and its uv.lock, so it is kept in
.nox/.cache/upstream/ and a changed series re-runs only the patched half."""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Callable

from . import CACHE, MatrixError, junit, safe
from .releases import CI_PYTHON, RELEASES, patched_versions, series_hash
from .series import apply_series, make_tree


def _run(tree: Path, *args: str, ok: tuple[int, ...] = (0, 1)) -> str:
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(tree / ".venv")}
    env.pop("VIRTUAL_ENV", None)
    command = ["uv", "run", "--frozen", "--directory", str(tree), *args]
    proc = subprocess.run(command, capture_output=True, text=True, env=env)
    if proc.returncode not in ok:
        raise MatrixError(f"`{' '.join(args[:2])}` in {tree} failed:\n{proc.stderr[-2000:]}")
    return proc.stdout


def mypy_command(tree: Path) -> list[str]:
    """The release's own `make mypy` (its Makefile ships in the sdist): up to 0.19 it checks the
    tests too (`mypy . --exclude site`), later only `src`."""
    makefile = tree / "Makefile"
    text = makefile.read_text() if makefile.exists() else ""
    match = re.search(r"^mypy:.*\n\t+uv run (mypy[^\n]*)", text, re.M)
    return match.group(1).split() if match else ["mypy", "src"]


def checks(tree: Path, label: str, log: Callable[[str], None]) -> dict:
    """The tree's failing tests, ruff findings and mypy errors, and its test counts."""
    report = tree.parent / f"upstream-{label}.xml"
    started = time.monotonic()
    log(f"{label}: pytest (0.5.1's suite takes about 35 s, 0.24.0's several minutes)")
    # From 0.19 a test loads upstream's .github/scripts/, which the sdist does not ship: one
    # error in both counts, not an interrupted suite.
    _run(tree, "pytest", "-q", "-p", "no:cacheprovider", "--continue-on-collection-errors",
         f"--junitxml={report}")  # fmt: skip
    log(f"{label}: pytest done in {time.monotonic() - started:.0f} s; ruff, then mypy")
    ruff = _run(tree, "ruff", "check", "--output-format=concise", "src", "tests")
    mypy = _run(tree, *mypy_command(tree))
    return {
        "counts": dict(junit.counts(report)),
        "tests": sorted(junit.ids(report, "failed")),
        "ruff": sorted(line for line in ruff.splitlines() if ": " in line),
        "mypy": sorted(line for line in mypy.splitlines() if ": error:" in line),
    }


def node_id(tree: Path, test_id: str) -> str:
    """pytest's node id (`tests/a/test_b.py::TestC::test_d[x]`) of a JUnit id (`tests.a.test_b.TestC
    ::test_d[x]`): the longest dotted prefix that is a file of the tree is the module."""
    classname, name = test_id.split("::", 1)
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        module = Path(*parts[:end]).with_suffix(".py")
        if (tree / module).is_file():
            return "::".join([module.as_posix(), *parts[end:], name])
    return test_id


def fail_again(tree: Path, test_ids: list[str]) -> list[str]:
    """Of the tests the series seems to break, those that fail again when run on their own: some
    of upstream's tests time out on a loaded machine (a 10 s subprocess limit, say)."""
    if not test_ids:
        return []
    report = tree.parent / "upstream-rerun.xml"
    nodes = [node_id(tree, test_id) for test_id in test_ids]
    report.unlink(missing_ok=True)
    # Exit 4: a test id pytest cannot find (a collection error's), so it fails again.
    _run(
        tree, "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", *nodes, ok=(0, 1, 4)
    )
    if not report.exists():
        return test_ids
    passed = junit.ids(report, "passed")
    return [test_id for test_id in test_ids if test_id not in passed]


def unpatched(version: str, tree: Path, log: Callable[[str], None], cache: Path = CACHE) -> dict:
    """`checks` of the unpatched tree, from the cache when the sdist is the one it was made of."""
    path = cache / "upstream" / f"{version}-py{CI_PYTHON}.json"
    digest = safe.sha256(tree / "uv.lock") if (tree / "uv.lock").exists() else ""
    if path.exists():
        try:
            kept = json.loads(path.read_text())
            if kept["uv_lock_sha256"] == digest:
                log(f"{version} unpatched: from the cache ({path.name})")
                return kept["checks"]
        except (ValueError, KeyError, TypeError):
            pass  # damaged: run it again
    result = checks(tree, f"{version} unpatched", log)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"uv_lock_sha256": digest, "checks": result}
    safe.write_atomically(path, json.dumps(record, indent=1).encode())
    return result


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
    before = unpatched(version, tree, log)
    series = series_hash(version)  # of what is applied: a series may change while the suite runs
    apply_series(version, tree)
    after = checks(tree, f"{version} patched", log)
    new = {kind: sorted(set(after[kind]) - set(before[kind])) for kind in ("tests", "ruff", "mypy")}
    again = fail_again(tree, new["tests"])
    flaky = [test_id for test_id in new["tests"] if test_id not in again]
    if flaky:
        log(f"{version}: passed when run again on their own: {', '.join(flaky)}")
    new["tests"] = again
    added = [f"{kind}: {item}" for kind, items in new.items() for item in items]
    return {
        "date": datetime.date.today().isoformat(),
        "python": CI_PYTHON,
        "build": RELEASES[version].build,
        "series_sha256": series,
        "unpatched": {**before["counts"], "ruff": len(before["ruff"]), "mypy": len(before["mypy"])},
        "patched": {**after["counts"], "ruff": len(after["ruff"]), "mypy": len(after["mypy"])},
        "added": added,
        "flaky": flaky,
    }


def stale(data: dict) -> list[str]:
    """Series without a row on the page, or whose row checked other patches than they hold."""
    rows = data.get("releases", {})
    return [
        f"{version}: {'no row' if version not in rows else 'the series changed since its row'}"
        for version in patched_versions()
        if rows.get(version, {}).get("series_sha256") != series_hash(version)
    ]


def summary(version: str, entry: dict) -> str:
    """One line: tests, ruff and mypy, unpatched -> patched, and what the series adds."""
    before, after = entry["unpatched"], entry["patched"]

    def change(key: str) -> str:
        return f"{before.get(key, 0)} -> {after.get(key, 0)}"

    return (
        f"{version}: passed {change('passed')}, failed {change('failed')}, "
        f"skipped {change('skipped')}; ruff {change('ruff')}; mypy {change('mypy')}; "
        f"added by the series: {'; '.join(entry['added']) or 'nothing'}"
    )


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
        "Written by `nox -s upstream -- --publish` (`-- <version>... --publish` re-runs some; "
        "`-- --check` checks this page against docs/data/upstream.json). Each release's sdist "
        "tree with its own `uv.lock`: `pytest`, `ruff check src tests` and the release's own "
        "`make mypy` command, first unpatched, then with its series; the session fails if the "
        "series adds a failing test, a ruff finding or a mypy error.",
        "",
        "| release | checked | unpatched: passed / failed / skipped | patched (build) | added by "
        "series |",
        "|---|---|---|---|---|",
    ]
    for version, entry in data["releases"].items():
        added = "; ".join(entry["added"]) or "nothing"
        build = f" (build {entry['build']})" if "build" in entry else ""
        if entry.get("flaky"):
            added += f" ({len(entry['flaky'])} more failed once, passed when run again alone)"
        out.append(
            f"| {version} | {entry['date']}, Python {entry['python']} | "
            f"{_side(entry['unpatched'])} | {_side(entry['patched'])}{build} | {added} |"
        )
    out += [
        "",
        "Failures counted unpatched are the release's own: tests that need what an sdist does not "
        "ship or this machine lacks (`.github/scripts`, a git checkout, `integration_tests`, "
        "`rclone`, up to 0.2 an `OPENAI_API_KEY`). A series is judged only on what it adds, test "
        "by test; a test that fails only with the series is run again on its own, and counts as "
        "added only if it fails again.",
        "",
    ]
    return "\n".join(out)
