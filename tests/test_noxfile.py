"""The sessions' failure modes, run for real by nox in a subprocess on a copy of the kit."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest
from helpers import (
    CACHE,
    cell_record,
    kit_copy,
    nox,
    nox_started,
    report_cell,
    slow_git,
)

from kit import releases, series


def test_a_missing_interpreter_is_a_skip_here_and_a_failure_where_pythons_are_required(tmp_path):
    kit = kit_copy(tmp_path)
    home = tmp_path / "home"  # no ~/.pyenv: no Python 3.9 anywhere
    home.mkdir()
    cell = "compat(0.5.1-unpatched-py3.9)"
    local = nox(kit, "-s", cell, HOME=str(home))
    assert local.returncode == 0, local.stderr
    assert f"Session {cell} skipped: Python 3.9 is not available on this machine" in local.stderr
    assert cell_record(kit, "0.5.1-unpatched-py3.9")["status"] == "unavailable"
    required = nox(kit, "-s", cell, HOME=str(home), COMPAT_REQUIRE_PYTHONS="1")
    assert required.returncode == 1
    assert f"Session {cell} aborted: Python 3.9 is not available on this machine" in required.stderr
    assert cell_record(kit, "0.5.1-unpatched-py3.9")["status"] == "failed"


def test_a_series_that_does_not_apply_names_its_patch_and_leaves_no_old_result(tmp_path):
    kit = kit_copy(tmp_path)
    first = sorted((kit / "patches" / "0.5.1").glob("*.patch"))[0]
    text = first.read_text()
    context = next(line for line in text.split("\n@@ ", 1)[1].splitlines()[1:] if line[:1] == " ")
    first.write_text(text.replace(context, context + "  # changed upstream", 1))
    old_result = kit / "build" / "compat" / "junit-0.5.1-patched-py3.11.xml"
    old_result.parent.mkdir(parents=True)
    old_result.write_text('<testsuites><testsuite name="pytest" tests="1"/></testsuites>')

    proc = nox(kit, "-s", "compat(0.5.1-patched-py3.11)")
    assert proc.returncode == 1
    message = f"patches/0.5.1/{first.name} does not apply to 0.5.1: patch failed: src/"
    assert message in proc.stderr
    assert not old_result.exists()
    assert message in cell_record(kit, "0.5.1-patched-py3.11")["reason"]

    apply = nox(kit, "-s", "apply", "--", "0.5.1", "0.4.2", "9.9.9")
    assert apply.returncode == 1
    assert message in apply.stderr  # every failure, not only the first
    assert f"0.4.2: {len(releases.series('0.4.2'))} patches apply" in apply.stderr
    assert "unknown SDK release '9.9.9'" in apply.stderr


def test_an_offline_cell_without_a_cache_is_failed_with_its_reason_in_the_report(tmp_path):
    kit = kit_copy(tmp_path, cache=False)
    offline = {
        "UV_OFFLINE": "1",
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        "https_proxy": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
    }
    proc = nox(kit, "-s", "compat(0.24.0-unpatched-py3.11)", **offline)
    assert proc.returncode == 1
    sdist = kit / ".nox" / ".cache" / "sdists" / "openai_agents-0.24.0.tar.gz"
    assert "could not download https://pypi.org/simple/openai-agents/" in proc.stderr
    assert f"no cached copy at {sdist}" in proc.stderr
    assert nox(kit, "-s", "report").returncode == 0
    report = json.loads((kit / "build" / "compat" / "report.json").read_text())
    (cell,) = [
        c for r in report["releases"] for c in r["cells"] if c["key"] == "0.24.0-unpatched-py3.11"
    ]
    assert cell["status"] == "failed"
    assert "could not download" in cell["reason"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["build", "--", "0.6.0"], "0.6.0 is upstream's first release with the fix"),
        (["tree", "--", "0.5.1", "0.4.2"], "unrecognized arguments: 0.4.2"),
        (["export"], "the following arguments are required: version"),
    ],
)
def test_bad_arguments_are_clear_errors_without_a_traceback(tmp_path, args, message):
    proc = nox(kit_copy(tmp_path), "-s", *args)
    assert proc.returncode == 1
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_build_does_not_publish_a_wheel_that_breaks_python(tmp_path):
    """A commit that applies but does not parse: tree, commit, export, then build refuses."""
    kit = kit_copy(tmp_path)
    assert nox(kit, "-s", "tree", "--", "0.5.1").returncode == 0
    tree = kit / "build" / "trees" / "0.5.1"
    with (tree / "src" / "agents" / "items.py").open("a") as items:
        items.write("def broken(:\n")
    series.git(tree, "commit", "-qam", "items: break Python")
    assert nox(kit, "-s", "export", "--", "0.5.1").returncode == 0
    proc = nox(kit, "-s", "build", "--", "0.5.1")
    assert proc.returncode == 1
    assert "fails the contract suite on Python 3.11 (SyntaxError: invalid syntax)" in proc.stderr
    assert "so it is not written to dist/" in proc.stderr
    assert not list(kit.glob("dist/*.whl"))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ("releases.toml", 'version = "0.5.1"', 'version = "0.5.l"'),
            "releases.toml:64: [[release]]",
        ),
        (("patches/9.9.9/0001-x.patch", None, ""), "patches/9.9.9/ has no row in releases.toml"),
    ],
    ids=["releases-toml", "stray-series"],
)
def test_bad_input_read_on_load_is_one_line_even_for_nox_l(tmp_path, edit, message):
    kit = kit_copy(tmp_path)
    name, old, new = edit
    path = kit / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(path.read_text().replace(old, new, 1) if old else new)
    proc = nox(kit, "-l")
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"nox > {message}") and proc.stderr.count("\n") == 1


CELL = "0.5.1-patched-py3.11"


@pytest.fixture(scope="module")
def one_cell_kit(tmp_path_factory):
    """A kit copy whose cell CELL's environment the tests below share (built once, ~3 s)."""
    return kit_copy(tmp_path_factory.mktemp("one-cell"))


