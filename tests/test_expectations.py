"""compat_tests/expectations.toml and its one reader, kit/expectations.py."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kit import MatrixError, expectations, releases

BUG = """
[[bug]]
id = "pin"
reason = "a kept result pins its agent"
commit = "2d665c9a67fd"
release = "0.14.0"
affects = ">=0.14.0"
tests = ["release_then_gc", "streaming::test_x[a]"]
"""


def load(tmp_path: Path, text: str) -> list[expectations.Cause]:
    """Load `text` as expectations.toml beside the contract points BUG names."""
    (tmp_path / "test_release_then_gc.py").write_text("def test_frees():\n    pass\n")
    (tmp_path / "test_streaming.py").write_text("async def test_x(case):\n    pass\n")
    path = tmp_path / "expectations.toml"
    path.write_text(textwrap.dedent(text))
    return expectations.load(path, list(releases.RELEASES))


def test_the_committed_file_loads_and_names_each_cause_once():
    causes = expectations.load(releases=list(releases.RELEASES))
    reasons = [c.reason for c in causes]
    assert len(reasons) == len(set(reasons))
    # One cause per entry keeps the file short; parametrized ids of absent features make it grow.
    assert len(expectations.EXPECTATIONS.read_text().splitlines()) <= 660


def test_a_bug_applies_to_unpatched_cells_of_its_range_only(tmp_path: Path):
    causes = load(tmp_path, BUG)
    assert set(expectations.expected(causes, "0.24.0", "unpatched")) == {
        "release_then_gc",
        "streaming::test_x[a]",
    }
    assert expectations.expected(causes, "0.24.0", "patched") == {}
    assert expectations.expected(causes, "0.13.6", "unpatched") == {}
    # an open range covers a release the matrix does not list yet
    assert expectations.expected(causes, "0.31.0", "unpatched")


def test_an_absent_api_applies_to_both_variants_and_must_raise_its_errors(tmp_path: Path):
    (cause,) = load(tmp_path, BUG.replace("[[bug]]", "[[absent]]"))
    assert expectations.expected([cause], "0.24.0", "patched")
    assert cause.raises == ("AttributeError", "ImportError")


def test_causes_of_the_same_test_are_all_named(tmp_path: Path):
    second = BUG.replace('id = "pin"', 'id = "other"').replace("pins its agent", "other reason")
    causes = load(tmp_path, BUG + second)
    found = expectations.expected(causes, "0.24.0", "unpatched")["release_then_gc"]
    assert [c.id for c in found] == ["pin", "other"]
    assert expectations.cause_ids(" + ".join(c.text for c in found)) == ["pin", "other"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('id = "pin"', 'id = "pin"\nvariant = "patched"'), "cannot name the patched variant"),
        (('id = "pin"', 'id = "pin"\nnote = "x"'), r"unknown keys \['note'\]"),
        (('affects = ">=0.14.0"', 'affects = "from 0.14"'), "Invalid specifier"),
        (('affects = ">=0.14.0"', 'affects = ">=9.0"'), "names no release of the matrix"),
        (('"streaming::test_x[a]"', '"streaming test"'), "not a test selector"),
        (('commit = "2d665c9a67fd"', 'commit = "Sandbox"'), "is not a commit id"),
        (("tests = [", 'raises = ["Nope"]\ntests = ['), "names no builtin exception"),
        (
            ("tests = [", "tests = [,"),
            r"^expectations.toml: Invalid value \(at line 8, column 10\)$",
        ),
        (
            ('"release_then_gc"', '"releas_then_gc"'),
            r"^expectations.toml \[\[bug\]\] pin: releas_then_gc: no contract point "
            r"releas_then_gc \(test_releas_then_gc.py\)$",
        ),
        (
            ('"streaming::test_x[a]"', '"streaming::test_y[a]"'),
            r"^expectations.toml \[\[bug\]\] pin: streaming::test_y\[a\]: test_streaming.py "
            r"has no test test_y$",
        ),
    ],
)
def test_bad_entries_are_refused(tmp_path: Path, edit: tuple[str, str], message: str):
    with pytest.raises(MatrixError, match=message):
        load(tmp_path, BUG.replace(*edit))


def test_ids_are_unique(tmp_path: Path):
    with pytest.raises(MatrixError, match=r"ids used twice: \['pin'\]"):
        load(tmp_path, BUG + BUG)
