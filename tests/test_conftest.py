"""compat_tests/conftest.py, run for real by pytest in a subprocess against a stand-in SDK:
expectations become strict xfails by selector, unknown selectors stop the cell, the network
and the API key are out of reach."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMPAT_TESTS = ROOT / "compat_tests"

POINT_TESTS = """
import os
import socket

import pytest
import support


def test_fails():
    assert False


def test_passes():
    pass


@pytest.mark.parametrize("case", ["good", "bad"])
def test_param(case):
    assert case == "good"


def test_network_is_blocked():
    with pytest.raises(RuntimeError, match="must not use the network"):
        socket.create_connection(("127.0.0.1", 9))


def test_api_key_is_gone():
    assert "OPENAI_API_KEY" not in os.environ


def test_missing_api():
    import agents

    agents.RunState


def test_told_when_expected_to_fail():
    assert not support.FAILURE_EXPECTED
"""


def _dist(site: Path, name: str, version: str) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


@pytest.fixture
def cell(tmp_path: Path):
    """Run the real conftest over `test_point.py` with the given expectations.toml text."""
    site = tmp_path / "site"
    (site / "agents").mkdir(parents=True)
    (site / "agents" / "__init__.py").write_text("def set_tracing_disabled(disabled): pass\n")
    for name, version in (("openai-agents", "0.5.1"), ("openai", "1.0.0"), ("pydantic", "2.0")):
        _dist(site, name, version)
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(COMPAT_TESTS / "conftest.py", suite)
    (suite / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider -rA\n")
    (suite / "test_point.py").write_text(POINT_TESTS)
    (suite / "support.py").write_text("FAILURE_EXPECTED = False\n")

    def run(
        expectations: str, variant: str = "unpatched", *args: str
    ) -> subprocess.CompletedProcess:
        (suite / "expectations.toml").write_text(textwrap.dedent(expectations))
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
            "COMPAT_VARIANT": variant,
            "OPENAI_API_KEY": "sk-must-not-leak",
        }
        env.pop("COMPAT_NO_EXPECTATIONS", None)
        return subprocess.run(
            [sys.executable, "-m", "pytest", str(suite), *args],
            cwd=suite,
            env=env,
            capture_output=True,
            text=True,
        )

    return run


def bug(*tests: str, reason: str = "a known bug", affects: str = "<0.6.0", raises: str = "") -> str:
    selectors = ", ".join(f'"{t}"' for t in tests)
    return f"""
        [[bug]]
        id = "{reason.replace(" ", "-")}"
        reason = "{reason}"
        commit = "283ead8fe8de"
        release = "0.6.0"
        affects = "{affects}"
        tests = [{selectors}]
        {raises}
    """


def test_listed_failures_become_xfails(cell):
    proc = cell(bug("point::test_fails", "point::test_param[bad]", "point::test_missing_api"))
    assert proc.returncode == 0, proc.stdout
    assert "XFAIL test_point.py::test_fails - [a-known-bug] a known bug (283ead8fe8de, v0.6.0)" in (
        proc.stdout
    )
    assert "XFAIL test_point.py::test_param[bad]" in proc.stdout
    assert "PASSED test_point.py::test_param[good]" in proc.stdout


def test_repeated_runs_still_match_their_selectors(cell):
    """`--count=3` renames `test_param[bad]` to `test_param[bad-2-3]`; the entry still applies."""
    proc = cell(
        bug("point::test_fails", "point::test_param[bad]", "point::test_missing_api"),
        "unpatched",
        "--count=3",
        "--random-order",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("XFAIL test_point.py::test_param[bad-") == 3
    assert proc.stdout.count("XFAIL test_point.py::test_fails[") == 3
    assert proc.stdout.count("PASSED test_point.py::test_param[good-") == 3


def test_a_listed_test_that_passes_fails_the_cell(cell):
    proc = cell(
        bug("point::test_fails", "point::test_param[bad]")
        + bug("point::test_passes", reason="the bug was fixed")
    )
    assert proc.returncode == 1
    assert "[XPASS(strict)] [the-bug-was-fixed] the bug was fixed" in proc.stdout


def test_a_point_selector_marks_every_test_of_the_point(cell):
    proc = cell(bug("point", reason="the whole point fails"))
    assert proc.returncode == 1  # the passing tests of the point now XPASS strictly
    assert "XFAIL test_point.py::test_fails - [the-whole-point-fails]" in proc.stdout
    assert "FAILED test_point.py::test_passes" in proc.stdout


def test_unlisted_failures_fail_and_other_cells_do_not_leak_in(cell):
    table = bug("point::test_fails", "point::test_param[bad]")
    table += bug("point::test_passes", reason="later releases", affects=">=0.6.0")
    proc = cell(table, variant="patched")
    assert proc.returncode == 1
    assert "FAILED test_point.py::test_fails" in proc.stdout
    assert "FAILED test_point.py::test_param[bad]" in proc.stdout


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        # a test the file does not define: expectations.toml itself is refused
        ("point::test_renamed_long_ago", "point::test_renamed_long_ago: test_point.py has no test"),
        # parameters are only known once collected
        ("point::test_param[ugly]", "do not exist: point::test_param[ugly] (stale-entry)"),
    ],
)
def test_an_unknown_selector_is_a_usage_error_naming_its_cause(cell, selector, message):
    proc = cell(bug(selector, reason="stale entry"))
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    assert message in proc.stderr


def test_a_bad_table_is_a_usage_error_in_the_cell(cell):
    proc = cell(bug("point::test_fails").replace('affects = "<0.6.0"', 'affects = ">=9"'))
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    assert "names no release of the matrix" in proc.stderr


def test_an_expected_exception_must_be_the_one_raised(cell):
    """With `raises`, a test failing for another reason (here AssertionError) is a failure."""
    proc = cell(
        bug("point::test_fails", "point::test_param[bad]", raises='raises = ["AttributeError"]')
    )
    assert proc.returncode == 1
    assert "FAILED test_point.py::test_fails" in proc.stdout


def test_an_absent_api_is_expected_in_patched_cells_too_and_only_as_a_missing_name(cell):
    table = bug("point::test_missing_api", "point::test_fails", reason="no RunState")
    proc = cell(table.replace("[[bug]]", "[[absent]]"), variant="patched")
    assert "XFAIL test_point.py::test_missing_api - [no-RunState]" in proc.stdout
    assert "FAILED test_point.py::test_fails" in proc.stdout  # AssertionError is no absent API


def test_support_is_told_which_failures_are_expected(cell):
    """support.py skips tracing what holds an agent (a heap scan) for a predicted failure."""
    assert "PASSED test_point.py::test_told_when_expected_to_fail" in cell("").stdout
    proc = cell(bug("point::test_told_when_expected_to_fail"))
    assert "XFAIL test_point.py::test_told_when_expected_to_fail" in proc.stdout


def test_network_guard_and_api_key(cell):
    proc = cell("")
    assert "PASSED test_point.py::test_network_is_blocked" in proc.stdout
    assert "PASSED test_point.py::test_api_key_is_gone" in proc.stdout