def test_a_deselected_run_is_partial_and_the_headline_not_green(one_cell_kit):
    kit, cell = one_cell_kit, CELL
    proc = nox(kit, "-s", f"compat({cell})", "--", "-k", "after_release and not pickle")
    assert proc.returncode == 0, proc.stderr
    report = nox(kit, "-s", "report")
    assert report.returncode == 0, report.stderr
    assert "incomplete: " in report.stderr and "1 partial or interrupted" in report.stderr
    got = report_cell(kit, cell)
    assert got["status"] == "partial"
    selected = re.fullmatch(r"partial: (\d+) of (\d+) tests selected", got["reason"])
    assert selected and 0 < int(selected[1]) < int(selected[2]), got["reason"]


BLOCKING_TEST = """
import time
from pathlib import Path


def test_zz_blocks():
    Path({marker!r}).touch()
    time.sleep(60)
"""


# How long nox may take to record the interrupted cell and exit: a hang, not slowness, is the
# failure. On a loaded 2-core runner (CI, or helpers' runs beside) 30 s was too short.
EXIT_AFTER_SIGNAL = 300


@pytest.mark.parametrize(
    ("signal_", "reason"),
    [
        (signal.SIGINT, r"interrupted during tests, (\d+) of (\d+) tests ran"),
        # nox dies at once: the record it wrote when the tests began is all that is left
        (signal.SIGKILL, r"killed \(or still running\) during tests"),
    ],
    ids=["sigint", "sigkill"],
)
def test_an_interrupted_cell_is_recorded_with_its_phase(one_cell_kit, tmp_path, signal_, reason):
    kit, cell = one_cell_kit, CELL
    marker = tmp_path / "tests-started"
    blocking = kit / "compat_tests" / "test_zz_block.py"
    blocking.write_text(BLOCKING_TEST.format(marker=str(marker)))
    proc = nox_started(kit, "-s", f"compat({cell})")
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert marker.exists(), proc.communicate()[1]
        os.killpg(proc.pid, signal_)  # as Ctrl-C does: nox and pytest at once
        _, stderr = proc.communicate(timeout=EXIT_AFTER_SIGNAL)
    finally:
        blocking.unlink()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode != 0
    assert cell_record(kit, cell)["phase"] == "tests"
    assert nox(kit, "-s", "report").returncode == 0
    got = report_cell(kit, cell)
    assert got["status"] == "interrupted", stderr
    match = re.fullmatch(reason, got["reason"])
    assert match, got["reason"]
    if match.groups():
        ran, total = map(int, match.groups())
        assert ran == total - 1  # every test but the blocking one, the last


