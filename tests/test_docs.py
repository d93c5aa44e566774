"""The measured pages under docs/: each is exactly what its session renders from its data."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import driver
from kit import MatrixError, docs, scan, timing, upstream

PAGES = {
    "upstream": (upstream.render, "upstream"),
    "bench": (driver.render, "bench -- --publish"),
    "scan": (scan.render, "scan"),
    "matrix-time": (timing.render, "timing"),
}


@pytest.mark.parametrize("name", PAGES)
def test_each_page_is_what_its_session_renders_from_its_data(name: str):
    render, session = PAGES[name]
    docs.check(name, render, session)


def test_a_hand_edited_page_fails_the_check(tmp_path: Path):
    data = {"python": "3.11", "releases": {}}
    docs.publish("scan", data, scan.render, tmp_path)
    docs.check("scan", scan.render, "scan", tmp_path)
    page = tmp_path / "scan.md"
    page.write_text(page.read_text().replace("Python 3.11", "Python 3.12"))
    with pytest.raises(MatrixError, match="is not what `nox -s scan` renders"):
        docs.check("scan", scan.render, "scan", tmp_path)


def test_docs_merge_keeps_release_order():
    merged = docs.merged({"0.10.0": 1, "0.2.0": 2}, "0.9.0", 3)
    assert list(merged) == ["0.2.0", "0.9.0", "0.10.0"]