def test_a_cell_interrupted_in_setup_says_so_and_the_next_run_recovers(tmp_path):
    """Ctrl-C while the cell builds its patched wheel (`git am`, made slow here)."""
    kit = kit_copy(tmp_path, cache=False)
    cache = kit / ".nox" / ".cache"
    for entry in ("sdists", "locks"):  # no wheel: the cell must build it
        shutil.copytree(CACHE / entry, cache / entry, ignore=shutil.ignore_patterns(".lock-*"))
    path, marker = slow_git(tmp_path)
    proc = nox_started(kit, "-s", f"compat({CELL})", PATH=path, MARKER=str(marker))
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert marker.exists(), proc.communicate()[1]
        os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C does
        _, stderr = proc.communicate(timeout=EXIT_AFTER_SIGNAL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode != 0
    assert cell_record(kit, CELL)["phase"] == "setup"
    assert nox(kit, "-s", "report").returncode == 0
    assert report_cell(kit, CELL)["status"] == "interrupted", stderr
    again = nox(kit, "-s", f"compat({CELL})")
    assert again.returncode == 0, again.stderr
    assert nox(kit, "-s", "report").returncode == 0
    assert report_cell(kit, CELL)["status"] == "passed"


def test_a_report_that_cannot_be_rendered_leaves_none_that_looks_current(tmp_path):
    kit = kit_copy(tmp_path)
    compat = kit / "build" / "compat"
    compat.mkdir(parents=True)
    for name in ("report.md", "report.html", "report.json"):
        (compat / name).write_text("yesterday's report")
    expectations = kit / "compat_tests" / "expectations.toml"
    expectations.write_text(
        expectations.read_text().replace('affects = "<0.6.0"', 'affects = "before 0.6"', 1)
    )
    summary = tmp_path / "summary.md"
    proc = nox(kit, "-s", "report", GITHUB_STEP_SUMMARY=str(summary))
    assert proc.returncode == 1
    message = (
        "report could not be rendered: expectations.toml [[bug]] no-release-api: "
        "Invalid specifier: 'before 0.6'"
    )
    assert f"Session report aborted: {message}" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in compat.iterdir()) == []
    assert summary.read_text() == f"**{message}**\n"


def test_a_zero_byte_record_is_named_in_a_report_that_is_not_green(tmp_path):
    kit = kit_copy(tmp_path)
    compat = kit / "build" / "compat"
    compat.mkdir(parents=True)
    (compat / "cell-0.5.1-patched-py3.11.json").write_text("")  # a full disk, say
    proc = nox(kit, "-s", "report")
    assert proc.returncode == 0, proc.stderr
    assert "failed: " in proc.stderr and "1 unexpected" in proc.stderr
    got = report_cell(kit, "0.5.1-patched-py3.11")
    assert got["status"] == "failed"
    assert got["reason"] == f"record unreadable: {compat / 'cell-0.5.1-patched-py3.11.json'}"


def test_build_into_a_read_only_dist_fails_in_one_line_before_building(tmp_path):
    kit = kit_copy(tmp_path)
    dist = kit / "dist"
    dist.mkdir()
    dist.chmod(0o555)
    root = os.geteuid() == 0  # root writes through file modes: make the directory immutable
    if root:
        subprocess.run(["chattr", "+i", str(dist)], check=True)
    try:
        started = time.monotonic()
        proc = nox(kit, "-s", "build", "--", "0.5.1")
        took = time.monotonic() - started
    finally:
        if root:
            subprocess.run(["chattr", "-i", str(dist)], check=True)
        dist.chmod(0o755)
    assert proc.returncode == 1
    assert f"Session build aborted: cannot write to {dist}: " in proc.stderr
    assert "Traceback" not in proc.stderr
    assert took < 10 and list(dist.iterdir()) == []  # no wheel was built first


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        (
            "kept_items::test_nope",
            "kept_items::test_nope: test_kept_items.py has no test test_nope",
        ),
        ("kept_item", "kept_item: no contract point kept_item (test_kept_item.py)"),
    ],
    ids=["unknown-test", "unknown-point"],
)
def test_an_unknown_selector_names_its_cause_in_the_cell_and_the_report(
    one_cell_kit, selector, message
):
    kit, cell = one_cell_kit, CELL
    expectations = kit / "compat_tests" / "expectations.toml"
    text = expectations.read_text()
    expectations.write_text(text.replace('"release_then_gc",', f'"release_then_gc", "{selector}",'))
    try:
        proc = nox(kit, "-s", f"compat({cell})")
        report = nox(kit, "-s", "report")
    finally:
        expectations.write_text(text)
    message = f"expectations.toml [[bug]] no-release-api: {message}"
    assert proc.returncode == 1 and message in proc.stdout + proc.stderr
    assert cell_record(kit, cell)["reason"] == message
    assert report.returncode == 1
    assert f"Session report aborted: report could not be rendered: {message}" in report.stderr
